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

#include "ccache/ccache.h"

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

/* Remote names, from ccache 4.7.5 storing into file:share (layout subdirs:
 * share/a1/6bg4..., flat: share/a16bg4...), and ccache --hash-file keys. */
#define REMOTE_LEGACY_KEY "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a"
static const char *const real_legacy_keys[] = {
        REMOTE_LEGACY_KEY,
        "50cc241b3hgisqb2ahtapn7fj900qh0ms",
        "b9a1kcc3rkqgu3k9dk7kmme8fpttl2ouq",
        "49129fqffsrj51polgq22qj0rjavb2thi",
};

/* pack, unpack, the exact name back; and the name packs again to the same bytes. */
static void remote_roundtrip(const char *name, unsigned dir_chars) {
        uint8_t packed[CCACHE_PACKED_SIZE], again[CCACHE_PACKED_SIZE];
        char back[CCACHE_NAME_MAX];
        uint8_t code, code2;
        int k;

        k = ccache_pack_remote_name(name, dir_chars, packed, &code);
        if (k != CCACHE_KIND_ENTRY)
                fail_msg("pack_remote(\"%s\", %u) = %d, want an entry", name, dir_chars, k);
        assert_int_equal(ccache_code_kind(code), CCACHE_KIND_ENTRY);
        ccache_unpack_name(packed, code, dir_chars, back);
        if (strcmp(back, name) != 0)
                fail_msg("unpack(pack_remote(\"%s\", %u)) = \"%s\"", name, dir_chars, back);
        assert_int_equal(ccache_pack_remote_name(back, dir_chars, again, &code2), CCACHE_KIND_ENTRY);
        assert_int_equal(code2, code);
        assert_memory_equal(again, packed, CCACHE_PACKED_SIZE);
}

static void test_remote_real_names(void **state) {
        for (size_t i = 0; i < sizeof(real_legacy_keys) / sizeof(real_legacy_keys[0]); i++)
                for (unsigned dc = 0; dc <= CCACHE_REMOTE_DIR_CHARS_MAX; dc++)
                        remote_roundtrip(real_legacy_keys[i] + dc, dc);
        /* the two names seen in a share */
        remote_roundtrip("6bg4jbcs59arpufnrhpoe6vhj3ojn4a", CCACHE_REMOTE_DIR_CHARS_SUBDIRS);
        remote_roundtrip("a16bg4jbcs59arpufnrhpoe6vhj3ojn4a", CCACHE_REMOTE_DIR_CHARS_FLAT);
        /* 4.13: 40 hex, 38 in a subdirs directory */
        remote_roundtrip(V413_KEY, CCACHE_REMOTE_DIR_CHARS_FLAT);
        remote_roundtrip(V413_KEY + 2, CCACHE_REMOTE_DIR_CHARS_SUBDIRS);
        remote_roundtrip("ffffffffffffffffffffffffffffffffffffffff", 0);
        remote_roundtrip("0000000000000000000000000000000000000000", 0);
}

/* ccache's key string (Digest.hpp): 2 bytes base16, 18 bytes base32hex,
 * most significant bit first, the last char padded with a 0 bit. */
static void legacy_key_of(const uint8_t d[20], char out[34]) {
        static const char b32[] = "0123456789abcdefghijklmnopqrstuv";
        unsigned acc = 0, n = 0, o = 0;

        for (int i = 0; i < 2; i++) {
                out[o++] = "0123456789abcdef"[d[i] >> 4];
                out[o++] = "0123456789abcdef"[d[i] & 15];
        }
        for (int i = 2; i < 20; i++) {
                acc = (acc << 8) | d[i];
                n += 8;
                while (n >= 5) {
                        n -= 5;
                        out[o++] = b32[(acc >> n) & 31];
                }
        }
        out[o++] = b32[(acc << (5 - n)) & 31];   /* n == 4: one padding bit */
        out[o] = '\0';
}

static void test_remote_every_digest_shape(void **state) {
        uint64_t x = 0x9e3779b97f4a7c15ULL;

        /* Every first char (the top 4 bits), every last char (the low 4),
         * every value in between, over pseudo-random digests. */
        for (int i = 0; i < 4096; i++) {
                uint8_t d[20];
                char key[34], v413[41];

                for (int j = 0; j < 20; j++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        d[j] = (uint8_t) x;
                }
                d[0] = (uint8_t) ((d[0] & 0x0f) | (i % 16) << 4);
                d[19] = (uint8_t) ((d[19] & 0xf0) | (i / 16) % 16);
                legacy_key_of(d, key);
                assert_int_equal(strlen(key), 33);
                for (int j = 0; j < 20; j++)
                        snprintf(v413 + 2 * j, 3, "%02x", d[j]);
                for (unsigned dc = 0; dc <= CCACHE_REMOTE_DIR_CHARS_MAX; dc++) {
                        remote_roundtrip(key + dc, dc);
                        remote_roundtrip(v413 + dc, dc);
                }
        }
        /* every first char by name, at both layouts */
        for (int c = 0; c < 16; c++) {
                char key[34];

                snprintf(key, sizeof(key), "%s", REMOTE_LEGACY_KEY);
                key[0] = "0123456789abcdef"[c];
                remote_roundtrip(key, 0);
                remote_roundtrip(key + 2, 2);
                key[1] = "0123456789abcdef"[15 - c];
                key[32] = "0123456789abcdefghijklmnopqrstuv"[2 * c];   /* every even last char */
                remote_roundtrip(key, 0);
                remote_roundtrip(key + 2, 2);
        }
}

static void test_remote_refusals(void **state) {
        static const struct {
                const char *name;
                unsigned dir_chars;
        } cases[] = {
                { REMOTE_LEGACY_KEY "R", 0 },                   /* suffixed: a local name */
                { REMOTE_LEGACY_KEY "M", 0 },
                { REMOTE_LEGACY_KEY "0W", 0 },
                { "6bg4jbcs59arpufnrhpoe6vhj3ojn4aR", 2 },      /* 33 chars with an R suffix */
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4R", 0 },     /* 33 chars, the last an R */
                { "6bg4jbcs59arpufnrhpoe6vhj3ojn4a", 0 },       /* subdirs name in a flat root */
                { REMOTE_LEGACY_KEY, 2 },                       /* flat name in a subdirs directory */
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4", 0 },      /* one char short */
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4aa", 0 },    /* one char long */
                { "A16bg4jbcs59arpufnrhpoe6vhj3ojn4a", 0 },     /* upper case */
                { "a16bg4jbcs59arpufnrhpoe6vhj3oJn4a", 0 },
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4w", 0 },     /* not base32hex */
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn-a", 0 },
                { "a1gbg4jbcs59arpufnrhpoe6vhj3ojn4a", 0 },     /* base32hex in the 4-char hex prefix */
                { "a16gg4jbcs59arpufnrhpoe6vhj3ojn4a", 0 },
                { "6gg4jbcs59arpufnrhpoe6vhj3ojn4a", 2 },
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4b", 0 },     /* last char's padding bit set */
                { "6bg4jbcs59arpufnrhpoe6vhj3ojn4v", 2 },
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a", 5 },     /* dir_chars past the hex prefix */
                { V413_KEY "_0f", 0 },                          /* 4.13 raw: never remote */
                { V413_KEY + 2, 0 },                            /* 38 hex in a flat root */
                { V413_KEY, 2 },                                /* 40 hex in a subdirs directory */
                { "B4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b", 0 },
                { "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3g", 0 },
                { "b4e1c7d2a9f00e6b5c3d2e1f0a9b8c7d6e5f4a3b.tmp.AbC123", 0 },
                { "a16bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.x1", 0 },
                { "CACHEDIR.TAG", 0 }, { "stats", 2 }, { "ccache.conf", 0 }, { "", 0 }, { "", 2 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint8_t packed[CCACHE_PACKED_SIZE] = { 0x5a };
                uint8_t code = 99;

                if (ccache_pack_remote_name(cases[i].name, cases[i].dir_chars, packed, &code) != -EINVAL)
                        fail_msg("\"%s\" at dir_chars %u taken for a remote entry", cases[i].name, cases[i].dir_chars);
                assert_int_equal(code, 99);
                assert_int_equal(packed[0], 0x5a);
        }
}

static void test_remote_classify_other(void **state) {
        assert_int_equal(ccache_classify_remote_other("stats"), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_remote_other("CACHEDIR.TAG"), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_remote_other("a16bg4jbcs59arpufnrhpoe6vhj3ojn4aR"), CCACHE_KIND_OTHER);
        assert_int_equal(ccache_classify_remote_other("6bg4jbcs59arpufnrhpoe6vhj3ojn4a.tmp.AbC123"), CCACHE_KIND_TMP);
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

/* The times a hit leaves: ctime at mtime's instant or up to two ticks
 * later (tmpfs restamps ctime after setattr_copy), never before it, never
 * more (a chmod long after the last write or hit); seconds an owner set
 * to anything neither overflow nor pass. */
static void test_hit_times(void **state) {
        const uint64_t tick = 4000000;   /* HZ=250 */
        struct statx_timestamp m = { .tv_sec = 1700000000, .tv_nsec = 999000000 }, c;
        (void) state;

        c = m;
        assert_true(ccache_hit_times(&m, &c, tick));                    /* one instant */
        c.tv_sec = m.tv_sec + 1, c.tv_nsec = 3000000;                     /* a tick later, across a second */
        assert_true(ccache_hit_times(&m, &c, tick));
        c.tv_nsec = 7000000;                                              /* two ticks */
        assert_true(ccache_hit_times(&m, &c, tick));
        c.tv_nsec = 7000001;                                              /* more: a chmod */
        assert_false(ccache_hit_times(&m, &c, tick));
        c.tv_sec = m.tv_sec, c.tv_nsec = m.tv_nsec - 1;                   /* ctime before mtime */
        assert_false(ccache_hit_times(&m, &c, tick));
        c.tv_sec = m.tv_sec + 60, c.tv_nsec = m.tv_nsec;                  /* a chmod a minute on */
        assert_false(ccache_hit_times(&m, &c, tick));
        /* Times an owner set: no overflow makes a far pair look close. */
        m.tv_sec = INT64_MIN, m.tv_nsec = 0;
        c.tv_sec = INT64_MAX, c.tv_nsec = 0;
        assert_false(ccache_hit_times(&m, &c, tick));
        m.tv_sec = INT64_MAX, c.tv_sec = INT64_MIN;
        assert_false(ccache_hit_times(&m, &c, tick));
        m.tv_sec = c.tv_sec = INT64_MAX, m.tv_nsec = 0, c.tv_nsec = 1000;
        assert_true(ccache_hit_times(&m, &c, tick));
        /* The kernel's tick, or 10 ms at the coarsest. */
        assert_true(ccache_clock_tick_nsec() > 0 && ccache_clock_tick_nsec() <= 10000000);
}

/* ccache's directories, spelled in one place: level names, the level-2
 * directory of a path, the directories at the top, a remote's subdirs. */
static void test_layout_names(void **state) {
        unsigned l1 = 99, l2 = 99;

        assert_true(ccache_is_level_name("0") && ccache_is_level_name("f"));
        assert_false(ccache_is_level_name("g") || ccache_is_level_name("ab") || ccache_is_level_name("") ||
                     ccache_is_level_name("A"));
        assert_true(ccache_level2_of("a/b", &l1, &l2));
        assert_int_equal(l1, 10);
        assert_int_equal(l2, 11);
        assert_true(ccache_level2_of("3/f/0/1", &l1, &l2));   /* below one: 4.7's deeper levels */
        assert_int_equal(l1, 3);
        assert_int_equal(l2, 15);
        l1 = l2 = 99;
        assert_false(ccache_level2_of("a", &l1, &l2) || ccache_level2_of("a/bc", &l1, &l2) ||
                     ccache_level2_of("tmp/x", &l1, &l2) || ccache_level2_of("a/", &l1, &l2) ||
                     ccache_level2_of("x/b", &l1, &l2));
        assert_int_equal(l1, 99);   /* untouched when false */
        assert_true(ccache_level2_of("0/0", NULL, NULL));
        assert_true(ccache_is_top_dir("tmp") && ccache_is_top_dir("lock") && ccache_is_top_dir("a") &&
                    ccache_is_top_dir("a/b"));
        assert_false(ccache_is_top_dir("a/b/c") || ccache_is_top_dir("tmpx") || ccache_is_top_dir("lock/a") ||
                     ccache_is_top_dir("ab") || ccache_is_top_dir(""));
        assert_true(ccache_is_remote_subdir_name("0f"));
        assert_false(ccache_is_remote_subdir_name("0") || ccache_is_remote_subdir_name("0fa") ||
                     ccache_is_remote_subdir_name("0g"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_layout_names),
                cmocka_unit_test(test_legacy_names),
                cmocka_unit_test(test_v413_names),
                cmocka_unit_test(test_not_entries),
                cmocka_unit_test(test_classify_other),
                cmocka_unit_test(test_remote_real_names),
                cmocka_unit_test(test_remote_every_digest_shape),
                cmocka_unit_test(test_remote_refusals),
                cmocka_unit_test(test_remote_classify_other),
                cmocka_unit_test(test_hit_times),
        };
        return cmocka_run_group_tests_name("ccache", tests, NULL, NULL);
}
