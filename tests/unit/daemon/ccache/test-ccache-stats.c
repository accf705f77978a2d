/* SPDX-License-Identifier: MIT */
/* ccache's stats files: parsed as ccache parses them, and rewritten as
 * ccache would, under its stats.lock, never waiting for it. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"
#include "ccache/ccache-stats.h"
#include "fixture.h"

static void test_stats_parse(void **state) {
        static const char text[] = "0\n0\n0\n0\n17\n0\n0\n0\n5\n0\n0\n1234\n56789\n"
                                   "0\n0\n0\n0\n0\n0\n0\n0\n0\n40\n";
        CcacheStats s;

        ccache_stats_parse(text, strlen(text), &s);
        assert_int_equal(s.n, 23);
        assert_int_equal(ccache_stats_hits(&s), 45);     /* idx 22 + idx 8 */
        assert_int_equal(ccache_stats_misses(&s), 17);   /* idx 4 */
        assert_int_equal(s.counters[CCACHE_STAT_FILES_IN_CACHE], 1234);
        assert_int_equal(s.counters[CCACHE_STAT_CACHE_SIZE_KIBIBYTE], 56789);

        ccache_stats_parse("", 0, &s);
        assert_int_equal(s.n, 0);
        assert_int_equal(ccache_stats_hits(&s), 0);
        ccache_stats_parse("3\ngarbage\n7", 11, &s);     /* no final newline; bad line reads 0 */
        assert_int_equal(s.n, 3);
        assert_int_equal(s.counters[1], 0);
        assert_int_equal(s.counters[2], 7);
}

static void write_counters(int fd, unsigned lines, const uint64_t *v) {
        FILE *f;
        int s = openat(fd, "stats", O_WRONLY | O_CREAT | O_TRUNC, 0644);

        assert_true(s >= 0);
        f = fdopen(s, "w");
        for (unsigned i = 0; i < lines; i++)
                fprintf(f, "%llu\n", (unsigned long long) v[i]);
        fclose(f);
}

/* A consistent 4.8+ level-1 file: subdirectory i holds 10+i files of 40+i KiB. */
static void write_stats_48(int fd) {
        uint64_t v[85];

        for (unsigned i = 0; i < 85; i++)
                v[i] = 1000 + i;
        v[11] = v[12] = 0;
        for (unsigned i = 0; i < 16; i++) {
                v[49 + i] = 10 + i;
                v[65 + i] = 40 + i;
                v[11] += v[49 + i];
                v[12] += v[65 + i];
        }
        write_counters(fd, 85, v);
}

static CcacheStats read_stats(int fd) {
        CcacheStats s;

        assert_int_equal(ccache_stats_read(fd, "stats", &s), 0);
        return s;
}

static void test_stats_subtract(void **state) {
        uint64_t now = now_usec(CLOCK_REALTIME), v[49];
        CcacheStats s;
        TestDir *t = *state;
        int fd = t->fd;

        write_stats_48(fd);
        assert_int_equal(ccache_stats_subtract(fd, 4, 10, 40, NULL, now), 1);
        s = read_stats(fd);
        assert_int_equal(s.n, 85);
        assert_int_equal(s.counters[11], 280 - 10);
        assert_int_equal(s.counters[12], 760 - 40);
        assert_int_equal(s.counters[49 + 4], 14 - 10);
        assert_int_equal(s.counters[65 + 4], 44 - 40);
        assert_int_equal(s.counters[49 + 5], 15);          /* other subdirectories untouched */
        assert_int_equal(s.counters[84], 1084);            /* lines we have no name for are kept */
        assert_int_equal(s.counters[22], 1022);
        /* clamps at zero, as ccache does */
        assert_int_equal(ccache_stats_subtract(fd, 4, 1000000, 1000000, NULL, now), 1);
        s = read_stats(fd);
        assert_int_equal(s.counters[11], 0);
        assert_int_equal(s.counters[65 + 4], 0);
        /* 4.7 file: 49 lines, only 11 and 12 */
        for (unsigned i = 0; i < 49; i++)
                v[i] = 100 + i;
        write_counters(fd, 49, v);
        assert_int_equal(ccache_stats_subtract(fd, 3, 1, 4, NULL, now), 1);
        s = read_stats(fd);
        assert_int_equal(s.n, 49);
        assert_int_equal(s.counters[11], 110);
        assert_int_equal(s.counters[12], 108);
        assert_int_equal(s.counters[48], 148);
        assert_int_equal(faccessat(fd, "stats.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(faccessat(fd, "stats.alive", F_OK, 0), -1);
        /* no stats file: nothing to do */
        assert_int_equal(unlinkat(fd, "stats", 0), 0);
        assert_int_equal(ccache_stats_subtract(fd, 3, 1, 4, NULL, now), 0);
        assert_int_equal(faccessat(fd, "stats", F_OK, 0), -1);
}

/* A held stats.lock is never waited for: -EBUSY at once, nothing written,
 * until the lock has been quiet for 2 s. */
static void test_stats_never_wait(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheStats s;
        usec_t took;
        TestDir *t = *state;
        int fd = t->fd;

        write_stats_48(fd);
        plant_lock(fd, "stats", "nobody-was-here", 0);
        took = now_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < 20; i++)
                assert_int_equal(ccache_stats_subtract(fd, 2, 1, 4, &seen, t0 + (uint64_t) i * S / 10), -EBUSY);
        took = now_usec(CLOCK_MONOTONIC) - took;
        assert_true(took < 20 * 50 * USEC_PER_MSEC);  /* no sleeping (it was up to 200 ms a try) */
        s = read_stats(fd);
        assert_int_equal(s.counters[11], 280);
        assert_int_equal(ccache_stats_subtract(fd, 2, 1, 4, &seen, t0 + 2 * S), 1);
        s = read_stats(fd);
        assert_int_equal(s.counters[11], 279);
        assert_int_equal(s.counters[49 + 2], 11);
        assert_int_equal(faccessat(fd, "stats.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}

static void test_stats_recount(void **state) {
        uint64_t now = now_usec(CLOCK_REALTIME), v[49] = { 0 };
        CcacheStatsFix fix = { 0 };
        CcacheStats s;
        TestDir *t = *state;
        int fd = t->fd;

        /* 4.8+: subdirectory 4 really holds 3 files of 12 KiB (its counters say
         * 14 and 44); 5 gets a subtraction; the totals move by the differences */
        write_stats_48(fd);
        for (unsigned i = 0; i < 16; i++) {
                fix.files[i] = 100 + i;   /* exact figures of the others: unused */
                fix.kib[i] = 400 + i;
        }
        fix.recount[4] = true;
        fix.files[4] = 3;
        fix.kib[4] = 12;
        fix.sub_files[4] = 5;          /* superseded by the recount */
        fix.sub_kib[4] = 20;
        fix.sub_files[5] = 2;
        fix.sub_kib[5] = 8;
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.counters[49 + 4], 3);
        assert_int_equal(s.counters[65 + 4], 12);
        assert_int_equal(s.counters[49 + 5], 13);
        assert_int_equal(s.counters[65 + 5], 37);
        assert_int_equal(s.counters[11], 280 - 14 + 3 - 2);
        assert_int_equal(s.counters[12], 760 - 44 + 12 - 8);
        /* still consistent, as 4.8+ checks: Σ 49..64 = 11, Σ 65..80 = 12 */
        uint64_t sf = 0, sk = 0;
        for (unsigned i = 0; i < 16; i++) {
                sf += s.counters[49 + i];
                sk += s.counters[65 + i];
        }
        assert_int_equal(sf, s.counters[11]);
        assert_int_equal(sk, s.counters[12]);
        /* 4.7: no per-subdirectory counters, so the level-1 total is set */
        v[11] = 999;
        v[12] = 9999;
        write_counters(fd, 49, v);
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.n, 49);
        assert_int_equal(s.counters[11], 15 * 100 + 120 - 4 + 3);    /* Σ files[] */
        assert_int_equal(s.counters[12], 15 * 400 + 120 - 4 + 12);   /* Σ kib[] */
        /* a short planted file still gets its totals */
        write_counters(fd, 3, v);
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.n, 13);
        assert_int_equal(s.counters[11], 15 * 100 + 120 - 4 + 3);
}

/* No stats file in the level-1 directory (ccache never wrote one there):
 * a subtraction or a recount that finds nothing writes none (zeros is what
 * ccache reads already); a recount that finds entries (a merge moved them
 * in) writes the totals. */
static void test_stats_recount_missing(void **state) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        CcacheStatsFix fix = { 0 };
        CcacheStats s;
        TestDir *t = *state;
        int fd = t->fd;

        fix.sub_files[1] = 2;
        fix.sub_kib[1] = 8;
        fix.recount[3] = true;
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 0);
        assert_int_equal(faccessat(fd, "stats", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        fix.files[3] = 4;
        fix.kib[3] = 16;
        fix.recount[7] = true;
        fix.files[7] = 1;
        fix.kib[7] = 8;
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.n, 13);
        assert_int_equal(s.counters[11], 5);
        assert_int_equal(s.counters[12], 24);
        assert_int_equal(faccessat(fd, "stats.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        /* additions alone (a merge moved entries in) write a missing file too */
        assert_int_equal(unlinkat(fd, "stats", 0), 0);
        fix = (CcacheStatsFix) { 0 };
        fix.add_files[2] = 3;
        fix.add_kib[2] = 12;
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.counters[11], 3);
        assert_int_equal(s.counters[12], 12);
}

/* A merge's additions and subtractions are relative, per subdirectory in 4.8+. */
static void test_stats_add(void **state) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        CcacheStatsFix fix = { 0 };
        CcacheStats s;
        TestDir *t = *state;
        int fd = t->fd;

        write_stats_48(fd);
        s = read_stats(fd);
        uint64_t f11 = s.counters[11], k12 = s.counters[12], f4 = s.counters[49 + 4], k4 = s.counters[65 + 4];
        fix.add_files[4] = 2;
        fix.add_kib[4] = 8;
        fix.sub_files[4] = 1;
        fix.sub_kib[4] = 4;
        assert_int_equal(ccache_stats_fix(fd, &fix, NULL, now, NULL), 1);
        s = read_stats(fd);
        assert_int_equal(s.counters[11], f11 + 1);
        assert_int_equal(s.counters[12], k12 + 4);
        assert_int_equal(s.counters[49 + 4], f4 + 1);
        assert_int_equal(s.counters[65 + 4], k4 + 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stats_parse),
                cmocka_unit_test_setup_teardown(test_stats_subtract, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_stats_never_wait, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_stats_recount, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_stats_recount_missing, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_stats_add, setup_test_dir, teardown_test_dir),
        };
        return cmocka_run_group_tests_name("ccache-stats", tests, NULL, NULL);
}
