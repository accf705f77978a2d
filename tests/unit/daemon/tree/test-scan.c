/* SPDX-License-Identifier: MIT */
/* The walk: exact figures on a real tree, symlinks and special files not
 * followed or counted, resumable at any point, stale files swept. */
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

#include "fixture.h"
#include "tree/scan.h"

static char root[] = "/tmp/ck-test-scan-XXXXXX";
static char outside[] = "/tmp/ck-test-scan-out-XXXXXX";
static uint64_t want_files, want_bytes;

static void put(const char *rel, size_t size) {
        char path[512];
        struct stat st;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        for (size_t i = 0; i < size; i++)
                assert_int_equal(write(fd, "x", 1), 1);
        assert_int_equal(fstat(fd, &st), 0);
        close(fd);
        want_files++;
        want_bytes += (uint64_t) st.st_blocks * 512;
}

static void dir(const char *rel) {
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        assert_int_equal(mkdir(path, 0777), 0);
}

static int setup(void **state) {
        char path[512];

        if (!mkdtemp(root) || !mkdtemp(outside))
                return -1;
        dir("b"); dir("b/4"); dir("b/4/e"); dir("tmp"); dir("lock"); dir("c");
        put("ccache.conf", 20);
        put("b/stats", 100);
        put("b/CACHEDIR.TAG", 40);
        put("b/4/e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 5000);
        put("b/4/e12kitvq0g3ru9p1n2pkn7j5dsgvbflM", 300);
        put("b/4/e/12kitvq0g3ru9p1n2pkn7j5dsgvbfl0W", 9000);    /* depth 3, raw */
        put("b/4/e12kitvq0g3ru9p1n2pkn7j5dsgvbflR.tmp.AbCd12.tmp", 10);
        put("tmp/cpp_stdout.tmp.x.i", 1);
        /* things that are not regular files under the root: never counted */
        snprintf(path, sizeof(path), "%s/big", outside);
        assert_int_equal(close(open(path, O_WRONLY | O_CREAT, 0644)), 0);
        assert_int_equal(truncate(path, 1 << 20), 0);
        snprintf(path, sizeof(path), "%s/c/e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", root);
        assert_int_equal(symlink(outside, path), 0);                 /* symlink to a directory */
        snprintf(path, sizeof(path), "%s/b/4/f12kitvq0g3ru9p1n2pkn7j5dsgvbflR", root);
        snprintf(path + 400, 100, "%s/big", outside);
        assert_int_equal(symlink(path + 400, path), 0);               /* symlink to a file */
        snprintf(path, sizeof(path), "%s/b/4/a12kitvq0g3ru9p1n2pkn7j5dsgvbflR", root);
        assert_int_equal(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/lock/subdir_b4.lock", root);
        assert_int_equal(symlink("host-1-1-1.1", path), 0);
        return 0;
}

static int teardown(void **state) {
        return rm_rf(root) < 0 || rm_rf(outside) < 0 ? -1 : 0;
}

static unsigned dirs_seen, stats_seen;
static int on_dir(DirId d, int fd, void *userdata) {
        dirs_seen++;
        return 0;
}
static void on_stats(DirId d, int dirfd, void *userdata) {
        stats_seen++;
}
static const ScanCallbacks callbacks = { .on_dir = on_dir, .on_stats = on_stats };

static void scan_all(Account *a, size_t budget, uint32_t gen) {
        Scan *s;
        int fd = open(root, O_RDONLY | O_DIRECTORY);
        int r, steps = 0;

        assert_true(fd >= 0);
        assert_int_equal(scan_new(a, DIR_ROOT, fd, gen, &callbacks, NULL, &s), 0);
        close(fd);
        while ((r = scan_step(s, budget)) == 1)
                steps++;
        assert_int_equal(r, 0);
        if (budget == 1)
                assert_true(steps > 10);   /* it really stopped and resumed */
        assert_int_equal(scan_progress(s)->errors, 0);
        scan_free(s);
}

static void test_exact_figures(void **state) {
        Account *a;
        const AccountTotals *t;

        for (size_t budget = 1; budget <= 4096; budget *= 4096) {
                dirs_seen = stats_seen = 0;
                assert_int_equal(account_new(&a), 0);
                scan_all(a, budget, 1);
                t = account_totals(a);
                assert_int_equal(t->files, want_files);
                assert_int_equal(t->bytes, want_bytes);
                assert_int_equal(t->kind_files[CCACHE_KIND_RESULT], 1);
                assert_int_equal(t->kind_files[CCACHE_KIND_MANIFEST], 1);
                assert_int_equal(t->kind_files[CCACHE_KIND_RAW], 1);
                assert_int_equal(t->kind_files[CCACHE_KIND_TMP], 2);
                assert_int_equal(t->kind_files[CCACHE_KIND_STATS], 1);
                assert_int_equal(t->kind_files[CCACHE_KIND_OTHER], 2);
                assert_int_equal(dirs_seen, 7);        /* root b b/4 b/4/e tmp lock c; not c's symlink */
                assert_int_equal(stats_seen, 1);
                assert_int_equal(account_dir_find(a, account_dir_find(a, DIR_ROOT, "c"),
                                                  "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR"), DIR_NONE);
                account_free(a);
        }
}

static void test_big_directory_on_two_threads(void **state) {
        char path[512], name[64];
        uint64_t files = 0, bytes = 0;
        Account *a = *state;
        Scan *s;
        int fd;

        /* Enough files in one directory buffer for the helper thread to
         * take half of them; exact all the same. */
        snprintf(path, sizeof(path), "%s/big", root);
        assert_int_equal(mkdir(path, 0777), 0);
        fd = open(path, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        for (int i = 0; i < 700; i++) {
                struct stat st;
                int f;

                snprintf(name, sizeof(name), "f%04d", i);
                f = openat(fd, name, O_WRONLY | O_CREAT, 0644);
                assert_true(f >= 0);
                assert_int_equal(write(f, path, (size_t) (i % 300) + 1), (ssize_t) (i % 300) + 1);
                assert_int_equal(fstat(f, &st), 0);
                close(f);
                files++;
                bytes += (uint64_t) st.st_blocks * 512;
        }
        assert_int_equal(scan_new(a, DIR_ROOT, fd, 1, NULL, NULL, &s), 0);
        while (scan_step(s, 64) == 1)
                ;
        assert_int_equal(account_totals(a)->files, files);
        assert_int_equal(account_totals(a)->bytes, bytes);
        assert_true(scan_progress(s)->batch > 64);    /* the last buffer went to both threads */
        scan_free(s);
        close(fd);
        snprintf(path, sizeof(path), "%s/big", root);
        assert_int_equal(rm_rf(path), 0);
}

static void test_every_file_gets_its_own_figures(void **state) {
        enum { N = 3000 };
        char path[512], name[64];
        uint64_t bytes = 0;
        Account *a = *state;
        DirId d;
        Scan *s;
        int fd;

        /* Several directory buffers of many files each: the two threads
         * claim names from one counter in turns and the results are applied
         * in the buffer's order; each file must get its own size and mtime. */
        snprintf(path, sizeof(path), "%s/many", root);
        assert_int_equal(mkdir(path, 0777), 0);
        fd = open(path, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        for (int i = 0; i < N; i++) {
                struct timespec times[2] = { { .tv_sec = 1000000 + i }, { .tv_sec = 2000000 + i } };
                struct stat st;
                int f;

                snprintf(name, sizeof(name), "f%05d", i);
                f = openat(fd, name, O_WRONLY | O_CREAT, 0644);
                assert_true(f >= 0);
                assert_int_equal(ftruncate(f, (off_t) (i % 7) * 4096 + 1), 0);
                assert_int_equal(write(f, "x", 1), 1);   /* blocks, even where ftruncate leaves a hole */
                assert_int_equal(futimens(f, times), 0);
                assert_int_equal(fstat(f, &st), 0);
                close(f);
                bytes += (uint64_t) st.st_blocks * 512;
        }
        assert_int_equal(scan_new(a, DIR_ROOT, fd, 1, NULL, NULL, &s), 0);
        while (scan_step(s, 64) == 1)
                ;
        assert_true(scan_progress(s)->batch >= 64);   /* the last buffer, at least, went to both threads */
        assert_int_equal(account_totals(a)->files, N);
        assert_int_equal(account_totals(a)->bytes, bytes);
        d = DIR_ROOT;
        for (int i = 0; i < N; i++) {
                FileInfo info;
                struct stat st;
                FileId id;

                snprintf(name, sizeof(name), "f%05d", i);
                assert_int_equal(fstatat(fd, name, &st, 0), 0);
                id = account_file_find(a, d, name);
                assert_true(id != FILE_NONE);
                assert_int_equal(account_file_info(a, id, &info), 0);
                assert_int_equal(info.blocks, (uint64_t) st.st_blocks);
                assert_int_equal(info.mtime, 2000000 + i);
        }
        scan_free(s);
        close(fd);
        assert_int_equal(rm_rf(path), 0);
}

static void test_two_scans_in_a_row(void **state) {
        Account *a = *state;
        char path[512];
        int fd;

        /* A scan of one subtree, then a full one: a file gone behind the
         * account's back before the second must still be swept by it. */
        struct stat st;

        scan_all(a, 100, 1);
        snprintf(path, sizeof(path), "%s/ccache.conf", root);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(unlink(path), 0);
        account_scan_begin(a);
        fd = open(root, O_RDONLY | O_DIRECTORY);
        {
                DirId b = account_dir_find(a, DIR_ROOT, "b");
                int bfd = openat(fd, "b", O_RDONLY | O_DIRECTORY);
                Scan *s;
                assert_int_equal(scan_new(a, b, bfd, 2, &callbacks, NULL, &s), 0);
                while (scan_step(s, 100) == 1)
                        ;
                scan_free(s);
                close(bfd);
                assert_int_equal(account_scan_sweep(a, 2), 0);
        }
        close(fd);
        account_scan_begin(a);
        scan_all(a, 100, 3);
        assert_int_equal(account_scan_sweep(a, 3), 1);
        assert_int_equal(account_file_find(a, DIR_ROOT, "ccache.conf"), FILE_NONE);
        put("ccache.conf", 20);
        want_files--;   /* put() counted it again */
        want_bytes -= (uint64_t) st.st_blocks * 512;
}

static void test_rescan_sweeps_what_is_gone(void **state) {
        Account *a = *state;
        char path[512];

        scan_all(a, 100, 1);
        /* files and a directory vanish behind the account's back */
        snprintf(path, sizeof(path), "%s/b/4/e", root);
        assert_int_equal(rm_rf(path), 0);
        snprintf(path, sizeof(path), "%s/b/4/e12kitvq0g3ru9p1n2pkn7j5dsgvbflM", root);
        assert_int_equal(rm_rf(path), 0);
        account_scan_begin(a);
        scan_all(a, 100, 2);
        assert_int_equal(account_scan_sweep(a, 2), 2);
        assert_int_equal(account_totals(a)->files, want_files - 2);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_RAW], 0);
        assert_int_equal(account_dir_find(a, account_dir_find(a, account_dir_find(a, DIR_ROOT, "b"), "4"), "e"), DIR_NONE);
}

/* Recounts the account's files the slow way: totals, and per directory. */
static void check_recount(Account *a) {
        uint64_t files = 0, bytes = 0;

        for (FileId id = 0; id < account_file_limit(a); id++) {
                FileInfo fi;
                if (account_file_info(a, id, &fi) < 0)
                        continue;
                assert_non_null(account_dir_check(a, fi.dir, fi.dir_gen));
                files++;
                bytes += fi.blocks * 512;
        }
        assert_int_equal(account_totals(a)->files, files);
        assert_int_equal(account_totals(a)->bytes, bytes);
}

static void test_directories_forgotten_during_a_walk(void **state) {
        Account *a = *state;
        Scan *s;
        DirId b, b4, z, zy;
        int fd, r;

        /* The walk is inside b/4 when an event makes the account forget b
         * (renamed, say) and two new directories take the freed DirIds. The
         * walk must leave b's frames alone: no file of b/4 lands in z/y. */
        fd = open(root, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        assert_int_equal(scan_new(a, DIR_ROOT, fd, 1, NULL, NULL, &s), 0);
        close(fd);
        b = b4 = DIR_NONE;
        while (b4 == DIR_NONE || account_dir(a, b4)->scan_gen != 1) {
                assert_int_equal(scan_step(s, 1), 1);
                b = account_dir_find(a, DIR_ROOT, "b");
                b4 = b == DIR_NONE ? DIR_NONE : account_dir_find(a, b, "4");
        }
        assert_int_equal(account_dir(a, b4)->files, 0);   /* listed next: its buffer is not read yet */
        account_dir_remove(a, b);
        account_purge_drain(a);   /* b's files purged: its DirIds free for others */
        assert_int_equal(account_dir_add(a, DIR_ROOT, "z", &z), 1);
        assert_int_equal(account_dir_add(a, z, "y", &zy), 1);
        assert_int_equal(account_dir_add(a, zy, "x", &(DirId) { 0 }), 1);
        assert_true(z == b || z == b4 || zy == b || zy == b4);   /* the DirIds came back */
        while ((r = scan_step(s, 1)) == 1)
                ;
        assert_int_equal(r, 0);
        assert_true(scan_progress(s)->dropped >= 2);
        assert_int_equal(account_dir(a, z)->files, 0);
        assert_int_equal(account_dir(a, zy)->files, 0);
        assert_int_equal(account_dir_find(a, zy, "e"), DIR_NONE);   /* b/4/e not grafted onto z/y */
        assert_int_equal(account_dir_find(a, z, "4"), DIR_NONE);
        check_recount(a);
        scan_free(s);
}

/* Makes a chain of n directories named name below rel (which exists), each
 * made relative to the one above (the path outgrows PATH_MAX), with a file
 * of size bytes in each tenth one and the last. Returns the path's length. */
static size_t deep_chain(const char *rel, const char *name, int n, size_t size) {
        char path[512];
        size_t len;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        len = strlen(path);
        fd = open(path, O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        for (int i = 1; i <= n; i++) {
                int sub;

                assert_int_equal(mkdirat(fd, name, 0777), 0);
                sub = openat(fd, name, O_RDONLY | O_DIRECTORY);
                assert_true(sub >= 0);
                close(fd);
                fd = sub;
                len += 1 + strlen(name);
                if (i % 10 == 0 || i == n) {
                        struct stat st;
                        int f = openat(fd, "f", O_WRONLY | O_CREAT, 0644);

                        assert_true(f >= 0);
                        for (size_t k = 0; k < size; k++)
                                assert_int_equal(write(f, "y", 1), 1);
                        assert_int_equal(fstat(f, &st), 0);
                        close(f);
                        want_files++;
                        want_bytes += (uint64_t) st.st_blocks * 512;
                }
        }
        close(fd);
        return len;
}

static void test_deep_trees_are_counted(void **state) {
        uint64_t files = want_files, bytes = want_bytes;
        char path[256];
        Account *a;

        /* what the tree holds now (earlier tests removed some) */
        assert_int_equal(account_new(&a), 0);
        scan_all(a, 4096, 1);
        want_files = account_totals(a)->files;
        want_bytes = account_totals(a)->bytes;
        account_free(a);

        /* 60 levels; and 30 of 200-character names, longer than PATH_MAX */
        char longname[201];
        memset(longname, 'n', 200);
        longname[200] = '\0';
        dir("deep");
        deep_chain("deep", "d", 60, 3000);
        assert_true(deep_chain("deep", longname, 30, 100) > 4096);
        for (size_t budget = 1; budget <= 4096; budget *= 4096) {
                assert_int_equal(account_new(&a), 0);
                scan_all(a, budget, 1);
                assert_int_equal(account_totals(a)->files, want_files);
                assert_int_equal(account_totals(a)->bytes, want_bytes);
                account_free(a);
        }
        snprintf(path, sizeof(path), "%s/deep", root);
        assert_int_equal(rm_rf(path), 0);
        want_files = files;
        want_bytes = bytes;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exact_figures),
                cmocka_unit_test_setup_teardown(test_big_directory_on_two_threads, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_every_file_gets_its_own_figures, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_two_scans_in_a_row, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_rescan_sweeps_what_is_gone, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_directories_forgotten_during_a_walk, setup_account, teardown_account),
                cmocka_unit_test(test_deep_trees_are_counted),
        };
        return cmocka_run_group_tests_name("scan", tests, setup, teardown);
}
