/* SPDX-License-Identifier: MIT */
/* Eviction regret: a store of an evicted key counted once, the distance in
 * evicted bytes and its 90th percentile, the windows, the ring forgetting
 * its oldest, and the index holding up to long probe runs and deletions in
 * any order (checked against a plain list). */
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
        assert_int_equal(regret_evicted(r, regret_key("ab", "cdefR"), 4 * KIB, 0, T0), 0);
        assert_int_equal(regret_bytes(r), empty + 3 * 1024 * 1024);  /* allocated at the first eviction */
        assert_int_equal(regret_evicted(r, regret_key("ab", "cdefM"), 1 * KIB, 0, T0), 0);
        assert_int_equal(regret_evicted(r, regret_key("12", "3456R"), 5 * KIB, 0, T0), 0);
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
                assert_int_equal(regret_evicted(r, i, 100 * KIB, 0, T0), 0);
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
                assert_int_equal(regret_evicted(r, i * 0x9e3779b97f4a7c15ULL, 1, 0, T0), 0);
        for (uint64_t i = 1; i <= 10; i++)
                assert_false(regret_stored(r, i * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        assert_true(regret_stored(r, 11 * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        assert_true(regret_stored(r, (REGRET_KEYS + 10) * 0x9e3779b97f4a7c15ULL, 1, T0 + 1));
        /* an eviction of more than 30 days ago is no regret */
        assert_int_equal(regret_evicted(r, 7, 1, 0, T0), 0);
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
                assert_int_equal(regret_evicted(r, ((i + 1) << 20) | (i % 8), 1, 0, T0), 0);
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

        assert_int_equal(regret_evicted(r, 1, 10 * KIB, (int64_t) T0 - 3600, T0), 0);
        assert_int_equal(regret_evicted(r, 2, 20 * KIB, (int64_t) T0 - 6 * 86400, T0), 0);
        assert_int_equal(regret_evicted(r, 3, 40 * KIB, (int64_t) T0 - 8 * 86400, T0), 0);
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
        assert_int_equal(regret_decode(d, buf), 0);
        assert_int_equal(regret_bytes(d), regret_bytes(empty));

        for (uint64_t i = 1; i <= REGRET_KEYS + 100; i++)   /* the ring wrapped */
                assert_int_equal(regret_evicted(r, i * 0x9e3779b97f4a7c15ULL, i * KIB, (int64_t) T0 - 60, T0), 0);
        for (uint64_t i = 200; i < 210; i++)
                assert_true(regret_stored(r, i * 0x9e3779b97f4a7c15ULL, KIB, T0 + 60));
        assert_true(regret_any(r));
        regret_encode(r, buf);
        assert_int_equal(regret_decode(d, buf), 0);
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
        assert_int_equal(regret_evicted(d, 7, KIB, 0, T0 + 200), 0);
        assert_false(regret_stored(d, 101 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 201));
        assert_true(regret_stored(d, 102 * 0x9e3779b97f4a7c15ULL, KIB, T0 + 201));
        assert_true(regret_stored(d, 7, KIB, T0 + 202));

        /* A head past the ring, a count past it: refused, d unchanged. */
        regret_encode(d, again);
        buf[2] = 0xff;                                  /* head >= REGRET_KEYS */
        assert_int_equal(regret_decode(d, buf), -EBADMSG);
        buf[2] = 0;
        buf[8 + 3] = 1;                                 /* count > REGRET_KEYS */
        assert_int_equal(regret_decode(d, buf), -EBADMSG);
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
        };
        return cmocka_run_group_tests_name("regret", tests, NULL, NULL);
}
