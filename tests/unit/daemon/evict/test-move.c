/* SPDX-License-Identifier: MIT */
/* evict/move.c: one entry moved between two caches' directories, on one
 * filesystem (/tmp) and across two (/tmp to /dev/shm, when they differ):
 * re-checked first, never over an entry the destination has, never through
 * a symlink or into a FIFO, the mtime kept, no temporary left. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "evict/move.h"
#include "fixture.h"

#define NAME "0123456789abcdefghijklmnopqrstuvR"

typedef struct Dirs {
        char from_path[64], to_path[64];
        int from, to;
        dev_t from_dev, to_dev;
} Dirs;

static int setup_dirs(Dirs *d, const char *to_base) {
        struct stat st;

        strcpy(d->from_path, "/tmp/ck-move-XXXXXX");
        snprintf(d->to_path, sizeof(d->to_path), "%s/ck-move-XXXXXX", to_base);
        if (!mkdtemp(d->from_path) || !mkdtemp(d->to_path))
                return -1;
        d->from = open(d->from_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        d->to = open(d->to_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(d->from >= 0 && d->to >= 0);
        assert_int_equal(fstat(d->from, &st), 0);
        d->from_dev = st.st_dev;
        assert_int_equal(fstat(d->to, &st), 0);
        d->to_dev = st.st_dev;
        return 0;
}

static void teardown_dirs(Dirs *d) {
        close(d->from);
        close(d->to);
        assert_int_equal(rm_rf(d->from_path), 0);
        assert_int_equal(rm_rf(d->to_path), 0);
}

/* A file name in dirfd of size bytes and mtime; its expectation. */
static MoveExpect put(int dirfd, const char *name, size_t size, int64_t mtime, dev_t dev) {
        struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };
        char buf[8192];
        struct stat st;
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0 && size <= sizeof(buf));
        memset(buf, 'x', size);
        assert_int_equal(write(fd, buf, size), (ssize_t) size);
        assert_int_equal(futimens(fd, ts), 0);
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        return (MoveExpect) { .dev = dev, .blocks = (uint64_t) st.st_blocks, .mtime = mtime };
}

static bool exists(int dirfd, const char *name) {
        return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static int64_t mtime_of(int dirfd, const char *name) {
        struct stat st;

        assert_int_equal(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mtim.tv_sec;
}

/* No temporary (ccache's *.tmp.*) left in dirfd. */
static void no_temporary(int dirfd) {
        int fd = dup(dirfd);
        DIR *dir = fdopendir(fd);
        struct dirent *de;

        assert_non_null(dir);
        rewinddir(dir);
        while ((de = readdir(dir)))
                assert_null(strstr(de->d_name, ".tmp."));
        closedir(dir);
}

/* The cases both paths share; cross: the destination is on another filesystem. */
static void cases(Dirs *d, bool cross) {
        MoveExpect e;
        MoveResult r;
        int64_t t = 1700000000;

        assert_true(cross == (d->from_dev != d->to_dev));
        /* a plain move: gone from the source, in the destination, mtime,
         * owner and mode kept */
        e = put(d->from, NAME, 5000, t, d->from_dev);
        assert_int_equal(fchmodat(d->from, NAME, 0666, 0), 0);
        assert_int_equal(fchownat(d->from, NAME, 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, cross ? MOVE_COPIED : MOVE_RENAMED);
        assert_true(r.source_gone);
        assert_false(exists(d->from, NAME));
        assert_int_equal(mtime_of(d->to, NAME), t);
        assert_int_equal(r.mtime, t);
        assert_int_equal(r.copied_bytes, cross ? 5000 : 0);
        {
                struct stat st;
                assert_int_equal(fstatat(d->to, NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
                assert_int_equal(st.st_mode & 07777, 0666);
                assert_int_equal(st.st_uid, 65534);
                assert_int_equal(st.st_gid, 65534);
        }
        no_temporary(d->to);

        /* the destination has it (older): kept, given the newer mtime; the source's copy goes */
        e = put(d->from, NAME, 3000, t + 100, d->from_dev);
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_KEPT_DEST);
        assert_false(exists(d->from, NAME));
        assert_int_equal(mtime_of(d->to, NAME), t + 100);
        {
                struct stat st;
                assert_int_equal(fstatat(d->to, NAME, &st, 0), 0);
                assert_int_equal(st.st_size, 5000);   /* never overwritten */
        }
        /* ... and newer: its mtime stays */
        e = put(d->from, NAME, 3000, t, d->from_dev);
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_KEPT_DEST);
        assert_int_equal(mtime_of(d->to, NAME), t + 100);
        assert_int_equal(unlinkat(d->to, NAME, 0), 0);

        /* not what the account says: another mtime, another size */
        e = put(d->from, NAME, 3000, t, d->from_dev);
        e.mtime = t - 1;
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        e.mtime = t;
        e.blocks += 8;
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        assert_true(exists(d->from, NAME) && !exists(d->to, NAME));
        assert_int_equal(unlinkat(d->from, NAME, 0), 0);

        /* a symlink at the name (to a file elsewhere): never followed, never moved */
        assert_int_equal(symlinkat("/etc/passwd", d->from, NAME), 0);
        e = (MoveExpect) { .dev = d->from_dev, .blocks = 8, .mtime = t };
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        assert_false(exists(d->to, NAME));
        assert_int_equal(unlinkat(d->from, NAME, 0), 0);

        /* a FIFO at the name: never opened for a read that waits, never moved */
        assert_int_equal(mkfifoat(d->from, NAME, 0666), 0);
        e = (MoveExpect) { .dev = d->from_dev, .blocks = 0, .mtime = mtime_of(d->from, NAME) };
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        assert_false(exists(d->to, NAME));
        assert_int_equal(unlinkat(d->from, NAME, 0), 0);

        /* something planted at the destination's name (a symlink, a FIFO):
         * nothing is written through it, and the source stays */
        e = put(d->from, NAME, 1000, t, d->from_dev);
        assert_int_equal(symlinkat("/nonexistent-target", d->to, NAME), 0);
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        assert_true(exists(d->from, NAME));
        assert_int_equal(access("/nonexistent-target", F_OK), -1);
        assert_int_equal(unlinkat(d->to, NAME, 0), 0);
        assert_int_equal(mkfifoat(d->to, NAME, 0666), 0);
        assert_int_equal(move_entry(d->from, d->to, d->to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_CHANGED);
        assert_true(exists(d->from, NAME));
        no_temporary(d->to);
}

static void test_move_same_filesystem(void **state) {
        Dirs d;

        assert_int_equal(setup_dirs(&d, "/tmp"), 0);
        cases(&d, false);
        teardown_dirs(&d);
}

static void test_move_across(void **state) {
        Dirs d;

        assert_int_equal(setup_dirs(&d, "/dev/shm"), 0);
        if (d.from_dev == d.to_dev) {
                teardown_dirs(&d);
                skip();
        }
        cases(&d, true);
        teardown_dirs(&d);
}

/* A name whose size is beyond its blocks (truncate -s: a hole, or data and
 * then a hole) is never read across filesystems: MOVE_SPARSE, nothing
 * written, the source left. */
static void test_move_sparse(void **state) {
        int64_t t = 1700000000;
        MoveExpect e;
        MoveResult r;
        struct stat st;
        Dirs d;
        int fd;

        assert_int_equal(setup_dirs(&d, "/dev/shm"), 0);
        if (d.from_dev == d.to_dev) {
                teardown_dirs(&d);
                skip();
        }
        fd = openat(d.from, NAME, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) 20 << 30), 0);
        assert_int_equal(futimens(fd, (struct timespec[2]) { { .tv_sec = t }, { .tv_sec = t } }), 0);
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        e = (MoveExpect) { .dev = d.from_dev, .blocks = (uint64_t) st.st_blocks, .mtime = t };
        assert_int_equal(move_entry(d.from, d.to, d.to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_SPARSE);
        assert_int_equal(r.size, (uint64_t) 20 << 30);
        assert_int_equal(r.copied_bytes, 0);
        assert_true(exists(d.from, NAME) && !exists(d.to, NAME));
        no_temporary(d.to);
        assert_int_equal(unlinkat(d.from, NAME, 0), 0);

        /* some data, then a hole of more than the slack */
        e = put(d.from, NAME, 5000, t, d.from_dev);
        fd = openat(d.from, NAME, O_WRONLY | O_CLOEXEC);
        assert_int_equal(ftruncate(fd, 5000 + 2 * MOVE_SLACK_BYTES + 8192), 0);
        assert_int_equal(futimens(fd, (struct timespec[2]) { { .tv_sec = t }, { .tv_sec = t } }), 0);
        close(fd);
        assert_int_equal(move_entry(d.from, d.to, d.to_dev, NAME, &e, &r), 0);
        assert_int_equal(r.outcome, MOVE_SPARSE);
        assert_true(exists(d.from, NAME) && !exists(d.to, NAME));
        no_temporary(d.to);
        teardown_dirs(&d);
}

/* A copy goes in steps of the budget given: a 3 MiB entry in 1 MiB steps,
 * then renamed into place; the source goes only on commit. */
static void test_move_steps(void **state) {
        static char buf[3 << 20];
        int64_t t = 1700000000;
        uint64_t copied = 0;
        MoveCopy c = { 0 };
        MoveExpect e;
        MoveResult r;
        struct stat st;
        unsigned steps = 0;
        Dirs d;
        int fd, k;

        assert_int_equal(setup_dirs(&d, "/dev/shm"), 0);
        if (d.from_dev == d.to_dev) {
                teardown_dirs(&d);
                skip();
        }
        fd = openat(d.from, NAME, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        memset(buf, 'e', sizeof(buf));
        assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        assert_int_equal(futimens(fd, (struct timespec[2]) { { .tv_sec = t }, { .tv_sec = t } }), 0);
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        e = (MoveExpect) { .dev = d.from_dev, .blocks = (uint64_t) st.st_blocks, .mtime = t };
        assert_int_equal(move_place(d.from, d.to, d.to_dev, NAME, &e, &c, &r), 1);
        assert_true(move_copy_busy(&c));
        while ((k = move_copy_step(&c, 1 << 20, &copied)) == 1) {
                steps++;
                assert_int_equal(copied, (uint64_t) steps << 20);
        }
        assert_int_equal(k, 0);
        assert_int_equal(steps, 2);
        assert_int_equal(copied, sizeof(buf));
        assert_false(exists(d.to, NAME));   /* still the temporary */
        assert_int_equal(move_copy_finish(&c, d.to_dev, &r), 0);
        assert_false(move_copy_busy(&c));
        assert_int_equal(r.outcome, MOVE_COPIED);
        assert_true(exists(d.from, NAME) && exists(d.to, NAME));   /* not committed yet */
        assert_int_equal(move_commit(d.from, NAME, &e, &r), 0);
        assert_true(r.source_gone);
        assert_false(exists(d.from, NAME));
        assert_int_equal(mtime_of(d.to, NAME), t);
        no_temporary(d.to);

        /* stopped halfway: the temporary goes, the source stays */
        assert_int_equal(unlinkat(d.to, NAME, 0), 0);
        e = put(d.from, NAME, 8000, t, d.from_dev);
        assert_int_equal(move_place(d.from, d.to, d.to_dev, NAME, &e, &c, &r), 1);
        assert_int_equal(move_copy_step(&c, 4096, &copied), 1);
        move_copy_abort(&c);
        move_copy_abort(&c);
        no_temporary(d.to);
        assert_true(exists(d.from, NAME) && !exists(d.to, NAME));
        teardown_dirs(&d);
}

/* Placed, then undone (the destination's directory proved elsewhere): a
 * rename goes back, a copy is removed; the source is whole either way. */
static void undo_case(Dirs *d) {
        int64_t t = 1700000000;
        uint64_t copied = 0;
        MoveCopy c = { 0 };
        MoveExpect e = put(d->from, NAME, 5000, t, d->from_dev);
        MoveResult r;
        int k = move_place(d->from, d->to, d->to_dev, NAME, &e, &c, &r);

        while (k == 1)
                k = move_copy_step(&c, UINT64_MAX, &copied);
        if (move_copy_busy(&c))
                assert_int_equal(move_copy_finish(&c, d->to_dev, &r), 0);
        assert_int_equal(r.outcome, d->from_dev == d->to_dev ? MOVE_RENAMED : MOVE_COPIED);
        assert_true(exists(d->to, NAME));
        assert_int_equal(move_undo(d->from, d->to, NAME, &r), 0);
        assert_int_equal(r.outcome, MOVE_UNDONE);
        assert_false(r.source_gone);
        assert_false(exists(d->to, NAME));
        assert_true(exists(d->from, NAME));
        assert_int_equal(mtime_of(d->from, NAME), t);
        no_temporary(d->to);
        /* the destination had it: undone, nothing removed anywhere */
        put(d->to, NAME, 3000, t, d->to_dev);
        assert_int_equal(move_place(d->from, d->to, d->to_dev, NAME, &e, &c, &r), 0);
        assert_int_equal(r.outcome, MOVE_KEPT_DEST);
        assert_int_equal(move_undo(d->from, d->to, NAME, &r), 0);
        assert_true(exists(d->from, NAME) && exists(d->to, NAME));
        /* a rename back onto a name the source has again: ours goes, theirs stays */
        if (d->from_dev == d->to_dev) {
                assert_int_equal(unlinkat(d->to, NAME, 0), 0);
                assert_int_equal(move_place(d->from, d->to, d->to_dev, NAME, &e, &c, &r), 0);
                assert_int_equal(r.outcome, MOVE_RENAMED);
                put(d->from, NAME, 1000, t + 5, d->from_dev);
                assert_int_equal(move_undo(d->from, d->to, NAME, &r), 0);
                assert_int_equal(r.outcome, MOVE_UNDONE);
                assert_false(exists(d->to, NAME));
                assert_int_equal(mtime_of(d->from, NAME), t + 5);
        }
}

static void test_move_undo(void **state) {
        Dirs d;

        assert_int_equal(setup_dirs(&d, "/tmp"), 0);
        undo_case(&d);
        teardown_dirs(&d);
        assert_int_equal(setup_dirs(&d, "/dev/shm"), 0);
        if (d.from_dev != d.to_dev)
                undo_case(&d);
        teardown_dirs(&d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_move_same_filesystem),
                cmocka_unit_test(test_move_across),
                cmocka_unit_test(test_move_sparse),
                cmocka_unit_test(test_move_steps),
                cmocka_unit_test(test_move_undo),
        };
        return cmocka_run_group_tests_name("move", tests, NULL, NULL);
}
