/* SPDX-License-Identifier: MIT */
/* The alert rate limit's decisions, and nothing else: no clock, no I/O. */
#include "alert/alert-gate.h"

usec_t alert_gate_due(const AlertGate *g, usec_t interval_usec) {
        return g->last_usec > UINT64_MAX - interval_usec ? UINT64_MAX : g->last_usec + interval_usec;
}

static void gate_send(AlertGate *g, usec_t now, int rank) {
        g->sent = true;
        g->last_usec = now;
        g->rank = rank;
}

bool alert_gate_offer(AlertGate *g, usec_t now, usec_t interval_usec, int rank, uint64_t *ret_superseded) {
        uint64_t superseded = 0;

        if (g->folded == 0 && (!g->sent || now >= alert_gate_due(g, interval_usec)))
                gate_send(g, now, rank);
        else if (rank > g->rank) {
                /* An escalation is news, not a repeat: out now, in place of
                 * the older, milder state folded so far. */
                superseded = g->folded;
                g->folded = 0;
                gate_send(g, now, rank);
        } else {
                g->folded++;
                return false;
        }
        if (ret_superseded)
                *ret_superseded = superseded;
        return true;
}

uint64_t alert_gate_flush(AlertGate *g, usec_t now, usec_t interval_usec, int rank) {
        uint64_t n = g->folded;

        if (n == 0 || now < alert_gate_due(g, interval_usec))
                return 0;
        g->folded = 0;
        gate_send(g, now, rank);
        return n;
}
