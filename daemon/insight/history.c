/* SPDX-License-Identifier: MIT */
/* cachectl history's rows, read from the activity rings; days summed from
 * hours. Pure. */
#include <assert.h>
#include <errno.h>

#include "insight/history.h"

static uint64_t add_sat64(uint64_t x, uint64_t n) {
        return n >= UINT64_MAX - x ? UINT64_MAX : x + n;
}

void history_row_from_activity(const ActivityRow *a, ProtocolHistoryRow *ret) {
        const ActivityCounts *c = &a->c;

        *ret = (ProtocolHistoryRow) {
                .start = a->start_sec,
                .seconds = a->seconds,
                .stores = c->n[ACTIVITY_STORE],
                .hits = c->n[ACTIVITY_CCACHE_HITS],
                .misses = c->n[ACTIVITY_CCACHE_MISSES],
                .refreshed = c->n[ACTIVITY_HIT],
                .evictions = c->n[ACTIVITY_EVICTION],
                .removals = c->n[ACTIVITY_REMOVAL],
                .stored_bytes = c->bytes[ACTIVITY_STORE],
                .evicted_bytes = c->bytes[ACTIVITY_EVICTION],
                .removed_bytes = c->bytes[ACTIVITY_REMOVAL],
                .regretted = c->n[ACTIVITY_REGRET],
                .regretted_bytes = c->bytes[ACTIVITY_REGRET],
                .uncacheable = c->n[ACTIVITY_CCACHE_UNCACHEABLE],
                .errors = c->n[ACTIVITY_CCACHE_ERRORS],
                .remote_hits = c->n[ACTIVITY_CCACHE_REMOTE_HITS],
                .remote_misses = c->n[ACTIVITY_CCACHE_REMOTE_MISSES],
                .remote_errors = c->n[ACTIVITY_CCACHE_REMOTE_ERRORS],
                .other_added_bytes = c->bytes[ACTIVITY_OTHER_ADDED],
                .other_removed_bytes = c->bytes[ACTIVITY_OTHER_REMOVED],
                .adjusted_up_bytes = c->bytes[ACTIVITY_ADJUSTED_UP],
                .adjusted_down_bytes = c->bytes[ACTIVITY_ADJUSTED_DOWN],
                .size_known = c->size_bytes != ACTIVITY_SIZE_UNKNOWN,
                .size_bytes = c->size_bytes != ACTIVITY_SIZE_UNKNOWN ? c->size_bytes : 0,
        };
}

/* Adds hour row h into day row d (its start and seconds already set). */
static void day_add(ActivityRow *d, const ActivityRow *h) {
        for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                d->c.n[k] = add_sat64(d->c.n[k], h->c.n[k]);
        for (size_t k = 0; k < _ACTIVITY_EVENT_MAX; k++)
                d->c.bytes[k] = add_sat64(d->c.bytes[k], h->c.bytes[k]);
        if (h->c.size_bytes != ACTIVITY_SIZE_UNKNOWN)
                d->c.size_bytes = h->c.size_bytes;
}

static void emit(const ActivityRow *r, history_row_t cb, void *userdata) {
        ProtocolHistoryRow row;

        history_row_from_activity(r, &row);
        cb(&row, userdata);
}

/* Day rows from the hour rows of it (which start at day boundaries). */
static int day_rows(ActivityIter *it, history_row_t cb, void *userdata) {
        ActivityRow h, day;
        bool have = false;
        int n = 0;

        while (activity_iter_next(it, &h)) {
                uint64_t start = h.start_sec / PROTOCOL_HISTORY_DAY * PROTOCOL_HISTORY_DAY;

                if (have && day.start_sec != start) {
                        emit(&day, cb, userdata);
                        n++;
                        have = false;
                }
                if (!have) {
                        day = (ActivityRow) { .start_sec = start, .seconds = PROTOCOL_HISTORY_DAY,
                                              .c.size_bytes = ACTIVITY_SIZE_UNKNOWN };
                        have = true;
                }
                day_add(&day, &h);
        }
        if (have) {
                emit(&day, cb, userdata);
                n++;
        }
        return n;
}

int history_rows(const Activity *a, usec_t now, unsigned seconds, unsigned count, history_row_t cb, void *userdata) {
        uint64_t bucket = now / USEC_PER_SEC / (seconds ? seconds : 1), first;
        ActivityIter it;
        ActivityRow r;
        int n = 0;

        assert(a && cb);
        if (count == 0 || count > protocol_history_max(seconds))
                return -EINVAL;
        first = bucket + 1 >= count ? bucket + 1 - count : 0;
        /* Days are read from the hour ring. */
        if (activity_iter_init(&it, a, first * seconds * USEC_PER_SEC, now + 1,
                               seconds == PROTOCOL_HISTORY_DAY ? ACTIVITY_HOUR_SEC : seconds) < 0)
                return -EINVAL;
        if (seconds == PROTOCOL_HISTORY_DAY)
                return day_rows(&it, cb, userdata);
        while (activity_iter_next(&it, &r)) {
                emit(&r, cb, userdata);
                n++;
        }
        return n;
}
