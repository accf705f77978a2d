/* SPDX-License-Identifier: MIT */
/* cachectl status's tables, with libsmartcols: it sizes each column to its
 * widest cell (colour codes not counted) and aligns every row. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libsmartcols.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/util.h"
#include "views/status-table.h"

#define COLOR_GOOD "\033[32m"   /* green */
#define COLOR_BUSY "\033[33m"   /* yellow: working, or a warning */
#define COLOR_BAD "\033[1;31m"  /* bold red */

#define BAR_CELLS 8

typedef struct Column {
        const char *title;
        int flags;
} Column;

enum { C_CACHE, C_STATE, C_SIZE, C_CAP, C_USE, C_FILES, C_RATE, C_WINDOW, C_MODE };
static const Column cache_columns[] = {
        [C_CACHE] = { "CACHE", 0 },
        [C_STATE] = { "STATE", 0 },
        [C_SIZE] = { "SIZE", SCOLS_FL_RIGHT },
        [C_CAP] = { "/ CAP", 0 },
        [C_USE] = { "USE", 0 },
        [C_FILES] = { "FILES", SCOLS_FL_RIGHT },
        [C_RATE] = { "HIT RATE", SCOLS_FL_RIGHT },
        [C_WINDOW] = { "HIT 1h/24h", SCOLS_FL_RIGHT },
        [C_MODE] = { "MODE", 0 },
};

enum { V_VOLUME, V_AVAIL, V_TOTAL, V_FREE, V_ALERT, V_NOTE };
static const Column volume_columns[] = {
        [V_VOLUME] = { "VOLUME", 0 },
        [V_AVAIL] = { "AVAIL", SCOLS_FL_RIGHT },
        [V_TOTAL] = { "/ TOTAL", 0 },
        [V_FREE] = { "FREE", SCOLS_FL_RIGHT },
        [V_ALERT] = { "ALERT", 0 },
        [V_NOTE] = { "NOTE", 0 },
};

enum { R_REMOTE, R_STATE, R_AGE, R_USED, R_MAX, R_POLICY, R_KEYS, R_EVICTED, R_WHERE };
static const Column remote_columns[] = {
        [R_REMOTE] = { "REMOTE", 0 },
        [R_STATE] = { "STATE", 0 },
        [R_AGE] = { "AGE", SCOLS_FL_RIGHT },
        [R_USED] = { "USED", SCOLS_FL_RIGHT },
        [R_MAX] = { "/ MAX", 0 },
        [R_POLICY] = { "POLICY", 0 },
        [R_KEYS] = { "CCACHE KEYS", SCOLS_FL_RIGHT },
        [R_EVICTED] = { "EVICTED", SCOLS_FL_RIGHT },
        [R_WHERE] = { "URL", 0 },
};

/* A table of n columns printing to f, colours on or off, laid out for no
 * terminal: as wide as its content, whatever the terminal's width (the
 * same on a terminal and in a pipe; nothing truncated or wrapped). */
static struct libscols_table *table_new(FILE *f, const Column *columns, size_t n, bool color) {
        struct libscols_table *tb = scols_new_table();

        if (!tb)
                return NULL;
        if (scols_table_set_stream(tb, f) < 0 || scols_table_enable_colors(tb, color) < 0 ||
            scols_table_set_termforce(tb, SCOLS_TERMFORCE_NEVER) < 0 ||
            scols_table_enable_minout(tb, true) < 0)   /* no blanks after a row's last cell */
                goto fail;
        for (size_t i = 0; i < n; i++)
                if (!scols_table_new_column(tb, columns[i].title, 0, columns[i].flags))
                        goto fail;
        return tb;
fail:
        scols_unref_table(tb);
        return NULL;
}

/* Sets cell i of ln to the printf-formatted text, coloured color (NULL:
 * none). Returns 0 or -ENOMEM. */
_printf_(4, 5)
static int cell(struct libscols_line *ln, size_t i, const char *color, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (scols_line_set_data(ln, i, buf) < 0)
                return -ENOMEM;
        if (color && scols_cell_set_color(scols_line_get_cell(ln, i), color) < 0)
                return -ENOMEM;
        return 0;
}

/* "[######--]" for used of cap; '!' for the closing bracket past the cap. */
static void bar(uint64_t used, uint64_t cap, char *buf) {
        size_t full = cap ? (size_t) ((double) used / (double) cap * BAR_CELLS + 0.5) : 0;

        buf[0] = '[';
        for (size_t i = 0; i < BAR_CELLS; i++)
                buf[1 + i] = i < full ? '#' : '-';
        buf[BAR_CELLS + 1] = used > cap ? '!' : ']';
        buf[BAR_CELLS + 2] = '\0';
}

/* A hit rate field as a whole percent, "-" when null (no cacheable calls). */
static const char *hit_percent(json_object *c, const char *key, char *buf, size_t size) {
        json_object *v = protocol_field_get(c, key);

        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return "-";
        snprintf(buf, size, "%.0f%%", 100.0 * json_object_get_double(v));
        return buf;
}

static const char *state_color(const char *state) {
        if (strcmp(state, "ok") == 0)
                return COLOR_GOOD;
        if (strcmp(state, "over_cap") == 0 || strcmp(state, "unavailable") == 0)
                return COLOR_BAD;
        return COLOR_BUSY;   /* scanning, trimming */
}

static const char *level_color(const char *level) {
        return strcmp(level, "ok") == 0 ? COLOR_GOOD : strcmp(level, "warning") == 0 ? COLOR_BUSY : COLOR_BAD;
}

/* The cap as configured ("1.5Ti"), else as format_size prints it (a daemon
 * from before max_size_text). */
static const char *cap_text(json_object *c, char *buf, size_t size) {
        const char *t = protocol_field_str(c, STATUS_CACHE_MAX_SIZE_TEXT);

        return *t ? t : format_size(protocol_field_u64(c, STATUS_CACHE_MAX_SIZE_BYTES), buf, size);
}

static int cache_row(struct libscols_table *tb, json_object *c) {
        struct libscols_line *ln = scols_table_new_line(tb, NULL);
        const char *state = protocol_field_str(c, STATUS_CACHE_STATE);
        uint64_t size = protocol_field_u64(c, STATUS_CACHE_SIZE_BYTES);
        uint64_t cap = protocol_field_u64(c, STATUS_CACHE_MAX_SIZE_BYTES);
        uint64_t hits = protocol_field_u64(c, STATUS_CACHE_HITS), misses = protocol_field_u64(c, STATUS_CACHE_MISSES);
        bool gone = strcmp(state, "unavailable") == 0, wrong = !gone && protocol_field_false(c, STATUS_CACHE_MODE_OK);
        char s[32], k[32], b[BAR_CELLS + 3], h1[16], h24[16];
        int r;

        if (!ln)
                return -ENOMEM;
        bar(size, cap, b);
        if ((r = cell(ln, C_CACHE, NULL, "%s", protocol_field_str(c, STATUS_CACHE_NAME))) < 0 ||
            (r = cell(ln, C_STATE, state_color(state), "%s", state)) < 0 ||
            (r = cell(ln, C_CAP, NULL, "/ %s", cap_text(c, k, sizeof(k)))) < 0 ||
            (r = cell(ln, C_MODE, wrong ? COLOR_BAD : NULL, "%s%s", protocol_field_str(c, STATUS_CACHE_MODE),
                      wrong ? " (wrong!)" : "")) < 0)
                return r;
        if (gone) {   /* nothing counted: dashes, and the reason under the table */
                static const size_t counted[] = { C_SIZE, C_USE, C_FILES, C_RATE, C_WINDOW };

                for (size_t i = 0; i < ELEMENTSOF(counted); i++)
                        if ((r = cell(ln, counted[i], NULL, "-")) < 0)
                                return r;
                return 0;
        }
        if ((r = cell(ln, C_SIZE, NULL, "%s", format_size(size, s, sizeof(s)))) < 0 ||
            (r = cell(ln, C_USE, NULL, "%s %3.0f%%", b, cap ? 100.0 * (double) size / (double) cap : 0.0)) < 0 ||
            (r = cell(ln, C_FILES, NULL, "%llu", (unsigned long long) protocol_field_u64(c, STATUS_CACHE_FILES))) < 0)
                return r;
        if (hits + misses)
                r = cell(ln, C_RATE, NULL, "%.1f%%", 100.0 * (double) hits / (double) (hits + misses));
        else
                r = cell(ln, C_RATE, NULL, "-");
        if (r < 0)
                return r;
        return cell(ln, C_WINDOW, NULL, "%s/%s", hit_percent(c, STATUS_CACHE_HIT_RATE_1H, h1, sizeof(h1)),
                    hit_percent(c, STATUS_CACHE_HIT_RATE_24H, h24, sizeof(h24)));
}

/* What the table's row cannot say: why a cache is unavailable, how far
 * its scan has come. */
static void cache_notes(FILE *f, json_object *c) {
        const char *state = protocol_field_str(c, STATUS_CACHE_STATE);
        json_object *scan = protocol_field_get(c, STATUS_CACHE_SCAN);

        char line[2048];

        if (strcmp(state, "unavailable") == 0) {
                snprintf(line, sizeof(line), "%s: unavailable: %s", protocol_field_str(c, STATUS_CACHE_NAME),
                         protocol_field_str(c, STATUS_CACHE_REASON));
                print_wrapped(f, line, HUMAN_WIDTH, 2);
        }
        else if (strcmp(state, "scanning") == 0 && protocol_field_flag(scan, STATUS_SCAN_RUNNING) &&
                 protocol_field_u64(scan, STATUS_SCAN_FILES) > 0)
                fprintf(f, "%s: scanning: %llu files in %llu directories so far\n",
                        protocol_field_str(c, STATUS_CACHE_NAME),
                        (unsigned long long) protocol_field_u64(scan, STATUS_SCAN_FILES),
                        (unsigned long long) protocol_field_u64(scan, STATUS_SCAN_DIRS));
}

/* The detail of a named cache, under the table: its working set (the
 * entries used within each window), cap advice, writers. */
static void cache_detail(FILE *f, json_object *c) {
        static const char *const windows[] = {
                STATUS_WINDOW_1H, STATUS_WINDOW_24H, STATUS_WINDOW_7D, STATUS_WINDOW_30D,
        };
        json_object *bytes = protocol_field_get(c, STATUS_CACHE_WORKING_SET_BYTES);
        char s[ELEMENTSOF(windows)][32];

        if (!bytes || strcmp(protocol_field_str(c, STATUS_CACHE_STATE), "unavailable") == 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(windows); i++)
                format_size(protocol_field_u64(bytes, windows[i]), s[i], sizeof(s[i]));
        fprintf(f, "  working set 1h/24h/7d/30d: %s/%s/%s/%s\n", s[0], s[1], s[2], s[3]);
        if (*protocol_field_str(c, STATUS_CACHE_CAP_ADVICE)) {
                char line[2048];

                snprintf(line, sizeof(line), "  %s", protocol_field_str(c, STATUS_CACHE_CAP_ADVICE));
                print_wrapped(f, line, HUMAN_WIDTH, 4);
        }
        for (size_t i = 0; i < protocol_field_count(c, STATUS_CACHE_WRITERS); i++) {
                json_object *w = protocol_field_item(c, STATUS_CACHE_WRITERS, i);
                const char *version = protocol_field_str(w, STATUS_WRITER_CCACHE_VERSION);
                const char *ns = protocol_field_str(w, STATUS_WRITER_NAMESPACE);
                char size[32], who[600], line[1024];

                if (*version)
                        snprintf(who, sizeof(who), "written by %s%s%s%s", version, *ns ? " (namespace " : "", ns,
                                 *ns ? ")" : "");
                else
                        snprintf(who, sizeof(who), "header %s", protocol_field_str(w, STATUS_WRITER_HEADER));
                /* "refreshed": what the daemon sees of a hit is the entry files whose
                 * time ccache refreshed (a manifest and a result for a direct hit),
                 * not ccache's count of hits */
                snprintf(line, sizeof(line), "  %s: %llu entries, %s; 24h: %llu stores, %llu refreshed", who,
                         (unsigned long long) protocol_field_u64(w, STATUS_WRITER_ENTRIES),
                         format_size(protocol_field_u64(w, STATUS_WRITER_BYTES), size, sizeof(size)),
                         (unsigned long long) protocol_field_u64(w, STATUS_WRITER_STORES_24H),
                         (unsigned long long) protocol_field_u64(w, STATUS_WRITER_HITS_24H));
                print_wrapped(f, line, HUMAN_WIDTH, 4);
        }
}

static int volume_row(struct libscols_table *tb, json_object *v, bool notes) {
        struct libscols_line *ln = scols_table_new_line(tb, NULL);
        uint64_t total = protocol_field_u64(v, STATUS_VOLUME_TOTAL_BYTES);
        uint64_t avail = protocol_field_u64(v, STATUS_VOLUME_AVAIL_BYTES);
        uint64_t full = protocol_field_u64(v, STATUS_VOLUME_FULL_IN_SECONDS);
        const char *alert = protocol_field_str(v, STATUS_VOLUME_ALERT);
        char s1[32], s2[32], in[32], note[128] = "";
        int r;

        if (!ln)
                return -ENOMEM;
        if (full > 0)
                snprintf(note, sizeof(note), "full in ~%s", format_duration(full * USEC_PER_SEC, in, sizeof(in)));
        if (protocol_field_flag(v, STATUS_VOLUME_PRESSURE))
                snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sbelow min_free: evicting",
                         *note ? "; " : "");
        if ((r = cell(ln, V_VOLUME, NULL, "%s", protocol_field_str(v, STATUS_VOLUME_MOUNT))) < 0 ||
            (r = cell(ln, V_AVAIL, NULL, "%s", format_size(avail, s1, sizeof(s1)))) < 0 ||
            (r = cell(ln, V_TOTAL, NULL, "/ %s", format_size(total, s2, sizeof(s2)))) < 0 ||
            (r = cell(ln, V_FREE, NULL, "%.1f%%", total ? 100.0 * (double) avail / (double) total : 0.0)) < 0 ||
            (r = cell(ln, V_ALERT, level_color(alert), "%s", alert)) < 0)
                return r;
        return notes ? cell(ln, V_NOTE, NULL, "%s", note) : 0;
}

/* A share's (a file: remote's) figures in the remote columns: its size
 * against its cap, the clock its LRU goes by, its entries and evictions. */
static int share_cells(struct libscols_line *ln, json_object *rm) {
        char s1[32], s2[32];
        int r;

        if ((r = cell(ln, R_USED, NULL, "%s",
                      format_size(protocol_field_u64(rm, STATUS_SHARE_SIZE_BYTES), s1, sizeof(s1)))) < 0 ||
            (r = cell(ln, R_MAX, NULL, "/ %s",
                      format_size(protocol_field_u64(rm, STATUS_SHARE_MAX_SIZE_BYTES), s2, sizeof(s2)))) < 0 ||
            (r = cell(ln, R_POLICY, NULL, "lru:%s%s", protocol_field_str(rm, STATUS_SHARE_CLOCK),
                      strcmp(protocol_field_str(rm, STATUS_SHARE_WATCH), "poll") == 0 ? " (polled)" : "")) < 0 ||
            (r = cell(ln, R_KEYS, NULL, "%llu",
                      (unsigned long long) protocol_field_u64(rm, STATUS_SHARE_ENTRY_FILES))) < 0)
                return r;
        return cell(ln, R_EVICTED, NULL, "%llu",
                    (unsigned long long) protocol_field_u64(rm, STATUS_SHARE_EVICTED_FILES_TOTAL));
}

/* A remote's row: a redis one's memory against its maxmemory, policy, keys
 * and evictions once polled, a share's size against its cap; the URL in
 * every case (its last error: a line under the table, remote_notes). */
static int remote_row(struct libscols_table *tb, json_object *rm) {
        struct libscols_line *ln = scols_table_new_line(tb, NULL);
        const char *state = protocol_field_str(rm, STATUS_REMOTE_STATE);
        bool polled = strcmp(protocol_field_str(rm, STATUS_REMOTE_KIND), "redis") == 0 &&
                      protocol_field_get(rm, STATUS_REDIS_USED_MEMORY_BYTES) != NULL;
        uint64_t max = protocol_field_u64(rm, STATUS_REDIS_MAXMEMORY_BYTES), age;
        char s1[32], s2[32];
        int r;

        if (!ln)
                return -ENOMEM;
        if ((r = cell(ln, R_REMOTE, NULL, "%s", protocol_field_str(rm, STATUS_REMOTE_NAME))) < 0 ||
            (r = cell(ln, R_STATE, state_color(strcmp(state, "unreachable") == 0 || strcmp(state, "refused") == 0
                                                       ? "unavailable" : state), "%s", state)) < 0 ||
            (r = cell(ln, R_WHERE, NULL, "%s", protocol_field_str(rm, STATUS_REMOTE_URL))) < 0)
                return r;
        if (strcmp(protocol_field_str(rm, STATUS_REMOTE_KIND), "file") == 0 && strcmp(state, "unavailable") != 0)
                return share_cells(ln, rm);
        if (!polled)
                return 0;
        /* How old the figures are: a round that hangs, a server gone. */
        age = protocol_field_u64(rm, STATUS_REDIS_FIGURES_AGE_SECONDS);
        if ((r = cell(ln, R_AGE, NULL, "%s", age ? format_duration(age * USEC_PER_SEC, s1, sizeof(s1)) : "0s")) < 0 ||
            (r = cell(ln, R_USED, NULL, "%s",
                      format_size(protocol_field_u64(rm, STATUS_REDIS_USED_MEMORY_BYTES), s1, sizeof(s1)))) < 0 ||
            (r = cell(ln, R_MAX, NULL, "/ %s", max ? format_size(max, s2, sizeof(s2)) : "no max")) < 0 ||
            (r = cell(ln, R_POLICY, NULL, "%s", *protocol_field_str(rm, STATUS_REDIS_POLICY)
                                                        ? protocol_field_str(rm, STATUS_REDIS_POLICY)
                                                        : "unknown")) < 0 ||
            (r = protocol_field_get(rm, STATUS_REDIS_CCACHE_KEYS)   /* null: the last SCAN stopped short */
                         ? cell(ln, R_KEYS, NULL, "%llu",
                                (unsigned long long) protocol_field_u64(rm, STATUS_REDIS_CCACHE_KEYS))
                         : cell(ln, R_KEYS, NULL, "-")) < 0)
                return r;
        return cell(ln, R_EVICTED, NULL, "%llu",
                    (unsigned long long) protocol_field_u64(rm, STATUS_REDIS_EVICTED_KEYS_TOTAL));
}

static int remotes_part(FILE *f, json_object *status, bool color) {
        size_t n = protocol_field_count(status, STATUS_REMOTES);
        struct libscols_table *tb;
        int r = 0;

        if (n == 0)
                return 0;
        if (!(tb = table_new(f, remote_columns, ELEMENTSOF(remote_columns), color)))
                return -ENOMEM;
        for (size_t i = 0; i < n && r == 0; i++)
                r = remote_row(tb, protocol_field_item(status, STATUS_REMOTES, i));
        fputc('\n', f);
        if (r == 0 && scols_print_table(tb) < 0)
                r = -ENOMEM;
        scols_unref_table(tb);
        /* Each remote's last error under the table, wrapped: a row stays in 80
         * columns however long the error. */
        for (size_t i = 0; i < n && r == 0; i++) {
                json_object *rm = protocol_field_item(status, STATUS_REMOTES, i);
                const char *err = protocol_field_str(rm, STATUS_REMOTE_LAST_ERROR);
                char line[2048];

                if (!*err)
                        continue;
                snprintf(line, sizeof(line), "%s: %s", protocol_field_str(rm, STATUS_REMOTE_NAME), err);
                print_wrapped(f, line, HUMAN_WIDTH, 2);
        }
        return r;
}

static int caches_part(FILE *f, json_object *status, bool detail, bool color) {
        size_t n = protocol_field_count(status, STATUS_CACHES);
        struct libscols_table *tb = table_new(f, cache_columns, ELEMENTSOF(cache_columns), color);
        int r = 0;

        if (!tb)
                return -ENOMEM;
        if (n == 0)   /* libsmartcols prints nothing, not even the titles */
                fputs("no caches\n", f);
        for (size_t i = 0; i < n && r == 0; i++)
                r = cache_row(tb, protocol_field_item(status, STATUS_CACHES, i));
        if (r == 0 && scols_print_table(tb) < 0)
                r = -ENOMEM;
        scols_unref_table(tb);
        for (size_t i = 0; i < n && r == 0; i++)
                cache_notes(f, protocol_field_item(status, STATUS_CACHES, i));
        for (size_t i = 0; i < n && r == 0 && detail; i++)
                cache_detail(f, protocol_field_item(status, STATUS_CACHES, i));
        return r;
}

static int volumes_part(FILE *f, json_object *status, bool color) {
        size_t n = protocol_field_count(status, STATUS_VOLUMES);
        struct libscols_table *tb;
        bool notes = false;
        int r = 0;

        if (n == 0)
                return 0;
        /* The note column only when there is a note: no trailing blanks. */
        for (size_t i = 0; i < n; i++) {
                json_object *v = protocol_field_item(status, STATUS_VOLUMES, i);
                notes |= protocol_field_u64(v, STATUS_VOLUME_FULL_IN_SECONDS) > 0 ||
                         protocol_field_flag(v, STATUS_VOLUME_PRESSURE);
        }
        if (!(tb = table_new(f, volume_columns, ELEMENTSOF(volume_columns) - !notes, color)))
                return -ENOMEM;
        for (size_t i = 0; i < n && r == 0; i++)
                r = volume_row(tb, protocol_field_item(status, STATUS_VOLUMES, i), notes);
        fputc('\n', f);
        if (r == 0 && scols_print_table(tb) < 0)
                r = -ENOMEM;
        scols_unref_table(tb);
        return r;
}

char *status_table(json_object *status, bool detail, bool color) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        int r;

        if (!f)
                return NULL;
        r = caches_part(f, status, detail, color);
        if (r == 0)
                r = volumes_part(f, status, color);
        if (r == 0)
                r = remotes_part(f, status, color);
        if (fclose(f) != 0 || r < 0) {
                free(out);
                return NULL;
        }
        return out;
}
