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
/* The daemon evicted file name of directory d, of kind and bytes, by a
 * trim for reason (TrimQueueEnv.evicted): counted at the next
 * cache_activity_balance; an entry is regret's, or (a purge by writer) only
 * remembered as left. */
void cache_activity_evicted(void *userdata, TrimReason reason, DirId d, const char *name, CcacheKind kind,
                            uint64_t bytes, int64_t mtime);
/* The cache's size into the activity, with the parts of its change since
 * the last call that no event explained: files that are no entries (ccache's
 * temporaries...) as other, entries as adjusted; evictions told since are
 * counted here too. Every change of size goes through here with its parts
 * in the same bucket, so a bucket's parts add up to its change (activity.h).
 * Called on every store and removal, after each loop iteration and at each
 * feed; nothing before the first scan is over. */
void cache_activity_balance(Cache *c);
/* The size the parts counted since the start began from (status): the size
 * is it plus the stores, adjusted up and other added, less the evictions,
 * removals, adjusted down and other removed. */
int64_t cache_activity_size_base(const Cache *c);
/* How many times ccache's own cleanup ran in the cache since the start
 * (its cleanups_performed counter; each run alerted: cache-ccache-cleanup). */
uint64_t cache_activity_ccache_cleanups(const Cache *c);


/* Bytes a cache's activity takes: its buckets and the stats files' counters
 * (about 500 kB), and its eviction regret (3.1 MiB once it evicted, 800 KiB
 * more once something else removed an entry). */
size_t cache_activity_memory(const Cache *c);
/* Writes the activity and the regret, each if changed since, to their
 * files in dirfd (dir: its path, for the journal). Returns 1 if one was
 * written, 0 if none needed it, -errno (logged once until it works). */
int cache_activity_save(Cache *c, int dirfd, const char *dir);
