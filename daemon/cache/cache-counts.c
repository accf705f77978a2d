/* SPDX-License-Identifier: MIT */
/* A cache's counts that take a pass over its files (cache-counts.h): one
 * pass over the account, at most once per max_age. */
#include "base/status-keys.h"
#include "cache/cache-counts.h"
#include "cache/cache-internal.h"

/* The working set's windows: the entries used within the last 1 h, 24 h,
 * 7 d and 30 d (mtime). */
const CacheWindow cache_ws_windows[CACHE_WS_WINDOWS] = {
        { STATUS_WINDOW_1H, 3600 }, { STATUS_WINDOW_24H, 24 * 3600 }, { STATUS_WINDOW_7D, 7 * 24 * 3600 },
        { STATUS_WINDOW_30D, 30 * 24 * 3600 },
};

_Static_assert(CACHE_WS_WINDOWS <= ACCOUNT_WINDOWS_MAX, "the account counts every window in its pass");

void cache_counts_refresh(Cache *c, usec_t max_age) {
        usec_t mono = event_now(c->event, CLOCK_MONOTONIC);
        int64_t now, since[CACHE_WS_WINDOWS];

        if (c->ws_at != 0 && mono <= c->ws_at + max_age)
                return;
        now = (int64_t) (event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC);
        for (size_t i = 0; i < CACHE_WS_WINDOWS; i++)
                since[i] = now - cache_ws_windows[i].seconds;
        account_entry_counts(c->account, since, ELEMENTSOF(since), c->ws_files, c->ws_bytes, c->tag_files,
                             c->tag_bytes);
        c->ws_at = mono;
}
