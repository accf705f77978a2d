/* SPDX-License-Identifier: MIT */
/* Volumes: sampling on a timer, alerts on transitions, pressure eviction.
 * Decisions are volume.c's (pure); this file does the I/O and the talking. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/human.h"
#include "base/log.h"
#include "base/status-keys.h"
#include "evict/evict.h"
#include "evict/trim.h"
#include "space/space.h"

/* When the caches of a volume under pressure have nothing left to evict,
 * plan again only after this long. */
#define PRESSURE_RETRY_USEC (30 * USEC_PER_SEC)

struct Space {
        sd_event *event;
        Alerter *alerter;
        const Config *config;             /* borrowed */
        Cache **caches;                   /* borrowed */
        size_t n_caches;
        Volume *volumes;
        size_t n_volumes;
        sd_event_source *timer;
};

static const VolumeConfig *vconfig(const Space *s, const Volume *v) {
        return config_volume(s->config, v->mount);
}

/* A cache on v whose figures are whole (available and scanned). */
static bool cache_on(const Cache *c, const Volume *v) {
        return cache_dev(c) == v->dev && cache_ready(c);
}

static const char *cache_path_on(const Space *s, const Volume *v) {
        for (size_t i = 0; i < s->n_caches; i++)
                if (cache_dev(s->caches[i]) == v->dev)
                        return cache_config(s->caches[i])->path;
        return v->mount;
}

static void volume_alert(Space *s, const Volume *v, AlertKind kind, VolumeLevel level, const char *fmt, ...)
        _printf_(5, 6);
static void volume_alert(Space *s, const Volume *v, AlertKind kind, VolumeLevel level, const char *fmt, ...) {
        static const int priorities[_VOLUME_LEVEL_MAX] = {
                [VOLUME_OK] = LOG_NOTICE, [VOLUME_WARNING] = LOG_WARNING, [VOLUME_CRITICAL] = LOG_CRIT,
        };
        char message[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        alert_emit(s->alerter, &(Alert) {
                .kind = kind, .priority = priorities[level], .level = volume_level_name(level), .mount = v->mount,
                .avail_bytes = v->usage.avail_bytes, .total_bytes = v->usage.total_bytes, .message = message,
        });
}

static double percent(uint64_t part, uint64_t whole) {
        return whole ? 100.0 * (double) part / (double) whole : 0;
}

static void report_level(Space *s, Volume *v) {
        const VolumeUsage *u = &v->usage;
        VolumeLimits l;
        char avail[32], total[32], limit[32];
        bool inodes = v->inodes_level > v->bytes_level;

        volume_limits(vconfig(s, v), u, &l);
        format_size(u->avail_bytes, avail, sizeof(avail));
        format_size(u->total_bytes, total, sizeof(total));
        if (v->level == VOLUME_OK)
                volume_alert(s, v, ALERT_VOLUME_LEVEL, VOLUME_OK, "Volume %s is back to ok: %s of %s available (%.1f%%).",
                             v->mount, avail, total, percent(u->avail_bytes, u->total_bytes));
        else if (inodes)
                volume_alert(s, v, ALERT_VOLUME_LEVEL, v->level,
                             "Volume %s is %s: %llu of %llu inodes free (%.1f%%, %s below %llu).", v->mount,
                             volume_level_name(v->level), (unsigned long long) u->avail_inodes,
                             (unsigned long long) u->total_inodes, percent(u->avail_inodes, u->total_inodes),
                             volume_level_name(v->level),
                             (unsigned long long) (v->level == VOLUME_CRITICAL ? l.crit_inodes : l.warn_inodes));
        else
                volume_alert(s, v, ALERT_VOLUME_LEVEL, v->level, "Volume %s is %s: %s of %s available (%.1f%%, %s below %s).",
                             v->mount, volume_level_name(v->level), avail, total,
                             percent(u->avail_bytes, u->total_bytes), volume_level_name(v->level),
                             format_size(v->level == VOLUME_CRITICAL ? l.crit : l.warn, limit, sizeof(limit)));
}

static void report_trend(Space *s, Volume *v) {
        char in[32], within[32];

        format_duration(vconfig(s, v)->full_within_usec, within, sizeof(within));
        if (v->trend_alert)
                volume_alert(s, v, ALERT_VOLUME_TREND, VOLUME_WARNING,
                             "Volume %s is filling up: full in ~%s at the current rate (alerting under %s).", v->mount,
                             format_duration(v->full_in, in, sizeof(in)), within);
        else
                volume_alert(s, v, ALERT_VOLUME_TREND, VOLUME_OK, "Volume %s is no longer on course to fill within %s.",
                             v->mount, within);
}

typedef struct PressureCall {
        Space *space;
        dev_t dev;
} PressureCall;

static Volume *volume_by_dev(Space *s, dev_t dev) {
        for (size_t i = 0; i < s->n_volumes; i++)
                if (s->volumes[i].dev == dev)
                        return &s->volumes[i];
        return NULL;
}

static void on_pressure_trim_done(Cache *c, const TrimResult *r, void *userdata) {
        PressureCall *p = userdata;
        Space *s = p->space;
        Volume *v = volume_by_dev(s, p->dev);

        free(p);
        if (!v)
                return;   /* the volume went away meanwhile */
        v->pressure_evicted_bytes += r->bytes;
        /* Sample again right after the trim (from the loop: this may run
         * while the caches are being replaced). */
        if (v->pressure_trims > 0 && --v->pressure_trims == 0)
                (void) sd_event_source_set_time_relative(s->timer, 0);
}

/* Hands plans[i] to caches[i] (each taken over) for the volume on dev. A
 * cache starting a trim tells its owner, who may sync the space and move
 * its volumes: the volume is looked up again after each, never held. */
static void start_trims(Space *s, dev_t dev, Cache **caches, EvictPlan *plans, size_t n) {
        for (size_t i = 0; i < n; i++) {
                Volume *v = volume_by_dev(s, dev);
                PressureCall *p;
                int r;

                if (!v || plans[i].n == 0 || !(p = calloc(1, sizeof(*p)))) {
                        evict_plan_done(&plans[i]);   /* the volume went meanwhile, or nothing to do */
                        continue;
                }
                *p = (PressureCall) { .space = s, .dev = dev };
                v->pressure_trims++;
                r = cache_trim_plan(caches[i], &plans[i], TRIM_REASON_PRESSURE, on_pressure_trim_done, p);
                if (r < 0) {
                        free(p);
                        if ((v = volume_by_dev(s, dev)))
                                v->pressure_trims--;
                }
        }
}

/* Evicts from v's caches, oldest first across all of them, what min_free
 * needs, at the loop's now (monotonic) and realtime (the age of temporaries). */
static void relieve(Space *s, Volume *v, usec_t now, usec_t realtime) {
        uint64_t need = volume_pressure_need(v, vconfig(s, v)), planned = 0;
        Account *accounts[64];
        Cache *caches[64];
        EvictPlan plans[64];
        size_t n = 0;
        char b1[32], b2[32];

        if (!v->pressure || v->pressure_trims > 0 || need == 0 || now < v->pressure_retry_at)
                return;
        for (size_t i = 0; i < s->n_caches && n < ELEMENTSOF(caches); i++)
                if (cache_on(s->caches[i], v)) {
                        caches[n] = s->caches[i];
                        accounts[n++] = cache_account(s->caches[i]);
                }
        if (evict_plan_multi(accounts, n, need, (int64_t) (realtime / USEC_PER_SEC), plans) < 0) {
                log_error("Volume %s: out of memory planning pressure eviction.", v->mount);
                return;
        }
        for (size_t i = 0; i < n; i++)
                planned += plans[i].bytes;
        if (planned == 0) {
                /* Nothing to evict: look again later, not at every sample. */
                v->pressure_retry_at = now + PRESSURE_RETRY_USEC;
                if (!v->pressure_empty)
                        volume_alert(s, v, ALERT_VOLUME_PRESSURE, v->level == VOLUME_OK ? VOLUME_WARNING : v->level,
                                     "Volume %s is below min_free (%s available) and its caches are already empty: "
                                     "the space is held by something else.", v->mount,
                                     format_size(v->usage.avail_bytes, b1, sizeof(b1)));
                v->pressure_empty = true;
                for (size_t i = 0; i < n; i++)
                        evict_plan_done(&plans[i]);
                return;
        }
        volume_alert(s, v, ALERT_VOLUME_PRESSURE, v->level == VOLUME_OK ? VOLUME_WARNING : v->level,
                     "Volume %s is below min_free (%s available): evicting %s from its caches, oldest first%s.",
                     v->mount, format_size(v->usage.avail_bytes, b1, sizeof(b1)), format_size(planned, b2, sizeof(b2)),
                     planned < need ? "; that is all they hold that may go" : "");
        start_trims(s, v->dev, caches, plans, n);
}

static void sample_one(Space *s, Volume *v, usec_t now, usec_t realtime) {
        VolumeUsage u;
        unsigned changed;
        int r;

        r = volume_usage(-1, cache_path_on(s, v), &u);
        if (r < 0) {
                log_debug_errno(r, "Cannot sample volume %s: %m", v->mount);
                return;
        }
        changed = volume_update(v, vconfig(s, v), &u, now);
        if (changed & VOLUME_CHANGED_LEVEL)
                report_level(s, v);
        if (changed & VOLUME_CHANGED_TREND)
                report_trend(s, v);
        if ((changed & VOLUME_CHANGED_PRESSURE) && !v->pressure) {
                char avail[32], evicted[32];

                volume_alert(s, v, ALERT_VOLUME_PRESSURE, VOLUME_OK,
                             "Volume %s is back above min_free (%s available) after evicting %s.", v->mount,
                             format_size(u.avail_bytes, avail, sizeof(avail)),
                             format_size(v->pressure_evicted_bytes, evicted, sizeof(evicted)));
        }
        relieve(s, v, now, realtime);
}

void space_sample(Space *s) {
        usec_t now = event_now(s->event, CLOCK_MONOTONIC), realtime = event_now(s->event, CLOCK_REALTIME);

        for (size_t i = 0; i < s->n_volumes; i++)
                sample_one(s, &s->volumes[i], now, realtime);
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        Space *s = userdata;

        space_sample(s);
        return sd_event_source_set_time_relative(src, s->config ? s->config->check_interval_usec : USEC_PER_SEC);
}

int space_new(sd_event *e, Alerter *alerter, Space **ret) {
        Space *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->alerter = alerter;
        r = sd_event_add_time_relative(e, &s->timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0, on_timer, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->timer, SD_EVENT_ON);
        if (r < 0) {
                space_free(s);
                return r;
        }
        (void) sd_event_source_set_description(s->timer, "volumes");  /* not a status key */
        *ret = s;
        return 0;
}

Space *space_free(Space *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->timer);
        for (size_t i = 0; i < s->n_volumes; i++)
                free(s->volumes[i].mount);
        free(s->volumes);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

void space_sync(Space *s, const Config *config, Cache **caches, size_t n_caches) {
        bool first = s->config == NULL;

        s->config = config;
        s->caches = caches;
        s->n_caches = n_caches;
        if (first)
                (void) sd_event_source_set_time_relative(s->timer, config->check_interval_usec);
        /* Volumes no available cache is on any more go. */
        for (size_t i = 0; i < s->n_volumes;) {
                bool used = false;
                for (size_t k = 0; k < n_caches; k++)
                        used |= cache_dev(caches[k]) == s->volumes[i].dev;
                if (used) {
                        i++;
                        continue;
                }
                free(s->volumes[i].mount);
                s->volumes[i] = s->volumes[--s->n_volumes];
        }
        for (size_t k = 0; k < n_caches; k++) {
                dev_t dev = cache_dev(caches[k]);
                char mount[PATH_MAX];
                Volume *n;

                if (dev == 0 || volume_by_dev(s, dev) ||
                    volume_mount_of(cache_config(caches[k])->path, mount, sizeof(mount)) < 0)
                        continue;
                n = realloc(s->volumes, (s->n_volumes + 1) * sizeof(Volume));
                if (!n)
                        continue;
                s->volumes = n;
                s->volumes[s->n_volumes] = (Volume) { .dev = dev, .mount = strdup(mount) };
                if (s->volumes[s->n_volumes].mount)
                        s->n_volumes++;
        }
        space_sample(s);
}

size_t space_volumes(const Space *s) {
        return s->n_volumes;
}

const Volume *space_volume(const Space *s, size_t i) {
        return &s->volumes[i];
}

json_object *space_status_json(Space *s) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < s->n_volumes; i++) {
                const Volume *v = &s->volumes[i];
                json_object *o = json_object_new_object(), *caches = json_object_new_array();
                VolumeLimits l;

                volume_limits(vconfig(s, v), &v->usage, &l);
                json_object_object_add(o, STATUS_VOLUME_MOUNT, json_object_new_string(v->mount));
                json_object_object_add(o, STATUS_VOLUME_TOTAL_BYTES, json_object_new_uint64(v->usage.total_bytes));
                json_object_object_add(o, STATUS_VOLUME_AVAIL_BYTES, json_object_new_uint64(v->usage.avail_bytes));
                json_object_object_add(o, STATUS_VOLUME_FREE_BYTES, json_object_new_uint64(v->usage.free_bytes));
                json_object_object_add(o, STATUS_VOLUME_TOTAL_INODES, json_object_new_uint64(v->usage.total_inodes));
                json_object_object_add(o, STATUS_VOLUME_AVAIL_INODES, json_object_new_uint64(v->usage.avail_inodes));
                json_object_object_add(o, STATUS_VOLUME_ALERT, json_object_new_string(volume_level_name(v->level)));
                json_object_object_add(o, STATUS_VOLUME_BYTES_LEVEL,
                                       json_object_new_string(volume_level_name(v->bytes_level)));
                json_object_object_add(o, STATUS_VOLUME_INODES_LEVEL,
                                       json_object_new_string(volume_level_name(v->inodes_level)));
                json_object_object_add(o, STATUS_VOLUME_WARN_FREE_BYTES, json_object_new_uint64(l.warn));
                json_object_object_add(o, STATUS_VOLUME_CRIT_FREE_BYTES, json_object_new_uint64(l.crit));
                json_object_object_add(o, STATUS_VOLUME_MIN_FREE_BYTES,
                                       l.min_free ? json_object_new_uint64(l.min_free) : NULL);
                json_object_object_add(o, STATUS_VOLUME_WARN_FREE_INODES, json_object_new_uint64(l.warn_inodes));
                json_object_object_add(o, STATUS_VOLUME_CRIT_FREE_INODES, json_object_new_uint64(l.crit_inodes));
                json_object_object_add(o, STATUS_VOLUME_FULL_WITHIN_SECONDS,
                                       l.full_within ? json_object_new_uint64(l.full_within / USEC_PER_SEC) : NULL);
                json_object_object_add(o, STATUS_VOLUME_FULL_IN_SECONDS,
                                       v->full_in ? json_object_new_uint64(v->full_in / USEC_PER_SEC) : NULL);
                json_object_object_add(o, STATUS_VOLUME_FULL_SOON, json_object_new_boolean(v->trend_alert));
                json_object_object_add(o, STATUS_VOLUME_PRESSURE, json_object_new_boolean(v->pressure));
                json_object_object_add(o, STATUS_VOLUME_PRESSURE_CACHES_EMPTY,
                                       json_object_new_boolean(v->pressure && v->pressure_empty));
                for (size_t k = 0; k < s->n_caches; k++)
                        if (cache_dev(s->caches[k]) == v->dev)
                                json_object_array_add(caches, json_object_new_string(cache_config(s->caches[k])->name));
                json_object_object_add(o, STATUS_VOLUME_CACHES, caches);
                json_object_array_add(list, o);
        }
        return list;
}
