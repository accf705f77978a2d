/* SPDX-License-Identifier: MIT */
/* The alert rate limit's decisions, and nothing else: no clock, no I/O. */
#include "alert-gate.h"

usec_t alert_gate_due(const AlertGate *g, usec_t interval_usec) {
        return g->last_usec > UINT64_MAX - interval_usec ? UINT64_MAX : g->last_usec + interval_usec;
}

bool alert_gate_offer(AlertGate *g, usec_t now, usec_t interval_usec) {
        if (g->folded == 0 && (!g->sent || now >= alert_gate_due(g, interval_usec))) {
                g->sent = true;
                g->last_usec = now;
                return true;
        }
        g->folded++;
        return false;
}

uint64_t alert_gate_flush(AlertGate *g, usec_t now, usec_t interval_usec) {
        uint64_t n = g->folded;

        if (n == 0 || now < alert_gate_due(g, interval_usec))
                return 0;
        g->folded = 0;
        g->sent = true;
        g->last_usec = now;
        return n;
}
