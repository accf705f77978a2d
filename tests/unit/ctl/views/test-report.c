/* SPDX-License-Identifier: MIT */
/* cachectl check and metrics from a status object: the verdict, its line,
 * the performance data, and samples left out where they would lie. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/protocol.h"
#include "views/report.h"

static bool starts(const char *s, const char *prefix) {
        if (strncmp(s, prefix, strlen(prefix)) == 0)
                return true;
        print_error("\"%s\"\ndoes not start with\n\"%s\"\n", s, prefix);
        return false;
}

static json_object *status(const char *caches, const char *volumes) {
        char text[4096];

        snprintf(text, sizeof(text), "{\"caches\":[%s],\"volumes\":[%s]}", caches, volumes);
        return json_tokener_parse(text);
}

#define CACHE_OK "{\"name\":\"mi210\",\"state\":\"ok\",\"size_bytes\":61200000000,\"max_size_bytes\":100000000000," \
                 "\"mode\":\"1777\",\"mode_ok\":true,\"entry_files\":10,\"oldest_entry_mtime\":1700000000," \
                 "\"hit_rate_1h\":0.93,\"hit_rate_24h\":1,\"hit_rate_7d\":null}"
#define CACHE_GONE "{\"name\":\"aiter\",\"state\":\"unavailable\",\"reason\":\"'/mnt/llm-storage' is not a mount point\"," \
                   "\"size_bytes\":0,\"max_size_bytes\":40000000000,\"mode\":\"1777\",\"mode_ok\":false,\"entry_files\":0," \
                   "\"oldest_entry_mtime\":0}"
#define VOL(alert, avail) "{\"mount\":\"/\",\"total_bytes\":1000,\"avail_bytes\":" #avail ",\"alert\":\"" alert "\"," \
                          "\"bytes_level\":\"" alert "\",\"inodes_level\":\"ok\",\"warn_free_bytes\":100,\"crit_free_bytes\":50," \
                          "\"total_inodes\":10,\"avail_inodes\":9,\"full_soon\":false,\"pressure\":false}"

static void test_check_ok(void **state) {
        json_object *s = status(CACHE_OK, VOL("ok", 410));
        char line[1024];

        assert_int_equal(report_check(s, line, sizeof(line)), REPORT_OK);
        assert_string_equal(line, "CACHEKEEPER OK - mi210 61.2G/100.0G; / 41.0% free | "
                                  "'mi210'=61200000000B;100000000000;110000000000;0; '/'=410B;100:;50:;0;1000");
        json_object_put(s);
}

static void test_check_levels(void **state) {
        json_object *s = status(CACHE_OK "," CACHE_GONE, VOL("warning", 90));
        char line[1024];

        assert_int_equal(report_check(s, line, sizeof(line)), REPORT_WARNING);
        assert_true(starts(line, "CACHEKEEPER WARNING - volume / warning: 9.0% free; cache aiter unavailable: "
                                 "'/mnt/llm-storage' is not a mount point |"));
        assert_null(strstr(line, "'aiter'="));   /* no figures for an unavailable cache */
        json_object_put(s);

        /* in its first scan: its size so far is not known yet ("U") */
        s = status("{\"name\":\"x\",\"state\":\"scanning\",\"size_bytes\":12,\"max_size_bytes\":1000,\"mode_ok\":true}",
                   VOL("ok", 410));
        report_check(s, line, sizeof(line));
        assert_non_null(strstr(line, " | 'x'=U;1000;1100;0; '/'=410B;"));
        json_object_put(s);

        /* over the cap by more than 10 %: critical, listed first */
        s = status("{\"name\":\"x\",\"state\":\"over_cap\",\"size_bytes\":1200,\"max_size_bytes\":1000,\"mode_ok\":true}",
                   VOL("warning", 90));
        assert_int_equal(report_check(s, line, sizeof(line)), REPORT_CRITICAL);
        assert_true(starts(line, "CACHEKEEPER CRITICAL - cache x over its cap: 1.2k of 1.0k; volume / warning"));
        json_object_put(s);

        /* just over: a warning; a wrong mode too */
        s = status("{\"name\":\"x\",\"state\":\"over_cap\",\"size_bytes\":1050,\"max_size_bytes\":1000,\"mode\":\"1777\","
                   "\"mode_ok\":false}", VOL("ok", 500));
        assert_int_equal(report_check(s, line, sizeof(line)), REPORT_WARNING);
        assert_non_null(strstr(line, "cache x root mode is not 1777"));
        json_object_put(s);
}

static void test_metrics(void **state) {
        json_object *s = status(CACHE_OK "," CACHE_GONE, VOL("critical", 40));
        char *m = report_metrics(s);

        assert_non_null(m);
        assert_true(starts(m, "# HELP cachekeeper_up "));
        assert_non_null(strstr(m, "# TYPE cachekeeper_up gauge\ncachekeeper_up 1\n"));
        assert_non_null(strstr(m, "cachekeeper_build_info{version=\"unknown\",cachectl_version=\"" CACHEKEEPER_VERSION
                                  "\"} 1\n"));
        /* an unavailable cache: no size samples (not 0), available 0, its cap still */
        assert_non_null(strstr(m, "# TYPE cachekeeper_cache_size_bytes gauge\n"
                                  "cachekeeper_cache_size_bytes{cache=\"mi210\"} 61200000000\n"
                                  "# HELP cachekeeper_cache_files "));
        assert_null(strstr(m, "cachekeeper_cache_files{cache=\"aiter\"}"));
        assert_null(strstr(m, "cachekeeper_cache_hits_total{cache=\"aiter\"}"));
        assert_non_null(strstr(m, "cachekeeper_cache_max_size_bytes{cache=\"aiter\"} "));
        assert_non_null(strstr(m, "cachekeeper_cache_available{cache=\"aiter\"} 0\n"));
        assert_non_null(strstr(m, "cachekeeper_cache_available{cache=\"mi210\"} 1\n"));
        /* volumes labelled as node_exporter labels them */
        assert_non_null(strstr(m, "cachekeeper_volume_alert_level{mountpoint=\"/\"} 2\n"));
        assert_null(strstr(m, "{mount=\""));
        assert_non_null(strstr(m, "cachekeeper_cache_oldest_entry_timestamp_seconds{cache=\"mi210\"} 1700000000\n"));
        /* absent, not a misleading 0 */
        assert_null(strstr(m, "cachekeeper_cache_oldest_entry_timestamp_seconds{cache=\"aiter\"}"));
        assert_null(strstr(m, "cachekeeper_cache_mode_ok{cache=\"aiter\"}"));
        assert_null(strstr(m, "cachekeeper_volume_full_in_seconds{"));
        /* a hit rate per window; none for a window without calls (null) or a cache without them */
        assert_non_null(strstr(m, "# TYPE cachekeeper_cache_hit_ratio gauge\n"
                                  "cachekeeper_cache_hit_ratio{cache=\"mi210\",window=\"1h\"} 0.93\n"
                                  "cachekeeper_cache_hit_ratio{cache=\"mi210\",window=\"24h\"} 1\n"));
        assert_null(strstr(m, "window=\"7d\""));
        assert_null(strstr(m, "cachekeeper_cache_hit_ratio{cache=\"aiter\""));
        free(m);
        json_object_put(s);
}

/* A cache still in its first scan has partial figures: none are exported;
 * a daemon that did not answer is cachekeeper_up 0 alone. */
static void test_metrics_scanning_and_down(void **state) {
        json_object *s = json_tokener_parse("{\"caches\":[{\"name\":\"a\",\"state\":\"scanning\",\"size_bytes\":5,"
                                            "\"files\":1,\"max_size_bytes\":100,\"working_set_bytes\":{\"1h\":5}}],"
                                            "\"volumes\":[],\"version\":\"9.9\"}");
        char *m = report_metrics(s);

        assert_non_null(m);
        assert_null(strstr(m, "cachekeeper_cache_size_bytes{"));
        assert_null(strstr(m, "cachekeeper_cache_files{"));
        assert_null(strstr(m, "cachekeeper_cache_working_set_bytes{"));
        assert_non_null(strstr(m, "cachekeeper_cache_scanning{cache=\"a\"} 1\n"));
        assert_non_null(strstr(m, "cachekeeper_build_info{version=\"9.9\","));
        free(m);
        json_object_put(s);
        assert_non_null(strstr(report_metrics_down, "\ncachekeeper_up 0\n"));
        assert_null(strstr(report_metrics_down, "cachekeeper_cache"));
}

/* What the other side sent is read, not trusted: lists that are not arrays,
 * numbers that are strings, flags that are not booleans. json-c asserts on
 * an array call on a non-array; each of these would abort cachectl. */
static void test_mistyped_fields(void **state) {
        json_object *s = json_tokener_parse("{\"caches\":{\"a\":1},\"volumes\":\"x\"}");
        char buf[512], *m;

        assert_int_equal(report_check(s, buf, sizeof(buf)), REPORT_UNKNOWN);
        assert_string_equal(buf, "CACHEKEEPER UNKNOWN - the reply is not a status (no list of caches)");
        m = report_metrics(s);
        assert_non_null(m);
        assert_null(strstr(m, "{cache="));
        free(m);
        json_object_put(s);

        s = json_tokener_parse("{\"caches\":[{\"name\":\"a\",\"state\":\"over_cap\",\"size_bytes\":\"900\","
                               "\"max_size_bytes\":100,\"mode_ok\":\"no\"}],"
                               "\"volumes\":[{\"mount\":\"/\",\"total_bytes\":1000,\"avail_bytes\":900,\"alert\":2,"
                               "\"full_soon\":\"yes\",\"full_in_seconds\":60}]}");
        /* a size that is a string reads as 0: over_cap stays a warning, not
         * critical; "yes" is not true; "no" is not false; alert 2 is no level */
        assert_int_equal(report_check(s, buf, sizeof(buf)), REPORT_WARNING);
        assert_true(starts(buf, "CACHEKEEPER WARNING - cache a over its cap: 0B of 100B"));
        assert_null(strstr(buf, "full in"));
        assert_null(strstr(buf, "mode"));
        m = report_metrics(s);
        assert_non_null(m);
        assert_null(strstr(m, "cachekeeper_cache_size_bytes{cache=\"a\"}"));
        assert_non_null(strstr(m, "cachekeeper_cache_max_size_bytes{cache=\"a\"} 100\n"));
        free(m);
        json_object_put(s);
}

/* A history object of n rows of seconds from start, row i with hits
 * hits(i) and misses misses(i) (-1: 0 and 0), size 1000 * i (null for i 0). */
static json_object *history(unsigned n, unsigned seconds, uint64_t start, const int *hits, const int *misses) {
        json_object *o = json_object_new_object(), *rows = json_object_new_array();

        for (unsigned i = 0; i < n; i++) {
                ProtocolHistoryRow r = { .start = start + (uint64_t) i * seconds, .seconds = seconds,
                                         .hits = hits ? (uint64_t) hits[i] : 0, .misses = misses ? (uint64_t) misses[i] : 0,
                                         .stores = i, .evictions = 2 * i, .removals = 3 * i, .regretted = 5 * i,
                                         .size_known = i > 0, .size_bytes = 1000ULL * i,
                                         .other_added_bytes = i == 1 ? 2000 : 0,
                                         .other_removed_bytes = i == 2 ? 11400000 : 0,
                                         .adjusted_up_bytes = i == 3 ? 1500 : 0,
                                         .adjusted_down_bytes = i == 3 ? 500 : 0 };
                json_object_array_add(rows, protocol_history_row(&r));
        }
        json_object_object_add(o, "cache", json_object_new_string("mi210"));
        json_object_object_add(o, "buckets", rows);
        return o;
}

/* The lines of text, into lines (at most max); returns how many. */
static size_t split(char *text, char **lines, size_t max) {
        size_t n = 0;

        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save))
                lines[n++] = l;
        return n;
}

static void test_history_table(void **state) {
        static const int hits[] = { 0, 9, 0, 1 }, misses[] = { 0, 1, 5, 0 };
        json_object *h;
        char *text, *lines[16];
        size_t n;

        setenv("TZ", "UTC", 1);
        tzset();
        /* 2026-11-30 22:58 UTC on. */
        h = history(4, 60, 1796079480, hits, misses);
        text = report_history(h, false);
        n = split(text, lines, 16);
        assert_int_equal(n, 6);
        assert_string_equal(lines[0], "mi210: 4 rows, one per minute");
        /* OTHER: the rest of the change of size, signed (other files and
         * entries adjusted, net). */
        assert_string_equal(lines[1], "TIME         STORES    HITS  MISSES HIT%  EVICT REGRET REMOVED   OTHER     SIZE");
        assert_string_equal(lines[2], "22:58             0       0       0    -      0      0       0       0        -");
        assert_string_equal(lines[3], "22:59             1       9       1  90%      2      5       3   +2.0k     1.0k");
        assert_string_equal(lines[4], "23:00             2       0       5   0%      4     10       6  -11.4M     2.0k");
        assert_string_equal(lines[5], "23:01             3       1       0 100%      6     15       9   +1.0k     3.0k");
        free(text);

        /* The sparkline: a space without calls, then 90 %, 0 %, 100 %. */
        text = report_history(h, true);
        n = split(text, lines, 16);
        assert_int_equal(n, 7);
        assert_string_equal(lines[6], "hit rate     \u2588\u2581\u2588");
        free(text);
        json_object_put(h);

        /* Hours in local time; a day row's UTC date, whatever the zone. */
        h = history(2, 3600, 1796079600, NULL, NULL);
        text = report_history(h, false);
        n = split(text, lines, 16);
        assert_string_equal(lines[0], "mi210: 2 rows, one per hour");
        assert_true(starts(lines[2], "11-30 23:00 "));
        assert_true(starts(lines[3], "12-01 00:00 "));
        free(text);
        json_object_put(h);
        setenv("TZ", "America/New_York", 1);
        tzset();
        h = history(1, 86400, 1796083200, NULL, NULL);
        text = report_history(h, false);
        n = split(text, lines, 16);
        assert_string_equal(lines[0], "mi210: 1 row, one per day (UTC)");
        assert_true(starts(lines[2], "2026-12-01 "));
        free(text);
        json_object_put(h);
        setenv("TZ", "UTC", 1);
        tzset();

        /* No rows. */
        h = history(0, 60, 0, NULL, NULL);
        text = report_history(h, true);
        assert_string_equal(text, "mi210: nothing observed over this span yet\n");
        free(text);
        json_object_put(h);
}

/* 1440 rows fit one line: merged by 22, the newest group whole. */
static void test_history_sparkline_width(void **state) {
        static int hits[1440], misses[1440];
        json_object *h;
        char *text, *lines[1500], *spark;
        size_t n, cells = 0;

        for (int i = 0; i < 1440; i++) {
                hits[i] = i >= 1430 ? 1 : 0;    /* the newest group: 10 hits ... */
                misses[i] = i < 1418 ? 1 : 0;   /* ... and 12 rows without a miss */
        }
        h = history(1440, 60, 1796000000 / 60 * 60, hits, misses);
        text = report_history(h, true);
        n = split(text, lines, 1500);
        assert_int_equal(n, 2 + 1440 + 1);
        spark = lines[n - 1];
        assert_true(starts(spark, "hit rate    "));
        for (size_t i = 0; i < n - 1; i++)
                assert_true(strlen(lines[i]) <= REPORT_HISTORY_WIDTH);
        /* Cells: 3 bytes each (a block), or a space. */
        for (const char *p = spark + 12; *p; p += *p == ' ' ? 1 : 3)
                cells++;
        assert_true(cells <= REPORT_HISTORY_WIDTH - 12);
        assert_int_equal(cells, (1440 + 21) / 22);
        /* Newest: 10 hits of 10 calls in its 22 rows: full. */
        assert_string_equal(spark + strlen(spark) - 3, "\u2588");
        free(text);
        json_object_put(h);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check_ok),
                cmocka_unit_test(test_check_levels),
                cmocka_unit_test(test_metrics),
                cmocka_unit_test(test_metrics_scanning_and_down),
                cmocka_unit_test(test_mistyped_fields),
                cmocka_unit_test(test_history_table),
                cmocka_unit_test(test_history_sparkline_width),
        };
        return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
