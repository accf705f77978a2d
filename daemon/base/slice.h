/* SPDX-License-Identifier: MIT */
/* A slice of a long job run from the event loop (daemon/README.md §6): it
 * ends when its time is up, not only after a count of items, so that what
 * one item happens to cost (a cold inode, a slow disk, a loaded box) never
 * stretches it. A status request that comes while a slice runs waits for
 * its end (the socket goes first between two slices), so the slice's time
 * is what a request may wait. Non-logging. */
#pragma once

#include <stdbool.h>

#include "base/util.h"

/* How long one slice of a scan, a trim, a header pass may take. Every slice
 * costs a loop iteration (an epoll_wait and the post sources, some 10 µs):
 * shorter ones would spend more of the job on the loop. */
#define SLICE_USEC (3 * USEC_PER_MSEC)

typedef struct SliceBudget {
        usec_t start;              /* the clock when the slice began */
        usec_t usec;               /* how long it may take */
        usec_t asked;              /* the clock when slice_waiting was asked last */
        unsigned every, left;      /* items between two looks at the clock; left until the next */
        bool over;
} SliceBudget;

/* The clock slices go by: CLOCK_MONOTONIC, unless a test sets its own. */
extern usec_t (*slice_clock)(void);

/* Whether a request waits that the loop serves before every job (the
 * control socket's: control.c sets it): a slice then ends at a look at the
 * clock once it has run SLICE_MIN_USEC, so a status waits for a fraction of
 * a slice, not all of it. Asked at most every SLICE_ASK_USEC of a slice (a
 * poll(2) each time). NULL: never. A client who keeps requests coming makes
 * each slice SLICE_MIN_USEC: every job still moves, its slices about as long
 * as the requests served in between (a status of a million files: < 1 ms). */
extern bool (*slice_waiting)(void *userdata);
extern void *slice_waiting_userdata;
#define SLICE_MIN_USEC (1 * USEC_PER_MSEC)
#define SLICE_ASK_USEC (250)

/* Begins a slice of usec, looking at the clock every `every` items (at least
 * 1): as many as a fraction of the slice takes. */
void slice_begin(SliceBudget *s, usec_t usec, unsigned every);
/* One more item is done: is the slice's time up? Once it says so, it stays
 * so. The caller does an item before it asks: every slice makes progress. */
bool slice_over(SliceBudget *s);
/* The same, looking at the clock now: after an item that is many (a
 * batch of them). */
bool slice_over_now(SliceBudget *s);
/* How long the slice has taken so far (reads the clock). */
usec_t slice_elapsed(const SliceBudget *s);

/* After a slice, puts the job's defer source *s (handler, userdata: its
 * own) behind the sources of its priority that are pending: sd-event runs
 * the pending sources of one priority in the order they became pending, and
 * a defer source is pending from its creation on, for good, so that one
 * left on would run before its equals (the inotify sources, another job)
 * for as long as it has work. It is made anew, enabled as it was, with its
 * priority and description. Returns 0, or -errno (*s is left as it was). */
int slice_requeue(sd_event_source **s, sd_event_handler_t handler, void *userdata);

/* A job's turn among the sources of its priority (the inotify sources, the
 * scan, the cap trim take turns): this long of its slices, then it goes
 * behind them. The socket and the timers come first between any two slices
 * whatever the turn (their priority is higher). As long as a slice was
 * before slices were bounded by time: the cap trim keeps its pace against a
 * flood of events. */
#define SLICE_TURN_USEC (50 * USEC_PER_MSEC)

/* At the end of a slice s of a job that goes on: adds its time to *turn_usec
 * and, once that makes a turn, puts the job's source behind its equals
 * (slice_requeue) and begins the next turn. */
void slice_turn(const SliceBudget *s, usec_t *turn_usec, sd_event_source **src, sd_event_handler_t handler,
                void *userdata);
