/* SPDX-License-Identifier: MIT */
/* What the daemon owes ccache's size counters (ccache/README.md §2): subtractions
 * for the entries trims deleted (or a merge moved away), additions for those a merge moved in, and recounts of level-2 directories whose
 * counters cannot be trusted (a trim of ours died in them). Kept per level-1
 * stats file until its stats.lock can be taken: a held lock is never waited
 * for, only tried again later; a stale one is broken as ccache breaks it.
 * Non-logging; bounded (16 x 16 figures whatever happens). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "tree/account.h"

typedef struct Counters Counters;

int counters_new(Counters **ret);
Counters *counters_free(Counters *k);
/* Forgets everything owed (the cache root is gone). */
void counters_clear(Counters *k);

/* Owes the subtraction of files entries of kib KiB deleted from level-2
 * directory l2 of level-1 directory l1 (hex digit values, 0-15). */
void counters_subtract(Counters *k, unsigned l1, unsigned l2, uint64_t files, uint64_t kib);
/* Owes the addition of files entries of kib KiB moved into <l1>/<l2> (a
 * merge): relative, as a subtraction is, so a ccache storing meanwhile
 * counts its own entry once. */
void counters_add(Counters *k, unsigned l1, unsigned l2, uint64_t files, uint64_t kib);
/* Owes a recount of <l1>/<l2> from the account, under its content lock. */
void counters_recount(Counters *k, unsigned l1, unsigned l2);
/* Finds the locks a cachekeeperd that died mid-trim left below root_fd
 * (ccache_lock_is_ours_dead): lock/subdir_XY (a group deleted, its counters
 * maybe not fixed) and <l1>/stats.lock (a counter fix in flight). Breaks
 * them and owes a recount of what they covered: XY, or all of <l1>. Returns
 * the number of locks broken. */
unsigned counters_recover(Counters *k, int root_fd);
/* Something is owed. */
bool counters_pending(const Counters *k);

typedef struct CountersFlush {
        unsigned written;        /* stats files rewritten */
        unsigned broken;         /* stale locks broken on the way */
        unsigned recounted;      /* level-2 directories recounted */
        unsigned failed;         /* stats files given up on: what they were owed is dropped */
        int error;               /* the first failure's -errno */
        char failed_dir[2];      /* and its level-1 directory */
} CountersFlush;

/* Pays what is owed to level-1 directory only_l1 (0-15; -1: to all of them)
 * below root_fd, each stats file under its stats.lock (ccache_stats_fix),
 * recounts under the level-2 directory's content lock too. Recounts wait
 * until exact says the account is exact (the first scan is over); their
 * figures come from a (then exact) pass over account a. now is realtime
 * (usec) for the locks' staleness. Adds what happened to *ret (zeroed by
 * the caller). Returns 1 when something payable is still owed behind a
 * held lock (call again later), else 0. */
int counters_flush(Counters *k, const Account *a, int root_fd, int only_l1, bool exact, uint64_t now,
                   CountersFlush *ret);
