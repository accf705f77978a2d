/* SPDX-License-Identifier: MIT */
/* A cache's cache-silent-miss and cache-idle alarms: evaluated (alarm.c
 * decides) after each feed of its activity, and sent through the alert path
 * with a level, "warning" when one fires and "ok" when it recovers. The
 * state is in memory: after a restart the alarms are evaluated afresh from
 * the loaded history. */
#include <stdio.h>
#include <syslog.h>

#include "cache/cache-alarms.h"
#include "cache/cache-alert.h"
#include "cache/cache-internal.h"
#include "insight/remote-errors.h"

/* An alarm's event through the cache's one alert path: "warning" when it
 * fires, "ok" when it recovers. */
static void alarm_alert(Cache *c, AlertKind kind, AlarmEvent ev, const char *message) {
        cache_alert_level(c, kind, ev == ALARM_FIRE ? LOG_WARNING : LOG_NOTICE, ev == ALARM_FIRE ? "warning" : "ok",
                          "%s", message);
}

/* The realtime usec of the newest entry's mtime (0: none). Costs a pass
 * over the entries after a change: called only when the history is quiet. */
static usec_t newest_entry(Cache *c) {
        int64_t oldest, newest;

        account_entry_mtime_span(c->account, &oldest, &newest);
        return newest > 0 ? (usec_t) newest * USEC_PER_SEC : 0;
}

static void changes(Cache *c, AlarmChanges *ret) {
        const AccountTotals *t = account_totals(c->account);

        *ret = (AlarmChanges) {
                .family_entries = {
                        [KEY_SCHEME_LEGACY] = t->kind_files[CCACHE_KIND_RESULT] + t->kind_files[CCACHE_KIND_MANIFEST],
                        [KEY_SCHEME_HEX] = t->kind_files[CCACHE_KIND_ENTRY],
                },
                .conf_changed_at = c->conf_changed_at,
                .conf_change = c->conf_change,
        };
        for (KeyScheme f = 0; f < _KEY_SCHEME_MAX; f++)
                ret->family_first_store[f] = c->family_first_store[f];
}

void cache_alarms_check(Cache *c, usec_t now) {
        const CacheConfig *cc = c->config;
        const AlarmThresholds t = {
                .window_usec = cc->silent_window_usec, .min_calls = cc->silent_min_calls,
                .hit_rate = cc->silent_hit_rate, .idle_after_usec = cc->idle_after_usec,
        };
        AlarmChanges ch;
        AlarmEvent ev;
        char message[512];

        changes(c, &ch);
        ev = alarm_silent(&c->alarms, c->activity, &t, &ch, cc->name, now, message, sizeof(message));
        if (ev != ALARM_NONE)
                alarm_alert(c, ALERT_CACHE_SILENT_MISS, ev, message);
        ev = alarm_idle(&c->alarms, c->activity, t.idle_after_usec,
                        alarm_idle_quiet(c->activity, t.idle_after_usec, now) ? newest_entry(c) : 0, cc->name, now,
                        message, sizeof(message));
        if (ev != ALARM_NONE)
                alarm_alert(c, ALERT_CACHE_IDLE, ev, message);
        ev = remote_errors_check(&c->remote_errors, c->activity, cc->remote_errors_window_usec, cc->name, now,
                                 message, sizeof(message));
        if (ev != ALARM_NONE)
                alarm_alert(c, ALERT_REMOTE_ERRORS, ev, message);
}
