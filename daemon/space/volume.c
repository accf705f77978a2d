/* SPDX-License-Identifier: MIT */
/* The policy of a volume: its levels, fill trend, limits and pressure,
 * from what os/mounts.c samples. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "space/volume.h"

const char *volume_level_name(VolumeLevel l) {
        static const char *const names[_VOLUME_LEVEL_MAX] = {
                [VOLUME_OK] = "ok", [VOLUME_WARNING] = "warning", [VOLUME_CRITICAL] = "critical",
        };
        return (unsigned) l < _VOLUME_LEVEL_MAX ? names[l] : "?";
}

VolumeLevel volume_level_next(VolumeLevel current, uint64_t avail, uint64_t warn, uint64_t crit, uint64_t margin) {
        VolumeLevel raw = avail < crit ? VOLUME_CRITICAL : avail < warn ? VOLUME_WARNING : VOLUME_OK;

        if (raw >= current)
                return raw;
        /* Better: leave each level only with the margin to spare. */
        if (current == VOLUME_CRITICAL && avail < crit + margin)
                return VOLUME_CRITICAL;
        if (avail < warn + margin)
                return VOLUME_WARNING;
        return VOLUME_OK;
}

void volume_trend_reset(VolumeTrend *t, usec_t window_usec) {
        t->window_usec = window_usec;
        t->first = t->n = 0;
}

void volume_trend_add(VolumeTrend *t, usec_t at, uint64_t avail) {
        usec_t spacing = t->window_usec / VOLUME_TREND_SAMPLES;
        size_t last = (t->first + t->n - 1) % VOLUME_TREND_SAMPLES;
        size_t prev = (t->first + t->n - 2) % VOLUME_TREND_SAMPLES;

        /* The newest sample slides forward until it is a spacing away from
         * the one before; then the next one is kept beside it. */
        if (t->n > 1 && at - t->samples[prev].at < spacing) {
                t->samples[last].at = at;
                t->samples[last].avail = avail;
        } else if (t->n < VOLUME_TREND_SAMPLES) {
                last = (t->first + t->n++) % VOLUME_TREND_SAMPLES;
                t->samples[last].at = at;
                t->samples[last].avail = avail;
        } else {
                t->samples[t->first].at = at;
                t->samples[t->first].avail = avail;
                t->first = (t->first + 1) % VOLUME_TREND_SAMPLES;
        }
        /* Forget what fell out of the window. */
        while (t->n > 0 && at - t->samples[t->first].at > t->window_usec) {
                t->first = (t->first + 1) % VOLUME_TREND_SAMPLES;
                t->n--;
        }
}

usec_t volume_trend_full_in(const VolumeTrend *t) {
        double st = 0, sa = 0, stt = 0, sta = 0, slope, full, n = (double) t->n;
        usec_t t0, last_at;
        uint64_t last_avail;

        if (t->n < 3)
                return 0;
        t0 = t->samples[t->first].at;
        last_at = t->samples[(t->first + t->n - 1) % VOLUME_TREND_SAMPLES].at;
        last_avail = t->samples[(t->first + t->n - 1) % VOLUME_TREND_SAMPLES].avail;
        if (last_at - t0 < t->window_usec / 10)
                return 0;
        for (size_t i = 0; i < t->n; i++) {
                size_t k = (t->first + i) % VOLUME_TREND_SAMPLES;
                double x = (double) (t->samples[k].at - t0) / USEC_PER_SEC, y = (double) t->samples[k].avail;
                st += x, sa += y, stt += x * x, sta += x * y;
        }
        if (n * stt - st * st <= 0)
                return 0;
        slope = (n * sta - st * sa) / (n * stt - st * st);   /* bytes per second */
        if (slope >= 0)
                return 0;
        full = (double) last_avail / -slope * USEC_PER_SEC;
        /* Further out than ten windows is noise, not a forecast. */
        return full > 10.0 * (double) t->window_usec ? 0 : (usec_t) full + 1;
}

void volume_limits(const VolumeConfig *vc, const VolumeUsage *u, VolumeLimits *ret) {
        Threshold inode_margin = vc->hysteresis;

        /* A margin given as a size means nothing for inodes: 1 % of them. */
        if (inode_margin.kind != THRESHOLD_PERCENT)
                inode_margin = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = 1 };
        *ret = (VolumeLimits) {
                .warn = threshold_resolve(&vc->warn_free, u->total_bytes),
                .crit = threshold_resolve(&vc->crit_free, u->total_bytes),
                .margin = threshold_resolve(&vc->hysteresis, u->total_bytes),
                .warn_inodes = threshold_resolve(&vc->warn_free_inodes, u->total_inodes),
                .crit_inodes = threshold_resolve(&vc->crit_free_inodes, u->total_inodes),
                .margin_inodes = threshold_resolve(&inode_margin, u->total_inodes),
                .min_free = threshold_resolve(&vc->min_free, u->total_bytes),
                .full_within = vc->full_within_usec,
        };
}

unsigned volume_update(Volume *v, const VolumeConfig *vc, const VolumeUsage *u, usec_t now) {
        VolumeLimits l;
        VolumeLevel level;
        unsigned changed = 0;
        bool trend;

        volume_limits(vc, u, &l);
        if (v->sampled_at == 0 || v->trend.window_usec != (l.full_within ?: 24 * 3600 * USEC_PER_SEC) / 4)
                volume_trend_reset(&v->trend, (l.full_within ?: 24 * 3600 * USEC_PER_SEC) / 4);
        v->usage = *u;
        v->sampled_at = now;
        v->bytes_level = volume_level_next(v->bytes_level, u->avail_bytes, l.warn, l.crit, l.margin);
        /* Filesystems without inode limits (btrfs) report 0 inodes: no level. */
        v->inodes_level = u->total_inodes == 0 ? VOLUME_OK
                                               : volume_level_next(v->inodes_level, u->avail_inodes, l.warn_inodes,
                                                                   l.crit_inodes, l.margin_inodes);
        level = v->bytes_level > v->inodes_level ? v->bytes_level : v->inodes_level;
        if (level != v->level) {
                v->level = level;
                changed |= VOLUME_CHANGED_LEVEL;
        }

        volume_trend_add(&v->trend, now, u->avail_bytes);
        v->full_in = volume_trend_full_in(&v->trend);
        /* Alert when the estimate falls under full_within; recover only with
         * a quarter to spare, or when the volume stops filling. */
        trend = l.full_within > 0 && v->full_in > 0 &&
                (v->trend_alert ? v->full_in < l.full_within + l.full_within / 4 : v->full_in < l.full_within);
        if (trend != v->trend_alert) {
                v->trend_alert = trend;
                changed |= VOLUME_CHANGED_TREND;
        }

        if (!v->pressure && l.min_free > 0 && u->avail_bytes < l.min_free) {
                v->pressure = true;
                v->pressure_empty = false;
                v->pressure_evicted_bytes = 0;
                v->pressure_retry_at = 0;
                changed |= VOLUME_CHANGED_PRESSURE;
        } else if (v->pressure && (l.min_free == 0 || u->avail_bytes >= l.min_free + l.margin)) {
                v->pressure = false;
                changed |= VOLUME_CHANGED_PRESSURE;
        }
        return changed;
}

uint64_t volume_pressure_need(const Volume *v, const VolumeConfig *vc) {
        VolumeLimits l;

        if (!v->pressure)
                return 0;
        volume_limits(vc, &v->usage, &l);
        return l.min_free + l.margin > v->usage.avail_bytes ? l.min_free + l.margin - v->usage.avail_bytes : 0;
}
