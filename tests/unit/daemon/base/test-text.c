/* SPDX-License-Identifier: MIT */
/* Names shown harmlessly (base/text.h): everything a terminal acts on comes
 * out as a visible escape, plain UTF-8 as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/text.h"
#include "base/util.h"

/* Every byte of out is printable ASCII: nothing left for a terminal. */
static void assert_inert(const char *in, const char *out) {
        for (const unsigned char *u = (const unsigned char *) out; *u; u++)
                if (*u < 0x20 || *u >= 0x7f)
                        fail_msg("escaping \"%s\" left byte 0x%02x in \"%s\"", in, *u, out);
}

static void test_escapes(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "a\x1b[31mred\x1b[0m.c", "a\\e[31mred\\e[0m.c" },            /* ESC, CSI as ESC [ */
                { "\x1b]0;owned\x07", "\\e]0;owned\\x07" },                     /* OSC title, BEL */
                { "tab\there\nnew\rret", "tab\\there\\nnew\\rret" },
                { "\x01\x08\x0b\x0c\x1f", "\\x01\\x08\\x0b\\x0c\\x1f" },        /* other C0 */
                { "del\x7f", "del\\x7f" },
                { "c1\xc2\x80\xc2\x9b" "31m\xc2\x9f", "c1\\u0080\\u009b31m\\u009f" },  /* C1 as UTF-8, CSI among them */
                { "raw\x9b" "31m", "raw\\x9b31m" },                             /* 8-bit CSI: invalid UTF-8 */
                { "\xc0\xaf", "\\xc0\\xaf" },                                  /* overlong '/' */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" },                          /* a surrogate */
                { "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },                 /* above U+10FFFF */
                { "cut\xe2\x82", "cut\\xe2\\x82" },                             /* a sequence cut by the end */
                { "\xe2\x82x", "\\xe2\\x82x" },                                 /* ... by an ASCII byte */
                { "\xff\xfe", "\\xff\\xfe" },
                { "evil\xe2\x80\xae" "c.exe", "evil\\u202ec.exe" },             /* right-to-left override */
                { "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069" },             /* an isolate */
                { "line\xe2\x80\xa8sep", "line\\u2028sep" },
        };
        char buf[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_free_ char *dup = text_escaped(cases[i].in);
                char *mem = NULL;
                size_t len = 0, n;
                FILE *f = open_memstream(&mem, &len);

                assert_non_null(f);
                text_put(f, cases[i].in);
                fclose(f);
                n = text_escape(cases[i].in, buf, sizeof(buf));
                if (strcmp(buf, cases[i].out) != 0 || n != strlen(cases[i].out))
                        fail_msg("case %zu: got \"%s\" (%zu), want \"%s\"", i, buf, n, cases[i].out);
                assert_string_equal(dup, cases[i].out);
                assert_string_equal(mem, cases[i].out);
                assert_inert(cases[i].out, buf);
                free(mem);
        }
}

/* Plain names, in any script, come out byte for byte; backslashes too. */
static void test_plain_unchanged(void **state) {
        static const char *const plain[] = {
                "",
                "/home/build/proj/src/k1.hip",
                "build dir/with spaces/$(odd) 'quotes' \"too\"",
                "C:\\not\\an\\escape",
                "r\xc3\xa9sum\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e/\xd0\xbf\xd1\x80\xd0\xbe\xd0\xb5\xd0\xba\xd1\x82.cpp",
                "\xf0\x9f\x9a\x80.c",                           /* U+1F680, four bytes */
                "\xc2\xa0nbsp\xc2\xa9\xef\xbf\xbd",             /* U+00A0 follows the C1 range; U+FFFD */
                "\xe2\x80\x8d\xe2\x80\xaf",                      /* U+200D, U+202F: next to escaped ones, not them */
        };
        char buf[256];

        for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
                _cleanup_free_ char *dup = text_escaped(plain[i]);

                assert_int_equal(text_escape(plain[i], buf, sizeof(buf)), strlen(plain[i]));
                assert_string_equal(buf, plain[i]);
                assert_string_equal(dup, plain[i]);
        }
}

/* A short buffer holds whole escapes only, always NUL-terminated, and the
 * return says how much the whole needed. */
static void test_short_buffer(void **state) {
        char buf[8];

        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(text_escape("ab\x1b\x1b\x1b", buf, 5), 8);
        assert_string_equal(buf, "ab\\e");
        assert_int_equal(text_escape("\x01", buf, 4), 4);
        assert_string_equal(buf, "");                   /* "\x01" does not fit in 3 */
        assert_int_equal(text_escape("abc", buf, 1), 3);
        assert_string_equal(buf, "");
        assert_int_equal(text_escape("abc", buf, 4), 3);
        assert_string_equal(buf, "abc");
        assert_int_equal(text_escape("\xe6\x97\xa5", buf, 3), 3);
        assert_string_equal(buf, "");                   /* never half a character */
}

/* A document json-c made: what its escaping leaves raw (DEL, C1, a bidi
 * override, a byte of invalid UTF-8) escaped as JSON, its layout kept. */
static void test_put_json(void **state) {
        char *mem = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&mem, &len);

        assert_non_null(f);
        text_put_json(f, "{\n  \"a\": \"x\\u001b]0;t\\u0007 \x7f \xc2\x9b \x9b \xe2\x80\xae \xc3\xa9\"\n}");
        fclose(f);
        assert_string_equal(mem, "{\n  \"a\": \"x\\u001b]0;t\\u0007 \\u007f \\u009b \\ufffd \\u202e \xc3\xa9\"\n}\n");
        free(mem);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escapes),
                cmocka_unit_test(test_plain_unchanged),
                cmocka_unit_test(test_short_buffer),
                cmocka_unit_test(test_put_json),
        };
        return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
