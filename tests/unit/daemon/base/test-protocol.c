/* SPDX-License-Identifier: MIT */
/* The wire format: what the daemon sends is valid UTF-8 JSON whatever it
 * echoes and says its protocol version; requests go out as older daemons
 * read them and come back the same; the client tells a turned-away
 * connection from a refusal, and a result it cannot know from one it can. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/protocol.h"
#include "base/util.h"

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

/* Decodes a line the daemon sent; fails the test unless it is one. */
static ProtocolReply decode(const char *line, char *err, size_t errlen) {
        ProtocolReply r;

        assert_int_equal(protocol_decode_reply(line, &r, err, errlen), 0);
        return r;
}

static void test_lines_are_valid(void **state) {
        json_object *result = json_object_new_object();
        char *line, err[256];
        ProtocolReply r;

        line = protocol_encode_error("no cache named '\xff\xfe'");
        assert_line(line);
        assert_string_equal(line, "{\"ok\":false,\"error\":\"no cache named '" FFFD FFFD "'\",\"protocol\":1}\n");
        r = decode(line, err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_ERROR);
        assert_null(r.value);
        assert_string_equal(err, "no cache named '" FFFD FFFD "'");
        free(line);

        /* Keys and values alike, however deep. */
        json_object_object_add(result, "c\xe9", json_object_new_string("/var/\x80/x"));
        line = protocol_encode_ok(result);
        assert_line(line);
        assert_string_equal(line, "{\"ok\":true,\"result\":{\"c" FFFD "\":\"/var/" FFFD "/x\"},\"protocol\":1}\n");
        r = decode(line, err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_OK);
        assert_string_equal(protocol_field_str(r.value, "c" FFFD), "/var/" FFFD "/x");
        json_object_put(r.value);
        free(line);

        line = protocol_encode_progress(result);
        assert_line(line);
        assert_string_equal(line, "{\"progress\":{\"c" FFFD "\":\"/var/" FFFD "/x\"}}\n");
        free(line);
        json_object_put(result);
}

static void test_busy(void **state) {
        char *line = protocol_encode_busy("too many connections"), err[256];
        ProtocolReply r;

        assert_string_equal(line, "{\"ok\":false,\"error\":\"too many connections\",\"busy\":true,\"protocol\":1}\n");
        r = decode(line, err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_BUSY);
        assert_string_equal(err, "too many connections");
        assert_null(r.value);
        free(line);
        /* An error that is not one, or a busy flag that is not true, is a refusal. */
        assert_int_equal(decode("{\"ok\":false,\"error\":\"x\",\"busy\":false}", err, sizeof(err)).kind,
                         PROTOCOL_REPLY_ERROR);
        assert_int_equal(decode("{\"ok\":false,\"error\":\"x\",\"busy\":1}", err, sizeof(err)).kind,
                         PROTOCOL_REPLY_ERROR);
        assert_int_equal(decode("{\"ok\":true,\"busy\":true}", err, sizeof(err)).kind, PROTOCOL_REPLY_OK);
        assert_int_equal(protocol_decode_reply("{\"ok\":1}", &r, err, sizeof(err)), -EINVAL);
}

/* The bytes a request goes out as: the fields an older daemon reads too. */
static void test_requests_on_the_wire(void **state) {
        static const char *const want[] = {
                "{\"cmd\":\"status\"}\n",
                "{\"cmd\":\"status\",\"cache\":\"mi210\"}\n",
                "{\"cmd\":\"trim\",\"caches\":[],\"dry_run\":false}\n",
                "{\"cmd\":\"trim\",\"caches\":[\"a\",\"b/c\"],\"to_bytes\":80000000000,\"dry_run\":true}\n",
                "{\"cmd\":\"reload\"}\n",
        };
        char *lines[ELEMENTSOF(want)];
        ProtocolTrim t = { .caches = { "a", "b/c" }, .n_caches = 2, .to_bytes = 80000000000, .dry_run = true };

        lines[0] = protocol_encode_status(&(ProtocolStatus) {});
        lines[1] = protocol_encode_status(&(ProtocolStatus) { .cache = "mi210" });
        lines[2] = protocol_encode_trim(&(ProtocolTrim) {});
        lines[3] = protocol_encode_trim(&t);
        lines[4] = protocol_encode_reload();
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                assert_non_null(lines[i]);
                assert_string_equal(lines[i], want[i]);
                free(lines[i]);
        }
}

/* Parses a request line as control.c does, then its fields as the handler
 * does; returns what protocol_decode_trim (or _status) returned. */
static int decode_trim(const char *line, ProtocolTrim *t, char *err, size_t errlen) {
        json_object *o;
        const char *cmd;
        int r;

        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, errlen), 0);
        assert_string_equal(cmd, PROTOCOL_CMD_TRIM);
        r = protocol_decode_trim(o, t, err, errlen);
        json_object_put(o);
        return r;
}

static void test_round_trip(void **state) {
        ProtocolTrim t = { .caches = { "x", "\xc3\xa9t\xc3\xa9" }, .n_caches = 2, .to_bytes = UINT64_C(1) << 62 },
                     back = {};
        ProtocolStatus s;
        char *line = protocol_encode_trim(&t), err[256];
        json_object *o;
        const char *cmd;

        /* The names are borrowed from the request object: compare before it goes. */
        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, sizeof(err)), 0);
        assert_int_equal(protocol_decode_trim(o, &back, err, sizeof(err)), 0);
        assert_int_equal(back.n_caches, 2);
        assert_string_equal(back.caches[0], "x");
        assert_string_equal(back.caches[1], "\xc3\xa9t\xc3\xa9");
        assert_true(back.to_bytes == t.to_bytes);
        assert_false(back.dry_run);
        json_object_put(o);
        free(line);

        line = protocol_encode_status(&(ProtocolStatus) { .cache = "a" });
        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, sizeof(err)), 0);
        assert_string_equal(cmd, PROTOCOL_CMD_STATUS);
        assert_int_equal(protocol_decode_status(o, &s, err, sizeof(err)), 0);
        assert_string_equal(s.cache, "a");
        json_object_put(o);
        free(line);

        /* A writer: its version and namespace, an empty namespace too. */
        line = protocol_encode_trim(&(ProtocolTrim) { .written_by = "4.9.1", .ns = "", .dry_run = true });
        assert_int_equal(decode_trim(line, &back, err, sizeof(err)), 0);
        assert_true(back.dry_run);
        free(line);
        assert_int_equal(decode_trim("{\"cmd\":\"trim\",\"written_by\":\"4.13.6\",\"namespace\":\"\"}", &back, err,
                                     sizeof(err)), 0);
        assert_non_null(back.ns);
        assert_non_null(back.written_by);

        /* No names, no size: every cache, each to its target. */
        assert_int_equal(decode_trim("{\"cmd\":\"trim\"}", &back, err, sizeof(err)), 0);
        assert_int_equal(back.n_caches, 0);
        assert_true(back.to_bytes == 0 && !back.dry_run);
}

/* A request that says something else than it means is refused, with why,
 * and its outputs stay as they were. */
static void test_requests_refused(void **state) {
        static const struct {
                const char *line, *error;
        } trims[] = {
                { "{\"cmd\":\"trim\",\"dry_run\":\"no\"}", "\"dry_run\" must be true or false" },
                { "{\"cmd\":\"trim\",\"dry_run\":1}", "\"dry_run\" must be true or false" },
                { "{\"cmd\":\"trim\",\"caches\":\"t\"}", "\"caches\" must be an array of cache names" },
                { "{\"cmd\":\"trim\",\"caches\":[\"t\",1]}", "\"caches\" must be an array of cache names" },
                { "{\"cmd\":\"trim\",\"to_bytes\":\"1G\"}", "\"to_bytes\" must be a positive number" },
                { "{\"cmd\":\"trim\",\"to_bytes\":0}", "\"to_bytes\" must be a positive number" },
                { "{\"cmd\":\"trim\",\"to_bytes\":-5}", "\"to_bytes\" must be a positive number" },
                { "{\"cmd\":\"trim\",\"to_bytes\":1.5}", "\"to_bytes\" must be a positive number" },
                { "{\"cmd\":\"trim\",\"written_by\":4}", "\"written_by\" must be a ccache version of at most 255 printable characters" },
                { "{\"cmd\":\"trim\",\"written_by\":\"\"}", "\"written_by\" must be a ccache version of at most 255 printable characters" },
                { "{\"cmd\":\"trim\",\"written_by\":\"4.9\\n1\"}", "\"written_by\" must be a ccache version of at most 255 printable characters" },
                { "{\"cmd\":\"trim\",\"namespace\":[]}", "\"namespace\" must be a namespace of at most 255 printable characters" },
                { "{\"cmd\":\"trim\",\"written_by\":\"4.9.1\",\"to_bytes\":5}", "a trim by writer removes what that writer wrote: it takes no \"to_bytes\"" },
        };
        ProtocolTrim t = { .n_caches = 7 };
        ProtocolStatus s = { .cache = "kept" };
        char line[1024], err[256];
        json_object *o = (json_object *) 0x1;
        const char *cmd = "kept";
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(trims); i++) {
                assert_int_equal(decode_trim(trims[i].line, &t, err, sizeof(err)), -EINVAL);
                assert_string_equal(err, trims[i].error);
                assert_int_equal(t.n_caches, 7);
        }

        /* PROTOCOL_TRIM_CACHES_MAX names, and one more. */
        n = (size_t) snprintf(line, sizeof(line), "{\"cmd\":\"trim\",\"caches\":[\"a\"");
        for (unsigned i = 1; i < PROTOCOL_TRIM_CACHES_MAX; i++)
                n += (size_t) snprintf(line + n, sizeof(line) - n, ",\"a\"");
        snprintf(line + n, sizeof(line) - n, "]}");
        assert_int_equal(decode_trim(line, &t, err, sizeof(err)), 0);
        assert_int_equal(t.n_caches, PROTOCOL_TRIM_CACHES_MAX);
        snprintf(line + n, sizeof(line) - n, ",\"a\"]}");
        assert_int_equal(decode_trim(line, &t, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "\"caches\" may name at most 64 caches");

        assert_int_equal(protocol_decode_request("{\"cmd\":\"status\",\"cache\":7}", &o, &cmd, err, sizeof(err)), 0);
        assert_int_equal(protocol_decode_status(o, &s, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "\"cache\" must be a string");
        assert_string_equal(s.cache, "kept");
        json_object_put(o);

        o = (json_object *) 0x1;
        cmd = "kept";
        assert_int_equal(protocol_decode_request("{\"cmd\":\"status\"} x", &o, &cmd, err, sizeof(err)), -EINVAL);
        assert_true(strncmp(err, "request is not one JSON object", 30) == 0);
        assert_int_equal(protocol_decode_request("[1]", &o, &cmd, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "request must be an object with a string \"cmd\"");
        assert_int_equal(protocol_decode_request("{\"cmd\":1}", &o, &cmd, err, sizeof(err)), -EINVAL);
        assert_ptr_equal(o, (json_object *) 0x1);
        assert_string_equal(cmd, "kept");
}

/* Every reply says its version; a client reads an older daemon's replies
 * (no version) as before, and refuses only a result it cannot know. */
static void test_version(void **state) {
        char *line, err[256];
        ProtocolReply r;

        line = protocol_encode_ok(NULL);
        assert_string_equal(line, "{\"ok\":true,\"protocol\":1}\n");
        r = decode(line, err, sizeof(err));
        assert_int_equal(r.version, PROTOCOL_VERSION);
        assert_true(protocol_reply_understood(&r));
        free(line);

        /* An older daemon: no version, read as 0, understood. */
        r = decode("{\"ok\":true,\"result\":{\"caches\":[]}}", err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_OK);
        assert_int_equal(r.version, 0);
        assert_true(protocol_reply_understood(&r));
        assert_int_equal(protocol_field_count(r.value, "caches"), 0);
        json_object_put(r.value);

        /* A newer daemon: its result is not read; its errors are, and an ok
         * without a result needs no reading. */
        r = decode("{\"ok\":true,\"result\":{\"caches\":[]},\"protocol\":2}", err, sizeof(err));
        assert_int_equal(r.version, 2);
        assert_false(protocol_reply_understood(&r));
        json_object_put(r.value);
        r = decode("{\"ok\":false,\"error\":\"permission denied\",\"protocol\":2}", err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_ERROR);
        assert_true(protocol_reply_understood(&r));
        assert_string_equal(err, "permission denied");
        r = decode("{\"ok\":false,\"error\":\"too many\",\"busy\":true,\"protocol\":9}", err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_BUSY);
        assert_true(protocol_reply_understood(&r));
        r = decode("{\"ok\":true,\"protocol\":2}", err, sizeof(err));
        assert_true(protocol_reply_understood(&r));
        r = decode("{\"ok\":true,\"result\":1,\"protocol\":99999999999}", err, sizeof(err));
        assert_true(r.version > PROTOCOL_VERSION);
        assert_false(protocol_reply_understood(&r));
        json_object_put(r.value);

        /* A version that is none is no reply. */
        assert_int_equal(protocol_decode_reply("{\"ok\":true,\"protocol\":\"1\"}", &r, err, sizeof(err)), -EINVAL);
        assert_int_equal(protocol_decode_reply("{\"ok\":true,\"protocol\":-1}", &r, err, sizeof(err)), -EINVAL);
        assert_int_equal(protocol_decode_reply("{\"ok\":true,\"protocol\":1.0}", &r, err, sizeof(err)), -EINVAL);
}

/* A progress line is one kind of line the decoder knows, parsed once. */
static void test_progress(void **state) {
        json_object *p = json_tokener_parse("{\"a\":{\"files\":3,\"planned_files\":9}}");
        char *line = protocol_encode_progress(p), err[256];
        ProtocolReply r = decode(line, err, sizeof(err));

        assert_int_equal(r.kind, PROTOCOL_REPLY_PROGRESS);
        assert_int_equal(r.version, 0);
        assert_true(protocol_reply_understood(&r));
        assert_int_equal(protocol_field_u64(protocol_field_get(r.value, "a"), "planned_files"), 9);
        json_object_put(r.value);
        free(line);
        json_object_put(p);

        r = decode("{\"progress\":null}", err, sizeof(err));
        assert_int_equal(r.kind, PROTOCOL_REPLY_PROGRESS);
        assert_null(r.value);
        assert_int_equal(protocol_decode_reply("[\"progress\"]", &r, err, sizeof(err)), -EINVAL);
        assert_int_equal(protocol_decode_reply("", &r, err, sizeof(err)), -EINVAL);
}

/* Decodes a history request line with protocol_decode_history; h->cache,
 * borrowed from the request, is copied to a static buffer ("-" for NULL). */
static int decode_history(const char *line, ProtocolHistory *h, char *err, size_t errlen) {
        static char cache[64];
        json_object *o = NULL;
        const char *cmd;
        int r;

        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, errlen), 0);
        assert_string_equal(cmd, PROTOCOL_CMD_HISTORY);
        r = protocol_decode_history(o, h, err, errlen);
        if (r == 0) {
                snprintf(cache, sizeof(cache), "%s", h->cache ? h->cache : "-");
                h->cache = cache;
        }
        json_object_put(o);
        return r;
}

/* A merge request: its line, its round trip, and what is refused (the
 * daemon never guesses: a missing, empty or mistyped name, a cache merged
 * into itself, a flag that is not a boolean). */
static void test_merge_request(void **state) {
        static const struct {
                const char *line, *error;
        } refused[] = {
                { "{\"cmd\":\"merge\",\"into\":\"b\"}", "\"from\" must name a cache" },
                { "{\"cmd\":\"merge\",\"from\":\"a\"}", "\"into\" must name a cache" },
                { "{\"cmd\":\"merge\",\"from\":\"\",\"into\":\"b\"}", "\"from\" must name a cache" },
                { "{\"cmd\":\"merge\",\"from\":1,\"into\":\"b\"}", "\"from\" must name a cache" },
                { "{\"cmd\":\"merge\",\"from\":\"a\",\"into\":\"a\"}", "a cache cannot be merged into itself" },
                { "{\"cmd\":\"merge\",\"from\":\"a\",\"into\":\"b\",\"dry_run\":1}", "\"dry_run\" must be true or false" },
                { "{\"cmd\":\"merge\",\"from\":\"a\",\"into\":\"b\",\"allow_mixed\":\"yes\"}",
                  "\"allow_mixed\" must be true or false" },
        };
        ProtocolMerge m = { .from = "aiter", .into = "mi210", .dry_run = true }, back = {};
        char *line = protocol_encode_merge(&m), err[256];
        json_object *o;
        const char *cmd;

        assert_string_equal(line, "{\"cmd\":\"merge\",\"from\":\"aiter\",\"into\":\"mi210\",\"dry_run\":true,"
                                  "\"allow_mixed\":false}\n");
        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, sizeof(err)), 0);
        assert_string_equal(cmd, PROTOCOL_CMD_MERGE);
        assert_int_equal(protocol_decode_merge(o, &back, err, sizeof(err)), 0);
        assert_string_equal(back.from, "aiter");
        assert_string_equal(back.into, "mi210");
        assert_true(back.dry_run && !back.allow_mixed);
        json_object_put(o);
        free(line);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                ProtocolMerge kept = { .from = "unchanged" };

                assert_int_equal(protocol_decode_request(refused[i].line, &o, &cmd, err, sizeof(err)), 0);
                assert_int_equal(protocol_decode_merge(o, &kept, err, sizeof(err)), -EINVAL);
                assert_string_equal(err, refused[i].error);
                assert_string_equal(kept.from, "unchanged");
                json_object_put(o);
        }
}

/* An evictions request: its line, its round trip, what is refused (no
 * cache, no keys, a key that is not one: too short, too long, another
 * alphabet, a path; more than PROTOCOL_EVICTIONS_KEYS_MAX), and a result's
 * entries read back, a null "by" as not recorded. */
static void test_evictions_request(void **state) {
        static const struct {
                const char *line, *error;
        } refused[] = {
                { "{\"cmd\":\"evictions\",\"keys\":[\"ab\"]}", "\"cache\" must name a cache" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\"}", "\"keys\" must be an array of 1 to 4096 ccache keys" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[]}",
                  "\"keys\" must be an array of 1 to 4096 ccache keys" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":\"ab\"}",
                  "\"keys\" must be an array of 1 to 4096 ccache keys" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"ab\",7]}",
                  "\"keys\"[1] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"a\"]}",
                  "\"keys\"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"ab\",\"0w\"]}",
                  "\"keys\"[1] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"ABCD\"]}",
                  "\"keys\"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"../../etc\"]}",
                  "\"keys\"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\"db03p469mnfl2pbfv4gp6sqiuo5bmcab4R\"]}",
                  "\"keys\"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
                { "{\"cmd\":\"evictions\",\"cache\":\"a\",\"keys\":[\""
                  "0123456789012345678901234567890123456789012345678901234567890123a\"]}",
                  "\"keys\"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)" },
        };
        const char *keys[] = { "db03p469mnfl2pbfv4gp6sqiuo5bmcab4", "04622a7c4e31c5b0d2c9f2d8e6b3a1f09c8d7e6f" };
        ProtocolEvictions e = { .cache = "mi210", .keys = keys, .n_keys = 2 }, back = {};
        ProtocolEviction got, absent = { .since = 9 };
        char *line = protocol_encode_evictions(&e), err[256];
        json_object *o, *result, *many;
        const char *cmd;

        assert_string_equal(line, "{\"cmd\":\"evictions\",\"cache\":\"mi210\",\"keys\":["
                                  "\"db03p469mnfl2pbfv4gp6sqiuo5bmcab4\",\"04622a7c4e31c5b0d2c9f2d8e6b3a1f09c8d7e6f\"]}\n");
        assert_int_equal(protocol_decode_request(line, &o, &cmd, err, sizeof(err)), 0);
        assert_string_equal(cmd, PROTOCOL_CMD_EVICTIONS);
        assert_int_equal(protocol_decode_evictions(o, &back, err, sizeof(err)), 0);
        assert_string_equal(back.cache, "mi210");
        assert_int_equal(back.n_keys, 2);
        assert_string_equal(back.keys[0], keys[0]);
        assert_string_equal(back.keys[1], keys[1]);
        free(back.keys);
        json_object_put(o);
        free(line);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                ProtocolEvictions kept = { .cache = "unchanged" };

                assert_int_equal(protocol_decode_request(refused[i].line, &o, &cmd, err, sizeof(err)), 0);
                assert_int_equal(protocol_decode_evictions(o, &kept, err, sizeof(err)), -EINVAL);
                assert_string_equal(err, refused[i].error);
                assert_string_equal(kept.cache, "unchanged");
                json_object_put(o);
        }

        /* 4096 keys are read; 4097 are refused. */
        o = json_object_new_object();
        json_object_object_add(o, PROTOCOL_FIELD_CACHE, json_object_new_string("a"));
        many = json_object_new_array();
        for (unsigned i = 0; i < PROTOCOL_EVICTIONS_KEYS_MAX; i++)
                json_object_array_add(many, json_object_new_string(keys[i % 2]));
        json_object_object_add(o, PROTOCOL_FIELD_KEYS, many);
        assert_int_equal(protocol_decode_evictions(o, &back, err, sizeof(err)), 0);
        assert_int_equal(back.n_keys, PROTOCOL_EVICTIONS_KEYS_MAX);
        free(back.keys);
        json_object_array_add(many, json_object_new_string(keys[0]));
        assert_int_equal(protocol_decode_evictions(o, &back, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "\"keys\" must be an array of 1 to 4096 ccache keys");
        json_object_put(o);

        /* The result, and its entries read back. */
        result = json_object_new_object();
        o = json_object_new_object();
        json_object_object_add(result, PROTOCOL_EVICTIONS_KEYS, o);
        json_object_object_add(o, keys[0], protocol_eviction(&(ProtocolEviction) {
                .since = 1800000000, .by = PROTOCOL_EVICTED_BY_CAP, .kind = PROTOCOL_EVICTION_MANIFEST }));
        json_object_object_add(o, keys[1], protocol_eviction(&(ProtocolEviction) { .since = 1800000001 }));
        assert_string_equal(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN),
                            "{\"keys\":{\"db03p469mnfl2pbfv4gp6sqiuo5bmcab4\":{\"since\":1800000000,\"by\":\"cap\","
                            "\"kind\":\"manifest\"},\"04622a7c4e31c5b0d2c9f2d8e6b3a1f09c8d7e6f\":{\"since\":1800000001,"
                            "\"by\":null}}}");
        assert_int_equal(protocol_decode_eviction(result, keys[0], &got), 1);
        assert_int_equal(got.since, 1800000000);
        assert_string_equal(got.by, "cap");
        assert_string_equal(got.kind, "manifest");
        assert_int_equal(protocol_decode_eviction(result, keys[1], &got), 1);
        assert_int_equal(got.since, 1800000001);
        assert_null(got.by);
        assert_null(got.kind);
        assert_int_equal(protocol_decode_eviction(result, "ffff", &absent), 0);
        assert_int_equal(absent.since, 9);
        assert_int_equal(protocol_decode_eviction(NULL, keys[0], &absent), 0);
        json_object_put(result);
}

static void test_history_request(void **state) {
        static const struct {
                const char *line, *error;
        } bad[] = {
                { "{\"cmd\":\"history\",\"count\":1}", "\"seconds\" must be 60, 3600 or 86400" },
                { "{\"cmd\":\"history\",\"seconds\":7,\"count\":1}", "\"seconds\" must be 60, 3600 or 86400" },
                { "{\"cmd\":\"history\",\"seconds\":\"60\",\"count\":1}", "\"seconds\" must be 60, 3600 or 86400" },
                { "{\"cmd\":\"history\",\"seconds\":60.0,\"count\":1}", "\"seconds\" must be 60, 3600 or 86400" },
                { "{\"cmd\":\"history\",\"seconds\":4294967356,\"count\":1}", "\"seconds\" must be 60, 3600 or 86400" },
                { "{\"cmd\":\"history\",\"seconds\":60}", "\"count\" must be a number of rows from 1 to 1440 (for rows of 60 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":60,\"count\":0}", "\"count\" must be a number of rows from 1 to 1440 (for rows of 60 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":60,\"count\":1441}", "\"count\" must be a number of rows from 1 to 1440 (for rows of 60 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":3600,\"count\":2161}", "\"count\" must be a number of rows from 1 to 2160 (for rows of 3600 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":86400,\"count\":91}", "\"count\" must be a number of rows from 1 to 90 (for rows of 86400 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":86400,\"count\":-1}", "\"count\" must be a number of rows from 1 to 90 (for rows of 86400 seconds)" },
                { "{\"cmd\":\"history\",\"seconds\":86400,\"count\":18446744073709551615}", "\"count\" must be a number of rows from 1 to 90 (for rows of 86400 seconds)" },
                { "{\"cmd\":\"history\",\"cache\":[],\"seconds\":60,\"count\":1}", "\"cache\" must be a string" },
        };
        ProtocolHistory h = { .cache = "kept", .seconds = 3600, .count = 24 }, back;
        char err[256], *line;

        line = protocol_encode_history(&h);
        assert_string_equal(line, "{\"cmd\":\"history\",\"cache\":\"kept\",\"seconds\":3600,\"count\":24}\n");
        line[strlen(line) - 1] = '\0';
        assert_int_equal(decode_history(line, &back, err, sizeof(err)), 0);
        assert_string_equal(back.cache, "kept");
        assert_int_equal(back.seconds, 3600);
        assert_int_equal(back.count, 24);
        free(line);

        h = (ProtocolHistory) { .seconds = 86400, .count = 90 };
        line = protocol_encode_history(&h);
        assert_string_equal(line, "{\"cmd\":\"history\",\"seconds\":86400,\"count\":90}\n");
        free(line);
        assert_int_equal(decode_history("{\"cmd\":\"history\",\"seconds\":60,\"count\":1440}", &back, err, sizeof(err)), 0);
        assert_string_equal(back.cache, "-");

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                back = (ProtocolHistory) { .seconds = 1 };
                assert_int_equal(decode_history(bad[i].line, &back, err, sizeof(err)), -EINVAL);
                assert_string_equal(err, bad[i].error);
                assert_int_equal(back.seconds, 1);      /* unchanged */
        }
        assert_int_equal(protocol_history_max(60), 1440);
        assert_int_equal(protocol_history_max(3600), 2160);
        assert_int_equal(protocol_history_max(86400), 90);
        assert_int_equal(protocol_history_max(120), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_valid),
                cmocka_unit_test(test_lines_are_valid),
                cmocka_unit_test(test_busy),
                cmocka_unit_test(test_requests_on_the_wire),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_requests_refused),
                cmocka_unit_test(test_version),
                cmocka_unit_test(test_progress),
                cmocka_unit_test(test_history_request),
                cmocka_unit_test(test_merge_request),
                cmocka_unit_test(test_evictions_request),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
