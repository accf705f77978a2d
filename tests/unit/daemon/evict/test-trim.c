/* SPDX-License-Identifier: MIT */
/* The trim job on a real directory tree: it never waits for a lock ccache
 * (or anyone) holds, what it owes ccache's counters is paid once the lock is
 * free, and a trim that falls short says why. */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ccache/ccache-stats.h"
#include "ccache/ccache.h"
#include "evict/counters.h"
#include "evict/evict.h"
#include "evict/trim.h"
#include "fixture.h"

#define NOW 2000000000
#define FILES 300

static void test_why(void **state) {
        char buf[256];

        assert_non_null(strstr(trim_result_why(&(TrimResult) { .errors = 3, .first_error = -EROFS, .locked_dirs = 2 },
                                               buf, sizeof(buf)), "I/O error: 3 files could not be deleted (Read-only"));
        assert_non_null(strstr(trim_result_why(&(TrimResult) { .locked_dirs = 2, .need_bytes = 10 }, buf, sizeof(buf)),
                               "locked: ccache kept 2 directories locked throughout"));
        assert_non_null(strstr(trim_result_why(&(TrimResult) { .need_bytes = 5000000, .planned_bytes = 1000000 },
                                               buf, sizeof(buf)), "nothing more evictable: 5.0M had to go, but only 1.0M"));
        assert_null(strstr(buf, "temporaries less than an hour old"));   /* none were */
        assert_non_null(strstr(trim_result_why(&(TrimResult) { .need_bytes = 5000000, .inflight_bytes = 6000000 },
                                               buf, sizeof(buf)),
                               "but only 0B of it were ccache entries or stale temporaries; 6.0M of the rest are "
                               "temporaries less than an hour old (ccache's while a compile runs)"));
        assert_non_null(strstr(trim_result_why(&(TrimResult) { .need_bytes = 5, .planned_bytes = 5, .saved = 7 },
                                               buf, sizeof(buf)), "7 of the files chosen were used again"));
        assert_non_null(strstr(trim_result_why(&(TrimResult) { 0 }, buf, sizeof(buf)), "grew"));
}

static void put_file(int fd, const char *name, time_t mtime) {
        struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };
        int f = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        assert_true(f >= 0);
        assert_int_equal(write(f, "x", 1), 1);
        assert_int_equal(futimens(f, ts), 0);
        close(f);
}

/* One test's cache: a fresh directory holding a/b with FILES entries, in
 * the account too; a/stats (ccache 4.12) counting them exactly; an empty
 * lock/. The trim a test makes is freed with the rest. */
typedef struct Fixture {
        char dir[64];
        Account *acct;
        Counters *k;
        Trim *t;
        int root;                 /* the directory's fd */
        struct stat st;           /* the root's */
        uint64_t kib;             /* what the entries take */
} Fixture;

static void make_cache(Fixture *fx) {
        int l1, l2;
        DirId da, db;
        uint64_t c[85] = { 0 }, kib = 0;
        FILE *f;

        fx->root = open(fx->dir, O_RDONLY | O_DIRECTORY);
        assert_true(fx->root >= 0);
        assert_int_equal(mkdirat(fx->root, "a", 0755), 0);
        assert_int_equal(mkdirat(fx->root, "a/b", 0755), 0);
        assert_int_equal(mkdirat(fx->root, "lock", 0755), 0);
        l1 = openat(fx->root, "a", O_RDONLY | O_DIRECTORY);
        l2 = openat(fx->root, "a/b", O_RDONLY | O_DIRECTORY);
        assert_int_equal(account_dir_add(fx->acct, DIR_ROOT, "a", &da), 1);
        assert_int_equal(account_dir_add(fx->acct, da, "b", &db), 1);
        for (unsigned i = 0; i < FILES; i++) {
                char name[40];
                struct stat st;

                snprintf(name, sizeof(name), "%02x%029uR", i % 256, i);
                put_file(l2, name, NOW - 86400 + i);
                assert_int_equal(fstatat(l2, name, &st, 0), 0);
                assert_int_equal(account_file_set(fx->acct, db, name, (uint64_t) st.st_blocks, NOW - 86400 + i), 1);
                kib += (uint64_t) st.st_blocks / 2;
        }
        c[11] = c[49 + 11] = FILES;
        c[12] = c[65 + 11] = kib;
        f = fdopen(openat(l1, "stats", O_WRONLY | O_CREAT | O_TRUNC, 0644), "w");
        for (unsigned i = 0; i < 85; i++)
                fprintf(f, "%llu\n", (unsigned long long) c[i]);
        fclose(f);
        close(l1);
        close(l2);
        fx->kib = kib;
        assert_int_equal(fstat(fx->root, &fx->st), 0);
}

/* The clock of the tests' slices: it stands still, so that a slice ends by
 * its count of items only, whatever the box's load (a test of the clock
 * puts its own). */
static usec_t still_clock(void) {
        return 0;
}

static int setup(void **state) {
        Fixture *fx = calloc(1, sizeof(*fx));

        slice_clock = still_clock;
        assert_non_null(fx);
        fx->root = -1;
        strcpy(fx->dir, "/tmp/ck-test-trim-XXXXXX");
        assert_non_null(mkdtemp(fx->dir));
        assert_int_equal(account_new(&fx->acct), 0);
        assert_int_equal(counters_new(&fx->k), 0);
        make_cache(fx);
        *state = fx;
        return 0;
}

static int teardown(void **state) {
        Fixture *fx = *state;

        fx->t = trim_free(fx->t);
        fx->k = counters_free(fx->k);
        fx->acct = account_free(fx->acct);
        if (fx->root >= 0)
                close(fx->root);
        assert_int_equal(rm_rf(fx->dir), 0);
        free(fx);
        return 0;
}

static CcacheStats l1_stats(int root) {
        CcacheStats s;
        int l1 = openat(root, "a", O_RDONLY | O_DIRECTORY);

        assert_int_equal(ccache_stats_read(l1, "stats", &s), 0);
        close(l1);
        return s;
}

/* A live stats.lock (its .alive kept fresh by "ccache"): the trim deletes,
 * does not wait, and leaves the counters owed; paid once the lock goes. */
static void test_held_stats_lock_is_not_waited_for(void **state) {
        Fixture *fx = *state;
        Account *acct = fx->acct;
        Counters *k = fx->k;
        CountersFlush f = { 0 };
        usec_t took;
        struct stat st = fx->st;
        int root = fx->root, r, steps = 0;

        assert_int_equal(symlinkat("buildhost-77-140255169312576-1.1", root, "a/stats.lock"), 0);
        close(openat(root, "a/stats.alive", O_WRONLY | O_CREAT, 0644));    /* touched now: live */

        assert_int_equal(trim_new(acct, 0, false, NOW, &fx->t), 0);
        took = now_usec(CLOCK_MONOTONIC);
        while ((r = trim_step(fx->t, &(TrimEnv) { .account = acct, .counters = k, .root_fd = root, .dev = st.st_dev,
                                              .now = now_usec(CLOCK_MONOTONIC),
                                              .realtime = now_usec(CLOCK_REALTIME) })) != 0) {
                assert_true(r == 1);
                assert_true(++steps < 1000);
        }
        took = now_usec(CLOCK_MONOTONIC) - took;
        assert_int_equal(trim_result(fx->t)->files, FILES);
        assert_int_equal(trim_result(fx->t)->stats_deferred, 1);
        assert_int_equal(trim_result(fx->t)->stats_updates, 0);
        assert_true(took < 2 * USEC_PER_SEC);      /* it slept 200 ms per group for the lock */
        assert_int_equal(l1_stats(root).counters[11], FILES);       /* untouched under the lock */
        assert_true(counters_pending(k));
        /* still held: still owed, at once */
        assert_int_equal(counters_flush(k, acct, root, -1, true, now_usec(CLOCK_REALTIME), &f), 1);
        assert_int_equal(f.written, 0);
        /* released: paid */
        assert_int_equal(unlinkat(root, "a/stats.lock", 0), 0);
        assert_int_equal(counters_flush(k, acct, root, -1, true, now_usec(CLOCK_REALTIME), &f), 0);
        assert_int_equal(f.written, 1);
        assert_false(counters_pending(k));
        assert_int_equal(l1_stats(root).counters[11], 0);
        assert_int_equal(l1_stats(root).counters[12], 0);
        assert_int_equal(l1_stats(root).counters[49 + 11], 0);
}

/* Someone else's content lock on a/b: "otherhost-...", .alive touched now
 * (mtime alive_sec, 0: now). */
static void hold_content_lock(int root, time_t alive_sec) {
        int fd;

        assert_int_equal(symlinkat("otherhost-4242-4242-1700000000.1", root, "lock/subdir_ab.lock"), 0);
        fd = openat(root, "lock/subdir_ab.alive", O_WRONLY | O_CREAT, 0644);
        assert_true(fd >= 0);
        close(fd);
        if (alive_sec) {
                struct timespec ts[2] = { { alive_sec, 0 }, { alive_sec, 0 } };
                assert_int_equal(utimensat(root, "lock/subdir_ab.alive", ts, 0), 0);
        }
}

/* Steps fx's trim over its cache at monotonic now (and realtime) until it
 * returns something else than 1; returns that. */
static int step_until_not_busy(Fixture *fx, usec_t now, usec_t realtime) {
        TrimEnv env = { .account = fx->acct, .counters = fx->k, .root_fd = fx->root, .dev = fx->st.st_dev,
                        .now = now, .realtime = realtime };
        int r, steps = 0;

        while ((r = trim_step(fx->t, &env)) == 1)
                assert_true(++steps < 1000);
        return r;
}

/* A directory whose content lock is held waits, at the trim's own pace (the
 * time is what the caller says: no sleeping here), and is trimmed once the
 * lock is gone. */
static void test_locked_directory_waits_its_turn(void **state) {
        usec_t now = 1000 * USEC_PER_SEC, realtime = now_usec(CLOCK_REALTIME);
        Fixture *fx = *state;
        Account *acct = fx->acct;
        int root = fx->root;

        hold_content_lock(root, 0);
        assert_int_equal(trim_new(acct, 0, false, NOW, &fx->t), 0);
        assert_int_equal(step_until_not_busy(fx, now, realtime), 2);
        assert_int_equal(trim_result(fx->t)->files, 0);
        /* before the retry interval: not even looked at again */
        assert_int_equal(unlinkat(root, "lock/subdir_ab.lock", 0), 0);
        assert_int_equal(step_until_not_busy(fx, now + TRIM_LOCK_RETRY_USEC - 1, realtime), 2);
        assert_int_equal(trim_result(fx->t)->files, 0);
        /* the next round: the lock is free, the directory goes */
        assert_int_equal(step_until_not_busy(fx, now + TRIM_LOCK_RETRY_USEC, realtime), 0);
        assert_int_equal(trim_result(fx->t)->files, FILES);
        assert_int_equal(trim_result(fx->t)->locked_dirs, 0);
        assert_int_equal(trim_result(fx->t)->stats_updates, 1);
}

/* A lock its holder keeps alive (a new .alive mtime at every look) for
 * TRIM_LOCK_WAIT_USEC: the directory is left alone, and the trim says so. */
static void test_live_lock_is_left_alone(void **state) {
        usec_t now = 1000 * USEC_PER_SEC, realtime = now_usec(CLOCK_REALTIME);
        Fixture *fx = *state;
        Account *acct = fx->acct;
        char why[256];
        int root = fx->root, r, rounds = 0;

        hold_content_lock(root, NOW);
        assert_int_equal(trim_new(acct, 0, false, NOW, &fx->t), 0);
        while ((r = step_until_not_busy(fx, now, realtime)) == 2) {
                struct timespec ts[2] = { { NOW + ++rounds, 0 }, { NOW + rounds, 0 } };

                assert_int_equal(utimensat(root, "lock/subdir_ab.alive", ts, 0), 0);   /* the holder is busy */
                now += TRIM_LOCK_RETRY_USEC;
                realtime += TRIM_LOCK_RETRY_USEC;
                assert_true(rounds < 1000);
        }
        assert_int_equal(r, 0);
        assert_int_equal(rounds, TRIM_LOCK_WAIT_USEC / TRIM_LOCK_RETRY_USEC);
        assert_int_equal(trim_result(fx->t)->files, 0);
        assert_int_equal(trim_result(fx->t)->locked_dirs, 1);
        assert_int_equal(trim_result(fx->t)->saved, FILES);
        assert_int_equal(trim_result(fx->t)->locks_broken, 0);
        assert_non_null(strstr(trim_result_why(trim_result(fx->t), why, sizeof(why)), "locked"));
        assert_int_equal(faccessat(root, "lock/subdir_ab.lock", F_OK, AT_SYMLINK_NOFOLLOW), 0);   /* still theirs */
}

/* A lock nobody touches for CCACHE_LOCK_STALE_USEC of the caller's realtime
 * is broken, as ccache breaks it, and the directory trimmed. */
static void test_stale_lock_is_broken(void **state) {
        usec_t now = 1000 * USEC_PER_SEC, realtime = now_usec(CLOCK_REALTIME);
        Fixture *fx = *state;
        Account *acct = fx->acct;
        int root = fx->root;

        hold_content_lock(root, 0);
        assert_int_equal(trim_new(acct, 0, false, NOW, &fx->t), 0);
        assert_int_equal(step_until_not_busy(fx, now, realtime), 2);
        /* still fresh a moment later */
        now += TRIM_LOCK_RETRY_USEC;
        assert_int_equal(step_until_not_busy(fx, now, realtime + CCACHE_LOCK_STALE_USEC / 2), 2);
        now += TRIM_LOCK_RETRY_USEC;
        assert_int_equal(step_until_not_busy(fx, now, realtime + CCACHE_LOCK_STALE_USEC + 1), 0);
        assert_int_equal(trim_result(fx->t)->files, FILES);
        assert_int_equal(trim_result(fx->t)->locks_broken, 1);
        assert_int_equal(trim_result(fx->t)->locked_dirs, 0);
}

/* A level-2 directory whose counters cannot be trusted is recounted from
 * the account, under its content lock and stats.lock. */
static void test_recount(void **state) {
        Fixture *fx = *state;
        Account *acct = fx->acct;
        Counters *k = fx->k;
        CountersFlush f = { 0 };
        CcacheStats s;
        uint64_t kib = fx->kib;
        int root = fx->root;

        /* a dead cachekeeperd's lock on a/b: found, broken, recount owed */
        char host[64] = "localhost", text[128];
        (void) gethostname(host, sizeof(host) - 1);
        snprintf(text, sizeof(text), "%s-%d-%d-1.1", host, (int) getpid(), (int) getpid());
        assert_int_equal(symlinkat(text, root, "lock/subdir_ab.lock"), 0);
        assert_int_equal(counters_recover(k, root), 1);
        assert_int_equal(faccessat(root, "lock/subdir_ab.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_true(counters_pending(k));
        /* the counters overstate by what the killed trim deleted */
        for (unsigned i = 0; i < 10; i++) {
                char name[40];
                snprintf(name, sizeof(name), "%02x%029uR", i % 256, i);
                assert_int_equal(account_file_remove(acct, account_dir_find(acct, account_dir_find(acct, DIR_ROOT, "a"), "b"),
                                                     name), 1);
        }
        /* not before the scan is done */
        assert_int_equal(counters_flush(k, acct, root, -1, false, now_usec(CLOCK_REALTIME), &f), 0);
        assert_int_equal(f.written, 0);
        assert_true(counters_pending(k));
        assert_int_equal(counters_flush(k, acct, root, -1, true, now_usec(CLOCK_REALTIME), &f), 0);
        assert_int_equal(f.written, 1);
        assert_int_equal(f.recounted, 1);
        assert_false(counters_pending(k));
        s = l1_stats(root);
        assert_int_equal(s.counters[11], FILES - 10);
        assert_int_equal(s.counters[49 + 11], FILES - 10);
        assert_int_equal(s.counters[12], kib - 10 * (kib / FILES));
}

/* The FileId of a planned victim is another file's before the trim reaches
 * it (the victim deleted, then a file made in its directory: ids are
 * reused). That file goes only if it may go by its own name: never a stats
 * file, however old, whatever its size. */
static void test_reused_id_is_not_the_victim(void **state) {
        Fixture *fx = *state;
        Account *acct = fx->acct;
        Counters *k = fx->k;
        EvictPlan plan;
        struct stat root_st = fx->st, st;
        int root = fx->root, l2, r, steps = 0;
        DirId db;
        char name[40];

        db = account_dir_find(acct, account_dir_find(acct, DIR_ROOT, "a"), "b");
        assert_int_equal(evict_plan(acct, 1, NOW, &plan), 0);
        assert_int_equal(plan.n, 1);                   /* entry 0, the oldest */
        assert_int_equal(trim_new_with_plan(&plan, 0, false, &fx->t), 0);
        l2 = openat(root, "a/b", O_RDONLY | O_DIRECTORY);
        snprintf(name, sizeof(name), "%02x%029uR", 0, 0);
        assert_int_equal(unlinkat(l2, name, 0), 0);
        assert_int_equal(account_file_remove(acct, db, name), 1);
        put_file(l2, "stats", NOW - 2 * 86400);
        assert_int_equal(fstatat(l2, "stats", &st, 0), 0);
        assert_int_equal(account_file_set(acct, db, "stats", (uint64_t) st.st_blocks, NOW - 2 * 86400), 1);
        TrimEnv env = { .account = acct, .counters = k, .root_fd = root, .dev = root_st.st_dev,
                        .now = now_usec(CLOCK_MONOTONIC), .realtime = now_usec(CLOCK_REALTIME) };
        while ((r = trim_step(fx->t, &env)) != 0) {
                assert_true(r == 1);
                assert_true(++steps < 1000);
        }
        assert_int_equal(faccessat(l2, "stats", F_OK, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(trim_result(fx->t)->files, 0);
        assert_int_equal(trim_result(fx->t)->saved, 1);
        close(l2);
}

/* Events lost (an inotify overflow): the disk moved on without the account.
 * The first FILES / 2 entries were hit (mtime now) and ten of the rest
 * deleted, unseen. A trim that chose them keeps them, and puts the account
 * right, so that the next trim, over the same account, chooses the files
 * that really are the oldest instead of the same stale ones again. */
static void test_stale_account_is_corrected(void **state) {
        Fixture *fx = *state;
        Account *acct = fx->acct;
        Counters *k = fx->k;
        struct stat root_st = fx->st;
        uint64_t before;
        int root = fx->root, l2;
        DirId db;
        FileInfo fi;

        db = account_dir_find(acct, account_dir_find(acct, DIR_ROOT, "a"), "b");
        l2 = openat(root, "a/b", O_RDONLY | O_DIRECTORY);
        for (unsigned i = 0; i < FILES / 2; i++) {
                char name[40];

                snprintf(name, sizeof(name), "%02x%029uR", i % 256, i);
                if (i < 10)
                        assert_int_equal(unlinkat(l2, name, 0), 0);
                else    /* a hit (NOW: the tests' clock, not the machine's) */
                        assert_int_equal(utimensat(l2, name, (struct timespec[2]) { { NOW - 60, 0 }, { NOW - 60, 0 } },
                                                   0), 0);
        }
        before = account_totals(acct)->files;
        /* down to half the cache: the stale half is what the account offers */
        TrimEnv env = { .account = acct, .counters = k, .root_fd = root, .dev = root_st.st_dev,
                        .now = now_usec(CLOCK_MONOTONIC), .realtime = now_usec(CLOCK_REALTIME) };
        assert_int_equal(trim_new(acct, account_totals(acct)->bytes / 2, false, NOW, &fx->t), 0);
        assert_int_equal(step_until_not_busy(fx, env.now, env.realtime), 0);
        assert_int_equal(trim_result(fx->t)->files, 0);
        assert_int_equal(trim_result(fx->t)->saved, FILES / 2);
        assert_int_equal(trim_result(fx->t)->corrected, FILES / 2);
        assert_int_equal(account_totals(acct)->files, before - 10);
        assert_true(account_file_find(acct, db, "0000000000000000000000000000000R") == FILE_NONE);
        assert_int_equal(account_file_info(acct, account_file_find(acct, db, "0a00000000000000000000000000010R"), &fi), 0);
        assert_true(fi.mtime > NOW - 86400 + FILES);    /* the hit, now known */
        fx->t = trim_free(fx->t);
        /* the next trim goes for the really oldest: the untouched half */
        assert_int_equal(trim_new(acct, account_totals(acct)->bytes / 2, false, NOW, &fx->t), 0);
        assert_int_equal(step_until_not_busy(fx, env.now, env.realtime), 0);
        assert_true(trim_result(fx->t)->files > 0);
        assert_int_equal(trim_result(fx->t)->saved, 0);
        assert_int_equal(trim_result(fx->t)->corrected, 0);
        assert_int_equal(faccessat(l2, "0a00000000000000000000000000010R", F_OK, AT_SYMLINK_NOFOLLOW), 0);
        close(l2);
}

/* The tests' clock for slices: at each read, a whole slice later than at
 * the one before. */
static usec_t slow_now;
static usec_t slow_clock(void) {
        return slow_now += TRIM_SLICE_USEC;
}

/* A slice ends when its time is up, also in the middle of a directory
 * (what one unlink costs is not known ahead: a cold inode, a loaded box):
 * on a clock that says so at its first look, each step deletes the
 * directory's TRIM_GROUP_MIN victims and the next TRIM_SLICE_EVERY (up to
 * that look), and the trim goes on from there in the next; every step makes
 * progress, and ccache's counters get what each part deleted. */
static void test_slice_ends_on_time_mid_directory(void **state) {
        Fixture *fx = *state;
        TrimEnv env = { .account = fx->acct, .counters = fx->k, .root_fd = fx->root, .dev = fx->st.st_dev,
                        .now = now_usec(CLOCK_MONOTONIC), .realtime = now_usec(CLOCK_REALTIME) };
        uint64_t before = 0, stats_before = 0;
        int r, steps = 0;

        slice_clock = slow_clock;
        assert_int_equal(trim_new(fx->acct, 0, false, NOW, &fx->t), 0);
        while ((r = trim_step(fx->t, &env)) == 1) {
                const TrimResult *res = trim_result(fx->t);

                /* the planning takes its slices first; then each deletes
                 * TRIM_SLICE_EVERY victims, and fixes the counters */
                assert_true(res->files - before <= TRIM_GROUP_MIN + TRIM_SLICE_EVERY);
                if (before > 0)
                        assert_true(res->files > before);
                if (res->files > before)
                        assert_int_equal(res->stats_updates, stats_before + 1);
                before = res->files;
                stats_before = res->stats_updates;
                assert_true(++steps < 10 * FILES);
        }
        assert_int_equal(r, 0);
        assert_int_equal(trim_result(fx->t)->files, FILES);
        assert_true(steps >= FILES / (TRIM_GROUP_MIN + TRIM_SLICE_EVERY));
        assert_int_equal(trim_result(fx->t)->stats_failures, 0);
        assert_int_equal(trim_result(fx->t)->stats_deferred, 0);
        assert_int_equal(l1_stats(fx->root).counters[11], 0);        /* files in a/b: none left */
        assert_int_equal(l1_stats(fx->root).counters[12], 0);        /* their KiB */
        assert_int_equal(l1_stats(fx->root).counters[49 + 11], 0);
        assert_false(counters_pending(fx->k));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_why),
                cmocka_unit_test_setup_teardown(test_held_stats_lock_is_not_waited_for, setup, teardown),
                cmocka_unit_test_setup_teardown(test_locked_directory_waits_its_turn, setup, teardown),
                cmocka_unit_test_setup_teardown(test_live_lock_is_left_alone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_lock_is_broken, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recount, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reused_id_is_not_the_victim, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_account_is_corrected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slice_ends_on_time_mid_directory, setup, teardown),
        };
        return cmocka_run_group_tests_name("trim", tests, NULL, NULL);
}
