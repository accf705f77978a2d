/* SPDX-License-Identifier: MIT */
/* Victim selection without sorting the whole cache: a histogram over mtime
 * finds the exact cutoff second in two passes, a third pass collects the
 * victims, and only they are sorted. Memory: the victims and 512 KiB. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "evict.h"
#include "util.h"

#define BUCKETS 65536u

bool evict_eligible(const Account *a, const FileInfo *fi, const char *name, int64_t now) {
        const Dir *dir;

        if (ccache_kind_is_entry(fi->kind))
                return true;
        if (fi->kind != CCACHE_KIND_TMP || !name || !(dir = account_dir(a, fi->dir)) || dir->in_lock ||
            strncmp(name, ".nfs", 4) == 0)
                return false;
        /* tmp/ holds a running compile's files: two days, whatever the name. */
        if (dir->in_tmp)
                return strncmp(name, "inode-cache", 11) != 0 && strcmp(name, ".cleaned") != 0 &&
                       now - fi->mtime >= EVICT_TMPDIR_MIN_AGE_SEC;
        return strstr(name, ".tmp.") && now - fi->mtime >= EVICT_TMP_MIN_AGE_SEC;
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

/* The mtime t such that eligible files older than t hold < need bytes and
 * files up to t hold >= need (UINT32_MAX+1 if all of them hold less), over
 * every account; *ret_before gets the bytes older than t. */
static int find_cutoff(Account *const *as, size_t n, uint64_t need, int64_t now, uint64_t lo, uint64_t hi,
                       uint64_t *ret, uint64_t *ret_before) {
        uint64_t *hist = calloc(BUCKETS, sizeof(uint64_t));
        uint64_t span = hi - lo + 1, width = (span + BUCKETS - 1) / BUCKETS, sum = 0;
        size_t b;

        if (!hist)
                return -ENOMEM;
        for (int pass = 0; pass < 2; pass++) {
                memset(hist, 0, BUCKETS * sizeof(uint64_t));
                for (size_t i = 0; i < n; i++)
                        for (FileId id = 0; id < account_file_limit(as[i]); id++) {
                                FileInfo fi;
                                if (account_file_info(as[i], id, &fi) < 0 || (uint64_t) fi.mtime < lo ||
                                    (uint64_t) fi.mtime > hi || !eligible(as[i], id, &fi, now))
                                        continue;
                                hist[((uint64_t) fi.mtime - lo) / width] += fi.blocks * 512;
                        }
                for (b = 0; b < BUCKETS && sum + hist[b] < need; b++)
                        sum += hist[b];
                if (b == BUCKETS) {
                        free(hist);
                        *ret = (uint64_t) UINT32_MAX + 1;
                        *ret_before = sum;
                        return 0;
                }
                /* Narrow to bucket b; the second pass has one second per bucket. */
                lo += b * width;
                hi = lo + width - 1;
                if (width == 1)
                        break;
                width = 1;
        }
        free(hist);
        *ret = lo;
        *ret_before = sum;
        return 0;
}

static int add_victim(EvictPlan *p, size_t *cap, FileId id, const FileInfo *fi) {
        if (p->n == *cap) {
                Victim *v = realloc(p->victims, (*cap = *cap ? *cap * 2 : 1024) * sizeof(Victim));
                if (!v)
                        return -ENOMEM;
                p->victims = v;
        }
        p->victims[p->n++] = (Victim) { .file = id, .dir = fi->dir, .dir_gen = fi->dir_gen,
                                        .mtime = (uint32_t) fi->mtime, .blocks = (uint32_t) fi->blocks };
        p->bytes += fi->blocks * 512;
        p->cutoff = fi->mtime > p->cutoff ? fi->mtime : p->cutoff;
        return 0;
}

/* Collects the victims of account a: everything older than cutoff and, at
 * the cutoff second, as many as *tie_need still asks for. Also finds the
 * oldest eligible file that stays. */
static int collect(Account *a, uint64_t cutoff, uint64_t *tie_need, int64_t now, EvictPlan *p) {
        size_t cap = 0;

        p->oldest_kept = 0;
        for (FileId id = 0; id < account_file_limit(a); id++) {
                FileInfo fi;
                bool take;

                if (account_file_info(a, id, &fi) < 0 || !eligible(a, id, &fi, now))
                        continue;
                take = (uint64_t) fi.mtime < cutoff || ((uint64_t) fi.mtime == cutoff && *tie_need > 0);
                if (!take) {
                        if (!p->oldest_kept || fi.mtime < p->oldest_kept)
                                p->oldest_kept = fi.mtime;
                        continue;
                }
                if ((uint64_t) fi.mtime == cutoff)
                        *tie_need = *tie_need > fi.blocks * 512 ? *tie_need - fi.blocks * 512 : 0;
                if (add_victim(p, &cap, id, &fi) < 0)
                        return -ENOMEM;
        }
        if (p->n > 1)
                qsort(p->victims, p->n, sizeof(Victim), victim_cmp);
        return 0;
}

int evict_plan_multi(Account *const *as, size_t n, uint64_t need, int64_t now, EvictPlan *rets) {
        uint64_t cutoff = 0, before = 0, tie_need, evictable = 0, lo = UINT32_MAX, hi = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                EvictPlan *p = &rets[i];

                *p = (EvictPlan) { 0 };
                for (FileId id = 0; id < account_file_limit(as[i]); id++) {
                        FileInfo fi;
                        if (account_file_info(as[i], id, &fi) < 0 || !eligible(as[i], id, &fi, now))
                                continue;
                        p->evictable_files++;
                        p->evictable_bytes += fi.blocks * 512;
                        lo = (uint64_t) fi.mtime < lo ? (uint64_t) fi.mtime : lo;
                        hi = (uint64_t) fi.mtime > hi ? (uint64_t) fi.mtime : hi;
                }
                evictable += p->evictable_files;
        }
        if (need > 0 && evictable > 0) {
                r = find_cutoff(as, n, need, now, lo, hi, &cutoff, &before);
                if (r < 0)
                        return r;
        }
        /* Files older than the cutoff all go; at the cutoff second, only as
         * many as are still needed, whichever account they are in. */
        tie_need = need > before ? need - before : 0;
        for (size_t i = 0; i < n; i++)
                if (collect(as[i], cutoff, &tie_need, now, &rets[i]) < 0) {
                        for (size_t k = 0; k <= i; k++)
                                evict_plan_done(&rets[k]);
                        return -ENOMEM;
                }
        return 0;
}

int evict_plan(Account *a, uint64_t need, int64_t now, EvictPlan *ret) {
        return evict_plan_multi(&a, 1, need, now, ret);
}

void evict_plan_done(EvictPlan *p) {
        free(p->victims);
        *p = (EvictPlan) { 0 };
}

int evict_unlink(int dirfd, const char *name, dev_t dev, int64_t max_mtime, uint64_t blocks) {
        struct statx stx;

        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MTIME | STATX_BLOCKS,
                  &stx) < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Still the file that was planned: a regular file, here, no newer,
         * the same size. A hit since refreshed its mtime; a rewrite changed it. */
        if (!S_ISREG(stx.stx_mode) || makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev ||
            stx.stx_mtime.tv_sec > max_mtime || stx.stx_blocks != blocks)
                return 0;
        /* unlinkat without AT_REMOVEDIR removes a name and never follows it.
         * Should the name be swapped for a symlink between the statx and here,
         * that link is what goes: nothing outside the directory is reached. */
        if (unlinkat(dirfd, name, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
}
