/* SPDX-License-Identifier: MIT */
/* The wire format: what the daemon sends is valid UTF-8 JSON whatever it
 * echoes, and the client tells a turned-away connection from a refusal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "protocol.h"

#define FFFD "\xef\xbf\xbd"

static void test_utf8_valid(void **state) {
        static const struct {
                const char *in, *want;
        } cases[] = {
                { "", "" },
                { "plain ascii ~\x7f", "plain ascii ~\x7f" },
                { "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" }, /* é € 😀 */
                { "\xef\xbf\xbd", FFFD },                                       /* U+FFFD itself */
                { "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },                     /* U+10FFFF, the last */
                { "a\xff" "b", "a" FFFD "b" },
                { "\x80", FFFD },                                               /* a lone continuation */
                { "\xc0\xaf", FFFD FFFD },                                      /* overlong '/' */
                { "\xc1\xbf", FFFD FFFD },
                { "\xe0\x80\xaf", FFFD FFFD FFFD },                             /* overlong, 3 bytes */
                { "\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD },                    /* overlong, 4 bytes */
                { "\xed\xa0\x80", FFFD FFFD FFFD },                             /* a surrogate */
                { "\xed\x9f\xbf", "\xed\x9f\xbf" },                             /* U+D7FF, just below */
                { "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD },                    /* above U+10FFFF */
                { "\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD },
                { "x\xe2\x82", "x" FFFD FFFD },                                 /* cut short at the end */
                { "\xe2\x82x", FFFD FFFD "x" },                                 /* cut short inside */
                { "\xc3\xc3\xa9", FFFD "\xc3\xa9" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *out = protocol_utf8_valid(cases[i].in);

                assert_non_null(out);
                if (strcmp(out, cases[i].want) != 0)
                        fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, cases[i].want);
                free(out);
        }
}

/* Every serialised line: valid UTF-8 (a second pass changes nothing), one
 * line, and it parses back. */
static void assert_line(const char *line) {
        char *again = protocol_utf8_valid(line);
        const char *nl = strchr(line, '\n');

        assert_non_null(again);
        assert_string_equal(again, line);
        free(again);
        assert_non_null(nl);
        assert_int_equal(nl[1], '\0');
}

static void test_lines_are_valid(void **state) {
        json_object *result = json_object_new_object(), *back = NULL;
        char *line, err[256];

        line = protocol_reply_error("no cache named '\xff\xfe'");
        assert_line(line);
        assert_string_equal(line, "{\"ok\":false,\"error\":\"no cache named '" FFFD FFFD "'\"}\n");
        assert_int_equal(protocol_parse_reply(line, &back, err, sizeof(err)), 0);
        assert_string_equal(err, "no cache named '" FFFD FFFD "'");
        free(line);

        /* Keys and values alike, however deep. */
        json_object_object_add(result, "c\xe9", json_object_new_string("/var/\x80/x"));
        line = protocol_reply_ok(result);
        assert_line(line);
        assert_string_equal(line, "{\"ok\":true,\"result\":{\"c" FFFD "\":\"/var/" FFFD "/x\"}}\n");
        assert_int_equal(protocol_parse_reply(line, &back, err, sizeof(err)), 1);
        json_object_put(back);
        free(line);

        line = protocol_progress(result);
        assert_line(line);
        assert_string_equal(line, "{\"progress\":{\"c" FFFD "\":\"/var/" FFFD "/x\"}}\n");
        free(line);
        json_object_put(result);
}

static void test_busy(void **state) {
        char *line = protocol_reply_busy("too many connections"), err[256];
        json_object *back = NULL;

        assert_string_equal(line, "{\"ok\":false,\"error\":\"too many connections\",\"busy\":true}\n");
        assert_int_equal(protocol_parse_reply(line, &back, err, sizeof(err)), -EBUSY);
        assert_string_equal(err, "too many connections");
        assert_null(back);
        free(line);
        /* An error that is not one, or a busy flag that is not true, is a refusal. */
        assert_int_equal(protocol_parse_reply("{\"ok\":false,\"error\":\"x\",\"busy\":false}", &back, err,
                                              sizeof(err)), 0);
        assert_int_equal(protocol_parse_reply("{\"ok\":false,\"error\":\"x\",\"busy\":1}", &back, err,
                                              sizeof(err)), 0);
        assert_int_equal(protocol_parse_reply("{\"ok\":true,\"busy\":true}", &back, err, sizeof(err)), 1);
        assert_int_equal(protocol_parse_reply("{\"ok\":1}", &back, err, sizeof(err)), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_valid),
                cmocka_unit_test(test_lines_are_valid),
                cmocka_unit_test(test_busy),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
