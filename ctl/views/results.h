/* SPDX-License-Identifier: MIT */
/* What a trim, a merge or a history request answered, drawn as text for a
 * person: the daemon's result objects (status-keys.h, PROTOCOL_HISTORY_*)
 * in, lines on f out. Pure but for f and, where a time is shown, the local
 * time zone. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <json-c/json.h>

/* One line per cache of a trim's result ({NAME: {files, bytes, size_bytes,
 * dry_run, oldest_kept_mtime, saved, locked_dirs, errors,
 * beyond_table_files}, ...}), wrapped at 80 columns: "NAME: evicted N
 * files, S; now T" ("would evict ...; leaving T" for a dry run), then the
 * oldest entry kept (its local time, and how long before now) and whatever
 * went otherwise. Returns whether a cache had errors (the command fails). */
bool results_trim(FILE *f, json_object *result, time_t now);

/* What a merge's dry run found: how it would move (renames or copies), how
 * much, what the cap would cost, entries of another key family, and about
 * how long it would take. */
void results_merge_dry_run(FILE *f, json_object *result, const char *from, const char *into);

/* What a merge did, what the cap cost, why it stopped or what it left;
 * after a whole merge, what to change now (FROM out of cachekeeper.conf,
 * the containers' -v). Returns whether it failed: stopped, errors, or
 * entries left in FROM. */
bool results_merge(FILE *f, json_object *result, const char *from, const char *into);

/* The history table of each cache a history result holds (one cache, or
 * {"caches": [...]}, a blank line between them): report_history's (a
 * table it has no memory for said on stderr instead). */
void results_history(FILE *f, json_object *result, bool sparkline);
