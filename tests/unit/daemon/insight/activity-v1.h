/* SPDX-License-Identifier: MIT */
/* What a build before ACTIVITY_REGRET (history file version 1) or before
 * ACTIVITY_OTHER_ADDED (version 2) encoded:
 * for tests that read such an encoding. Header-only and static. */
#pragma once

#include <string.h>

#include "insight/activity.h"

#define ACTIVITY_V1_EVENTS ((unsigned) ACTIVITY_REGRET)
#define ACTIVITY_V1_ENCODED_BYTES ACTIVITY_ENCODED_BYTES_OF(ACTIVITY_V1_EVENTS)
/* ... and a build before ACTIVITY_OTHER_ADDED (history file version 2). */
#define ACTIVITY_V2_EVENTS ((unsigned) ACTIVITY_OTHER_ADDED)
#define ACTIVITY_V2_ENCODED_BYTES ACTIVITY_ENCODED_BYTES_OF(ACTIVITY_V2_EVENTS)

/* Writes into old (ACTIVITY_ENCODED_BYTES_OF(ev)) the encoding buf
 * (ACTIVITY_ENCODED_BYTES) less the daemon kinds from ev on of every
 * bucket. */
static inline void activity_encoding_older(const uint8_t *buf, uint8_t *old, unsigned ev) {
        const unsigned cc = ACTIVITY_CCACHE_KINDS, skip = _ACTIVITY_EVENT_MAX - ev;
        const uint8_t *p = buf + 24;
        uint8_t *q = old + 24;

        memcpy(old, buf, 24);                   /* newest minute, first minute, flags */
        for (size_t i = 0; i < ACTIVITY_MINUTES + ACTIVITY_HOURS; i++) {
                memcpy(q, p, 8 + 8 * ev);       /* size, bytes[0..ev-1] */
                q += 8 + 8 * ev, p += 8 + 8 * (ev + skip);
                memcpy(q, p, 4 * ev);           /* n[0..ev-1] */
                q += 4 * ev, p += 4 * (ev + skip);
                memcpy(q, p, 4 * cc);           /* the ccache kinds */
                q += 4 * cc, p += 4 * cc;
        }
}

/* Version 1's encoding (ACTIVITY_V1_ENCODED_BYTES) of buf. */
static inline void activity_encoding_v1(const uint8_t *buf, uint8_t *old) {
        activity_encoding_older(buf, old, ACTIVITY_V1_EVENTS);
}
