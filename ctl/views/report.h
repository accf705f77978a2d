/* SPDX-License-Identifier: MIT */
/* What monitoring wants from a status object (the "result" of the status
 * request): the one-line verdict of `cachectl check` and the Prometheus text
 * of `cachectl metrics`; and the table of `cachectl history`. Pure (but for
 * the local time zone); linked into cachectl. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

typedef enum ReportLevel {
        REPORT_OK = 0,          /* monitoring-plugin exit statuses */
        REPORT_WARNING = 1,
        REPORT_CRITICAL = 2,
        REPORT_UNKNOWN = 3,
} ReportLevel;

/* A cache over its cap by this much more than the cap is critical, not a
 * warning: the daemon is not keeping up, or cannot evict. */
#define REPORT_OVER_CAP_CRITICAL 1.10

/* Judges status: volumes at warning or critical, filling up, or short of
 * min_free with empty caches; caches unavailable, over their cap (and not
 * trimming), or with a wrong mode. Writes "CACHEKEEPER OK - ..." (or
 * WARNING, CRITICAL) to buf, with performance data after a "|" (each
 * cache's size against its cap, each volume's available bytes against its
 * thresholds), and returns the level; REPORT_UNKNOWN when status has no
 * list of caches (what answered is not a cachekeeperd status). */
ReportLevel report_check(json_object *status, char *buf, size_t len);

/* The figures of status as Prometheus text exposition, malloc'd (NULL on
 * ENOMEM): cachekeeper_up 1 and cachekeeper_build_info first, then the
 * families of cachectl(1) METRICS. A cache that is unavailable or not yet
 * scanned has no samples of what it holds (sizes, files, ccache's counters,
 * working set, writers): absent, never 0. */
char *report_metrics(json_object *status);

/* The exposition when the daemon did not answer: cachekeeper_up 0 only. */
extern const char report_metrics_down[];

/* Columns of the history table: it fits in 80 columns. */
#define REPORT_HISTORY_WIDTH 80
#define REPORT_SPARK_LABEL "hit rate"

/* The history table of one cache's history object ({"cache":NAME,
 * "buckets":[ROW,...]}, PROTOCOL_HISTORY_*): a header line naming the
 * cache, the column titles, then one line per row: TIME (local time: HH:MM
 * for minute rows, MM-DD HH:MM for hours; a day row's UTC date, YYYY-MM-DD),
 * STORES, HITS, MISSES, HIT% ("-" without calls), EVICT, REMOVED, SIZE
 * (format_size, "-" when unknown). With sparkline, one more line: the hit
 * rate over the rows in blocks U+2581..U+2588 (a space for rows without
 * calls), adjacent rows merged so that it fits the width. malloc'd, NULL on
 * ENOMEM. */
char *report_history(json_object *history, bool sparkline);
