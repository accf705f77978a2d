/* SPDX-License-Identifier: MIT */
/* The human view of a status object (`cachectl status`): a table of the
 * caches and one of the volumes, laid out by libsmartcols. Pure; linked into
 * cachectl. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

/* The view of status (the "result" of the status request): the caches'
 * table (CACHE, STATE, SIZE, / CAP, USE, FILES, HIT RATE, HIT 1h/24h, MODE),
 * each column as wide as its widest cell, never truncated ("no caches" for
 * none); a line per cache
 * that is unavailable (its reason) or still scanning; with detail, each
 * cache's working set, cap advice and writers; then, after a blank line,
 * the volumes' table (VOLUME, AVAIL, / TOTAL, FREE, ALERT, and a note when
 * one is filling or under pressure). The cap is shown as configured
 * (max_size_text, "1.5Ti"), else in format_size's form. With color, states
 * and alert levels carry ANSI colours (nothing else does). malloc'd, NULL on
 * ENOMEM. */
char *status_table(json_object *status, bool detail, bool color);
