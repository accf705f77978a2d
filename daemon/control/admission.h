/* SPDX-License-Identifier: MIT */
/* Who gets a control connection: the limits in total and per unprivileged
 * uid, the slots only privileged peers may take, and the rule by which a
 * newcomer displaces the biggest holder, so that no user, however many
 * connections it opens, keeps another out. Pure: decides over a list of the
 * open connections; no I/O, no clock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One open connection, as the policy sees it. */
typedef struct AdmissionSlot {
        uid_t uid;
        bool privileged;                /* root or admin_group: reserved slots, no per-uid limit */
        bool busy;                      /* a request under way: never displaced */
} AdmissionSlot;

typedef struct AdmissionLimits {
        unsigned max;                   /* connections in all */
        unsigned reserved;              /* of those, for privileged peers only */
        unsigned per_uid;               /* held by one unprivileged uid */
} AdmissionLimits;

/* Decides on a new connection from uid, privileged or not, given the n
 * open connections in slots (borrowed), newest first:
 *  - at limits->max, nobody gets in;
 *  - a privileged peer gets in below it;
 *  - an unprivileged uid holding limits->per_uid does not;
 *  - else it gets in while fewer than max - reserved are unprivileged;
 *  - else, holding `have`, it may displace the oldest idle connection of
 *    the uid that holds the most (on a tie, the one whose connection is
 *    newest), if that one holds at least have + 2 and not all of them are
 *    busy: the slots end up shared, and one user cannot keep another out
 *    unless as many users as slots hold one each.
 * Returns 0 to let it in, 1 to let it in once slots[*ret_displace] is closed
 * (*ret_displace set only then), or -EUSERS with why, for the peer, in
 * why (whylen bytes). */
int admission_decide(const AdmissionLimits *limits, const AdmissionSlot *slots, size_t n, uid_t uid,
                     bool privileged, size_t *ret_displace, char *why, size_t whylen);
