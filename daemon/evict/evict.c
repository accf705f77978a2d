/* SPDX-License-Identifier: MIT */
/* Victim selection without sorting the whole cache: a histogram over mtime
 * finds the exact cutoff second in two passes, a third pass collects the
 * victims, and only they are sorted (into directory runs in one pass, then
 * each run by mtime). Every pass can stop and resume where it was: the
 * planner works in slices. Memory: the victims and 512 KiB. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/util.h"
#include "evict/evict.h"

#define BUCKETS 65536u

/* ccache's inode cache (not its temporaries) and its sweep stamp in tmp/. */
static bool tmp_keeper(const char *name) {
        return (strncmp(name, "inode-cache", 11) == 0 && !strstr(name, ".tmp.")) || strcmp(name, ".cleaned") == 0;
}

bool evict_eligible(const Account *a, const FileInfo *fi, const char *name, int64_t now) {
        const Dir *dir;

        if (ccache_kind_is_entry(fi->kind))
                return true;
        if (fi->kind != CCACHE_KIND_TMP || !name || !(dir = account_dir(a, fi->dir)) || dir->in_lock ||
            strncmp(name, ".nfs", 4) == 0)
                return false;
        /* A remote storage directory: ccache writes its temporaries next to
         * its entries, and nowhere else. */
        if (account_layout(a) != ACCOUNT_LAYOUT_LOCAL && !account_entry_dir(a, fi->dir))
                return false;
        /* tmp/ holds a running compile's files: two days, whatever the name. */
        if (dir->in_tmp)
                return !tmp_keeper(name) && now - fi->mtime >= EVICT_TMPDIR_MIN_AGE_SEC;
        return strstr(name, ".tmp.") && now - fi->mtime >= EVICT_TMP_MIN_AGE_SEC;
}

bool evict_in_flight(const Account *a, const FileInfo *fi, const char *name, int64_t now) {
        const Dir *dir;

        if (fi->kind != CCACHE_KIND_TMP || !name || now - fi->mtime >= EVICT_TMP_MIN_AGE_SEC ||
            !(dir = account_dir(a, fi->dir)) || dir->in_lock || strncmp(name, ".nfs", 4) == 0)
                return false;
        return dir->in_tmp ? !tmp_keeper(name) : strstr(name, ".tmp.") != NULL;
}

/* Entries are decided by kind alone; temporaries need their name. */
static bool eligible(const Account *a, FileId id, const FileInfo *fi, int64_t now) {
        char name[256];

        if (ccache_kind_is_entry(fi->kind))
                return true;
        if (fi->kind != CCACHE_KIND_TMP || account_file_name(a, id, name, sizeof(name)) < 0)
                return false;
        return evict_eligible(a, fi, name, now);
}

static int victim_cmp(const void *x, const void *y) {
        const Victim *a = x, *b = y;

        if (a->dir != b->dir)
                return a->dir < b->dir ? -1 : 1;
        if (a->mtime != b->mtime)
                return a->mtime < b->mtime ? -1 : 1;
        return a->file < b->file ? -1 : a->file > b->file;
}

typedef enum Phase {
        PHASE_SPAN,      /* what is evictable, and the span of its mtimes */
        PHASE_HIST,      /* the cutoff second, by histogram (two passes) */
        PHASE_COLLECT,   /* the victims */
        PHASE_GROUP,     /* each plan's victims by directory */
        PHASE_SORT,      /* each directory's victims by mtime */
        PHASE_DONE,
} Phase;

struct EvictPlanner {
        Account **as;            /* borrowed accounts; the array is ours */
        size_t n;
        EvictPlan *plans;
        size_t *caps;            /* victims allocated per plan */
        DirId *max_dir;          /* highest directory among each plan's victims */
        uint64_t need;
        int64_t now;
        bool count_only;
        Phase phase;
        size_t acct;             /* where the pass over the files is: account ... */
        FileId file;             /* ... and file; or plan and victim while sorting */
        uint64_t evictable, lo, hi, width, sum, cutoff, tie_need;
        int hist_pass;
        uint64_t *hist;          /* BUCKETS */
        uint32_t *next, *end;    /* grouping: where each directory's run is filled to, and ends */
        size_t n_dirs, bucket;
};

/* A file that may not go, seen by the span pass: ccache's temporaries in
 * use are counted (EvictPlan.inflight_bytes), so that a trim that found
 * nothing to evict can say what the rest is. */
static void note_in_flight(EvictPlanner *p, const Account *a, FileId id, const FileInfo *fi) {
        char name[256];

        if (fi->kind == CCACHE_KIND_TMP && account_file_name(a, id, name, sizeof(name)) == 0 &&
            evict_in_flight(a, fi, name, p->now))
                p->plans[p->acct].inflight_bytes += fi->blocks * 512;
}

/* Visits up to *budget files of the pass, calling visit on each eligible
 * one. Returns true when the pass is over (and rewinds it). */
static bool pass_files(EvictPlanner *p, size_t *budget,
                       int (*visit)(EvictPlanner *p, size_t acct, FileId id, const FileInfo *fi), int *ret_error) {
        while (p->acct < p->n) {
                Account *a = p->as[p->acct];

                for (; p->file < account_file_limit(a); p->file++) {
                        FileInfo fi;
                        int r;

                        if (*budget == 0)
                                return false;
                        (*budget)--;
                        if (account_file_info(a, p->file, &fi) < 0)
                                continue;
                        if (!eligible(a, p->file, &fi, p->now)) {
                                if (p->phase == PHASE_SPAN)
                                        note_in_flight(p, a, p->file, &fi);
                                continue;
                        }
                        r = visit(p, p->acct, p->file, &fi);
                        if (r < 0) {
                                *ret_error = r;
                                return false;
                        }
                }
                p->acct++;
                p->file = 0;
        }
        p->acct = 0;
        p->file = 0;
        return true;
}

static int visit_span(EvictPlanner *p, size_t acct, FileId id, const FileInfo *fi) {
        EvictPlan *plan = &p->plans[acct];

        plan->evictable_files++;
        plan->evictable_bytes += fi->blocks * 512;
        p->evictable++;
        p->lo = (uint64_t) fi->mtime < p->lo ? (uint64_t) fi->mtime : p->lo;
        p->hi = (uint64_t) fi->mtime > p->hi ? (uint64_t) fi->mtime : p->hi;
        return 0;
}

static int visit_hist(EvictPlanner *p, size_t acct, FileId id, const FileInfo *fi) {
        if ((uint64_t) fi->mtime >= p->lo && (uint64_t) fi->mtime <= p->hi)
                p->hist[((uint64_t) fi->mtime - p->lo) / p->width] += fi->blocks * 512;
        return 0;
}

static int add_victim(EvictPlanner *p, size_t acct, FileId id, const FileInfo *fi) {
        EvictPlan *plan = &p->plans[acct];

        if (!p->count_only && plan->n == p->caps[acct]) {
                size_t cap = p->caps[acct] ? p->caps[acct] * 2 : 1024;
                Victim *v = realloc(plan->victims, cap * sizeof(Victim));
                if (!v)
                        return -ENOMEM;
                plan->victims = v;
                p->caps[acct] = cap;
        }
        if (!p->count_only)
                plan->victims[plan->n] = (Victim) { .file = id, .dir = fi->dir, .dir_gen = fi->dir_gen,
                                                    .mtime = (uint32_t) fi->mtime,
                                                    .blocks = (uint32_t) fi->blocks };
        plan->n++;
        plan->bytes += fi->blocks * 512;
        plan->cutoff = fi->mtime > plan->cutoff ? fi->mtime : plan->cutoff;
        p->max_dir[acct] = fi->dir > p->max_dir[acct] ? fi->dir : p->max_dir[acct];
        return 0;
}

/* Everything older than the cutoff goes and, at the cutoff second, as many
 * as tie_need still asks for, whichever account they are in. */
static int visit_collect(EvictPlanner *p, size_t acct, FileId id, const FileInfo *fi) {
        EvictPlan *plan = &p->plans[acct];
        uint64_t m = (uint64_t) fi->mtime;

        if (m > p->cutoff || (m == p->cutoff && p->tie_need == 0)) {
                if (!plan->oldest_kept || fi->mtime < plan->oldest_kept)
                        plan->oldest_kept = fi->mtime;
                return 0;
        }
        if (m == p->cutoff)
                p->tie_need = p->tie_need > fi->blocks * 512 ? p->tie_need - fi->blocks * 512 : 0;
        return add_victim(p, acct, id, fi);
}

/* After the span: where the histogram starts, or straight to collecting. */
static int span_done(EvictPlanner *p) {
        if (p->need == 0 || p->evictable == 0) {
                p->cutoff = 0;
                p->phase = PHASE_COLLECT;
                return 0;
        }
        p->hist = calloc(BUCKETS, sizeof(uint64_t));
        if (!p->hist)
                return -ENOMEM;
        p->width = (p->hi - p->lo + 1 + BUCKETS - 1) / BUCKETS;
        p->phase = PHASE_HIST;
        return 0;
}

/* After a histogram pass: the bucket where need is reached, narrowed to one
 * second by a second pass. Files may come and go between the passes: a
 * second pass that no longer reaches need takes its whole (old) range. */
static void hist_done(EvictPlanner *p) {
        size_t b;

        for (b = 0; b < BUCKETS && p->sum + p->hist[b] < p->need; b++)
                p->sum += p->hist[b];
        if (b == BUCKETS) {
                p->cutoff = p->hist_pass == 0 ? (uint64_t) UINT32_MAX + 1 : p->hi + 1;
                p->phase = PHASE_COLLECT;
        } else if (p->width == 1) {
                p->cutoff = p->lo + b;
                p->phase = PHASE_COLLECT;
        } else {
                p->lo += b * p->width;
                p->hi = p->lo + p->width - 1;
                p->width = 1;
                p->hist_pass++;
                memset(p->hist, 0, BUCKETS * sizeof(uint64_t));
                return;
        }
        p->tie_need = p->need > p->sum ? p->need - p->sum : 0;
        free(p->hist);
        p->hist = NULL;
}

/* Starts putting plan acct's victims into runs by directory: counts them
 * per directory into where each run starts (next) and ends (end). */
static int group_begin(EvictPlanner *p) {
        EvictPlan *plan = &p->plans[p->acct];
        size_t nb = (size_t) p->max_dir[p->acct] + 1;
        uint32_t sum = 0;

        p->next = calloc(nb, sizeof(uint32_t));
        p->end = calloc(nb, sizeof(uint32_t));
        if (!p->next || !p->end)
                return -ENOMEM;
        p->n_dirs = nb;
        p->bucket = 0;
        for (size_t i = 0; i < plan->n; i++)
                p->end[plan->victims[i].dir]++;
        for (size_t d = 0; d < nb; d++) {
                p->next[d] = sum;
                sum += p->end[d];
                p->end[d] = sum;
        }
        return 0;
}

static void group_end(EvictPlanner *p) {
        free(p->next);
        free(p->end);
        p->next = p->end = NULL;
}

/* Moves victims into their runs, in place (an American flag sort on the
 * DirId: each swap puts one victim where it belongs), up to *budget swaps.
 * True when the plan is grouped. */
static bool group_run(EvictPlanner *p, size_t *budget) {
        EvictPlan *plan = &p->plans[p->acct];

        for (; p->bucket < p->n_dirs; p->bucket++)
                while (p->next[p->bucket] < p->end[p->bucket]) {
                        Victim *v = &plan->victims[p->next[p->bucket]], t;

                        if (*budget == 0)
                                return false;
                        (*budget)--;
                        if (v->dir == p->bucket) {
                                p->next[p->bucket]++;
                                continue;
                        }
                        t = plan->victims[p->next[v->dir]];
                        plan->victims[p->next[v->dir]++] = *v;
                        *v = t;
                }
        group_end(p);
        return true;
}

/* The group phase over every plan. Returns 1 when done, 0 when out of
 * budget, -ENOMEM. */
static int group_plans(EvictPlanner *p, size_t *budget) {
        for (; p->acct < p->n; p->acct++) {
                if (!p->next) {
                        int r = group_begin(p);
                        if (r < 0)
                                return r;
                        *budget = *budget > p->plans[p->acct].n ? *budget - p->plans[p->acct].n : 0;
                }
                if (!group_run(p, budget))
                        return 0;
        }
        p->acct = 0;
        p->file = 0;
        return 1;
}

/* Sorts the runs of one directory each by mtime, up to *budget victims'
 * worth; p->file is the next run's first victim. True when all are done. */
static bool sort_runs(EvictPlanner *p, size_t *budget) {
        for (; p->acct < p->n; p->acct++, p->file = 0) {
                EvictPlan *plan = &p->plans[p->acct];

                while (p->file < plan->n) {
                        size_t start = p->file, end = start;

                        if (*budget == 0)
                                return false;
                        while (end < plan->n && plan->victims[end].dir == plan->victims[start].dir)
                                end++;
                        if (end - start > 1)
                                qsort(plan->victims + start, end - start, sizeof(Victim), victim_cmp);
                        *budget = *budget > end - start ? *budget - (end - start) : 0;
                        p->file = (FileId) end;
                }
        }
        return true;
}

int evict_planner_new(Account *const *as, size_t n, uint64_t need, int64_t now, bool count_only,
                      EvictPlanner **ret) {
        EvictPlanner *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->as = calloc(n ? n : 1, sizeof(Account *));
        p->plans = calloc(n ? n : 1, sizeof(EvictPlan));
        p->caps = calloc(n ? n : 1, sizeof(size_t));
        p->max_dir = calloc(n ? n : 1, sizeof(DirId));
        if (!p->as || !p->plans || !p->caps || !p->max_dir) {
                evict_planner_free(p);
                return -ENOMEM;
        }
        memcpy(p->as, as, n * sizeof(Account *));
        p->n = n;
        p->need = need;
        p->now = now;
        p->count_only = count_only;
        p->lo = UINT32_MAX;
        *ret = p;
        return 0;
}

int evict_planner_step(EvictPlanner *p, size_t budget) {
        int r = 0;

        while (budget > 0 && p->phase != PHASE_DONE && r == 0) {
                switch (p->phase) {
                case PHASE_SPAN:
                        if (pass_files(p, &budget, visit_span, &r) && r == 0)
                                r = span_done(p);
                        break;
                case PHASE_HIST:
                        if (pass_files(p, &budget, visit_hist, &r) && r == 0)
                                hist_done(p);
                        break;
                case PHASE_COLLECT:
                        if (pass_files(p, &budget, visit_collect, &r) && r == 0)
                                p->phase = p->count_only ? PHASE_DONE : PHASE_GROUP;
                        break;
                case PHASE_GROUP:
                        r = group_plans(p, &budget);
                        if (r > 0) {
                                p->phase = PHASE_SORT;
                                r = 0;
                        }
                        break;
                case PHASE_SORT:
                        if (sort_runs(p, &budget))
                                p->phase = PHASE_DONE;
                        break;
                case PHASE_DONE:
                        break;
                }
        }
        if (r < 0)
                return r;
        return p->phase != PHASE_DONE;
}

void evict_planner_take(EvictPlanner *p, size_t i, EvictPlan *ret) {
        assert(p->phase == PHASE_DONE && i < p->n);
        *ret = p->plans[i];
        p->plans[i] = (EvictPlan) { 0 };
}

EvictPlanner *evict_planner_free(EvictPlanner *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; p->plans && i < p->n; i++)
                evict_plan_done(&p->plans[i]);
        free(p->plans);
        free(p->as);
        free(p->caps);
        free(p->max_dir);
        free(p->hist);
        group_end(p);
        free(p);
        return NULL;
}

int evict_plan_multi(Account *const *as, size_t n, uint64_t need, int64_t now, EvictPlan *rets) {
        EvictPlanner *p;
        int r;

        r = evict_planner_new(as, n, need, now, false, &p);
        if (r < 0)
                return r;
        r = evict_planner_step(p, SIZE_MAX);
        for (size_t i = 0; r == 0 && i < n; i++)
                evict_planner_take(p, i, &rets[i]);
        evict_planner_free(p);
        return r < 0 ? r : 0;
}

int evict_plan(Account *a, uint64_t need, int64_t now, EvictPlan *ret) {
        return evict_plan_multi(&a, 1, need, now, ret);
}

int evict_plan_tagged(Account *a, const bool match[256], EvictPlan *ret) {
        EvictPlan plan = { 0 };
        FileId limit = account_file_limit(a);
        size_t cap = 0;

        for (FileId f = 0; f < limit; f++) {
                FileInfo fi;

                if (!match[account_file_tag(a, f)] || account_file_info(a, f, &fi) < 0 || !ccache_kind_is_entry(fi.kind))
                        continue;
                if (plan.n == cap) {
                        Victim *v = realloc(plan.victims, (cap = cap ? cap * 2 : 256) * sizeof(*v));

                        if (!v) {
                                evict_plan_done(&plan);
                                return -ENOMEM;
                        }
                        plan.victims = v;
                }
                plan.victims[plan.n++] = (Victim) { .file = f, .dir = fi.dir, .dir_gen = fi.dir_gen,
                                                    .mtime = (uint32_t) fi.mtime, .blocks = (uint32_t) fi.blocks };
                plan.bytes += fi.blocks * 512;
                if (fi.mtime > plan.cutoff)
                        plan.cutoff = fi.mtime;
        }
        if (plan.n > 0)   /* no victims: victims is NULL, which qsort must not get */
                qsort(plan.victims, plan.n, sizeof(*plan.victims), victim_cmp);
        plan.evictable_files = plan.n;
        plan.evictable_bytes = plan.bytes;
        *ret = plan;
        return 0;
}

void evict_plan_done(EvictPlan *p) {
        free(p->victims);
        *p = (EvictPlan) { 0 };
}

int evict_unlink(int dirfd, const char *name, dev_t dev, int64_t max_mtime, uint64_t blocks) {
        return evict_unlink_clock(dirfd, name, dev, max_mtime, blocks, false, NULL);
}

int evict_unlink_clock(int dirfd, const char *name, dev_t dev, int64_t max_time, uint64_t blocks, bool atime,
                       EvictSkipped *ret) {
        EvictSkipped skipped = { 0 };
        struct statx stx;

        if (!ret)
                ret = &skipped;
        *ret = (EvictSkipped) { 0 };
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_MTIME | STATX_ATIME | STATX_BLOCKS | STATX_INO | STATX_NLINK, &stx) < 0) {
                ret->gone = errno == ENOENT;
                return errno == ENOENT ? 0 : -errno;
        }
        /* Still the file that was planned: a regular file, here, no newer,
         * the same size. A hit since refreshed its mtime; a rewrite changed it.
         * That is enough without the inode (daemon/README.md §4 says so):
         * unlinkat removes this one name, never another name of its inode,
         * so nothing outside the cache goes with it; and a file put in the
         * planned one's place passes only if it is a regular file on this
         * filesystem, at a name that may go (the caller checked it), as old
         * and as big: one the same plan would have chosen, whose blocks are
         * what ccache's counters lose. ccache itself replaces an entry only
         * by a newer one (renamed from its temporary). The inode would cost
         * 8 bytes more per file (32 in the Account) and protect nothing
         * more: it is not kept. */
        if (!S_ISREG(stx.stx_mode) || makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev)
                return 0;
        if ((atime ? stx.stx_atime : stx.stx_mtime).tv_sec > max_time || stx.stx_blocks != blocks) {
                *ret = (EvictSkipped) { .file = true, .blocks = stx.stx_blocks, .ino = stx.stx_ino,
                                        .nlink = stx.stx_nlink,
                                        .time = (atime ? stx.stx_atime : stx.stx_mtime).tv_sec };
                return 0;
        }
        /* unlinkat without AT_REMOVEDIR removes a name and never follows it.
         * Should the name be swapped for a symlink between the statx and here,
         * that link is what goes: nothing outside the directory is reached. */
        if (unlinkat(dirfd, name, 0) < 0) {
                ret->gone = errno == ENOENT;
                return errno == ENOENT ? 0 : -errno;
        }
        return 1;
}
