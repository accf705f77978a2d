/* SPDX-License-Identifier: MIT */
/* ccache's counters owed, paid when the locks allow. The figures of a
 * recount are read from the account only once both locks are held, so they
 * are as fresh as the daemon knows them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "ccache/ccache-lock.h"
#include "ccache/ccache-stats.h"
#include "ccache/ccache.h"
#include "evict/counters.h"
#include "os/beneath.h"

typedef struct Owed {
        uint64_t files, kib;             /* to subtract */
        uint64_t add_files, add_kib;     /* to add */
        bool recount;
        CcacheLockSeen content_seen;     /* its subdir lock, while a recount waits for it */
} Owed;

struct Counters {
        Owed owed[16][16];
        CcacheLockSeen stats_seen[16];   /* each level-1 stats.lock */
};

int counters_new(Counters **ret) {
        Counters *k = calloc(1, sizeof(*k));

        if (!k)
                return -ENOMEM;
        *ret = k;
        return 0;
}

Counters *counters_free(Counters *k) {
        free(k);
        return NULL;
}

void counters_clear(Counters *k) {
        memset(k, 0, sizeof(*k));
}

static uint64_t add_saturating(uint64_t a, uint64_t b) {
        return a + b < a ? UINT64_MAX : a + b;
}

void counters_subtract(Counters *k, unsigned l1, unsigned l2, uint64_t files, uint64_t kib) {
        Owed *o = &k->owed[l1 & 15][l2 & 15];

        o->files = add_saturating(o->files, files);
        o->kib = add_saturating(o->kib, kib);
}

void counters_add(Counters *k, unsigned l1, unsigned l2, uint64_t files, uint64_t kib) {
        Owed *o = &k->owed[l1 & 15][l2 & 15];

        o->add_files = add_saturating(o->add_files, files);
        o->add_kib = add_saturating(o->add_kib, kib);
}

void counters_recount(Counters *k, unsigned l1, unsigned l2) {
        k->owed[l1 & 15][l2 & 15].recount = true;
}

unsigned counters_recover(Counters *k, int root_fd) {
        unsigned found = 0;
        int lockdir = beneath_open_dir(root_fd, CCACHE_LOCK_DIR);

        for (unsigned i = 0; i < 16; i++) {
                char rel[2] = { "0123456789abcdef"[i], '\0' }, name[16];
                int l1fd = beneath_open_dir(root_fd, rel);

                if (l1fd >= 0 && ccache_lock_break_ours_dead(l1fd, "stats") > 0) {
                        found++;
                        for (unsigned j = 0; j < 16; j++)
                                counters_recount(k, i, j);
                }
                if (l1fd >= 0)
                        close(l1fd);
                for (unsigned j = 0; lockdir >= 0 && j < 16; j++) {
                        snprintf(name, sizeof(name), "subdir_%x%x", i, j);
                        if (ccache_lock_break_ours_dead(lockdir, name) > 0) {
                                found++;
                                counters_recount(k, i, j);
                        }
                }
        }
        if (lockdir >= 0)
                close(lockdir);
        return found;
}

static bool l1_owed(const Counters *k, unsigned l1) {
        for (unsigned j = 0; j < 16; j++)
                if (k->owed[l1][j].files || k->owed[l1][j].kib || k->owed[l1][j].add_files ||
                    k->owed[l1][j].add_kib || k->owed[l1][j].recount)
                        return true;
        return false;
}

bool counters_pending(const Counters *k) {
        for (unsigned i = 0; i < 16; i++)
                if (l1_owed(k, i))
                        return true;
        return false;
}

/* The level-1 and level-2 digits of directory d, if it is <l1>/<l2> or below
 * it in ccache's hex levels. */
static bool dir_levels(const Account *a, DirId d, unsigned *ret_l1, unsigned *ret_l2) {
        const Dir *dir = account_dir(a, d), *parent;

        if (!dir || !dir->hex || dir->depth < 2)
                return false;
        while (dir && dir->depth > 2)
                dir = account_dir(a, dir->parent);
        parent = dir ? account_dir(a, dir->parent) : NULL;
        if (!parent || !dir->name || !parent->name)
                return false;
        *ret_l1 = (unsigned) hex_digit(parent->name[0]);
        *ret_l2 = (unsigned) hex_digit(dir->name[0]);
        return true;
}

/* The entries (count, KiB as ccache counts them) of every level-2 directory
 * of level-1 directory l1, from one pass over the account. */
static void exact_figures(const Account *a, unsigned l1, CcacheStatsFix *fix) {
        for (FileId id = 0; id < account_file_limit(a); id++) {
                unsigned f1, f2;
                FileInfo fi;

                if (account_file_info(a, id, &fi) < 0 || !ccache_kind_is_entry(fi.kind) ||
                    !dir_levels(a, fi.dir, &f1, &f2) || f1 != l1)
                        continue;
                fix->files[f2]++;
                fix->kib[f2] += fi.blocks / 2;
        }
}

static void note_failure(CountersFlush *ret, unsigned l1, int r) {
        if (ret->failed++ == 0) {
                ret->error = r;
                ret->failed_dir[0] = "0123456789abcdef"[l1];
                ret->failed_dir[1] = '\0';
        }
}

/* Takes the content locks of the recounts owed to l1 that can be taken now
 * (taken[j] set; the locks in locks[]), and says whether any was taken. */
static bool take_content_locks(Counters *k, int root_fd, unsigned l1, uint64_t now, CcacheLock locks[16],
                               bool taken[16], int *ret_lockdir, CountersFlush *ret) {
        bool any = false;
        int lockdir = beneath_open_dir(root_fd, CCACHE_LOCK_DIR);

        for (unsigned j = 0; j < 16; j++) {
                Owed *o = &k->owed[l1][j];
                char name[16];

                if (!o->recount)
                        continue;
                /* No lock/ directory: no ccache 4.8+ holds anything there. */
                snprintf(name, sizeof(name), "subdir_%x%x", l1, j);
                if (lockdir >= 0 && ccache_lock_try(&locks[j], lockdir, name, &o->content_seen, now) <= 0)
                        continue;
                ret->broken += locks[j].broke;
                taken[j] = any = true;
        }
        *ret_lockdir = lockdir;
        return any;
}

/* Pays l1. Returns 1 when a held lock kept something owed, else 0. */
static int flush_l1(Counters *k, const Account *a, int root_fd, unsigned l1, bool exact, uint64_t now,
                    CountersFlush *ret) {
        CcacheStatsFix fix = { 0 };
        CcacheLock locks[16] = { 0 };
        bool taken[16] = { false };
        char rel[2] = { "0123456789abcdef"[l1], '\0' };
        bool recounts = false, blocked = false, broke = false;
        int l1fd, lockdir = -1, r;

        if (exact)
                recounts = take_content_locks(k, root_fd, l1, now, locks, taken, &lockdir, ret);
        for (unsigned j = 0; j < 16; j++) {
                fix.sub_files[j] = k->owed[l1][j].files;
                fix.sub_kib[j] = k->owed[l1][j].kib;
                fix.add_files[j] = k->owed[l1][j].add_files;
                fix.add_kib[j] = k->owed[l1][j].add_kib;
                fix.recount[j] = taken[j];
                blocked |= exact && k->owed[l1][j].recount && !taken[j];
        }
        if (recounts)
                exact_figures(a, l1, &fix);
        l1fd = beneath_open_dir(root_fd, rel);
        r = l1fd >= 0 ? ccache_stats_fix(l1fd, &fix, &k->stats_seen[l1], now, &broke) : l1fd;
        ret->broken += broke;
        if (r == -EBUSY)
                blocked = true;
        else {
                /* Paid, or never payable (no such directory, a planted file):
                 * what was owed is settled either way. */
                for (unsigned j = 0; j < 16; j++) {
                        Owed *o = &k->owed[l1][j];
                        o->files = o->kib = o->add_files = o->add_kib = 0;
                        o->recount &= !fix.recount[j];
                        if (!o->recount)
                                o->content_seen = (CcacheLockSeen) { 0 };
                }
                k->stats_seen[l1] = (CcacheLockSeen) { 0 };
                for (unsigned j = 0; r > 0 && j < 16; j++)
                        ret->recounted += fix.recount[j];
                if (r > 0)
                        ret->written++;
                else if (r < 0 && r != -ENOENT)
                        note_failure(ret, l1, r);
        }
        for (unsigned j = 0; j < 16; j++)
                ccache_lock_release(&locks[j]);
        if (lockdir >= 0)
                close(lockdir);
        if (l1fd >= 0)
                close(l1fd);
        return blocked;
}

int counters_flush(Counters *k, const Account *a, int root_fd, int only_l1, bool exact, uint64_t now,
                   CountersFlush *ret) {
        int more = 0;

        for (unsigned i = 0; i < 16; i++) {
                if ((only_l1 >= 0 && (unsigned) only_l1 != i) || !l1_owed(k, i))
                        continue;
                more |= flush_l1(k, a, root_fd, i, exact, now, ret);
        }
        return more;
}
