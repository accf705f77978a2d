/* SPDX-License-Identifier: MIT */
/* cachectl status's tables from a status object: columns as wide as their
 * content and aligned on every row, 80 columns for the shipped two caches,
 * caps as configured, colour for states and levels only when asked. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "views/status-table.h"

/* The shipped config's caches, as a big build host sees them. */
#define MI210(name, files) \
        "{\"name\":\"" name "\",\"state\":\"ok\",\"size_bytes\":61200000000,\"max_size_bytes\":100000000000," \
        "\"max_size_text\":\"100G\",\"files\":" #files ",\"hits\":900,\"misses\":100,\"mode\":\"1777\"," \
        "\"mode_ok\":true,\"hit_rate_1h\":0.93,\"hit_rate_24h\":1,\"hit_rate_7d\":null," \
        "\"working_set_bytes\":{\"1h\":1000,\"24h\":2000,\"7d\":3000,\"30d\":4000},\"cap_advice\":\"\"}"
#define AITER_GONE \
        "{\"name\":\"aiter\",\"state\":\"unavailable\",\"reason\":\"'/mnt/llm-storage' is not a mount point\"," \
        "\"size_bytes\":0,\"max_size_bytes\":40000000000,\"max_size_text\":\"40G\",\"mode\":\"1777\",\"mode_ok\":false}"
#define AITER_OK \
        "{\"name\":\"aiter\",\"state\":\"over_cap\",\"size_bytes\":1700000000000,\"max_size_bytes\":1649267441664," \
        "\"max_size_text\":\"1.5Ti\",\"files\":1234567890,\"hits\":0,\"misses\":0,\"mode\":\"1777\",\"mode_ok\":false}"
#define VOLUME(mount, alert, full) \
        "{\"mount\":\"" mount "\",\"total_bytes\":1000000000000,\"avail_bytes\":410000000000,\"alert\":\"" alert "\"," \
        "\"full_in_seconds\":" #full ",\"pressure\":false}"

static json_object *status(const char *caches, const char *volumes) {
        char text[8192];

        snprintf(text, sizeof(text), "{\"caches\":[%s],\"volumes\":[%s]}", caches, volumes);
        return json_tokener_parse(text);
}

/* The lines of text, into lines (at most max); returns how many. */
static size_t split(char *text, char **lines, size_t max) {
        size_t n = 0;

        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save))
                lines[n++] = l;
        return n;
}

/* Where the word after the first run of blanks at or after from starts. */
static size_t next_word(const char *line, size_t from) {
        size_t i = from;

        while (line[i] && line[i] != ' ')
                i++;
        while (line[i] == ' ')
                i++;
        return i;
}

static void test_shipped_caches(void **state) {
        json_object *s = status(MI210("mi210", 1234567) "," AITER_GONE, VOLUME("/var/cache", "ok", null));
        char *text = status_table(s, false, false), *lines[16];
        size_t n;

        assert_non_null(text);
        assert_null(strchr(text, '\033'));
        n = split(text, lines, 16);
        assert_int_equal(n, 6);
        assert_string_equal(lines[0], "CACHE STATE        SIZE / CAP  USE               FILES HIT RATE HIT 1h/24h MODE");
        assert_string_equal(lines[1], "mi210 ok          61.2G / 100G [#####---]  61% 1234567    90.0%   93%/100% 1777");
        assert_string_equal(lines[2], "aiter unavailable     - / 40G  -                     -        -          - 1777");
        assert_string_equal(lines[3], "aiter: unavailable: '/mnt/llm-storage' is not a mount point");
        assert_string_equal(lines[4], "VOLUME      AVAIL / TOTAL  FREE ALERT");
        assert_string_equal(lines[5], "/var/cache 410.0G / 1.0T  41.0% ok");
        for (size_t i = 0; i < n; i++)
                assert_true(strlen(lines[i]) <= 80);
        free(text);
        json_object_put(s);
}

/* A long name and wide numbers widen their columns; every row lines up
 * under the titles (left columns start, right columns end, with them). */
static void test_columns_follow_content(void **state) {
        json_object *s = status(MI210("a-very-long-cache-name-of-32-chr", 123456789012) "," AITER_OK,
                                VOLUME("/mnt/llm-storage", "warning", 7200) "," VOLUME("/", "ok", null));
        char *text = status_table(s, false, false), *lines[16];
        size_t n = split(text, lines, 16), state_at, mode_at, files_end;

        assert_int_equal(n, 6);
        state_at = next_word(lines[0], 0);
        assert_int_equal(state_at, 33);
        mode_at = strstr(lines[0], "MODE") - lines[0];
        files_end = strstr(lines[0], "FILES") - lines[0] + 5;
        for (size_t i = 1; i <= 2; i++) {
                assert_int_equal(next_word(lines[i], 0), state_at);
                assert_true(lines[i][mode_at - 1] == ' ' && strncmp(lines[i] + mode_at, "1777", 4) == 0);
                assert_true(lines[i][files_end - 1] != ' ' && lines[i][files_end] == ' ');
        }
        assert_non_null(strstr(lines[1], " 123456789012 "));
        /* The cap as configured, not rounded: 1.5Ti, not 1.6T; over it. */
        assert_non_null(strstr(lines[2], " / 1.5Ti "));
        assert_non_null(strstr(lines[2], "[########! 103%   1234567890 "));
        assert_non_null(strstr(lines[2], " 1777 (wrong!)"));
        /* Volumes: the note column, since one fills. */
        assert_string_equal(lines[3], "VOLUME            AVAIL / TOTAL  FREE ALERT   NOTE");
        assert_string_equal(lines[4], "/mnt/llm-storage 410.0G / 1.0T  41.0% warning full in ~2h");
        assert_string_equal(lines[5], "/                410.0G / 1.0T  41.0% ok");
        for (size_t i = 0; i < n; i++)
                assert_int_not_equal(lines[i][strlen(lines[i]) - 1], ' ');
        free(text);
        json_object_put(s);
}

/* Without max_size_text (an older daemon): format_size's form. */
static void test_cap_without_text(void **state) {
        json_object *s = status("{\"name\":\"t\",\"state\":\"ok\",\"size_bytes\":1000,\"max_size_bytes\":1649267441664,"
                                "\"files\":1,\"mode\":\"1777\",\"mode_ok\":true}", "");
        char *text = status_table(s, false, false);

        assert_non_null(strstr(text, "1.0k / 1.6T "));
        assert_null(strstr(text, "VOLUME"));
        free(text);
        json_object_put(s);

        /* A reply of the wrong shape: nothing made up. */
        s = json_tokener_parse("{\"caches\":\"x\",\"volumes\":{\"a\":1}}");
        text = status_table(s, false, false);
        assert_string_equal(text, "no caches\n");
        free(text);
        json_object_put(s);
}

/* Colour: the state and the level cells only, each closed. */
static void test_color(void **state) {
        json_object *s = status(MI210("mi210", 1) "," AITER_GONE "," AITER_OK, VOLUME("/", "critical", null));
        char *text = status_table(s, false, true);

        assert_non_null(strstr(text, "\033[32mok"));
        assert_non_null(strstr(text, "\033[1;31munavailable"));
        assert_non_null(strstr(text, "\033[1;31mover_cap"));
        assert_non_null(strstr(text, "\033[1;31m1777 (wrong!)"));
        assert_non_null(strstr(text, "\033[1;31mcritical"));
        assert_non_null(strstr(text, "mi210 \033"));     /* names, sizes: plain */
        assert_null(strstr(text, "\033[32mmi210"));
        free(text);
        json_object_put(s);
}

/* A named cache: its working set, advice and writers under the table. */
static void test_detail(void **state) {
        json_object *s = status(MI210("mi210", 1), "");
        char *text = status_table(s, true, false), *lines[16];
        size_t n = split(text, lines, 16);

        assert_int_equal(n, 3);
        assert_string_equal(lines[2], "  working set 1h/24h/7d/30d: 1.0k/2.0k/3.0k/4.0k");
        free(text);
        json_object_put(s);
}

/* A first scan: partial figures, at work (yellow), its progress under the
 * table. */
static void test_scanning(void **state) {
        json_object *s = status("{\"name\":\"t\",\"state\":\"scanning\",\"size_bytes\":1000,\"max_size_bytes\":2000,"
                                "\"files\":10,\"mode\":\"1777\",\"mode_ok\":true,"
                                "\"scan\":{\"running\":true,\"files\":10,\"dirs\":2}}", "");
        char *text = status_table(s, false, true), *lines[16];
        size_t n = split(text, lines, 16);

        assert_int_equal(n, 3);
        assert_non_null(strstr(lines[1], "\033[33mscanning"));
        assert_string_equal(lines[2], "t: scanning: 10 files in 2 directories so far");
        free(text);
        json_object_put(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_shipped_caches),
                cmocka_unit_test(test_columns_follow_content),
                cmocka_unit_test(test_cap_without_text),
                cmocka_unit_test(test_color),
                cmocka_unit_test(test_detail),
                cmocka_unit_test(test_scanning),
        };
        return cmocka_run_group_tests_name("status-table", tests, NULL, NULL);
}
