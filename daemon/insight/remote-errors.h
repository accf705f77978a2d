/* SPDX-License-Identifier: MIT */
/* remote-errors of one cache: ccache counts each failed or timed-out
 * remote storage call in the cache's stats (remote_storage_error,
 * remote_storage_timeout), which the activity buckets turn into
 * ACTIVITY_CCACHE_REMOTE_ERRORS. The alarm fires when the buckets that
 * start in (now - window, now] hold any, and recovers once a whole window
 * holds none. Pure: no I/O, no clock reads, never logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insight/activity.h"
#include "insight/alarm.h"

/* ccache's remote storage errors and timeouts counted in a's buckets that
 * start in (now - window, now]; remote hits and misses too when the
 * pointers are not NULL. */
uint64_t remote_errors_count(const Activity *a, usec_t window, usec_t now, uint64_t *ret_hits, uint64_t *ret_misses);

/* Evaluates remote-errors of the cache name at now, updating *standing. On
 * ALARM_FIRE or ALARM_RECOVER writes one line into msg (len bytes). */
AlarmEvent remote_errors_check(bool *standing, const Activity *a, usec_t window, const char *name, usec_t now,
                               char *msg, size_t len);
