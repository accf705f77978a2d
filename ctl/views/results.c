/* SPDX-License-Identifier: MIT */
/* The results of trim, merge and history drawn as text (results.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/util.h"
#include "views/report.h"
#include "views/results.h"

/* "YYYY-MM-DD HH:MM (D ago)" of when, in local time, into buf. */
static void put_when(time_t when, time_t now, char *buf, size_t len) {
        char ago[32];

        strftime(buf, len, "%Y-%m-%d %H:%M", localtime(&when));
        format_duration((usec_t) (now - when) * USEC_PER_SEC, ago, sizeof(ago));
        snprintf(buf + strlen(buf), len - strlen(buf), " (%s ago)", ago);
}

/* What else a trim did, said when not 0: "; N what". */
static const struct {
        const char *key, *what;
} trim_counts[] = {
        { STATUS_TRIM_SAVED, "kept as used or changed since planning" },
        { STATUS_TRIM_LOCKED_DIRS, "directories left, locked by ccache" },
        { STATUS_TRIM_ERRORS, "errors (see the daemon's log)" },
};

/* The line of one cache's trim result, wrapped. */
static void put_trim(FILE *out, const char *name, json_object *r, time_t now) {
        time_t kept = (time_t) protocol_field_u64(r, STATUS_TRIM_OLDEST_KEPT_MTIME);
        bool dry = protocol_field_flag(r, STATUS_TRIM_DRY_RUN);
        char b1[32], b2[32], when[64] = "", line[1024] = "";
        FILE *f = fmemopen(line, sizeof(line), "w");

        if (!f)
                return;
        if (kept > 0)
                put_when(kept, now, when, sizeof(when));
        fprintf(f, "%s: %s %llu files, %s; %s %s", name, dry ? "would evict" : "evicted",
                (unsigned long long) protocol_field_u64(r, STATUS_TRIM_FILES),
                format_size(protocol_field_u64(r, STATUS_TRIM_BYTES), b1, sizeof(b1)), dry ? "leaving" : "now",
                format_size(dry ? protocol_field_u64(r, STATUS_TRIM_SIZE_BYTES) - protocol_field_u64(r, STATUS_TRIM_BYTES)
                                : protocol_field_u64(r, STATUS_TRIM_SIZE_BYTES), b2, sizeof(b2)));
        if (kept > 0)
                fprintf(f, "; oldest entry kept: %s", when);
        for (size_t i = 0; i < ELEMENTSOF(trim_counts); i++)
                if (protocol_field_u64(r, trim_counts[i].key))
                        fprintf(f, "; %llu %s", (unsigned long long) protocol_field_u64(r, trim_counts[i].key),
                                trim_counts[i].what);
        if (protocol_field_u64(r, STATUS_TRIM_BEYOND_TABLE_FILES))
                fprintf(f, "; may have missed some: %llu entries are of writers beyond the daemon's table, not looked at",
                        (unsigned long long) protocol_field_u64(r, STATUS_TRIM_BEYOND_TABLE_FILES));
        if (fclose(f) != 0)
                line[sizeof(line) - 1] = '\0';   /* cut: print what fits */
        print_wrapped(out, line, HUMAN_WIDTH, 2);
}

bool results_trim(FILE *f, json_object *result, time_t now) {
        bool failed = false;

        if (!json_object_is_type(result, json_type_object))
                return false;
        json_object_object_foreach(result, name, r) {
                if (!json_object_is_type(r, json_type_object))
                        continue;
                put_trim(f, name, r, now);
                failed |= protocol_field_u64(r, STATUS_TRIM_ERRORS) > 0;
        }
        return failed;
}

/* Field key of o, or otherwise when it has none. */
static const char *str_or(json_object *o, const char *key, const char *otherwise) {
        const char *s = protocol_field_str(o, key);

        return *s ? s : otherwise;
}

/* What the cap costs: "; to stay within INTO's cap the coldest of both go
 * first: N entries (S) evicted from INTO, M (T) of FROM dropped". */
static void put_cap(FILE *f, json_object *r, const char *from, const char *into, bool dry) {
        uint64_t ef = protocol_field_u64(r, STATUS_MERGE_EVICT_INTO_FILES), df = protocol_field_u64(r, STATUS_MERGE_DROP_FROM_FILES);
        char b1[32], b2[32], b3[32];

        if (ef + df == 0)
                return;
        fprintf(f, "To stay within %s's cap of %s, the coldest entries of both go first: %llu (%s) %s from %s, "
               "%llu (%s) of %s %s.\n", into,
               format_size(protocol_field_u64(r, STATUS_MERGE_INTO_MAX_SIZE_BYTES), b3, sizeof(b3)),
               (unsigned long long) ef, format_size(protocol_field_u64(r, STATUS_MERGE_EVICT_INTO_BYTES), b1, sizeof(b1)),
               dry ? "evicted" : "were evicted", into, (unsigned long long) df,
               format_size(protocol_field_u64(r, STATUS_MERGE_DROP_FROM_BYTES), b2, sizeof(b2)), from,
               dry ? "dropped, not moved" : "were dropped, not moved");
}

void results_merge_dry_run(FILE *f, json_object *r, const char *from, const char *into) {
        uint64_t files = protocol_field_u64(r, STATUS_MERGE_FILES_TOTAL) - protocol_field_u64(r, STATUS_MERGE_DROP_FROM_FILES);
        uint64_t bytes = protocol_field_u64(r, STATUS_MERGE_BYTES_TOTAL) - protocol_field_u64(r, STATUS_MERGE_DROP_FROM_BYTES);
        json_object *est = protocol_field_get(r, STATUS_MERGE_ESTIMATE_SECONDS);
        char b1[32], b2[32];

        fprintf(f, "Would merge %s into %s %s: %llu entries (%s) would move.\n", from, into,
               protocol_field_flag(r, STATUS_MERGE_SAME_FILESYSTEM) ? "by renames (one filesystem)"
                                                                     : "by copies across filesystems",
               (unsigned long long) files, format_size(bytes, b1, sizeof(b1)));
        put_cap(f, r, from, into, true);
        if (protocol_field_u64(r, STATUS_MERGE_MIXED_FILES))
                fprintf(f, "Key families differ: %llu entries (%s) of %s are named in a scheme no writer of %s uses: "
                       "no build there would hit them (--allow-mixed).\n",
                       (unsigned long long) protocol_field_u64(r, STATUS_MERGE_MIXED_FILES),
                       format_size(protocol_field_u64(r, STATUS_MERGE_MIXED_BYTES), b2, sizeof(b2)), from, into);
        if (est)
                fprintf(f, "It should take about %s (%s).\n",
                       format_duration((usec_t) (json_object_get_double(est) * USEC_PER_SEC) + USEC_PER_SEC, b2,
                                       sizeof(b2)),
                       protocol_field_flag(r, STATUS_MERGE_RATE_MEASURED) ? "at the rate the last merge measured"
                                                                           : "at a default rate: no merge measured yet");
}

bool results_merge(FILE *f, json_object *r, const char *from, const char *into) {
        const char *stopped = str_or(r, STATUS_MERGE_STOPPED, NULL);
        const char *from_path = str_or(r, STATUS_MERGE_FROM_PATH, from);
        const char *into_path = str_or(r, STATUS_MERGE_INTO_PATH, into);
        uint64_t left = protocol_field_u64(r, STATUS_MERGE_LEFT), errors = protocol_field_u64(r, STATUS_MERGE_ERRORS);
        uint64_t sparse = protocol_field_u64(r, STATUS_MERGE_SPARSE);
        char b1[32], b2[32];

        fprintf(f, "%s %s into %s: %llu entries (%s) moved, %llu already in %s (%s's copy removed)", stopped ? "Stopped merging" : "Merged",
               from, into, (unsigned long long) protocol_field_u64(r, STATUS_MERGE_MOVED),
               format_size(protocol_field_u64(r, STATUS_MERGE_MOVED_BYTES), b1, sizeof(b1)),
               (unsigned long long) protocol_field_u64(r, STATUS_MERGE_ALREADY), into, from);
        if (protocol_field_u64(r, STATUS_MERGE_SKIPPED))
                fprintf(f, ", %llu left as they changed meanwhile", (unsigned long long) protocol_field_u64(r, STATUS_MERGE_SKIPPED));
        if (protocol_field_u64(r, STATUS_MERGE_PUT_BACK))
                fprintf(f, ", %llu taken back to %s (a directory of %s was moved away meanwhile)",
                       (unsigned long long) protocol_field_u64(r, STATUS_MERGE_PUT_BACK), from, into);
        if (errors)
                fprintf(f, ", %llu errors (see the daemon's log)", (unsigned long long) errors);
        fprintf(f, " in %s.\n", format_duration((usec_t) (json_object_get_double(protocol_field_get(r, STATUS_MERGE_SECONDS)) * USEC_PER_SEC),
                                             b2, sizeof(b2)));
        put_cap(f, r, from, into, false);
        if (stopped)
                fprintf(f, "Stopped: %s. Run the same command again to finish.\n", stopped);
        if (sparse)
                fprintf(f, "%llu names in %s were never copied: sparse files (%s apparent size, beyond the blocks they "
                       "hold), which ccache never writes. They stay there; remove them by hand.\n",
                       (unsigned long long) sparse, from_path,
                       format_size(protocol_field_u64(r, STATUS_MERGE_SPARSE_BYTES), b1, sizeof(b1)));
        if (left > sparse) {
                fprintf(f, "%llu entries are still in %s (written meanwhile, or changed): run the same command again.\n",
                       (unsigned long long) (left - sparse), from);
                return true;
        }
        if (left > 0)
                return true;   /* the sparse files: said above */
        if (stopped || errors)
                return true;
        fprintf(f, "%s holds no entry any more; kept there: ccache.conf, CACHEDIR.TAG, the stats files (their size "
               "counters now 0), lock/ and tmp/.\n"
               "Now:\n"
               "  - remove the cache \"%s\" (path = \"%s\") from cachekeeper.conf, then: cachectl reload\n"
               "  - give the containers that used it %s where they had %s:\n"
               "      docker run -v %s:CONTAINER_CCACHE_DIR ...   (was: -v %s:CONTAINER_CCACHE_DIR)\n",
               from_path, from, from_path, into, from, into_path, from_path);
        return false;
}

/* One cache's history table. */
static void put_history(FILE *f, json_object *history, bool sparkline) {
        char *text = report_history(history, sparkline);

        if (!text) {
                fprintf(stderr, "cachectl: out of memory\n");
                return;
        }
        fputs(text, f);
        free(text);
}

void results_history(FILE *f, json_object *result, bool sparkline) {
        if (!protocol_field_get(result, PROTOCOL_HISTORY_CACHES)) {
                put_history(f, result, sparkline);
                return;
        }
        for (size_t i = 0; i < protocol_field_count(result, PROTOCOL_HISTORY_CACHES); i++) {
                if (i > 0)
                        fprintf(f, "\n");
                put_history(f, protocol_field_item(result, PROTOCOL_HISTORY_CACHES, i), sparkline);
        }
}
