/* SPDX-License-Identifier: MIT */
/* A share's clock (cache-clock.h). */
#include "cache/cache-clock.h"

CacheClock remote_clock_decide(CacheClock configured, CacheClock current, uint64_t entries, uint64_t touched) {
        if (configured != CACHE_CLOCK_AUTO)
                return configured;
        if (touched > entries)
                touched = entries;   /* (entries counted since the scan: cannot be fewer) */
        if (current == CACHE_CLOCK_MTIME)
                return touched >= REMOTE_CLOCK_ATIME_BELOW_TOUCHED &&
                                       touched * 1000 >= entries * REMOTE_CLOCK_ATIME_BELOW_PERMILLE
                               ? CACHE_CLOCK_MTIME
                               : CACHE_CLOCK_ATIME;
        return touched >= REMOTE_CLOCK_MTIME_MIN_TOUCHED && touched * 1000 >= entries * REMOTE_CLOCK_MTIME_MIN_PERMILLE
                       ? CACHE_CLOCK_MTIME
                       : CACHE_CLOCK_ATIME;
}
