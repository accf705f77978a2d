/* SPDX-License-Identifier: MIT */
/* Eviction policy and the deletion primitive: exactly the oldest eligible
 * files are chosen; only regular files that are still what was planned are
 * deleted; ccache's counters and ccache.conf are rewritten as ccache would. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ccache/ccache.h"
#include "evict/evict.h"
#include "evict/trim.h"
#include "fixture.h"

#define NOW 2000000000

static const char b32[] = FIXTURE_B32;

static void test_plan_takes_exactly_the_oldest(void **state) {
        enum { N = 5000 };
        Account *a = *state;
        DirId l1, l2[16], tmp;
        EvictPlan p;
        char name[64];
        uint32_t *mtimes = calloc(N, sizeof(uint32_t));

        account_dir_add(a, DIR_ROOT, "b", &l1);
        for (int i = 0; i < 16; i++) {
                char n[2] = { b32[i], 0 };
                account_dir_add(a, l1, n, &l2[i]);
        }
        account_dir_add(a, DIR_ROOT, "tmp", &tmp);
        /* mtimes with many ties, spread over 30 days; every file 8 blocks */
        for (unsigned i = 0; i < N; i++) {
                mtimes[i] = NOW - 30 * 86400 + (uint32_t) ((i * 7919u) % 2000u) * 1296u;
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, l2[i % 16], name, 8, mtimes[i]), 1);
        }
        /* never eligible, however old */
        account_file_set(a, l1, "stats", 8, 1);
        account_file_set(a, l1, "CACHEDIR.TAG", 8, 1);
        account_file_set(a, DIR_ROOT, "ccache.conf", 8, 1);
        account_file_set(a, tmp, "inode-cache-64.v2", 8, 1);
        account_file_set(a, tmp, ".cleaned", 8, 1);
        account_file_set(a, l2[0], "stats.alive", 8, 1);
        account_file_set(a, l2[0], ".nfs000123", 8, 1);
        /* temporaries: young ones stay, stale ones are eligible */
        account_file_set(a, l2[1], "x.tmp.young.tmp", 8, NOW - 3599);
        account_file_set(a, l2[1], "x.tmp.stale.tmp", 8, NOW - 3600);
        account_file_set(a, tmp, "cpp_stdout.tmp.aaa.i", 8, NOW - 2 * 86400 + 1);   /* in tmp/: 2 days */
        account_file_set(a, tmp, "old-leftover", 8, NOW - 2 * 86400);

        for (uint64_t need = 1; need <= 8 * 512 * (uint64_t) N + 8192; need += 4096 * 37 + 1) {
                uint32_t newest_victim = 0, oldest_kept = UINT32_MAX;
                FileInfo fi;

                assert_int_equal(evict_plan(a, need, NOW, &p), 0);
                assert_int_equal(p.evictable_files, N + 2);
                assert_true(p.bytes >= need || p.n == p.evictable_files);
                /* minimal: without its newest victim the plan would not do */
                if (p.n < p.evictable_files)
                        assert_true(p.bytes - 8 * 512 < need);
                for (size_t i = 0; i < p.n; i++) {
                        char vname[256];
                        assert_int_equal(account_file_info(a, p.victims[i].file, &fi), 0);
                        assert_int_equal(account_file_name(a, p.victims[i].file, vname, sizeof(vname)), 0);
                        assert_true(ccache_kind_is_entry(fi.kind) || strstr(vname, "stale") ||
                                    strcmp(vname, "old-leftover") == 0);
                        if (i > 0 && p.victims[i].dir == p.victims[i - 1].dir)
                                assert_true(p.victims[i].mtime >= p.victims[i - 1].mtime);
                        newest_victim = fi.mtime > newest_victim ? (uint32_t) fi.mtime : newest_victim;
                }
                /* every eligible file kept is at least as new as every victim */
                for (FileId id = 0; id < account_file_limit(a); id++) {
                        bool victim = false;
                        if (account_file_info(a, id, &fi) < 0 || !ccache_kind_is_entry(fi.kind))
                                continue;
                        for (size_t i = 0; i < p.n && !victim; i++)
                                victim = p.victims[i].file == id;
                        if (!victim)
                                oldest_kept = fi.mtime < oldest_kept ? (uint32_t) fi.mtime : oldest_kept;
                }
                assert_true(p.n == p.evictable_files || oldest_kept >= newest_victim);
                assert_int_equal(p.cutoff, newest_victim);
                if (p.n < N)
                        assert_int_equal(p.oldest_kept, oldest_kept);
                evict_plan_done(&p);
        }
        /* nothing needed: nothing planned */
        assert_int_equal(evict_plan(a, 0, NOW, &p), 0);
        assert_int_equal(p.n, 0);
        evict_plan_done(&p);
        free(mtimes);
}

/* Two new empty accounts for a test: *state is the array of them. */
static int setup_two_accounts(void **state) {
        Account **a = calloc(2, sizeof(*a));

        assert_non_null(a);
        assert_int_equal(account_new(&a[0]), 0);
        assert_int_equal(account_new(&a[1]), 0);
        *state = a;
        return 0;
}

static int teardown_two_accounts(void **state) {
        Account **a = *state;

        account_free(a[0]);
        account_free(a[1]);
        free(a);
        return 0;
}

static void test_plan_across_accounts(void **state) {
        Account **a = *state;
        DirId d[2];
        EvictPlan p[2];
        char name[64];

        /* entry i is in account i % 2 with mtime 1000 + i: the oldest six
         * (6 x 8 blocks) are three in each, whatever the account */
        for (int k = 0; k < 2; k++) {
                DirId l1;
                account_dir_add(a[k], DIR_ROOT, "b", &l1);
                account_dir_add(a[k], l1, "4", &d[k]);
        }
        for (unsigned i = 0; i < 40; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a[i % 2], d[i % 2], name, 8, 1000 + i), 1);
        }
        assert_int_equal(evict_plan_multi(a, 2, 6 * 8 * 512, NOW, p), 0);
        assert_int_equal(p[0].n, 3);
        assert_int_equal(p[1].n, 3);
        assert_int_equal(p[0].cutoff, 1004);
        assert_int_equal(p[1].cutoff, 1005);
        assert_int_equal(p[0].oldest_kept, 1006);
        assert_int_equal(p[1].oldest_kept, 1007);
        for (int k = 0; k < 2; k++)
                evict_plan_done(&p[k]);
}

/* n entries in a, spread over the 16 level-2 directories of b/, with many
 * equal mtimes, 8 blocks each. */
static void spread_entries(Account *a, unsigned n, DirId l2[16]) {
        DirId l1;
        char name[64];

        account_dir_add(a, DIR_ROOT, "b", &l1);
        for (int i = 0; i < 16; i++) {
                char nm[2] = { b32[i], 0 };
                account_dir_add(a, l1, nm, &l2[i]);
        }
        for (unsigned i = 0; i < n; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, l2[(i * 7) % 16], name, 8,
                                                  NOW - 30 * 86400 + (int64_t) ((i * 7919u) % 2000u) * 1296), 1);
        }
}

/* Runs a planner to the end in steps of budget; returns the steps taken. */
static unsigned plan_in_steps(Account *a, uint64_t need, bool count_only, size_t budget, EvictPlan *ret) {
        EvictPlanner *p;
        unsigned steps = 0;
        int r;

        assert_int_equal(evict_planner_new(&a, 1, need, NOW, count_only, &p), 0);
        do {
                r = evict_planner_step(p, budget);
                assert_true(r >= 0);
                steps++;
        } while (r == 1);
        evict_planner_take(p, 0, ret);
        evict_planner_free(p);
        return steps;
}

static void test_planner_in_slices_plans_the_same(void **state) {
        DirId l2[16];
        Account *a = *state;
        static const size_t budgets[] = { 1, 13, 1000 };

        spread_entries(a, 3000, l2);
        for (uint64_t need = 0; need <= 8 * 512 * 3000ULL + 4096; need += 4096 * 97 + 1) {
                EvictPlan whole, sliced, counted;

                assert_int_equal(evict_plan(a, need, NOW, &whole), 0);
                for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
                        plan_in_steps(a, need, false, budgets[b], &sliced);
                        assert_int_equal(sliced.n, whole.n);
                        assert_int_equal(sliced.bytes, whole.bytes);
                        assert_int_equal(sliced.cutoff, whole.cutoff);
                        assert_int_equal(sliced.oldest_kept, whole.oldest_kept);
                        assert_int_equal(sliced.evictable_files, whole.evictable_files);
                        if (whole.n)
                                assert_memory_equal(sliced.victims, whole.victims, whole.n * sizeof(Victim));
                        evict_plan_done(&sliced);
                }
                /* a dry run counts the same, and holds no victims */
                plan_in_steps(a, need, true, 1000, &counted);
                assert_null(counted.victims);
                assert_int_equal(counted.n, whole.n);
                assert_int_equal(counted.bytes, whole.bytes);
                assert_int_equal(counted.cutoff, whole.cutoff);
                assert_int_equal(counted.oldest_kept, whole.oldest_kept);
                evict_plan_done(&whole);
        }
}

/* Each step looks at about its budget of files: four passes over 20000
 * files in steps of 1000 take some 80 steps, none of them all at once. */
static void test_planner_steps_are_bounded(void **state) {
        DirId l2[16];
        Account *a = *state;
        EvictPlan p;
        unsigned steps;

        spread_entries(a, 20000, l2);
        steps = plan_in_steps(a, 8 * 512 * 10000ULL, false, 1000, &p);
        assert_int_equal(p.n, 10000);
        assert_true(steps >= 80 && steps <= 100);
        evict_plan_done(&p);
        steps = plan_in_steps(a, 8 * 512 * 10000ULL, true, 1000, &p);
        assert_int_equal(p.n, 10000);
        assert_true(steps >= 80 && steps <= 100);
        evict_plan_done(&p);
}

/* The account changes between steps (scans and events run between them):
 * the plan stays sane, and never takes everything because the file the
 * cutoff fell on went away between the two histogram passes. */
static void test_planner_with_changes_between_steps(void **state) {
        Account **two = *state, *a = two[0];
        DirId l1, d;
        EvictPlanner *p;
        EvictPlan plan;
        char name[64];

        /* 100 files 10000 s apart: the first histogram pass has wide buckets */
        account_dir_add(a, DIR_ROOT, "b", &l1);
        account_dir_add(a, l1, "4", &d);
        for (unsigned i = 0; i < 100; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, d, name, 8, 1000000 + (int64_t) i * 10000), 1);
        }
        assert_int_equal(evict_planner_new(&a, 1, 10 * 4096, NOW, false, &p), 0);
        assert_int_equal(evict_planner_step(p, 100), 1);     /* the span */
        assert_int_equal(evict_planner_step(p, 100), 1);     /* the first histogram pass */
        entry_name(9, 'R', name);                                 /* the 10th oldest: where need is reached */
        assert_int_equal(account_file_remove(a, d, name), 1);
        assert_int_equal(evict_planner_step(p, SIZE_MAX), 0);
        evict_planner_take(p, 0, &plan);
        evict_planner_free(p);
        assert_int_equal(plan.n, 9);                         /* the 9 older ones, not all 99 */
        evict_plan_done(&plan);

        /* churn between every step (in a new account): files go, come, get
         * hits; under ASan */
        DirId l2[16];
        a = two[1];
        spread_entries(a, 5000, l2);
        assert_int_equal(evict_planner_new(&a, 1, 8 * 512 * 2000ULL, NOW, false, &p), 0);
        for (unsigned step = 0, k = 0;; step++) {
                int r = evict_planner_step(p, 700);
                assert_true(r >= 0);
                if (r == 0)
                        break;
                for (unsigned j = 0; j < 50; j++, k++) {
                        entry_name(k * 13 % 5000, 'R', name);
                        (void) account_file_remove(a, l2[(k * 13 % 5000 * 7) % 16], name);
                        entry_name(10000 + k, 'R', name);
                        assert_int_equal(account_file_set(a, l2[k % 16], name, 8, NOW - 40 * 86400 + k), 1);
                }
        }
        evict_planner_take(p, 0, &plan);
        evict_planner_free(p);
        assert_true(plan.n > 0);
        for (size_t i = 1; i < plan.n; i++) {
                const Victim *v = &plan.victims[i - 1], *w = &plan.victims[i];
                bool later_run = false;
                /* grouped by directory: a directory's run never resumes later */
                for (size_t j = i + 1; j < plan.n && v->dir != w->dir && !later_run; j++)
                        later_run = plan.victims[j].dir == v->dir;
                assert_false(later_run);
                if (v->dir == w->dir)
                        assert_true(v->mtime <= w->mtime);
        }
        evict_plan_done(&plan);
}

static void touch_at(int fd, const char *name, time_t mtime) {
        struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };
        int f = openat(fd, name, O_WRONLY | O_CREAT, 0644);

        assert_true(f >= 0);
        assert_int_equal(write(f, "data", 4), 4);
        assert_int_equal(futimens(f, ts), 0);
        close(f);
}

static uint64_t blocks_of(int fd, const char *name) {
        struct stat st;

        assert_int_equal(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
        return (uint64_t) st.st_blocks;
}

static void test_unlink_rechecks(void **state) {
        struct stat st;
        uint64_t b;
        TestDir *t = *state;
        int fd = t->fd;
        dev_t dev;

        assert_int_equal(fstat(fd, &st), 0);
        dev = st.st_dev;
        touch_at(fd, "old", 1000);
        touch_at(fd, "hit", 5000);                           /* refreshed since the plan */
        touch_at(fd, "target", 1000);
        touch_at(fd, "rewritten", 1000);
        assert_int_equal(symlinkat("target", fd, "link"), 0);
        assert_int_equal(mkfifoat(fd, "fifo", 0644), 0);
        assert_int_equal(mkdirat(fd, "dir", 0755), 0);
        b = blocks_of(fd, "old");

        assert_int_equal(evict_unlink(fd, "old", dev, 1000, b), 1);
        assert_int_equal(fstatat(fd, "old", &st, 0), -1);
        assert_int_equal(evict_unlink(fd, "old", dev, 1000, b), 0);      /* gone: skipped */
        assert_int_equal(evict_unlink(fd, "hit", dev, 1000, b), 0);      /* newer: saved */
        assert_int_equal(fstatat(fd, "hit", &st, 0), 0);
        /* the same mtime, another size: not the file that was planned */
        assert_int_equal(evict_unlink(fd, "rewritten", dev, 1000, blocks_of(fd, "rewritten") + 8), 0);
        assert_int_equal(fstatat(fd, "rewritten", &st, 0), 0);
        assert_int_equal(evict_unlink(fd, "link", dev, INT64_MAX, blocks_of(fd, "link")), 0);  /* symlink: never */
        assert_int_equal(fstatat(fd, "link", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(fstatat(fd, "target", &st, 0), 0);
        assert_int_equal(evict_unlink(fd, "fifo", dev, INT64_MAX, blocks_of(fd, "fifo")), 0);
        assert_int_equal(evict_unlink(fd, "dir", dev, INT64_MAX, blocks_of(fd, "dir")), 0);
        assert_int_equal(evict_unlink(fd, "target", dev + 1, INT64_MAX, blocks_of(fd, "target")), 0);  /* another device */
        assert_int_equal(fstatat(fd, "target", &st, 0), 0);
}

static void test_lock_dir_never_eligible(void **state) {
        Account *a = *state;
        DirId lock, l1;
        FileInfo fi;

        account_dir_add(a, DIR_ROOT, "lock", &lock);
        account_dir_add(a, DIR_ROOT, "b", &l1);
        account_file_set(a, lock, "subdir_b4.tmp.AbC123.tmp", 8, 1);     /* old, named like a temporary */
        account_file_set(a, l1, "stats.tmp.AbC123.tmp", 8, 1);
        assert_int_equal(account_file_info(a, account_file_find(a, lock, "subdir_b4.tmp.AbC123.tmp"), &fi), 0);
        assert_false(evict_eligible(a, &fi, "subdir_b4.tmp.AbC123.tmp", NOW));
        assert_int_equal(account_file_info(a, account_file_find(a, l1, "stats.tmp.AbC123.tmp"), &fi), 0);
        assert_true(evict_eligible(a, &fi, "stats.tmp.AbC123.tmp", NOW));
}

/* ccache's temporaries in use: young *.tmp.* files and young files in tmp/
 * (each parallel ccache's inode cache temporary among them), never the
 * inode cache itself nor its sweep stamp, nor what lock/ holds; counted by a
 * plan (inflight_bytes), never planned. An inode cache temporary a killed
 * ccache left goes after two days, as any file in tmp/. */
static void test_in_flight(void **state) {
        static const struct {
                const char *dir, *name;
                int64_t age;
                bool in_flight, eligible;
        } f[] = {
                { "tmp", "inode-cache-64.v2.tmp.AbC123.tmp", 0, true, false },
                { "tmp", "cpp_stdout.tmp.AbC123.i", EVICT_TMP_MIN_AGE_SEC - 1, true, false },
                { "tmp", "cpp_stdout.tmp.AbC124.i", EVICT_TMP_MIN_AGE_SEC, false, false },   /* a leftover */
                { "tmp", "inode-cache-64.v2.tmp.XyZ123.tmp", EVICT_TMPDIR_MIN_AGE_SEC, false, true },
                { "tmp", "inode-cache-64.v2", 0, false, false },
                { "tmp", "inode-cache-64.v2", EVICT_TMPDIR_MIN_AGE_SEC, false, false },
                { "tmp", ".cleaned", 0, false, false },
                { "b/4", "2kitabcR.tmp.AbC123.tmp", 0, true, false },
                { "b/4", "2kitabcR.tmp.AbC124.tmp", EVICT_TMP_MIN_AGE_SEC, false, true },
                { "b", "stats.tmp.AbC123.tmp", 0, true, false },
                { "b", "stats", 0, false, false },
                { "lock", "subdir_b4.tmp.AbC123.tmp", 0, false, false },
                { "b/4", ".nfs000123", 0, false, false },
        };
        Account *a = *state;
        uint64_t want = 0;
        EvictPlan p;

        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
                DirId d = DIR_ROOT, tmp;
                char path[16], *part, *save;
                FileInfo fi;

                snprintf(path, sizeof(path), "%s", f[i].dir);
                for (part = strtok_r(path, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
                        assert_true(account_dir_add(a, d, part, &tmp) >= 0);
                        d = tmp;
                }
                assert_true(account_file_set(a, d, f[i].name, 8 * (i + 1), NOW - f[i].age) >= 0);
                assert_int_equal(account_file_info(a, account_file_find(a, d, f[i].name), &fi), 0);
                if (evict_in_flight(a, &fi, f[i].name, NOW) != f[i].in_flight ||
                    evict_eligible(a, &fi, f[i].name, NOW) != f[i].eligible)
                        fail_msg("%s/%s: in flight %d, eligible %d", f[i].dir, f[i].name, !f[i].in_flight,
                                 evict_eligible(a, &fi, f[i].name, NOW));
                want += f[i].in_flight ? 8 * (i + 1) * 512 : 0;
        }
        assert_int_equal(evict_plan(a, UINT64_MAX, NOW, &p), 0);
        assert_int_equal(p.inflight_bytes, want);
        assert_int_equal(p.n, 2);
        evict_plan_done(&p);
}

/* A file planted in a remote-layout account, and whether it may go. */
typedef struct Planted {
        const char *dir;         /* "" for the root */
        const char *name;
        int64_t age;
        bool eligible;
} Planted;

/* Plants every file, aged and named as given, then checks evict_eligible on
 * each, and that a plan for everything takes exactly the eligible ones, by
 * their exact names. */
static void check_remote_eligibility(Account *a, AccountLayout layout, const Planted *p, size_t n) {
        size_t want = 0, seen = 0;
        EvictPlan plan;

        assert_int_equal(account_set_layout(a, layout), 0);
        for (size_t i = 0; i < n; i++) {
                DirId d = DIR_ROOT;
                FileInfo fi;

                if (p[i].dir[0])
                        assert_true(account_dir_add(a, DIR_ROOT, p[i].dir, &d) >= 0);
                assert_int_equal(account_file_set(a, d, p[i].name, 8, NOW - p[i].age), 1);
                assert_int_equal(account_file_info(a, account_file_find(a, d, p[i].name), &fi), 0);
                if (evict_eligible(a, &fi, p[i].name, NOW) != p[i].eligible)
                        fail_msg("%s/%s: eligible %d, want %d", p[i].dir, p[i].name, !p[i].eligible, p[i].eligible);
                want += p[i].eligible;
        }
        assert_int_equal(evict_plan(a, UINT64_MAX, NOW, &plan), 0);
        assert_int_equal(plan.evictable_files, want);
        assert_int_equal(plan.n, want);
        for (size_t v = 0; v < plan.n; v++) {
                char name[256], path[64];

                assert_int_equal(account_file_name(a, plan.victims[v].file, name, sizeof(name)), 0);
                assert_int_equal(account_dir_path(a, plan.victims[v].dir, path, sizeof(path)), 0);
                for (size_t i = 0; i < n; i++)
                        if (strcmp(p[i].dir, path) == 0 && strcmp(p[i].name, name) == 0) {
                                assert_true(p[i].eligible);
                                seen++;
                        }
        }
        assert_int_equal(seen, want);
        evict_plan_done(&plan);
}

static void test_remote_subdirs_eligible(void **state) {
        static const Planted p[] = {
                { "a1", "6bg4jbcs59arpufnrhpoe6vhj3ojn4a", 1, true },            /* legacy entry */
                { "b4", "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b", 1, true },     /* 4.13 entry */
                { "a1", "6bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.AbC123", EVICT_TMP_MIN_AGE_SEC, true },
                { "a1", "6bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.young", EVICT_TMP_MIN_AGE_SEC - 1, false },
                { "a1", "6bg4jbcs59arpufnrhpoe6vhj3ojn4aR", 86400, false },      /* a local name */
                { "a1", "stats", 86400, false },
                { "a1", "CACHEDIR.TAG", 86400, false },
                { "a1", ".nfs0000000001234", 86400, false },
                { "", "CACHEDIR.TAG", 86400, false },
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a", 86400, false },       /* flat name, subdirs root */
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4R", 86400, false },       /* 33 chars, R suffix */
                { "", "x.tmp.stale", 86400, false },                            /* not next to entries */
                { "zz", "6bg4jbcs59arpufnrhpoe6vhj3ojn4a", 86400, false },       /* not a hex directory */
                { "zz", "x.tmp.stale", 86400, false },
                { "tmp", "x.tmp.stale", 3 * 86400, false },                     /* tmp/: nothing special */
                { "tmp", "leftover", 3 * 86400, false },
                { "lock", "auto_cleanup.alive", 3 * 86400, false },
        };

        check_remote_eligibility(*state, ACCOUNT_LAYOUT_REMOTE_SUBDIRS, p, sizeof(p) / sizeof(p[0]));
}

static void test_remote_flat_eligible(void **state) {
        static const Planted p[] = {
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a", 1, true },
                { "", "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b", 1, true },
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.AbC123", EVICT_TMP_MIN_AGE_SEC, true },
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.young", EVICT_TMP_MIN_AGE_SEC - 1, false },
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4R", 86400, false },       /* 33 chars, R suffix */
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4aR", 86400, false },
                { "", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4b", 86400, false },       /* padding bit set */
                { "", "CACHEDIR.TAG", 86400, false },
                { "", "stats", 86400, false },
                { "", "ccache.conf", 86400, false },
                { "a1", "6bg4jbcs59arpufnrhpoe6vhj3ojn4a", 86400, false },       /* subdirs name, flat share */
                { "a1", "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a", 86400, false },
                { "a1", "x.tmp.stale", 86400, false },
        };

        check_remote_eligibility(*state, ACCOUNT_LAYOUT_REMOTE_FLAT, p, sizeof(p) / sizeof(p[0]));
}

/* A purge's plan: every entry of the marked tags and nothing else (other
 * writers' entries, temporaries, ccache's own files stay), in the order of
 * every plan: by directory, then mtime. */
static void test_plan_tagged_takes_the_writers_entries(void **state) {
        Account *a = *state;
        bool match[256] = { false };
        DirId l1, l2[2];
        EvictPlan p;
        char name[64];
        FileId f;
        unsigned mine = 0;

        account_dir_add(a, DIR_ROOT, "c", &l1);
        account_dir_add(a, l1, "0", &l2[0]);
        account_dir_add(a, l1, "1", &l2[1]);
        for (unsigned i = 0; i < 60; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, l2[i % 2], name, 8, NOW - (int64_t) (i * 37 % 60)), 1);
                f = account_file_find(a, l2[i % 2], name);
                account_file_set_tag(a, f, (uint8_t) (3 + i % 3));   /* writers 3, 4, 5 */
                mine += i % 3 == 1;
        }
        account_file_set(a, l2[0], "x.tmp.stale.tmp", 8, 1);
        account_file_set_tag(a, account_file_find(a, l2[0], "x.tmp.stale.tmp"), 4);
        account_file_set(a, l1, "stats", 8, 1);
        account_file_set_tag(a, account_file_find(a, l1, "stats"), 4);
        match[4] = true;
        assert_int_equal(evict_plan_tagged(a, match, &p), 0);
        assert_int_equal(p.n, mine);
        assert_int_equal(p.bytes, (uint64_t) mine * 8 * 512);
        assert_int_equal(p.evictable_files, mine);
        for (size_t i = 0; i < p.n; i++) {
                FileInfo fi;

                assert_int_equal(account_file_tag(a, p.victims[i].file), 4);
                assert_int_equal(account_file_info(a, p.victims[i].file, &fi), 0);
                assert_true(ccache_kind_is_entry(fi.kind));
                assert_true(p.cutoff >= fi.mtime);
                if (i > 0)
                        assert_true(p.victims[i - 1].dir < p.victims[i].dir ||
                                    (p.victims[i - 1].dir == p.victims[i].dir &&
                                     p.victims[i - 1].mtime <= p.victims[i].mtime));
        }
        evict_plan_done(&p);
        /* nobody's tag: an empty plan, no victims to free */
        memset(match, 0, sizeof(match));
        assert_int_equal(evict_plan_tagged(a, match, &p), 0);
        assert_int_equal(p.n, 0);
        assert_null(p.victims);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_plan_takes_exactly_the_oldest, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_plan_across_accounts, setup_two_accounts, teardown_two_accounts),
                cmocka_unit_test_setup_teardown(test_plan_tagged_takes_the_writers_entries, setup_account,
                                                teardown_account),
                cmocka_unit_test_setup_teardown(test_planner_in_slices_plans_the_same, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_planner_steps_are_bounded, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_planner_with_changes_between_steps, setup_two_accounts, teardown_two_accounts),
                cmocka_unit_test_setup_teardown(test_unlink_rechecks, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_lock_dir_never_eligible, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_in_flight, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_remote_subdirs_eligible, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_remote_flat_eligible, setup_account, teardown_account),
        };
        return cmocka_run_group_tests_name("evict", tests, NULL, NULL);
}
