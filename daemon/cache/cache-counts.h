/* SPDX-License-Identifier: MIT */
/* A cache's counts that take a pass over its files: the working set
 * (entries used within each window) and the entries by writer tag. Status,
 * the advice and the writers all read them; counted here, once per
 * max_age at most. */
#pragma once

#include <stdint.h>

#include "base/util.h"
#include "cache/cache.h"

typedef struct CacheWindow {
        const char *key;               /* STATUS_WINDOW_1H ... _30D: status's keys */
        int64_t seconds;
} CacheWindow;

extern const CacheWindow cache_ws_windows[];   /* CACHE_WS_WINDOWS of them (cache-internal.h) */

/* The working set (ws_*) and the entries by writer (tag_*) counted again
 * when older than max_age (status and the advice: CACHE_WS_USEC; the
 * writers: 0, counted once per loop iteration at most). */
void cache_counts_refresh(Cache *c, usec_t max_age);
