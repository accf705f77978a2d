/* SPDX-License-Identifier: MIT */
/* cachectl merge (merge.h). Exit status as trim: 0 done, 1 refused, stopped
 * or with errors, 2 usage, 3 the daemon unreachable. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "core/client.h"
#include "merge.h"

const struct option merge_options[] = {
        { "into", required_argument, NULL, 'i' },
        { "dry-run", no_argument, NULL, 'n' },
        { "allow-mixed", no_argument, NULL, 'm' },
        {},
};

static bool progress_shown;

/* Field key of o, or otherwise when it has none. */
static const char *str_or(json_object *o, const char *key, const char *otherwise) {
        const char *s = protocol_field_str(o, key);

        return *s ? s : otherwise;
}

static void show_progress(json_object *p) {
        char b1[32], b2[32];

        if (!json_object_is_type(p, json_type_object))
                return;
        fprintf(stderr, "\r\033[K%s %s into %s: %llu/%llu entries, %s/%s",
                strcmp(protocol_field_str(p, STATUS_MERGE_PHASE), "evicting") == 0 ? "making room to merge"
                                                                                           : "merging",
                str_or(p, STATUS_MERGE_FROM, "?"), str_or(p, STATUS_MERGE_INTO, "?"),
                (unsigned long long) protocol_field_u64(p, STATUS_MERGE_FILES_DONE),
                (unsigned long long) protocol_field_u64(p, STATUS_MERGE_FILES_TOTAL),
                format_size(protocol_field_u64(p, STATUS_MERGE_BYTES_DONE), b1, sizeof(b1)),
                format_size(protocol_field_u64(p, STATUS_MERGE_BYTES_TOTAL), b2, sizeof(b2)));
        if (protocol_field_u64(p, STATUS_MERGE_SPARSE))
                fprintf(stderr, ", %llu sparse files skipped", (unsigned long long) protocol_field_u64(p, STATUS_MERGE_SPARSE));
        progress_shown = true;
}

/* What the cap costs: "; to stay within INTO's cap the coldest of both go
 * first: N entries (S) evicted from INTO, M (T) of FROM dropped". */
static void print_cap(json_object *r, const char *from, const char *into, bool dry) {
        uint64_t ef = protocol_field_u64(r, STATUS_MERGE_EVICT_INTO_FILES), df = protocol_field_u64(r, STATUS_MERGE_DROP_FROM_FILES);
        char b1[32], b2[32], b3[32];

        if (ef + df == 0)
                return;
        printf("To stay within %s's cap of %s, the coldest entries of both go first: %llu (%s) %s from %s, "
               "%llu (%s) of %s %s.\n", into,
               format_size(protocol_field_u64(r, STATUS_MERGE_INTO_MAX_SIZE_BYTES), b3, sizeof(b3)),
               (unsigned long long) ef, format_size(protocol_field_u64(r, STATUS_MERGE_EVICT_INTO_BYTES), b1, sizeof(b1)),
               dry ? "evicted" : "were evicted", into, (unsigned long long) df,
               format_size(protocol_field_u64(r, STATUS_MERGE_DROP_FROM_BYTES), b2, sizeof(b2)), from,
               dry ? "dropped, not moved" : "were dropped, not moved");
}

static void print_dry_run(json_object *r, const char *from, const char *into) {
        uint64_t files = protocol_field_u64(r, STATUS_MERGE_FILES_TOTAL) - protocol_field_u64(r, STATUS_MERGE_DROP_FROM_FILES);
        uint64_t bytes = protocol_field_u64(r, STATUS_MERGE_BYTES_TOTAL) - protocol_field_u64(r, STATUS_MERGE_DROP_FROM_BYTES);
        json_object *est = protocol_field_get(r, STATUS_MERGE_ESTIMATE_SECONDS);
        char b1[32], b2[32];

        printf("Would merge %s into %s %s: %llu entries (%s) would move.\n", from, into,
               protocol_field_flag(r, STATUS_MERGE_SAME_FILESYSTEM) ? "by renames (one filesystem)"
                                                                     : "by copies across filesystems",
               (unsigned long long) files, format_size(bytes, b1, sizeof(b1)));
        print_cap(r, from, into, true);
        if (protocol_field_u64(r, STATUS_MERGE_MIXED_FILES))
                printf("Key families differ: %llu entries (%s) of %s are named in a scheme no writer of %s uses: "
                       "no build there would hit them (--allow-mixed).\n",
                       (unsigned long long) protocol_field_u64(r, STATUS_MERGE_MIXED_FILES),
                       format_size(protocol_field_u64(r, STATUS_MERGE_MIXED_BYTES), b2, sizeof(b2)), from, into);
        if (est)
                printf("It should take about %s (%s).\n",
                       format_duration((usec_t) (json_object_get_double(est) * USEC_PER_SEC) + USEC_PER_SEC, b2,
                                       sizeof(b2)),
                       protocol_field_flag(r, STATUS_MERGE_RATE_MEASURED) ? "at the rate the last merge measured"
                                                                           : "at a default rate: no merge measured yet");
}

/* The result of a real merge; returns whether it failed (exit 1). */
static bool print_result(json_object *r, const char *from, const char *into) {
        const char *stopped = str_or(r, STATUS_MERGE_STOPPED, NULL);
        const char *from_path = str_or(r, STATUS_MERGE_FROM_PATH, from);
        const char *into_path = str_or(r, STATUS_MERGE_INTO_PATH, into);
        uint64_t left = protocol_field_u64(r, STATUS_MERGE_LEFT), errors = protocol_field_u64(r, STATUS_MERGE_ERRORS);
        uint64_t sparse = protocol_field_u64(r, STATUS_MERGE_SPARSE);
        char b1[32], b2[32];

        printf("%s %s into %s: %llu entries (%s) moved, %llu already in %s (%s's copy removed)", stopped ? "Stopped merging" : "Merged",
               from, into, (unsigned long long) protocol_field_u64(r, STATUS_MERGE_MOVED),
               format_size(protocol_field_u64(r, STATUS_MERGE_MOVED_BYTES), b1, sizeof(b1)),
               (unsigned long long) protocol_field_u64(r, STATUS_MERGE_ALREADY), into, from);
        if (protocol_field_u64(r, STATUS_MERGE_SKIPPED))
                printf(", %llu left as they changed meanwhile", (unsigned long long) protocol_field_u64(r, STATUS_MERGE_SKIPPED));
        if (protocol_field_u64(r, STATUS_MERGE_PUT_BACK))
                printf(", %llu taken back to %s (a directory of %s was moved away meanwhile)",
                       (unsigned long long) protocol_field_u64(r, STATUS_MERGE_PUT_BACK), from, into);
        if (errors)
                printf(", %llu errors (see the daemon's log)", (unsigned long long) errors);
        printf(" in %s.\n", format_duration((usec_t) (json_object_get_double(protocol_field_get(r, STATUS_MERGE_SECONDS)) * USEC_PER_SEC),
                                             b2, sizeof(b2)));
        print_cap(r, from, into, false);
        if (stopped)
                printf("Stopped: %s. Run the same command again to finish.\n", stopped);
        if (sparse)
                printf("%llu names in %s were never copied: sparse files (%s apparent size, beyond the blocks they "
                       "hold), which ccache never writes. They stay there; remove them by hand.\n",
                       (unsigned long long) sparse, from_path,
                       format_size(protocol_field_u64(r, STATUS_MERGE_SPARSE_BYTES), b1, sizeof(b1)));
        if (left > sparse) {
                printf("%llu entries are still in %s (written meanwhile, or changed): run the same command again.\n",
                       (unsigned long long) (left - sparse), from);
                return true;
        }
        if (left > 0)
                return true;   /* the sparse files: said above */
        if (stopped || errors)
                return true;
        printf("%s holds no entry any more; kept there: ccache.conf, CACHEDIR.TAG, the stats files (their size "
               "counters now 0), lock/ and tmp/.\n"
               "Now:\n"
               "  - remove the cache \"%s\" (path = \"%s\") from cachekeeper.conf, then: cachectl reload\n"
               "  - give the containers that used it %s where they had %s:\n"
               "      docker run -v %s:CONTAINER_CCACHE_DIR ...   (was: -v %s:CONTAINER_CCACHE_DIR)\n",
               from_path, from, from_path, into, from, into_path, from_path);
        return false;
}

int cmd_merge(int argc, char **argv) {
        ProtocolMerge req = {};
        json_object *result = NULL;
        bool failed = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "", merge_options, NULL)) >= 0)
                switch (c) {
                case 'i': req.into = optarg; break;
                case 'n': req.dry_run = true; break;
                case 'm': req.allow_mixed = true; break;
                default: return ctl_usage_error("usage: cachectl merge FROM --into TO [--dry-run] [--allow-mixed]");
                }
        if (argc - optind != 1 || !req.into)
                return ctl_usage_error("usage: cachectl merge FROM --into TO [--dry-run] [--allow-mixed]");
        req.from = argv[optind];
        if (strcmp(req.from, req.into) == 0)
                return ctl_usage_error("a cache cannot be merged into itself");
        r = ctl_ask(protocol_encode_merge(&req), isatty(STDERR_FILENO) ? show_progress : NULL, &result);
        if (progress_shown)
                fprintf(stderr, "\r\033[K");
        if (r > 0 && json_object_is_type(result, json_type_object)) {
                if (req.dry_run)
                        print_dry_run(result, req.from, req.into);
                else
                        failed = print_result(result, req.from, req.into);
        }
        json_object_put(result);
        return r > 0 && failed ? CTL_EXIT_REFUSED : ctl_exit_status(r);
}
