/* SPDX-License-Identifier: MIT */
/* Key families: the version a header names, the other scheme's name of a
 * key (checked against Python's base32hex on a name ccache 4.7.5 wrote),
 * the stores of the last 24 hours by family, and when they are a mix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ccache/families.h"

static void test_family_of(void **state) {
        assert_int_equal(family_of("4.7.5", KEY_SCHEME_LEGACY), FAMILY_LEGACY);
        assert_int_equal(family_of("4.12.3", KEY_SCHEME_HEX), FAMILY_LEGACY);   /* the header wins */
        assert_int_equal(family_of("4.13.6", KEY_SCHEME_LEGACY), FAMILY_413);
        assert_int_equal(family_of("4.14", KEY_SCHEME_LEGACY), FAMILY_414);
        assert_int_equal(family_of("5.0.1", KEY_SCHEME_LEGACY), FAMILY_414);
        assert_int_equal(family_of("3.7.12", KEY_SCHEME_LEGACY), FAMILY_LEGACY);
        assert_int_equal(family_of("e5731387", KEY_SCHEME_HEX), FAMILY_413);   /* a development build: by its name */
        assert_int_equal(family_of("e5731387", KEY_SCHEME_LEGACY), FAMILY_LEGACY);
        assert_int_equal(family_of(NULL, KEY_SCHEME_HEX), FAMILY_413);
}

/* The scheme by name alone: the one rule the writers' table and the
 * silent-miss alarm both go by. */
static void test_key_scheme_of(void **state) {
        assert_int_equal(key_scheme_of(CCACHE_KIND_RESULT, "c1ofpa5ojdbmiq2ee5c5e1lcbk3fnq8R"), KEY_SCHEME_LEGACY);
        assert_int_equal(key_scheme_of(CCACHE_KIND_MANIFEST, "c1ofpa5ojdbmiq2ee5c5e1lcbk3fnq8M"), KEY_SCHEME_LEGACY);
        assert_int_equal(key_scheme_of(CCACHE_KIND_RAW, "c1ofpa5ojdbmiq2ee5c5e1lcbk3fnq80W"), KEY_SCHEME_LEGACY);
        assert_int_equal(key_scheme_of(CCACHE_KIND_ENTRY, "0123456789abcdef0123456789abcdef01234567"), KEY_SCHEME_HEX);
        assert_int_equal(key_scheme_of(CCACHE_KIND_RAW, "0123456789abcdef0123456789abcdef01234567_00"), KEY_SCHEME_HEX);
        assert_string_equal(key_scheme_name(KEY_SCHEME_HEX), "4.13+ names");
        assert_string_equal(key_scheme_name(_KEY_SCHEME_MAX), "?");
}

static void test_twin_names(void **state) {
        char out[CCACHE_NAME_MAX], back[CCACHE_NAME_MAX];

        /* d/7/c1ofpa...R as 4.7.5 wrote it; its digest in hex by Python */
        assert_true(family_twin_name("d/7", "c1ofpa690chfnp3sqoaatcngf8r2accR", false, out));
        assert_string_equal(out, "c1c3f2a3240c8bef91f35852bacbc1e8d894c6");
        assert_true(family_twin_name("d7", out, false, back));
        assert_string_equal(back, "c1ofpa690chfnp3sqoaatcngf8r2accR");
        assert_true(family_twin_name("d/7", out, true, back));
        assert_string_equal(back, "c1ofpa690chfnp3sqoaatcngf8r2accM");
        /* one level deeper: the name is one character shorter */
        assert_true(family_twin_name("d/7/c", "1ofpa690chfnp3sqoaatcngf8r2accR", false, out));
        assert_string_equal(out, "1c3f2a3240c8bef91f35852bacbc1e8d894c6");
        /* not keys */
        assert_false(family_twin_name("d/7", "stats", false, out));
        assert_false(family_twin_name("d/7", "c1ofpa690chfnp3sqoaatcngf8r2acwR", false, out));   /* w: not base32hex */
        assert_false(family_twin_name("d/7", "c1ofpa690chfnp3sqoaatcngf8r2acdR", false, out));   /* spare bit set */
        assert_false(family_twin_name("d/7", "c1c3f2a3240c8bef91f35852bacbc1e8d894cg", false, out));
}

static void test_stores_24h(void **state) {
        FamilyStores s = { 0 };
        uint64_t n[_FAMILY_MAX], twins, t0 = 1800000000;

        assert_int_equal(family_stores_24h(&s, t0, n, &twins), 0);
        family_stores_add(&s, FAMILY_LEGACY, false, t0);
        family_stores_add(&s, FAMILY_LEGACY, false, t0 + 10);
        assert_int_equal(family_stores_24h(&s, t0 + 20, n, &twins), 1);
        family_stores_add(&s, FAMILY_413, true, t0 + 3600);
        assert_int_equal(family_stores_24h(&s, t0 + 3700, n, &twins), 2);
        assert_int_equal(n[FAMILY_LEGACY], 2);
        assert_int_equal(n[FAMILY_413], 1);
        assert_int_equal(twins, 1);
        /* a day later only the 4.13 writer still stores: one family again */
        family_stores_add(&s, FAMILY_413, false, t0 + 25 * 3600);
        assert_int_equal(family_stores_24h(&s, t0 + 25 * 3600, n, &twins), 1);
        assert_int_equal(n[FAMILY_LEGACY], 0);
        assert_int_equal(n[FAMILY_413], 1);          /* the one of 24 h before is out too */
        assert_int_equal(family_stores_24h(&s, t0 + 50 * 3600, n, &twins), 0);
}

static void test_mix(void **state) {
        uint64_t n[_FAMILY_MAX] = { 0 };

        /* one stray entry of another family beside a busy writer: no mix */
        n[FAMILY_LEGACY] = 10;
        n[FAMILY_413] = 1;
        assert_false(family_mix(n, false));
        n[FAMILY_413] = FAMILY_MIX_MIN_STORES - 1;
        assert_false(family_mix(n, false));
        n[FAMILY_413] = FAMILY_MIX_MIN_STORES;
        assert_true(family_mix(n, false));
        /* enough stores, but a sliver of the cache's: under 1 % */
        n[FAMILY_LEGACY] = 100000;
        n[FAMILY_413] = 999;
        assert_false(family_mix(n, false));
        n[FAMILY_413] = 1011;                           /* 1 % of the 101011 stores */
        assert_true(family_mix(n, false));
        /* once mixed, half of each keeps it: no flapping at the threshold */
        n[FAMILY_413] = 600;
        assert_false(family_mix(n, false));
        assert_true(family_mix(n, true));
        n[FAMILY_413] = 400;
        assert_false(family_mix(n, true));
        n[FAMILY_LEGACY] = 20;
        n[FAMILY_413] = FAMILY_MIX_MIN_STORES / 2;
        assert_true(family_mix(n, true));
        n[FAMILY_413] = FAMILY_MIX_MIN_STORES / 2 - 1;
        assert_false(family_mix(n, true));
        /* one family alone is never a mix; three small ones are none either */
        n[FAMILY_413] = 0;
        assert_false(family_mix(n, true));
        n[FAMILY_LEGACY] = n[FAMILY_413] = n[FAMILY_414] = 3;
        assert_false(family_mix(n, false));
        n[FAMILY_414] = 10;
        n[FAMILY_413] = 10;
        assert_true(family_mix(n, false));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_family_of),
                cmocka_unit_test(test_key_scheme_of),
                cmocka_unit_test(test_twin_names),
                cmocka_unit_test(test_stores_24h),
                cmocka_unit_test(test_mix),
        };
        return cmocka_run_group_tests_name("families", tests, NULL, NULL);
}
