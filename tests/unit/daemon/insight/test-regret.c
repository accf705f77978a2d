/* SPDX-License-Identifier: MIT */
/* Eviction regret: a store of an evicted key counted once, the distance in
 * evicted bytes and its 90th percentile, the windows, the ring forgetting
 * its oldest, and the index holding up to long probe runs and deletions in
 * any order (checked against a plain list); why and when each key left,
 * removals by others told but never regret, and the encoding of both
 * versions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "insight/regret.h"

#define T0 1800000000ULL
#define KIB 1024ULL

/* A new, empty store for a test: *state. */
static int setup_regret(void **state) {
        Regret *r;

        assert_int_equal(regret_new(&r), 0);
        *state = r;
        return 0;
}

static int teardown_regret(void **state) {
        regret_free(*state);
        return 0;
}

/* Three of them: *state is the array. */
static int setup_three_regrets(void **state) {
        Regret **r = calloc(3, sizeof(*r));

        assert_non_null(r);
        for (int i = 0; i < 3; i++)
                assert_int_equal(regret_new(&r[i]), 0);
        *state = r;
        return 0;
}

static int teardown_three_regrets(void **state) {
        Regret **r = *state;

        for (int i = 0; i < 3; i++)
                regret_free(r[i]);
        free(r);
        return 0;
}

static void test_store_of_evicted_key_counted_once(void **state) {
        Regret *r = *state;
        RegretFigures f;

        size_t empty = regret_bytes(r);
        assert_false(regret_stored(r, 42, 10, T0));                /* nothing evicted yet */
        assert_int_equal(regret_evicted(r, regret_key("ab", "cdefR"), 4 * KIB, 0, T0, REGRET_BY_CAP), 0);
        assert_int_equal(regret_bytes(r), empty + REGRET_KEYS * 25);  /* allocated at the first eviction */
        assert_int_equal(regret_evicted(r, regret_key("ab", "cdefM"), 1 * KIB, 0, T0, REGRET_BY_CAP), 0);
        assert_int_equal(regret_evicted(r, regret_key("12", "3456R"), 5 * KIB, 0, T0, REGRET_BY_CAP), 0);
        /* the same key moved a level deeper is the same key */
        assert_true(regret_key("ab", "cdefR") == regret_key("a/b/c", "defR"));
        assert_true(regret_key("ab", "cdefR") != regret_key("ab", "cdefM"));

        assert_true(regret_stored(r, regret_key("a/b/c", "defR"), 4 * KIB, T0 + 60));
        assert_false(regret_stored(r, regret_key("ab", "cdefR"), 4 * KIB, T0 + 61));   /* once */
        assert_false(regret_stored(r, regret_key("ff", "0000R"), 4 * KIB, T0 + 62));   /* never evicted */
        regret_figures(r, T0 + 100, &f);
        assert_int_equal(f.stores_24h, 1);
        assert_int_equal(f.bytes_24h, 4 * KIB);
        assert_int_equal(f.stores_7d, 1);
        assert_int_equal(f.remembered, 3);
        /* 10 KiB were evicted from its eviction (itself included) to its return */
        assert_int_equal(f.extra_bytes_p90, 10 * KIB);
}

/* Ten returns at distances of 1..10 x 100 KiB: 90 % stayed within 900 KiB. */
static void test_p90_and_windows(void **state) {
        Regret *r = *state;
        RegretFigures f;

        for (uint64_t i = 1; i <= 10; i++) {
                assert_int_equal(regret_evicted(r, i, 100 * KIB, 0, T0, REGRET_BY_CAP), 0);
        }
        /* key i returns when i x 100 KiB have gone since its own eviction:
         * 1000 KiB went in all, key i's eviction came after (i-1) x 100 */
        for (uint64_t i = 1; i <= 10; i++)
                assert_true(regret_stored(r, 11 - i, 100 * KIB, T0 + 10));
        regret_figures(r, T0 + 20, &f);
        assert_int_equal(f.stores_24h, 10);
        assert_int_equal(f.extra_bytes_p90, 900 * KIB);

        /* 25 h later: in the 7 days, not in the 24 h; 8 days later: in neither */
        regret_figures(r, T0 + 25 * 3600, &f);
        assert_int_equal(f.stores_24h, 0);
        assert_int_equal(f.stores_7d, 10);
        assert_int_equal(f.bytes_7d, 1000 * KIB);
        regret_figures(r, T0 + 8 * 86400, &f);
        assert_int_equal(f.stores_7d, 0);
        assert_int_equal(f.extra_bytes_p90, 0);
}

static void test_forgets_the_oldest_and_the_old(void **state) {
        Regret *r = *state;

        for (uint64_t i = 1; i <= REGRET_KEYS + 10; i++)
                assert_int_equal(regret_evicted(r, i * 0x9e3779b97f4a7c15ULL, 1, 0, T0, REGRET_BY_CAP), 0);
        for (uint64_t i = 1; i <= 10; i++)
                assert_false(regret_stored(r, i * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        assert_true(regret_stored(r, 11 * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        assert_true(regret_stored(r, (REGRET_KEYS + 10) * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        /* an eviction of more than 30 days ago is no regret */
        assert_int_equal(regret_evicted(r, 7, 1, 0, T0, REGRET_BY_CAP), 0);
        assert_false(regret_stored(r, 7, 1, T0 + REGRET_MAX_AGE + 1));
}

/* Keys that all want the same few slots, forgotten in a scrambled order:
 * every key still remembered is found, every forgotten one is not. */
static void test_index_probe_runs_and_deletions(void **state) {
        enum { N = 3000 };
        static bool gone[N];
        Regret *r = *state;
        unsigned x = 12345;

        for (uint64_t i = 0; i < N; i++)   /* homes 0..7 only: long runs, wrapping none */
                assert_int_equal(regret_evicted(r, ((i + 1) << 20) | (i % 8), 1, 0, T0, REGRET_BY_CAP), 0);
        for (int k = 0; k < N / 2; k++) {
                x = x * 1103515245 + 12345;
                uint64_t i = (x >> 8) % N;
                bool was = !gone[i];
                assert_int_equal(regret_stored(r, ((i + 1) << 20) | (i % 8), 1, T0 + 1), was);
                gone[i] = true;
        }
        for (uint64_t i = 0; i < N; i++)
                assert_int_equal(regret_stored(r, ((i + 1) << 20) | (i % 8), 1, T0 + 2), !gone[i]);
}

/* What was evicted although used within 7 days before: part of the 7-day
 * working set the cap could not hold; older entries are not. */
static void test_young_evictions(void **state) {
        Regret *r = *state;
        RegretFigures f;

        assert_int_equal(regret_evicted(r, 1, 10 * KIB, (int64_t) T0 - 3600, T0, REGRET_BY_CAP), 0);
        assert_int_equal(regret_evicted(r, 2, 20 * KIB, (int64_t) T0 - 6 * 86400, T0, REGRET_BY_CAP), 0);
        assert_int_equal(regret_evicted(r, 3, 40 * KIB, (int64_t) T0 - 8 * 86400, T0, REGRET_BY_CAP), 0);
        regret_figures(r, T0 + 60, &f);
        assert_int_equal(f.young_evicted_7d, 30 * KIB);
        regret_figures(r, T0 + 8 * 86400, &f);   /* out of the 7 days */
        assert_int_equal(f.young_evicted_7d, 0);
}

/* Encoded and decoded (a restart): the same figures, the same keys
 * remembered (a store of one is a regret, once), the ring going on where it
 * was (its oldest forgotten first); a head or count out of range refused. */
static void test_encode_decode(void **state) {
        static uint8_t buf[REGRET_ENCODED_BYTES], again[REGRET_ENCODED_BYTES];
        Regret **three = *state, *r = three[0], *d = three[1], *empty = three[2];
        RegretFigures fr, fd;

        /* Nothing evicted: decoding allocates nothing. */
        assert_false(regret_any(empty));
        regret_encode(empty, buf);
        assert_int_equal(regret_decode(d, buf, 2), 0);
        assert_int_equal(regret_bytes(d), regret_bytes(empty));

        for (uint64_t i = 1; i <= REGRET_KEYS + 100; i++)   /* the ring wrapped */
                assert_int_equal(regret_evicted(r, i * 0x9e3779b97f4a7c15ULL, i * KIB, (int64_t) T0 - 60, T0, REGRET_BY_CAP), 0);
        for (uint64_t i = 200; i < 210; i++)
                assert_true(regret_stored(r, i * 0x9e3779b97f4a7c15ULL, KIB, T0 + 60));
        assert_true(regret_any(r));
        regret_encode(r, buf);
        assert_int_equal(regret_decode(d, buf, 2), 0);
        regret_encode(d, again);
        assert_memory_equal(buf, again, sizeof(buf));
        regret_figures(r, T0 + 120, &fr);
        regret_figures(d, T0 + 120, &fd);
        assert_memory_equal(&fr, &fd, sizeof(fr));
        assert_int_equal(fd.stores_24h, 10);
        assert_int_equal(fd.remembered, REGRET_KEYS);

        assert_false(regret_stored(d, 50 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 180));     /* forgotten by the ring */
        assert_false(regret_stored(d, 205 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 180));    /* came back already */
        assert_true(regret_stored(d, 300 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 180));
        assert_false(regret_stored(d, 300 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 181));    /* once */
        /* The next eviction replaces the oldest remembered (key 101). */
        assert_int_equal(regret_evicted(d, 7, KIB, 0, T0 + 200, REGRET_BY_CAP), 0);
        assert_false(regret_stored(d, 101 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 201));
        assert_true(regret_stored(d, 102 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 201));
        assert_true(regret_stored(d, 7, KIB, T0 + 202));

        /* A head past the ring, a count past it: refused, d unchanged. */
        regret_encode(d, again);
        buf[2] = 0xff;                                  /* head >= REGRET_KEYS */
        assert_int_equal(regret_decode(d, buf, 2), -EBADMSG);
        buf[2] = 0;
        buf[8 + 3] = 1;                                 /* count > REGRET_KEYS */
        assert_int_equal(regret_decode(d, buf, 2), -EBADMSG);
        regret_encode(d, buf);
        assert_memory_equal(buf, again, sizeof(buf));
}


/* Each eviction keeps its reason and time, told after its key came back
 * too; the later of two departures wins; nothing older than the horizon,
 * nothing never seen. */
static void test_reasons_kept(void **state) {
        Regret *r = *state;
        uint32_t at = 0;
        RegretBy by = _REGRET_BY_MAX;

        assert_false(regret_left_at(r, 1, T0, &at, &by));      /* nothing allocated yet */
        assert_int_equal(regret_evicted(r, 1, KIB, 0, T0, REGRET_BY_CAP), 0);
        assert_int_equal(regret_evicted(r, 2, KIB, 0, T0 + 1, REGRET_BY_PRESSURE), 0);
        assert_int_equal(regret_evicted(r, 3, KIB, 0, T0 + 2, REGRET_BY_MERGE), 0);
        assert_int_equal(regret_left(r, 4, T0 + 3, REGRET_BY_PURGE), 0);
        assert_int_equal(regret_left(r, 5, T0 + 4, REGRET_BY_OTHER), 0);
        assert_true(regret_left_at(r, 1, T0 + 10, &at, &by));
        assert_int_equal(at, T0);
        assert_int_equal(by, REGRET_BY_CAP);
        assert_true(regret_left_at(r, 2, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_PRESSURE);
        assert_true(regret_left_at(r, 3, T0 + 10, &at, &by));
        assert_int_equal(at, T0 + 2);
        assert_int_equal(by, REGRET_BY_MERGE);
        assert_true(regret_left_at(r, 4, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_PURGE);
        assert_true(regret_left_at(r, 5, T0 + 10, &at, &by));
        assert_int_equal(at, T0 + 4);
        assert_int_equal(by, REGRET_BY_OTHER);

        /* Came back (a regret, once): still told when and why it left. */
        assert_true(regret_stored(r, 1, KIB, T0 + 20));
        assert_false(regret_stored(r, 1, KIB, T0 + 21));
        assert_true(regret_left_at(r, 1, T0 + 30, &at, &by));
        assert_int_equal(at, T0);
        assert_int_equal(by, REGRET_BY_CAP);
        /* Then removed by someone else: the later departure is told. */
        assert_int_equal(regret_left(r, 1, T0 + 40, REGRET_BY_OTHER), 0);
        assert_true(regret_left_at(r, 1, T0 + 50, &at, &by));
        assert_int_equal(at, T0 + 40);
        assert_int_equal(by, REGRET_BY_OTHER);
        /* Evicted again by the cap: that one. */
        assert_int_equal(regret_evicted(r, 1, KIB, 0, T0 + 60, REGRET_BY_CAP), 0);
        assert_true(regret_left_at(r, 1, T0 + 70, &at, &by));
        assert_int_equal(at, T0 + 60);
        assert_int_equal(by, REGRET_BY_CAP);

        at = 7;
        by = _REGRET_BY_MAX;
        assert_false(regret_left_at(r, 99, T0 + 70, &at, &by));          /* never seen */
        assert_false(regret_left_at(r, 5, T0 + 4 + REGRET_MAX_AGE + 1, &at, &by));   /* past the horizon */
        assert_false(regret_left_at(r, 2, T0, &at, &by));                 /* after now: a clock stepped back */
        assert_int_equal(at, 7);                                          /* untouched */
        assert_int_equal(by, _REGRET_BY_MAX);
}

/* Departures that are not the cap's (a purge, removals by others) change
 * no figure, and a later store of their key is no regret: the cap advice
 * stays what it was. Only the memory they take shows. */
static void test_others_never_regret(void **state) {
        Regret *r = *state;
        RegretFigures f, none;
        size_t empty = regret_bytes(r);

        regret_figures(r, T0, &none);
        for (uint64_t i = 1; i <= 100; i++)
                assert_int_equal(regret_left(r, i, T0, i % 2 ? REGRET_BY_OTHER : REGRET_BY_PURGE), 0);
        assert_int_equal(regret_bytes(r), empty + REGRET_LEFT_KEYS * 25);
        assert_true(regret_any(r));
        for (uint64_t i = 1; i <= 100; i++)
                assert_false(regret_stored(r, i, 10 * KIB, T0 + 60));
        regret_figures(r, T0 + 120, &f);
        none.remembered = f.remembered;
        assert_memory_equal(&f, &none, sizeof(f));
        assert_int_equal(f.remembered, 0);                /* the evictions remembered: none */

        /* Evicted by the cap, returned, removed by others, stored again:
         * one regretted store, not two. */
        assert_int_equal(regret_evicted(r, 500, KIB, 0, T0 + 200, REGRET_BY_CAP), 0);
        assert_true(regret_stored(r, 500, KIB, T0 + 210));
        assert_int_equal(regret_left(r, 500, T0 + 220, REGRET_BY_OTHER), 0);
        assert_false(regret_stored(r, 500, KIB, T0 + 230));
        regret_figures(r, T0 + 240, &f);
        assert_int_equal(f.stores_24h, 1);
        assert_int_equal(f.remembered, 1);

        /* The ring of others forgets its oldest, never the evictions. */
        for (uint64_t i = 1; i <= REGRET_LEFT_KEYS; i++)
                assert_int_equal(regret_left(r, 1000 + i, T0 + 300, REGRET_BY_OTHER), 0);
        uint32_t at;
        RegretBy by;
        assert_false(regret_left_at(r, 1, T0 + 400, &at, &by));
        assert_true(regret_left_at(r, 1001, T0 + 400, &at, &by));
        assert_true(regret_left_at(r, 500, T0 + 400, &at, &by));
        assert_int_equal(by, REGRET_BY_CAP);
}

/* Version 2 keeps the reasons, the returned marks and the other
 * departures; version 1 (the same bytes, cut where it ended) loads with
 * every figure, its evictions of unknown reason and no other departure; a
 * reason that cannot be is refused. */
static void test_encode_decode_reasons(void **state) {
        static uint8_t buf[REGRET_ENCODED_BYTES], again[REGRET_ENCODED_BYTES];
        Regret **three = *state, *r = three[0], *d = three[1], *v1 = three[2];
        RegretFigures fr, fd;
        uint32_t at;
        RegretBy by;

        assert_int_equal(regret_evicted(r, 1, KIB, 0, T0, REGRET_BY_PRESSURE), 0);
        assert_int_equal(regret_evicted(r, 2, KIB, 0, T0 + 1, REGRET_BY_MERGE), 0);
        assert_int_equal(regret_evicted(r, 3, KIB, 0, T0 + 2, REGRET_BY_CAP), 0);
        assert_true(regret_stored(r, 3, KIB, T0 + 3));
        assert_int_equal(regret_left(r, 4, T0 + 4, REGRET_BY_OTHER), 0);
        assert_int_equal(regret_left(r, 5, T0 + 5, REGRET_BY_PURGE), 0);
        regret_encode(r, buf);
        assert_int_equal(regret_decode(d, buf, 2), 0);
        regret_encode(d, again);
        assert_memory_equal(buf, again, sizeof(buf));
        assert_true(regret_left_at(d, 1, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_PRESSURE);
        assert_true(regret_left_at(d, 2, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_MERGE);
        assert_true(regret_left_at(d, 3, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_CAP);
        assert_false(regret_stored(d, 3, KIB, T0 + 11));                 /* returned already */
        assert_true(regret_left_at(d, 4, T0 + 10, &at, &by));
        assert_int_equal(at, T0 + 4);
        assert_int_equal(by, REGRET_BY_OTHER);
        assert_false(regret_stored(d, 4, KIB, T0 + 11));                 /* never regret */
        assert_true(regret_left_at(d, 5, T0 + 10, &at, &by));
        assert_int_equal(by, REGRET_BY_PURGE);

        /* Version 1: the same figures; the reasons unknown; no others. */
        regret_encode(r, buf);
        assert_int_equal(regret_decode(v1, buf, 1), 0);
        regret_figures(r, T0 + 20, &fr);
        regret_figures(v1, T0 + 20, &fd);
        assert_memory_equal(&fr, &fd, sizeof(fr));
        assert_true(regret_left_at(v1, 1, T0 + 10, &at, &by));
        assert_int_equal(at, T0);
        assert_int_equal(by, REGRET_BY_UNKNOWN);
        assert_false(regret_left_at(v1, 4, T0 + 10, &at, &by));
        assert_true(regret_stored(v1, 2, KIB, T0 + 30));                 /* a regret as before */
        assert_int_equal(regret_decode(v1, buf, 3), -EBADMSG);

        /* A reason out of range, of an eviction or of another departure:
         * refused, d unchanged. */
        regret_encode(d, again);
        buf[REGRET_ENCODED_BYTES_V1 + 0] = REGRET_BY_OTHER;              /* record 0 of the evictions */
        assert_int_equal(regret_decode(d, buf, 2), -EBADMSG);
        regret_encode(r, buf);
        buf[REGRET_ENCODED_BYTES_V1 + REGRET_KEYS + 16 + 12] = REGRET_BY_CAP;   /* others' record 0 */
        assert_int_equal(regret_decode(d, buf, 2), -EBADMSG);
        regret_encode(r, buf);
        buf[REGRET_ENCODED_BYTES_V1 + REGRET_KEYS + 8 + 3] = 1;          /* others' count too big */
        assert_int_equal(regret_decode(d, buf, 2), -EBADMSG);
        regret_encode(d, buf);
        assert_memory_equal(buf, again, sizeof(buf));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_store_of_evicted_key_counted_once, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_p90_and_windows, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_forgets_the_oldest_and_the_old, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_index_probe_runs_and_deletions, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_young_evictions, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_encode_decode, setup_three_regrets, teardown_three_regrets),
                cmocka_unit_test_setup_teardown(test_reasons_kept, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_others_never_regret, setup_regret, teardown_regret),
                cmocka_unit_test_setup_teardown(test_encode_decode_reasons, setup_three_regrets,
                                                teardown_three_regrets),
        };
        return cmocka_run_group_tests_name("regret", tests, NULL, NULL);
}
