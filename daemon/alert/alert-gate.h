/* SPDX-License-Identifier: MIT */
/* Rate limit of one subject's alerts of one kind: the first of a burst goes
 * out at once, repeats within alert_min_interval of the last run are folded
 * into one run at the end of the window. Folding is for repeats: an alert
 * more severe than any sent in the window (warning, then critical) goes out
 * at once too, and stands for what was folded before it. Pure: the caller
 * passes now (CLOCK_MONOTONIC) and each alert's rank (higher: more severe),
 * and keeps the latest folded alert itself. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

typedef struct AlertGate {
        bool sent;            /* a run went out (at last_usec) */
        usec_t last_usec;     /* when the last run went out */
        uint64_t folded;      /* alerts held back since, waiting for alert_gate_due() */
        int rank;             /* the highest rank sent in the window that began at last_usec */
} AlertGate;

/* An alert of rank arrives at now. Returns true if it goes out now (the
 * window of interval_usec starts again at now): the first of a burst, or
 * one of a higher rank than any sent in the window; *ret_superseded (may be
 * NULL) is then how many folded alerts it stands for (0 but for an
 * escalation over folded ones, which the caller drops). Returns false if it
 * is folded: counted, and due at alert_gate_due(). Once one is folded, every
 * later one of no higher rank is folded too until alert_gate_flush() (so a
 * newer state never overtakes it). */
bool alert_gate_offer(AlertGate *g, usec_t now, usec_t interval_usec, int rank, uint64_t *ret_superseded);

/* When the folded alerts are due to go out as one run: the end of the
 * window (last_usec + interval_usec, saturating). Meaningful only while
 * g->folded > 0. */
usec_t alert_gate_due(const AlertGate *g, usec_t interval_usec);

/* At now: if alerts are folded and their window is over, returns how many
 * (the coalesced run stands for them all, the latest state included, of
 * rank) and starts a new window at now; otherwise returns 0 and changes
 * nothing. */
uint64_t alert_gate_flush(AlertGate *g, usec_t now, usec_t interval_usec, int rank);
