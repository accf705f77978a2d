/* SPDX-License-Identifier: MIT */
/* The progress line of a trim or a merge on a terminal: the daemon's
 * progress objects (status-keys.h) drawn on one line of stderr, redrawn in
 * place ("\r", erase the line), and erased at the end. Each draw function
 * is a ctl_progress_t (core/client.h); the caller passes one only when
 * stderr is a terminal. */
#pragma once

#include <json-c/json.h>

/* "trimming NAME: F/PF files, B/PB; NAME2: ..." for a trim's progress
 * ({NAME: {files, planned_files, bytes, planned_bytes}, ...}). */
void progress_trim(json_object *progress);

/* "merging FROM into TO: F/T entries, B/T" ("making room to merge" while
 * it evicts), and the sparse files it skipped, for a merge's progress. */
void progress_merge(json_object *progress);

/* Erases the progress line when one was drawn. */
void progress_end(void);
