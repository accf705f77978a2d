/* SPDX-License-Identifier: MIT */
/* cachectl check and cachectl metrics, computed from the status object;
 * cachectl history's table, from a history object. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/util.h"
#include "report.h"

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
        const char *alert = protocol_field_str(v, "alert");
        char in[32];

        if (strcmp(alert, "critical") == 0 || strcmp(alert, "warning") == 0) {
                bool inodes = strcmp(protocol_field_str(v, "inodes_level"), alert) == 0 &&
                              strcmp(protocol_field_str(v, "bytes_level"), alert) != 0;
                if (inodes)
                        find(f, alert[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "volume %s %s: %.1f%% of inodes free",
                             protocol_field_str(v, "mount"), alert,
                             percent(v, "avail_inodes", "total_inodes"));
                else
                        find(f, alert[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "volume %s %s: %.1f%% free",
                             protocol_field_str(v, "mount"), alert, percent(v, "avail_bytes", "total_bytes"));
        }
        if (protocol_field_flag(v, "full_soon"))
                find(f, REPORT_WARNING, "volume %s full in ~%s", protocol_field_str(v, "mount"),
                     format_duration(protocol_field_u64(v, "full_in_seconds") * USEC_PER_SEC, in, sizeof(in)));
        if (protocol_field_flag(v, "pressure_caches_empty"))
                find(f, REPORT_WARNING, "volume %s below min_free with its caches empty",
                     protocol_field_str(v, "mount"));
}

static void check_cache(Findings *f, json_object *c) {
        const char *state = protocol_field_str(c, "state");
        uint64_t size = protocol_field_u64(c, "size_bytes"), cap = protocol_field_u64(c, "max_size_bytes");
        char s1[32], s2[32];

        if (strcmp(state, "unavailable") == 0)
                find(f, REPORT_WARNING, "cache %s unavailable: %s", protocol_field_str(c, "name"),
                     protocol_field_str(c, "reason"));
        else if (strcmp(state, "over_cap") == 0)
                find(f, (double) size > (double) cap * REPORT_OVER_CAP_CRITICAL ? REPORT_CRITICAL : REPORT_WARNING,
                     "cache %s over its cap: %s of %s", protocol_field_str(c, "name"),
                     format_size(size, s1, sizeof(s1)), format_size(cap, s2, sizeof(s2)));
        if (strcmp(state, "unavailable") != 0 && protocol_field_false(c, "mode_ok"))
                find(f, REPORT_WARNING, "cache %s root mode is not %s", protocol_field_str(c, "name"),
                     protocol_field_str(c, "mode"));
}

/* Whether the list "alerts" of o names kind. */
static bool alert_stands(json_object *o, const char *kind) {
        for (size_t i = 0; i < protocol_field_count(o, "alerts"); i++)
                if (strcmp(json_object_get_string(protocol_field_item(o, "alerts", i)) ?: "", kind) == 0)
                        return true;
        return false;
}

/* A file: remote (a share): not kept here (warning: kept elsewhere is no
 * finding), over its cap and not trimmable (critical), a blind clock. */
static void check_share(Findings *f, json_object *r) {
        const char *name = protocol_field_str(r, "name");
        char s1[32], s2[32];

        if (strcmp(protocol_field_str(r, "state"), "unavailable") == 0 && !protocol_field_get(r, "kept_by"))
                find(f, REPORT_WARNING, "remote %s unavailable: %s", name, protocol_field_str(r, "reason"));
        if (strcmp(protocol_field_str(r, "level"), "critical") == 0)
                find(f, REPORT_CRITICAL, "remote %s over its cap and cannot be trimmed: %s of %s", name,
                     format_size(protocol_field_u64(r, "size_bytes"), s1, sizeof(s1)),
                     format_size(protocol_field_u64(r, "max_size_bytes"), s2, sizeof(s2)));
        if (*protocol_field_str(r, "clock_warning"))
                find(f, REPORT_WARNING, "remote %s: %s", name, protocol_field_str(r, "clock_warning"));
}

/* A remote: unreachable or refused (its password not sent: critical), a redis that will fill and refuse
 * stores (remote-policy, warning), its memory level under such a policy. */
static void check_remote(Findings *f, json_object *r) {
        const char *name = protocol_field_str(r, "name"), *level = protocol_field_str(r, "level");
        char s1[32], s2[32];

        if (strcmp(protocol_field_str(r, "kind"), "file") == 0) {
                check_share(f, r);
                return;
        }
        if (strcmp(protocol_field_str(r, "state"), "unreachable") == 0)
                find(f, REPORT_CRITICAL, "remote %s unreachable: %s", name, protocol_field_str(r, "last_error"));
        if (strcmp(protocol_field_str(r, "state"), "refused") == 0)
                find(f, REPORT_CRITICAL, "remote %s refused: %s", name, protocol_field_str(r, "last_error"));
        if (alert_stands(r, "remote-policy"))
                find(f, REPORT_WARNING, "remote %s will fill and refuse stores (maxmemory %s, policy %s)", name,
                     format_size(protocol_field_u64(r, "maxmemory_bytes"), s1, sizeof(s1)),
                     json_object_get_string(protocol_field_get(r, "policy")) ?: "unknown");
        if (strcmp(level, "warning") == 0 || strcmp(level, "critical") == 0)
                find(f, level[0] == 'c' ? REPORT_CRITICAL : REPORT_WARNING, "remote %s memory %s: %s of %s", name,
                     level, format_size(protocol_field_u64(r, "used_memory_bytes"), s1, sizeof(s1)),
                     format_size(protocol_field_u64(r, "maxmemory_bytes"), s2, sizeof(s2)));
}

/* A cache whose ccache counts remote storage errors (remote-errors). */
static void check_remote_errors(Findings *f, json_object *c) {
        json_object *e = protocol_field_get(c, "remote_errors");

        if (protocol_field_flag(e, "alert"))
                find(f, REPORT_WARNING, "cache %s: %llu remote storage errors in %llus", protocol_field_str(c, "name"),
                     (unsigned long long) protocol_field_u64(e, "errors"),
                     (unsigned long long) protocol_field_u64(e, "window_seconds"));
}

ReportLevel report_check(json_object *status, char *buf, size_t len) {
        static const char *const names[] = { "OK", "WARNING", "CRITICAL" };
        Findings f = { .worst = REPORT_OK };
        size_t n;

        /* Whatever answered is not a cachekeeperd we understand. */
        if (!json_object_is_type(protocol_field_get(status, "caches"), json_type_array)) {
                snprintf(buf, len, "CACHEKEEPER UNKNOWN - the reply is not a status (no list of caches)");
                return REPORT_UNKNOWN;
        }

        for (size_t i = 0; i < protocol_field_count(status, "volumes"); i++)
                check_volume(&f, protocol_field_item(status, "volumes", i));
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++)
                check_cache(&f, protocol_field_item(status, "caches", i));
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++)
                check_remote_errors(&f, protocol_field_item(status, "caches", i));
        for (size_t i = 0; i < protocol_field_count(status, "remotes"); i++)
                check_remote(&f, protocol_field_item(status, "remotes", i));
        n = (size_t) snprintf(buf, len, "CACHEKEEPER %s - ", names[f.worst]);
        if (f.worst != REPORT_OK) {
                bool first = true;

                for (int l = REPORT_CRITICAL; l >= REPORT_WARNING && n < len; l--)
                        if (f.text[l][0]) {
                                n += (size_t) snprintf(buf + n, len - n, "%s%s", first ? "" : "; ", f.text[l]);
                                first = false;
                        }
        } else {
                /* All well: the figures, briefly. */
                for (size_t i = 0; i < protocol_field_count(status, "caches") && n < len; i++) {
                        json_object *c = protocol_field_item(status, "caches", i);
                        char s1[32], s2[32];
                        n += (size_t) snprintf(buf + n, len - n, "%s%s %s/%s", i ? ", " : "",
                                               protocol_field_str(c, "name"),
                                               format_size(protocol_field_u64(c, "size_bytes"), s1, sizeof(s1)),
                                               format_size(protocol_field_u64(c, "max_size_bytes"), s2, sizeof(s2)));
                }
                for (size_t i = 0; i < protocol_field_count(status, "volumes") && n < len; i++) {
                        json_object *v = protocol_field_item(status, "volumes", i);
                        n += (size_t) snprintf(buf + n, len - n, "%s%s %.1f%% free", i ? ", " : "; ",
                                               protocol_field_str(v, "mount"), percent(v, "avail_bytes", "total_bytes"));
                }
        }
        /* Performance data, for the graphs of Nagios-style monitors:
         * 'label'=value[UOM];warn;crit;min;max ("N:" alerts below N). */
        bool perf = false;
        for (size_t i = 0; i < protocol_field_count(status, "caches") && n < len; i++) {
                json_object *c = protocol_field_item(status, "caches", i);
                uint64_t cap = protocol_field_u64(c, "max_size_bytes");

                if (strcmp(protocol_field_str(c, "state"), "unavailable") == 0)
                        continue;
                n += (size_t) snprintf(buf + n, len - n, "%s'%s'=%lluB;%llu;%llu;0;", perf ? " " : " | ",
                                       protocol_field_str(c, "name"),
                                       (unsigned long long) protocol_field_u64(c, "size_bytes"),
                                       (unsigned long long) cap,
                                       (unsigned long long) ((double) cap * REPORT_OVER_CAP_CRITICAL));
                perf = true;
        }
        for (size_t i = 0; i < protocol_field_count(status, "volumes") && n < len; i++) {
                json_object *v = protocol_field_item(status, "volumes", i);

                n += (size_t) snprintf(buf + n, len - n, "%s'%s'=%lluB;%llu:;%llu:;0;%llu", perf ? " " : " | ",
                                       protocol_field_str(v, "mount"),
                                       (unsigned long long) protocol_field_u64(v, "avail_bytes"),
                                       (unsigned long long) protocol_field_u64(v, "warn_free_bytes"),
                                       (unsigned long long) protocol_field_u64(v, "crit_free_bytes"),
                                       (unsigned long long) protocol_field_u64(v, "total_bytes"));
                perf = true;
        }
        return f.worst;
}

/* One metric family: HELP, TYPE, then a sample per cache or volume. */
typedef struct Metric {
        const char *name, *type, *help;
        const char *key;           /* status field, or NULL when value() computes it */
        double (*value)(json_object *o);
        bool (*skip)(json_object *o);   /* no sample for this cache or volume */
} Metric;

static bool cache_is(json_object *c, const char *state) {
        return strcmp(protocol_field_str(c, "state"), state) == 0;
}

static double cache_available(json_object *c) {
        return !cache_is(c, "unavailable");
}

static double cache_scanning(json_object *c) {
        return cache_is(c, "scanning");
}

static double cache_trimming(json_object *c) {
        return cache_is(c, "trimming");
}

static double cache_mode_ok(json_object *c) {
        return protocol_field_flag(c, "mode_ok");
}

/* Figures of what the cache holds mean nothing while it is unavailable (the
 * daemon cannot see it) or not yet scanned (they are partial): no sample,
 * not a 0 that a graph or a rate would take for an emptied cache. */
static bool cache_unmeasured(json_object *c) {
        return cache_is(c, "unavailable") || cache_is(c, "scanning");
}

static bool cache_without_entries(json_object *c) {
        return cache_unmeasured(c) || protocol_field_u64(c, "entry_files") == 0;
}

static bool cache_unseen(json_object *c) {
        return cache_is(c, "unavailable");
}

static double volume_level(json_object *v) {
        const char *a = protocol_field_str(v, "alert");
        return strcmp(a, "critical") == 0 ? 2 : strcmp(a, "warning") == 0 ? 1 : 0;
}

static double volume_pressure(json_object *v) {
        return protocol_field_flag(v, "pressure");
}

static double volume_full_soon(json_object *v) {
        return protocol_field_flag(v, "full_soon");
}

static const Metric cache_metrics[] = {
        { "cachekeeper_cache_size_bytes", "gauge", "Disk usage (st_blocks*512) of the regular files under the cache root.",
          "size_bytes", NULL, cache_unmeasured },
        { "cachekeeper_cache_files", "gauge", "Regular files under the cache root.", "files", NULL, cache_unmeasured },
        { "cachekeeper_cache_max_size_bytes", "gauge", "The cache's cap.", "max_size_bytes", NULL, NULL },
        { "cachekeeper_cache_entry_bytes", "gauge", "Disk usage of ccache entries.", "entry_bytes", NULL, cache_unmeasured },
        { "cachekeeper_cache_entry_files", "gauge", "ccache entries.", "entry_files", NULL, cache_unmeasured },
        { "cachekeeper_cache_hits_total", "counter", "ccache's hits, summed over its stats files.", "hits", NULL,
          cache_unmeasured },
        { "cachekeeper_cache_misses_total", "counter", "ccache's misses, summed over its stats files.", "misses", NULL,
          cache_unmeasured },
        { "cachekeeper_cache_evicted_files_total", "counter", "Files evicted by the daemon.", "evicted_files_total", NULL,
          NULL },
        { "cachekeeper_cache_evicted_bytes_total", "counter", "Bytes evicted by the daemon.", "evicted_bytes_total", NULL,
          NULL },
        { "cachekeeper_cache_stored_files_total", "counter", "New entries seen (ccache's stores).", "stored_files_total",
          NULL, NULL },
        { "cachekeeper_cache_stored_bytes_total", "counter", "Bytes of new entries seen.", "stored_bytes_total", NULL, NULL },
        { "cachekeeper_cache_refreshed_files_total", "counter", "Entries whose timestamps ccache refreshed on a hit.",
          "refreshed_files_total", NULL, NULL },
        { "cachekeeper_cache_removed_files_total", "counter", "Entries removed by others than the daemon.",
          "removed_files_total", NULL, NULL },
        { "cachekeeper_cache_removed_bytes_total", "counter", "Bytes of entries removed by others than the daemon.",
          "removed_bytes_total", NULL, NULL },
        { "cachekeeper_cache_oldest_entry_timestamp_seconds", "gauge", "mtime of the least recently used entry.",
          "oldest_entry_mtime", NULL, cache_without_entries },
        { "cachekeeper_cache_mode_repairs_total", "counter", "Modes repaired.", "mode_repairs", NULL, NULL },
        { "cachekeeper_cache_available", "gauge", "1 while the cache is available, 0 while not.", NULL, cache_available,
          NULL },
        { "cachekeeper_cache_scanning", "gauge", "1 until the first scan of the cache is complete.", NULL, cache_scanning,
          cache_unseen },
        { "cachekeeper_cache_trimming", "gauge", "1 while a trim runs.", NULL, cache_trimming, NULL },
        { "cachekeeper_cache_mode_ok", "gauge", "1 when the root has its configured mode.", NULL, cache_mode_ok,
          cache_unseen },
        { "cachekeeper_cache_regret_alert_ratio", "gauge",
          "regret_alert: the 7-day regret share above which the daemon alerts cache-cap-small.", "regret_alert", NULL,
          NULL },
        { "cachekeeper_cache_silent_hit_ratio", "gauge",
          "silent_hit_rate: the hit rate below which the daemon alerts cache-silent-miss.", "silent_hit_rate", NULL,
          NULL },
        { "cachekeeper_cache_silent_window_seconds", "gauge", "silent_window: the window of cache-silent-miss.",
          "silent_window_seconds", NULL, NULL },
        { "cachekeeper_cache_silent_min_calls", "gauge", "silent_min_calls: cacheable calls cache-silent-miss needs.",
          "silent_min_calls", NULL, NULL },
};

static const Metric volume_metrics[] = {
        { "cachekeeper_volume_size_bytes", "gauge", "Size of the filesystem.", "total_bytes", NULL, NULL },
        { "cachekeeper_volume_avail_bytes", "gauge", "Space available to unprivileged users.", "avail_bytes", NULL, NULL },
        { "cachekeeper_volume_files", "gauge", "Inodes of the filesystem.", "total_inodes", NULL, NULL },
        { "cachekeeper_volume_files_avail", "gauge", "Inodes available to unprivileged users.", "avail_inodes", NULL,
          NULL },
        { "cachekeeper_volume_warn_free_bytes", "gauge", "warn_free in bytes: the warning level below it.",
          "warn_free_bytes", NULL, NULL },
        { "cachekeeper_volume_crit_free_bytes", "gauge", "crit_free in bytes: the critical level below it.",
          "crit_free_bytes", NULL, NULL },
        { "cachekeeper_volume_min_free_bytes", "gauge", "min_free in bytes: eviction below it (absent when not set).",
          "min_free_bytes", NULL, NULL },
        { "cachekeeper_volume_warn_free_files", "gauge", "warn_free_inodes in inodes: the warning level below it.",
          "warn_free_inodes", NULL, NULL },
        { "cachekeeper_volume_crit_free_files", "gauge", "crit_free_inodes in inodes: the critical level below it.",
          "crit_free_inodes", NULL, NULL },
        { "cachekeeper_volume_alert_level", "gauge", "0 ok, 1 warning, 2 critical.", NULL, volume_level, NULL },
        { "cachekeeper_volume_full_in_seconds", "gauge", "Estimated time until full (absent when not filling).",
          "full_in_seconds", NULL, NULL },
        { "cachekeeper_volume_full_within_seconds", "gauge",
          "full_within: the daemon alerts when the volume looks full within this (absent when off).",
          "full_within_seconds", NULL, NULL },
        { "cachekeeper_volume_full_soon", "gauge", "1 while the daemon's fill estimate is under full_within.", NULL,
          volume_full_soon, NULL },
        { "cachekeeper_volume_pressure", "gauge", "1 while below min_free.", NULL, volume_pressure, NULL },
};

/* A sample's value: the shortest decimal that reads back as d (0.1, not
 * 0.10000000000000001). */
static void value(FILE *f, double d) {
        char s[32];

        for (int precision = 15; precision <= 17; precision++) {
                snprintf(s, sizeof(s), "%.*g", precision, d);
                if (strtod(s, NULL) == d)
                        break;
        }
        fprintf(f, "%s\n", s);
}

static void label(FILE *f, const char *s) {
        for (; *s; s++)
                fprintf(f, *s == '"' || *s == '\\' ? "\\%c" : *s == '\n' ? "\\n" : "%c", *s);
}

static void family(FILE *f, json_object *status, const char *list, const char *label_name, const char *label_key,
                   const Metric *m) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name, m->type);
        for (size_t i = 0; i < protocol_field_count(status, list); i++) {
                json_object *o = protocol_field_item(status, list, i);
                json_object *v = m->key ? protocol_field_get(o, m->key) : NULL;

                if ((m->key && !json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) ||
                    (m->skip && m->skip(o)))
                        continue;   /* absent (or not a number), not zero: "not filling" is not "full now" */
                fprintf(f, "%s{%s=\"", m->name, label_name);
                label(f, protocol_field_str(o, label_key));
                fputs("\"} ", f);
                if (m->value)
                        value(f, m->value(o));
                else if (json_object_is_type(v, json_type_double))
                        value(f, json_object_get_double(v));
                else
                        fprintf(f, "%llu\n", (unsigned long long) json_object_get_uint64(v));
        }
}

#define UP_FAMILY "# HELP cachekeeper_up 1 when cachekeeperd answered the status request, else 0.\n" \
                  "# TYPE cachekeeper_up gauge\n"

/* The families that hold for the whole daemon: up (it answered), its
 * version, whether every available cache is scanned. */
static void daemon_families(FILE *f, json_object *status) {
        json_object *version = protocol_field_get(status, "version");

        fputs(UP_FAMILY "cachekeeper_up 1\n"
              "# HELP cachekeeper_build_info The version of cachekeeperd that answered, and of cachectl.\n"
              "# TYPE cachekeeper_build_info gauge\n"
              "cachekeeper_build_info{version=\"", f);
        label(f, json_object_is_type(version, json_type_string) ? json_object_get_string(version) : "unknown");
        fputs("\",cachectl_version=\"" CACHEKEEPER_VERSION "\"} 1\n", f);
        fprintf(f, "# HELP cachekeeper_ready 1 once every available cache has been scanned.\n"
                   "# TYPE cachekeeper_ready gauge\n"
                   "cachekeeper_ready %d\n", protocol_field_flag(status, "ready"));
}

/* cachekeeper_cache_info: 1 per cache, with its path and (while available)
 * the mount point of its volume, to join the caches to the volumes. */
static void info_family(FILE *f, json_object *status) {
        fputs("# HELP cachekeeper_cache_info A cache's path and the mountpoint of its volume (while available).\n"
              "# TYPE cachekeeper_cache_info gauge\n", f);
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i);
                json_object *mount = protocol_field_get(c, "mount");

                fputs("cachekeeper_cache_info{cache=\"", f);
                label(f, protocol_field_str(c, "name"));
                fputs("\",path=\"", f);
                label(f, protocol_field_str(c, "path"));
                if (json_object_is_type(mount, json_type_string)) {
                        fputs("\",mountpoint=\"", f);
                        label(f, json_object_get_string(mount));
                }
                fputs("\"} 1\n", f);
        }
}

/* cachekeeper_cache_alarm: 1 while the daemon's alarm of that kind stands
 * for the cache (the status's "alarms", keyed by CACHEKEEPER_EVENT). */
static void alarm_family(FILE *f, json_object *status) {
        fputs("# HELP cachekeeper_cache_alarm 1 while the daemon's alarm of this kind stands for the cache.\n"
              "# TYPE cachekeeper_cache_alarm gauge\n", f);
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i), *a = protocol_field_get(c, "alarms");

                if (!json_object_is_type(a, json_type_object))
                        continue;
                json_object_object_foreach(a, kind, v) {
                        fputs("cachekeeper_cache_alarm{cache=\"", f);
                        label(f, protocol_field_str(c, "name"));
                        fputs("\",alarm=\"", f);
                        label(f, kind);
                        fprintf(f, "\"} %d\n", json_object_get_boolean(v));
                }
        }
}

/* ccache's hit rate per cache and window; no sample for a window without
 * cacheable calls (null in the status), as for a rate of 0/0. */
static void hit_ratio_family(FILE *f, json_object *status) {
        static const char *const windows[] = { "1h", "24h", "7d" };

        fprintf(f, "# HELP cachekeeper_cache_hit_ratio ccache's hits / (hits + misses) over the window.\n"
                   "# TYPE cachekeeper_cache_hit_ratio gauge\n");
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i);

                for (size_t w = 0; w < ELEMENTSOF(windows); w++) {
                        char key[32];
                        json_object *v;

                        snprintf(key, sizeof(key), "hit_rate_%s", windows[w]);
                        v = protocol_field_get(c, key);
                        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                                continue;
                        fputs("cachekeeper_cache_hit_ratio{cache=\"", f);
                        label(f, protocol_field_str(c, "name"));
                        fprintf(f, "\",window=\"%s\"} ", windows[w]);
                        value(f, json_object_get_double(v));
                }
        }
}

/* A per-cache gauge by window from an object of the status keyed by
 * window ({"1h": n, ...}): one sample per cache and window. */
static void window_family(FILE *f, json_object *status, const char *name, const char *help, const char *key) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i), *o = protocol_field_get(c, key);

                if (!json_object_is_type(o, json_type_object) || cache_unmeasured(c))
                        continue;
                json_object_object_foreach(o, window, v) {
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, "name"));
                        fprintf(f, "\",window=\"");
                        label(f, window);
                        fprintf(f, "\"} %llu\n", (unsigned long long) json_object_get_uint64(v));
                }
        }
}

/* Gauges from fields of the object "regret" of each cache: for each
 * window, field "<prefix>_<window>" labelled window (windows NULL: field
 * prefix itself, unlabelled); no sample for a null or absent field. */
static void regret_family(FILE *f, json_object *status, const char *name, const char *help, const char *prefix,
                          const char *const *windows) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i), *r = protocol_field_get(c, "regret");

                for (size_t w = 0; windows ? windows[w] != NULL : w == 0; w++) {
                        char key[64];
                        json_object *v;

                        snprintf(key, sizeof(key), windows ? "%s_%s" : "%s", prefix, windows ? windows[w] : "");
                        v = protocol_field_get(r, key);
                        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                                continue;
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, "name"));
                        if (windows)
                                fprintf(f, "\",window=\"%s", windows[w]);
                        fputs("\"} ", f);
                        value(f, json_object_get_double(v));
                }
        }
}

/* A per-writer gauge: field of each element of each cache's writers with a
 * ccache_version (the unreadable are in the status only). */
static void writers_family(FILE *f, json_object *status, const char *name, const char *help, const char *field) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i);

                if (cache_unmeasured(c))
                        continue;
                for (size_t j = 0; j < protocol_field_count(c, "writers"); j++) {
                        json_object *w = protocol_field_item(c, "writers", j);

                        if (!json_object_is_type(protocol_field_get(w, "ccache_version"), json_type_string))
                                continue;
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, "name"));
                        fputs("\",ccache_version=\"", f);
                        label(f, protocol_field_str(w, "ccache_version"));
                        fputs("\",namespace=\"", f);
                        label(f, protocol_field_str(w, "namespace"));
                        fprintf(f, "\"} %llu\n", (unsigned long long) protocol_field_u64(w, field));
                }
        }
}

const char report_metrics_down[] = UP_FAMILY "cachekeeper_up 0\n";

static double remote_up(json_object *r) {
        return strcmp(protocol_field_str(r, "state"), "ok") == 0;
}

static double remote_evicts(json_object *r) {
        return protocol_field_flag(r, "evicts");
}

/* Only redis remotes are polled: a file: one has no such figures. */
static bool remote_not_redis(json_object *r) {
        return strcmp(protocol_field_str(r, "kind"), "redis") != 0;
}

static double remote_level(json_object *r) {
        const char *l = protocol_field_str(r, "level");
        return strcmp(l, "critical") == 0 ? 2 : strcmp(l, "warning") == 0 ? 1 : 0;
}

static bool remote_not_file(json_object *r) {
        return strcmp(protocol_field_str(r, "kind"), "file") != 0;
}

/* A share's figures mean nothing while it is not kept here. */
static bool share_not_kept(json_object *r) {
        return remote_not_file(r) || strcmp(protocol_field_str(r, "state"), "unavailable") == 0;
}

static double share_kept(json_object *r) {
        return strcmp(protocol_field_str(r, "state"), "unavailable") != 0;
}

static const Metric remote_metrics[] = {
        { "cachekeeper_remote_kept", "gauge", "1 while this host keeps the file: remote (share).", NULL, share_kept,
          remote_not_file },
        { "cachekeeper_remote_size_bytes", "gauge", "Disk usage of the share's files.", "size_bytes", NULL, share_not_kept },
        { "cachekeeper_remote_max_size_bytes", "gauge", "The share's cap.", "max_size_bytes", NULL, remote_not_file },
        { "cachekeeper_remote_entries", "gauge", "ccache entries in the share.", "entry_files", NULL, share_not_kept },
        { "cachekeeper_remote_evicted_files_total", "counter", "Entries the keeper evicted from the share.",
          "evicted_files_total", NULL, share_not_kept },
        { "cachekeeper_remote_evicted_bytes_total", "counter", "Bytes the keeper evicted from the share.",
          "evicted_bytes_total", NULL, share_not_kept },
        { "cachekeeper_remote_up", "gauge", "1 when the remote answered its last poll.", NULL, remote_up, remote_not_redis },
        { "cachekeeper_remote_used_memory_bytes", "gauge", "Redis used_memory.", "used_memory_bytes", NULL, remote_not_redis },
        { "cachekeeper_remote_maxmemory_bytes", "gauge", "Redis maxmemory (0: no limit).", "maxmemory_bytes", NULL, remote_not_redis },
        { "cachekeeper_remote_evicts", "gauge", "1 when the server evicts ccache's keys when full.", NULL, remote_evicts, remote_not_redis },
        { "cachekeeper_remote_level", "gauge", "Memory level under a non-evicting policy: 0 ok, 1 warning, 2 critical.",
          NULL, remote_level, remote_not_redis },
        { "cachekeeper_remote_evicted_keys_total", "counter", "Redis evicted_keys.", "evicted_keys_total", NULL, remote_not_redis },
        { "cachekeeper_remote_keyspace_hits_total", "counter", "Redis keyspace_hits.", "keyspace_hits_total", NULL, remote_not_redis },
        { "cachekeeper_remote_keyspace_misses_total", "counter", "Redis keyspace_misses.", "keyspace_misses_total", NULL, remote_not_redis },
        { "cachekeeper_remote_ccache_keys", "gauge", "Keys ccache:* found by the last complete SCAN.", "ccache_keys", NULL, remote_not_redis },
        { "cachekeeper_remote_connected_clients", "gauge", "Redis connected_clients.", "connected_clients", NULL, remote_not_redis },
        { "cachekeeper_remote_poll_failures_total", "counter", "Polls that failed (no connection, no answer, refused).",
          "poll_failures_total", NULL, remote_not_redis },
};

/* The remotes' families (a label remote) and each cache's remote storage
 * errors in its remote_errors_window. Kept apart from the cache metrics. */
static void remote_families(FILE *f, json_object *status) {
        for (size_t i = 0; i < ELEMENTSOF(remote_metrics); i++)
                family(f, status, "remotes", "remote", "name", &remote_metrics[i]);
        fprintf(f, "# HELP cachekeeper_cache_remote_errors ccache's remote storage errors and timeouts within "
                   "remote_errors_window.\n# TYPE cachekeeper_cache_remote_errors gauge\n");
        for (size_t i = 0; i < protocol_field_count(status, "caches"); i++) {
                json_object *c = protocol_field_item(status, "caches", i), *e = protocol_field_get(c, "remote_errors");

                if (!json_object_is_type(e, json_type_object))
                        continue;
                fputs("cachekeeper_cache_remote_errors{cache=\"", f);
                label(f, protocol_field_str(c, "name"));
                fprintf(f, "\"} %llu\n", (unsigned long long) protocol_field_u64(e, "errors"));
        }
}

char *report_metrics(json_object *status) {
        static const char *const regret_windows[] = { "24h", "7d", NULL };
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        daemon_families(f, status);
        info_family(f, status);
        for (size_t i = 0; i < ELEMENTSOF(cache_metrics); i++)
                family(f, status, "caches", "cache", "name", &cache_metrics[i]);
        hit_ratio_family(f, status);
        window_family(f, status, "cachekeeper_cache_working_set_bytes",
                      "Bytes of the entries used (mtime) within the window.", "working_set_bytes");
        window_family(f, status, "cachekeeper_cache_working_set_files",
                      "Entries used (mtime) within the window.", "working_set_files");
        regret_family(f, status, "cachekeeper_cache_regret_stores",
                      "Stores of entries the daemon had evicted (misses the cap caused) within the window.", "stores",
                      regret_windows);
        regret_family(f, status, "cachekeeper_cache_regret_bytes", "Bytes of those stores within the window.", "bytes",
                      regret_windows);
        regret_family(f, status, "cachekeeper_cache_regret_share",
                      "Share of the last 7 days' stores that were of entries the daemon had evicted.", "share_7d", NULL);
        writers_family(f, status, "cachekeeper_cache_writer_entries", "Entries written by a ccache version and namespace.",
                       "entries");
        writers_family(f, status, "cachekeeper_cache_writer_bytes", "Bytes of the entries written by it.", "bytes");
        writers_family(f, status, "cachekeeper_cache_writer_stores_24h", "Its stores over the last 24 hours.",
                       "stores_24h");
        writers_family(f, status, "cachekeeper_cache_writer_hits_24h",
                       "Hits of its entries over the last 24 hours (entries refreshed).", "hits_24h");
        regret_family(f, status, "cachekeeper_cache_suggested_max_size_bytes",
                      "A cap that would have kept 90 % of the evicted entries that came back within 7 days.",
                      "suggested_max_size_bytes", NULL);
        alarm_family(f, status);
        for (size_t i = 0; i < ELEMENTSOF(volume_metrics); i++)
                family(f, status, "volumes", "mountpoint", "mount", &volume_metrics[i]);
        remote_families(f, status);
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

#define HISTORY_TIME_WIDTH 11           /* "MM-DD HH:MM" */

/* The TIME column of a row starting at unix time start, of seconds. */
static void history_time(uint64_t start, uint64_t seconds, char *buf, size_t size) {
        time_t t = (time_t) start;
        struct tm tm;

        /* A day is a UTC day: its UTC date, whatever the local zone. */
        if (seconds >= PROTOCOL_HISTORY_DAY ? !gmtime_r(&t, &tm) : !localtime_r(&t, &tm)) {
                snprintf(buf, size, "?");
                return;
        }
        strftime(buf, size, seconds >= PROTOCOL_HISTORY_DAY ? "%Y-%m-%d" : seconds >= PROTOCOL_HISTORY_HOUR ? "%m-%d %H:%M"
                                                                                                       : "%H:%M", &tm);
}

/* hits / (hits + misses) as a whole percent, "-" without calls. */
static const char *history_percent(uint64_t hits, uint64_t misses, char *buf, size_t size) {
        if (hits + misses == 0)
                return "-";
        snprintf(buf, size, "%.0f%%", 100.0 * (double) hits / (double) (hits + misses));
        return buf;
}

static void history_line(FILE *f, json_object *row) {
        uint64_t hits = protocol_field_u64(row, PROTOCOL_ROW_HITS), misses = protocol_field_u64(row, PROTOCOL_ROW_MISSES);
        char when[32], rate[16], size[32];

        history_time(protocol_field_u64(row, PROTOCOL_ROW_START), protocol_field_u64(row, PROTOCOL_ROW_SECONDS), when,
                     sizeof(when));
        if (json_object_is_type(protocol_field_get(row, PROTOCOL_ROW_SIZE_BYTES), json_type_int))
                format_size(protocol_field_u64(row, PROTOCOL_ROW_SIZE_BYTES), size, sizeof(size));
        else
                snprintf(size, sizeof(size), "-");
        fprintf(f, "%-*s %8llu %8llu %8llu %5s %7llu %7llu %7llu %8s\n", HISTORY_TIME_WIDTH, when,
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_STORES), (unsigned long long) hits,
                (unsigned long long) misses, history_percent(hits, misses, rate, sizeof(rate)),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_EVICTIONS),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_REGRETTED),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_REMOVALS), size);
}

/* One line: the label, then a block per group of rows (the newest on the
 * right), its height the group's hit rate; a space for a group without
 * calls. */
static void history_sparkline(FILE *f, json_object *history) {
        static const char *const blocks[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
                                               "\u2585", "\u2586", "\u2587", "\u2588" };
        size_t n = protocol_field_count(history, PROTOCOL_HISTORY_BUCKETS);
        size_t cells = REPORT_HISTORY_WIDTH - 1 - (HISTORY_TIME_WIDTH + 1);
        size_t per = n > cells ? (n + cells - 1) / cells : 1;

        fprintf(f, "%-*s ", HISTORY_TIME_WIDTH, REPORT_SPARK_LABEL);
        /* Groups end at the newest row: the oldest group may be short. */
        for (size_t end = n % per ? n % per : per, start = 0; start < n; start = end, end += per) {
                uint64_t hits = 0, calls = 0;

                for (size_t i = start; i < end && i < n; i++) {
                        json_object *row = protocol_field_item(history, PROTOCOL_HISTORY_BUCKETS, i);
                        uint64_t h = protocol_field_u64(row, PROTOCOL_ROW_HITS);

                        hits += h;
                        calls += h + protocol_field_u64(row, PROTOCOL_ROW_MISSES);
                }
                if (calls == 0)
                        fputc(' ', f);
                else {
                        size_t level = (size_t) ((double) hits / (double) calls * 8);
                        fputs(blocks[level > 7 ? 7 : level], f);
                }
        }
        fputc('\n', f);
}

/* "minute", "hour", "day": what one row of history spans. */
static const char *history_unit(json_object *history) {
        uint64_t s = protocol_field_u64(protocol_field_item(history, PROTOCOL_HISTORY_BUCKETS, 0), PROTOCOL_ROW_SECONDS);

        return s >= PROTOCOL_HISTORY_DAY ? "day (UTC)" : s >= PROTOCOL_HISTORY_HOUR ? "hour" : "minute";
}

char *report_history(json_object *history, bool sparkline) {
        size_t n = protocol_field_count(history, PROTOCOL_HISTORY_BUCKETS), size = 0;
        char *out = NULL;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        if (n == 0)
                fprintf(f, "%s: nothing observed over this span yet\n", protocol_field_str(history, PROTOCOL_HISTORY_CACHE));
        else {
                fprintf(f, "%s: %zu row%s, one per %s\n", protocol_field_str(history, PROTOCOL_HISTORY_CACHE), n,
                        n == 1 ? "" : "s", history_unit(history));
                fprintf(f, "%-*s %8s %8s %8s %5s %7s %7s %7s %8s\n", HISTORY_TIME_WIDTH, "TIME", "STORES", "HITS",
                        "MISSES", "HIT%", "EVICT", "REGRET", "REMOVED", "SIZE");
                for (size_t i = 0; i < n; i++)
                        history_line(f, protocol_field_item(history, PROTOCOL_HISTORY_BUCKETS, i));
                if (sparkline)
                        history_sparkline(f, history);
        }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}
