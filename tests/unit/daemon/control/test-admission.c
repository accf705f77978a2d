/* SPDX-License-Identifier: MIT */
/* Who gets a control connection, decided over lists: the limits, the
 * reserved slots, displacement, and, under a flood from many users at
 * once, slots shared so that a newcomer always gets in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/util.h"
#include "control/admission.h"
#include "control/control.h"

static const AdmissionLimits small = { .max = 6, .reserved = 2, .per_uid = 2 };

/* Decides for uid over slots[0..n); returns admission_decide's value, the
 * displaced index in *victim (n when none), the reason in why. */
static int decide(const AdmissionLimits *l, const AdmissionSlot *slots, size_t n, uid_t uid, bool privileged,
                  size_t *victim, char *why) {
        *victim = n;
        strcpy(why, "");
        return admission_decide(l, slots, n, uid, privileged, victim, why, 128);
}

static void test_limits(void **state) {
        AdmissionSlot slots[6];
        size_t victim;
        char why[128];

        /* Privileged peers: no per-uid limit, the reserved slots too, not beyond max. */
        for (size_t n = 0; n < 6; n++) {
                assert_int_equal(decide(&small, slots, n, 0, true, &victim, why), 0);
                slots[n] = (AdmissionSlot) { .uid = 0, .privileged = true };
        }
        assert_int_equal(decide(&small, slots, 6, 0, true, &victim, why), -EUSERS);
        assert_string_equal(why, "too many connections");
        assert_int_equal(decide(&small, slots, 6, 1000, false, &victim, why), -EUSERS);
        assert_int_equal(victim, 6);

        /* One unprivileged uid: at most per_uid; its own root connections do not count. */
        slots[0] = (AdmissionSlot) { .uid = 1000 };
        slots[1] = (AdmissionSlot) { .uid = 1000, .privileged = true };
        assert_int_equal(decide(&small, slots, 2, 1000, false, &victim, why), 0);
        slots[1] = (AdmissionSlot) { .uid = 1000 };
        assert_int_equal(decide(&small, slots, 2, 1000, false, &victim, why), -EUSERS);
        assert_string_equal(why, "too many connections from uid 1000 (at most 2)");
        assert_int_equal(decide(&small, slots, 2, 1001, false, &victim, why), 0);

        /* max - reserved unprivileged, one each: nobody to displace; root still gets in. */
        for (size_t i = 0; i < 4; i++)
                slots[i] = (AdmissionSlot) { .uid = (uid_t) (1000 + i) };
        assert_int_equal(decide(&small, slots, 4, 1004, false, &victim, why), -EUSERS);
        assert_string_equal(why, "too many connections");
        assert_int_equal(decide(&small, slots, 4, 1000, false, &victim, why), -EUSERS);
        assert_int_equal(decide(&small, slots, 4, 0, true, &victim, why), 0);
        assert_int_equal(victim, 4);
}

static void test_displace(void **state) {
        /* Newest first: uid 7 holds three (indexes 1, 3, 4: 4 is its oldest). */
        AdmissionSlot slots[] = {
                { .uid = 8 }, { .uid = 7 }, { .uid = 0, .privileged = true }, { .uid = 7 }, { .uid = 7 },
        };
        const AdmissionLimits l = { .max = 8, .reserved = 4, .per_uid = 3 };
        size_t victim;
        char why[128];

        assert_int_equal(decide(&l, slots, 5, 9, false, &victim, why), 1);
        assert_int_equal(victim, 4);                    /* the oldest of the biggest holder */
        assert_int_equal(decide(&l, slots, 5, 8, false, &victim, why), 1);     /* 1 + 2 <= 3 */
        assert_int_equal(victim, 4);
        slots[4].busy = true;                           /* a request under way is not displaced */
        assert_int_equal(decide(&l, slots, 5, 9, false, &victim, why), 1);
        assert_int_equal(victim, 3);
        slots[3].busy = slots[1].busy = true;
        assert_int_equal(decide(&l, slots, 5, 9, false, &victim, why), -EUSERS);
        assert_int_equal(victim, 5);
        slots[1].busy = slots[3].busy = slots[4].busy = false;

        /* Two more than the newcomer holds, not one: 7 holds 0 and 4, 8 holds 1 and 3. */
        slots[0].uid = 7;
        slots[1].uid = 8;
        slots[3].uid = 8;
        assert_int_equal(decide(&l, slots, 5, 8, false, &victim, why), -EUSERS);
        /* On a tie, the holder with the newest connection gives way. */
        assert_int_equal(decide(&l, slots, 5, 9, false, &victim, why), 1);
        assert_int_equal(victim, 4);
}

/* Deterministic choices for the flood. */
static unsigned next(uint64_t *seed) {
        *seed = *seed * 6364136223846793005u + 1442695040888963407u;
        return (unsigned) (*seed >> 33);
}

/* Connects uid, as control.c would: in at the front, the displaced one
 * out. Returns whether it got in. */
static bool connect_uid(AdmissionSlot *slots, size_t *n, uid_t uid, bool privileged) {
        const AdmissionLimits l = { CONTROL_CONNECTIONS_MAX, CONTROL_RESERVED, CONTROL_PER_UID_MAX };
        size_t victim;
        char why[128];
        int r = decide(&l, slots, *n, uid, privileged, &victim, why);

        if (r < 0)
                return false;
        if (r > 0) {
                assert_true(victim < *n);
                memmove(slots + victim, slots + victim + 1, (*n - victim - 1) * sizeof(*slots));
                (*n)--;
        }
        memmove(slots + 1, slots, *n * sizeof(*slots));
        slots[0] = (AdmissionSlot) { .uid = uid, .privileged = privileged };
        (*n)++;
        return true;
}

/* k users open connections as fast as they can, in a random order, with
 * the daemon's limits: the limits hold, the slots open to them end up
 * shared within one, and a newcomer (then root) still gets in, unless the
 * users are as many as the slots. */
static void test_flood(void **state) {
        static const unsigned users[] = { 1, 2, 5, 6, 7, 13, 47, 48, 60 };
        enum { OPEN = CONTROL_CONNECTIONS_MAX - CONTROL_RESERVED };
        AdmissionSlot slots[CONTROL_CONNECTIONS_MAX];
        uint64_t seed = 42;

        for (size_t u = 0; u < ELEMENTSOF(users); u++) {
                unsigned k = users[u], held[64] = {}, lo = ~0u, hi = 0, unprivileged = 0;
                size_t n = 0;

                for (unsigned i = 0; i < 20000; i++)
                        (void) connect_uid(slots, &n, 2000 + next(&seed) % k, false);
                assert_true(n <= CONTROL_CONNECTIONS_MAX);
                for (size_t i = 0; i < n; i++) {
                        held[slots[i].uid - 2000]++;
                        unprivileged++;
                }
                for (unsigned i = 0; i < k; i++) {
                        assert_true(held[i] <= CONTROL_PER_UID_MAX);
                        lo = held[i] < lo ? held[i] : lo;
                        hi = held[i] > hi ? held[i] : hi;
                }
                assert_true(unprivileged <= OPEN);
                if (k * CONTROL_PER_UID_MAX >= OPEN)
                        assert_int_equal(unprivileged, OPEN);   /* every open slot is used */
                if (k <= OPEN)
                        assert_true(hi - lo <= 1);              /* and shared */
                if (k < OPEN)
                        assert_true(connect_uid(slots, &n, 9999, false));
                else
                        assert_false(connect_uid(slots, &n, 9999, false));
                for (unsigned i = 0; i < CONTROL_RESERVED; i++)
                        assert_true(connect_uid(slots, &n, 0, true));
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_displace),
                cmocka_unit_test(test_flood),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
