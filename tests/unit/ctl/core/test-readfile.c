/* SPDX-License-Identifier: MIT */
/* The client's one reader of a build tree's files (ctl/core/readfile.h): only
 * regular files are ever opened (inotify sees every open but an O_PATH
 * one), each once, within a budget that says what it left unread. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"
#include "core/readfile.h"

static char dir[] = "/tmp/test-readfile.XXXXXX";

static const char *at(const char *name) {
        static char p[PATH_MAX];

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        return p;
}

static void put(const char *name, const char *text) {
        FILE *f = fopen(at(name), "w");

        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* A FIFO, a directory, a link to the FIFO and (as root) a character device
 * like /dev/null are refused, and inotify saw no open of any of them: an
 * open of a device can act, and one of a FIFO blocks. */
static void test_regular_only(void **state) {
        static const char *const refused[] = { "fifo", "sub", "link", "null" };
        char events[4096];
        struct stat st;
        ssize_t n;
        int ino, fd;

        assert_non_null(mkdtemp(dir));
        put("reg", "text\n");
        assert_int_equal(mkfifo(at("fifo"), 0600), 0);
        assert_int_equal(mkdir(at("sub"), 0700), 0);
        assert_int_equal(symlink("fifo", at("link")), 0);
        if (mknod(at("null"), S_IFCHR | 0600, makedev(1, 3)) < 0)
                put("null", "");   /* not root: a regular stand-in, and the device is not tested */
        ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        assert_true(ino >= 0);
        assert_true(inotify_add_watch(ino, dir, IN_OPEN) >= 0);

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                if (strcmp(refused[i], "null") == 0 && (lstat(at("null"), &st) < 0 || !S_ISCHR(st.st_mode)))
                        continue;
                assert_int_equal(readfile_open(at(refused[i]), NULL), -EINVAL);
        }
        assert_int_equal(readfile_open(at("missing"), NULL), -ENOENT);
        fd = readfile_open(at("reg"), &st);
        assert_true(fd >= 0);
        assert_true(S_ISREG(st.st_mode) && st.st_size == 5);
        assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
        close(fd);
        assert_string_equal(readfile_strerror(-EINVAL), "not a regular file");

        /* The opens inotify saw: "reg" only. */
        n = read(ino, events, sizeof(events));
        assert_true(n > 0);
        for (char *p = events; p < events + n;) {
                struct inotify_event *e = (struct inotify_event *) p;

                assert_true(e->len > 0);
                assert_string_equal(e->name, "reg");
                p += sizeof(*e) + e->len;
        }
        close(ino);
}

/* Lines: a long one cut and its rest skipped, the last without a newline. */
static void test_lines(void **state) {
        ReadFile f;
        size_t len;

        put("lines", "one\n\nabcdefghij-the-rest\nlast");
        assert_int_equal(readfile_begin(&f, NULL, at("lines"), UINT64_MAX), 0);
        assert_string_equal(readfile_line(&f, 10, &len), "one");
        assert_int_equal(len, 3);
        assert_string_equal(readfile_line(&f, 10, &len), "");
        assert_string_equal(readfile_line(&f, 10, &len), "abcdefghij");
        assert_int_equal(len, 10);
        assert_string_equal(readfile_line(&f, 10, NULL), "last");
        assert_null(readfile_line(&f, 10, NULL));
        assert_false(readfile_cut(&f));
        readfile_end(&f);

        /* The file's own limit: cut, and said so. */
        assert_int_equal(readfile_begin(&f, NULL, at("lines"), 6), 0);
        assert_string_equal(readfile_line(&f, 0, NULL), "one");
        assert_string_equal(readfile_line(&f, 0, NULL), "");
        assert_string_equal(readfile_line(&f, 0, NULL), "a");   /* what the limit left of a line */
        assert_null(readfile_line(&f, 0, NULL));
        assert_true(readfile_cut(&f));
        readfile_end(&f);
}

/* One budget: each file once, bytes and files counted, the first left
 * unread named, FIFOs counted apart. */
static void test_budget(void **state) {
        _cleanup_free_ char *data = NULL;
        ReadBudget b;
        ReadFile f;
        size_t len;

        put("ten", "123456789\n");
        put("other", "abcdefghi\n");
        put("third", "x\n");
        readfile_budget_init(&b, 15, 3, true);
        assert_int_equal(readfile_all(&b, at("ten"), UINT64_MAX, &data, &len), 0);
        assert_int_equal(len, 10);
        assert_string_equal(data, "123456789\n");
        assert_int_equal(readfile_begin(&f, &b, at("ten"), UINT64_MAX), -EALREADY);   /* once */
        assert_false(readfile_budget_reached(&b));
        free(TAKE_PTR(data));
        /* 5 bytes left of 15: "other" is read in part */
        assert_int_equal(readfile_all(&b, at("other"), UINT64_MAX, &data, &len), 1);
        assert_string_equal(data, "abcde");
        assert_true(readfile_budget_reached(&b));
        assert_string_equal(b.first_unread, at("other"));
        assert_int_equal(readfile_begin(&f, &b, at("fifo"), UINT64_MAX), -EINVAL);
        assert_int_equal(b.not_regular, 1);
        assert_string_equal(b.first_not_regular, at("fifo"));
        /* the files: "third" is the third and last */
        assert_int_equal(readfile_begin(&f, &b, at("third"), UINT64_MAX), 0);
        assert_null(readfile_line(&f, 0, NULL));   /* no bytes left */
        readfile_end(&f);
        assert_int_equal(readfile_begin(&f, &b, at("lines"), UINT64_MAX), -ENOSPC);
        assert_int_equal(b.files_unread, 3);
        assert_string_equal(b.first_unread, at("other"));
        readfile_budget_done(&b);
}

/* The once set grows past its first table (256 slots). */
static void test_once_many(void **state) {
        ReadBudget b;

        readfile_budget_init(&b, UINT64_MAX, UINT64_MAX, true);
        for (int i = 0; i < 600; i++) {
                char name[32];
                ReadFile f;

                snprintf(name, sizeof(name), "many-%d", i);
                put(name, "x");
                assert_int_equal(readfile_begin(&f, &b, at(name), UINT64_MAX), 0);
                readfile_end(&f);
        }
        for (int i = 0; i < 600; i += 7) {
                char name[32];
                ReadFile f;

                snprintf(name, sizeof(name), "many-%d", i);
                assert_int_equal(readfile_begin(&f, &b, at(name), UINT64_MAX), -EALREADY);
        }
        assert_false(readfile_budget_reached(&b));
        readfile_budget_done(&b);
}

static int cleanup(void **state) {
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_regular_only),
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_once_many),
        };
        alarm(60);   /* an open of the FIFO would block: fail, never hang */
        return cmocka_run_group_tests_name("readfile", tests, NULL, cleanup);
}
