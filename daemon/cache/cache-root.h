/* SPDX-License-Identifier: MIT */
/* What cache.c, which keeps the cache's root and its life (set up, lost,
 * scanned, trimmed), lends the event path above it (cache-events.c). */
#pragma once

#include "cache/cache.h"
#include "tree/account.h"

/* The root for this loop iteration: opened without following a symlink and
 * checked to be the directory we scanned; -errno (and the cache set up
 * again: cache_root_lost) when it is not. Borrowed fd: the parts get it
 * passed down. */
int cache_root_get(Cache *c);
/* The root went (why: "was deleted"...): the cache is unavailable and set
 * up again once it is back. */
void cache_root_lost(Cache *c, const char *why);
/* Opens directory d of the account, beneath the root and never through a
 * symlink or into another filesystem. Returns the fd (the caller's) or
 * -errno. */
int cache_dir_open(Cache *c, DirId d);
/* ccache's counters of the stats file in directory d (dirfd), into the
 * account and the activity (not for a share: a file of that name there is
 * anybody's). */
void cache_read_stats(Cache *c, DirId d, int dirfd);
/* The upkeep in full, if the root is there. */
void cache_upkeep_all(Cache *c);
