/* SPDX-License-Identifier: MIT */
/* Is a cache's cap right: cache-cap-small and its recovery, and the
 * advice in words for status. */
#pragma once

#include <json-c/json.h>

#include "base/util.h"
#include "cache/cache.h"

/* Is the cap right (cache-cap-small and its recovery, on
 * each feed); the advice in words for status, or NULL. */
void cache_advice_check(Cache *c, usec_t now);
json_object *cache_advice_json(Cache *c, usec_t now);
