/* SPDX-License-Identifier: MIT */
/* One eviction job on one cache: an EvictPlan carried out in bounded batches,
 * one directory at a time under ccache's content lock for it, each file
 * re-checked before it goes, ccache's counters fixed after each batch.
 * Knows nothing of the loop: the cache calls trim_step() from its own. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/slice.h"
#include "base/util.h"
#include "evict/counters.h"
#include "evict/evict.h"
#include "tree/account.h"

#define TRIM_BATCH_FILES 1024              /* unlinks per group at most */
#define TRIM_SLICE_USEC  SLICE_USEC        /* one step: planning or unlinks */
#define TRIM_SLICE_EVERY 8                 /* victims between two looks at the clock */
/* Victims of a directory a slice deletes at least, once it took its lock:
 * the lock and ccache's counters cost as much as some unlinks. */
#define TRIM_GROUP_MIN   64
#define TRIM_PLAN_BUDGET 4096              /* files planned between two looks at the clock */
#define TRIM_LOCK_RETRY_USEC (50 * USEC_PER_MSEC)     /* between tries of a taken ccache lock */
/* A directory whose lock stays live this long is left alone; one whose lock
 * goes stale (CCACHE_LOCK_STALE_USEC) is taken over before that. */
#define TRIM_LOCK_WAIT_USEC  (5 * USEC_PER_SEC)

typedef struct TrimResult {
        uint64_t target_bytes;               /* the size aimed at */
        uint64_t need_bytes;                 /* what had to go to reach it (0: not known) */
        uint64_t planned_files, planned_bytes;
        uint64_t files, bytes;               /* deleted (or, dry run, that would be) */
        uint64_t saved;                      /* refreshed or changed since the plan: kept */
        uint64_t corrected;                  /* of those, files the account had wrong (lost
                                              * events): it has them right now */
        uint64_t locked_dirs;                /* left alone: ccache held their lock throughout */
        uint64_t errors;                     /* files that could not be deleted */
        int first_error;                     /* the first one's -errno */
        int64_t oldest_kept;                 /* oldest mtime of an evictable file that stays */
        uint64_t inflight_bytes;             /* ccache's temporaries in use when planned (EvictPlan) */
        uint64_t stats_updates, stats_failures;
        int stats_error;                     /* the first failure's -errno ... */
        char stats_failed_dir[2];            /* ... and its level-1 directory */
        uint64_t stats_deferred;             /* counter fixes left owed behind a held stats.lock */
        uint64_t locks_broken;               /* stale ccache locks broken on the way */
        uint64_t planning_slices;            /* steps the planning took ... */
        usec_t planning_usec;                /* ... and their time (not in status) */
        uint64_t beyond_table;               /* a purge by writer: entries whose writer is beyond the
                                              * table, not looked at (EvictPlan.beyond_table) */
        bool dry_run;
} TrimResult;

typedef struct Trim Trim;

/* A trim of account down to target_bytes (its total size, as size_bytes
 * counts) at time now (seconds, for the age of temporaries). Nothing is done
 * yet: trim_step plans in slices (evict.h), then deletes; a dry run is done
 * once planned. Returns 0 or -ENOMEM. */
int trim_new(Account *a, uint64_t target_bytes, bool dry_run, int64_t now, Trim **ret);

/* A trim that carries out plan (taken over, also on failure). target_bytes
 * is only reported. Returns 0 or -ENOMEM. */
int trim_new_with_plan(EvictPlan *plan, uint64_t target_bytes, bool dry_run, Trim **ret);

/* What a step works on, lent by the cache for the call, and when it is. */
typedef struct TrimEnv {
        Account *account;
        Counters *counters;                  /* what is owed ccache's counters */
        int root_fd;                         /* the cache root, on device dev */
        dev_t dev;
        usec_t now;                          /* monotonic: how long a locked directory waited */
        usec_t realtime;                     /* realtime: the staleness of ccache's locks */
        bool atime;                          /* the account's times are atimes (a remote's clock) */
        /* Told of each file evicted (name in directory dir of the account,
         * of kind: a ccache entry, or a stale temporary; bytes), after the
         * unlink, before the account forgets it; may be NULL. */
        void (*evicted)(void *userdata, DirId dir, const char *name, CcacheKind kind, uint64_t bytes, int64_t mtime);
        void *userdata;
} TrimEnv;

/* Carries out the next slice of about TRIM_SLICE_USEC (measured from the
 * call by slice_clock, which bounds the slice, also in the middle of a
 * directory; every decision is made at env->now and env->realtime):
 * planning, then batches of unlinks below env->root_fd; ccache's counters are fixed
 * through env->counters, or left owed in it. Never waits for a lock.
 * Returns 1 while there is more to do now, 2 when only directories whose
 * ccache lock is taken remain (call again after TRIM_LOCK_RETRY_USEC), 0
 * when done, -errno when the root is gone (or -ENOMEM planning). */
int trim_step(Trim *t, const TrimEnv *env);

const TrimResult *trim_result(const Trim *t);
/* Why a finished trim r did not reach its target, in a few words a person
 * can act on, into buf: an I/O error (the first one), directories ccache
 * kept locked, nothing more that may be evicted (and how much of the rest
 * was ccache's temporaries in use), files used again meanwhile.
 * Returns buf. */
const char *trim_result_why(const TrimResult *r, char *buf, size_t len);
Trim *trim_free(Trim *t);
static inline void trim_freep(Trim **t) {
        trim_free(*t);
}
