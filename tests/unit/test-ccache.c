/* SPDX-License-Identifier: MIT */
/* ccache names: what is an entry under each naming scheme, and the packed
 * form the daemon deletes by must give back the exact name. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ccache.h"

/* A full legacy key: 4 hex + 29 base32hex chars. */
#define LEGACY_KEY "b4e1" "2kitvq0g3ru9p1n2pkn7j5dsgvbfl"
#define V413_KEY "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b"

static void roundtrip(const char *name, unsigned depth, CcacheKind want) {
        uint8_t packed[CCACHE_PACKED_SIZE];
        char back[CCACHE_NAME_MAX];
        uint8_t code;
        int k;

        k = ccache_pack_name(name, depth, packed, &code);
        if (k != (int) want)
                fail_msg("pack(\"%s\", depth %u) = %d, want kind %d", name, depth, k, want);
        ccache_unpack_name(packed, code, depth, back);
        if (strcmp(back, name) != 0)
                fail_msg("unpack(pack(\"%s\")) = \"%s\"", name, back);
}

static void test_legacy_names(void **state) {
        /* at depth d the first d key chars are the directories */
        for (unsigned d = 2; d <= 4; d++) {
                char name[64];

                snprintf(name, sizeof(name), "%sR", LEGACY_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RESULT);
                snprintf(name, sizeof(name), "%sM", LEGACY_KEY + d);
                roundtrip(name, d, CCACHE_KIND_MANIFEST);
                for (char n = '0'; n <= '9'; n++) {
                        snprintf(name, sizeof(name), "%s%cW", LEGACY_KEY + d, n);
                        roundtrip(name, d, CCACHE_KIND_RAW);
                }
        }
        /* every base32hex char in every position survives */
        for (int i = 0; i < 32; i++) {
                char name[64];

                snprintf(name, sizeof(name), "%sR", LEGACY_KEY + 2);
                for (size_t p = 2; p < 31; p++)
                        name[p] = "0123456789abcdefghijklmnopqrstuv"[(i + (int) p) % 32];
                roundtrip(name, 2, CCACHE_KIND_RESULT);
        }
}

static void test_v413_names(void **state) {
        for (unsigned d = 2; d <= 4; d++) {
                char name[64];

                snprintf(name, sizeof(name), "%s", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_ENTRY);
                snprintf(name, sizeof(name), "%s_0f", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RAW);
                snprintf(name, sizeof(name), "%s_a0", V413_KEY + d);
                roundtrip(name, d, CCACHE_KIND_RAW);
        }
}

static void test_not_entries(void **state) {
        static const struct {
                const char *name;
                unsigned depth;
        } cases[] = {
                { "stats", 2 }, { "CACHEDIR.TAG", 1 }, { "ccache.conf", 0 }, { "stats.lock", 2 },
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 1 },      /* depth 1: too shallow */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 5 },      /* too deep */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfl", 2 },       /* no suffix, legacy length */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflX", 2 },      /* unknown suffix */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflr", 2 },      /* lower-case suffix */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfRR", 2 },      /* R inside the key: not base32hex */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflwR", 2 },     /* one char too long */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbfR", 2 },       /* one char too short */
                { "E12kitvq0g3ru9p1n2pkn7j5dsgvbflR", 2 },      /* upper case */
                { "eg2kitvq0g3ru9p1n2pkn7j5dsgvbflR", 2 },      /* 'g' where the key is still hex */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflAW", 2 },     /* raw with a non-digit */
                { "e12kitvq0g3ru9p1n2pkn7j5dsgvbflR.tmp.AbC123.tmp", 2 },
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3g", 2 },  /* 4.13 length, 'g' */
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b_0g", 2 },
                { "e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b-0f", 2 },
                { "", 2 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint8_t packed[CCACHE_PACKED_SIZE] = { 0x5a };
                uint8_t code = 99;

                if (ccache_pack_name(cases[i].name, cases[i].depth, packed, &code) != -EINVAL)
                        fail_msg("\"%s\" at depth %u taken for an entry", cases[i].name, cases[i].depth);
                assert_int_equal(code, 99);
                assert_int_equal(packed[0], 0x5a);
        }
}

static void test_classify_other(void **state) {
        assert_int_equal(ccache_classify_other("stats", 1, false), CCACHE_KIND_STATS);
        assert_int_equal(ccache_classify_other("stats", 2, false), CCACHE_KIND_STATS);
        assert_int_equal(ccache_classify_other("stats", 3, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats", 0, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats.tmp.x1Yz2a.tmp", 1, false), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("cpp_stdout.tmp.abc.i", 1, true), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("inode-cache-64.v2", 1, true), CCACHE_KIND_TMP);
        assert_int_equal(ccache_classify_other("CACHEDIR.TAG", 1, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("ccache.conf", 0, false), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_other("stats.alive", 1, false), CCACHE_KIND_OTHER);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_legacy_names),
                cmocka_unit_test(test_v413_names),
                cmocka_unit_test(test_not_entries),
                cmocka_unit_test(test_classify_other),
        };
        return cmocka_run_group_tests_name("ccache", tests, NULL, NULL);
}
