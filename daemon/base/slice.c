/* SPDX-License-Identifier: MIT */
/* Slices bounded by time (slice.h). */
#include "base/slice.h"

static usec_t monotonic(void) {
        return now_usec(CLOCK_MONOTONIC);
}

usec_t (*slice_clock)(void) = monotonic;
bool (*slice_waiting)(void *userdata);
void *slice_waiting_userdata;

void slice_begin(SliceBudget *s, usec_t usec, unsigned every) {
        *s = (SliceBudget) { .start = slice_clock(), .usec = usec, .every = every ? every : 1 };
        s->asked = s->start;
        s->left = s->every;
}

/* A look at the clock: is the slice's time up, or does a request wait? */
static bool look(SliceBudget *s) {
        usec_t now = slice_clock(), ran = now - s->start;

        if (ran >= s->usec)
                return true;
        if (!slice_waiting || ran < SLICE_MIN_USEC || now - s->asked < SLICE_ASK_USEC)
                return false;
        s->asked = now;
        return slice_waiting(slice_waiting_userdata);
}

bool slice_over(SliceBudget *s) {
        if (s->over)
                return true;
        if (--s->left > 0)
                return false;
        s->left = s->every;
        s->over = look(s);
        return s->over;
}

bool slice_over_now(SliceBudget *s) {
        if (!s->over) {
                s->left = s->every;
                s->over = look(s);
        }
        return s->over;
}

usec_t slice_elapsed(const SliceBudget *s) {
        return slice_clock() - s->start;
}

int slice_requeue(sd_event_source **s, sd_event_handler_t handler, void *userdata) {
        sd_event_source *n = NULL;
        const char *description = NULL;
        int64_t priority = 0;
        int enabled = SD_EVENT_OFF, r;

        if ((r = sd_event_source_get_priority(*s, &priority)) < 0 ||
            (r = sd_event_source_get_enabled(*s, &enabled)) < 0 ||
            (r = sd_event_add_defer(sd_event_source_get_event(*s), &n, handler, userdata)) < 0)
                return r;
        (void) sd_event_source_get_description(*s, &description);
        if ((r = sd_event_source_set_priority(n, priority)) < 0 ||
            (description && (r = sd_event_source_set_description(n, description)) < 0) ||
            (r = sd_event_source_set_enabled(n, enabled)) < 0) {
                sd_event_source_disable_unref(n);
                return r;
        }
        sd_event_source_disable_unref(*s);
        *s = n;
        return 0;
}

void slice_turn(const SliceBudget *s, usec_t *turn_usec, sd_event_source **src, sd_event_handler_t handler,
                void *userdata) {
        *turn_usec += slice_elapsed(s);
        if (*turn_usec < SLICE_TURN_USEC)
                return;
        *turn_usec = 0;
        (void) slice_requeue(src, handler, userdata);
}
