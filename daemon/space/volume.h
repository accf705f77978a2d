/* SPDX-License-Identifier: MIT */
/* One filesystem holding caches: where it is mounted and how full it is.
 * Non-logging. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"
#include "os/mounts.h"

typedef enum VolumeLevel {
        VOLUME_OK,
        VOLUME_WARNING,
        VOLUME_CRITICAL,
        _VOLUME_LEVEL_MAX,
} VolumeLevel;

const char *volume_level_name(VolumeLevel l);

/* The level for avail (of total) coming from level current: worse as soon as
 * avail drops below a threshold, better only once avail is back above it by
 * the margin, so a volume hovering at a threshold does not flap. */
VolumeLevel volume_level_next(VolumeLevel current, uint64_t avail, uint64_t warn, uint64_t crit, uint64_t margin);

/* Fill trend: avail sampled over time, estimated by least squares over the
 * samples of the last window (node_exporter's predict_linear). */
#define VOLUME_TREND_SAMPLES 256

typedef struct VolumeTrend {
        usec_t window_usec;
        struct {
                usec_t at;
                uint64_t avail;
        } samples[VOLUME_TREND_SAMPLES];
        size_t first, n;
} VolumeTrend;

/* Adds a sample at monotonic time at. Kept samples are at least window/256
 * apart (the newest slides until it is), so the ring spans the window. */
void volume_trend_add(VolumeTrend *t, usec_t at, uint64_t avail);
void volume_trend_reset(VolumeTrend *t, usec_t window_usec);

/* Time until avail reaches 0 at the current rate, from the last sample:
 * > 0 while shrinking, 0 when not shrinking or not known yet (fewer than
 * 3 samples, or less than a tenth of the window seen) or when the estimate
 * reaches further than ten windows (noise, not a forecast). */
usec_t volume_trend_full_in(const VolumeTrend *t);

/* One watched filesystem: its figures, level, trend and pressure episode. */
typedef struct Volume {
        char *mount;
        dev_t dev;
        VolumeUsage usage;
        usec_t sampled_at;                /* monotonic; 0: never */
        VolumeLevel level, bytes_level, inodes_level;
        VolumeTrend trend;
        usec_t full_in;                   /* 0: not shrinking, or not known yet */
        bool trend_alert;                 /* full within full_within: alerted */
        bool pressure;                    /* below min_free: an eviction episode */
        unsigned pressure_trims;          /* trims of this episode still running */
        bool pressure_empty;              /* said that the caches have nothing left */
        usec_t pressure_retry_at;
        uint64_t pressure_evicted_bytes;  /* this episode */
} Volume;

/* What volume_update saw change. */
enum {
        VOLUME_CHANGED_LEVEL = 1 << 0,
        VOLUME_CHANGED_TREND = 1 << 1,
        VOLUME_CHANGED_PRESSURE = 1 << 2,   /* an episode began or ended */
};

typedef struct VolumeConfig VolumeConfig;

/* Thresholds of vc resolved against the volume's totals. */
typedef struct VolumeLimits {
        uint64_t warn, crit, margin;                      /* bytes */
        uint64_t warn_inodes, crit_inodes, margin_inodes;
        uint64_t min_free;                                /* 0: no pressure eviction */
        usec_t full_within;
} VolumeLimits;
void volume_limits(const VolumeConfig *vc, const VolumeUsage *u, VolumeLimits *ret);

/* Takes sample u at monotonic time now under vc: levels with hysteresis,
 * the trend and its alert state, the pressure episode. Pure. Returns the
 * VOLUME_CHANGED_* bits of what changed. */
unsigned volume_update(Volume *v, const VolumeConfig *vc, const VolumeUsage *u, usec_t now);

/* Bytes to free to end the pressure episode (min_free plus the margin, less
 * what is available); 0 outside one. */
uint64_t volume_pressure_need(const Volume *v, const VolumeConfig *vc);
