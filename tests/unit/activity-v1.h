/* SPDX-License-Identifier: MIT */
/* What a build before ACTIVITY_REGRET (history file version 1) encoded:
 * for tests that read such an encoding. Header-only and static. */
#pragma once

#include <string.h>

#include "insight/activity.h"

#define ACTIVITY_V1_EVENTS ((unsigned) ACTIVITY_REGRET)
#define ACTIVITY_V1_ENCODED_BYTES ACTIVITY_ENCODED_BYTES_OF(ACTIVITY_V1_EVENTS)

/* Writes into old (ACTIVITY_V1_ENCODED_BYTES) the encoding buf
 * (ACTIVITY_ENCODED_BYTES) less the regret kind of every bucket. */
static inline void activity_encoding_v1(const uint8_t *buf, uint8_t *old) {
        const unsigned ev = ACTIVITY_V1_EVENTS, cc = ACTIVITY_CCACHE_KINDS;
        const uint8_t *p = buf + 24;
        uint8_t *q = old + 24;

        memcpy(old, buf, 24);                   /* newest minute, first minute, flags */
        for (size_t i = 0; i < ACTIVITY_MINUTES + ACTIVITY_HOURS; i++) {
                memcpy(q, p, 8 + 8 * ev);       /* size, bytes[0..3] */
                q += 8 + 8 * ev, p += 8 + 8 * (ev + 1);
                memcpy(q, p, 4 * ev);           /* n[0..3] */
                q += 4 * ev, p += 4 * (ev + 1);
                memcpy(q, p, 4 * cc);           /* the ccache kinds */
                q += 4 * cc, p += 4 * cc;
        }
}
