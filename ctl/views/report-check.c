/* SPDX-License-Identifier: MIT */
/* cachectl check (views/report.h): the verdict of a status object, its
 * one line and its performance data. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/util.h"
#include "views/report-internal.h"
#include "views/report.h"

/* Problems found, the worst first when printed. */
typedef struct Findings {
        char text[3][1024];     /* per level: "; "-joined */
        ReportLevel worst;
} Findings;

_printf_(3, 4)
static void find(Findings *f, ReportLevel level, const char *fmt, ...) {
        char *t = f->text[level];
        size_t n = strlen(t);
        va_list ap;

        if (n > 0 && n + 2 < sizeof(f->text[level]))
                n += (size_t) snprintf(t + n, sizeof(f->text[level]) - n, "; ");
        va_start(ap, fmt);
        if (n < sizeof(f->text[level]))
                vsnprintf(t + n, sizeof(f->text[level]) - n, fmt, ap);
        va_end(ap);
        if (level > f->worst)
                f->worst = level;
}

/* part of whole, both fields of o, in percent; 0 when whole is. */
static double percent(json_object *o, const char *part, const char *whole) {
        uint64_t w = protocol_field_u64(o, whole);

        return w ? 100.0 * (double) protocol_field_u64(o, part) / (double) w : 0;
}

static void check_volume(Findings *f, json_object *v) {
        const char *alert = protocol_field_str(v, STATUS_VOLUME_ALERT);
        char in[32];

        if (strcmp(alert, "critical") == 0 || strcmp(alert, "warning") == 0) {
                bool inodes = strcmp(protocol_field_str(v, STATUS_VOLUME_INODES_LEVEL), alert) == 0 &&
                              strcmp(protocol_field_str(v, STATUS_VOLUME_BYTES_LEVEL), alert) != 0;
                if (inodes)
                        find(f, alert[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "volume %s %s: %.1f%% of inodes free",
                             protocol_field_str(v, STATUS_VOLUME_MOUNT), alert,
                             percent(v, STATUS_VOLUME_AVAIL_INODES, STATUS_VOLUME_TOTAL_INODES));
                else
                        find(f, alert[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "volume %s %s: %.1f%% free",
                             protocol_field_str(v, STATUS_VOLUME_MOUNT), alert,
                             percent(v, STATUS_VOLUME_AVAIL_BYTES, STATUS_VOLUME_TOTAL_BYTES));
        }
        if (protocol_field_flag(v, STATUS_VOLUME_FULL_SOON))
                find(f, REPORT_WARNING, "volume %s full in ~%s", protocol_field_str(v, STATUS_VOLUME_MOUNT),
                     format_duration(protocol_field_u64(v, STATUS_VOLUME_FULL_IN_SECONDS) * USEC_PER_SEC, in,
                                     sizeof(in)));
        if (protocol_field_flag(v, STATUS_VOLUME_PRESSURE_CACHES_EMPTY))
                find(f, REPORT_WARNING, "volume %s below min_free with its caches empty",
                     protocol_field_str(v, STATUS_VOLUME_MOUNT));
}

static void check_cache(Findings *f, json_object *c) {
        const char *state = protocol_field_str(c, STATUS_CACHE_STATE);
        uint64_t size = protocol_field_u64(c, STATUS_CACHE_SIZE_BYTES);
        uint64_t cap = protocol_field_u64(c, STATUS_CACHE_MAX_SIZE_BYTES);
        char s1[32], s2[32];

        if (strcmp(state, "unavailable") == 0)
                find(f, REPORT_WARNING, "cache %s unavailable: %s", protocol_field_str(c, STATUS_CACHE_NAME),
                     protocol_field_str(c, STATUS_CACHE_REASON));
        else if (strcmp(state, "over_cap") == 0)
                find(f, (double) size > (double) cap * REPORT_OVER_CAP_CRITICAL ? REPORT_CRITICAL : REPORT_WARNING,
                     "cache %s over its cap: %s of %s", protocol_field_str(c, STATUS_CACHE_NAME),
                     format_size(size, s1, sizeof(s1)), format_size(cap, s2, sizeof(s2)));
        if (strcmp(state, "unavailable") != 0 && protocol_field_false(c, STATUS_CACHE_MODE_OK))
                find(f, REPORT_WARNING, "cache %s root mode is not %s", protocol_field_str(c, STATUS_CACHE_NAME),
                     protocol_field_str(c, STATUS_CACHE_MODE));
}

/* Whether the list "alerts" of remote o names kind. */
static bool alert_stands(json_object *o, const char *kind) {
        for (size_t i = 0; i < protocol_field_count(o, STATUS_REMOTE_ALERTS); i++)
                if (strcmp(json_object_get_string(protocol_field_item(o, STATUS_REMOTE_ALERTS, i)) ?: "", kind) == 0)
                        return true;
        return false;
}

/* A file: remote (a share): not kept here (warning: kept elsewhere is no
 * finding), over its cap and not trimmable (critical), a blind clock. */
static void check_share(Findings *f, json_object *r) {
        const char *name = protocol_field_str(r, STATUS_REMOTE_NAME);
        char s1[32], s2[32];

        if (strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "unavailable") == 0 &&
            !protocol_field_get(r, STATUS_SHARE_KEPT_BY))
                find(f, REPORT_WARNING, "remote %s unavailable: %s", name, protocol_field_str(r, STATUS_SHARE_REASON));
        if (strcmp(protocol_field_str(r, STATUS_REMOTE_LEVEL), "critical") == 0)
                find(f, REPORT_CRITICAL, "remote %s over its cap and cannot be trimmed: %s of %s", name,
                     format_size(protocol_field_u64(r, STATUS_SHARE_SIZE_BYTES), s1, sizeof(s1)),
                     format_size(protocol_field_u64(r, STATUS_SHARE_MAX_SIZE_BYTES), s2, sizeof(s2)));
        if (*protocol_field_str(r, STATUS_SHARE_CLOCK_WARNING))
                find(f, REPORT_WARNING, "remote %s: %s", name, protocol_field_str(r, STATUS_SHARE_CLOCK_WARNING));
}

/* A remote: unreachable or refused (its password not sent: critical), a redis that will fill and refuse
 * stores (remote-policy, warning), its memory level under such a policy. */
static void check_remote(Findings *f, json_object *r) {
        const char *name = protocol_field_str(r, STATUS_REMOTE_NAME);
        const char *level = protocol_field_str(r, STATUS_REMOTE_LEVEL);
        char s1[32], s2[32];

        if (strcmp(protocol_field_str(r, STATUS_REMOTE_KIND), "file") == 0) {
                check_share(f, r);
                return;
        }
        if (strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "unreachable") == 0)
                find(f, REPORT_CRITICAL, "remote %s unreachable: %s", name,
                     protocol_field_str(r, STATUS_REMOTE_LAST_ERROR));
        if (strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "refused") == 0)
                find(f, REPORT_CRITICAL, "remote %s refused: %s", name,
                     protocol_field_str(r, STATUS_REMOTE_LAST_ERROR));
        if (alert_stands(r, "remote-policy"))
                find(f, REPORT_WARNING, "remote %s will fill and refuse stores (maxmemory %s, policy %s)", name,
                     format_size(protocol_field_u64(r, STATUS_REDIS_MAXMEMORY_BYTES), s1, sizeof(s1)),
                     json_object_get_string(protocol_field_get(r, STATUS_REDIS_POLICY)) ?: "unknown");
        if (strcmp(level, "warning") == 0 || strcmp(level, "critical") == 0)
                find(f, level[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "remote %s memory %s: %s of %s", name,
                     level, format_size(protocol_field_u64(r, STATUS_REDIS_USED_MEMORY_BYTES), s1, sizeof(s1)),
                     format_size(protocol_field_u64(r, STATUS_REDIS_MAXMEMORY_BYTES), s2, sizeof(s2)));
}

/* A cache whose ccache counts remote storage errors (remote-errors). */
static void check_remote_errors(Findings *f, json_object *c) {
        json_object *e = protocol_field_get(c, STATUS_CACHE_REMOTE_ERRORS);

        if (protocol_field_flag(e, STATUS_REMOTE_ERRORS_ALERT))
                find(f, REPORT_WARNING, "cache %s: %llu remote storage errors in %llus",
                     protocol_field_str(c, STATUS_CACHE_NAME),
                     (unsigned long long) protocol_field_u64(e, STATUS_REMOTE_ERRORS_ERRORS),
                     (unsigned long long) protocol_field_u64(e, STATUS_REMOTE_ERRORS_WINDOW_SECONDS));
}

bool report_cache_is(json_object *c, const char *state) {
        return strcmp(protocol_field_str(c, STATUS_CACHE_STATE), state) == 0;
}

/* Each helper below appends to buf (len bytes, n of them written, n < len
 * or nothing is added) and returns the new n, which may reach len or more
 * when the text was cut. */

/* What is wrong, the critical first, "; " between. */
static size_t put_findings(const Findings *f, char *buf, size_t len, size_t n) {
        bool first = true;

        for (int l = REPORT_CRITICAL; l >= REPORT_WARNING && n < len; l--)
                if (f->text[l][0]) {
                        n += (size_t) snprintf(buf + n, len - n, "%s%s", first ? "" : "; ", f->text[l]);
                        first = false;
                }
        return n;
}

/* All well: the figures, briefly. Each cache's size against its cap, each
 * volume's free share. */
static size_t put_figures(json_object *status, char *buf, size_t len, size_t n) {
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES) && n < len; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                char s1[32], s2[32];
                n += (size_t) snprintf(buf + n, len - n, "%s%s %s/%s", i ? ", " : "",
                                       protocol_field_str(c, STATUS_CACHE_NAME),
                                       format_size(protocol_field_u64(c, STATUS_CACHE_SIZE_BYTES), s1,
                                                   sizeof(s1)),
                                       format_size(protocol_field_u64(c, STATUS_CACHE_MAX_SIZE_BYTES), s2,
                                                   sizeof(s2)));
        }
        for (size_t i = 0; i < protocol_field_count(status, STATUS_VOLUMES) && n < len; i++) {
                json_object *v = protocol_field_item(status, STATUS_VOLUMES, i);
                n += (size_t) snprintf(buf + n, len - n, "%s%s %.1f%% free", i ? ", " : "; ",
                                       protocol_field_str(v, STATUS_VOLUME_MOUNT),
                                       percent(v, STATUS_VOLUME_AVAIL_BYTES, STATUS_VOLUME_TOTAL_BYTES));
        }
        return n;
}

/* Performance data, for the graphs of Nagios-style monitors:
 * 'label'=value[UOM];warn;crit;min;max ("N:" alerts below N). */
static size_t put_perfdata(json_object *status, char *buf, size_t len, size_t n) {
        bool perf = false;

        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES) && n < len; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                uint64_t cap = protocol_field_u64(c, STATUS_CACHE_MAX_SIZE_BYTES);

                char value[32];

                if (report_cache_is(c, "unavailable"))
                        continue;
                /* Still in its first scan: the size so far is no figure ("U": not known yet). */
                if (report_cache_is(c, "scanning"))
                        snprintf(value, sizeof(value), "U");
                else
                        snprintf(value, sizeof(value), "%lluB",
                                 (unsigned long long) protocol_field_u64(c, STATUS_CACHE_SIZE_BYTES));
                n += (size_t) snprintf(buf + n, len - n, "%s'%s'=%s;%llu;%llu;0;", perf ? " " : " | ",
                                       protocol_field_str(c, STATUS_CACHE_NAME), value, (unsigned long long) cap,
                                       (unsigned long long) ((double) cap * REPORT_OVER_CAP_CRITICAL));
                perf = true;
        }
        for (size_t i = 0; i < protocol_field_count(status, STATUS_VOLUMES) && n < len; i++) {
                json_object *v = protocol_field_item(status, STATUS_VOLUMES, i);

                n += (size_t) snprintf(buf + n, len - n, "%s'%s'=%lluB;%llu:;%llu:;0;%llu", perf ? " " : " | ",
                                       protocol_field_str(v, STATUS_VOLUME_MOUNT),
                                       (unsigned long long) protocol_field_u64(v, STATUS_VOLUME_AVAIL_BYTES),
                                       (unsigned long long) protocol_field_u64(v, STATUS_VOLUME_WARN_FREE_BYTES),
                                       (unsigned long long) protocol_field_u64(v, STATUS_VOLUME_CRIT_FREE_BYTES),
                                       (unsigned long long) protocol_field_u64(v, STATUS_VOLUME_TOTAL_BYTES));
                perf = true;
        }
        return n;
}

ReportLevel report_check(json_object *status, char *buf, size_t len) {
        static const char *const names[] = { "OK", "WARNING", "CRITICAL" };
        Findings f = { .worst = REPORT_OK };
        size_t n;

        /* Whatever answered is not a cachekeeperd we understand. */
        if (!json_object_is_type(protocol_field_get(status, STATUS_CACHES), json_type_array)) {
                snprintf(buf, len, "CACHEKEEPER UNKNOWN - the reply is not a status (no list of caches)");
                return REPORT_UNKNOWN;
        }

        for (size_t i = 0; i < protocol_field_count(status, STATUS_VOLUMES); i++)
                check_volume(&f, protocol_field_item(status, STATUS_VOLUMES, i));
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++)
                check_cache(&f, protocol_field_item(status, STATUS_CACHES, i));
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++)
                check_remote_errors(&f, protocol_field_item(status, STATUS_CACHES, i));
        for (size_t i = 0; i < protocol_field_count(status, STATUS_REMOTES); i++)
                check_remote(&f, protocol_field_item(status, STATUS_REMOTES, i));
        n = (size_t) snprintf(buf, len, "CACHEKEEPER %s - ", names[f.worst]);
        n = f.worst != REPORT_OK ? put_findings(&f, buf, len, n) : put_figures(status, buf, len, n);
        put_perfdata(status, buf, len, n);
        return f.worst;
}
