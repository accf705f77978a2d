/* SPDX-License-Identifier: MIT */
/* Volume levels with hysteresis, the fill trend, pressure episodes. Pure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "space/volume.h"

#define MB 1000000ULL

static void test_levels_with_hysteresis(void **state) {
        /* warn below 20, critical below 10, margin 2 */
        static const struct {
                VolumeLevel from;
                uint64_t avail;
                VolumeLevel to;
        } cases[] = {
                { VOLUME_OK, 25, VOLUME_OK },
                { VOLUME_OK, 20, VOLUME_OK },
                { VOLUME_OK, 19, VOLUME_WARNING },          /* worse at once */
                { VOLUME_OK, 9, VOLUME_CRITICAL },          /* straight to critical */
                { VOLUME_WARNING, 20, VOLUME_WARNING },     /* back at the threshold: not enough */
                { VOLUME_WARNING, 21, VOLUME_WARNING },
                { VOLUME_WARNING, 22, VOLUME_OK },          /* threshold + margin */
                { VOLUME_WARNING, 10, VOLUME_WARNING },
                { VOLUME_WARNING, 9, VOLUME_CRITICAL },
                { VOLUME_CRITICAL, 10, VOLUME_CRITICAL },
                { VOLUME_CRITICAL, 11, VOLUME_CRITICAL },
                { VOLUME_CRITICAL, 12, VOLUME_WARNING },
                { VOLUME_CRITICAL, 21, VOLUME_WARNING },
                { VOLUME_CRITICAL, 22, VOLUME_OK },         /* all the way back in one step */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (volume_level_next(cases[i].from, cases[i].avail, 20, 10, 2) != cases[i].to)
                        fail_msg("case %zu: %s at %llu should become %s", i, volume_level_name(cases[i].from),
                                 (unsigned long long) cases[i].avail, volume_level_name(cases[i].to));
}

static void test_oscillation_does_not_flap(void **state) {
        VolumeLevel l = VOLUME_OK;
        unsigned transitions = 0;

        /* ±1 around the warning threshold, ten times: one transition, down */
        for (int i = 0; i < 10; i++)
                for (int d = -1; d <= 1; d += 2) {
                        VolumeLevel n = volume_level_next(l, (uint64_t) (20 + d), 20, 10, 2);
                        transitions += n != l;
                        l = n;
                }
        assert_int_equal(transitions, 1);
        assert_int_equal(l, VOLUME_WARNING);
}

static void test_trend(void **state) {
        VolumeTrend t;
        usec_t full;

        volume_trend_reset(&t, 600 * USEC_PER_SEC);
        /* 1 MB/s down from 100 MB: from the last sample (at 60 s, 40 MB) 40 s */
        for (int s = 0; s <= 60; s++)
                volume_trend_add(&t, (usec_t) s * USEC_PER_SEC + 1, (100 - (uint64_t) s) * MB);
        full = volume_trend_full_in(&t);
        assert_true(full > 39 * USEC_PER_SEC && full < 41 * USEC_PER_SEC);

        /* not filling: nothing to say */
        volume_trend_reset(&t, 600 * USEC_PER_SEC);
        for (int s = 0; s <= 120; s++)
                volume_trend_add(&t, (usec_t) s * USEC_PER_SEC + 1, (50 + (uint64_t) (s % 3)) * MB);
        assert_int_equal(volume_trend_full_in(&t), 0);

        /* too little seen yet: two samples, or less than a tenth of the window */
        volume_trend_reset(&t, 600 * USEC_PER_SEC);
        volume_trend_add(&t, 1, 100 * MB);
        volume_trend_add(&t, USEC_PER_SEC, 90 * MB);
        assert_int_equal(volume_trend_full_in(&t), 0);
        for (int s = 2; s < 50; s++)
                volume_trend_add(&t, (usec_t) s * USEC_PER_SEC, (100 - (uint64_t) s) * MB);
        assert_int_equal(volume_trend_full_in(&t), 0);

        /* old samples leave the window: a fill that stopped is forgotten */
        volume_trend_reset(&t, 10 * USEC_PER_SEC);
        for (int s = 0; s <= 10; s++)
                volume_trend_add(&t, (usec_t) s * USEC_PER_SEC + 1, (100 - 5 * (uint64_t) s) * MB);
        assert_true(volume_trend_full_in(&t) > 0);
        for (int s = 11; s <= 30; s++)
                volume_trend_add(&t, (usec_t) s * USEC_PER_SEC + 1, 50 * MB);
        assert_int_equal(volume_trend_full_in(&t), 0);
        assert_true(t.n <= VOLUME_TREND_SAMPLES);
}

static void test_update_alerts_and_pressure(void **state) {
        VolumeConfig vc = {
                .warn_free = { THRESHOLD_PERCENT, 0, 20 },
                .crit_free = { THRESHOLD_PERCENT, 0, 10 },
                .warn_free_inodes = { THRESHOLD_PERCENT, 0, 10 },
                .crit_free_inodes = { THRESHOLD_PERCENT, 0, 5 },
                .min_free = { THRESHOLD_PERCENT, 0, 15 },
                .hysteresis = { THRESHOLD_PERCENT, 0, 2 },
                .full_within_usec = 3600 * USEC_PER_SEC,
        };
        Volume v = { 0 };
        VolumeUsage u = { .total_bytes = 100 * MB, .avail_bytes = 50 * MB, .total_inodes = 1000, .avail_inodes = 900 };

        assert_int_equal(volume_update(&v, &vc, &u, 1), 0);
        assert_int_equal(v.level, VOLUME_OK);
        u.avail_bytes = 14 * MB;   /* below warn and min_free */
        assert_int_equal(volume_update(&v, &vc, &u, 2), VOLUME_CHANGED_LEVEL | VOLUME_CHANGED_PRESSURE);
        assert_int_equal(v.level, VOLUME_WARNING);
        assert_true(v.pressure);
        assert_int_equal(volume_pressure_need(&v, &vc), 3 * MB);   /* 15 % + 2 % margin - 14 % */
        u.avail_bytes = 16 * MB;   /* above min_free, not by the margin */
        assert_int_equal(volume_update(&v, &vc, &u, 3), 0);
        assert_true(v.pressure);
        u.avail_bytes = 17 * MB;
        assert_int_equal(volume_update(&v, &vc, &u, 4), VOLUME_CHANGED_PRESSURE);
        assert_false(v.pressure);
        assert_int_equal(volume_pressure_need(&v, &vc), 0);
        /* inodes alone make it critical */
        u.avail_bytes = 90 * MB;
        u.avail_inodes = 40;
        assert_int_equal(volume_update(&v, &vc, &u, 5), VOLUME_CHANGED_LEVEL);
        assert_int_equal(v.level, VOLUME_CRITICAL);
        assert_int_equal(v.inodes_level, VOLUME_CRITICAL);
        assert_int_equal(v.bytes_level, VOLUME_OK);
        /* no inode figures at all (btrfs): no inode level */
        u.total_inodes = u.avail_inodes = 0;
        assert_int_equal(volume_update(&v, &vc, &u, 6), VOLUME_CHANGED_LEVEL);
        assert_int_equal(v.level, VOLUME_OK);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_levels_with_hysteresis),
                cmocka_unit_test(test_oscillation_does_not_flap),
                cmocka_unit_test(test_trend),
                cmocka_unit_test(test_update_alerts_and_pressure),
        };
        return cmocka_run_group_tests_name("volume", tests, NULL, NULL);
}
