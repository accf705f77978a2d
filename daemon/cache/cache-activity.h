/* SPDX-License-Identifier: MIT */
/* A cache's activity part: ccache's counters from its stats files and
 * what the event path saw, fed into the activity buckets (activity.h) and
 * the eviction regret (regret.h), and both kept in state files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "ccache/ccache-stats.h"
#include "ccache/ccache.h"
#include "tree/account.h"

/* ccache's counters of stats file directory d (NULL: it is gone) as the
 * event path or a scan read them; feeding the activity at realtime now (the
 * cache does: on its timer, after the first scan, before a save); the cache
 * lost (its sums start again from nothing). */
int cache_activity_init(Cache *c);
void cache_activity_done(Cache *c);
void cache_activity_stats(Cache *c, DirId d, const CcacheStats *s);
void cache_activity_feed(Cache *c, usec_t now);
void cache_activity_lost(Cache *c);
/* What the event path saw of ccache entries (bytes: the entry's): one
 * removed by someone else (name in directory d: remembered as left by
 * another, regret.h), moved away (IN_MOVED_FROM, cookie) or deleted
 * (cookie 0); one new entry of kind (name: its file name), arrived by
 * IN_MOVED_TO (cookie) or created (cookie 0) -- a store, unless it is the
 * other end of the move just seen; an entry's timestamps set to now by
 * ccache's hit. cache_activity_settle counts a move still unpaired as a
 * removal: the event path calls it on any other event and at the end of
 * each loop iteration. */
void cache_activity_removed(Cache *c, DirId d, const char *name, uint64_t bytes, uint32_t cookie);
bool cache_activity_appeared(Cache *c, DirId d, CcacheKind kind, const char *name, uint64_t bytes, uint32_t cookie);
void cache_activity_refreshed(Cache *c, uint64_t bytes);
void cache_activity_settle(Cache *c);
/* The daemon evicted entry name of directory d, of bytes, by a trim for
 * reason (TrimQueueEnv.evicted): regret's, or (a purge by writer) only
 * remembered as left. */
void cache_activity_evicted(void *userdata, TrimReason reason, DirId d, const char *name, uint64_t bytes,
                            int64_t mtime);


/* Bytes a cache's activity takes: its buckets and the stats files' counters
 * (about 500 kB), and its eviction regret (3.1 MiB once it evicted, 800 KiB
 * more once something else removed an entry). */
size_t cache_activity_memory(const Cache *c);
/* Writes the activity and the regret, each if changed since, to their
 * files in dirfd (dir: its path, for the journal). Returns 1 if one was
 * written, 0 if none needed it, -errno (logged once until it works). */
int cache_activity_save(Cache *c, int dirfd, const char *dir);
