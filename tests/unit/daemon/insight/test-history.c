/* SPDX-License-Identifier: MIT */
/* cachectl history's rows: the last N minutes, hours and UTC days, each
 * figure checked against a recount of the events put in; days summing
 * their hours; only observed buckets; the row on the wire, and its
 * largest size. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "insight/history.h"

#define MIN  (60 * USEC_PER_SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
/* 2026-11-30 00:00:00 UTC: a day (and hour, minute) boundary. */
#define T0 ((usec_t) 1795996800ULL * USEC_PER_SEC)

typedef struct Rows {
        ProtocolHistoryRow r[2200];
        size_t n;
} Rows;

static void collect(const ProtocolHistoryRow *row, void *userdata) {
        Rows *rows = userdata;

        assert_true(rows->n < ELEMENTSOF(rows->r));
        rows->r[rows->n++] = *row;
}

static Rows *rows_of(const Activity *a, usec_t now, unsigned seconds, unsigned count) {
        static Rows rows;
        int n;

        rows.n = 0;
        n = history_rows(a, now, seconds, count, collect, &rows);
        assert_int_equal(n, (int) rows.n);
        return &rows;
}

/* ccache's totals with hits direct hits and misses misses. */
static void feed_counters(Activity *a, uint64_t hits, uint64_t misses, usec_t now) {
        uint64_t totals[ACTIVITY_CCACHE_TOTALS] = { 0 };

        totals[22] = hits;
        totals[4] = misses;
        activity_counters(a, totals, now);
}

static void test_bad_requests(void **state) {
        Activity *a = *state;
        Rows rows = {};

        assert_int_equal(history_rows(a, T0, 7, 1, collect, &rows), -EINVAL);
        assert_int_equal(history_rows(a, T0, 60, 0, collect, &rows), -EINVAL);
        assert_int_equal(history_rows(a, T0, 60, 1441, collect, &rows), -EINVAL);
        assert_int_equal(history_rows(a, T0, 3600, 2161, collect, &rows), -EINVAL);
        assert_int_equal(history_rows(a, T0, 86400, 91, collect, &rows), -EINVAL);
        assert_int_equal(rows.n, 0);
        /* Nothing observed yet: no row. */
        assert_int_equal(history_rows(a, T0, 3600, 24, collect, &rows), 0);
}

static void test_minutes(void **state) {
        Activity *a = *state;
        Rows *rows;

        activity_set_size(a, 1000, T0);
        feed_counters(a, 0, 0, T0);                     /* the baseline */
        feed_counters(a, 0, 3, T0 + 10 * USEC_PER_SEC); /* 3 cold compiles */
        activity_add(a, ACTIVITY_STORE, 3, 3000, T0 + 11 * USEC_PER_SEC);
        activity_set_size(a, 4000, T0 + 12 * USEC_PER_SEC);
        feed_counters(a, 3, 3, T0 + 2 * MIN + 5 * USEC_PER_SEC); /* then 3 hits */
        activity_add(a, ACTIVITY_HIT, 6, 0, T0 + 2 * MIN + 6 * USEC_PER_SEC);
        activity_add(a, ACTIVITY_EVICTION, 1, 500, T0 + 3 * MIN);
        activity_add(a, ACTIVITY_REMOVAL, 2, 700, T0 + 3 * MIN);
        activity_add(a, ACTIVITY_REGRET, 4, 900, T0 + 3 * MIN);
        activity_set_size(a, 2800, T0 + 3 * MIN);

        rows = rows_of(a, T0 + 3 * MIN + 30 * USEC_PER_SEC, 60, 5);
        /* Observed since T0: minutes 0..3, not the two before. */
        assert_int_equal(rows->n, 4);
        for (size_t i = 0; i < rows->n; i++) {
                assert_int_equal(rows->r[i].start, T0 / USEC_PER_SEC + 60 * i);
                assert_int_equal(rows->r[i].seconds, 60);
        }
        assert_int_equal(rows->r[0].misses, 3);
        assert_int_equal(rows->r[0].hits, 0);
        assert_int_equal(rows->r[0].stores, 3);
        assert_int_equal(rows->r[0].stored_bytes, 3000);
        assert_true(rows->r[0].size_known);
        assert_int_equal(rows->r[0].size_bytes, 4000);
        assert_int_equal(rows->r[1].hits + rows->r[1].misses + rows->r[1].stores, 0);
        assert_int_equal(rows->r[1].size_bytes, 4000);  /* carried on */
        assert_int_equal(rows->r[2].hits, 3);
        assert_int_equal(rows->r[2].misses, 0);
        assert_int_equal(rows->r[2].refreshed, 6);
        assert_int_equal(rows->r[3].evictions, 1);
        assert_int_equal(rows->r[3].evicted_bytes, 500);
        assert_int_equal(rows->r[3].removals, 2);
        assert_int_equal(rows->r[3].removed_bytes, 700);
        assert_int_equal(rows->r[3].regretted, 4);
        assert_int_equal(rows->r[3].regretted_bytes, 900);
        assert_int_equal(rows->r[2].regretted, 0);
        assert_int_equal(rows->r[3].size_bytes, 2800);

        /* The last 2: minutes 2 and 3 only. */
        rows = rows_of(a, T0 + 3 * MIN + 30 * USEC_PER_SEC, 60, 2);
        assert_int_equal(rows->n, 2);
        assert_int_equal(rows->r[0].start, T0 / USEC_PER_SEC + 120);

        /* One hour row holding all of it. */
        rows = rows_of(a, T0 + 3 * MIN + 30 * USEC_PER_SEC, 3600, 24);
        assert_int_equal(rows->n, 1);
        assert_int_equal(rows->r[0].seconds, 3600);
        assert_int_equal(rows->r[0].hits, 3);
        assert_int_equal(rows->r[0].misses, 3);
        assert_int_equal(rows->r[0].stores, 3);
        assert_int_equal(rows->r[0].size_bytes, 2800);
}

/* Events at random hours over 10 days, then days checked against a
 * recount by UTC day, hours against a recount by hour. */
static void test_days_sum_hours(void **state) {
        static uint64_t by_hour[240][3];
        Activity *a = *state;
        usec_t start = T0 + 5 * HOUR + 17 * MIN, now = start + 10 * DAY - 6 * HOUR;
        uint64_t hits = 0, misses = 0;
        Rows *rows;

        memset(by_hour, 0, sizeof(by_hour));
        srand(11);
        feed_counters(a, 0, 0, start);
        for (usec_t t = start; t < now; t += 7 * MIN + (usec_t) (rand() % 600) * USEC_PER_SEC) {
                uint64_t h = (t - T0) / HOUR, dh = (uint64_t) (rand() % 3), dm = (uint64_t) (rand() % 2);
                uint64_t st = (uint64_t) (rand() % 4);

                hits += dh;
                misses += dm;
                feed_counters(a, hits, misses, t);
                activity_add(a, ACTIVITY_STORE, st, st * 100, t);
                activity_set_size(a, t / USEC_PER_SEC, t);
                by_hour[h][0] += dh;
                by_hour[h][1] += dm;
                by_hour[h][2] += st;
        }
        activity_advance(a, now);

        rows = rows_of(a, now, 86400, 90);
        /* Days 0..9 (from T0): the first one from 05:17, the last up to now. */
        assert_int_equal(rows->n, 10);
        for (size_t d = 0; d < rows->n; d++) {
                uint64_t want[3] = { 0 };

                for (size_t h = 24 * d; h < 24 * d + 24; h++)
                        for (int k = 0; k < 3; k++)
                                want[k] += by_hour[h][k];
                assert_int_equal(rows->r[d].start, T0 / USEC_PER_SEC + 86400 * d);
                assert_int_equal(rows->r[d].seconds, 86400);
                assert_int_equal(rows->r[d].hits, want[0]);
                assert_int_equal(rows->r[d].misses, want[1]);
                assert_int_equal(rows->r[d].stores, want[2]);
                assert_int_equal(rows->r[d].stored_bytes, want[2] * 100);
                assert_true(rows->r[d].size_known);
        }
        /* The last 3 days only. */
        rows = rows_of(a, now, 86400, 3);
        assert_int_equal(rows->n, 3);
        assert_int_equal(rows->r[0].start, T0 / USEC_PER_SEC + 86400 * 7);

        /* Hours: the last 48, each its own recount. */
        rows = rows_of(a, now, 3600, 48);
        assert_int_equal(rows->n, 48);
        for (size_t i = 0; i < rows->n; i++) {
                uint64_t h = (now - T0) / HOUR - 47 + i;

                assert_int_equal(rows->r[i].start, T0 / USEC_PER_SEC + 3600 * h);
                assert_int_equal(rows->r[i].hits, by_hour[h][0]);
                assert_int_equal(rows->r[i].misses, by_hour[h][1]);
                assert_int_equal(rows->r[i].stores, by_hour[h][2]);
        }
        /* All of them: hits and misses sum to the whole. */
        rows = rows_of(a, now, 3600, 2160);
        {
                uint64_t h = 0, m = 0;

                for (size_t i = 0; i < rows->n; i++) {
                        h += rows->r[i].hits;
                        m += rows->r[i].misses;
                }
                assert_int_equal(h, hits);
                assert_int_equal(m, misses);
        }
}

/* A day row from a ring that holds only part of the oldest day. */
static void test_days_cut_by_ring(void **state) {
        Activity *a = *state;
        usec_t now = T0 + 100 * DAY + 3 * HOUR;
        Rows *rows;

        activity_add(a, ACTIVITY_STORE, 1, 0, T0);
        for (usec_t t = T0; t <= now; t += HOUR)
                activity_add(a, ACTIVITY_STORE, 1, 0, t);
        rows = rows_of(a, now, 86400, 90);
        /* 90 days back from day 100 is day 11, the ring (2160 h back from
         * 03:00 on day 100) starts at 04:00 of day 10: day 11 on are whole. */
        assert_int_equal(rows->n, 90);
        assert_int_equal(rows->r[0].start, T0 / USEC_PER_SEC + 11 * 86400);
        assert_int_equal(rows->r[0].stores, 24);
        assert_int_equal(rows->r[89].stores, 4);        /* 00:00 to 03:00 */
}

static void test_row_on_the_wire(void **state) {
        ProtocolHistoryRow r = { .start = 1795996800, .seconds = 60, .hits = 9, .misses = 1 };
        ProtocolHistoryRow big = { .start = UINT64_MAX, .seconds = 86400, .size_known = true,
                                   .size_bytes = UINT64_MAX };
        json_object *o = protocol_history_row(&r);
        const char *s;

        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        assert_non_null(strstr(s, "\"hit_rate\":0.9,"));
        assert_non_null(strstr(s, "\"size_bytes\":null"));
        assert_int_equal(json_object_object_length(o), 24);
        json_object_put(o);

        r.hits = r.misses = 0;
        o = protocol_history_row(&r);
        assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "\"hit_rate\":null"));
        json_object_put(o);

        /* The largest a row can be: every figure at its widest. */
        big.stores = big.hits = big.misses = big.refreshed = big.evictions = big.removals = UINT64_MAX;
        big.stored_bytes = big.evicted_bytes = big.removed_bytes = UINT64_MAX;
        big.regretted = big.regretted_bytes = UINT64_MAX;
        big.uncacheable = big.errors = big.remote_hits = big.remote_misses = big.remote_errors = UINT64_MAX;
        big.other_added_bytes = big.other_removed_bytes = big.adjusted_up_bytes = big.adjusted_down_bytes = UINT64_MAX;
        big.hits = UINT64_MAX / 3;
        big.misses = UINT64_MAX / 3;
        o = protocol_history_row(&big);
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        print_message("widest row: %zu bytes\n", strlen(s));
        /* Rows of one reply times this (and a comma) stays under the cap. */
        assert_true((strlen(s) + 1) * PROTOCOL_HISTORY_ROWS_MAX + 4096 < PROTOCOL_REPLY_MAX);
        json_object_put(o);
}

/* protocol_history_row_text is protocol_history_row's object as json-c
 * writes it, byte for byte, and fits PROTOCOL_HISTORY_ROW_TEXT_MAX; the
 * pieces of a streamed reply make protocol_encode_ok's line. */
static void test_row_text_is_json_cs(void **state) {
        ProtocolHistoryRow rows[5] = {
                { .start = 1795996800, .seconds = 60, .hits = 9, .misses = 1 },
                { .start = 1795996800, .seconds = 3600, .stores = 3, .size_known = true, .size_bytes = 0 },
                { .start = 0, .seconds = 86400, .hits = 1, .misses = 2, .regretted = 7, .remote_errors = 1 },
                { .start = UINT64_MAX, .seconds = 86400, .hits = UINT64_MAX / 3, .misses = UINT64_MAX / 3,
                  .size_known = true, .size_bytes = UINT64_MAX },
        };
        char text[PROTOCOL_HISTORY_ROW_TEXT_MAX], *line, *want;
        size_t widest = 0;
        json_object *o;

        /* every figure at its widest */
        rows[4] = rows[3];
        rows[4].stores = rows[4].refreshed = rows[4].evictions = rows[4].removals = UINT64_MAX;
        rows[4].stored_bytes = rows[4].evicted_bytes = rows[4].removed_bytes = UINT64_MAX;
        rows[4].regretted = rows[4].regretted_bytes = rows[4].uncacheable = rows[4].errors = UINT64_MAX;
        rows[4].remote_hits = rows[4].remote_misses = rows[4].remote_errors = UINT64_MAX;
        rows[4].other_added_bytes = rows[4].other_removed_bytes = UINT64_MAX;
        rows[4].adjusted_up_bytes = rows[4].adjusted_down_bytes = UINT64_MAX;
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                size_t n = protocol_history_row_text(&rows[i], text);

                o = protocol_history_row(&rows[i]);
                assert_string_equal(text, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
                assert_int_equal(n, strlen(text));
                widest = n > widest ? n : widest;
                json_object_put(o);
        }
        print_message("widest row text: %zu bytes\n", widest);
        assert_true(widest < PROTOCOL_HISTORY_ROW_TEXT_MAX);

        o = protocol_history_row(&rows[0]);
        line = protocol_encode_ok(o);
        assert_int_equal(asprintf(&want, PROTOCOL_OK_HEAD "%s" PROTOCOL_OK_TAIL,
                                  json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)), (int) strlen(line));
        assert_string_equal(line, want);
        free(line);
        free(want);
        json_object_put(o);

        line = protocol_json_string("a\"b\\c/\xff");
        assert_string_equal(line, "\"a\\\"b\\\\c/\xef\xbf\xbd\"");
        free(line);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bad_requests, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_minutes, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_days_sum_hours, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_days_cut_by_ring, setup_activity, teardown_activity),
                cmocka_unit_test(test_row_on_the_wire),
                cmocka_unit_test(test_row_text_is_json_cs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
