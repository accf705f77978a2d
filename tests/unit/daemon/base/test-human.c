/* SPDX-License-Identifier: MIT */
/* Size and duration parsing, checked against ccache's parse_size semantics
 * (daemon/ccache/README.md §3), and the human formats cachectl prints. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/human.h"

static void test_parse_size_like_ccache(void **state) {
        static const struct {
                const char *in;
                uint64_t bytes;
        } ok[] = {
                { "100G", 100000000000ULL },          /* decimal unless 'i' follows */
                { "100Gi", 100ULL << 30 },
                { "100GB", 100000000000ULL },         /* only the first suffix char counts */
                { "100GiB", 100ULL << 30 },
                { "1.5T", 1500000000000ULL },
                { "1.5Ti", 1649267441664ULL },        /* 1.5 * 2^40 */
                { "512M", 512000000ULL },
                { "512Mi", 512ULL << 20 },
                { "64k", 64000ULL },
                { "64K", 64000ULL },
                { "64ki", 65536ULL },
                { "64Ki", 65536ULL },
                { "40G", 40000000000ULL },
                { " 2G", 2000000000ULL },             /* strtod skips leading space */
                { "2 G", 2000000000ULL },             /* ccache skips space before the suffix */
                { "1e3M", 1000000000ULL },            /* strtod exponent */
                { "0.5k", 500ULL },
                { "5Gfoo", 5000000000ULL },           /* ccache ignores the rest */
        };
        static const char *const bad[] = {
                "", "100", "1.5", "0G", "0.0001k", "-1G", "-0G", "10g", "10m", "10t", "10B", "10X",
                "G", "abc", "0x10G", "inf", "infG", "nanG", "1e30T",
        };

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                uint64_t v = 0;

                if (parse_size(ok[i].in, &v) != 0 || v != ok[i].bytes)
                        fail_msg("parse_size(\"%s\") = %llu, want %llu", ok[i].in,
                                 (unsigned long long) v, (unsigned long long) ok[i].bytes);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                uint64_t v = 42;

                if (parse_size(bad[i], &v) != -EINVAL || v != 42)
                        fail_msg("parse_size(\"%s\") accepted or clobbered its output", bad[i]);
        }
}

static void test_parse_duration(void **state) {
        static const struct {
                const char *in;
                usec_t usec;
        } ok[] = {
                { "10s", 10 * USEC_PER_SEC },
                { "500ms", 500 * USEC_PER_MSEC },
                { "5m", 300 * USEC_PER_SEC },
                { "24h", 86400 * USEC_PER_SEC },
                { "7d", 7 * 86400 * USEC_PER_SEC },
                { "1h30m", 5400 * USEC_PER_SEC },
                { "1m500ms", 60500 * USEC_PER_MSEC },
                { "0s", 0 },
        };
        static const char *const bad[] = { "", "10", "s", "10x", "-1s", "1.5h", "10s ", " 10s", "1h30", "99999999999999999999d" };

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                usec_t v = 1;

                if (parse_duration(ok[i].in, &v) != 0 || v != ok[i].usec)
                        fail_msg("parse_duration(\"%s\") = %llu", ok[i].in, (unsigned long long) v);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                usec_t v = 42;

                if (parse_duration(bad[i], &v) == 0 || v != 42)
                        fail_msg("parse_duration(\"%s\") accepted or clobbered its output", bad[i]);
        }
}

static void test_format_size(void **state) {
        char buf[32];

        assert_string_equal(format_size(0, buf, sizeof(buf)), "0B");
        assert_string_equal(format_size(999, buf, sizeof(buf)), "999B");
        assert_string_equal(format_size(1000, buf, sizeof(buf)), "1.0k");
        assert_string_equal(format_size(61200000000ULL, buf, sizeof(buf)), "61.2G");
        assert_string_equal(format_size(100000000000ULL, buf, sizeof(buf)), "100.0G");
        assert_string_equal(format_size(999960000ULL, buf, sizeof(buf)), "1.0G");
        assert_string_equal(format_size(1500000000000ULL, buf, sizeof(buf)), "1.5T");
}

static void test_round_size_up(void **state) {
        assert_int_equal(round_size_up(118300000000ULL), 120000000000ULL);
        assert_int_equal(round_size_up(4270000000ULL), 4300000000ULL);
        assert_int_equal(round_size_up(950000000ULL), 950000000ULL);    /* already round */
        assert_int_equal(round_size_up(100000000001ULL), 110000000000ULL);
        assert_int_equal(round_size_up(99), 99);
        assert_int_equal(round_size_up(0), 0);
}

static void test_format_duration(void **state) {
        char buf[32];

        assert_string_equal(format_duration(3 * 3600 * USEC_PER_SEC, buf, sizeof(buf)), "3h");
        assert_string_equal(format_duration((2 * 86400 + 4 * 3600 + 59) * USEC_PER_SEC, buf, sizeof(buf)), "2d 4h");
        assert_string_equal(format_duration(45 * USEC_PER_SEC, buf, sizeof(buf)), "45s");
        assert_string_equal(format_duration(61 * USEC_PER_SEC, buf, sizeof(buf)), "1m 1s");
        assert_string_equal(format_duration(250 * USEC_PER_MSEC, buf, sizeof(buf)), "250ms");
}

/* Lines of at most the width, broken at spaces, continued under the indent. */
static void test_print_wrapped(void **state) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        assert_non_null(f);
        print_wrapped(f, "  cap advice: the 7-day working set is 118.3G, over the cap of 100G: "
                         "max_size = \"120G\" would hold it", 40, 4);
        print_wrapped(f, "short", 40, 4);
        print_wrapped(f, "a-word-longer-than-the-whole-line-stands-alone then the rest", 20, 2);
        print_wrapped(f, "two\nlines", 40, 2);
        print_wrapped(f, "remote r: \x1b]0;owned\x07 \x9b" "31m", 40, 2);   /* a name from elsewhere */
        fclose(f);
        assert_string_equal(out, "  cap advice: the 7-day working set is\n"
                                 "    118.3G, over the cap of 100G:\n"
                                 "    max_size = \"120G\" would hold it\n"
                                 "short\n"
                                 "a-word-longer-than-the-whole-line-stands-alone\n"
                                 "  then the rest\n"
                                 "two\n"
                                 "lines\n"
                                 "remote r: \\e]0;owned\\x07 \\x9b31m\n");
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_size_like_ccache),
                cmocka_unit_test(test_parse_duration),
                cmocka_unit_test(test_format_size),
                cmocka_unit_test(test_format_duration),
                cmocka_unit_test(test_round_size_up),
                cmocka_unit_test(test_print_wrapped),
        };
        return cmocka_run_group_tests_name("human", tests, NULL, NULL);
}
