/* SPDX-License-Identifier: MIT */
/* What several unit tests build the same way: ccache entry names; the
 * cmocka fixtures a test's state comes from (a temporary directory, a test's
 * own directory, an empty account or activity record), each torn down by
 * its teardown whatever the test did; rm_rf, which removes a tree in C,
 * never following a symlink nor leaving its filesystem; a ccache lock
 * planted as another holder would; an sd-event loop run until a condition
 * holds; an account's purge run to its end. Header-only and static, included after <cmocka.h>: a test uses what
 * it needs. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "insight/activity.h"
#include "tree/account.h"

/* base32hex, as ccache spells keys: the 16 hex digits first. */
#define FIXTURE_B32 "0123456789abcdefghijklmnopqrstuv"

/* A deterministic ccache 4.7-4.12 entry name for file i at depth 2: 2 hex
 * and 29 base32hex key characters, then suffix ('R' result, 'M' manifest).
 * buf holds 33 bytes. Different i, different names. */
static inline void entry_name(unsigned i, char suffix, char *buf) {
        uint64_t x = i * 0x9e3779b97f4a7c15ULL + 12345;

        for (int p = 0; p < 31; p++) {
                x ^= x >> 29, x *= 0xbf58476d1ce4e5b9ULL;
                buf[p] = FIXTURE_B32[p < 2 ? x % 16 : x % 32];
        }
        buf[31] = suffix;
        buf[32] = '\0';
}

/* Empties directory fd (its own, closed here) depth first, as rm -rf:
 * never follows a symlink (each name is looked at with AT_SYMLINK_NOFOLLOW
 * and opened O_NOFOLLOW, below the fd it was found in) and never leaves
 * filesystem dev (a mount below is left, and so is the name it hides). A
 * directory its owner may not enter or change is made 0700 first, as
 * chmod -R u+rwx would. 0, or the first -errno. */
static inline int rm_rf_children(int fd, dev_t dev) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        int r = 0;

        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                struct stat st;
                int sub, q;

                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        q = errno == ENOENT ? 0 : -errno;
                } else if (!S_ISDIR(st.st_mode)) {
                        q = unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT ? -errno : 0;
                } else if (st.st_dev != dev) {
                        q = -EXDEV;
                } else {
                        if ((st.st_mode & 0700) != 0700)
                                (void) fchmodat(dirfd(d), de->d_name, 0700, 0);
                        sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        q = sub < 0 ? -errno : rm_rf_children(sub, dev);
                        if (q == 0 && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
                                q = -errno;
                }
                if (q < 0 && r == 0)
                        r = q;
        }
        closedir(d);
        return r;
}

/* rm -rf path, in C (see rm_rf_children): a path that is not there is
 * fine; a symlink is removed, not followed. 0, or -1 if anything stayed. */
static inline int rm_rf(const char *path) {
        struct stat st;
        int fd;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -1;
        if (!S_ISDIR(st.st_mode))
                return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
        if ((st.st_mode & 0700) != 0700)
                (void) chmod(path, 0700);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || rm_rf_children(fd, st.st_dev) < 0)
                return -1;
        return rmdir(path) < 0 ? -1 : 0;
}

/* A new empty directory name in directory dir (a path); returns its fd. */
static inline int fresh_dir(const char *dir, const char *name) {
        int top = open(dir, O_RDONLY | O_DIRECTORY), fd;

        assert_true(top >= 0);
        assert_int_equal(mkdirat(top, name, 0755), 0);
        fd = openat(top, name, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        close(top);
        return fd;
}

/* A fresh temporary directory for a test (cmocka_unit_test_setup_teardown)
 * or a group: *state is its path, made 0700 by mkdtemp below /tmp.
 * teardown_tmpdir removes it and all it holds. */
static inline int setup_tmpdir(void **state) {
        char *dir = strdup("/tmp/ck-test-XXXXXX");

        if (!dir || !mkdtemp(dir)) {
                free(dir);
                return -1;
        }
        *state = dir;
        return 0;
}

static inline int teardown_tmpdir(void **state) {
        int r = rm_rf(*state);

        free(*state);
        return r;
}

/* A test's own directory: fd, open, is "d" in a fresh temporary directory
 * (path), so that a test can put things beside it. teardown_test_dir closes
 * fd and removes it all. */
typedef struct TestDir {
        char path[64];
        int fd;
} TestDir;

static inline int setup_test_dir(void **state) {
        TestDir *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        strcpy(t->path, "/tmp/ck-test-XXXXXX");
        assert_non_null(mkdtemp(t->path));
        t->fd = fresh_dir(t->path, "d");
        *state = t;
        return 0;
}

static inline int teardown_test_dir(void **state) {
        TestDir *t = *state;
        int r;

        close(t->fd);
        r = rm_rf(t->path);
        free(t);
        return r;
}

/* A new empty account for a test: *state. */
static inline int setup_account(void **state) {
        Account *a;

        if (account_new(&a) < 0)
                return -1;
        *state = a;
        return 0;
}

static inline int teardown_account(void **state) {
        account_free(*state);
        return 0;
}

/* Runs the account's purge to its end, as its owner's slices would
 * (account_purge_step): the files of forgotten directories leave the table
 * and their DirIds are free again. Returns how many steps it took. */
static inline unsigned account_purge_drain(Account *a) {
        unsigned steps = 0;

        while (account_purge_step(a, ACCOUNT_PURGE_STEP) > 0)
                steps++;
        return steps + 1;
}

/* A new, empty activity record for a test: *state. */
static inline int setup_activity(void **state) {
        Activity *a = NULL;

        if (activity_new(&a) < 0)
                return -1;
        *state = a;
        return 0;
}

static inline int teardown_activity(void **state) {
        activity_free(*state);
        return 0;
}

/* Two of them: *state is the array. */
static inline int setup_two_activities(void **state) {
        Activity **a = calloc(2, sizeof(*a));

        if (!a || activity_new(&a[0]) < 0 || activity_new(&a[1]) < 0) {
                if (a)
                        activity_free(a[0]);
                free(a);
                return -1;
        }
        *state = a;
        return 0;
}

static inline int teardown_two_activities(void **state) {
        Activity **a = *state;

        activity_free(a[0]);
        activity_free(a[1]);
        free(a);
        return 0;
}

/* Plants ccache lock <name> in fd held by content, as another holder would:
 * the symlink <name>.lock, and its <name>.alive last touched at alive_usec
 * (realtime; 0: no .alive). Replaces what was there. */
static inline void plant_lock(int fd, const char *name, const char *content, uint64_t alive_usec) {
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

/* Runs the sd-event loop (f)->e until expr holds; fails the test after
 * DEADLINE_USEC, which the test defines. */
#define RUN_UNTIL(f, expr)                                                                  \
        do {                                                                                \
                usec_t _deadline = now_usec(CLOCK_MONOTONIC) + DEADLINE_USEC;               \
                while (!(expr)) {                                                           \
                        if (now_usec(CLOCK_MONOTONIC) > _deadline)                          \
                                fail_msg("timed out waiting for: %s", #expr);               \
                        assert_true(sd_event_run((f)->e, 10 * USEC_PER_MSEC) >= 0);         \
                }                                                                           \
        } while (0)
