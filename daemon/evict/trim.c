/* SPDX-License-Identifier: MIT */
/* The trim job. Directory groups of the plan are worked through in order;
 * a group whose ccache lock is taken waits for a later round. Non-logging. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/human.h"
#include "base/slice.h"
#include "ccache/ccache-lock.h"
#include "ccache/ccache.h"
#include "evict/trim.h"
#include "os/beneath.h"

typedef struct Deferred {
        size_t start;           /* first victim of a group whose lock was taken */
        usec_t since;
        CcacheLockSeen seen;    /* what its lock looked like, for staleness */
} Deferred;

/* One step: what the cache lent, and its slice (the loop's now does not
 * move within a handler: the slice reads a clock of its own). */
typedef struct StepEnv {
        Account *account;
        Counters *counters;
        int root_fd;
        dev_t dev;
        usec_t now, realtime;   /* the caller's, for the decisions */
        SliceBudget slice;            /* TRIM_SLICE_USEC from when the step began */
        bool atime;             /* the account's times are atimes */
        void (*evicted)(void *userdata, DirId dir, const char *name, CcacheKind kind, uint64_t bytes, int64_t mtime);
        void *userdata;
} StepEnv;

struct Trim {
        EvictPlanner *planner;  /* while the plan is being made */
        EvictPlan plan;
        size_t next;            /* first victim not yet handled */
        Deferred *deferred;     /* in the order they are tried */
        size_t n_deferred;
        size_t round_left;      /* of them, still to try in the round under way */
        usec_t last_round;
        TrimResult result;
};

/* The plan is made: its figures go into the result; a dry run is done. */
static void plan_ready(Trim *t) {
        t->result.planned_files = t->plan.n;
        t->result.planned_bytes = t->plan.bytes;
        t->result.oldest_kept = t->plan.oldest_kept;
        t->result.inflight_bytes = t->plan.inflight_bytes;
        if (t->result.dry_run) {
                t->result.files = t->plan.n;
                t->result.bytes = t->plan.bytes;
                t->next = t->plan.n;
        }
}

int trim_new(Account *a, uint64_t target_bytes, bool dry_run, int64_t now, Trim **ret) {
        const AccountTotals *tot = account_totals(a);
        uint64_t need = tot->bytes > target_bytes ? tot->bytes - target_bytes : 0;
        Trim *t;
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        /* A dry run only counts: no memory per victim. */
        r = evict_planner_new(&a, 1, need, now, dry_run, &t->planner);
        if (r < 0) {
                free(t);
                return r;
        }
        t->result = (TrimResult) { .target_bytes = target_bytes, .need_bytes = need, .dry_run = dry_run };
        *ret = t;
        return 0;
}

int trim_new_with_plan(EvictPlan *plan, uint64_t target_bytes, bool dry_run, Trim **ret) {
        Trim *t;

        t = calloc(1, sizeof(*t));
        if (!t) {
                evict_plan_done(plan);
                return -ENOMEM;
        }
        t->plan = *plan;
        *plan = (EvictPlan) { 0 };
        t->result = (TrimResult) { .target_bytes = target_bytes, .dry_run = dry_run,
                                   .beyond_table = t->plan.beyond_table };
        plan_ready(t);
        *ret = t;
        return 0;
}

/* Plans for what is left of the step's slice. Returns 1 while planning, 0
 * when the plan is made, -ENOMEM. */
static int plan_step(Trim *t, StepEnv *env) {
        usec_t start = slice_elapsed(&env->slice);
        int r;

        t->result.planning_slices++;
        do
                r = evict_planner_step(t->planner, TRIM_PLAN_BUDGET);
        while (r == 1 && !slice_over_now(&env->slice));
        t->result.planning_usec += slice_elapsed(&env->slice) - start;
        if (r != 0)
                return r;
        evict_planner_take(t->planner, 0, &t->plan);
        t->planner = evict_planner_free(t->planner);
        plan_ready(t);
        return 0;
}

/* Takes ccache's content lock of level-2 directory rel ("b/4/..."), or
 * stands in for it when there is no lock/ directory (no ccache 4.8+ then).
 * Returns 1 held (or not needed), 0 taken by someone else. */
static int content_lock(Trim *t, const StepEnv *env, const char *rel, CcacheLockSeen *seen, CcacheLock *lock,
                        int *ret_lockdir) {
        char name[32];
        int r;

        *ret_lockdir = beneath_open_dir(env->root_fd, CCACHE_LOCK_DIR);
        if (*ret_lockdir < 0)
                return 1;
        snprintf(name, sizeof(name), "subdir_%c%c", rel[0], rel[2]);
        r = ccache_lock_try(lock, *ret_lockdir, name, seen, env->realtime);
        if (r == 0) {
                close(*ret_lockdir);
                *ret_lockdir = -1;
                return 0;
        }
        t->result.locks_broken += lock->broke;
        return 1;   /* an error taking it (a read-only lock/): go ahead as ccache 4.7 would */
}

static void count_error(Trim *t, int r) {
        if (t->result.errors++ == 0)
                t->result.first_error = r;
}

/* ccache's counters for what a group deleted, still under its content lock
 * (ccache/README.md §7); a held stats.lock leaves them owed, paid later. */
static void fix_counters(Trim *t, const StepEnv *env, const char *rel, uint64_t files, uint64_t kib) {
        CountersFlush f = { 0 };
        unsigned l1, l2;

        if (!ccache_level2_of(rel, &l1, &l2))
                return;   /* only a level-2 directory's deletions are counted (do_group) */
        counters_subtract(env->counters, l1, l2, files, kib);
        if (counters_flush(env->counters, env->account, env->root_fd, (int) l1, true, env->realtime, &f) > 0)
                t->result.stats_deferred++;
        t->result.stats_updates += f.written;
        if (f.failed > 0 && t->result.stats_failures == 0) {
                t->result.stats_error = f.error;
                memcpy(t->result.stats_failed_dir, f.failed_dir, sizeof(f.failed_dir));
        }
        t->result.stats_failures += f.failed;
        t->result.locks_broken += f.broken;
}

/* The account said name in d was as the plan saw it; the disk said
 * otherwise (skipped): the events that would have told it were lost (an
 * inotify overflow, a watch that could not be added). The account takes
 * what the disk said, so that the next plan, over the same account, does
 * not choose the same stale files again and again until a rescan comes. */
static void correct(Trim *t, const StepEnv *env, DirId d, const char *name, const EvictSkipped *skipped) {
        if (skipped->file) {
                if (account_file_set_inode(env->account, d, name, skipped->blocks, skipped->time, skipped->ino,
                                           skipped->nlink, true) > 0)
                        t->result.corrected++;
        } else if (account_file_remove(env->account, d, name) > 0)
                t->result.corrected++;   /* gone, or no longer a regular file of this filesystem */
}

/* Deletes the victims [start, end) of one directory, whose relative path is
 * rel; under ccache's content lock when the directory is below a level-2
 * one. The slice's time up (after TRIM_GROUP_MIN victims at least), it
 * stops before the next victim: *ret_next is the first one left (end when
 * all were handled). Returns 1 done (to
 * *ret_next), 0 lock taken (try later), -errno if the root is gone. */
static int do_group(Trim *t, StepEnv *env, const char *rel, size_t start, size_t end, CcacheLockSeen *seen,
                    size_t *ret_next) {
        CcacheLock lock = { 0 };
        uint64_t files = 0, kib = 0;
        bool l2 = ccache_level2_of(rel, NULL, NULL);
        int dirfd, lockdir = -1, r;
        size_t i = start;

        if (l2 && content_lock(t, env, rel, seen, &lock, &lockdir) == 0)
                return 0;
        dirfd = beneath_open_dir(env->root_fd, rel);
        for (; dirfd >= 0 && i < end && (i < start + TRIM_GROUP_MIN || !slice_over(&env->slice)); i++) {
                const Victim *v = &t->plan.victims[i];
                char fname[CCACHE_NAME_MAX + 256];
                EvictSkipped skipped;
                FileInfo fi;

                /* The account first: an event since the plan (a cache hit, a
                 * delete, a new file under a reused id) means hands off. The
                 * id may be another file's by now: what it names must still
                 * be evictable, by that name (never a stats file made there).
                 * Then evict_unlink checks the file itself: type, device,
                 * mtime and size, not the inode (why that is enough: there). */
                if (account_file_info(env->account, v->file, &fi) < 0 || fi.dir != v->dir ||
                    fi.dir_gen != v->dir_gen || fi.mtime > v->mtime ||
                    account_file_name(env->account, v->file, fname, sizeof(fname)) < 0 ||
                    !evict_eligible(env->account, &fi, fname, (int64_t) (env->realtime / USEC_PER_SEC))) {
                        t->result.saved++;
                        continue;
                }
                if ((i - start) % 256 == 255)
                        ccache_lock_refresh(&lock, now_usec(CLOCK_MONOTONIC));
                r = evict_unlink_clock(dirfd, fname, env->dev, v->mtime, fi.blocks, env->atime, &skipped);
                if (r < 0)
                        count_error(t, r);
                else if (r == 0) {
                        t->result.saved++;
                        correct(t, env, v->dir, fname, &skipped);
                }
                if (r <= 0)
                        continue;
                t->result.files++;
                t->result.bytes += fi.blocks * 512;
                if (ccache_kind_is_entry(fi.kind)) {
                        files++;
                        kib += fi.blocks / 2;
                }
                if (env->evicted)
                        env->evicted(env->userdata, v->dir, fname, fi.kind, fi.blocks * 512, fi.mtime);
                (void) account_file_remove(env->account, v->dir, fname);
        }
        if (dirfd < 0) {
                t->result.saved += end - start;   /* the directory went: nothing of it to delete */
                i = end;
        } else
                close(dirfd);
        *ret_next = i;
        if (l2 && files > 0)
                fix_counters(t, env, rel, files, kib);
        ccache_lock_release(&lock);
        if (lockdir >= 0)
                close(lockdir);
        return 1;
}

static size_t group_end(const Trim *t, size_t start) {
        size_t end = start;

        while (end < t->plan.n && t->plan.victims[end].dir == t->plan.victims[start].dir &&
               end - start < TRIM_BATCH_FILES)
                end++;
        return end;
}

/* A group to try again: at the end of the deferred ones (its lock was
 * taken), or first (front: what a round's slice left of a group it began). */
static int defer_group(Trim *t, size_t start, usec_t since, const CcacheLockSeen *seen, bool front) {
        Deferred *d = realloc(t->deferred, (t->n_deferred + 1) * sizeof(Deferred));

        if (!d)
                return -ENOMEM;
        t->deferred = d;
        if (front)
                memmove(d + 1, d, t->n_deferred * sizeof(Deferred));
        d[front ? 0 : t->n_deferred] = (Deferred) { .start = start, .since = since, .seen = *seen };
        t->n_deferred++;
        return 0;
}

/* Runs the group at start (to *ret_next: its end, or where the slice's
 * time ran out); a taken lock defers it (since: when it was first found
 * taken; seen: what it looked like). Returns 0, or -errno if the root is
 * gone. */
static int run_group(Trim *t, StepEnv *env, size_t start, usec_t since, CcacheLockSeen *seen, size_t *ret_next) {
        size_t end = group_end(t, start);
        char rel[PATH_MAX];
        int r;

        *ret_next = end;
        if (!account_dir_check(env->account, t->plan.victims[start].dir, t->plan.victims[start].dir_gen) ||
            account_dir_path(env->account, t->plan.victims[start].dir, rel, sizeof(rel)) < 0) {
                t->result.saved += end - start;
                return 0;
        }
        r = do_group(t, env, rel, start, end, seen, ret_next);
        if (r < 0)
                return r;
        /* A lock still live after TRIM_LOCK_WAIT_USEC (its holder keeps its
         * .alive fresh, or keeps changing): that directory is left alone. */
        if (r == 0 && (env->now - since >= TRIM_LOCK_WAIT_USEC || defer_group(t, start, since, seen, false) < 0)) {
                t->result.locked_dirs++;
                t->result.saved += end - start;
        }
        return 0;
}

int trim_step(Trim *t, const TrimEnv *e) {
        StepEnv env = { .account = e->account, .counters = e->counters, .root_fd = e->root_fd, .dev = e->dev,
                        .now = e->now, .realtime = e->realtime, .atime = e->atime, .evicted = e->evicted,
                        .userdata = e->userdata };
        int r;

        slice_begin(&env.slice, TRIM_SLICE_USEC, TRIM_SLICE_EVERY);
        if (t->planner && (r = plan_step(t, &env)) != 0)
                return r;
        while (t->next < t->plan.n && !env.slice.over) {
                CcacheLockSeen seen = { 0 };

                r = run_group(t, &env, t->next, env.now, &seen, &t->next);
                if (r < 0)
                        return r;
                (void) slice_over(&env.slice);   /* groups of victims gone cost lookups only */
        }
        if (t->next < t->plan.n)
                return 1;
        /* Groups whose lock was taken: one more try per retry interval. A
         * round takes as many slices as it needs: what one leaves of a group
         * is tried first in the next. */
        if (t->n_deferred > 0 && t->round_left == 0 && env.now - t->last_round >= TRIM_LOCK_RETRY_USEC) {
                t->round_left = t->n_deferred;
                t->last_round = env.now;
        }
        while (t->round_left > 0 && !env.slice.over) {
                Deferred d = t->deferred[0];
                size_t next;

                memmove(t->deferred, t->deferred + 1, --t->n_deferred * sizeof(Deferred));
                t->round_left--;
                r = run_group(t, &env, d.start, d.since, &d.seen, &next);
                if (r < 0)
                        return r;
                if (next < group_end(t, d.start)) {
                        if (defer_group(t, next, env.now, &(CcacheLockSeen) { 0 }, true) < 0) {
                                t->result.saved += group_end(t, next) - next;
                                continue;
                        }
                        t->round_left++;
                }
                (void) slice_over(&env.slice);
        }
        if (t->round_left > 0)
                return 1;
        return t->n_deferred > 0 ? 2 : 0;
}

const TrimResult *trim_result(const Trim *t) {
        return &t->result;
}

const char *trim_result_why(const TrimResult *r, char *buf, size_t len) {
        char a[32], b[32], c[32], rest[128] = "";

        if (r->errors > 0)
                snprintf(buf, len, "I/O error: %llu file%s could not be deleted (%s)", (unsigned long long) r->errors,
                         r->errors == 1 ? "" : "s", strerror(r->first_error < 0 ? -r->first_error : EIO));
        else if (r->locked_dirs > 0)
                snprintf(buf, len, "locked: ccache kept %llu director%s locked throughout",
                         (unsigned long long) r->locked_dirs, r->locked_dirs == 1 ? "y" : "ies");
        else if (r->planned_bytes < r->need_bytes) {
                if (r->inflight_bytes > 0)
                        snprintf(rest, sizeof(rest), "; %s of the rest are temporaries less than an hour old "
                                 "(ccache's while a compile runs)", format_size(r->inflight_bytes, c, sizeof(c)));
                snprintf(buf, len, "nothing more evictable: %s had to go, but only %s of it were ccache entries "
                         "or stale temporaries%s", format_size(r->need_bytes, a, sizeof(a)),
                         format_size(r->planned_bytes, b, sizeof(b)), rest);
        }
        else if (r->saved > 0)
                snprintf(buf, len, "%llu of the files chosen were used again or changed before they could go",
                         (unsigned long long) r->saved);
        else
                snprintf(buf, len, "the cache grew while it was trimmed");
        return buf;
}

Trim *trim_free(Trim *t) {
        if (!t)
                return NULL;
        evict_planner_free(t->planner);
        evict_plan_done(&t->plan);
        free(t->deferred);
        free(t);
        return NULL;
}
