/* SPDX-License-Identifier: MIT */
/* The cache-silent-miss and cache-idle alarms of one cache: from its
 * activity buckets (activity.h), the thresholds and the alarm's state,
 * decides whether an alarm fires, recovers, or nothing changes, and writes
 * the message. Pure: no I/O, no clock reads (now is realtime usec, passed
 * in), never logs; times in messages are local time (localtime_r).
 *
 * cache-silent-miss fires when the last window (the buckets starting in
 * (now - window, now]) had at least min_calls cacheable calls (ccache's hits
 * and misses) and a hit rate below hit_rate, and either the 24 h before the
 * window were healthy (min_calls calls or more, a hit rate of at least
 * alarm_healthy_rate) or the cache never had a hit in its whole history and
 * its calls began two windows ago or more (a cold cache's first build alone
 * never fires). It fires once, and recovers once the window holds min_calls
 * calls again with a healthy hit rate (hysteresis: no flapping at the
 * threshold). A window with fewer calls changes nothing.
 *
 * cache-idle fires when no entry was stored, none refreshed by a hit
 * (ACTIVITY_STORE, ACTIVITY_HIT) and ccache counted no hit and no miss in
 * every bucket that overlaps the last idle_after, the history began at least
 * idle_after ago, and no entry's mtime is that recent; it recovers at the
 * next such activity. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "ccache/families.h"
#include "insight/activity.h"

typedef struct AlarmThresholds {
        usec_t window_usec;             /* silent_window */
        uint64_t min_calls;             /* silent_min_calls, >= 1 */
        double hit_rate;                /* silent_hit_rate, a fraction; 0: never fires */
        usec_t idle_after_usec;         /* idle_after */
} AlarmThresholds;

/* What the daemon saw change, to say what changed when a drop began
 * (realtime usec; 0: not seen since the daemon started). */
typedef struct AlarmChanges {
        usec_t family_first_store[_KEY_SCHEME_MAX]; /* first store seen of each key scheme */
        uint64_t family_entries[_KEY_SCHEME_MAX];   /* entries of each the cache holds now */
        usec_t conf_changed_at;                     /* ccache.conf's settings changed */
        const char *conf_change;                    /* how (borrowed; NULL or "": unknown) */
} AlarmChanges;

/* One cache's alarms, kept in memory (zero: none stands, never evaluated). */
typedef struct AlarmState {
        bool silent;                    /* cache-silent-miss stands */
        bool idle;                      /* cache-idle stands */
        bool silent_checked;            /* evaluated since the daemon started */
        bool idle_checked;
        usec_t idle_last;               /* while idle: the last activity seen (0: none) */
} AlarmState;

typedef enum AlarmEvent {
        ALARM_NONE,                     /* nothing changed: no message */
        ALARM_FIRE,                     /* the alarm now stands: the message says why */
        ALARM_RECOVER,                  /* it stood and is over: the message says so */
} AlarmEvent;

/* The hit rate a healthy cache has, and that ends a cache-silent-miss:
 * twice hit_rate, or halfway from it to 1 when that is less (hit_rate
 * above a third). */
double alarm_healthy_rate(double hit_rate);

/* Evaluates cache-silent-miss of the cache name at now over a (advanced to
 * now by the caller), updating *s. On ALARM_FIRE or ALARM_RECOVER writes a
 * one-line message into msg (len bytes, cut short if need be); on
 * ALARM_NONE msg is unchanged. ch may be NULL (nothing seen). A fire found
 * at the first evaluation since the daemon started says it may have been
 * reported before a restart. */
AlarmEvent alarm_silent(AlarmState *s, const Activity *a, const AlarmThresholds *t, const AlarmChanges *ch,
                        const char *name, usec_t now, char *msg, size_t len);

/* Whether a shows no store, no hit and no ccache call in the buckets that
 * overlap the last idle_after before now, and began at least that long
 * ago: the history's half of cache-idle. The caller reads the newest
 * entry's mtime (which costs) only when this is true. */
bool alarm_idle_quiet(const Activity *a, usec_t idle_after, usec_t now);

/* Evaluates cache-idle of the cache name at now, as alarm_silent does;
 * newest_entry is the realtime usec of the newest entry's mtime (0: none,
 * or not read because alarm_idle_quiet was false). */
AlarmEvent alarm_idle(AlarmState *s, const Activity *a, usec_t idle_after, usec_t newest_entry, const char *name,
                      usec_t now, char *msg, size_t len);
