/* SPDX-License-Identifier: MIT */
/* ccache.conf rewriting: only harmless settings survive, in a form every
 * ccache version reads the same way, and the daemon's own max_size never
 * overflows to "no limit". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ccache/ccache-conf.h"

static const CcacheConfPolicy managed = { .max_size = "120G", .umask = true, .trusted = true };

/* The keys dropped, "key key ". */
static char drops[1024];

static void on_drop(const char *key, const char *why, void *userdata) {
        size_t n = strlen(drops);

        snprintf(drops + n, sizeof(drops) - n, "%s ", key);
}

static char *update(const char *in, const CcacheConfPolicy *p, char *was, size_t waslen) {
        char *out;

        drops[0] = '\0';
        out = ccache_conf_update(in, in ? strlen(in) : 0, p, on_drop, NULL, was, waslen);
        assert_non_null(out);
        return out;
}

/* Applying the rewrite to its own output changes nothing, drops nothing. */
static void assert_fixpoint(const char *text, const CcacheConfPolicy *p) {
        char *again = update(text, p, NULL, 0);

        if (strcmp(again, text) != 0 || drops[0])
                fail_msg("not a fixpoint: \"%s\" became \"%s\" (dropped %s)", text, again, drops);
        free(again);
}

/* No line of text starts with whitespace: ccache 4.13 would read it as part
 * of the line before, older versions as a line of its own. */
static void assert_flat(const char *text) {
        for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
                if (*l == ' ' || *l == '\t')
                        fail_msg("indented line in \"%s\"", text);
                if (!strchr(l, '\n'))
                        fail_msg("no final newline in \"%s\"", text);
        }
}

static void test_umask_and_max_size(void **state) {
        static const struct {
                const char *in, *out, *was;
        } cases[] = {
                { NULL, "max_size = 120G\numask = 000\n", "" },
                { "", "max_size = 120G\numask = 000\n", "" },
                { "max_size = 5G \n", "max_size = 120G\numask = 000\n", "5G" },
                { "compression = true\nmax_size=5G\numask = 022\nsloppiness = time_macros\n",
                  "compression = true\nmax_size = 120G\numask = 000\nsloppiness = time_macros\n", "5G" },
                { "umask = 000\nmax_size = 120G\n", "umask = 000\nmax_size = 120G\n", "120G" },
                /* an indented line continues the one before (4.13): "1G" stays
                 * the first max_size, the 077 goes with the line it belongs to */
                { "max_size = 1G\n  umask = 077\nmax_size = 2G\n# max_size = 3G\n",
                  "max_size = 120G\n# max_size = 3G\numask = 000\n", "1G umask = 077" },
                { "  umask = 077\nmax_size = 1G\n", "max_size = 120G\numask = 000\n", "1G" },
                { "max_sizes = 1\n", "max_size = 120G\numask = 000\n", "" },
                { "max_files = 10\r\n\r\n# a comment\r\n", "max_files = 10\n\n# a comment\nmax_size = 120G\numask = 000\n", "" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char was[32] = "junk";
                char *out = update(cases[i].in, &managed, was, sizeof(was));

                if (strcmp(out, cases[i].out) != 0)
                        fail_msg("case %zu: got \"%s\"", i, out);
                if (strcmp(was, cases[i].was) != 0)
                        fail_msg("case %zu: max_size was \"%s\", not \"%s\"", i, was, cases[i].was);
                assert_flat(out);
                assert_fixpoint(out, &managed);
                free(out);
        }
}

/* Every setting that can run a command, write or read outside the cache, or
 * reach a remote goes, however it is written, and is reported. */
static void test_code_never_survives(void **state) {
        static const char *const planted[] = {
                "prefix_command = /srv/anyone/evil.sh\n",
                "prefix_command_cpp=/srv/anyone/evil.sh\n",
                "  prefix_command = /srv/anyone/evil.sh\n",            /* continues nothing */
                "\tprefix_command\t=\t/srv/anyone/evil.sh\n",
                "compiler = /srv/anyone/gcc\ncompiler_check = /srv/anyone/evil.sh\n",
                "path = /srv/anyone/bin\nlog_file = /etc/passwd\nstats_log = /root/.bashrc\n",
                "debug = true\ndebug_dir = /etc\ntemporary_dir = /srv/anyone\ncache_dir = /srv/anyone\n",
                "remote_storage = http://evil/\nsecondary_storage = file:/srv/anyone\n",
                "run_second_cpp = false\nhard_link = true\nsafe_dirs = *\nlibexec_dirs = /srv/anyone\n",
                "prefix_command =\n  /srv/anyone/evil.sh\n",               /* 4.13 multi-line value */
                "# harmless\nprefix_command = \\\n/srv/anyone/evil.sh\n",
                "prefix_command = /srv/anyone/evil.sh\x00tail\n",
        };

        for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
                CcacheConfPolicy everything = managed;
                static const char *const allow[] = { "prefix_command", "compiler", "path", "hard_link", "base_dir", NULL };
                size_t len = strlen(planted[i]);
                char *out;

                if (i == sizeof(planted) / sizeof(planted[0]) - 1)
                        len += strlen(planted[i] + len + 1) + 1;   /* the one with a NUL inside */
                everything.allow = allow;   /* even allowed (config.c refuses it), never kept */
                drops[0] = '\0';
                out = ccache_conf_update(planted[i], len, &everything, on_drop, NULL, NULL, 0);
                assert_non_null(out);
                if (strstr(out, "evil") || strstr(out, "/srv/anyone") || strstr(out, "/etc") || strstr(out, "http") ||
                    (strcmp(out, "max_size = 120G\numask = 000\n") != 0 && strncmp(out, "# harmless\n", 11) != 0))
                        fail_msg("case %zu kept \"%s\" of \"%s\"", i, out, planted[i]);
                if (!drops[0])
                        fail_msg("case %zu: nothing reported dropped", i);
                assert_flat(out);
                free(out);
        }
        /* the report names each key */
        free(update("prefix_command = /x\nlog_file = /y\nsloppiness = time_macros\n", &managed, NULL, 0));
        assert_string_equal(drops, "prefix_command log_file ");
}

/* A line hidden behind another by indentation stays inside it. */
static void test_continuation(void **state) {
        char *out;

        out = update("namespace = a\n  prefix_command = /x\n", &managed, NULL, 0);
        assert_string_equal(out, "max_size = 120G\numask = 000\n");
        assert_string_equal(drops, "namespace ");
        free(out);
        out = update("namespace = a\n  b\n", &managed, NULL, 0);
        assert_string_equal(out, "namespace = a b\nmax_size = 120G\numask = 000\n");
        free(out);
        /* sloppiness takes no '=' or '/': the joined value is refused whole */
        out = update("sloppiness = time_macros\n  prefix_command = /x\nmax_files = 3\n", &managed, NULL, 0);
        assert_string_equal(out, "max_files = 3\nmax_size = 120G\numask = 000\n");
        assert_string_equal(drops, "sloppiness ");
        free(out);
        /* a multi-line value, with an indented comment and a blank line inside */
        out = update("sloppiness =\n  time_macros\n  # why\n\n  locale\n# end\nhash_dir = false\n", &managed, NULL, 0);
        assert_string_equal(out, "sloppiness = time_macros locale\n\n# end\nhash_dir = false\n"
                                 "max_size = 120G\numask = 000\n");
        free(out);
}

/* A value ccache refuses fails every compile: such a line goes too. */
static void test_bad_values(void **state) {
        static const char *const bad[] = {
                "max_files = banana\n", "max_files = -1\n", "max_files = 123456789012345678901\n",
                "compression_level = 200\n", "compression_level = -129\n", "compression_level = 1.5\n",
                "compression = yes\n", "hash_dir = 1\n", "namespace = $HOME\n", "namespace = a=b\n", "sloppiness = $X\n",
                "just some words\n", "= 5\n", "sloppiness = time_macros\x01\n",
        };
        static const char *const good[] = {
                "max_files = 0\n", "compression_level = -128\n", "compression_level = 19\n", "compression = false\n",
                "hash_dir = true\n", "namespace = team-a b\n", "sloppiness = time_macros, include_file_mtime\n",
                "sloppiness = a_future_one\n",
        };
        static const CcacheConfPolicy unmanaged = { .trusted = true };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *out = update(bad[i], &unmanaged, NULL, 0);
                if (out[0] != '\0' || !drops[0])
                        fail_msg("kept \"%s\" as \"%s\"", bad[i], out);
                free(out);
        }
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                char *out = update(good[i], &unmanaged, NULL, 0);
                if (strcmp(out, good[i]) != 0 || drops[0])
                        fail_msg("\"%s\" became \"%s\"", good[i], out);
                free(out);
        }
}

/* Unmanaged (ccache_conf = false): the admin's own umask and max_size stay,
 * if ccache takes them; nothing is added. */
static void test_unmanaged(void **state) {
        static const CcacheConfPolicy unmanaged = { .trusted = true };
        char *out;

        out = update("max_size = 7G\numask = 002\nprefix_command = /x\n", &unmanaged, NULL, 0);
        assert_string_equal(out, "max_size = 7G\numask = 002\n");
        free(out);
        out = update("max_size = 7 G\nmax_size = 1.5TiB\nmax_size = 7g\numask = 0999\n", &unmanaged, NULL, 0);
        assert_string_equal(out, "max_size = 7 G\nmax_size = 1.5TiB\n");
        assert_string_equal(drops, "max_size umask ");
        free(out);
        out = update(NULL, &unmanaged, NULL, 0);
        assert_string_equal(out, "");
        free(out);
}

/* base_dir stays where root wrote it, allowed or not (the fix cachectl
 * measure --explain gives); never from another's file, never relative. */
static void test_base_dir_root(void **state) {
        CcacheConfPolicy p = managed;
        char *out;

        out = update("base_dir = /srv/build\n", &p, NULL, 0);
        assert_string_equal(out, "base_dir = /srv/build\nmax_size = 120G\numask = 000\n");
        assert_string_equal(drops, "");
        free(out);
        out = update("base_dir = src\n", &p, NULL, 0);
        assert_string_equal(out, "max_size = 120G\numask = 000\n");
        assert_string_equal(drops, "base_dir ");
        free(out);
        p.trusted = false;
        out = update("base_dir = /srv/build\n", &p, NULL, 0);
        assert_string_equal(out, "max_size = 120G\numask = 000\n");
        assert_string_equal(drops, "base_dir ");
        free(out);
}

/* The admin's extra keys count only in a file the daemon's user wrote. */
static void test_allow(void **state) {
        static const char *const allow[] = { "base_dir", "stats", NULL };
        CcacheConfPolicy p = managed;
        char *out;

        p.allow = allow;
        out = update("base_dir = $HOME/src\nstats = false\ndisable = true\n", &p, NULL, 0);
        assert_string_equal(out, "base_dir = $HOME/src\nstats = false\nmax_size = 120G\numask = 000\n");
        assert_string_equal(drops, "disable ");
        free(out);
        p.trusted = false;
        out = update("base_dir = /src\nsloppiness = locale\n", &p, NULL, 0);
        assert_string_equal(out, "sloppiness = locale\nmax_size = 120G\numask = 000\n");
        assert_string_equal(drops, "base_dir ");
        free(out);
}

static void test_classes(void **state) {
        static const char *const never[] = {
                "prefix_command", "prefix_command_cpp", "compiler", "compiler_check", "log_file", "stats_log",
                "debug_dir", "temporary_dir", "cache_dir", "remote_storage", "secondary_storage", "run_second_cpp",
                "path", "hard_link", "libexec_dirs", "safe_dirs", "debug",
        };
        static const char *const safe[] = {
                "max_files", "compression", "compression_level", "sloppiness", "hash_dir", "namespace",
        };

        for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
                if (ccache_conf_class(never[i]) != CCACHE_CONF_NEVER)
                        fail_msg("%s is not NEVER", never[i]);
        for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
                if (ccache_conf_class(safe[i]) != CCACHE_CONF_SAFE)
                        fail_msg("%s is not SAFE", safe[i]);
        assert_int_equal(ccache_conf_class("umask"), CCACHE_CONF_OURS);
        assert_int_equal(ccache_conf_class("max_size"), CCACHE_CONF_OURS);
        assert_int_equal(ccache_conf_class("base_dir"), CCACHE_CONF_ROOT);
        assert_int_equal(ccache_conf_class("file_clone"), CCACHE_CONF_ALLOWABLE);
        assert_int_equal(ccache_conf_class("Prefix_command"), CCACHE_CONF_UNKNOWN);
        assert_int_equal(ccache_conf_class(""), CCACHE_CONF_UNKNOWN);
        assert_int_equal(ccache_conf_class("zzz"), CCACHE_CONF_UNKNOWN);
        assert_int_equal(ccache_conf_class("absolute_paths_in_stderr"), CCACHE_CONF_ALLOWABLE);   /* first */
        assert_non_null(strstr(ccache_conf_why("prefix_command"), "command"));
}

/* Random files from hostile fragments: whatever the mix, the output has no
 * indented line, ends every line, is its own rewrite, and no line of it
 * sets a key that is never kept, however ccache splits it. */
static void test_random_files(void **state) {
        static const char *const frag[] = {
                "prefix_command", "compiler", "namespace", "sloppiness", "max_size", "umask", "base_dir",
                "log_file", "hard_link", " ", "\t", "=", " = ", "\n", "\r\n", "#", "/x", "$HOME", "true",
                "5G", "time_macros", ",", "\n  ", "\n\t", "\n#", "\n\n", "\x01", "\xff", "a",
        };
        static const char *const allow[] = { "base_dir", NULL };
        CcacheConfPolicy p = managed;
        unsigned seed = 42;

        p.allow = allow;
        for (int round = 0; round < 5000; round++) {
                char in[256] = "";
                int n = 1 + (int) (rand_r(&seed) % 24);
                char *out;

                for (int i = 0; i < n; i++)
                        strncat(in, frag[rand_r(&seed) % (sizeof(frag) / sizeof(frag[0]))], sizeof(in) - strlen(in) - 1);
                p.trusted = rand_r(&seed) % 2;
                out = update(in, &p, NULL, 0);
                assert_flat(out);
                assert_fixpoint(out, &p);
                for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
                        char key[64];
                        size_t k = strcspn(l, "=\n");

                        if (l[k] != '=' || *l == '#')
                                continue;
                        snprintf(key, sizeof(key), "%.*s", (int) k, l);
                        key[strcspn(key, " \t")] = '\0';
                        if (ccache_conf_class(key) == CCACHE_CONF_NEVER || ccache_conf_class(key) == CCACHE_CONF_UNKNOWN ||
                            (!p.trusted && ccache_conf_class(key) == CCACHE_CONF_ALLOWABLE))
                                fail_msg("round %d: \"%s\" kept from \"%s\"", round, key, in);
                }
                free(out);
        }
}

static void test_format_size(void **state) {
        char buf[32];

        assert_string_equal(ccache_format_size(120000000000ULL, buf, sizeof(buf)), "120G");
        assert_string_equal(ccache_format_size(48000000000ULL, buf, sizeof(buf)), "48G");
        assert_string_equal(ccache_format_size(1200000000ULL, buf, sizeof(buf)), "1200M");
        assert_string_equal(ccache_format_size(1500000000000ULL, buf, sizeof(buf)), "1500G");
        assert_string_equal(ccache_format_size(2000000000000ULL, buf, sizeof(buf)), "2T");
        assert_string_equal(ccache_format_size(128849018880ULL, buf, sizeof(buf)), "128849019k");  /* 120Gi */
        assert_string_equal(ccache_format_size(1000, buf, sizeof(buf)), "1k");
        assert_string_equal(ccache_format_size(UINT64_MAX, buf, sizeof(buf)), "18446744073709552k");
}

/* 20 x the cap (ccache 4.7's threshold for one level-1 directory,
 * max_size/16, at 1.25 x the cap), and for caps near 2^64 the largest size
 * every ccache parses: never 0, which ccache reads as "no limit". */
static void test_max_size_saturates(void **state) {
        char buf[32];

        assert_string_equal(ccache_conf_max_size(100000000000ULL, buf, sizeof(buf)), "2T");
        assert_string_equal(ccache_conf_max_size(40000000000ULL, buf, sizeof(buf)), "800G");
        assert_string_equal(ccache_conf_max_size(2000000ULL, buf, sizeof(buf)), "40M");
        assert_string_equal(ccache_conf_max_size(1073741824ULL, buf, sizeof(buf)), "21474837k");  /* 1Gi */
        assert_string_equal(ccache_conf_max_size(1, buf, sizeof(buf)), "1k");
        assert_string_equal(ccache_conf_max_size(800000000000000000ULL, buf, sizeof(buf)), "16000000T");
        assert_string_equal(ccache_conf_max_size(900000000000000000ULL, buf, sizeof(buf)), "18000000T");
        assert_string_equal(ccache_conf_max_size(900000000000000001ULL, buf, sizeof(buf)), "18000000T");
        assert_string_equal(ccache_conf_max_size(10000000000000000000ULL, buf, sizeof(buf)), "18000000T");
        assert_string_equal(ccache_conf_max_size(UINT64_MAX, buf, sizeof(buf)), "18000000T");
        assert_string_equal(ccache_conf_max_size(UINT64_MAX / 6 * 5, buf, sizeof(buf)), "18000000T");
}

/* The settings someone may change, and the change in words (the silent-miss
 * alarm names it). */
static void test_settings_and_change(void **state) {
        const char *a = "# kept by cachekeeperd\nmax_size = 1200M\numask = 000\ncompression = true\n\nhash_dir = false\n";
        const char *b = "max_size = 5G\numask = 000\ncompression = true\nhash_dir = false\nnamespace = x\n";
        char sa[256], sb[256], change[128], tiny[24];

        assert_string_equal(ccache_conf_settings(a, sa, sizeof(sa)), "compression = true\nhash_dir = false\n");
        assert_string_equal(ccache_conf_settings(b, sb, sizeof(sb)),
                            "compression = true\nhash_dir = false\nnamespace = x\n");
        /* max_size and umask are the daemon's: no change. */
        assert_string_equal(ccache_conf_change(sa, sa, change, sizeof(change)), "");
        assert_string_equal(ccache_conf_change(sa, sb, change, sizeof(change)), "namespace: (unset) -> \"x\"");
        assert_string_equal(ccache_conf_change(sb, sa, change, sizeof(change)), "namespace: \"x\" -> (unset)");
        ccache_conf_settings("namespace = y\ncompression = false\nhash_dir = false\n", sa, sizeof(sa));
        assert_string_equal(ccache_conf_change(sb, sa, change, sizeof(change)),
                            "namespace: \"x\" -> \"y\", and 1 more");
        /* Whole lines only, when the buffer is short. */
        assert_string_equal(ccache_conf_settings(b, tiny, sizeof(tiny)), "compression = true\n");
        assert_string_equal(ccache_conf_settings(NULL, tiny, sizeof(tiny)), "");
}

static void test_get(void **state) {
        const char *text = "# umask = 077\n  umask = 011\nmax_size =  5G \numask=022\numask = 000\n";
        char buf[16] = "x";

        assert_true(ccache_conf_get(text, strlen(text), "umask", buf, sizeof(buf)));
        assert_string_equal(buf, "022");   /* the first that is a setting: not the comment, not the continuation */
        assert_true(ccache_conf_get(text, strlen(text), "max_size", buf, sizeof(buf)));
        assert_string_equal(buf, "5G");
        assert_false(ccache_conf_get(text, strlen(text), "max", buf, sizeof(buf)));
        assert_false(ccache_conf_get(NULL, 0, "umask", buf, sizeof(buf)));
        /* cut to the buffer, and len is honoured */
        assert_true(ccache_conf_get("namespace = abcdefgh", 20, "namespace", buf, 4));
        assert_string_equal(buf, "abc");
        assert_false(ccache_conf_get("umask = 022", 3, "umask", buf, sizeof(buf)));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_umask_and_max_size),
                cmocka_unit_test(test_code_never_survives),
                cmocka_unit_test(test_continuation),
                cmocka_unit_test(test_bad_values),
                cmocka_unit_test(test_unmanaged),
                cmocka_unit_test(test_allow),
                cmocka_unit_test(test_base_dir_root),
                cmocka_unit_test(test_classes),
                cmocka_unit_test(test_random_files),
                cmocka_unit_test(test_format_size),
                cmocka_unit_test(test_max_size_saturates),
                cmocka_unit_test(test_settings_and_change),
                cmocka_unit_test(test_get),
        };
        return cmocka_run_group_tests_name("ccache-conf", tests, NULL, NULL);
}
