/* SPDX-License-Identifier: MIT */
/* The rows of `cachectl history` from a cache's Activity: minute and hour
 * rows as the rings hold them, day rows (UTC days) each the sum of its
 * hours. Pure: reads the Activity, never changes it; no I/O, no clock. */
#pragma once

#include "base/protocol.h"
#include "insight/activity.h"

/* Called with each row, oldest first; row is borrowed for the call. */
typedef void (*history_row_t)(const ProtocolHistoryRow *row, void *userdata);

/* The last count rows of seconds each (PROTOCOL_HISTORY_MINUTE, _HOUR or
 * _DAY; count up to protocol_history_max) before realtime now: the rows of
 * the count buckets (days from UTC midnight) ending with the one now is
 * in, less those a never observed (before it first counted, or gone from
 * its rings). A day row sums the hours the hour ring holds of it, its size
 * that of its newest hour with a known size. Rows are read as a was last
 * moved (activity_advance): the newest may lag by the time since. Returns
 * the number of rows, or -EINVAL (bad seconds or count; cb never called). */
int history_rows(const Activity *a, usec_t now, unsigned seconds, unsigned count, history_row_t cb, void *userdata);

/* The wire form of one row of activity_iter_next (or a sum of them). */
void history_row_from_activity(const ActivityRow *a, ProtocolHistoryRow *ret);
