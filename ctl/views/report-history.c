/* SPDX-License-Identifier: MIT */
/* cachectl history (views/report.h): a cache's history object as a table
 * of 80 columns, and its hit rate as a sparkline. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/human.h"
#include "base/protocol.h"
#include "views/report.h"

#define HISTORY_TIME_WIDTH 11           /* "MM-DD HH:MM" */
/* A row of the table: 80 columns at most with every figure of its usual
 * width (HISTORY_HEAD the same widths). */
#define HISTORY_COLUMNS "%-*s %7llu %7llu %7llu %4s %6llu %6llu %7llu %7s %8s"
#define HISTORY_HEAD    "%-*s %7s %7s %7s %4s %6s %6s %7s %7s %8s"

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

/* The OTHER column: the rest of a row's change of size (files that are
 * no entries, entries changed with no store, eviction or removal), signed:
 * "+1.2M", "-3.4k", "0". */
static const char *history_other(json_object *row, char *buf, size_t size) {
        uint64_t up = protocol_field_u64(row, PROTOCOL_ROW_OTHER_ADDED_BYTES) +
                      protocol_field_u64(row, PROTOCOL_ROW_ADJUSTED_UP_BYTES);
        uint64_t down = protocol_field_u64(row, PROTOCOL_ROW_OTHER_REMOVED_BYTES) +
                        protocol_field_u64(row, PROTOCOL_ROW_ADJUSTED_DOWN_BYTES);
        char n[32];

        if (up == down)
                return "0";
        format_size(up > down ? up - down : down - up, n, sizeof(n));
        snprintf(buf, size, "%c%s", up > down ? '+' : '-', n);
        return buf;
}

static void history_line(FILE *f, json_object *row) {
        uint64_t hits = protocol_field_u64(row, PROTOCOL_ROW_HITS), misses = protocol_field_u64(row, PROTOCOL_ROW_MISSES);
        char when[32], rate[16], size[32], other[40];

        history_time(protocol_field_u64(row, PROTOCOL_ROW_START), protocol_field_u64(row, PROTOCOL_ROW_SECONDS), when,
                     sizeof(when));
        if (json_object_is_type(protocol_field_get(row, PROTOCOL_ROW_SIZE_BYTES), json_type_int))
                format_size(protocol_field_u64(row, PROTOCOL_ROW_SIZE_BYTES), size, sizeof(size));
        else
                snprintf(size, sizeof(size), "-");
        fprintf(f, HISTORY_COLUMNS "\n", HISTORY_TIME_WIDTH, when,
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_STORES), (unsigned long long) hits,
                (unsigned long long) misses, history_percent(hits, misses, rate, sizeof(rate)),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_EVICTIONS),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_REGRETTED),
                (unsigned long long) protocol_field_u64(row, PROTOCOL_ROW_REMOVALS),
                history_other(row, other, sizeof(other)), size);
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
                fprintf(f, HISTORY_HEAD "\n", HISTORY_TIME_WIDTH, "TIME", "STORES", "HITS", "MISSES", "HIT%",
                        "EVICT", "REGRET", "REMOVED", "OTHER", "SIZE");
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
