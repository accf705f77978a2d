/* SPDX-License-Identifier: MIT */
/* What the parts of views/report.h share: report-check.c (check),
 * report-metrics.c (metrics), report-history.c (history). */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

/* Is the cache object c (of a status's caches) in state ("unavailable",
 * "scanning", "trimming", ...)? */
bool report_cache_is(json_object *c, const char *state);
