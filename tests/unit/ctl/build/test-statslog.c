/* SPDX-License-Identifier: MIT */
/* ccache's statistics log read into one outcome per call: a log as Debian's
 * ccache 4.7.5 wrote it (a miss, a direct hit, a preprocessed hit served by
 * remote storage, two uncacheable calls, two recaches), a torn last call,
 * a missing file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "build/statslog.h"

static const char LOG[] =
        "# a.c\n"
        "cache_miss\n"
        "direct_cache_miss\n"
        "local_storage_miss\n"
        "local_storage_read_miss\n"
        "local_storage_write\n"
        "preprocessed_cache_miss\n"
        "# /src/a.c\n"
        "direct_cache_hit\n"
        "local_storage_hit\n"
        "local_storage_read_hit\n"
        "# b.c\n"
        "direct_cache_miss\n"
        "local_storage_read_miss\n"
        "preprocessed_cache_hit\n"
        "remote_storage_hit\n"
        "remote_storage_read_hit\n"
        "# a.c\n"
        "called_for_preprocessing\n"
        "# \n"
        "no_input_file\n"
        /* CCACHE_RECACHE=1: an entry there, and none (depend mode) */
        "# a.c\n"
        "local_storage_read_hit\n"
        "local_storage_write\n"
        "recache\n"
        "# d.c\n"
        "local_storage_read_miss\n"
        "local_storage_write\n"
        "local_storage_write\n"
        "recache\n";

static void test_outcomes(void **state) {
        StatsSummary s;
        StatsLog l;

        assert_int_equal(statslog_parse(LOG, strlen(LOG), &l), 0);
        assert_int_equal(l.n, 7);
        assert_string_equal(l.calls[0].input, "a.c");
        assert_int_equal(l.calls[0].outcome, STATS_MISS);
        assert_null(l.calls[0].reason);
        assert_string_equal(l.calls[1].input, "/src/a.c");
        assert_int_equal(l.calls[1].outcome, STATS_HIT_DIRECT);
        assert_false(l.calls[1].remote);
        assert_int_equal(l.calls[2].outcome, STATS_HIT_PREPROCESSED);
        assert_true(l.calls[2].remote);
        assert_int_equal(l.calls[3].outcome, STATS_UNCACHEABLE);
        assert_string_equal(l.calls[3].reason, "called_for_preprocessing");
        assert_string_equal(l.calls[4].input, "");
        assert_string_equal(l.calls[4].reason, "no_input_file");
        for (size_t i = 5; i < 7; i++) {
                assert_int_equal(l.calls[i].outcome, STATS_RECACHE);
                assert_null(l.calls[i].reason);
        }
        statslog_summarize(&l, &s);
        assert_int_equal(s.cacheable, 3);
        assert_int_equal(s.hits, 2);
        assert_int_equal(s.direct_hits, 1);
        assert_int_equal(s.preprocessed_hits, 1);
        assert_int_equal(s.remote_hits, 1);
        assert_int_equal(s.misses, 1);
        assert_int_equal(s.uncacheable, 2);
        assert_int_equal(s.recache, 2);   /* neither cacheable calls nor uncacheable ones */
        statslog_done(&l);
}

/* A call whose ids were not all written yet (the build was killed): what
 * it has decides; nothing at all is uncacheable for an unknown reason. */
static void test_torn_and_unknown(void **state) {
        static const char torn[] = "# x.c\ndirect_cache_miss\nlocal_storage_read_miss\n# y.c\ncache_mi";
        StatsLog l;

        assert_int_equal(statslog_parse(torn, strlen(torn), &l), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.calls[0].outcome, STATS_UNCACHEABLE);
        assert_string_equal(l.calls[0].reason, "unknown");
        assert_int_equal(l.calls[1].outcome, STATS_UNCACHEABLE);
        assert_string_equal(l.calls[1].reason, "cache_mi");
        statslog_done(&l);
}

static void test_read(void **state) {
        char path[] = "/tmp/ck-test-statslog-XXXXXX";
        StatsLog l;
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, LOG, strlen(LOG)), (ssize_t) strlen(LOG));
        close(fd);
        assert_int_equal(statslog_read(path, &l), 0);
        assert_int_equal(l.n, 7);
        statslog_done(&l);
        assert_int_equal(unlink(path), 0);
        /* no ccache call wrote one: nothing, not an error */
        assert_int_equal(statslog_read(path, &l), 0);
        assert_int_equal(l.n, 0);
        /* a directory is no log */
        assert_int_equal(statslog_read("/tmp", &l), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_outcomes),
                cmocka_unit_test(test_torn_and_unknown),
                cmocka_unit_test(test_read),
        };
        return cmocka_run_group_tests_name("statslog", tests, NULL, NULL);
}
