/* SPDX-License-Identifier: MIT */
/* Eviction: evict_plan() decides which files go (pure: the Account only, no
 * I/O); evict_unlink() deletes one of them after checking, by a
 * dirfd-relative statx that follows nothing, that it is still what was
 * decided on. What may ever go: ccache entries of both naming schemes, and
 * stale temporaries (ccache/README.md §1). Nothing else, whatever its name. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tree/account.h"

#define EVICT_TMP_MIN_AGE_SEC    3600            /* *.tmp.*: in-flight atomic writes are younger */
#define EVICT_TMPDIR_MIN_AGE_SEC (2 * 86400)     /* files in tmp/: ccache's own sweep age */

typedef struct Victim {
        FileId file;
        DirId dir;
        uint32_t dir_gen;        /* the directory's gen: its DirId may be another's by the time */
        uint32_t mtime;
        uint32_t blocks;
} Victim;

typedef struct EvictPlan {
        Victim *victims;         /* sorted by directory, then mtime; owned */
        size_t n;
        uint64_t bytes;          /* Σ blocks·512 of the victims */
        int64_t cutoff;          /* newest mtime among the victims (0: none) */
        int64_t oldest_kept;     /* oldest mtime of an evictable file that stays (0: none stay) */
        uint64_t evictable_files, evictable_bytes;
        uint64_t beyond_table;   /* a purge by writer: entries whose writer is not known (may match) */
        uint64_t inflight_bytes; /* Σ blocks·512 of ccache's temporaries in use (evict_in_flight): not
                                  * victims, and gone by themselves soon */
} EvictPlan;

/* May this file (fi from account_file_info, name its file name) be evicted at
 * time now (seconds)? Entries always; *.tmp.* after an hour (in a remote
 * layout only in an entry directory, account_entry_dir); other files in
 * tmp/ after two days, except ccache's inode cache and sweep stamp. */
bool evict_eligible(const Account *a, const FileInfo *fi, const char *name, int64_t now);

/* Is this file (not eligible) one of ccache's temporaries still in use at
 * time now: a *.tmp.* file or a file in tmp/, younger than
 * EVICT_TMP_MIN_AGE_SEC, other than the inode cache and the sweep stamp
 * (which stay for good)? A compile removes its own when it ends; each of
 * several ccache starting at once on a new cache writes an inode cache of
 * its own (some 6 MB, tmp/inode-cache-*.tmp.*) and all but one remove theirs
 * within a second (ccache/README.md §1). Such bytes may put a cache over its
 * cap for a moment, and no trim can help. */
bool evict_in_flight(const Account *a, const FileInfo *fi, const char *name, int64_t now);

/* Plans the eviction of the least recently used eligible files, oldest mtime
 * first across the whole account, until at least need_bytes are freed (or
 * nothing eligible is left). Every victim is older than or as old as every
 * eligible file kept. Returns 0 (plan in *ret, free with evict_plan_done)
 * or -ENOMEM. */
int evict_plan(Account *a, uint64_t need_bytes, int64_t now, EvictPlan *ret);
void evict_plan_done(EvictPlan *p);

/* Plans the eviction of every ccache entry of a whose tag
 * (account_file_tag) is marked in match: a purge, by who wrote the
 * entries. The victims in the order of every plan (by directory, then
 * mtime); evictable_* are the plan's own figures. Returns 0 (plan in *ret,
 * free with evict_plan_done) or -ENOMEM. */
int evict_plan_tagged(Account *a, const bool match[256], EvictPlan *ret);

/* The same over n accounts at once (the caches of one volume): one cutoff
 * across all of them; rets[i] is the plan for as[i]. */
int evict_plan_multi(Account *const *as, size_t n, uint64_t need, int64_t now, EvictPlan *rets);

/* The same planning, in slices: a pass over a 1M-file account takes some
 * 20 ms (more under load), and a plan takes four of them. */
typedef struct EvictPlanner EvictPlanner;
/* A planner for as[0..n) (borrowed; the array is copied), as
 * evict_plan_multi. The accounts may change between steps: a victim planned
 * from what was then known is re-checked before it goes, and a file seen by
 * one pass and gone by the next only makes the plan a little less exact.
 * count_only: the figures without the victims (a dry run: no memory per
 * victim). Returns 0 or -ENOMEM. */
int evict_planner_new(Account *const *as, size_t n, uint64_t need_bytes, int64_t now, bool count_only,
                      EvictPlanner **ret);
/* Does about budget units of work (a file looked at, a victim sorted).
 * Returns 1 while there is more, 0 when the plans are made, or -ENOMEM. */
int evict_planner_step(EvictPlanner *p, size_t budget);
/* After evict_planner_step returned 0: hands over plan i (free it with
 * evict_plan_done; its victims are NULL for a count_only planner). */
void evict_planner_take(EvictPlanner *p, size_t i, EvictPlan *ret);
EvictPlanner *evict_planner_free(EvictPlanner *p);

/* Deletes dirfd/name if it is still a regular file on device dev, with an
 * mtime no newer than max_mtime (a cache hit since the plan refreshed it:
 * it stays) and still blocks 512-byte blocks. Never follows a symlink.
 * Returns 1 deleted, 0 skipped (gone or changed), or -errno. */
int evict_unlink(int dirfd, const char *name, dev_t dev, int64_t max_mtime, uint64_t blocks);
/* What evict_unlink_clock found at a name it skipped: nothing (gone), or
 * a regular file on the cache's device as it is now (another kind of file,
 * or on another device: neither). The caller's account was wrong about it,
 * and is told, so that the next plan does not choose it again. */
typedef struct EvictSkipped {
        bool gone;                 /* no such name */
        bool file;                 /* a regular file on dev: the figures below */
        uint64_t blocks, ino, nlink;
        int64_t time;              /* its atime or mtime, as asked */
} EvictSkipped;

/* The same with the time the plan ordered by: atime (a file: remote whose
 * readers leave mtime alone) or mtime: a file read or hit since the plan is
 * newer than max_time and stays. On a skip, *ret (if not NULL) says what was
 * there instead. */
int evict_unlink_clock(int dirfd, const char *name, dev_t dev, int64_t max_time, uint64_t blocks, bool atime,
                       EvictSkipped *ret);
