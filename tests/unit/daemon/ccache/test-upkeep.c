/* SPDX-License-Identifier: MIT */
/* Mode and ccache.conf upkeep on a real directory tree: what a user may
 * plant is never followed, never made more useful to them, and never stops
 * the upkeep of the rest. */
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
#include <unistd.h>

#include <cmocka.h>

#include "ccache/upkeep.h"
#include "fixture.h"

static char tmpdir[64];
static int root_fd = -1;

/* Per event kind: how many, and the last path. */
static unsigned events[UPKEEP_FAILED + 1];
static char last_what[UPKEEP_FAILED + 1][16];
static mode_t last_was[UPKEEP_FAILED + 1];

static void on_report(const UpkeepReport *r, void *userdata) {
        events[r->event]++;
        snprintf(last_what[r->event], sizeof(last_what[0]), "%s", r->what);
        last_was[r->event] = r->was;
}

/* Runs a shell command. */
__attribute__((format(printf, 1, 2)))
static int sh(const char *fmt, ...) {
        char cmd[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        return system(cmd);
}

static int setup(void **state) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/ck-test-upkeep-XXXXXX");
        if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0)
                return -1;
        root_fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        memset(events, 0, sizeof(events));
        return root_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        close(root_fd);
        return rm_rf(tmpdir);
}

static mode_t mode_of(const char *rel) {
        struct stat st;

        assert_int_equal(fstatat(root_fd, rel, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mode;
}

static void test_creates_every_dir(void **state) {
        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 16 + 256 + 2);
        assert_int_equal(mode_of("tmp") & 07777, 0777);
        assert_int_equal(mode_of("lock") & 07777, 0777);
        assert_int_equal(mode_of("f/f") & 07777, 0777);
        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 0);
        assert_int_equal(events[UPKEEP_REPAIRED] + events[UPKEEP_LEFT_ALONE] + events[UPKEEP_FAILED], 0);
}

/* Someone's sticky directory moved into a kept slot keeps its bit: made
 * 0777, its files would be anyone's to delete. */
static void test_special_bits_left_alone(void **state) {
        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 16 + 256 + 2);
        assert_int_equal(fchmodat(root_fd, "b/4", 01777, 0), 0);
        assert_int_equal(fchmodat(root_fd, "c", 02755, 0), 0);
        assert_int_equal(fchmodat(root_fd, "tmp", 04700, 0), 0);
        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 0);
        assert_int_equal(mode_of("b/4") & 07777, 01777);
        assert_int_equal(mode_of("c") & 07777, 02755);
        assert_int_equal(mode_of("tmp") & 07777, 04700);
        assert_int_equal(events[UPKEEP_LEFT_ALONE], 3);
        assert_int_equal(events[UPKEEP_REPAIRED], 0);
        /* below the setgid "c", setgid is what mkdir passes down: fine
         * (kept, never added) */
        assert_int_equal(fchmodat(root_fd, "c/1", 02777, 0), 0);
        assert_int_equal(fchmodat(root_fd, "c/2", 02700, 0), 0);
        assert_int_equal(fchmodat(root_fd, "c/3", 0700, 0), 0);
        assert_int_equal(upkeep_dir(root_fd, "c/1", on_report, NULL), 0);
        assert_int_equal(upkeep_dir(root_fd, "c/2", on_report, NULL), 1);
        assert_int_equal(upkeep_dir(root_fd, "c/3", on_report, NULL), 1);
        assert_int_equal(mode_of("c/2") & 07777, 02777);
        assert_int_equal(mode_of("c/3") & 07777, 0777);
        assert_int_equal(events[UPKEEP_LEFT_ALONE], 3);
        /* and a plain restrictive mode is repaired as ever */
        assert_int_equal(fchmodat(root_fd, "b/5", 0700, 0), 0);
        assert_int_equal(upkeep_dir(root_fd, "b/5", on_report, NULL), 1);
        assert_int_equal(mode_of("b/5") & 07777, 0777);
}

/* A symlink where a kept directory belongs is replaced, its target
 * untouched; a file there is moved aside, not deleted. */
static void test_symlink_replaced(void **state) {
        char target[128];
        int fd;

        snprintf(target, sizeof(target), "%s-target", tmpdir);
        assert_int_equal(mkdir(target, 0700), 0);
        assert_int_equal(symlinkat(target, root_fd, "tmp"), 0);
        fd = openat(root_fd, "lock", O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0 && write(fd, "keep", 4) == 4);
        close(fd);
        assert_int_equal(mkdirat(root_fd, "d", 0777), 0);
        assert_int_equal(symlinkat(target, root_fd, "d/3"), 0);
        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 16 + 256 + 2);
        assert_true(S_ISDIR(mode_of("tmp")) && S_ISDIR(mode_of("lock")) && S_ISDIR(mode_of("d/3")));
        assert_int_equal(events[UPKEEP_REPLACED], 3);
        assert_int_equal(mode_of(target) & 07777, 0700);   /* untouched */
        assert_int_equal(sh("test \"$(cat %s/lock.moved.*)\" = keep", tmpdir), 0);
        rmdir(target);
}

/* A failure (here: a symlink that may not be removed) does not stop the
 * upkeep of the directories after it. Run as a user that cannot unlink in
 * a read-only root (root could), maybe in a child: no cmocka asserts here.
 * Returns 0 or the line that failed. */
static int failure_does_not_stop(void) {
        struct stat st;
        int r;

        if (unlinkat(root_fd, "tmp", AT_REMOVEDIR) < 0 || symlinkat("/", root_fd, "tmp") < 0 ||
            fchmodat(root_fd, "f/f", 0700, 0) < 0 || fchmod(root_fd, 0555) < 0)
                return __LINE__;
        if ((r = upkeep_all_dirs(root_fd, on_report, NULL)) != -EACCES) {
                fprintf(stderr, "upkeep_all_dirs: %d\n", r);
                return __LINE__;
        }
        if (events[UPKEEP_FAILED] != 1 || strcmp(last_what[UPKEEP_FAILED], "tmp") != 0)
                return __LINE__;
        if (fstatat(root_fd, "f/f", &st, 0) < 0 || (st.st_mode & 07777) != 0777)
                return __LINE__;
        return 0;
}

static void test_failure_does_not_stop(void **state) {
        pid_t pid;
        int status;

        assert_int_equal(upkeep_all_dirs(root_fd, on_report, NULL), 16 + 256 + 2);
        if (geteuid() != 0) {
                assert_int_equal(failure_does_not_stop(), 0);
                return;
        }
        assert_int_equal(sh("chown -R 65534:65534 %s", tmpdir), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(255);
                _exit(failure_does_not_stop() % 255);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("as uid 65534: failed at line %d (status %#x)", WEXITSTATUS(status), status);
}

static const CcacheConfPolicy policy = { .max_size = "120G", .umask = true,
                                         .allow = (const char *const[]) { "base_dir", NULL } };

static char *read_conf(struct stat *st) {
        static char buf[4096];
        ssize_t n;
        int fd = openat(root_fd, "ccache.conf", O_RDONLY | O_NOFOLLOW);

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, st), 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n >= 0);
        buf[n] = '\0';
        return buf;
}

static void write_file(const char *name, const char *text) {
        int fd = openat(root_fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

/* Whatever stood there, the result is the daemon's own 0644 file with only
 * safe lines. */
static void assert_safe_conf(const char *want) {
        struct stat st;
        char *text = read_conf(&st);

        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(st.st_uid, geteuid());
        assert_int_equal(st.st_nlink, 1);
        assert_string_equal(text, want);
}

static void test_conf(void **state) {
        UpkeepConfResult res;
        char target[128], big[UPKEEP_CONF_MAX + 10];
        struct stat before, after;

        /* missing: created */
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_MISSING);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        /* right as it is: left as it is */
        (void) read_conf(&before);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 0);
        (void) read_conf(&after);
        assert_int_equal(before.st_ino, after.st_ino);
        /* the daemon's own file: allowed keys stay, code goes */
        write_file("ccache.conf", "base_dir = /src\nprefix_command = /x\numask = 000\nmax_size = 120G\n");
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_OURS);
        assert_int_equal(res.n_dropped, 1);
        assert_string_equal(res.dropped, "prefix_command");
        assert_safe_conf("base_dir = /src\numask = 000\nmax_size = 120G\n");
        /* a symlink to a file of code: replaced, the target untouched */
        snprintf(target, sizeof(target), "%s-target", tmpdir);
        unlink(target);
        assert_int_equal(unlinkat(root_fd, "ccache.conf", 0), 0);
        assert_int_equal(symlinkat(target, root_fd, "ccache.conf"), 0);
        assert_int_equal(sh("printf 'prefix_command = /x\\n' > %s-target", tmpdir), 0);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_SYMLINK);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        assert_int_equal(sh("test \"$(cat %s-target)\" = 'prefix_command = /x'", tmpdir), 0);
        unlink(target);
        /* a hard link: its allowed keys do not count */
        write_file("other", "base_dir = /src\nsloppiness = locale\n");
        assert_int_equal(unlinkat(root_fd, "ccache.conf", 0), 0);
        assert_int_equal(linkat(root_fd, "other", root_fd, "ccache.conf", 0), 0);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_HARDLINK);
        assert_safe_conf("sloppiness = locale\nmax_size = 120G\numask = 000\n");
        /* too big: not even read */
        memset(big, '#', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        write_file("ccache.conf", big);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_TOO_BIG);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        /* a directory: moved aside */
        assert_int_equal(unlinkat(root_fd, "ccache.conf", 0), 0);
        assert_int_equal(mkdirat(root_fd, "ccache.conf", 0755), 0);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_DIRECTORY);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        assert_int_equal(sh("test -d %s/ccache.conf.moved.*", tmpdir), 0);
        /* a fifo: never opened (that would block) */
        assert_int_equal(unlinkat(root_fd, "ccache.conf", 0), 0);
        assert_int_equal(mkfifoat(root_fd, "ccache.conf", 0666), 0);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_SPECIAL);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        /* another mode: rewritten */
        assert_int_equal(fchmodat(root_fd, "ccache.conf", 0666, 0), 0);
        assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
        assert_int_equal(res.found, UPKEEP_CONF_OURS);
        assert_int_equal(res.n_dropped, 0);
        assert_safe_conf("max_size = 120G\numask = 000\n");
        /* another user's file (root can make one): safe keys only */
        if (geteuid() == 0) {
                write_file("ccache.conf", "base_dir = /src\nnamespace = x\nlog_file = /y\n");
                assert_int_equal(fchownat(root_fd, "ccache.conf", 65534, 65534, 0), 0);
                assert_int_equal(upkeep_ccache_conf(root_fd, &policy, NULL, NULL, &res), 1);
                assert_int_equal(res.found, UPKEEP_CONF_FOREIGN);
                assert_int_equal(res.owner, 65534);
                assert_string_equal(res.dropped, "base_dir, log_file");
                assert_safe_conf("namespace = x\nmax_size = 120G\numask = 000\n");
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_creates_every_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_special_bits_left_alone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_failure_does_not_stop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_conf, setup, teardown),
        };
        return cmocka_run_group_tests_name("upkeep", tests, NULL, NULL);
}
