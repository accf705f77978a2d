/* SPDX-License-Identifier: MIT */
/* The connection limits of the control socket and their fairness, decided
 * over a list; control.c applies the decision to its sockets. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>

#include "control/admission.h"

/* Unprivileged connections held by uid. */
static unsigned held_by(const AdmissionSlot *slots, size_t n, uid_t uid) {
        unsigned k = 0;

        for (size_t i = 0; i < n; i++)
                k += !slots[i].privileged && slots[i].uid == uid;
        return k;
}

/* The connection a newcomer holding `have` may take over (see the header),
 * as an index into slots; n if there is none. */
static size_t displaceable(const AdmissionSlot *slots, size_t n, unsigned have) {
        size_t victim = n;
        unsigned most = 0;
        uid_t hog = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned k = slots[i].privileged ? 0 : held_by(slots, n, slots[i].uid);

                if (k > most) {
                        most = k;
                        hog = slots[i].uid;
                }
        }
        if (most < have + 2)
                return n;
        for (size_t i = 0; i < n; i++)  /* newest first: the last match is the oldest */
                if (!slots[i].privileged && slots[i].uid == hog && !slots[i].busy)
                        victim = i;
        return victim;
}

int admission_decide(const AdmissionLimits *limits, const AdmissionSlot *slots, size_t n, uid_t uid,
                     bool privileged, size_t *ret_displace, char *why, size_t whylen) {
        unsigned have, unprivileged = 0;
        size_t victim;

        assert(limits && (slots || n == 0) && ret_displace && why);
        if (n >= limits->max) {
                snprintf(why, whylen, "too many connections");
                return -EUSERS;
        }
        if (privileged)
                return 0;
        have = held_by(slots, n, uid);
        if (have >= limits->per_uid) {
                snprintf(why, whylen, "too many connections from uid %u (at most %u)", (unsigned) uid,
                         limits->per_uid);
                return -EUSERS;
        }
        for (size_t i = 0; i < n; i++)
                unprivileged += !slots[i].privileged;
        if (unprivileged + limits->reserved < limits->max)
                return 0;
        victim = displaceable(slots, n, have);
        if (victim == n) {
                snprintf(why, whylen, "too many connections");
                return -EUSERS;
        }
        *ret_displace = victim;
        return 1;
}
