/* SPDX-License-Identifier: MIT */
/* The clock a share (a file: remote kept as a cache) goes by: what its
 * full scans show of its entries decides it under "auto". Pure. */
#pragma once

#include <stdint.h>

#include "config/config.h"

/* A share's clock under "auto" (README "Remote storage"): least recently
 * used by atime, unless a full scan shows many entries touched (mtime
 * set by utimensat(NULL) after the entry was written: the hits of writers
 * with update-mtime=true, or a user's touch), both in count and in share
 * of the entries, so one touch (or a few) never decides it; and back to
 * atime once that evidence is gone, with hysteresis (half of each) so a
 * share near the line does not flap. Only ccache entries count: the
 * keeper's own lock file, its quarantine and other files never do. */
#define REMOTE_CLOCK_MTIME_MIN_TOUCHED   8       /* entries touched, at least, */
#define REMOTE_CLOCK_MTIME_MIN_PERMILLE  10      /* and 1 % of the entries, to go by mtime */
#define REMOTE_CLOCK_ATIME_BELOW_TOUCHED 4       /* by atime again below either */
#define REMOTE_CLOCK_ATIME_BELOW_PERMILLE 5

/* The clock a share configured with clock (mtime, atime: that one; auto:
 * decided) goes by after a full scan that found touched of its entries
 * entries touched, while it went by current (CACHE_CLOCK_MTIME or _ATIME). */
CacheClock remote_clock_decide(CacheClock configured, CacheClock current, uint64_t entries, uint64_t touched);
