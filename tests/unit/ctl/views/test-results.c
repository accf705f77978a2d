/* SPDX-License-Identifier: MIT */
/* The text cachectl draws for what a trim and a merge answered
 * (views/results.h), word for word: a trim, a dry run, one with errors and
 * locked directories; a merge's dry run, a whole merge with the steps after
 * it, one stopped with errors, one that left entries and sparse files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "views/results.h"

/* 2026-12-07 12:00:00 UTC, and the oldest entry kept a day and a half before:
 * 2026-12-06 00:00. */
#define NOW ((time_t) 1796644800)
#define KEPT "1796515200"

/* What draw wrote for result (JSON text), into a malloc'd string; *failed
 * set to what it returned. */
typedef bool (*draw_t)(FILE *f, json_object *result);

static char *drawn(draw_t draw, const char *json, bool *failed) {
        json_object *result = json_tokener_parse(json);
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        assert_non_null(result);
        assert_non_null(f);
        *failed = draw(f, result);
        assert_int_equal(fclose(f), 0);
        json_object_put(result);
        return text;
}

static bool draw_trim(FILE *f, json_object *r) {
        return results_trim(f, r, NOW);
}

static bool draw_merge(FILE *f, json_object *r) {
        return results_merge(f, r, "old", "big");
}

static bool draw_merge_dry_run(FILE *f, json_object *r) {
        results_merge_dry_run(f, r, "old", "big");
        return false;
}

static void expect(draw_t draw, const char *json, const char *want, bool want_failed) {
        bool failed;
        char *text = drawn(draw, json, &failed);

        assert_string_equal(text, want);
        assert_int_equal(failed, want_failed);
        free(text);
}

static int utc(void **state) {
        setenv("TZ", "UTC", 1);
        tzset();
        return 0;
}

static void test_trim(void **state) {
        expect(draw_trim,
               "{\"t\":{\"files\":120,\"bytes\":3000000000,\"size_bytes\":77000000000,\"dry_run\":false,"
               "\"oldest_kept_mtime\":" KEPT "}}",
               "t: evicted 120 files, 3.0G; now 77.0G; oldest entry kept: 2026-12-06 00:00 (1d\n"
               "  12h ago)\n",
               false);
}

static void test_trim_dry_run_of_two(void **state) {
        expect(draw_trim,
               "{\"a\":{\"files\":2,\"bytes\":2000,\"size_bytes\":5000,\"dry_run\":true},"
               "\"b\":{\"files\":0,\"bytes\":0,\"size_bytes\":0,\"dry_run\":true}}",
               "a: would evict 2 files, 2.0k; leaving 3.0k\n"
               "b: would evict 0 files, 0B; leaving 0B\n",
               false);
}

/* Errors fail the command; every clause is said, wrapped at 80 columns. */
static void test_trim_with_errors(void **state) {
        expect(draw_trim,
               "{\"t\":{\"files\":7,\"bytes\":7000000,\"size_bytes\":1000000000,\"dry_run\":false,"
               "\"oldest_kept_mtime\":" KEPT ",\"saved\":3,\"locked_dirs\":2,\"errors\":4,"
               "\"beyond_table_files\":9}}",
               "t: evicted 7 files, 7.0M; now 1.0G; oldest entry kept: 2026-12-06 00:00 (1d 12h\n"
               "  ago); 3 kept as used or changed since planning; 2 directories left, locked by\n"
               "  ccache; 4 errors (see the daemon's log); may have missed some: 9 entries are\n"
               "  of writers beyond the daemon's table, not looked at\n",
               true);
}

static void test_merge_dry_run(void **state) {
        expect(draw_merge_dry_run,
               "{\"dry_run\":true,\"same_filesystem\":true,\"files_total\":1000,\"bytes_total\":5000000000,"
               "\"evict_into_files\":10,\"evict_into_bytes\":100000000,\"drop_from_files\":100,"
               "\"drop_from_bytes\":1000000000,\"into_max_size_bytes\":50000000000,\"mixed_files\":5,"
               "\"mixed_bytes\":5000,\"estimate_seconds\":90.5,\"rate_measured\":false}",
               "Would merge old into big by renames (one filesystem): 900 entries (4.0G) would move.\n"
               "To stay within big's cap of 50.0G, the coldest entries of both go first: 10 (100.0M) "
               "evicted from big, 100 (1.0G) of old dropped, not moved.\n"
               "Key families differ: 5 entries (5.0k) of old are named in a scheme no writer of big uses: "
               "no build there would hit them (--allow-mixed).\n"
               "It should take about 1m 31s (at a default rate: no merge measured yet).\n",
               false);
}

static void test_merge_done(void **state) {
        expect(draw_merge,
               "{\"moved\":900,\"moved_bytes\":4000000000,\"already_in_into\":3,\"seconds\":12.0,"
               "\"from_path\":\"/srv/old\",\"into_path\":\"/srv/big\",\"left_in_from\":0}",
               "Merged old into big: 900 entries (4.0G) moved, 3 already in big (old's copy removed) in 12s.\n"
               "/srv/old holds no entry any more; kept there: ccache.conf, CACHEDIR.TAG, the stats files "
               "(their size counters now 0), lock/ and tmp/.\n"
               "Now:\n"
               "  - remove the cache \"old\" (path = \"/srv/old\") from cachekeeper.conf, then: cachectl reload\n"
               "  - give the containers that used it big where they had old:\n"
               "      docker run -v /srv/big:CONTAINER_CCACHE_DIR ...   (was: -v /srv/old:CONTAINER_CCACHE_DIR)\n",
               false);
}

/* Stopped, with errors: it failed, and says to run it again. */
static void test_merge_stopped(void **state) {
        expect(draw_merge,
               "{\"moved\":10,\"moved_bytes\":1000,\"already_in_into\":0,\"skipped\":2,\"put_back\":1,"
               "\"errors\":3,\"seconds\":1.5,\"stopped\":\"the daemon is stopping\",\"left_in_from\":0}",
               "Stopped merging old into big: 10 entries (1.0k) moved, 0 already in big (old's copy removed), "
               "2 left as they changed meanwhile, 1 taken back to old (a directory of big was moved away "
               "meanwhile), 3 errors (see the daemon's log) in 1s.\n"
               "Stopped: the daemon is stopping. Run the same command again to finish.\n",
               true);
}

/* Entries left in FROM, sparse files among them: it failed. */
static void test_merge_left(void **state) {
        expect(draw_merge,
               "{\"moved\":5,\"moved_bytes\":5000,\"already_in_into\":0,\"seconds\":2,\"left_in_from\":4,"
               "\"sparse\":1,\"sparse_bytes\":1000000000000,\"from_path\":\"/srv/old\"}",
               "Merged old into big: 5 entries (5.0k) moved, 0 already in big (old's copy removed) in 2s.\n"
               "1 names in /srv/old were never copied: sparse files (1.0T apparent size, beyond the blocks "
               "they hold), which ccache never writes. They stay there; remove them by hand.\n"
               "3 entries are still in old (written meanwhile, or changed): run the same command again.\n",
               true);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_trim),
                cmocka_unit_test(test_trim_dry_run_of_two),
                cmocka_unit_test(test_trim_with_errors),
                cmocka_unit_test(test_merge_dry_run),
                cmocka_unit_test(test_merge_done),
                cmocka_unit_test(test_merge_stopped),
                cmocka_unit_test(test_merge_left),
        };
        return cmocka_run_group_tests_name("results", tests, utc, NULL);
}
