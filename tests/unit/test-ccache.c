/* SPDX-License-Identifier: MIT */
/* ccache names: what is an entry under each naming scheme, and the packed
 * form the daemon deletes by must give back the exact name. ccache's lock
 * protocol (never waiting, stale locks broken as ccache breaks them) and its
 * stats files rewritten as ccache would. */
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

#include "ccache-lock.h"
#include "ccache-stats.h"
#include "ccache.h"
#include "util.h"

/* A full legacy key: 4 hex + 29 base32hex chars. */
#define LEGACY_KEY "b4e1" "2kitvq0g3ru9p1n2pkn7j5dsgvbfl"
#define V413_KEY "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b"

static void roundtrip(const char *name, unsigned depth, CcacheKind want) {
        uint8_t packed[CCACHE_PACKED_SIZE];
        char back[CCACHE_NAME_MAX];
        uint8_t code;
        int k;

        k = ccache_pack_name(name, depth, packed, &code);
        if (k != (int) want)
                fail_msg("pack(\"%s\", depth %u) = %d, want kind %d", name, depth, k, want);
        ccache_unpack_name(packed, code, depth, back);
        if (strcmp(back, name) != 0)
                fail_msg("unpack(pack(\"%s\")) = \"%s\"", name, back);
}

static void test_legacy_names(void **state) {
        /* at depth d the first d key chars are the directories */
        for (unsigned d = 2; d <= 4; d++) {
                char name[64];

                snprintf(name, sizeof(name), "%sR", LEGACY_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RESULT);
                snprintf(name, sizeof(name), "%sM", LEGACY_KEY + d);
                roundtrip(name, d, CCACHE_KIND_MANIFEST);
                for (char n = '0'; n <= '9'; n++) {
                        snprintf(name, sizeof(name), "%s%cW", LEGACY_KEY + d, n);
                        roundtrip(name, d, CCACHE_KIND_RAW);
                }
        }
        /* every base32hex char in every position survives */
        for (int i = 0; i < 32; i++) {
                char name[64];

                snprintf(name, sizeof(name), "%sR", LEGACY_KEY + 2);
                for (size_t p = 2; p < 31; p++)
                        name[p] = "0123456789abcdefghijklmnopqrstuv"[(i + (int) p) % 32];
                roundtrip(name, 2, CCACHE_KIND_RESULT);
        }
}

static void test_v413_names(void **state) {
        for (unsigned d = 2; d <= 4; d++) {
                char name[64];

                snprintf(name, sizeof(name), "%s", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_ENTRY);
                snprintf(name, sizeof(name), "%s_0f", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RAW);
                snprintf(name, sizeof(name), "%s_a0", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RAW);
        }
}

static void test_not_entries(void **state) {
        static const struct {
                const char *name;
                unsigned depth;
        } cases[] = {
                { "stats", 2 }, { "CACHEDIR.TAG", 1 }, { "ccache.conf", 0 }, { "stats.lock", 2 },
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 1 },      /* depth 1: too shallow */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 5 },      /* too deep */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfl", 2 },       /* no suffix, legacy length */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflX", 2 },      /* unknown suffix */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflr", 2 },      /* lower-case suffix */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfRR", 2 },      /* R inside the key: not base32hex */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflwR", 2 },     /* one char too long */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfR", 2 },       /* one char too short */
                { "E12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 2 },      /* upper case */
                { "eg2kitvq0g3ru9p1n2pkn7j5dsgvbflR", 2 },      /* 'g' where the key is still hex */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflAW", 2 },     /* raw with a non-digit */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR.tmp.AbC123.tmp", 2 },
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3g", 2 },  /* 4.13 length, 'g' */
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b_0g", 2 },
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b-0f", 2 },
                { "", 2 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint8_t packed[CCACHE_PACKED_SIZE] = { 0x5a };
                uint8_t code = 99;

                if (ccache_pack_name(cases[i].name, cases[i].depth, packed, &code) != -EINVAL)
                        fail_msg("\"%s\" at depth %u taken for an entry", cases[i].name, cases[i].depth);
                assert_int_equal(code, 99);
                assert_int_equal(packed[0], 0x5a);
        }
}

static void test_classify_other(void **state) {
        assert_int_equal(ccache_classify_other("stats", 1, false), CCACHE_KIND_STATS);
        assert_int_equal(ccache_classify_other("stats", 2, false), CCACHE_KIND_STATS);
        assert_int_equal(ccache_classify_other("stats", 3, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats", 0, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats.tmp.x1Yz2a.tmp", 1, false), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("cpp_stdout.tmp.abc.i", 1, true), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("inode-cache-64.v2", 1, true), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("CACHEDIR.TAG", 1, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("ccache.conf", 0, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats.alive", 1, false), CCACHE_KIND_OTHER);
}

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

static char dir[] = "/tmp/ck-test-ccache-XXXXXX";

static int setup(void **state) {
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* A fresh empty directory for one test. */
static int fresh_dir(const char *name) {
        int top = open(dir, O_RDONLY | O_DIRECTORY), fd;

        assert_true(top >= 0);
        assert_int_equal(mkdirat(top, name, 0755), 0);
        fd = openat(top, name, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        close(top);
        return fd;
}

/* Plants lock <name> held by content, its .alive last touched at alive_usec
 * (realtime; 0: no .alive). */
static void plant_lock(int fd, const char *name, const char *content, uint64_t alive_usec) {
        char lock[80], alive[80];

        snprintf(lock, sizeof(lock), "%s.lock", name);
        snprintf(alive, sizeof(alive), "%s.alive", name);
        (void) unlinkat(fd, lock, 0);
        (void) unlinkat(fd, alive, 0);
        assert_int_equal(symlinkat(content, fd, lock), 0);
        if (alive_usec) {
                struct timespec ts[2] = { { (time_t) (alive_usec / USEC_PER_SEC), (long) (alive_usec % USEC_PER_SEC) * 1000 },
                                          { (time_t) (alive_usec / USEC_PER_SEC), (long) (alive_usec % USEC_PER_SEC) * 1000 } };
                int a = openat(fd, alive, O_WRONLY | O_CREAT, 0644);
                assert_true(a >= 0);
                assert_int_equal(futimens(a, ts), 0);
                close(a);
        }
}

static void lock_text(int fd, const char *lock, char *buf, size_t len) {
        ssize_t n = readlinkat(fd, lock, buf, len - 1);

        assert_true(n > 0);
        buf[n] = '\0';
}

static void test_lock_is_exclusive_and_only_ours_released(void **state) {
        CcacheLock a, b;
        char target[128];
        int fd = fresh_dir("exclusive");
        uint64_t now = now_usec(CLOCK_REALTIME);

        assert_int_equal(ccache_lock_try(&a, fd, "subdir_b4", NULL, now), 1);
        assert_false(a.broke);
        /* our own lock, live: taken, even by this same process */
        assert_int_equal(ccache_lock_try(&b, fd, "subdir_b4", NULL, now), 0);
        lock_text(fd, "subdir_b4.lock", target, sizeof(target));
        assert_string_equal(target, a.content);
        assert_int_equal(faccessat(fd, "subdir_b4.alive", F_OK, 0), 0);
        /* someone broke our lock and took it: releasing must leave theirs */
        plant_lock(fd, "subdir_b4", "otherhost-1-1-1.1", 0);
        ccache_lock_release(&a);
        lock_text(fd, "subdir_b4.lock", target, sizeof(target));
        assert_string_equal(target, "otherhost-1-1-1.1");
        close(fd);
}

/* ccache's rule (lockfile.cpp): text and .alive mtime unchanged for 2 s. */
static void test_lock_goes_stale_after_two_quiet_seconds(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheLock l;
        char target[128];
        int fd = fresh_dir("stale");

        /* a holder whose .alive was touched at t0 */
        plant_lock(fd, "subdir_a1", "buildhost-4242-140255169312576-1.1", t0);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + S / 2), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 19 * S / 10), 0);
        lock_text(fd, "subdir_a1.lock", target, sizeof(target));
        assert_string_equal(target, "buildhost-4242-140255169312576-1.1");
        /* it touches .alive at t0 + 1.5 s: active again, from when we saw it */
        plant_lock(fd, "subdir_a1", "buildhost-4242-140255169312576-1.1", t0 + 3 * S / 2);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 2 * S), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 39 * S / 10), 0);
        /* another holder (new text): active now */
        plant_lock(fd, "subdir_a1", "buildhost-4243-140255169312576-2.2", t0 + 3 * S / 2);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 4 * S), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 59 * S / 10), 0);
        /* quiet for 2 s: broken the way ccache breaks it, and taken */
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_a1", &seen, t0 + 6 * S), 1);
        assert_true(l.broke);
        assert_string_equal(l.broken, "buildhost-4243-140255169312576-2.2");
        lock_text(fd, "subdir_a1.lock", target, sizeof(target));
        assert_string_equal(target, l.content);
        ccache_lock_release(&l);
        assert_int_equal(faccessat(fd, "subdir_a1.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(faccessat(fd, "subdir_a1.alive", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        close(fd);
}

static void test_lock_first_sight(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheLock l;
        int fd = fresh_dir("first");

        /* .alive last touched 10 s ago: stale at first sight, as in ccache */
        plant_lock(fd, "stats", "buildhost-4242-140255169312576-1.1", t0 - 10 * S);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", NULL, t0), 1);
        assert_true(l.broke);
        ccache_lock_release(&l);
        /* no .alive (ccache 4.7, or a planted link): 2 s from when we first saw it */
        plant_lock(fd, "stats", "x", 0);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0 + 19 * S / 10), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0 + 2 * S), 1);
        ccache_lock_release(&l);
        /* an .alive in the future cannot keep a lock alive for ever */
        seen = (CcacheLockSeen) { 0 };
        plant_lock(fd, "stats", "y", t0 + 3600 * S);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0 + 2 * S), 1);
        ccache_lock_release(&l);
        /* something that is not a symlink under the lock's name goes stale too */
        seen = (CcacheLockSeen) { 0 };
        close(openat(fd, "stats.lock", O_WRONLY | O_CREAT, 0644));
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0), 0);
        assert_int_equal(ccache_lock_try(&l, fd, "stats", &seen, t0 + 2 * S), 1);
        ccache_lock_release(&l);
        close(fd);
}

static pid_t dead_pid(void) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        return pid;
}

static void test_lock_ours_dead(void **state) {
        char host[64] = "localhost", text[160];
        uint64_t now = now_usec(CLOCK_REALTIME);
        pid_t dead = dead_pid();
        CcacheLock l;
        int fd = fresh_dir("dead");

        (void) gethostname(host, sizeof(host) - 1);
        /* a cachekeeperd of this host that is gone: broken at once, .alive fresh or not */
        snprintf(text, sizeof(text), "%s-%d-%d-1700000000.000000001", host, (int) dead, (int) dead);
        assert_true(ccache_lock_is_ours_dead(text));
        plant_lock(fd, "subdir_00", text, now);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_00", NULL, now), 1);
        assert_true(l.broke);
        ccache_lock_release(&l);
        /* this process's pid, from before it started: a previous run's */
        snprintf(text, sizeof(text), "%s-%d-%d-1.1", host, (int) getpid(), (int) getpid());
        assert_true(ccache_lock_is_ours_dead(text));
        plant_lock(fd, "subdir_01", text, now);
        assert_int_equal(ccache_lock_break_ours_dead(fd, "subdir_01"), 1);
        assert_int_equal(faccessat(fd, "subdir_01.lock", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(faccessat(fd, "subdir_01.alive", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(ccache_lock_break_ours_dead(fd, "subdir_01"), 0);
        /* ccache's own (a pthread id, not the pid again), another host, a live pid,
         * garbage: not ours, left to the 2 s rule */
        snprintf(text, sizeof(text), "%s-%d-140255169312576-1.1", host, (int) dead);
        assert_false(ccache_lock_is_ours_dead(text));
        plant_lock(fd, "subdir_02", text, now);
        assert_int_equal(ccache_lock_try(&l, fd, "subdir_02", NULL, now), 0);
        assert_int_equal(ccache_lock_break_ours_dead(fd, "subdir_02"), 0);
        snprintf(text, sizeof(text), "not-%s-%d-%d-1.1", host, (int) dead, (int) dead);
        assert_false(ccache_lock_is_ours_dead(text));
        snprintf(text, sizeof(text), "%s-1-1-1.1", host);     /* pid 1 runs */
        assert_false(ccache_lock_is_ours_dead(text));
        snprintf(text, sizeof(text), "%s-%d-%d-%llu.1", host, (int) getpid(), (int) getpid(),
                 (unsigned long long) (now / USEC_PER_SEC + 10));
        assert_false(ccache_lock_is_ours_dead(text));          /* ours, this run: held */
        assert_false(ccache_lock_is_ours_dead(""));
        assert_false(ccache_lock_is_ours_dead("-"));
        assert_false(ccache_lock_is_ours_dead("a-b-c-d"));
        assert_false(ccache_lock_is_ours_dead("h--5-5-1.1"));
        close(fd);
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
        int fd = fresh_dir("subtract");

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
        close(fd);
}

/* A held stats.lock is never waited for: -EBUSY at once, nothing written,
 * until the lock has been quiet for 2 s. */
static void test_stats_never_wait(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheStats s;
        usec_t took;
        int fd = fresh_dir("nowait");

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
        close(fd);
}

static void test_stats_recount(void **state) {
        uint64_t now = now_usec(CLOCK_REALTIME), v[49] = { 0 };
        CcacheStatsFix fix = { 0 };
        CcacheStats s;
        int fd = fresh_dir("recount");

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
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_legacy_names),
                cmocka_unit_test(test_v413_names),
                cmocka_unit_test(test_not_entries),
                cmocka_unit_test(test_classify_other),
                cmocka_unit_test(test_stats_parse),
                cmocka_unit_test(test_lock_is_exclusive_and_only_ours_released),
                cmocka_unit_test(test_lock_goes_stale_after_two_quiet_seconds),
                cmocka_unit_test(test_lock_first_sight),
                cmocka_unit_test(test_lock_ours_dead),
                cmocka_unit_test(test_stats_subtract),
                cmocka_unit_test(test_stats_never_wait),
                cmocka_unit_test(test_stats_recount),
        };
        return cmocka_run_group_tests_name("ccache", tests, setup, teardown);
}
