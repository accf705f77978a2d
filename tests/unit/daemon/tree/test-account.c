/* SPDX-License-Identifier: MIT */
/* The accounting table: exact totals through inserts, updates, removals,
 * directory removal and scan sweeps, checked against a plain recount. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fixture.h"
#include "tree/account.h"

static const char b32[] = FIXTURE_B32;

/* Recounts every file the slow way and compares with the running totals. */
static void check_totals(Account *a) {
        const AccountTotals *t = account_totals(a);
        uint64_t files = 0, bytes = 0, kf[_CCACHE_KIND_MAX] = { 0 };

        for (FileId id = 0; id < account_file_limit(a); id++) {
                FileInfo fi;
                if (account_file_info(a, id, &fi) < 0)
                        continue;
                files++;
                bytes += fi.blocks * 512;
                kf[fi.kind]++;
                assert_non_null(account_dir(a, fi.dir));
        }
        assert_int_equal(t->files, files);
        assert_int_equal(t->bytes, bytes);
        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                assert_int_equal(t->kind_files[k], kf[k]);
}

static void test_insert_update_remove(void **state) {
        Account *a = *state;
        DirId l1, l2, tmp;
        char name[64], back[64];
        FileId f;

        assert_int_equal(account_dir_add(a, DIR_ROOT, "b", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "4", &l2), 1);
        assert_int_equal(account_dir_add(a, l1, "4", &l2), 0);            /* found, not added */
        assert_int_equal(account_dir_add(a, DIR_ROOT, "tmp", &tmp), 1);
        assert_true(account_dir(a, l2)->hex);
        assert_false(account_dir(a, tmp)->hex);
        assert_true(account_dir(a, tmp)->in_tmp);

        entry_name(1, 'R', name);
        assert_int_equal(account_file_set(a, l2, name, 8, 1000), 1);
        assert_int_equal(account_file_set(a, l2, name, 16, 2000), 2);     /* update in place */
        assert_int_equal(account_file_set(a, l2, name, 16, 2000), 0);     /* nothing new */
        assert_int_equal(account_totals(a)->files, 1);
        assert_int_equal(account_totals(a)->bytes, 16 * 512);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_RESULT], 1);
        f = account_file_find(a, l2, name);
        assert_int_not_equal(f, FILE_NONE);
        assert_int_equal(account_file_name(a, f, back, sizeof(back)), 0);
        assert_string_equal(back, name);

        /* the same name in another directory is another file */
        assert_int_equal(account_file_set(a, l1, name, 1, 1), 1);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_OTHER], 1);  /* depth 1: not an entry */

        assert_int_equal(account_file_set(a, l1, "stats", 8, 5), 1);
        assert_int_equal(account_file_set(a, tmp, "cpp_stdout.tmp.AbCdEf.i.with.a.long.name", 8, 5), 1);
        assert_int_equal(account_file_set(a, DIR_ROOT, "ccache.conf", 8, 5), 1);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_STATS], 1);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_TMP], 1);
        f = account_file_find(a, tmp, "cpp_stdout.tmp.AbCdEf.i.with.a.long.name");
        assert_int_equal(account_file_name(a, f, back, sizeof(back)), 0);
        assert_string_equal(back, "cpp_stdout.tmp.AbCdEf.i.with.a.long.name");
        assert_int_equal(account_file_name(a, f, back, 10), -ENAMETOOLONG);
        check_totals(a);

        assert_int_equal(account_file_remove(a, l2, name), 1);
        assert_int_equal(account_file_remove(a, l2, name), 0);
        assert_int_equal(account_file_find(a, l2, name), FILE_NONE);
        assert_int_equal(account_totals(a)->files, 4);
        check_totals(a);
}

static void test_many_files_and_dir_removal(void **state) {
        enum { N = 200000 };
        Account *a = *state;
        DirId l2[256];
        char name[64], path[64];

        for (unsigned i = 0; i < 256; i++) {
                DirId l1;
                char n1[2] = { b32[i / 16], 0 }, n2[2] = { b32[i % 16], 0 };
                assert_true(account_dir_add(a, DIR_ROOT, n1, &l1) >= 0);
                assert_int_equal(account_dir_add(a, l1, n2, &l2[i]), 1);
        }
        assert_int_equal(account_dir_path(a, l2[0xb4], path, sizeof(path)), 0);
        assert_string_equal(path, "b/4");
        assert_int_equal(account_dir_path(a, l2[0xb4], path, 3), -ENAMETOOLONG);

        for (unsigned i = 0; i < N; i++) {
                entry_name(i, i % 3 ? 'R' : 'M', name);
                assert_int_equal(account_file_set(a, l2[i % 256], name, i % 100, i), 1);
        }
        assert_int_equal(account_totals(a)->files, N);
        /* every third one removed, then re-found or not */
        for (unsigned i = 0; i < N; i += 3) {
                entry_name(i, 'M', name);
                assert_int_equal(account_file_remove(a, l2[i % 256], name), 1);
        }
        for (unsigned i = 0; i < N; i++) {
                entry_name(i, i % 3 ? 'R' : 'M', name);
                assert_true((account_file_find(a, l2[i % 256], name) == FILE_NONE) == (i % 3 == 0));
        }
        check_totals(a);

        /* removing level-1 directory "b" drops its 16 subdirectories' files */
        uint64_t before = account_totals(a)->files, in_b = 0;
        for (unsigned i = 0xb0; i <= 0xbf; i++)
                in_b += account_dir(a, l2[i])->files;
        account_dir_remove(a, account_dir_find(a, DIR_ROOT, "b"));
        assert_int_equal(account_totals(a)->files, before - in_b);
        assert_null(account_dir(a, l2[0xb4]));
        assert_int_equal(account_dir_find(a, DIR_ROOT, "b"), DIR_NONE);
        check_totals(a);

        /* freed slots are reused, and the span covers entries only */
        int64_t lo, hi;
        account_entry_mtime_span(a, &lo, &hi);
        assert_true(lo >= 1 && hi == N - 1);
        account_clear(a);
        assert_int_equal(account_totals(a)->files, 0);
        assert_int_equal(account_totals(a)->dirs, 1);
        account_entry_mtime_span(a, &lo, &hi);
        assert_int_equal(hi, 0);
}

/* The index grows in place, rebuilt from the records: every file stays
 * found, those of a forgotten directory (dropped at the next totals) too,
 * and linked names keep their inode. */
static void test_index_grows_in_place(void **state) {
        enum { N = 30000 };
        Account *a = *state;
        DirId l1, d1, d2;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "c", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "1", &d1), 1);
        assert_int_equal(account_dir_add(a, l1, "2", &d2), 1);
        for (unsigned i = 0; i < 3000; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, d2, name, 1, i), 1);
                snprintf(name, sizeof(name), "other-%u-with-a-name-too-long-for-a-record", i);   /* on the heap */
                assert_int_equal(account_file_set_inode(a, d1, name, 3, i, 100 + i, 2, false), 1);
        }
        account_dir_remove(a, d2);   /* its files wait for the next totals, in the index */
        for (unsigned i = 0; i < N; i++) {   /* the index grows: 1024 slots to past N */
                entry_name(N + i, 'M', name);
                assert_int_equal(account_file_set(a, d1, name, 2, i), 1);
        }
        for (unsigned i = 0; i < N; i++) {
                entry_name(N + i, 'M', name);
                assert_true(account_file_find(a, d1, name) != FILE_NONE);
        }
        for (unsigned i = 0; i < 3000; i++) {
                snprintf(name, sizeof(name), "other-%u-with-a-name-too-long-for-a-record", i);
                assert_int_equal(account_file_set_inode(a, d1, name, 3, i, 100 + i, 2, false), 0);
        }
        assert_int_equal(account_totals(a)->files, N + 3000);
        assert_int_equal(account_totals(a)->bytes, (uint64_t) (2 * N + 3 * 3000) * 512);
        check_totals(a);
        assert_true(account_index_longest_run(a) < 1000);
}

static void test_scan_sweep(void **state) {
        Account *a = *state;
        DirId d1, d2, sub;
        char n1[64], n2[64], n3[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "1", &d1), 1);
        assert_int_equal(account_dir_add(a, d1, "2", &d2), 1);
        assert_int_equal(account_dir_add(a, d2, "3", &sub), 1);
        entry_name(1, 'R', n1);
        entry_name(2, 'R', n2);
        entry_name(3, 'R', n3);
        account_file_set(a, d2, n1, 1, 1);
        account_file_set(a, d2, n2, 1, 1);
        account_file_set(a, d1, n3, 1, 1);

        /* a scan of d2 sees n1 but not n2, nor subdirectory 3; d1 is not listed */
        account_scan_begin(a);
        account_dir(a, d2)->scan_gen = 7;
        account_file_set(a, d2, n1, 2, 2);
        assert_int_equal(account_scan_sweep(a, 7), 1);
        assert_int_not_equal(account_file_find(a, d2, n1), FILE_NONE);
        assert_int_equal(account_file_find(a, d2, n2), FILE_NONE);
        assert_int_not_equal(account_file_find(a, d1, n3), FILE_NONE);  /* d1 not listed: kept */
        assert_null(account_dir(a, sub));
        assert_int_equal(account_totals(a)->files, 2);
        check_totals(a);

        /* a directory an event added under d2 after the scan listed d2 is
         * not one the listing missed: it stays (its own scan is queued) */
        DirId late, old;
        assert_int_equal(account_dir_add(a, d2, "old", &old), 1);
        account_scan_begin(a);
        account_dir(a, d2)->scan_gen = 8;
        assert_int_equal(account_dir_add(a, d2, "late", &late), 1);
        account_scan_sweep(a, 8);
        assert_non_null(account_dir(a, late));
        assert_null(account_dir(a, old));
}

static unsigned hook_calls;
static void count_hook(DirId d, Dir *dir, void *userdata) {
        hook_calls++;
        assert_ptr_equal(userdata, &hook_calls);
}

static void test_dir_hook_and_stats(void **state) {
        Account *a = *state;
        DirId d1, d2;

        account_set_dir_hook(a, count_hook, &hook_calls);
        account_dir_add(a, DIR_ROOT, "a", &d1);
        account_dir_add(a, d1, "b", &d2);
        account_dir_set_stats(a, d1, 10, 3);
        account_dir_set_stats(a, d2, 5, 1);
        account_dir_set_stats(a, d2, 6, 2);
        assert_int_equal(account_totals(a)->hits, 16);
        assert_int_equal(account_totals(a)->misses, 5);
        account_dir_remove(a, d2);
        assert_int_equal(hook_calls, 1);
        assert_int_equal(account_totals(a)->hits, 10);
        account_clear(a);
        assert_int_equal(hook_calls, 3);   /* d1 and the root */
        assert_int_equal(account_totals(a)->hits, 0);
        account_set_dir_hook(a, NULL, NULL);
}

static void test_dir_gen_tells_reused_ids_apart(void **state) {
        Account *a = *state;
        DirId x, xs, y, ys;
        uint32_t xgen, xsgen;
        uint64_t released;
        FileInfo fi;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "x", &x), 1);
        assert_int_equal(account_dir_add(a, x, "s", &xs), 1);
        xgen = account_dir(a, x)->gen;
        xsgen = account_dir(a, xs)->gen;
        assert_int_not_equal(xgen, 0);
        assert_int_not_equal(xgen, xsgen);
        assert_ptr_equal(account_dir_check(a, xs, xsgen), account_dir(a, xs));
        entry_name(1, 'R', name);
        assert_int_equal(account_file_set(a, xs, name, 8, 100), 1);
        assert_int_equal(account_file_info(a, account_file_find(a, xs, name), &fi), 0);
        assert_int_equal(fi.dir, xs);
        assert_int_equal(fi.dir_gen, xsgen);

        /* x renamed to y: x forgotten, y added in the freed slots */
        released = account_dirs_released(a);
        account_dir_remove(a, x);
        assert_int_equal(account_dirs_released(a), released + 2);
        assert_null(account_dir_check(a, x, xgen));
        /* x/s's file is gone for everyone at once, and after the purge
         * the DirIds are free for others */
        assert_int_equal(account_file_info(a, account_file_find(a, xs, name), &fi), -ENOENT);
        assert_int_equal(account_totals(a)->files, 0);
        account_purge_drain(a);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "y", &y), 1);
        assert_int_equal(account_dir_add(a, y, "s", &ys), 1);
        assert_true((y == x || y == xs) && (ys == x || ys == xs));   /* the same DirIds again */
        assert_null(account_dir_check(a, x, xgen));                   /* but not the same directories */
        assert_null(account_dir_check(a, xs, xsgen));
        assert_non_null(account_dir_check(a, ys, account_dir(a, ys)->gen));
        assert_int_equal(account_file_set(a, ys, name, 8, 100), 1);
        assert_int_equal(account_file_info(a, account_file_find(a, ys, name), &fi), 0);
        assert_true(fi.dir != xs || fi.dir_gen != xsgen);

        /* a clear forgets everything but the root, which keeps its gen */
        uint32_t rootgen = account_dir(a, DIR_ROOT)->gen;
        released = account_dirs_released(a);
        account_clear(a);
        assert_true(account_dirs_released(a) > released);
        assert_non_null(account_dir_check(a, DIR_ROOT, rootgen));
        assert_int_equal(account_dir_add(a, DIR_ROOT, "y", &y), 1);
        assert_true(account_dir(a, y)->gen != xgen && account_dir(a, y)->gen != xsgen);
}

/* Work per directory is O(1): a user's 100k directories under one parent,
 * each with a file, added, found, swept or removed one by one, in a few CPU
 * seconds at most (the sibling search, the sweep's restarts and a pass over
 * all files per removed directory made this hours). */
/* A user plants entry names that differ only in their last characters:
 * packed, only the last of the 20 bytes differ. The index's hash must still
 * spread them (it once folded only the first 16 bytes: every one of them in
 * one run, each insert probing all the others). */
static void test_planted_names_do_not_pile_up(void **state) {
        enum { N = 20000 };
        Account *a = *state;
        DirId l1, l2;
        char name[40];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "0", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "0", &l2), 1);
        for (unsigned i = 0; i < N; i++) {
                /* 2 hex + 24 fixed base32hex + 5 varying: 31 chars, then R */
                memcpy(name, "00aaaaaaaaaaaaaaaaaaaaaaaa", 26);
                for (unsigned k = 0, v = i; k < 5; k++, v /= 32)
                        name[26 + k] = FIXTURE_B32[v % 32];
                name[31] = 'R';
                name[32] = '\0';
                assert_int_equal(account_file_set(a, l2, name, 8, i), 1);
        }
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_RESULT], N);
        /* Piled up, the run is all N. Spread by the keyed hash, the longest
         * run at this load is 75-334 (2000 random seeds; median ~125, each
         * further 25 about 2.5 times rarer): 200 failed one run in 40. */
        assert_true(account_index_longest_run(a) < N / 20);
}

static void test_many_directories_no_quadratic_work(void **state) {
        enum { N = 100000 };
        static DirId ids[N];
        clock_t start = clock();
        Account *a = *state;
        DirId x;
        char name[32];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "x", &x), 1);
        for (unsigned i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "d%u", i);
                assert_int_equal(account_dir_add(a, x, name, &ids[i]), 1);
                assert_int_equal(account_file_set(a, ids[i], "f", 8, i), 1);
        }
        for (unsigned i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "d%u", i);
                assert_int_equal(account_dir_find(a, x, name), ids[i]);
        }
        assert_int_equal(account_dir_find(a, x, "d100000"), DIR_NONE);
        assert_int_equal(account_totals(a)->dirs, N + 2);
        /* half swept as unlisted by a scan of x, half removed one by one */
        account_scan_begin(a);
        account_dir(a, x)->scan_gen = 9;
        for (unsigned i = 0; i < N; i += 2)
                account_dir(a, ids[i])->scan_gen = 9, account_file_set(a, ids[i], "f", 8, i);
        assert_int_equal(account_scan_sweep(a, 9), N / 2);
        assert_int_equal(account_totals(a)->files, N / 2);
        for (unsigned i = 0; i < N; i += 2)
                account_dir_remove(a, ids[i]);
        assert_int_equal(account_totals(a)->files, 0);
        assert_int_equal(account_totals(a)->dirs, 2);
        for (unsigned i = 0; i < N; i += 2) {
                snprintf(name, sizeof(name), "d%u", i);
                assert_int_equal(account_dir_find(a, x, name), DIR_NONE);
        }
        check_totals(a);
        assert_true((double) (clock() - start) / CLOCKS_PER_SEC < 10);
}

/* 30 names of one 20 MB inode are 30 files and 20 MB, as du says; the
 * bytes stay while any name does, follow the inode's size, and go with the
 * last name. */
static void test_hard_links_count_once(void **state) {
        enum { BLOCKS = 20 * 1000 * 1000 / 512 };
        Account *a = *state;
        DirId d1, d2;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "1", &d1), 1);
        assert_int_equal(account_dir_add(a, d1, "2", &d2), 1);
        for (unsigned i = 0; i < 30; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set_inode(a, i % 2 ? d1 : d2, name, BLOCKS, 100, 777, 30, false), 1);
        }
        assert_int_equal(account_file_set(a, d2, "alone", 8, 100), 1);
        assert_int_equal(account_totals(a)->files, 31);
        assert_int_equal(account_totals(a)->bytes, (uint64_t) (BLOCKS + 8) * 512);
        /* a rescan sees the same again: nothing changes */
        entry_name(4, 'R', name);
        assert_int_equal(account_file_set_inode(a, d2, name, BLOCKS, 100, 777, 30, false), 0);
        assert_int_equal(account_totals(a)->bytes, (uint64_t) (BLOCKS + 8) * 512);
        /* the inode grows: seen through one name, counted once */
        assert_int_equal(account_file_set_inode(a, d2, name, BLOCKS + 16, 101, 777, 30, false), 2);
        assert_int_equal(account_totals(a)->bytes, (uint64_t) (BLOCKS + 16 + 8) * 512);
        /* names go: the bytes stay until the last one */
        for (unsigned i = 0; i < 29; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_remove(a, i % 2 ? d1 : d2, name), 1);
                assert_int_equal(account_totals(a)->bytes, (uint64_t) (BLOCKS + 16 + 8) * 512);
        }
        assert_int_equal(account_totals(a)->files, 2);
        /* the last name, now with one link: counted on its own, still once */
        entry_name(29, 'R', name);
        assert_int_equal(account_file_set_inode(a, d1, name, BLOCKS + 16, 101, 777, 1, false), 2);   /* its record had the old size */
        assert_int_equal(account_totals(a)->bytes, (uint64_t) (BLOCKS + 16 + 8) * 512);
        assert_int_equal(account_file_remove(a, d1, name), 1);
        assert_int_equal(account_totals(a)->bytes, 8 * 512);
        /* a directory of linked names removed at once */
        for (unsigned i = 0; i < 4; i++) {
                entry_name(100 + i, 'M', name);
                assert_int_equal(account_file_set_inode(a, d2, name, 80, 100, 999, 4, false), 1);
        }
        assert_int_equal(account_totals(a)->bytes, (8 + 80) * 512);
        /* seen through events: a file recorded with one link ("src") gets
         * three more names; the new inode's bytes wait for a full scan rather
         * than count twice, and count once when it comes */
        assert_int_equal(account_file_set(a, d1, "src", 40, 100), 1);
        for (unsigned i = 0; i < 3; i++) {
                snprintf(name, sizeof(name), "ln%u", i);
                assert_int_equal(account_file_set_inode(a, d1, name, 40, 100, 555, 4, true), 1);
        }
        assert_int_equal(account_links_unsure(a), 1);
        assert_int_equal(account_totals(a)->bytes, (8 + 80 + 40) * 512);
        assert_int_equal(account_file_set_inode(a, d1, "ln1", 40, 100, 555, 4, false), 0);
        assert_int_equal(account_file_set_inode(a, d1, "src", 40, 100, 555, 4, false), 0);
        assert_int_equal(account_links_unsure(a), 0);
        assert_int_equal(account_totals(a)->bytes, (8 + 80 + 40) * 512);
        assert_int_equal(account_totals(a)->files, 4 + 1 + 4);
        account_dir_remove(a, d1);
        assert_int_equal(account_totals(a)->files, 0);
        assert_int_equal(account_totals(a)->bytes, 0);
        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                assert_int_equal(account_totals(a)->kind_bytes[k], 0);
        assert_true(account_memory(a) > 0);
}

/* memory_bytes counts the names kept on the heap: directories' and files'
 * that do not fit a record. */
static void test_memory_counts_heap_names(void **state) {
        char name[256];
        Account *a = *state;
        DirId d;
        size_t before;

        assert_int_equal(account_dir_add(a, DIR_ROOT, "x", &d), 1);
        for (int i = 0; i < 1000; i++) {   /* warm the tables up */
                snprintf(name, sizeof(name), "w%d", i);
                account_file_set(a, d, name, 1, 1);
        }
        before = account_memory(a);
        memset(name, 'n', 200);
        for (int i = 0; i < 100; i++) {
                snprintf(name + 200, sizeof(name) - 200, "%03d", i);
                assert_int_equal(account_file_set(a, d, name, 1, 1), 1);
                assert_int_equal(account_dir_add(a, DIR_ROOT, name, &(DirId) { 0 }), 1);
        }
        assert_true(account_memory(a) >= before + 2 * 100 * 204);
}

/* The working set: entries only, by mtime, each window exact at its edge,
 * and nothing of a forgotten directory. */
static void test_entries_since(void **state) {
        const int64_t since[] = { 3000, 2000, 1000, 0 }, shuffled[] = { 1000, 5000, 3000, 0, 2000, 1000 };
        uint64_t files[6], bytes[6], tag_files[256], tag_bytes[256];
        Account *a = *state;
        DirId l1, l2, gone;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "b", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "4", &l2), 1);
        assert_int_equal(account_dir_add(a, l1, "5", &gone), 1);
        for (int i = 0; i < 40; i++) {      /* mtimes 100, 200, ... 4000; i + 1 blocks */
                entry_name(i, i % 2 ? 'R' : 'M', name);
                assert_int_equal(account_file_set(a, l2, name, (uint64_t) i + 1, (i + 1) * 100), 1);
        }
        entry_name(99, 'R', name);
        assert_int_equal(account_file_set(a, gone, name, 1000, 4000), 1);
        assert_int_equal(account_file_set(a, l1, "stats", 7, 4000), 1);            /* not an entry */
        assert_int_equal(account_file_set(a, DIR_ROOT, "ccache.conf", 7, 4000), 1);
        account_dir_remove(a, gone);

        account_entry_counts(a, since, 4, files, bytes, tag_files, tag_bytes);
        /* mtime >= 3000: i = 29..39, 11 entries of 30..40 blocks */
        assert_int_equal(files[0], 11);
        assert_int_equal(bytes[0], (30 + 40) * 11 / 2 * 512);
        assert_int_equal(files[1], 21);                 /* i = 19..39 */
        assert_int_equal(bytes[1], (20 + 40) * 21 / 2 * 512);
        assert_int_equal(files[2], 31);
        assert_int_equal(files[3], 40);
        assert_int_equal(bytes[3], 40 * 41 / 2 * 512);
        assert_int_equal(tag_files[0], 40);             /* no tag set: every entry, nothing else */
        assert_int_equal(tag_bytes[0], 40 * 41 / 2 * 512);
        /* the windows in any order, one of them twice, one after every entry */
        account_entry_counts(a, shuffled, 6, files, bytes, tag_files, tag_bytes);
        assert_int_equal(files[0], 31);                 /* since 1000: i = 9..39 */
        assert_int_equal(bytes[0], (10 + 40) * 31 / 2 * 512);
        assert_int_equal(files[1], 0);                  /* since 5000 */
        assert_int_equal(bytes[1], 0);
        assert_int_equal(files[2], 11);                 /* since 3000 */
        assert_int_equal(files[3], 40);                 /* since 0 */
        assert_int_equal(files[4], 21);                 /* since 2000 */
        assert_int_equal(bytes[4], (20 + 40) * 21 / 2 * 512);
        assert_int_equal(files[5], 31);                 /* since 1000 again */
        assert_int_equal(bytes[5], bytes[0]);
}

/* Names seen in a share written by ccache 4.7.5 (file:share, layout subdirs
 * and flat) and a 4.13 key. */
#define REMOTE_SUBDIRS_NAME "6bg4jbcs59arpufnrhpoe6vhj3ojn4a"        /* in share/a1/ */
#define REMOTE_FLAT_NAME    "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a"      /* in share/ */
#define V413_KEY            "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b"

/* Records name in d, checks its kind, and that the account gives back the
 * exact name and finds the file by it. */
static void expect_kind(Account *a, DirId d, const char *name, CcacheKind kind) {
        char back[256];
        FileInfo fi;
        FileId f;

        assert_int_equal(account_file_set(a, d, name, 8, 1000), 1);
        f = account_file_find(a, d, name);
        assert_int_not_equal(f, FILE_NONE);
        assert_int_equal(account_file_info(a, f, &fi), 0);
        if (fi.kind != kind)
                fail_msg("\"%s\": kind %s, want %s", name, ccache_kind_name(fi.kind), ccache_kind_name(kind));
        /* The scans' clock evidence asks the same by name alone. */
        assert_int_equal(account_name_is_entry(a, d, name), ccache_kind_is_entry(kind));
        assert_int_equal(account_file_name(a, f, back, sizeof(back)), 0);
        assert_string_equal(back, name);
}

static void test_remote_subdirs_layout(void **state) {
        DirId hex, deep, upper, one, three, other, tmp, lock;
        Account *a = *state;

        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_LOCAL);
        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_REMOTE_SUBDIRS), 0);
        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_REMOTE_SUBDIRS);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &hex), 1);
        assert_int_equal(account_dir_add(a, hex, "b2", &deep), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "A1", &upper), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a", &one), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1b", &three), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "zz", &other), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "tmp", &tmp), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "lock", &lock), 1);
        /* the entry directories, and only they, are hex; nothing is tmp/ or lock/ */
        assert_true(account_dir(a, hex)->hex);
        for (DirId d = DIR_ROOT; d < account_dir_limit(a); d++) {
                assert_false(account_dir(a, d)->in_tmp);
                assert_false(account_dir(a, d)->in_lock);
                assert_int_equal(account_dir(a, d)->hex, d == hex);
                assert_int_equal(account_entry_dir(a, d), d == hex);
        }

        expect_kind(a, hex, REMOTE_SUBDIRS_NAME, CCACHE_KIND_ENTRY);
        expect_kind(a, hex, V413_KEY + 2, CCACHE_KIND_ENTRY);
        for (int c = 0; c < 16; c++) {   /* every digit after the directory's two */
                char name[40] = REMOTE_SUBDIRS_NAME;
                name[0] = b32[c];
                name[30] = b32[2 * c];
                expect_kind(a, hex, name, CCACHE_KIND_ENTRY);
        }
        expect_kind(a, hex, REMOTE_SUBDIRS_NAME "R", CCACHE_KIND_OTHER);     /* a local name */
        expect_kind(a, hex, "6bg4jbcs59arpufnrhpoe6vhj3ojn4b", CCACHE_KIND_OTHER);   /* padding bit set */
        expect_kind(a, hex, REMOTE_FLAT_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, hex, V413_KEY, CCACHE_KIND_OTHER);
        expect_kind(a, hex, "stats", CCACHE_KIND_OTHER);                     /* no stats files here */
        expect_kind(a, hex, REMOTE_SUBDIRS_NAME ".tmp.AbC123", CCACHE_KIND_TMP);
        expect_kind(a, DIR_ROOT, "CACHEDIR.TAG", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, ".cachekeeper.lock", CCACHE_KIND_OTHER);    /* the keeper's own */
        expect_kind(a, DIR_ROOT, REMOTE_FLAT_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, "stats", CCACHE_KIND_OTHER);
        expect_kind(a, deep, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, deep, REMOTE_SUBDIRS_NAME + 2, CCACHE_KIND_OTHER);
        expect_kind(a, upper, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, one, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, three, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, other, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, tmp, "leftover", CCACHE_KIND_OTHER);                  /* tmp/ is nothing special */
        expect_kind(a, tmp, "x.tmp.y", CCACHE_KIND_TMP);
        expect_kind(a, lock, "stats.lock", CCACHE_KIND_OTHER);
        check_totals(a);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_ENTRY], 18);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_STATS], 0);
        /* removed by name: the packed form is found again */
        assert_int_equal(account_file_remove(a, hex, REMOTE_SUBDIRS_NAME), 1);
        assert_int_equal(account_file_find(a, hex, REMOTE_SUBDIRS_NAME), FILE_NONE);
        check_totals(a);
}

static void test_remote_flat_layout(void **state) {
        DirId hex, sub;
        Account *a = *state;

        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_REMOTE_FLAT), 0);
        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_REMOTE_FLAT);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &hex), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a", &sub), 1);
        assert_false(account_dir(a, hex)->hex);
        assert_false(account_dir(a, sub)->hex);
        assert_true(account_entry_dir(a, DIR_ROOT));
        assert_false(account_entry_dir(a, hex));
        assert_false(account_entry_dir(a, sub));

        expect_kind(a, DIR_ROOT, REMOTE_FLAT_NAME, CCACHE_KIND_ENTRY);
        expect_kind(a, DIR_ROOT, V413_KEY, CCACHE_KIND_ENTRY);
        for (int c = 0; c < 16; c++) {   /* every first char (the top bits), every even last */
                char name[40] = REMOTE_FLAT_NAME;
                name[0] = b32[c];
                name[32] = b32[2 * c];
                expect_kind(a, DIR_ROOT, name, CCACHE_KIND_ENTRY);
        }
        expect_kind(a, DIR_ROOT, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, REMOTE_FLAT_NAME "R", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, "a16bg4jbcs59arpufnrhpoe6vhj3ojn4R", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, V413_KEY + 2, CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, V413_KEY "_0f", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, "CACHEDIR.TAG", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, "stats", CCACHE_KIND_OTHER);
        expect_kind(a, DIR_ROOT, REMOTE_FLAT_NAME ".tmp.AbC123", CCACHE_KIND_TMP);
        expect_kind(a, hex, REMOTE_SUBDIRS_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, hex, REMOTE_FLAT_NAME, CCACHE_KIND_OTHER);
        expect_kind(a, sub, REMOTE_FLAT_NAME, CCACHE_KIND_OTHER);
        check_totals(a);
        assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_ENTRY], 18);
}

/* The layout is chosen while the account is empty, and stays. */
static void test_set_layout_only_when_empty(void **state) {
        Account *a = *state;
        DirId d;

        assert_int_equal(account_set_layout(a, _ACCOUNT_LAYOUT_MAX), -EINVAL);
        assert_int_equal(account_set_layout(a, (AccountLayout) -1), -EINVAL);
        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_LOCAL);

        assert_int_equal(account_file_set(a, DIR_ROOT, REMOTE_FLAT_NAME, 8, 1), 1);
        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_REMOTE_FLAT), -EBUSY);
        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_LOCAL);
        assert_int_equal(account_file_remove(a, DIR_ROOT, REMOTE_FLAT_NAME), 1);

        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &d), 1);
        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_REMOTE_SUBDIRS), -EBUSY);
        assert_int_equal(account_file_set(a, d, "x", 8, 1), 1);
        account_dir_remove(a, d);   /* its file waits for a purge: gone all the same */
        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_REMOTE_SUBDIRS), 0);

        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &d), 1);
        assert_int_equal(account_file_set(a, d, REMOTE_SUBDIRS_NAME, 8, 1), 1);
        account_clear(a);
        assert_int_equal(account_layout(a), ACCOUNT_LAYOUT_REMOTE_SUBDIRS);   /* clear keeps it */
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &d), 1);
        assert_true(account_dir(a, d)->hex);
        account_clear(a);
        assert_int_equal(account_set_layout(a, ACCOUNT_LAYOUT_LOCAL), 0);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &d), 1);
        assert_false(account_dir(a, d)->hex);
}

/* An entry costs the same in every layout: the File record does not grow. */
static void test_remote_memory_per_file(void **state) {
        enum { N = 2 * 65536 };   /* two full chunks of records */
        static const AccountLayout layouts[] = { ACCOUNT_LAYOUT_LOCAL, ACCOUNT_LAYOUT_REMOTE_SUBDIRS,
                                                 ACCOUNT_LAYOUT_REMOTE_FLAT };
        size_t grew[3];

        for (size_t l = 0; l < 3; l++) {
                Account *a;
                DirId d = DIR_ROOT;
                size_t before;

                assert_int_equal(account_new(&a), 0);
                assert_int_equal(account_set_layout(a, layouts[l]), 0);
                if (layouts[l] == ACCOUNT_LAYOUT_LOCAL) {
                        assert_int_equal(account_dir_add(a, DIR_ROOT, "a", &d), 1);
                        assert_int_equal(account_dir_add(a, d, "1", &d), 1);
                } else if (layouts[l] == ACCOUNT_LAYOUT_REMOTE_SUBDIRS)
                        assert_int_equal(account_dir_add(a, DIR_ROOT, "a1", &d), 1);
                before = account_memory(a);
                for (unsigned i = 0; i < N; i++) {
                        char name[48], key[48];

                        /* legacy and 4.13 names, all packed: 2 key chars in the path but
                         * flat; keys spread as digests do (the index hashes their bits) */
                        if (i % 2) {
                                uint64_t x = i * 0x9e3779b97f4a7c15ULL;
                                snprintf(key, sizeof(key), "a1%016llx%016llx%06x", (unsigned long long) x,
                                         (unsigned long long) (x * 0xbf58476d1ce4e5b9ULL), i);
                        } else {
                                entry_name(i, 'R', key + 2);
                                key[0] = 'a', key[1] = '1';
                                key[32] = b32[(i % 16) * 2];   /* the digest's last char: padding bit 0 */
                                key[33] = layouts[l] == ACCOUNT_LAYOUT_LOCAL ? 'R' : '\0';
                                key[34] = '\0';
                        }
                        snprintf(name, sizeof(name), "%s", layouts[l] == ACCOUNT_LAYOUT_REMOTE_FLAT ? key : key + 2);
                        assert_int_equal(account_file_set(a, d, name, 8, 1000), 1);
                }
                assert_int_equal(account_totals(a)->files, N);
                assert_int_equal(account_totals(a)->kind_files[CCACHE_KIND_OTHER], 0);
                grew[l] = account_memory(a) - before;
                account_free(a);
        }
        assert_int_equal(grew[1], grew[0]);
        assert_int_equal(grew[2], grew[0]);
        assert_true(grew[0] <= (size_t) N * (32 + 1 + 8));   /* record, tag, index slots */
}

/* A file's size in blocks is exact at any size: those of 8 GiB and more
 * (past what a record holds) too, through updates both ways, hard links,
 * the working set, the passes by tag and removal; the tag byte stays with
 * its file through updates and starts at 0 for a new one in a reused slot. */
static void test_big_files_and_tags(void **state) {
        static const uint64_t sizes[] = { 8, (1u << 24) - 2, (1u << 24) - 1, 1u << 24, UINT32_MAX - 1, 12345678901ULL };
        enum { N = sizeof(sizes) / sizeof(sizes[0]) };
        Account *a = *state;
        uint64_t files[256], bytes[256], ws_files[1], ws_bytes[1], sum = 0;
        const int64_t since = 0;
        DirId l1, d;
        char name[64];
        FileInfo fi;

        assert_int_equal(account_dir_add(a, DIR_ROOT, "a", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "b", &d), 1);
        for (unsigned round = 0; round < 3; round++) {
                sum = 0;
                for (unsigned i = 0; i < 40; i++) {
                        /* round 1 turns each size into the next one's: big to small and back */
                        uint64_t b = sizes[(i + round) % N], want = b > UINT32_MAX ? UINT32_MAX : b;
                        FileId f;

                        entry_name(i, 'R', name);
                        assert_true(account_file_set(a, d, name, b, 1000 + i) >= 0);
                        assert_true((f = account_file_find(a, d, name)) != FILE_NONE);
                        if (round == 0)
                                account_file_set_tag(a, f, (uint8_t) (i + 1));
                        assert_int_equal(account_file_tag(a, f), i + 1);
                        assert_int_equal(account_file_info(a, f, &fi), 0);
                        assert_int_equal(fi.blocks, want);
                        sum += want;
                }
                assert_int_equal(account_totals(a)->bytes, sum * 512);
                check_totals(a);
                account_entry_counts(a, &since, 1, ws_files, ws_bytes, files, bytes);
                for (unsigned i = 0; i < 40; i++) {
                        uint64_t b = sizes[(i + round) % N];
                        assert_int_equal(files[i + 1], 1);
                        assert_int_equal(bytes[i + 1], (b > UINT32_MAX ? UINT32_MAX : b) * 512);
                }
                assert_int_equal(ws_bytes[0], sum * 512);
        }
        /* two names of a big inode count it once */
        assert_int_equal(account_file_set_inode(a, d, "x1", 1ULL << 30, 1, 42, 2, false), 1);
        assert_int_equal(account_file_set_inode(a, d, "x2", 1ULL << 30, 1, 42, 2, false), 1);
        assert_int_equal(account_totals(a)->bytes, (sum + (1ULL << 30)) * 512);
        assert_int_equal(account_file_remove(a, d, "x1"), 1);
        assert_int_equal(account_totals(a)->bytes, (sum + (1ULL << 30)) * 512);
        assert_int_equal(account_file_remove(a, d, "x2"), 1);
        assert_int_equal(account_totals(a)->bytes, sum * 512);
        /* removed one by one; a new file in a freed slot has tag 0 and its own size */
        for (unsigned i = 0; i < 40; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_remove(a, d, name), 1);
        }
        assert_int_equal(account_totals(a)->bytes, 0);
        entry_name(1000, 'M', name);
        assert_int_equal(account_file_set(a, d, name, 7, 5), 1);
        assert_int_equal(account_file_tag(a, account_file_find(a, d, name)), 0);
        assert_int_equal(account_file_info(a, account_file_find(a, d, name), &fi), 0);
        assert_int_equal(fi.blocks, 7);
        check_totals(a);
}

/* A hard-linked entry (ccache's hard_link, or a copy made with cp -al: its
 * other name is outside the cache) costs at most 16 bytes more than one
 * with a single link; its bytes count as the unlinked one's did, and go
 * with it, name by name or with its directory. */
static void test_linked_memory_per_file(void **state) {
        enum { N = 2 * 65536 };   /* two full chunks of records */
        size_t grew[2];

        (void) state;
        for (int linked = 0; linked < 2; linked++) {
                Account *a;
                DirId d1, d;
                size_t before;
                char name[48];

                assert_int_equal(account_new(&a), 0);
                assert_int_equal(account_reserve(a, N), 0);   /* as a cache's start does, from ccache's stats */
                assert_int_equal(account_dir_add(a, DIR_ROOT, "a", &d1), 1);
                assert_int_equal(account_dir_add(a, d1, "1", &d), 1);
                before = account_memory(a);
                for (unsigned i = 0; i < N; i++) {
                        entry_name(i, 'R', name);
                        assert_int_equal(account_file_set_inode(a, d, name, i % 16 + 1, 1000,
                                                                linked ? ((uint64_t) 3 << 33) + i * 64ULL : 0,
                                                                linked ? 2 : 1, false),
                                         1);
                }
                grew[linked] = account_memory(a) - before;
                assert_int_equal(account_totals(a)->files, N);
                check_totals(a);
                /* half the names go one by one, the rest with their directory */
                for (unsigned i = 0; i < N; i += 2) {
                        entry_name(i, 'R', name);
                        assert_int_equal(account_file_remove(a, d, name), 1);
                }
                check_totals(a);
                account_dir_remove(a, d1);
                assert_int_equal(account_totals(a)->files, 0);
                assert_int_equal(account_totals(a)->bytes, 0);
                account_free(a);
        }
        assert_true(grew[1] <= grew[0] + (size_t) N * 16);
}

/* The entries' mtime span against a model through random stores, hits
 * and removals (non-entries beside them): the exact span always; and the
 * span without a pass (recent) exact as long as no entry at an edge left,
 * else the figures of the moment before, never anything else; a pass only
 * when an edge left. */
static void test_mtime_span_follows_entries(void **state) {
        enum { N = 300 };
        Account *a = *state;
        uint32_t mtime[N] = { 0 };   /* 0: absent */
        uint64_t x = 88172645463325252ULL;
        DirId l1, d;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "c", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "d", &d), 1);
        for (unsigned step = 0; step < 20000; step++) {
                int64_t lo = 0, hi = 0, elo, ehi, rlo, rhi;
                unsigned i, op;
                bool edge = false;
                uint64_t passes;

                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                i = (unsigned) (x % N), op = (unsigned) (x >> 32) % 4;
                account_entry_mtime_span(a, &elo, &ehi);   /* exact now, before the step */
                passes = account_passes(a);
                entry_name(i, 'R', name);
                if (op == 3 && mtime[i]) {                  /* evicted */
                        edge = mtime[i] == elo || mtime[i] == ehi;
                        assert_int_equal(account_file_remove(a, d, name), 1);
                        mtime[i] = 0;
                } else {                                    /* stored, or hit: its mtime moves */
                        uint32_t t = 1000 + (uint32_t) (x >> 40) % 5000;

                        edge = mtime[i] && mtime[i] != t && (mtime[i] == elo || mtime[i] == ehi);
                        assert_true(account_file_set(a, d, name, 1, t) >= 0);
                        mtime[i] = t;
                }
                if (step % 7 == 0)                          /* not an entry: no part of the span */
                        assert_true(account_file_set(a, l1, "stats", 1, step % 2 ? 1 : 999999) >= 0);
                for (unsigned j = 0; j < N; j++)
                        if (mtime[j]) {
                                lo = lo && lo < mtime[j] ? lo : mtime[j];
                                hi = hi > mtime[j] ? hi : mtime[j];
                        }
                edge = edge && hi > 0;                      /* the last one out leaves 0, 0: exact */
                account_entry_mtime_span_recent(a, &rlo, &rhi);
                if (edge) {                                 /* the moment before the step */
                        assert_int_equal(rlo, elo);
                        assert_int_equal(rhi, ehi);
                } else {                                    /* kept without a pass */
                        assert_int_equal(rlo, lo);
                        assert_int_equal(rhi, hi);
                }
                account_entry_mtime_span(a, &elo, &ehi);
                assert_int_equal(elo, lo);
                assert_int_equal(ehi, hi);
                assert_int_equal(account_passes(a), passes + (edge ? 1 : 0));
        }
}

/* A cache of 256 level-2 directories, N entries spread over them (blocks
 * 1 + i % 50, mtime 1000 + i), and three hard-linked inodes: 801 with both
 * its names below "b", 802 with one below "b" and one below "1", 803 with
 * one name here (its other outside the cache). What lies below "b" is
 * added up in *ret_b: files, bytes (an inode's once, if every name of it
 * is below "b"), and by kind. */
typedef struct Share {
        uint64_t files, bytes, kind_files[_CCACHE_KIND_MAX], kind_bytes[_CCACHE_KIND_MAX];
} Share;

static void share_add(Share *s, CcacheKind k, uint64_t names, uint64_t blocks) {
        s->files += names, s->kind_files[k] += names;
        s->bytes += blocks * 512, s->kind_bytes[k] += blocks * 512;
}

static void build_cache_with_links(Account *a, unsigned n, Share *ret_b) {
        DirId l1[16], l2[256];
        char name[64];

        *ret_b = (Share) { 0 };
        for (unsigned i = 0; i < 256; i++) {
                char n1[2] = { b32[i / 16], 0 }, n2[2] = { b32[i % 16], 0 };
                assert_true(account_dir_add(a, DIR_ROOT, n1, &l1[i / 16]) >= 0);
                assert_int_equal(account_dir_add(a, l1[i / 16], n2, &l2[i]), 1);
        }
        for (unsigned i = 0; i < n; i++) {
                CcacheKind k = i % 3 ? CCACHE_KIND_RESULT : CCACHE_KIND_MANIFEST;

                entry_name(i, i % 3 ? 'R' : 'M', name);
                assert_int_equal(account_file_set(a, l2[i % 256], name, 1 + i % 50, 1000 + i), 1);
                if (i % 256 / 16 == 0xb)
                        share_add(ret_b, k, 1, 1 + i % 50);
        }
        entry_name(n + 1, 'R', name);
        assert_int_equal(account_file_set_inode(a, l2[0xb0], name, 64, 1500, 801, 2, false), 1);
        assert_int_equal(account_file_set_inode(a, l2[0xb7], name, 64, 1500, 801, 2, false), 1);
        share_add(ret_b, CCACHE_KIND_RESULT, 2, 64);
        entry_name(n + 2, 'R', name);
        assert_int_equal(account_file_set_inode(a, l2[0xb1], name, 32, 1500, 802, 2, false), 1);
        assert_int_equal(account_file_set_inode(a, l2[0x12], name, 32, 1500, 802, 2, false), 1);
        share_add(ret_b, CCACHE_KIND_RESULT, 1, 0);      /* a name goes, the inode stays */
        entry_name(n + 3, 'R', name);
        assert_int_equal(account_file_set_inode(a, l2[0xb2], name, 16, 1500, 803, 2, false), 1);
        share_add(ret_b, CCACHE_KIND_RESULT, 1, 16);
}

/* Level-1 directory "b" moved out of a big cache: the totals are exact at
 * once, hard links inside it and across its edge counted right, and
 * reading them makes no pass over the files (the old account purged the
 * forgotten files from account_totals: a pass each time a status asked
 * after a directory went). Once the purge is over, a recount agrees. */
static void test_dir_removal_totals_at_once_without_a_pass(void **state) {
        enum { N = 60000 };
        Account *a = *state;
        AccountTotals before, at_once;
        const AccountTotals *t;
        uint64_t passes;
        int64_t lo, hi;
        Share b;

        build_cache_with_links(a, N, &b);
        before = *account_totals(a);
        account_entry_mtime_span(a, &lo, &hi);
        passes = account_passes(a);
        account_dir_remove(a, account_dir_find(a, DIR_ROOT, "b"));
        t = account_totals(a);
        assert_int_equal(account_passes(a), passes);
        assert_int_equal(t->files, before.files - b.files);
        assert_int_equal(t->bytes, before.bytes - b.bytes);
        for (int k = 0; k < _CCACHE_KIND_MAX; k++) {
                assert_int_equal(t->kind_files[k], before.kind_files[k] - b.kind_files[k]);
                assert_int_equal(t->kind_bytes[k], before.kind_bytes[k] - b.kind_bytes[k]);
        }
        assert_int_equal(t->dirs, before.dirs - 17);
        assert_int_equal(account_entry_files(a), before.files - b.files);
        /* b's entries were inside the span: it stays exact, no pass */
        account_entry_mtime_span(a, &lo, &hi);
        assert_int_equal(lo, 1000);
        assert_int_equal(hi, 1000 + N - 1);
        assert_int_equal(account_passes(a), passes);
        at_once = *t;
        account_purge_drain(a);
        assert_int_equal(account_passes(a), passes);
        check_totals(a);   /* (each inode left has one name here: bytes per name are right) */
        assert_memory_equal(account_totals(a), &at_once, sizeof(at_once));
}

/* The purge forgets at most max files a step, the totals as they were at
 * the removal all along; a directory forgotten while a pass runs loses its
 * files behind the pass to the next one, and its DirId is given again only
 * after that (that of a directory without files at once). */
static void test_purge_in_bounded_steps(void **state) {
        enum { N = 20000, STEP = 100 };
        Account *a = *state;
        AccountTotals after;
        DirId x, y, xs, ys, z;
        size_t left, prev = N - N / 4;   /* x's files */
        unsigned steps = 0;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "x", &x), 1);
        assert_int_equal(account_dir_add(a, x, "0", &xs), 1);
        assert_int_equal(account_dir_add(a, DIR_ROOT, "y", &y), 1);
        assert_int_equal(account_dir_add(a, y, "0", &ys), 1);
        for (unsigned i = 0; i < N; i++) {   /* interleaved: y's files on both sides of the pass */
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, i % 4 ? xs : ys, name, 8, 1000 + i), 1);
        }
        account_dir_remove(a, x);
        after = *account_totals(a);
        assert_int_equal(after.files, N / 4);
        for (;;) {
                left = account_purge_step(a, STEP);
                steps++;
                assert_true(prev - left <= STEP);      /* at most STEP files a step */
                assert_memory_equal(account_totals(a), &after, sizeof(after));
                if (steps == N / STEP / 2) {           /* half way through the table */
                        account_dir_remove(a, y);
                        after = *account_totals(a);
                        assert_int_equal(after.files, 0);
                        left += N / 4;
                }
                if (left == 0)
                        break;
                prev = left;
                if (steps < N / STEP + N / STEP / 2) {   /* a DirId with files waits while they do */
                        assert_int_equal(account_dir_add(a, DIR_ROOT, "z", &z), 1);
                        assert_true(z != ys && (steps >= N / STEP || z != xs));
                        account_dir_remove(a, z);
                }
        }
        assert_true(steps >= N / STEP + N / STEP / 2);   /* a second pass for y's first half */
        assert_int_equal(account_purge_step(a, STEP), 0);
        check_totals(a);
        for (FileId id = 0; id < account_file_limit(a); id++)
                assert_int_equal(account_file_info(a, id, &(FileInfo) { 0 }), -ENOENT);
}

/* A sweep's count is the drift it found: not the files of a directory
 * forgotten before it (they had left the totals at the removal), whose
 * purge the sweep's pass finishes on its way. */
static void test_sweep_counts_only_what_it_found_gone(void **state) {
        Account *a = *state;
        DirId l1, kept, gone, unlisted;
        char name[64];

        assert_int_equal(account_dir_add(a, DIR_ROOT, "1", &l1), 1);
        assert_int_equal(account_dir_add(a, l1, "2", &kept), 1);
        assert_int_equal(account_dir_add(a, l1, "3", &gone), 1);
        assert_int_equal(account_dir_add(a, l1, "4", &unlisted), 1);
        for (unsigned i = 0; i < 30; i++) {
                entry_name(i, 'R', name);
                assert_int_equal(account_file_set(a, i < 10 ? kept : i < 20 ? gone : unlisted, name, 8, i), 1);
        }
        account_dir_remove(a, gone);                       /* moved out: an event told */
        account_scan_begin(a);
        account_dir(a, l1)->scan_gen = 5;
        account_dir(a, kept)->scan_gen = 5;
        for (unsigned i = 0; i < 5; i++) {                 /* half of kept's seen again */
                entry_name(i, 'R', name);
                account_file_set(a, kept, name, 8, i);
        }
        /* drift: kept's 5 unseen files, and unlisted's 10 */
        assert_int_equal(account_scan_sweep(a, 5), 15);
        assert_int_equal(account_totals(a)->files, 5);
        assert_int_equal(account_purge_step(a, ACCOUNT_PURGE_STEP), 0);
        check_totals(a);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_insert_update_remove, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_many_files_and_dir_removal, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_index_grows_in_place, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_scan_sweep, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_dir_hook_and_stats, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_dir_gen_tells_reused_ids_apart, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_many_directories_no_quadratic_work, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_planted_names_do_not_pile_up, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_hard_links_count_once, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_memory_counts_heap_names, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_entries_since, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_remote_subdirs_layout, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_remote_flat_layout, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_set_layout_only_when_empty, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_big_files_and_tags, setup_account, teardown_account),
                cmocka_unit_test(test_remote_memory_per_file),
                cmocka_unit_test(test_linked_memory_per_file),
                cmocka_unit_test_setup_teardown(test_mtime_span_follows_entries, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_dir_removal_totals_at_once_without_a_pass, setup_account,
                                                teardown_account),
                cmocka_unit_test_setup_teardown(test_purge_in_bounded_steps, setup_account, teardown_account),
                cmocka_unit_test_setup_teardown(test_sweep_counts_only_what_it_found_gone, setup_account,
                                                teardown_account),
        };
        return cmocka_run_group_tests_name("account", tests, NULL, NULL);
}
