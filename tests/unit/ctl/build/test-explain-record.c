/* SPDX-License-Identifier: MIT */
/* ctl/build/explain-record.c: one ccache call read from its debug record, with
 * every path turned into one identity. The records are written here as
 * ccache 4.7.5 writes them: the lines and sections of a real call, cut to
 * what is read. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "build/explain-internal.h"

static char dir[128];   /* short: every path below it fits its buffer */

/* Writes text into dir/rel, making its directories. */
static void put(const char *rel, const char *text) {
        char path[PATH_MAX + 64], cmd[PATH_MAX + 128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
        assert_int_equal(system(cmd), 0);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int setup(void **state) {
        char real[PATH_MAX];

        snprintf(dir, sizeof(dir), "/tmp/test-explain-record.XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_non_null(realpath(dir, real));
        assert_true(strlen(real) < sizeof(dir));
        memcpy(dir, real, strlen(real) + 1);
        return 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 32];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        return 0;
}

static bool has_file(const Call *c, const char *path) {
        for (size_t i = 0; i < c->n_files; i++)
                if (strcmp(c->files[i].path, path) == 0)
                        return c->files[i].digest != 0;
        return false;
}

/* "." and ".." and "//" resolved; relative against the directory; a path
 * that exists through a symlink by its real path. */
static void test_normalise(void **state) {
        char buf[PATH_MAX], want[PATH_MAX + 64], link[PATH_MAX + 64];

        assert_string_equal(normalise_path(NULL, "/no/such//a/./b/../c", buf, sizeof(buf)), "/no/such/a/c");
        assert_string_equal(normalise_path("/no/such/b1", "../proj/src/a.c", buf, sizeof(buf)),
                            "/no/such/proj/src/a.c");
        assert_string_equal(normalise_path("/x", "/../../y", buf, sizeof(buf)), "/y");
        put("proj/inc/v.h", "#define V 1\n");
        snprintf(link, sizeof(link), "%s/link", dir);
        snprintf(want, sizeof(want), "%s/proj", dir);
        assert_int_equal(symlink(want, link), 0);
        snprintf(want, sizeof(want), "%s/proj/inc/v.h", dir);
        assert_string_equal(normalise_path(link, "inc/../inc/v.h", buf, sizeof(buf)), want);
}

/* A miss in a CMake Makefiles sub-directory with base_dir: relative paths,
 * depend mode configured but disabled, the keys it missed, the settings
 * that enter the key, items by section, the files of its text. */
static void test_call_read(void **state) {
        char log[PATH_MAX + 64], text[8192], logtext[8192], want[PATH_MAX + 64];
        Digests d;
        Call c;

        digests_init(&d);
        put("proj/src/a.c", "#include \"v.h\"\nint a(void) { return V; }\n");
        put("proj/inc/v.h", "#define V 1\n");
        put("b/CMakeCache.txt", "# a build directory\n");
        put("b/sub/Makefile", "# where the call ran\n");
        snprintf(logtext, sizeof(logtext),
                 "[2026-12-03T15:22:28.650063 5136 ] === CCACHE 4.7.5 STARTED ======\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (environment) base_dir = %s\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (environment) cache_dir = %s/cache/../cache\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (environment) depend_mode = true\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (default) hash_dir = true\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (default) max_size = 5.0G\n"
                 "[2026-12-03T15:22:28.650127 5136 ] Config: (default) sloppiness = \n"
                 "[2026-12-03T15:22:28.650775 5136 ] Command line: ./tools/ccache gcc -I../../proj/inc -c ../../proj/src/a.c -o CMakeFiles/p.dir/a.c.o\n"
                 "[2026-12-03T15:22:28.650795 5136 ] Working directory: %s/b/sub\n"
                 "[2026-12-03T15:22:28.650904 5136 ] Source file: ../../proj/src/a.c\n"
                 "[2026-12-03T15:22:28.650906 5136 ] Object file: CMakeFiles/p.dir/a.c.o\n"
                 "[2026-12-03T15:22:28.650906 5136 ] Disabling depend mode\n"
                 "[2026-12-03T15:22:28.651374 5136 ] Manifest key: db03p469mnfl2pbfv4gp6sqiuo5bmcab4\n"
                 "[2026-12-03T15:22:28.651386 5136 ] No db03p469mnfl2pbfv4gp6sqiuo5bmcab4 in local storage\n"
                 "[2026-12-03T15:22:28.700360 5136 ] Result key: 04622a368ai33eson42pasknr96cf43di\n"
                 "[2026-12-03T15:22:28.700384 5136 ] No 04622a368ai33eson42pasknr96cf43di in local storage\n"
                 "[2026-12-03T15:22:28.751767 5136 ] Stored 04622a368ai33eson42pasknr96cf43di in local storage (%s/cache/0/4/622a368ai33eson42pasknr96cf43diR)\n"
                 "[2026-12-03T15:22:28.752120 5136 ] Result: cache_miss\n"
                 "[2026-12-03T15:22:28.752122 5136 ] Result: direct_cache_miss\n",
                 dir, dir, dir, dir);
        put("dbg/b/sub/CMakeFiles/p.dir/a.c.o.20261203_152228_649884.ccache-log", logtext);
        snprintf(text, sizeof(text),
                 "=== COMMON ===\n4\n### ext\ni\n### cc_mtime\n1301496\n1744025177000000000\n### cc_name\ngcc\n"
                 "### LANG\nC.UTF-8\n"
                 "=== DIRECT MODE ===\n### manifest version\n1\n### arg\n-I../../proj/inc\n"
                 "### inputfile\n../../proj/src/a.c\n### sourcecode hash\n862adm4dfnjfh9fs8276bsaa57d62n0ci\n"
                 "=== PREPROCESSOR MODE ===\n### cpp\n# 0 \"\n../../proj/src/a.c\n\"\n# 1 \"\n%s/b/sub\n\"\n"
                 "# 0 \"\n<built-in>\n\"\n# 1 \"\n../../proj/inc/../inc/v.h\n\" 1\n# 2 \"\n../../proj/src/a.c\n\" 2\n"
                 "int a(void){return 1;}\n### cppstderr\nwarning: in %s\n",
                 dir, dir);
        put("dbg/b/sub/CMakeFiles/p.dir/a.c.o.20261203_152228_649884.ccache-input-text", text);
        snprintf(log, sizeof(log), "%s/dbg/b/sub/CMakeFiles/p.dir/a.c.o.20261203_152228_649884.ccache-log", dir);
        assert_int_equal(call_read(log, &d, &c), 0);

        assert_string_equal(c.version, "4.7.5");
        {
                struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 3, .tm_hour = 15, .tm_min = 22,
                                 .tm_sec = 28, .tm_isdst = -1 };

                assert_int_equal(c.started, (int64_t) mktime(&tm));   /* its log's first line, local time */
        }
        assert_true(c.miss);
        assert_true(c.stored);
        assert_false(c.depend);                  /* configured, but disabled for this call */
        snprintf(want, sizeof(want), "%s/cache", dir);
        assert_string_equal(c.cache_dir, want);  /* normalised */
        snprintf(want, sizeof(want), "%s/b/sub/tools/ccache", dir);
        assert_string_equal(c.ccache, want);     /* "./tools/ccache", from where it ran */
        snprintf(want, sizeof(want), "%s/proj/src/a.c", dir);
        assert_string_equal(c.source_path, want);
        snprintf(want, sizeof(want), "%s/b", dir);
        assert_string_equal(c.build_root, want);  /* the directory of CMakeCache.txt, above where it ran */
        assert_string_equal(c.object_rel, "sub/CMakeFiles/p.dir/a.c.o");
        /* the settings that enter a key, and none other */
        assert_string_equal(call_setting(&c, "hash_dir"), "true");
        assert_string_equal(call_setting(&c, "sloppiness"), "");
        assert_null(call_setting(&c, "max_size"));
        /* both keys it did not find */
        assert_int_equal(c.n_missing, 2);
        assert_string_equal(c.missing[0], "db03p469mnfl2pbfv4gp6sqiuo5bmcab4");
        assert_string_equal(c.missing[1], "04622a368ai33eson42pasknr96cf43di");
        /* items by section; the preprocessor's warnings are none */
        assert_int_equal(c.n_items, 8);
        assert_string_equal(c.items[1], "COMMON/cc_mtime=1301496 1744025177000000000");
        assert_string_equal(c.items[5], "DIRECT MODE/arg=-I../../proj/inc");
        for (size_t i = 0; i < c.n_items; i++)
                assert_null(strstr(c.items[i], "cppstderr"));
        /* the files of the text, each once by its real path; not <built-in>, not the working directory */
        assert_int_equal(c.n_files, 2);
        snprintf(want, sizeof(want), "%s/proj/src/a.c", dir);
        assert_true(has_file(&c, want));
        snprintf(want, sizeof(want), "%s/proj/inc/v.h", dir);
        assert_true(has_file(&c, want));
        call_done(&c);
        digests_done(&d);
}

/* Depend mode, a dependency file as gcc writes it: escaped spaces, "$$",
 * continuations, the target not a file read; a device named in it is no
 * file read either. */
static void test_depfile(void **state) {
        char log[PATH_MAX + 64], logtext[4096], dep[4096], want[PATH_MAX + 64];
        Digests d;
        Call c;

        digests_init(&d);
        put("d/src/a b.c", "int a;\n");
        put("d/src/x$y.h", "int x;\n");
        put("d/src/v.h", "int v;\n");
        snprintf(logtext, sizeof(logtext),
                 "[t 1 ] Config: (environment) depend_mode = true\n"
                 "[t 1 ] Working directory: %s/d\n"
                 "[t 1 ] Source file: src/a b.c\n"
                 "[t 1 ] Dependency file: a.d\n"
                 "[t 1 ] Object file: a.o\n"
                 "[t 1 ] Result: cache_miss\n",
                 dir);
        put("dbg2/a.o.20261203_152228_649884.ccache-log", logtext);
        snprintf(dep, sizeof(dep), "a.o: src/a\\ b.c src/x$$y.h \\\n  %s/d/src/../src/v.h /dev/null\n", dir);
        put("d/a.d", dep);
        snprintf(log, sizeof(log), "%s/dbg2/a.o.20261203_152228_649884.ccache-log", dir);
        assert_int_equal(call_read(log, &d, &c), 0);
        assert_true(c.depend);
        assert_true(c.has_files);
        assert_int_equal(c.n_files, 4);
        snprintf(want, sizeof(want), "%s/d/src/a b.c", dir);
        assert_true(has_file(&c, want));
        snprintf(want, sizeof(want), "%s/d/src/x$y.h", dir);
        assert_true(has_file(&c, want));
        snprintf(want, sizeof(want), "%s/d/src/v.h", dir);
        assert_true(has_file(&c, want));
        assert_false(has_file(&c, "/dev/null"));   /* listed, but never read: no digest */
        call_done(&c);
        digests_done(&d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_normalise),
                cmocka_unit_test(test_call_read),
                cmocka_unit_test(test_depfile),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
