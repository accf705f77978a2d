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

#include "beneath.h"
#include "ccache.h"
#include "trim.h"

typedef struct Deferred {
        size_t start;           /* first victim of a group whose lock was taken */
        usec_t since;
} Deferred;

struct Trim {
        EvictPlan plan;
        size_t next;            /* first victim not yet handled */
        Deferred *deferred;
        size_t n_deferred;
        usec_t last_round;
        TrimResult result;
};

int trim_new(Account *a, uint64_t target_bytes, bool dry_run, int64_t now, Trim **ret) {
        const AccountTotals *tot = account_totals(a);
        uint64_t need = tot->bytes > target_bytes ? tot->bytes - target_bytes : 0;
        EvictPlan plan;
        int r;

        r = evict_plan(a, need, now, &plan);
        if (r < 0)
                return r;
        return trim_new_with_plan(&plan, target_bytes, dry_run, ret);
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
        t->result = (TrimResult) {
                .target_bytes = target_bytes,
                .planned_files = t->plan.n,
                .planned_bytes = t->plan.bytes,
                .oldest_kept = t->plan.oldest_kept,
                .dry_run = dry_run,
        };
        if (dry_run) {
                t->result.files = t->plan.n;
                t->result.bytes = t->plan.bytes;
                t->next = t->plan.n;
        }
        *ret = t;
        return 0;
}

/* Deletes the victims [start, end) of one directory, whose relative path is
 * rel; under ccache's content lock when the directory is below a level-2
 * one. Returns 1 done, 0 lock taken (try later), -errno if the root is gone. */
static int do_group(Trim *t, Account *a, int root_fd, dev_t dev, const char *rel, size_t start, size_t end) {
        CcacheLock lock = { 0 };
        uint64_t files = 0, kib = 0;
        bool l2 = hex_digit(rel[0]) >= 0 && rel[1] == '/' && hex_digit(rel[2]) >= 0;
        int dirfd, lockdir = -1, r;

        if (l2) {
                char name[32];

                lockdir = beneath_open_dir(root_fd, "lock");
                snprintf(name, sizeof(name), "subdir_%c%c", rel[0], rel[2]);
                r = lockdir >= 0 ? ccache_lock_try(&lock, lockdir, name) : 1;
                if (r == 0) {
                        close(lockdir);
                        return 0;
                }
        }
        dirfd = beneath_open_dir(root_fd, rel);
        for (size_t i = start; dirfd >= 0 && i < end; i++) {
                const Victim *v = &t->plan.victims[i];
                char fname[CCACHE_NAME_MAX + 256];
                FileInfo fi;

                /* The account first: an event since the plan (a cache hit, a
                 * delete, a new file under a reused id) means hands off. */
                if (account_file_info(a, v->file, &fi) < 0 || fi.dir != v->dir || fi.dir_gen != v->dir_gen ||
                    fi.mtime > v->mtime ||
                    account_file_name(a, v->file, fname, sizeof(fname)) < 0) {
                        t->result.saved++;
                        continue;
                }
                r = evict_unlink(dirfd, fname, dev, v->mtime, fi.blocks);
                if (r < 0)
                        t->result.errors++;
                else if (r == 0)
                        t->result.saved++;
                if (r <= 0)
                        continue;
                t->result.files++;
                t->result.bytes += fi.blocks * 512;
                if (ccache_kind_is_entry(fi.kind)) {
                        files++;
                        kib += fi.blocks / 2;
                }
                (void) account_file_remove(a, v->dir, fname);
        }
        if (dirfd < 0)
                t->result.saved += end - start;   /* the directory went: nothing of it to delete */
        else
                close(dirfd);
        /* ccache's counters, still under the content lock (CCACHE.md §7). */
        if (l2 && files > 0) {
                char l1[2] = { rel[0], '\0' };
                int l1fd = beneath_open_dir(root_fd, l1);

                r = l1fd >= 0 ? ccache_stats_subtract(l1fd, (unsigned) hex_digit(rel[2]), files, kib,
                                                      200 * USEC_PER_MSEC) : l1fd;
                if (r > 0)
                        t->result.stats_updates++;
                else if (r < 0)
                        t->result.stats_failures++;
                if (l1fd >= 0)
                        close(l1fd);
        }
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

static int defer_group(Trim *t, size_t start, usec_t since) {
        Deferred *d = realloc(t->deferred, (t->n_deferred + 1) * sizeof(Deferred));

        if (!d)
                return -ENOMEM;
        t->deferred = d;
        t->deferred[t->n_deferred++] = (Deferred) { .start = start, .since = since };
        return 0;
}

/* Runs the group at start; a taken lock defers it (since: when it was first
 * found taken). Returns 0, or -errno if the root is gone. */
static int run_group(Trim *t, Account *a, int root_fd, dev_t dev, size_t start, usec_t since) {
        size_t end = group_end(t, start);
        char rel[PATH_MAX];
        int r;

        if (!account_dir_check(a, t->plan.victims[start].dir, t->plan.victims[start].dir_gen) ||
            account_dir_path(a, t->plan.victims[start].dir, rel, sizeof(rel)) < 0) {
                t->result.saved += end - start;
                return 0;
        }
        r = do_group(t, a, root_fd, dev, rel, start, end);
        if (r < 0)
                return r;
        if (r == 0) {
                if (now_usec(CLOCK_MONOTONIC) - since >= TRIM_LOCK_WAIT_USEC || defer_group(t, start, since) < 0) {
                        t->result.locked_dirs++;
                        t->result.saved += end - start;
                }
        }
        return 0;
}

int trim_step(Trim *t, Account *a, int root_fd, dev_t dev) {
        usec_t now = now_usec(CLOCK_MONOTONIC), deadline = now + TRIM_BATCH_USEC;
        int r;

        while (t->next < t->plan.n && now_usec(CLOCK_MONOTONIC) < deadline) {
                size_t start = t->next;

                t->next = group_end(t, start);
                r = run_group(t, a, root_fd, dev, start, now);
                if (r < 0)
                        return r;
        }
        if (t->next < t->plan.n)
                return 1;
        /* Groups whose lock was taken: one more try per retry interval. */
        if (t->n_deferred > 0 && now - t->last_round >= TRIM_LOCK_RETRY_USEC) {
                Deferred *d = t->deferred;
                size_t n = t->n_deferred;

                t->deferred = NULL;
                t->n_deferred = 0;
                t->last_round = now;
                for (size_t i = 0; i < n; i++)
                        if ((r = run_group(t, a, root_fd, dev, d[i].start, d[i].since)) < 0) {
                                free(d);
                                return r;
                        }
                free(d);
        }
        return t->n_deferred > 0 ? 2 : 0;
}

const TrimResult *trim_result(const Trim *t) {
        return &t->result;
}

Trim *trim_free(Trim *t) {
        if (!t)
                return NULL;
        evict_plan_done(&t->plan);
        free(t->deferred);
        free(t);
        return NULL;
}
