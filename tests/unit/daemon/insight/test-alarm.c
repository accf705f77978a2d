/* SPDX-License-Identifier: MIT */
/* The cache-silent-miss and cache-idle decisions on real activity buckets:
 * thresholds, hysteresis, the cold-cache rule, idle and its recovery, and
 * messages that name what changed when the drop began. Evaluated minute by
 * minute, as the daemon does, counting the events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "insight/alarm.h"

#define MIN  (60 * USEC_PER_SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
/* 2026-11-30 00:00:00 UTC. */
#define T0 ((usec_t) 1795996800ULL * USEC_PER_SEC)

static const AlarmThresholds defaults = {
        .window_usec = HOUR, .min_calls = 50, .hit_rate = 0.05, .idle_after_usec = 7 * DAY,
};

static int setup(void **state) {
        setenv("TZ", "UTC0", 1);
        tzset();
        return 0;
}

/* The activity records a test goes through, one per case it runs, all
 * new at its start and freed at its end. */
#define CASES_MAX 4

typedef struct Fixture {
        Activity *a[CASES_MAX];
        unsigned used;
} Fixture;

static int setup_activities(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        for (unsigned i = 0; i < CASES_MAX; i++)
                assert_int_equal(activity_new(&f->a[i]), 0);
        *state = f;
        return 0;
}

static int teardown_activities(void **state) {
        Fixture *f = *state;

        for (unsigned i = 0; i < CASES_MAX; i++)
                activity_free(f->a[i]);
        free(f);
        return 0;
}

/* The test's next new activity record, its history begun at origin. */
static Activity *new_activity(void **state, usec_t origin) {
        Fixture *f = *state;
        Activity *a;

        assert_true(f->used < CASES_MAX);
        a = f->a[f->used++];
        activity_advance(a, origin);
        return a;
}

typedef struct Run {
        unsigned fired, recovered;
        char fire[512], recover[512];
} Run;

/* Minute by minute over [from, to), as the daemon lives it: hits and misses
 * counted 30 s into the minute, cache-silent-miss evaluated at its end. */
static void run_silent(Run *r, AlarmState *s, Activity *a, const AlarmThresholds *t, const AlarmChanges *ch,
                       usec_t from, usec_t to, uint64_t hits, uint64_t misses) {
        for (usec_t m = from; m < to; m += MIN) {
                char msg[512] = "unchanged";

                if (hits)
                        assert_int_equal(activity_add(a, ACTIVITY_CCACHE_HITS, hits, 0, m + 30 * USEC_PER_SEC), 0);
                if (misses)
                        assert_int_equal(activity_add(a, ACTIVITY_CCACHE_MISSES, misses, 0, m + 30 * USEC_PER_SEC), 0);
                activity_advance(a, m + MIN - 1);
                switch (alarm_silent(s, a, t, ch, "t", m + MIN - 1, msg, sizeof(msg))) {
                case ALARM_FIRE:
                        r->fired++;
                        strcpy(r->fire, msg);
                        break;
                case ALARM_RECOVER:
                        r->recovered++;
                        strcpy(r->recover, msg);
                        break;
                case ALARM_NONE:
                        assert_string_equal(msg, "unchanged");
                        break;
                }
        }
}

static void test_healthy_rate(void **state) {
        assert_true(alarm_healthy_rate(0.05) == 0.10);
        assert_true(alarm_healthy_rate(0.25) == 0.50);
        assert_true(alarm_healthy_rate(0.5) == 0.75);      /* halfway to 1, not 100 % */
        assert_true(alarm_healthy_rate(1.0) == 1.0);
        assert_true(alarm_healthy_rate(0.0) == 0.0);
}

/* Two healthy hours from T0 (10 hits, 1 miss a minute) into *a. */
static Activity *healthy(void **state, Run *r, AlarmState *s, const AlarmChanges *ch) {
        Activity *a = new_activity(state, T0);

        run_silent(r, s, a, &defaults, ch, T0, T0 + 2 * HOUR, 10, 1);
        assert_int_equal(r->fired, 0);
        return a;
}

static void test_silent_fires_once_and_names_the_conf_change(void **state) {
        usec_t drop = T0 + 2 * HOUR;
        AlarmChanges ch = { .conf_changed_at = drop - 20 * USEC_PER_SEC, .conf_change = "namespace: \"\" -> \"x\"" };
        AlarmState s = { 0 };
        Run r = { 0 };
        Activity *a = healthy(state, &r, &s, &ch);

        /* Every call misses: it fires once, as soon as the window has 50 calls. */
        run_silent(&r, &s, a, &defaults, &ch, drop, drop + 24 * MIN, 0, 2);
        assert_int_equal(r.fired, 0);
        run_silent(&r, &s, a, &defaults, &ch, drop + 24 * MIN, drop + 3 * HOUR, 0, 2);
        assert_int_equal(r.fired, 1);
        assert_int_equal(r.recovered, 0);
        assert_true(s.silent);
        assert_string_equal(r.fire, "Cache t misses silently: hit rate 0% over the last 1h (0 hits of 120 "
                                    "calls), was 91% in the 24h before (1200 of 1320); ccache.conf changed at "
                                    "01:59 (namespace: \"\" -> \"x\").");
}

static void test_silent_not_below_min_calls_nor_at_threshold(void **state) {
        usec_t drop = T0 + 2 * HOUR;
        AlarmThresholds t = defaults;
        AlarmState s = { 0 };
        Run r = { 0 };
        Activity *a = healthy(state, &r, &s, NULL);

        /* 0.8 calls a minute after the drop: 48 an hour, below 50. */
        for (usec_t m = drop; m < drop + 3 * HOUR; m += 5 * MIN) {
                run_silent(&r, &s, a, &t, NULL, m, m + MIN, 0, 4);
                run_silent(&r, &s, a, &t, NULL, m + MIN, m + 5 * MIN, 0, 0);
        }
        assert_int_equal(r.fired, 0);

        /* Exactly at silent_hit_rate is not below it. */
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        a = healthy(state, &r, &s, NULL);
        run_silent(&r, &s, a, &t, NULL, drop, drop + 3 * HOUR, 1, 19);
        assert_int_equal(r.fired, 0);
        /* silent_hit_rate 0 %: never. */
        t.hit_rate = 0;
        run_silent(&r, &s, a, &t, NULL, drop + 3 * HOUR, drop + 5 * HOUR, 0, 20);
        assert_int_equal(r.fired, 0);
}

static void test_silent_hysteresis(void **state) {
        usec_t drop = T0 + 2 * HOUR, back = drop + 2 * HOUR;
        AlarmState s = { 0 };
        Run r = { 0 };
        Activity *a = healthy(state, &r, &s, NULL);

        run_silent(&r, &s, a, &defaults, NULL, drop, back, 0, 2);
        assert_int_equal(r.fired, 1);
        /* Hovering between 5 % and 10 % for three hours: neither over nor again. */
        run_silent(&r, &s, a, &defaults, NULL, back, back + 3 * HOUR, 7, 93);
        assert_int_equal(r.fired, 1);
        assert_int_equal(r.recovered, 0);
        /* Healthy but too few calls (after an hour without any): 10 an hour, all hits. */
        run_silent(&r, &s, a, &defaults, NULL, back + 3 * HOUR, back + 4 * HOUR, 0, 0);
        for (usec_t m = back + 4 * HOUR; m < back + 5 * HOUR; m += 6 * MIN) {
                run_silent(&r, &s, a, &defaults, NULL, m, m + MIN, 1, 0);
                run_silent(&r, &s, a, &defaults, NULL, m + MIN, m + 6 * MIN, 0, 0);
        }
        assert_int_equal(r.recovered, 0);
        /* Hits again, 10 %: over once, at twice silent_hit_rate. */
        run_silent(&r, &s, a, &defaults, NULL, back + 5 * HOUR, back + 8 * HOUR, 1, 9);
        assert_int_equal(r.recovered, 1);
        assert_int_equal(r.fired, 1);
        assert_false(s.silent);
        assert_non_null(strstr(r.recover, "Cache t hits again: "));
        assert_non_null(strstr(r.recover, " over the last 1h ("));
}

static void test_silent_cold_cache(void **state) {
        Activity *a = new_activity(state, T0);
        AlarmState s = { 0 };
        Run r = { 0 };

        /* A cold build of 90 minutes, every call a miss: two windows of 1h
         * have not passed since its calls began at 00:10. */
        run_silent(&r, &s, a, &defaults, NULL, T0, T0 + 10 * MIN, 0, 0);
        run_silent(&r, &s, a, &defaults, NULL, T0 + 10 * MIN, T0 + 129 * MIN, 0, 3);
        assert_int_equal(r.fired, 0);
        /* Still no hit two windows after: it fires. */
        run_silent(&r, &s, a, &defaults, NULL, T0 + 129 * MIN, T0 + 200 * MIN, 0, 3);
        assert_int_equal(r.fired, 1);
        assert_string_equal(r.fire, "Cache t misses silently: hit rate 0% over the last 1h (0 hits of 180 calls), and "
                                    "not one hit since its calls began 2h ago; nothing the daemon saw changed: check "
                                    "the compiler, its flags, CCACHE_* in the build environment.");

        /* One hit in its history: not cold, and never healthy: nothing. */
        a = new_activity(state, T0);
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        run_silent(&r, &s, a, &defaults, NULL, T0, T0 + MIN, 1, 0);
        run_silent(&r, &s, a, &defaults, NULL, T0 + MIN, T0 + 300 * MIN, 0, 3);
        assert_int_equal(r.fired, 0);

        /* Found standing at the daemon's first look (after a restart): said so. */
        a = new_activity(state, T0);
        s = (AlarmState) { .silent_checked = true };
        r = (Run) { 0 };
        run_silent(&r, &s, a, &defaults, NULL, T0, T0 + 200 * MIN, 0, 3);
        assert_int_equal(r.fired, 1);
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        run_silent(&r, &s, a, &defaults, NULL, T0 + 200 * MIN, T0 + 201 * MIN, 0, 3);
        assert_int_equal(r.fired, 1);
        assert_non_null(strstr(r.fire, "build environment (standing when the daemon started: it may have been "
                                       "reported before)."));
}

static void test_silent_names_what_changed(void **state) {
        usec_t drop = T0 + 2 * HOUR;
        AlarmChanges ch = {
                .family_first_store = { T0 + 5 * MIN, drop + 40 * USEC_PER_SEC },
                .family_entries = { 500, 20 },
                .conf_changed_at = T0 + 30 * MIN,       /* long before the drop: not it */
                .conf_change = "compression: true -> false",
        };
        AlarmState s = { 0 };
        Run r = { 0 };
        Activity *a = healthy(state, &r, &s, &ch);

        run_silent(&r, &s, a, &defaults, &ch, drop, drop + 3 * HOUR, 0, 2);
        assert_int_equal(r.fired, 1);
        assert_non_null(strstr(r.fire, "; the first entries of another ccache version (4.13+ names) appeared at "
                                       "02:00."));
        assert_null(strstr(r.fire, "ccache.conf"));
        assert_null(strstr(r.fire, "4.12 or older"));
        assert_null(strstr(r.fire, "nothing the daemon saw"));

        /* A cache that only ever held 4.13+ entries: their first store since the
         * start is no new version. Nothing seen: said so. */
        ch = (AlarmChanges) { .family_first_store = { 0, drop + 40 * USEC_PER_SEC }, .family_entries = { 0, 900 } };
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        a = healthy(state, &r, &s, &ch);
        run_silent(&r, &s, a, &defaults, &ch, drop, drop + 3 * HOUR, 0, 2);
        assert_int_equal(r.fired, 1);
        assert_null(strstr(r.fire, "another ccache version"));
        assert_non_null(strstr(r.fire, "; nothing the daemon saw changed: check the compiler"));

        /* Evictions that took most of the cache just before the drop. */
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        a = healthy(state, &r, &s, NULL);
        activity_set_size(a, 1000000000, drop - MIN + 1);
        assert_int_equal(activity_add(a, ACTIVITY_EVICTION, 3000, 800000000, drop + 10 * USEC_PER_SEC), 0);
        activity_set_size(a, 200000000, drop + 10 * USEC_PER_SEC);
        run_silent(&r, &s, a, &defaults, NULL, drop, drop + 3 * HOUR, 0, 2);
        assert_int_equal(r.fired, 1);
        assert_non_null(strstr(r.fire, "; evictions by the daemon took 800.0M of the 1.0G it held (3000 files) since "
                                       "00:59."));

        /* A removal of a tenth of it is not what made every call miss. */
        s = (AlarmState) { 0 };
        r = (Run) { 0 };
        a = healthy(state, &r, &s, NULL);
        activity_set_size(a, 1000000000, drop - MIN + 1);
        assert_int_equal(activity_add(a, ACTIVITY_REMOVAL, 300, 100000000, drop + 10 * USEC_PER_SEC), 0);
        run_silent(&r, &s, a, &defaults, NULL, drop, drop + 3 * HOUR, 0, 2);
        assert_int_equal(r.fired, 1);
        assert_null(strstr(r.fire, "removals"));
        assert_non_null(strstr(r.fire, "nothing the daemon saw changed"));
}

typedef struct IdleRun {
        unsigned fired, recovered;
        usec_t fired_at, recovered_at;
        char fire[512], recover[512];
} IdleRun;

static void run_idle(IdleRun *r, AlarmState *s, Activity *a, usec_t idle_after, usec_t newest, usec_t from,
                     usec_t to) {
        for (usec_t now = from; now < to; now += 10 * USEC_PER_SEC) {
                char msg[512] = "unchanged";

                activity_advance(a, now);
                switch (alarm_idle(s, a, idle_after, newest, "t", now, msg, sizeof(msg))) {
                case ALARM_FIRE:
                        if (r->fired++ == 0)
                                r->fired_at = now;
                        strcpy(r->fire, msg);
                        break;
                case ALARM_RECOVER:
                        if (r->recovered++ == 0)
                                r->recovered_at = now;
                        strcpy(r->recover, msg);
                        break;
                case ALARM_NONE:
                        assert_string_equal(msg, "unchanged");
                        break;
                }
        }
}

static void test_idle(void **state) {
        Activity *a = new_activity(state, T0);
        AlarmState s = { .idle_checked = true };
        IdleRun r = { 0 };

        /* A compile at 00:10:30, then nothing: idle once 1 h has passed since
         * the minute it was counted in ended, and not before. */
        run_idle(&r, &s, a, HOUR, 0, T0, T0 + 10 * MIN + 30 * USEC_PER_SEC);
        assert_int_equal(activity_add(a, ACTIVITY_CCACHE_MISSES, 1, 0, T0 + 10 * MIN + 30 * USEC_PER_SEC), 0);
        run_idle(&r, &s, a, HOUR, 0, T0 + 10 * MIN + 30 * USEC_PER_SEC, T0 + 2 * HOUR);
        assert_int_equal(r.fired, 1);
        assert_int_equal(r.fired_at, T0 + 71 * MIN);
        assert_string_equal(r.fire, "Cache t is idle: no store, no hit and no ccache call for 1h (the last at 00:11): "
                                    "a container that lost its mount, or a compiler shim that broke?");
        /* A store alone is activity: in use again, once. */
        assert_int_equal(activity_add(a, ACTIVITY_STORE, 1, 4096, T0 + 2 * HOUR + 5 * USEC_PER_SEC), 0);
        run_idle(&r, &s, a, HOUR, 0, T0 + 2 * HOUR + 10 * USEC_PER_SEC, T0 + 2 * HOUR + 30 * MIN);
        assert_int_equal(r.recovered, 1);
        assert_int_equal(r.fired, 1);
        assert_string_equal(r.recover, "Cache t is in use again, after 1h 49m without a store, a hit or a call.");
        /* And a hit (an entry refreshed) ends the next idle spell too. */
        run_idle(&r, &s, a, HOUR, 0, T0 + 2 * HOUR + 30 * MIN, T0 + 4 * HOUR);
        assert_int_equal(r.fired, 2);
        assert_int_equal(activity_add(a, ACTIVITY_HIT, 1, 4096, T0 + 4 * HOUR + USEC_PER_SEC), 0);
        run_idle(&r, &s, a, HOUR, 0, T0 + 4 * HOUR + 10 * USEC_PER_SEC, T0 + 4 * HOUR + 20 * USEC_PER_SEC);
        assert_int_equal(r.recovered, 2);
}

static void test_idle_since_history_began(void **state) {
        Activity *a = new_activity(state, T0 + 5 * MIN);
        AlarmState s = { 0 };
        IdleRun r = { 0 };

        /* Nothing ever: idle_after after the history began, said so. */
        run_idle(&r, &s, a, 30 * MIN, 0, T0 + 5 * MIN, T0 + HOUR);
        assert_int_equal(r.fired, 1);
        assert_int_equal(r.fired_at, T0 + 35 * MIN);
        assert_string_equal(r.fire, "Cache t is idle: no store, no hit and no ccache call since its history began at "
                                    "00:05 (idle_after is 30m): a container that lost its mount, or a compiler shim "
                                    "that broke?");
        /* Found standing at the daemon's first look (after a restart): said so. */
        s = (AlarmState) { 0 };
        r = (IdleRun) { 0 };
        run_idle(&r, &s, a, 30 * MIN, 0, T0 + HOUR, T0 + HOUR + 1);
        assert_int_equal(r.fired, 1);
        assert_non_null(strstr(r.fire, "shim that broke? (standing when the daemon started: it may have been reported "
                                       "before)"));

        /* An entry written while the daemon did not count (its mtime is
         * recent): not idle. */
        a = new_activity(state, T0);
        s = (AlarmState) { 0 };
        r = (IdleRun) { 0 };
        run_idle(&r, &s, a, 30 * MIN, T0 + 20 * MIN, T0, T0 + 50 * MIN);
        assert_int_equal(r.fired, 0);
        run_idle(&r, &s, a, 30 * MIN, T0 + 20 * MIN, T0 + 50 * MIN, T0 + HOUR);
        assert_int_equal(r.fired, 1);
        assert_int_equal(r.fired_at, T0 + 50 * MIN);
        assert_non_null(strstr(r.fire, "for 30m (the last at 00:20)"));

        /* Days: counted in hours. */
        a = new_activity(state, T0);
        s = (AlarmState) { .idle_checked = true };
        r = (IdleRun) { 0 };
        for (usec_t now = T0; now < T0 + 9 * DAY; now += 10 * MIN) {
                char msg[512];

                if (now == T0 + HOUR)
                        assert_int_equal(activity_add(a, ACTIVITY_CCACHE_HITS, 5, 0, now), 0);
                activity_advance(a, now);
                if (alarm_idle(&s, a, 7 * DAY, 0, "t", now, msg, sizeof(msg)) == ALARM_FIRE && r.fired++ == 0) {
                        r.fired_at = now;
                        strcpy(r.fire, msg);
                }
        }
        assert_int_equal(r.fired, 1);
        assert_true(r.fired_at >= T0 + 7 * DAY + HOUR + MIN && r.fired_at <= T0 + 7 * DAY + 2 * HOUR);
        assert_non_null(strstr(r.fire, "no ccache call for 7d"));
        assert_non_null(strstr(r.fire, "(the last at 2026-11-30 02:00)"));  /* the end of its hour */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_healthy_rate),
                cmocka_unit_test_setup_teardown(test_silent_fires_once_and_names_the_conf_change, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_silent_not_below_min_calls_nor_at_threshold, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_silent_hysteresis, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_silent_cold_cache, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_silent_names_what_changed, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_idle, setup_activities, teardown_activities),
                cmocka_unit_test_setup_teardown(test_idle_since_history_began, setup_activities, teardown_activities),
        };

        return cmocka_run_group_tests_name("alarm", tests, setup, NULL);
}
