/* SPDX-License-Identifier: MIT */
/* One cache's activity in time buckets: what the daemon saw (stores, hits,
 * evictions, external removals) and ccache's own counters as deltas, in
 * 1-minute buckets for the last 24 h and 1-hour buckets for the last 90 days.
 * Pure: fixed rings allocated once, no I/O, no clock reads (now is realtime
 * usec, passed in), never logs.
 *
 * Memory: sizeof(Activity) = 519,112 bytes per cache on x86-64
 * (3600 buckets of 144 bytes, the counter baseline and a few words); nothing
 * is allocated after activity_new. test-activity checks the figure.
 *
 * A bucket's parts add up to its change of size: size_bytes at its end less
 * that at the end of the one before is stored + adjusted_up + other_added -
 * evicted - removed - adjusted_down - other_removed (bytes), as long as the
 * caller counts each change of size in the bucket it sets the size in
 * (cache-activity.c: cache_activity_balance). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define ACTIVITY_MINUTES 1440U          /* 24 h of 1-minute buckets */
#define ACTIVITY_HOURS   2160U          /* 90 days of 1-hour buckets */
#define ACTIVITY_MINUTE_SEC 60U
#define ACTIVITY_HOUR_SEC   3600U
/* A bucket's size_bytes before any size was known (history shows null). */
#define ACTIVITY_SIZE_UNKNOWN UINT64_MAX
/* How many of ccache's counters activity_counters reads (0..84: ccache
 * 4.12+ writes 85 lines; CcacheStats.counters is longer, pass it as is). */
#define ACTIVITY_CCACHE_TOTALS 85U

typedef enum ActivityKind {
        /* Seen by the daemon; these carry bytes too. */
        ACTIVITY_STORE,                 /* a new entry appeared */
        ACTIVITY_HIT,                   /* an entry's timestamps were refreshed by ccache */
        ACTIVITY_EVICTION,              /* removed by the daemon (entries, stale temporaries) */
        ACTIVITY_REMOVAL,               /* removed by someone else (ccache's cleanup, rm) */
        ACTIVITY_REGRET,                /* a store of an entry the daemon had evicted (regret.h) */
        /* The rest of a change of the cache's size, bytes only (n stays 0):
         * what is no entry (ccache's temporaries, stats files, locks), and
         * entries that came, went or changed size with no store, eviction
         * or removal seen: a manifest rewritten under its name, a merge's
         * moves, what a scan found (or found gone) that no event told. */
        ACTIVITY_OTHER_ADDED,           /* bytes of files that are no entries, come or grown */
        ACTIVITY_OTHER_REMOVED,         /* ... gone or shrunk (but by an eviction) */
        ACTIVITY_ADJUSTED_UP,           /* bytes of entries, come or grown without a store */
        ACTIVITY_ADJUSTED_DOWN,         /* ... gone or shrunk without an eviction or removal */
        _ACTIVITY_EVENT_MAX,
        /* Deltas of ccache's counters (activity_counters). */
        ACTIVITY_CCACHE_HITS = _ACTIVITY_EVENT_MAX, /* direct + preprocessed hits */
        ACTIVITY_CCACHE_MISSES,
        ACTIVITY_CCACHE_UNCACHEABLE,
        ACTIVITY_CCACHE_ERRORS,
        ACTIVITY_CCACHE_REMOTE_HITS,
        ACTIVITY_CCACHE_REMOTE_MISSES,
        ACTIVITY_CCACHE_REMOTE_ERRORS,  /* errors and timeouts */
        _ACTIVITY_KIND_MAX,
} ActivityKind;

/* Figures of one bucket, or summed over several. */
typedef struct ActivityCounts {
        uint64_t n[_ACTIVITY_KIND_MAX];         /* events, by kind */
        uint64_t bytes[_ACTIVITY_EVENT_MAX];    /* their bytes, for the daemon's kinds */
        uint64_t size_bytes;                    /* at the end (of the newest bucket with a known
                                                 * size), or ACTIVITY_SIZE_UNKNOWN */
} ActivityCounts;

typedef struct Activity Activity;

/* A new, empty Activity (every bucket zero, sizes unknown). Returns 0 or
 * -ENOMEM; *ret is the caller's, freed with activity_free. */
int activity_new(Activity **ret);
/* Frees a; NULL is fine. Returns NULL. */
Activity *activity_free(Activity *a);

/* Moves the rings to now: buckets between the newest one and now start
 * empty, those older than 24 h (minutes) and 90 days (hours) are gone. Every
 * activity_add/_counters/_set_size does it; call it before reading (sum,
 * iterate) so nothing stale is read. Time going backwards (a realtime clock
 * step) empties the buckets after now (counted under a clock now known to
 * be wrong), the current hour losing what those minutes had added (after a
 * step back of 24 h or more, whose minutes are gone, the whole hour), and
 * counting carries on from now; a step of any size keeps every bucket
 * consistent. Hour buckets are always up to date: every event goes into its
 * minute and its hour at once, so an expired minute is already in its hour. */
void activity_advance(Activity *a, usec_t now);

/* Counts n events of kind (bytes: their size, summed; ignored for the ccache
 * kinds) at now. Counts saturate at 2^32-1 per bucket. Returns 0, or -EINVAL
 * for a kind out of range (nothing counted). */
int activity_add(Activity *a, ActivityKind kind, uint64_t n, uint64_t bytes, usec_t now);

/* Turns ccache's lifetime totals (ACTIVITY_CCACHE_TOTALS counters, summed
 * over the cache's stats files as `ccache -s` does, index 31 the newest
 * stats_zeroed_timestamp) into deltas counted at now. The first call after
 * activity_new is the baseline and counts nothing. A total that went down
 * is a counter reset, handled like Prometheus's and never a negative or a
 * giant spike: when ccache -z ran (its timestamp, index 31, moved) every
 * counter restarted from 0 and the new total is the delta; when it did not
 * (a stats file cleared or deleted: what is left is mostly old counts), the
 * delta is 0 and the new total the next baseline. Returns 1 if this was the
 * baseline, 0 if deltas were counted. */
int activity_counters(Activity *a, const uint64_t totals[ACTIVITY_CCACHE_TOTALS], usec_t now);

/* Forgets the baseline of ccache's totals: the next activity_counters is a
 * baseline again, counting nothing. For a caller whose sums stopped being
 * whole (its cache went away and is read again from nothing). */
void activity_counters_rebase(Activity *a);

/* The cache's size now: the current minute and hour end with it, and new
 * buckets start with it until it changes. */
void activity_set_size(Activity *a, uint64_t size_bytes, usec_t now);

/* One bucket, as cachectl history shows it. */
typedef struct ActivityRow {
        uint64_t start_sec;             /* unix seconds */
        unsigned seconds;               /* 60 or 3600 */
        ActivityCounts c;
} ActivityRow;

/* Walks the buckets whose start is in [since, until), oldest first. */
typedef struct ActivityIter {
        const Activity *a;              /* borrowed */
        unsigned seconds;
        uint64_t next, end;             /* bucket numbers (unix seconds / seconds), end excluded */
} ActivityIter;

/* The granularity activity_sum uses for [since, ...): minutes (60) when the
 * minute ring holds every minute bucket starting at or after since, else
 * hours (3600). */
unsigned activity_granularity(const Activity *a, usec_t since);

/* Starts it on a's buckets of seconds (60, 3600, or 0 for
 * activity_granularity) whose start is in [since, until), limited to what
 * the rings hold and to the time since a first counted (buckets before that
 * were never observed). Returns the granularity, or -EINVAL for another
 * seconds (it unchanged). */
int activity_iter_init(ActivityIter *it, const Activity *a, usec_t since, usec_t until, unsigned seconds);
/* The next bucket into *ret. Returns false (ret unchanged) at the end. */
bool activity_iter_next(ActivityIter *it, ActivityRow *ret);

/* Sums the buckets whose start is in [since, until), at
 * activity_granularity(a, since), into *ret (overwritten); size_bytes is
 * that of the newest of them with a known size. Returns the granularity. */
unsigned activity_sum(const Activity *a, usec_t since, usec_t until, ActivityCounts *ret);

/* ccache's hit rate (hits / (hits + misses), from its counters: the only
 * source of misses) over the buckets that start in (now - window, now].
 * Returns true and *ret in [0, 1] when there were cacheable calls, false
 * (ret unchanged) when there were none. */
bool activity_hit_rate(const Activity *a, usec_t window, usec_t now, double *ret);

/* Encoding for the state file (state-file.c adds the envelope): the
 * newest minute, the first minute counted, then the minute buckets and the
 * hour buckets, each oldest first, every bucket ACTIVITY_BUCKET_BYTES:
 * size_bytes, bytes[9] (u64), n[16] (u32), all little-endian. An encoding
 * of an older build has fewer daemon kinds (events) before the same ccache
 * kinds: ACTIVITY_BUCKET_BYTES_OF and ACTIVITY_ENCODED_BYTES_OF give its
 * sizes, activity_decode reads it. */
#define ACTIVITY_CCACHE_KINDS (_ACTIVITY_KIND_MAX - _ACTIVITY_EVENT_MAX)
#define ACTIVITY_BUCKET_BYTES_OF(events) (8U + 8U * (events) + 4U * ((events) + ACTIVITY_CCACHE_KINDS))
#define ACTIVITY_ENCODED_BYTES_OF(events) \
        (8U + 8U + 8U + (ACTIVITY_MINUTES + ACTIVITY_HOURS) * ACTIVITY_BUCKET_BYTES_OF(events))
#define ACTIVITY_BUCKET_BYTES ACTIVITY_BUCKET_BYTES_OF(_ACTIVITY_EVENT_MAX)
#define ACTIVITY_ENCODED_BYTES ACTIVITY_ENCODED_BYTES_OF(_ACTIVITY_EVENT_MAX)
/* Writes a into buf (ACTIVITY_ENCODED_BYTES). */
void activity_encode(const Activity *a, uint8_t *buf);
/* Replaces a's buckets with those encoded in buf (ACTIVITY_ENCODED_BYTES_OF
 * (events) bytes, written by a build whose first events kinds were this
 * one's: the kinds it lacks read as 0), then moves them to now
 * (activity_advance). The counter baseline is not part of it: the next
 * activity_counters is a baseline again. Returns 0, or -EBADMSG when buf
 * cannot be an encoding or events is not in 1.._ACTIVITY_EVENT_MAX (a
 * unchanged). */
int activity_decode(Activity *a, const uint8_t *buf, unsigned events, usec_t now);

/* Since when a has counted (realtime usec of its first minute), or 0 when
 * it has not yet. */
usec_t activity_origin(const Activity *a);

/* Bytes one Activity takes (sizeof), for memory figures. */
size_t activity_bytes(void);
