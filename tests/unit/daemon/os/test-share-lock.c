/* SPDX-License-Identifier: MIT */
/* The share lock (share-lock.h): one keeper per file: remote, by flock and
 * by a heartbeat line; whatever is planted under its name goes, never
 * followed: what holds something into a bounded quarantine, as it was. */
#include <errno.h>
#include <limits.h>
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

#include "base/util.h"
#include "fixture.h"
#include "os/share-lock.h"

#define NOW (1800000000ULL * USEC_PER_SEC)

static void put_line(int root, const char *line) {
        int fd = openat(root, SHARE_LOCK_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, line, strlen(line)), (ssize_t) strlen(line));
        close(fd);
}

static void read_line(int root, char *buf, size_t len) {
        int fd = openat(root, SHARE_LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n;

        assert_true(fd >= 0);
        n = read(fd, buf, len - 1);
        assert_true(n > 0);
        buf[n] = '\0';
        close(fd);
}

static void test_parse(void **state) {
        ShareHolder h;

        assert_int_equal(share_lock_parse("cachekeeperd builder-7 4242 1800000000\n", &h), 0);
        assert_string_equal(h.host, "builder-7");
        assert_int_equal(h.pid, 4242);
        assert_int_equal(h.beat, 1800000000);
        assert_int_equal(share_lock_parse("cachekeeperd b 1 2", &h), 0);
        for (const char *const *bad = (const char *const[]) { "", "\n", "cachekeeperd", "cachekeeperd host",
                                                               "cachekeeperd host 12", "other host 1 2",
                                                               "cachekeeperd host 0 2", "cachekeeperd host -3 2",
                                                               "cachekeeperd host 1 -2", "cachekeeperd host 1 2 junk",
                                                               "cachekeeperd host 99999999999 2", NULL };
             *bad; bad++) {
                assert_int_equal(share_lock_parse(*bad, &h), -EINVAL);
                assert_string_equal(h.host, "");
        }
}

static void test_exclusive_names_holder(void **state) {
        TestDir *t = *state;
        int root = t->fd, a, b;
        char line[256], host[SHARE_LOCK_HOST_MAX], want[300];
        ShareHolder h;
        SharePlanted planted;

        a = share_lock_take(root, NOW, &h, &planted);
        assert_true(a >= 0);
        assert_false(planted.found);
        gethostname(host, sizeof(host));
        read_line(root, line, sizeof(line));
        snprintf(want, sizeof(want), "cachekeeperd %s %d 1800000000\n", host, (int) getpid());
        assert_string_equal(line, want);
        /* Another open file description: flock says no, and who. */
        b = share_lock_take(root, NOW + USEC_PER_SEC, &h, &planted);
        assert_int_equal(b, -EBUSY);
        assert_true(h.flock);
        assert_int_equal(h.pid, getpid());
        assert_string_equal(h.host, host);
        /* The holder's beat rewrites its line. */
        assert_int_equal(share_lock_beat(root, a, NOW + 30 * USEC_PER_SEC, &h), 0);
        read_line(root, line, sizeof(line));
        assert_non_null(strstr(line, " 1800000030\n"));
        close(a);
        /* Released: the next takes it, though the line names this host. */
        b = share_lock_take(root, NOW + 31 * USEC_PER_SEC, &h, &planted);
        assert_true(b >= 0);
        close(b);
}

static void test_other_host_heartbeat(void **state) {
        TestDir *t = *state;
        int root = t->fd, fd;
        ShareHolder h;
        SharePlanted planted;

        /* Fresh (within SHARE_LOCK_STALE_USEC): kept off, though flock is ours. */
        put_line(root, "cachekeeperd builder-7 4242 1799999950\n");
        assert_int_equal(share_lock_take(root, NOW, &h, &planted), -EBUSY);
        assert_false(h.flock);
        assert_string_equal(h.host, "builder-7");
        assert_int_equal(h.pid, 4242);
        /* Stale: taken over. */
        put_line(root, "cachekeeperd builder-7 4242 1799999000\n");
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0);
        /* The other host comes back and writes over our line (no shared
         * flock): our next beat yields. */
        put_line(root, "cachekeeperd builder-7 4242 1800000010\n");
        assert_int_equal(share_lock_beat(root, fd, NOW + 30 * USEC_PER_SEC, &h), -EBUSY);
        assert_string_equal(h.host, "builder-7");
        close(fd);
}

static void test_replaced_file_is_stale(void **state) {
        TestDir *t = *state;
        int root = t->fd, fd;
        ShareHolder h;
        SharePlanted planted;

        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0);
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
        assert_int_equal(share_lock_beat(root, fd, NOW, &h), -ESTALE);
        put_line(root, "");
        assert_int_equal(share_lock_beat(root, fd, NOW, &h), -ESTALE);
        close(fd);
}

/* What a user plants under the name: removed, never followed or written. */
static void test_planted(void **state) {
        TestDir *t = *state;
        int root = t->fd, fd, victim;
        char target[PATH_MAX], buf[64];
        struct stat st;
        ShareHolder h;
        SharePlanted planted;

        snprintf(target, sizeof(target), "%s/victim", t->path);
        victim = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_int_equal(write(victim, "precious", 8), 8);
        close(victim);
        /* A symlink to a file of root's. */
        assert_int_equal(symlinkat(target, root, SHARE_LOCK_NAME), 0);
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0 && planted.found);
        close(fd);
        /* A hard link to it. */
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
        assert_int_equal(linkat(AT_FDCWD, target, root, SHARE_LOCK_NAME, 0), 0);
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0 && planted.found);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_nlink, 1);
        close(fd);
        /* A FIFO (opening it must not block), a directory. */
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
        assert_int_equal(mkfifoat(root, SHARE_LOCK_NAME, 0666), 0);
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0 && planted.found);
        close(fd);
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
        assert_int_equal(mkdirat(root, SHARE_LOCK_NAME, 0777), 0);
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0 && planted.found);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        close(fd);
        /* The victim is as it was. */
        victim = open(target, O_RDONLY | O_CLOEXEC);
        assert_int_equal(read(victim, buf, sizeof(buf)), 8);
        assert_memory_equal(buf, "precious", 8);
        assert_int_equal(fstat(victim, &st), 0);
        assert_int_equal(st.st_nlink, 1);
        close(victim);
}

static void read_file_at(int dirfd, const char *path, char *buf, size_t len) {
        int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n;

        assert_true(fd >= 0);
        n = read(fd, buf, len - 1);
        assert_true(n >= 0);
        buf[n] = '\0';
        close(fd);
}

static void plant_full_dir(int root, const char *what) {
        int fd;

        assert_int_equal(mkdirat(root, SHARE_LOCK_NAME, 0755), 0);
        fd = openat(root, SHARE_LOCK_NAME "/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, what, strlen(what)), (ssize_t) strlen(what));
        close(fd);
}

/* A directory with files in it (rmdir cannot take it): moved aside as it
 * was, into a quarantine of ours whose name a squatter (here a symlink out
 * of the share) cannot keep; the slots are bounded, then -EMLINK. */
static void test_quarantine(void **state) {
        TestDir *t = *state;
        int root = t->fd, fd;
        char outside[PATH_MAX], buf[64], slot[64];
        struct stat st;
        ShareHolder h;
        SharePlanted planted;

        snprintf(outside, sizeof(outside), "%s/outside", t->path);
        assert_int_equal(mkdir(outside, 0755), 0);
        assert_int_equal(symlinkat(outside, root, SHARE_QUARANTINE_NAME), 0);
        plant_full_dir(root, "precious0");
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0);
        assert_true(planted.found && S_ISDIR(planted.mode));
        /* The squatter (the symlink, not followed) took slot 0, the plant 1. */
        assert_string_equal(planted.aside, SHARE_QUARANTINE_NAME "/1");
        assert_int_equal(fstatat(root, SHARE_QUARANTINE_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(st.st_uid, geteuid());
        assert_int_equal(fstatat(root, SHARE_QUARANTINE_NAME "/0", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISLNK(st.st_mode));
        read_file_at(root, SHARE_QUARANTINE_NAME "/1/file", buf, sizeof(buf));
        assert_string_equal(buf, "precious0");
        assert_int_equal(rmdir(outside), 0);   /* nothing went there */
        close(fd);
        /* Swapped in again and again: each goes aside, into the next slot. */
        for (int i = 2; i < SHARE_QUARANTINE_SLOTS; i++) {
                char what[32];

                assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
                snprintf(what, sizeof(what), "precious%d", i);
                plant_full_dir(root, what);
                fd = share_lock_take(root, NOW, &h, &planted);
                assert_true(fd >= 0);
                snprintf(slot, sizeof(slot), "%s/%d", SHARE_QUARANTINE_NAME, i);
                assert_string_equal(planted.aside, slot);
                snprintf(slot, sizeof(slot), "%s/%d/file", SHARE_QUARANTINE_NAME, i);
                read_file_at(root, slot, buf, sizeof(buf));
                assert_string_equal(buf, what);
                close(fd);
        }
        /* Full: a directory stays where it is (never emptied or removed),
         * and no name beyond the slots is made. */
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, 0), 0);
        plant_full_dir(root, "last");
        assert_int_equal(share_lock_take(root, NOW, &h, &planted), -EMLINK);
        assert_true(planted.found && S_ISDIR(planted.mode));
        read_file_at(root, SHARE_LOCK_NAME "/file", buf, sizeof(buf));
        assert_string_equal(buf, "last");
        snprintf(slot, sizeof(slot), "%s/%d", SHARE_QUARANTINE_NAME, SHARE_QUARANTINE_SLOTS);
        assert_int_equal(fstatat(root, slot, &st, AT_SYMLINK_NOFOLLOW), -1);
        /* A FIFO then: only its name goes (it holds nothing). */
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME "/file", 0), 0);
        assert_int_equal(unlinkat(root, SHARE_LOCK_NAME, AT_REMOVEDIR), 0);
        assert_int_equal(mkfifoat(root, SHARE_LOCK_NAME, 0666), 0);
        fd = share_lock_take(root, NOW, &h, &planted);
        assert_true(fd >= 0);
        assert_true(planted.found && S_ISFIFO(planted.mode));
        assert_string_equal(planted.aside, "");
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test_setup_teardown(test_exclusive_names_holder, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_other_host_heartbeat, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_replaced_file_is_stale, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_planted, setup_test_dir, teardown_test_dir),
                cmocka_unit_test_setup_teardown(test_quarantine, setup_test_dir, teardown_test_dir),
        };
        return cmocka_run_group_tests_name("share-lock", tests, NULL, NULL);
}
