/* SPDX-License-Identifier: MIT */
/* The progress line of a trim or a merge (progress.h): drawing only. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "views/progress.h"

/* Erases the line the cursor is on, from its start. */
#define ERASE_LINE "\r\033[K"

static bool shown;

void progress_trim(json_object *progress) {
        char line[512] = "";
        size_t n = 0;

        if (!json_object_is_type(progress, json_type_object))
                return;
        json_object_object_foreach(progress, name, r) {
                char b1[32], b2[32];
                n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%s: %llu/%llu files, %s/%s",
                                       n ? "; " : "", name,
                                       (unsigned long long) protocol_field_u64(r, STATUS_TRIM_FILES),
                                       (unsigned long long) protocol_field_u64(r, STATUS_TRIM_PLANNED_FILES),
                                       format_size(protocol_field_u64(r, STATUS_TRIM_BYTES), b1, sizeof(b1)),
                                       format_size(protocol_field_u64(r, STATUS_TRIM_PLANNED_BYTES), b2, sizeof(b2)));
                if (n >= sizeof(line))
                        break;
        }
        fprintf(stderr, ERASE_LINE "trimming %s", line);
        shown = true;
}

/* Field key of o, or "?" when it has none. */
static const char *str_or_unknown(json_object *o, const char *key) {
        const char *s = protocol_field_str(o, key);

        return *s ? s : "?";
}

void progress_merge(json_object *p) {
        char b1[32], b2[32];

        if (!json_object_is_type(p, json_type_object))
                return;
        fprintf(stderr, ERASE_LINE "%s %s into %s: %llu/%llu entries, %s/%s",
                strcmp(protocol_field_str(p, STATUS_MERGE_PHASE), "evicting") == 0 ? "making room to merge"
                                                                                           : "merging",
                str_or_unknown(p, STATUS_MERGE_FROM), str_or_unknown(p, STATUS_MERGE_INTO),
                (unsigned long long) protocol_field_u64(p, STATUS_MERGE_FILES_DONE),
                (unsigned long long) protocol_field_u64(p, STATUS_MERGE_FILES_TOTAL),
                format_size(protocol_field_u64(p, STATUS_MERGE_BYTES_DONE), b1, sizeof(b1)),
                format_size(protocol_field_u64(p, STATUS_MERGE_BYTES_TOTAL), b2, sizeof(b2)));
        if (protocol_field_u64(p, STATUS_MERGE_SPARSE))
                fprintf(stderr, ", %llu sparse files skipped", (unsigned long long) protocol_field_u64(p, STATUS_MERGE_SPARSE));
        shown = true;
}

void progress_end(void) {
        if (shown)
                fprintf(stderr, ERASE_LINE);
        shown = false;
}
