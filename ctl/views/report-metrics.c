/* SPDX-License-Identifier: MIT */
/* cachectl metrics (views/report.h): a status object as Prometheus text
 * exposition, one family after another as cachectl(1) METRICS lists them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/util.h"
#include "views/report-internal.h"
#include "views/report.h"

/* One metric family: HELP, TYPE, then a sample per cache or volume. */
typedef struct Metric {
        const char *name, *type, *help;
        const char *key;           /* status field, or NULL when value() computes it */
        double (*value)(json_object *o);
        bool (*skip)(json_object *o);   /* no sample for this cache or volume */
} Metric;

static double cache_available(json_object *c) {
        return !report_cache_is(c, "unavailable");
}

static double cache_scanning(json_object *c) {
        return report_cache_is(c, "scanning");
}

static double cache_trimming(json_object *c) {
        return report_cache_is(c, "trimming");
}

static double cache_mode_ok(json_object *c) {
        return protocol_field_flag(c, STATUS_CACHE_MODE_OK);
}

/* Figures of what the cache holds mean nothing while it is unavailable (the
 * daemon cannot see it) or not yet scanned (they are partial): no sample,
 * not a 0 that a graph or a rate would take for an emptied cache. */
static bool cache_unmeasured(json_object *c) {
        return report_cache_is(c, "unavailable") || report_cache_is(c, "scanning");
}

static bool cache_without_entries(json_object *c) {
        return cache_unmeasured(c) || protocol_field_u64(c, STATUS_CACHE_ENTRY_FILES) == 0;
}

static bool cache_unseen(json_object *c) {
        return report_cache_is(c, "unavailable");
}

static double volume_level(json_object *v) {
        const char *a = protocol_field_str(v, STATUS_VOLUME_ALERT);
        return strcmp(a, "critical") == 0 ? 2 : strcmp(a, "warning") == 0 ? 1 : 0;
}

static double volume_pressure(json_object *v) {
        return protocol_field_flag(v, STATUS_VOLUME_PRESSURE);
}

static double volume_full_soon(json_object *v) {
        return protocol_field_flag(v, STATUS_VOLUME_FULL_SOON);
}

static const Metric cache_metrics[] = {
        { "cachekeeper_cache_size_bytes", "gauge",
          "Disk usage (st_blocks*512) of the regular files under the cache root.", STATUS_CACHE_SIZE_BYTES, NULL,
          cache_unmeasured },
        { "cachekeeper_cache_files", "gauge", "Regular files under the cache root.", STATUS_CACHE_FILES, NULL,
          cache_unmeasured },
        { "cachekeeper_cache_max_size_bytes", "gauge", "The cache's cap.", STATUS_CACHE_MAX_SIZE_BYTES, NULL, NULL },
        { "cachekeeper_cache_entry_bytes", "gauge", "Disk usage of ccache entries.", STATUS_CACHE_ENTRY_BYTES, NULL,
          cache_unmeasured },
        { "cachekeeper_cache_entry_files", "gauge", "ccache entries.", STATUS_CACHE_ENTRY_FILES, NULL,
          cache_unmeasured },
        { "cachekeeper_cache_hits_total", "counter", "ccache's hits, summed over its stats files.", STATUS_CACHE_HITS,
          NULL, cache_unmeasured },
        { "cachekeeper_cache_misses_total", "counter", "ccache's misses, summed over its stats files.",
          STATUS_CACHE_MISSES, NULL, cache_unmeasured },
        { "cachekeeper_cache_evicted_files_total", "counter", "Files evicted by the daemon.",
          STATUS_CACHE_EVICTED_FILES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_evicted_bytes_total", "counter", "Bytes evicted by the daemon.",
          STATUS_CACHE_EVICTED_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_stored_files_total", "counter", "New entries seen (ccache's stores).",
          STATUS_CACHE_STORED_FILES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_stored_bytes_total", "counter", "Bytes of new entries seen.",
          STATUS_CACHE_STORED_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_refreshed_files_total", "counter", "Entries whose timestamps ccache refreshed on a hit.",
          STATUS_CACHE_REFRESHED_FILES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_removed_files_total", "counter", "Entries removed by others than the daemon.",
          STATUS_CACHE_REMOVED_FILES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_removed_bytes_total", "counter", "Bytes of entries removed by others than the daemon.",
          STATUS_CACHE_REMOVED_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_other_added_bytes_total", "counter",
          "Bytes of files that are no entries (ccache's temporaries...) that came or grew.",
          STATUS_CACHE_OTHER_ADDED_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_other_removed_bytes_total", "counter",
          "Bytes of files that are no entries that went or shrank (but by an eviction).",
          STATUS_CACHE_OTHER_REMOVED_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_adjusted_up_bytes_total", "counter",
          "Bytes of entries that came or grew with no store seen.", STATUS_CACHE_ADJUSTED_UP_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_adjusted_down_bytes_total", "counter",
          "Bytes of entries that went or shrank with no eviction or removal seen.",
          STATUS_CACHE_ADJUSTED_DOWN_BYTES_TOTAL, NULL, NULL },
        { "cachekeeper_cache_ccache_cleanups_total", "counter", "Times ccache's own cleanup ran in the cache.",
          STATUS_CACHE_CCACHE_CLEANUPS_TOTAL, NULL, NULL },
        { "cachekeeper_cache_oldest_entry_timestamp_seconds", "gauge", "mtime of the least recently used entry.",
          STATUS_CACHE_OLDEST_ENTRY_MTIME, NULL, cache_without_entries },
        { "cachekeeper_cache_mode_repairs_total", "counter", "Modes repaired.", STATUS_CACHE_MODE_REPAIRS, NULL, NULL },
        { "cachekeeper_cache_available", "gauge", "1 while the cache is available, 0 while not.", NULL, cache_available,
          NULL },
        { "cachekeeper_cache_scanning", "gauge", "1 until the first scan of the cache is complete.", NULL,
          cache_scanning, cache_unseen },
        { "cachekeeper_cache_trimming", "gauge", "1 while a trim runs.", NULL, cache_trimming, NULL },
        { "cachekeeper_cache_mode_ok", "gauge", "1 when the root has its configured mode.", NULL, cache_mode_ok,
          cache_unseen },
        { "cachekeeper_cache_regret_alert_ratio", "gauge",
          "regret_alert: the 7-day regret share above which the daemon alerts cache-cap-small.",
          STATUS_CACHE_REGRET_ALERT, NULL, NULL },
        { "cachekeeper_cache_silent_hit_ratio", "gauge",
          "silent_hit_rate: the hit rate below which the daemon alerts cache-silent-miss.",
          STATUS_CACHE_SILENT_HIT_RATE, NULL, NULL },
        { "cachekeeper_cache_silent_window_seconds", "gauge", "silent_window: the window of cache-silent-miss.",
          STATUS_CACHE_SILENT_WINDOW_SECONDS, NULL, NULL },
        { "cachekeeper_cache_silent_min_calls", "gauge", "silent_min_calls: cacheable calls cache-silent-miss needs.",
          STATUS_CACHE_SILENT_MIN_CALLS, NULL, NULL },
};

static const Metric volume_metrics[] = {
        { "cachekeeper_volume_size_bytes", "gauge", "Size of the filesystem.", STATUS_VOLUME_TOTAL_BYTES, NULL, NULL },
        { "cachekeeper_volume_avail_bytes", "gauge", "Space available to unprivileged users.",
          STATUS_VOLUME_AVAIL_BYTES, NULL, NULL },
        { "cachekeeper_volume_files", "gauge", "Inodes of the filesystem.", STATUS_VOLUME_TOTAL_INODES, NULL, NULL },
        { "cachekeeper_volume_files_avail", "gauge", "Inodes available to unprivileged users.",
          STATUS_VOLUME_AVAIL_INODES, NULL, NULL },
        { "cachekeeper_volume_warn_free_bytes", "gauge", "warn_free in bytes: the warning level below it.",
          STATUS_VOLUME_WARN_FREE_BYTES, NULL, NULL },
        { "cachekeeper_volume_crit_free_bytes", "gauge", "crit_free in bytes: the critical level below it.",
          STATUS_VOLUME_CRIT_FREE_BYTES, NULL, NULL },
        { "cachekeeper_volume_min_free_bytes", "gauge", "min_free in bytes: eviction below it (absent when not set).",
          STATUS_VOLUME_MIN_FREE_BYTES, NULL, NULL },
        { "cachekeeper_volume_warn_free_files", "gauge", "warn_free_inodes in inodes: the warning level below it.",
          STATUS_VOLUME_WARN_FREE_INODES, NULL, NULL },
        { "cachekeeper_volume_crit_free_files", "gauge", "crit_free_inodes in inodes: the critical level below it.",
          STATUS_VOLUME_CRIT_FREE_INODES, NULL, NULL },
        { "cachekeeper_volume_alert_level", "gauge", "0 ok, 1 warning, 2 critical.", NULL, volume_level, NULL },
        { "cachekeeper_volume_full_in_seconds", "gauge", "Estimated time until full (absent when not filling).",
          STATUS_VOLUME_FULL_IN_SECONDS, NULL, NULL },
        { "cachekeeper_volume_full_within_seconds", "gauge",
          "full_within: the daemon alerts when the volume looks full within this (absent when off).",
          STATUS_VOLUME_FULL_WITHIN_SECONDS, NULL, NULL },
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
        json_object *version = protocol_field_get(status, STATUS_VERSION);

        fputs(UP_FAMILY "cachekeeper_up 1\n"
              "# HELP cachekeeper_build_info The version of cachekeeperd that answered, and of cachectl.\n"
              "# TYPE cachekeeper_build_info gauge\n"
              "cachekeeper_build_info{version=\"", f);
        label(f, json_object_is_type(version, json_type_string) ? json_object_get_string(version) : "unknown");
        fputs("\",cachectl_version=\"" CACHEKEEPER_VERSION "\"} 1\n", f);
        fprintf(f, "# HELP cachekeeper_ready 1 once every available cache has been scanned.\n"
                   "# TYPE cachekeeper_ready gauge\n"
                   "cachekeeper_ready %d\n", protocol_field_flag(status, STATUS_READY));
}

/* cachekeeper_cache_info: 1 per cache, with its path and (while available)
 * the mount point of its volume, to join the caches to the volumes. */
static void info_family(FILE *f, json_object *status) {
        fputs("# HELP cachekeeper_cache_info A cache's path and the mountpoint of its volume (while available).\n"
              "# TYPE cachekeeper_cache_info gauge\n", f);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                json_object *mount = protocol_field_get(c, STATUS_CACHE_MOUNT);

                fputs("cachekeeper_cache_info{cache=\"", f);
                label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                fputs("\",path=\"", f);
                label(f, protocol_field_str(c, STATUS_CACHE_PATH));
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
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                json_object *a = protocol_field_get(c, STATUS_CACHE_ALARMS);

                if (!json_object_is_type(a, json_type_object))
                        continue;
                json_object_object_foreach(a, kind, v) {
                        fputs("cachekeeper_cache_alarm{cache=\"", f);
                        label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                        fputs("\",alarm=\"", f);
                        label(f, kind);
                        fprintf(f, "\"} %d\n", json_object_get_boolean(v));
                }
        }
}

/* A field of a cache's status and the window it covers, the label of its
 * sample (NULL: none). */
typedef struct Windowed {
        const char *key, *window;
} Windowed;

/* ccache's hit rate per cache and window; no sample for a window without
 * cacheable calls (null in the status), as for a rate of 0/0. */
static void hit_ratio_family(FILE *f, json_object *status) {
        static const Windowed windows[] = {
                { STATUS_CACHE_HIT_RATE_1H, STATUS_WINDOW_1H },
                { STATUS_CACHE_HIT_RATE_24H, STATUS_WINDOW_24H },
                { STATUS_CACHE_HIT_RATE_7D, STATUS_WINDOW_7D },
        };

        fprintf(f, "# HELP cachekeeper_cache_hit_ratio ccache's hits / (hits + misses) over the window.\n"
                   "# TYPE cachekeeper_cache_hit_ratio gauge\n");
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);

                for (size_t w = 0; w < ELEMENTSOF(windows); w++) {
                        json_object *v = protocol_field_get(c, windows[w].key);

                        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                                continue;
                        fputs("cachekeeper_cache_hit_ratio{cache=\"", f);
                        label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                        fprintf(f, "\",window=\"%s\"} ", windows[w].window);
                        value(f, json_object_get_double(v));
                }
        }
}

/* A per-cache gauge by window from an object of the status keyed by
 * window ({"1h": n, ...}): one sample per cache and window. */
static void window_family(FILE *f, json_object *status, const char *name, const char *help, const char *key) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i), *o = protocol_field_get(c, key);

                if (!json_object_is_type(o, json_type_object) || cache_unmeasured(c))
                        continue;
                json_object_object_foreach(o, window, v) {
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                        fprintf(f, "\",window=\"");
                        label(f, window);
                        fprintf(f, "\"} %llu\n", (unsigned long long) json_object_get_uint64(v));
                }
        }
}

/* Gauges from fields of the object "regret" of each cache: for each of
 * fields (up to one with key NULL), a sample labelled with its window (if
 * any); no sample for a null or absent field. */
static void regret_family(FILE *f, json_object *status, const char *name, const char *help, const Windowed *fields) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                json_object *r = protocol_field_get(c, STATUS_CACHE_REGRET);

                for (const Windowed *w = fields; w->key; w++) {
                        json_object *v = protocol_field_get(r, w->key);

                        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                                continue;
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                        if (w->window)
                                fprintf(f, "\",window=\"%s", w->window);
                        fputs("\"} ", f);
                        value(f, json_object_get_double(v));
                }
        }
}

/* A per-writer gauge: field of each element of each cache's writers with a
 * ccache_version (the unreadable are in the status only). */
static void writers_family(FILE *f, json_object *status, const char *name, const char *help, const char *field) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);

                if (cache_unmeasured(c))
                        continue;
                for (size_t j = 0; j < protocol_field_count(c, STATUS_CACHE_WRITERS); j++) {
                        json_object *w = protocol_field_item(c, STATUS_CACHE_WRITERS, j);

                        if (!json_object_is_type(protocol_field_get(w, STATUS_WRITER_CCACHE_VERSION), json_type_string))
                                continue;
                        fprintf(f, "%s{cache=\"", name);
                        label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                        fputs("\",ccache_version=\"", f);
                        label(f, protocol_field_str(w, STATUS_WRITER_CCACHE_VERSION));
                        fputs("\",namespace=\"", f);
                        label(f, protocol_field_str(w, STATUS_WRITER_NAMESPACE));
                        fprintf(f, "\"} %llu\n", (unsigned long long) protocol_field_u64(w, field));
                }
        }
}

const char report_metrics_down[] = UP_FAMILY "cachekeeper_up 0\n";

static double remote_up(json_object *r) {
        return strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "ok") == 0;
}

static double remote_evicts(json_object *r) {
        return protocol_field_flag(r, STATUS_REDIS_EVICTS);
}

/* Only redis remotes are polled: a file: one has no such figures. */
static bool remote_not_redis(json_object *r) {
        return strcmp(protocol_field_str(r, STATUS_REMOTE_KIND), "redis") != 0;
}

static double remote_level(json_object *r) {
        const char *l = protocol_field_str(r, STATUS_REMOTE_LEVEL);
        return strcmp(l, "critical") == 0 ? 2 : strcmp(l, "warning") == 0 ? 1 : 0;
}

static bool remote_not_file(json_object *r) {
        return strcmp(protocol_field_str(r, STATUS_REMOTE_KIND), "file") != 0;
}

/* A share's figures mean nothing while it is not kept here. */
static bool share_not_kept(json_object *r) {
        return remote_not_file(r) || strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "unavailable") == 0;
}

static double share_kept(json_object *r) {
        return strcmp(protocol_field_str(r, STATUS_REMOTE_STATE), "unavailable") != 0;
}

static const Metric remote_metrics[] = {
        { "cachekeeper_remote_kept", "gauge", "1 while this host keeps the file: remote (share).", NULL, share_kept,
          remote_not_file },
        { "cachekeeper_remote_size_bytes", "gauge", "Disk usage of the share's files.", STATUS_SHARE_SIZE_BYTES, NULL,
          share_not_kept },
        { "cachekeeper_remote_max_size_bytes", "gauge", "The share's cap.", STATUS_SHARE_MAX_SIZE_BYTES, NULL,
          remote_not_file },
        { "cachekeeper_remote_entries", "gauge", "ccache entries in the share.", STATUS_SHARE_ENTRY_FILES, NULL,
          share_not_kept },
        { "cachekeeper_remote_evicted_files_total", "counter", "Entries the keeper evicted from the share.",
          STATUS_SHARE_EVICTED_FILES_TOTAL, NULL, share_not_kept },
        { "cachekeeper_remote_evicted_bytes_total", "counter", "Bytes the keeper evicted from the share.",
          STATUS_SHARE_EVICTED_BYTES_TOTAL, NULL, share_not_kept },
        { "cachekeeper_remote_up", "gauge", "1 when the remote answered its last poll.", NULL, remote_up,
          remote_not_redis },
        { "cachekeeper_remote_used_memory_bytes", "gauge", "Redis used_memory.", STATUS_REDIS_USED_MEMORY_BYTES, NULL,
          remote_not_redis },
        { "cachekeeper_remote_maxmemory_bytes", "gauge", "Redis maxmemory (0: no limit).", STATUS_REDIS_MAXMEMORY_BYTES,
          NULL, remote_not_redis },
        { "cachekeeper_remote_evicts", "gauge", "1 when the server evicts ccache's keys when full.", NULL,
          remote_evicts, remote_not_redis },
        { "cachekeeper_remote_level", "gauge", "Memory level under a non-evicting policy: 0 ok, 1 warning, 2 critical.",
          NULL, remote_level, remote_not_redis },
        { "cachekeeper_remote_evicted_keys_total", "counter", "Redis evicted_keys.", STATUS_REDIS_EVICTED_KEYS_TOTAL,
          NULL, remote_not_redis },
        { "cachekeeper_remote_keyspace_hits_total", "counter", "Redis keyspace_hits.", STATUS_REDIS_KEYSPACE_HITS_TOTAL,
          NULL, remote_not_redis },
        { "cachekeeper_remote_keyspace_misses_total", "counter", "Redis keyspace_misses.",
          STATUS_REDIS_KEYSPACE_MISSES_TOTAL, NULL, remote_not_redis },
        { "cachekeeper_remote_ccache_keys", "gauge", "Keys ccache:* found by the last complete SCAN.",
          STATUS_REDIS_CCACHE_KEYS, NULL, remote_not_redis },
        { "cachekeeper_remote_connected_clients", "gauge", "Redis connected_clients.", STATUS_REDIS_CONNECTED_CLIENTS,
          NULL, remote_not_redis },
        { "cachekeeper_remote_poll_failures_total", "counter", "Polls that failed (no connection, no answer, refused).",
          STATUS_REDIS_POLL_FAILURES_TOTAL, NULL, remote_not_redis },
};

/* The remotes' families (a label remote) and each cache's remote storage
 * errors in its remote_errors_window. Kept apart from the cache metrics. */
static void remote_families(FILE *f, json_object *status) {
        for (size_t i = 0; i < ELEMENTSOF(remote_metrics); i++)
                family(f, status, STATUS_REMOTES, "remote", STATUS_REMOTE_NAME, &remote_metrics[i]);
        fprintf(f, "# HELP cachekeeper_cache_remote_errors ccache's remote storage errors and timeouts within "
                   "remote_errors_window.\n# TYPE cachekeeper_cache_remote_errors gauge\n");
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                json_object *e = protocol_field_get(c, STATUS_CACHE_REMOTE_ERRORS);

                if (!json_object_is_type(e, json_type_object))
                        continue;
                fputs("cachekeeper_cache_remote_errors{cache=\"", f);
                label(f, protocol_field_str(c, STATUS_CACHE_NAME));
                fprintf(f, "\"} %llu\n", (unsigned long long) protocol_field_u64(e, STATUS_REMOTE_ERRORS_ERRORS));
        }
}

char *report_metrics(json_object *status) {
        static const Windowed regret_stores[] = {
                { STATUS_REGRET_STORES_24H, STATUS_WINDOW_24H }, { STATUS_REGRET_STORES_7D, STATUS_WINDOW_7D }, {}
        };
        static const Windowed regret_bytes[] = {
                { STATUS_REGRET_BYTES_24H, STATUS_WINDOW_24H }, { STATUS_REGRET_BYTES_7D, STATUS_WINDOW_7D }, {}
        };
        static const Windowed regret_share[] = { { STATUS_REGRET_SHARE_7D, NULL }, {} };
        static const Windowed suggested[] = { { STATUS_REGRET_SUGGESTED_MAX_SIZE_BYTES, NULL }, {} };
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        daemon_families(f, status);
        info_family(f, status);
        for (size_t i = 0; i < ELEMENTSOF(cache_metrics); i++)
                family(f, status, STATUS_CACHES, "cache", STATUS_CACHE_NAME, &cache_metrics[i]);
        hit_ratio_family(f, status);
        window_family(f, status, "cachekeeper_cache_working_set_bytes",
                      "Bytes of the entries used (mtime) within the window.", STATUS_CACHE_WORKING_SET_BYTES);
        window_family(f, status, "cachekeeper_cache_working_set_files",
                      "Entries used (mtime) within the window.", STATUS_CACHE_WORKING_SET_FILES);
        regret_family(f, status, "cachekeeper_cache_regret_stores",
                      "Stores of entries the daemon had evicted (misses the cap caused) within the window.",
                      regret_stores);
        regret_family(f, status, "cachekeeper_cache_regret_bytes", "Bytes of those stores within the window.",
                      regret_bytes);
        regret_family(f, status, "cachekeeper_cache_regret_share",
                      "Share of the last 7 days' stores that were of entries the daemon had evicted.", regret_share);
        writers_family(f, status, "cachekeeper_cache_writer_entries", "Entries written by a ccache version and namespace.",
                       STATUS_WRITER_ENTRIES);
        writers_family(f, status, "cachekeeper_cache_writer_bytes", "Bytes of the entries written by it.",
                       STATUS_WRITER_BYTES);
        writers_family(f, status, "cachekeeper_cache_writer_stores_24h", "Its stores over the last 24 hours.",
                       STATUS_WRITER_STORES_24H);
        writers_family(f, status, "cachekeeper_cache_writer_hits_24h",
                       "Hits of its entries over the last 24 hours (entries refreshed).", STATUS_WRITER_HITS_24H);
        regret_family(f, status, "cachekeeper_cache_suggested_max_size_bytes",
                      "A cap that would have kept 90 % of the evicted entries that came back within 7 days.",
                      suggested);
        alarm_family(f, status);
        for (size_t i = 0; i < ELEMENTSOF(volume_metrics); i++)
                family(f, status, STATUS_VOLUMES, "mountpoint", STATUS_VOLUME_MOUNT, &volume_metrics[i]);
        remote_families(f, status);
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}
