/* SPDX-License-Identifier: MIT */
/* ccache's stats files (ccache/README.md §2): their counters, parsed (pure) and
 * read, and the size counters corrected under ccache's stats lock, the file
 * replaced atomically. I/O relative to a directory fd; never waits for a
 * lock; never logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccache/ccache-lock.h"

/* Stats counters (ccache/README.md §2). */
#define CCACHE_STAT_CACHE_MISS             4
#define CCACHE_STAT_PREPROCESSED_CACHE_HIT 8
#define CCACHE_STAT_FILES_IN_CACHE         11
#define CCACHE_STAT_CACHE_SIZE_KIBIBYTE    12
#define CCACHE_STAT_DIRECT_CACHE_HIT       22
#define CCACHE_STAT_CLEANUPS_PERFORMED     29   /* ccache's own cleanups (a level-1 dir, or -c) */
#define CCACHE_STAT_SUBDIR_FILES_BASE      49   /* 4.8+: 49+i files in L2 subdir i */
#define CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE 65 /* 4.8+: 65+i KiB in L2 subdir i */
#define CCACHE_STATS_MAX                   128  /* lines we keep; ccache writes up to 85 */

typedef struct CcacheStats {
        uint64_t counters[CCACHE_STATS_MAX];
        size_t n;             /* lines read */
        bool truncated;       /* the file had more lines than we keep */
} CcacheStats;

/* Parses the text of a stats file: one unsigned decimal per line, as
 * ccache's StatsFile::read (a malformed line reads as 0, extra lines kept up
 * to CCACHE_STATS_MAX). */
void ccache_stats_parse(const char *text, size_t len, CcacheStats *ret);

/* Reads dirfd/name (not following symlinks) into *ret. A missing file is all
 * zeros (as in ccache). Returns 0 or -errno. */
int ccache_stats_read(int dirfd, const char *name, CcacheStats *ret);

static inline uint64_t ccache_stats_hits(const CcacheStats *s) {
        return s->counters[CCACHE_STAT_DIRECT_CACHE_HIT] + s->counters[CCACHE_STAT_PREPROCESSED_CACHE_HIT];
}
static inline uint64_t ccache_stats_misses(const CcacheStats *s) {
        return s->counters[CCACHE_STAT_CACHE_MISS];
}

/* What to change in one level-1 stats file's size counters (ccache/README.md §2),
 * per level-2 subdirectory i (0-15). */
typedef struct CcacheStatsFix {
        uint64_t sub_files[16], sub_kib[16];   /* subtract (deleted entries) */
        uint64_t add_files[16], add_kib[16];   /* add (entries moved in by a merge) */
        bool recount[16];                      /* set from the exact figures below instead */
        uint64_t files[16], kib[16];           /* exact figures, read when any recount is set */
} CcacheStatsFix;

/* Applies fix to the stats file of the level-1 directory l1fd, under its
 * stats.lock taken with ccache_lock_try (seen, now: never waits).
 * Subtractions: from index 11 and 12, and 49+i and 65+i when the file has
 * them (4.8+); additions to the same. A recount of i sets 49+i and 65+i to the exact figures and
 * moves 11 and 12 by the difference; a file without per-subdirectory
 * counters (4.7) gets 11 and 12 set to the sum of the exact figures, the
 * subtractions being part of them. Counters clamp at 0; every other line is
 * kept; the file is replaced atomically. A missing file reads as zeros: it
 * is written only when entries are added or a recount finds some (a merge moved some into a
 * level-1 directory ccache never wrote a stats file in), with the 4.7
 * layout (the totals: 4.8+ adds its per-subdirectory lines at its next
 * update). Returns 1 written, 0 nothing to write (no stats file, and
 * none needed: ccache reads zeros already), -EBUSY the lock is held and not
 * stale (try again later), -E2BIG more lines than we keep, or -errno. *ret_broke (may be NULL) says whether a stale lock was broken. */
int ccache_stats_fix(int l1fd, const CcacheStatsFix *fix, CcacheLockSeen *seen, uint64_t now, bool *ret_broke);

/* ccache_stats_fix of one subtraction: files and KiB from subdirectory l2. */
int ccache_stats_subtract(int l1fd, unsigned l2, uint64_t files, uint64_t kib, CcacheLockSeen *seen,
                          uint64_t now);
