/* SPDX-License-Identifier: MIT */
/* A cache's alerts (cache-alert.h). */
#include <stdarg.h>
#include <stdio.h>

#include "cache/cache-alert.h"
#include "cache/cache-internal.h"
#include "os/mounts.h"

static void alert_va(Cache *c, AlertKind kind, int priority, const char *level, const char *fmt, va_list ap) {
        VolumeUsage u = { 0 };
        char message[512];

        vsnprintf(message, sizeof(message), fmt, ap);
        if (c->available)
                (void) volume_usage(-1, c->config->path, &u);
        alert_emit(c->alerter, &(Alert) {
                .kind = kind, .priority = priority, .level = level, .cache = c->remote ? NULL : c->config->name,
                .remote = c->remote ? c->config->name : NULL,
                .avail_bytes = u.avail_bytes, .total_bytes = u.total_bytes, .message = message,
        });
}

/* A cache event for the journal and alert_command. */
void cache_alert(Cache *c, AlertKind kind, int priority, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        alert_va(c, kind, priority, NULL, fmt, ap);
        va_end(ap);
}

void cache_alert_level(Cache *c, AlertKind kind, int priority, const char *level, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        alert_va(c, kind, priority, level, fmt, ap);
        va_end(ap);
}
