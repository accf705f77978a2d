/* SPDX-License-Identifier: MIT */
/* Activity buckets: boundaries, the fold of minutes into hours, expiry,
 * ccache counter deltas and resets, clock steps, and sums checked against a
 * brute-force recount of a random sequence of events. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "activity-v1.h"
#include "fixture.h"
#include "insight/activity.h"

#define MIN  (60 * USEC_PER_SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
/* 2026-11-30 00:00:00 UTC: an hour (and minute) boundary. */
#define T0 ((usec_t) 1795996800ULL * USEC_PER_SEC)

/* The rows of [since, until) at seconds, into rows (max 4096). */
static size_t rows_of(const Activity *a, usec_t since, usec_t until, unsigned seconds, ActivityRow *rows) {
        ActivityIter it;
        size_t n = 0;

        assert_int_equal(activity_iter_init(&it, a, since, until, seconds), (int) seconds);
        while (n < 4096 && activity_iter_next(&it, &rows[n]))
                n++;
        return n;
}

static uint64_t sum_kind(const Activity *a, usec_t since, usec_t until, unsigned seconds, ActivityKind k) {
        static ActivityRow rows[4096];
        size_t n = rows_of(a, since, until, seconds, rows);
        uint64_t s = 0;

        for (size_t i = 0; i < n; i++)
                s += rows[i].c.n[k];
        return s;
}

static void test_memory_figure(void **state) {
        /* The figure activity.h states: 3600 buckets of 96 bytes and a few words. */
        assert_int_equal(activity_bytes(), 519112);
}

static void test_bucket_boundaries(void **state) {
        static ActivityRow rows[4096];
        Activity *a = *state;
        size_t n;

        assert_int_equal(activity_add(a, ACTIVITY_STORE, 1, 100, T0 + MIN - 1), 0);
        assert_int_equal(activity_add(a, ACTIVITY_STORE, 2, 200, T0 + MIN), 0);
        assert_int_equal(activity_add(a, ACTIVITY_STORE, 4, 400, T0 + HOUR - 1), 0);
        assert_int_equal(activity_add(a, ACTIVITY_STORE, 8, 800, T0 + HOUR), 0);
        assert_int_equal(activity_add(a, _ACTIVITY_KIND_MAX, 1, 0, T0 + HOUR), -EINVAL);

        n = rows_of(a, T0, T0 + 2 * HOUR, 60, rows);
        assert_int_equal(n, 61);                /* minutes 0..60 after T0 */
        assert_int_equal(rows[0].start_sec, T0 / USEC_PER_SEC);
        assert_int_equal(rows[0].seconds, 60);
        assert_int_equal(rows[0].c.n[ACTIVITY_STORE], 1);
        assert_int_equal(rows[0].c.bytes[ACTIVITY_STORE], 100);
        assert_int_equal(rows[1].start_sec, T0 / USEC_PER_SEC + 60);
        assert_int_equal(rows[1].c.n[ACTIVITY_STORE], 2);
        assert_int_equal(rows[59].c.n[ACTIVITY_STORE], 4);
        assert_int_equal(rows[60].c.n[ACTIVITY_STORE], 8);
        for (size_t i = 2; i < 59; i++)
                assert_int_equal(rows[i].c.n[ACTIVITY_STORE], 0);

        n = rows_of(a, T0, T0 + 2 * HOUR, 3600, rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].start_sec, T0 / USEC_PER_SEC);
        assert_int_equal(rows[0].seconds, 3600);
        assert_int_equal(rows[0].c.n[ACTIVITY_STORE], 7);
        assert_int_equal(rows[0].c.bytes[ACTIVITY_STORE], 700);
        assert_int_equal(rows[1].c.n[ACTIVITY_STORE], 8);

        /* [since, until) by bucket start: T0+1us leaves minute 0 out. */
        assert_int_equal(sum_kind(a, T0 + 1, T0 + HOUR, 60, ACTIVITY_STORE), 6);
        assert_int_equal(sum_kind(a, T0, T0 + MIN, 60, ACTIVITY_STORE), 1);
        assert_int_equal(activity_iter_init(&(ActivityIter) { 0 }, a, 0, 1, 7), -EINVAL);

        /* Minutes while the minute ring holds every minute from since on. */
        assert_int_equal(activity_granularity(a, T0 + HOUR - DAY + MIN), 60);
        assert_int_equal(activity_granularity(a, T0 + HOUR - DAY + 1), 60);
        assert_int_equal(activity_granularity(a, T0 + HOUR - DAY), 3600);
}

static void test_minutes_fold_into_hours(void **state) {
        Activity *a = *state;
        ActivityCounts c;

        activity_add(a, ACTIVITY_HIT, 5, 0, T0 + 10 * MIN);
        activity_add(a, ACTIVITY_HIT, 6, 0, T0 + 50 * MIN);
        /* Still within 24 h: the minutes have them. */
        activity_advance(a, T0 + 23 * HOUR);
        assert_int_equal(activity_sum(a, T0, T0 + HOUR, &c), 60);
        assert_int_equal(c.n[ACTIVITY_HIT], 11);
        /* 25 h on, the minutes are gone and the hour has them all. */
        activity_advance(a, T0 + 25 * HOUR);
        assert_int_equal(sum_kind(a, T0, T0 + HOUR, 60, ACTIVITY_HIT), 0);
        assert_int_equal(activity_sum(a, T0, T0 + HOUR, &c), 3600);
        assert_int_equal(c.n[ACTIVITY_HIT], 11);
        /* A sum over 7 d uses hours, the current one up to date. */
        activity_add(a, ACTIVITY_HIT, 7, 0, T0 + 25 * HOUR + MIN);
        assert_int_equal(activity_sum(a, T0 + 25 * HOUR + 2 * MIN - 7 * DAY, T0 + 25 * HOUR + 2 * MIN, &c), 3600);
        assert_int_equal(c.n[ACTIVITY_HIT], 18);
}

static void test_ninety_day_expiry(void **state) {
        Activity *a = *state;
        ActivityCounts c;

        activity_add(a, ACTIVITY_EVICTION, 3, 3000, T0 + 5 * MIN);
        activity_advance(a, T0 + 90 * DAY - 1);         /* hour 2159 after: still held */
        activity_sum(a, 0, T0 + 91 * DAY, &c);
        assert_int_equal(c.n[ACTIVITY_EVICTION], 3);
        assert_int_equal(c.bytes[ACTIVITY_EVICTION], 3000);
        activity_advance(a, T0 + 90 * DAY);             /* its slot is reused */
        activity_sum(a, 0, T0 + 91 * DAY, &c);
        assert_int_equal(c.n[ACTIVITY_EVICTION], 0);
        assert_int_equal(c.bytes[ACTIVITY_EVICTION], 0);
}

/* ccache totals with hits h (direct), misses m and zero stamp z. */
static void totals(uint64_t *t, uint64_t h, uint64_t m, uint64_t z) {
        memset(t, 0, ACTIVITY_CCACHE_TOTALS * sizeof(*t));
        t[22] = h;
        t[4] = m;
        t[31] = z;
}

/* A rebase: the sums are read again from nothing (the cache was lost and
 * found again); their first value is no spike, the next ones count. */
static void test_counters_rebase(void **state) {
        uint64_t t[ACTIVITY_CCACHE_TOTALS];
        Activity *a = *state;
        ActivityCounts c;

        totals(t, 100, 10, 0);
        assert_int_equal(activity_counters(a, t, T0), 1);
        activity_counters_rebase(a);
        totals(t, 40, 4, 0);
        assert_int_equal(activity_counters(a, t, T0 + MIN), 1);
        totals(t, 100, 10, 0);
        assert_int_equal(activity_counters(a, t, T0 + 2 * MIN), 0);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_CCACHE_HITS], 60);
        assert_int_equal(c.n[ACTIVITY_CCACHE_MISSES], 6);
}

static void test_counters_baseline_and_reset(void **state) {
        uint64_t t[ACTIVITY_CCACHE_TOTALS];
        Activity *a = *state;
        ActivityCounts c;

        /* The first sample is a baseline: a lifetime of hits is no spike. */
        totals(t, 100000, 5000, 1700000000);
        assert_int_equal(activity_counters(a, t, T0), 1);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_CCACHE_HITS], 0);
        assert_int_equal(c.n[ACTIVITY_CCACHE_MISSES], 0);

        totals(t, 100010, 5002, 1700000000);
        assert_int_equal(activity_counters(a, t, T0 + MIN), 0);
        /* ccache -z: everything drops to 0 and its timestamp moves... */
        totals(t, 0, 0, 1795996900);
        activity_counters(a, t, T0 + 2 * MIN);
        /* ...then grows again: deltas from 0. */
        totals(t, 3, 1, 1795996900);
        activity_counters(a, t, T0 + 3 * MIN);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_CCACHE_HITS], 13);
        assert_int_equal(c.n[ACTIVITY_CCACHE_MISSES], 3);

        /* ccache -z and new calls between two samples: the new total is the delta. */
        totals(t, 2, 0, 1795997000);
        activity_counters(a, t, T0 + 4 * MIN);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_CCACHE_HITS], 15);

        /* A stats file cleared without -z: never negative, never the rest of a lifetime. */
        totals(t, 500, 0, 1795997000);
        activity_counters(a, t, T0 + 5 * MIN);
        totals(t, 400, 0, 1795997000);
        activity_counters(a, t, T0 + 6 * MIN);
        totals(t, 404, 1, 1795997000);
        activity_counters(a, t, T0 + 7 * MIN);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_CCACHE_HITS], 15 + 498 + 4);
        assert_int_equal(c.n[ACTIVITY_CCACHE_MISSES], 4);
}

static void test_counters_kinds(void **state) {
        static const struct {
                ActivityKind kind;
                uint64_t expect;
        } kinds[] = {
                { ACTIVITY_CCACHE_HITS, 2 },            /* 8, 22 */
                { ACTIVITY_CCACHE_MISSES, 1 },          /* 4 */
                { ACTIVITY_CCACHE_UNCACHEABLE, 21 },
                { ACTIVITY_CCACHE_ERRORS, 8 },
                { ACTIVITY_CCACHE_REMOTE_HITS, 1 },     /* 47 */
                { ACTIVITY_CCACHE_REMOTE_MISSES, 1 },   /* 48 */
                { ACTIVITY_CCACHE_REMOTE_ERRORS, 2 },   /* 39, 40 */
        };
        uint64_t t[ACTIVITY_CCACHE_TOTALS] = { 0 };
        Activity *a = *state;
        ActivityCounts c;

        activity_counters(a, t, T0);
        /* One call of every kind ccache counts; never the size counters or the stamp. */
        for (size_t i = 0; i < ACTIVITY_CCACHE_TOTALS; i++)
                if (i != 31)
                        t[i] = 1;
        t[11] = t[12] = 777777;
        activity_counters(a, t, T0 + MIN);
        activity_sum(a, 0, T0 + DAY, &c);
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                assert_int_equal(c.n[kinds[i].kind], kinds[i].expect);
        for (size_t k = 0; k < _ACTIVITY_EVENT_MAX; k++)
                assert_int_equal(c.n[k], 0);
}

static void test_hit_rate(void **state) {
        uint64_t t[ACTIVITY_CCACHE_TOTALS];
        Activity *a = *state;
        double r = -1;

        assert_false(activity_hit_rate(a, HOUR, T0, &r));
        /* The daemon's own events are no cacheable calls. */
        activity_add(a, ACTIVITY_HIT, 10, 0, T0);
        activity_add(a, ACTIVITY_STORE, 10, 0, T0);
        assert_false(activity_hit_rate(a, HOUR, T0, &r));
        assert_true(r == -1);

        totals(t, 0, 0, 0);
        activity_counters(a, t, T0);
        totals(t, 9, 1, 0);
        activity_counters(a, t, T0 + 10 * MIN);
        assert_true(activity_hit_rate(a, HOUR, T0 + 10 * MIN, &r));
        assert_true(r > 0.899 && r < 0.901);
        totals(t, 9, 31, 0);
        activity_counters(a, t, T0 + 2 * HOUR);
        assert_true(activity_hit_rate(a, HOUR, T0 + 2 * HOUR, &r));
        assert_true(r == 0);
        assert_true(activity_hit_rate(a, DAY, T0 + 2 * HOUR, &r));
        assert_true(r > 0.224 && r < 0.226);    /* 9 / 40 */
        /* An hour without calls. */
        assert_false(activity_hit_rate(a, HOUR, T0 + 4 * HOUR, &r));
}

static void test_size_at_end_of_bucket(void **state) {
        static ActivityRow rows[4096];
        Activity *a = *state;
        ActivityCounts c;
        size_t n;

        activity_add(a, ACTIVITY_STORE, 1, 0, T0);
        activity_set_size(a, 1000, T0 + 1);
        activity_set_size(a, 2000, T0 + 2);
        activity_advance(a, T0 + 3 * MIN);
        n = rows_of(a, T0 - MIN, T0 + 4 * MIN, 60, rows);
        assert_int_equal(n, 4);                 /* nothing before the first count */
        assert_int_equal(rows[0].c.size_bytes, 2000);
        assert_int_equal(rows[3].c.size_bytes, 2000);   /* carried into empty buckets */
        activity_set_size(a, 500, T0 + 3 * MIN + 1);
        assert_int_equal(activity_sum(a, T0, T0 + 4 * MIN, &c), 60);
        assert_int_equal(c.size_bytes, 500);
        n = rows_of(a, T0, T0 + HOUR, 3600, rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].c.size_bytes, 500);
}

/* Every hour whose minutes the ring holds equals the sum of its minutes. */
static void check_hours_match_minutes(const Activity *a, usec_t now) {
        static ActivityRow hours[4096];
        size_t n = rows_of(a, now - DAY + HOUR, now + 1, 3600, hours);

        for (size_t i = 0; i < n; i++) {
                usec_t s = hours[i].start_sec * USEC_PER_SEC;

                for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                        assert_int_equal(hours[i].c.n[k], sum_kind(a, s, s + HOUR, 60, (ActivityKind) k));
        }
}

static void test_time_going_backwards(void **state) {
        Activity *a = *state;
        ActivityCounts c;

        activity_add(a, ACTIVITY_STORE, 1, 10, T0 + 10 * MIN);
        activity_add(a, ACTIVITY_STORE, 2, 20, T0 + 20 * MIN);
        activity_add(a, ACTIVITY_STORE, 4, 40, T0 + 30 * MIN);
        /* Stepped back 15 minutes: what was counted after now goes, from both rings. */
        activity_add(a, ACTIVITY_HIT, 1, 0, T0 + 15 * MIN);
        activity_sum(a, 0, T0 + DAY, &c);
        assert_int_equal(c.n[ACTIVITY_STORE], 1);
        assert_int_equal(c.bytes[ACTIVITY_STORE], 10);
        assert_int_equal(c.n[ACTIVITY_HIT], 1);
        assert_int_equal(sum_kind(a, 0, T0 + DAY, 3600, ACTIVITY_STORE), 1);
        check_hours_match_minutes(a, T0 + 15 * MIN);
        /* Counting carries on from there. */
        activity_add(a, ACTIVITY_STORE, 8, 80, T0 + 20 * MIN);
        assert_int_equal(sum_kind(a, 0, T0 + DAY, 60, ACTIVITY_STORE), 9);
        assert_int_equal(sum_kind(a, 0, T0 + DAY, 3600, ACTIVITY_STORE), 9);

        /* Hours later, back across an hour boundary. */
        activity_add(a, ACTIVITY_STORE, 16, 0, T0 + 3 * HOUR + 5 * MIN);
        activity_add(a, ACTIVITY_STORE, 32, 0, T0 + 50 * MIN);
        assert_int_equal(sum_kind(a, 0, T0 + DAY, 60, ACTIVITY_STORE), 41);
        assert_int_equal(sum_kind(a, 0, T0 + DAY, 3600, ACTIVITY_STORE), 41);
        check_hours_match_minutes(a, T0 + 50 * MIN);

        /* Ten days ahead and back: beyond the minute ring, within the hour
         * ring. What was counted in the future goes; the hours before it
         * stay (their minutes had expired when the clock jumped ahead). */
        activity_add(a, ACTIVITY_STORE, 64, 0, T0 + 10 * DAY);
        activity_add(a, ACTIVITY_STORE, 1, 0, T0 + 2 * HOUR);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 3600, ACTIVITY_STORE), 41 + 1);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 60, ACTIVITY_STORE), 1);
        activity_add(a, ACTIVITY_STORE, 1, 0, T0 + 3 * HOUR + 30 * MIN);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 3600, ACTIVITY_STORE), 43);

        /* A year ahead (which expires everything) and back: counting is sound. */
        activity_add(a, ACTIVITY_STORE, 128, 0, T0 + 365 * DAY);
        activity_add(a, ACTIVITY_STORE, 256, 0, T0 + 10 * HOUR + 30 * MIN);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 3600, ACTIVITY_STORE), 256);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 60, ACTIVITY_STORE), 256);
        activity_add(a, ACTIVITY_HIT, 3, 0, T0 + 11 * HOUR);
        check_hours_match_minutes(a, T0 + 11 * HOUR);

        /* Back more than 24 h into an hour whose later minutes had expired:
         * the hour cannot tell them apart, so none of it stays. */
        activity_add(a, ACTIVITY_REMOVAL, 5, 0, T0 + 12 * HOUR + 50 * MIN);
        activity_add(a, ACTIVITY_HIT, 1, 0, T0 + 38 * HOUR);
        activity_add(a, ACTIVITY_HIT, 1, 0, T0 + 12 * HOUR + 10 * MIN);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 3600, ACTIVITY_REMOVAL), 0);
        assert_int_equal(sum_kind(a, 0, UINT64_MAX, 3600, ACTIVITY_HIT), 3 + 1);
}

typedef struct Event {
        usec_t t;
        unsigned kind;
        uint64_t n, bytes;
} Event;

/* The events of ev[0..n) whose bucket of g seconds starts in [since, until). */
static void brute_sum(const Event *ev, size_t n, unsigned g, usec_t since, usec_t until, ActivityCounts *ret) {
        usec_t unit = g * USEC_PER_SEC;

        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; i < n; i++) {
                usec_t start = ev[i].t / unit * unit;

                if (start < since || start >= until)
                        continue;
                ret->n[ev[i].kind] += ev[i].n;
                if (ev[i].kind < _ACTIVITY_EVENT_MAX)
                        ret->bytes[ev[i].kind] += ev[i].bytes;
        }
}

static void check_windows(const Activity *a, const Event *ev, size_t n, usec_t now) {
        static const usec_t windows[] = { HOUR, DAY, 7 * DAY };

        for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
                usec_t since = now - windows[w] + 1, until = now + 1;
                ActivityCounts got, want;
                unsigned g = activity_sum(a, since, until, &got);
                double r = -1;
                bool have;

                assert_int_equal(g, windows[w] == 7 * DAY ? 3600 : 60);
                brute_sum(ev, n, g, since, until, &want);
                assert_memory_equal(got.n, want.n, sizeof(got.n));
                assert_memory_equal(got.bytes, want.bytes, sizeof(got.bytes));
                have = activity_hit_rate(a, windows[w], now, &r);
                assert_int_equal(have, want.n[ACTIVITY_CCACHE_HITS] + want.n[ACTIVITY_CCACHE_MISSES] > 0);
                if (have)
                        assert_true(r == (double) want.n[ACTIVITY_CCACHE_HITS] /
                                                 (double) (want.n[ACTIVITY_CCACHE_HITS] + want.n[ACTIVITY_CCACHE_MISSES]));
        }
}

static void test_sums_equal_brute_force(void **state) {
        enum { N = 20000 };
        Event *ev = calloc(N, sizeof(*ev));
        Activity *a = *state;
        usec_t t = T0 + 123456789;

        assert_non_null(ev);
        srand(42);
        for (size_t i = 0; i < N; i++) {
                /* Mostly seconds apart, sometimes hours: about 50 days in all. */
                t += rand() % 10 == 0 ? (usec_t) (rand() % 3600) * USEC_PER_SEC
                                      : (usec_t) rand() % (90 * USEC_PER_SEC);
                ev[i] = (Event) { .t = t, .kind = (unsigned) (rand() % _ACTIVITY_KIND_MAX),
                                  .n = 1 + (uint64_t) (rand() % 5), .bytes = (uint64_t) (rand() % 100000) };
                assert_int_equal(activity_add(a, (ActivityKind) ev[i].kind, ev[i].n, ev[i].bytes, t), 0);
                if (i % 997 == 0)
                        check_windows(a, ev, i + 1, t + (usec_t) (rand() % 120) * USEC_PER_SEC);
        }
        check_windows(a, ev, N, t);
        check_hours_match_minutes(a, t);
        free(ev);
}

static void test_encode_decode(void **state) {
        static uint8_t buf[ACTIVITY_ENCODED_BYTES], again[ACTIVITY_ENCODED_BYTES];
        Activity **two = *state, *a = two[0], *b = two[1];
        ActivityCounts ca, cb;

        activity_add(a, ACTIVITY_STORE, 3, 300, T0 + 5 * MIN);
        activity_add(a, ACTIVITY_REMOVAL, 2, 200, T0 + 2 * DAY);
        activity_set_size(a, 12345, T0 + 2 * DAY);
        activity_encode(a, buf);
        assert_int_equal(activity_decode(b, buf, _ACTIVITY_EVENT_MAX, T0 + 2 * DAY), 0);
        activity_encode(b, again);
        assert_memory_equal(buf, again, sizeof(buf));
        activity_sum(a, 0, UINT64_MAX, &ca);
        activity_sum(b, 0, UINT64_MAX, &cb);
        assert_memory_equal(&ca, &cb, sizeof(ca));

        buf[16] = 2;                    /* "started" is 0 or 1 */
        assert_int_equal(activity_decode(b, buf, _ACTIVITY_EVENT_MAX, T0), -EBADMSG);
        activity_encode(b, buf);
        assert_memory_equal(buf, again, sizeof(buf));   /* b unchanged */
        assert_int_equal(activity_decode(b, buf, 0, T0), -EBADMSG);
        assert_int_equal(activity_decode(b, buf, _ACTIVITY_EVENT_MAX + 1, T0), -EBADMSG);
}

/* An encoding of a build before ACTIVITY_REGRET (history file version 1):
 * buckets of 4 daemon kinds then the same ccache kinds. Every kind reads
 * back where it was, regret as 0. */
static void test_decode_older(void **state) {
        static uint8_t buf[ACTIVITY_ENCODED_BYTES], old[ACTIVITY_V1_ENCODED_BYTES];
        Activity **two = *state, *a = two[0], *b = two[1];
        uint64_t totals[ACTIVITY_CCACHE_TOTALS] = { 0 };
        ActivityCounts ca, cb;

        assert_int_equal(ACTIVITY_BUCKET_BYTES_OF(ACTIVITY_V1_EVENTS), 84);    /* version 1's */
        activity_add(a, ACTIVITY_STORE, 3, 300, T0 + 5 * MIN);
        activity_add(a, ACTIVITY_REMOVAL, 2, 200, T0 + 2 * DAY);
        activity_add(a, ACTIVITY_REGRET, 4, 400, T0 + 2 * DAY);
        activity_counters(a, totals, T0 + 2 * DAY);
        totals[4] = 7;                                  /* 7 misses */
        totals[40] = 5;                                 /* 5 remote timeouts */
        activity_counters(a, totals, T0 + 2 * DAY + MIN);
        activity_set_size(a, 12345, T0 + 2 * DAY + MIN);
        activity_encode(a, buf);
        activity_encoding_v1(buf, old);
        assert_int_equal(activity_decode(b, old, ACTIVITY_V1_EVENTS, T0 + 2 * DAY + MIN), 0);
        activity_sum(a, 0, UINT64_MAX, &ca);
        activity_sum(b, 0, UINT64_MAX, &cb);
        assert_int_equal(cb.n[ACTIVITY_REGRET], 0);
        assert_int_equal(cb.bytes[ACTIVITY_REGRET], 0);
        ca.n[ACTIVITY_REGRET] = ca.bytes[ACTIVITY_REGRET] = 0;
        assert_memory_equal(&ca, &cb, sizeof(ca));
        assert_int_equal(cb.n[ACTIVITY_CCACHE_MISSES], 7);
        assert_int_equal(cb.n[ACTIVITY_CCACHE_REMOTE_ERRORS], 5);
        assert_int_equal(cb.bytes[ACTIVITY_REMOVAL], 200);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_memory_figure),
                cmocka_unit_test_setup_teardown(test_bucket_boundaries, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_minutes_fold_into_hours, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_ninety_day_expiry, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_counters_baseline_and_reset, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_counters_rebase, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_counters_kinds, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_hit_rate, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_size_at_end_of_bucket, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_time_going_backwards, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_sums_equal_brute_force, setup_activity, teardown_activity),
                cmocka_unit_test_setup_teardown(test_encode_decode, setup_two_activities, teardown_two_activities),
                cmocka_unit_test_setup_teardown(test_decode_older, setup_two_activities, teardown_two_activities),
        };

        return cmocka_run_group_tests_name("activity", tests, NULL, NULL);
}
