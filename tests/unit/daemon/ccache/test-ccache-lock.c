/* SPDX-License-Identifier: MIT */
/* ccache's lock protocol: never waiting, stale locks broken as ccache breaks
 * them, a dead cachekeeperd's own locks recognised, and never a lock
 * released that is not ours. */
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
#include "ccache/ccache-lock.h"
#include "fixture.h"

static void lock_text(int fd, const char *lock, char *buf, size_t len) {
        ssize_t n = readlinkat(fd, lock, buf, len - 1);

        assert_true(n > 0);
        buf[n] = '\0';
}

static void test_lock_is_exclusive_and_only_ours_released(void **state) {
        CcacheLock a, b;
        char target[128];
        TestDir *t = *state;
        int fd = t->fd;
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
}

/* ccache's rule (lockfile.cpp): text and .alive mtime unchanged for 2 s. */
static void test_lock_goes_stale_after_two_quiet_seconds(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheLock l;
        char target[128];
        TestDir *t = *state;
        int fd = t->fd;

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
}

static void test_lock_first_sight(void **state) {
        const uint64_t S = USEC_PER_SEC, t0 = now_usec(CLOCK_REALTIME);
        CcacheLockSeen seen = { 0 };
        CcacheLock l;
        TestDir *t = *state;
        int fd = t->fd;

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
        TestDir *t = *state;
        int fd = t->fd;

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
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_lock_is_exclusive_and_only_ours_released, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_lock_goes_stale_after_two_quiet_seconds, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_lock_first_sight, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_lock_ours_dead, setup_test_dir, teardown_test_dir),
        };
        return cmocka_run_group_tests_name("ccache-lock", tests, NULL, NULL);
}
