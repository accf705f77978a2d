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

#include <cmocka.h>

#include "report.h"

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
        assert_non_null(strstr(m, "# TYPE cachekeeper_cache_size_bytes gauge\n"
                                  "cachekeeper_cache_size_bytes{cache=\"mi210\"} 61200000000\n"
                                  "cachekeeper_cache_size_bytes{cache=\"aiter\"} 0\n"));
        assert_non_null(strstr(m, "cachekeeper_cache_available{cache=\"aiter\"} 0\n"));
        assert_non_null(strstr(m, "cachekeeper_volume_alert_level{mount=\"/\"} 2\n"));
        assert_non_null(strstr(m, "cachekeeper_cache_oldest_entry_timestamp_seconds{cache=\"mi210\"} 1700000000\n"));
        /* absent, not a misleading 0 */
        assert_null(strstr(m, "cachekeeper_cache_oldest_entry_timestamp_seconds{cache=\"aiter\"}"));
        assert_null(strstr(m, "cachekeeper_cache_mode_ok{cache=\"aiter\"}"));
        assert_null(strstr(m, "cachekeeper_volume_full_in_seconds{"));
        /* a hit rate per window; none for a window without calls (null) or a cache without them */
        assert_non_null(strstr(m, "# TYPE cachekeeper_cache_hit_ratio gauge\n"
                                  "cachekeeper_cache_hit_ratio{cache=\"mi210\",window=\"1h\"} 0.93000000000000005\n"
                                  "cachekeeper_cache_hit_ratio{cache=\"mi210\",window=\"24h\"} 1\n"));
        assert_null(strstr(m, "window=\"7d\""));
        assert_null(strstr(m, "cachekeeper_cache_hit_ratio{cache=\"aiter\""));
        free(m);
        json_object_put(s);
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check_ok),
                cmocka_unit_test(test_check_levels),
                cmocka_unit_test(test_metrics),
                cmocka_unit_test(test_mistyped_fields),
        };
        return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
