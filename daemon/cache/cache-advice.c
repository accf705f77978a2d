/* SPDX-License-Identifier: MIT */
/* Is each cap right? From the working set (the entries used within 7 and
 * 30 days) and the eviction regret (regret.h): the cache-cap-small alert and
 * its recovery, and the advice in words status gives. It never changes a
 * cap.
 *
 * The cap looks small when, over the last 7 days, at least
 * ADVICE_REGRET_MIN stores were of entries the daemon had evicted (fewer is
 * noise; and an entry evicted that nobody needs again cost nothing) and
 * either they were more than regret_alert of the stores, or the 7-day
 * working set was larger than the cap. The daemon holds no more than the
 * cap, so
 * that working set is estimated: the entries used within 7 days held now,
 * plus those evicted although used within the 7 days before their eviction,
 * less the bytes of evicted entries stored again (counted in both). It looks
 * large (a note, never an alert) when the 30-day working set is under a
 * third of the cap and the daemon has watched the cache for 30 days. */
#include <stdio.h>
#include <string.h>

#include "base/human.h"
#include "cache/cache-advice.h"
#include "cache/cache-alert.h"
#include "cache/cache-counts.h"
#include "cache/cache-internal.h"

#define ADVICE_REGRET_MIN 10
#define WEEK_USEC (7 * 24 * 3600 * USEC_PER_SEC)
#define MONTH_USEC (30 * 24 * 3600 * USEC_PER_SEC)

typedef struct Advice {
        bool small, large;
        uint64_t ws_7d, ws_30d, suggested;
        RegretFigures regret;
        uint64_t stores_7d;
        double share;                   /* of the stores, regretted; 0 without stores */
} Advice;

static void advise(Cache *c, usec_t now, Advice *ret) {
        uint64_t cap = c->config->max_size_bytes, young;
        usec_t origin = activity_origin(c->activity);
        ActivityCounts week;

        *ret = (Advice) { 0 };
        cache_counts_refresh(c, CACHE_WS_USEC);   /* the working set as status shows it */
        regret_figures(c->regret, now / USEC_PER_SEC, &ret->regret);
        activity_sum(c->activity, now > WEEK_USEC ? now - WEEK_USEC + 1 : 0, now + 1, &week);
        ret->stores_7d = week.n[ACTIVITY_STORE];
        ret->share = ret->stores_7d ? (double) ret->regret.stores_7d / (double) ret->stores_7d : 0;
        young = ret->regret.young_evicted_7d > ret->regret.bytes_7d ? ret->regret.young_evicted_7d - ret->regret.bytes_7d
                                                                    : 0;
        ret->ws_7d = c->ws_bytes[2] + young;
        ret->ws_30d = c->ws_bytes[3];
        ret->small = ret->regret.stores_7d >= ADVICE_REGRET_MIN &&
                     (ret->share > c->config->regret_alert || ret->ws_7d > cap);
        ret->large = !ret->small && origin > 0 && now >= origin + MONTH_USEC && ret->ws_30d < cap / 3;
        if (ret->small) {
                uint64_t by_regret = ret->regret.stores_7d ? cap + ret->regret.extra_bytes_p90 : 0;
                uint64_t by_ws = ret->ws_7d + ret->ws_7d / 10;

                ret->suggested = round_size_up(by_regret > by_ws ? by_regret : by_ws);
        } else if (ret->large)
                ret->suggested = round_size_up(ret->ws_30d * 2);
}

/* "cap looks small: 7-day working set, counting what was evicted, 118G > 100G cap; evicted entries came
 * back 2310 times this week (12% of the stores); about 130G would have kept
 * them", or the note of a cap clearly too large. */
static void describe(const Cache *c, const Advice *a, char *buf, size_t len) {
        char ws[32], cap[32], sug[32];
        size_t n;

        format_size(c->config->max_size_bytes, cap, sizeof(cap));
        format_size(a->suggested, sug, sizeof(sug));
        if (a->large) {
                snprintf(buf, len, "cap looks large: 30-day working set %s is under a third of the %s cap; "
                         "about %s would do", format_size(a->ws_30d, ws, sizeof(ws)), cap, sug);
                return;
        }
        /* Not the working set status shows (what is held): what the week used,
         * the entries evicted meanwhile counted in. */
        n = (size_t) snprintf(buf, len, "cap looks small: 7-day working set, counting what was evicted, %s %s %s cap",
                              format_size(a->ws_7d, ws, sizeof(ws)), a->ws_7d > c->config->max_size_bytes ? ">" : "<=",
                              cap);
        if (n < len && a->regret.stores_7d)
                n += (size_t) snprintf(buf + n, len - n, "; evicted entries came back %llu times this week (%.0f%% of the stores)",
                                       (unsigned long long) a->regret.stores_7d, 100.0 * a->share);
        if (n < len)
                snprintf(buf + n, len - n, "; about %s would have kept them", sug);
}

void cache_advice_check(Cache *c, usec_t now) {
        char text[512], message[600];
        Advice a;

        if (!c->available || !scan_queue_scanned(c->scans))
                return;
        advise(c, now, &a);
        if (a.small == c->cap_small)
                return;
        c->cap_small = a.small;
        if (a.small) {
                describe(c, &a, text, sizeof(text));
                snprintf(message, sizeof(message), "Cache %s: %s.", c->config->name, text);
                cache_alert_level(c, ALERT_CACHE_CAP_SMALL, LOG_WARNING, "warning", "%s", message);
        } else
                cache_alert_level(c, ALERT_CACHE_CAP_SMALL, LOG_NOTICE, "ok",
                            "Cache %s: the cap holds what builds use again (7-day regret %.0f%% of the stores).",
                            c->config->name, 100.0 * a.share);
}

json_object *cache_advice_json(Cache *c, usec_t now) {
        char text[512];
        Advice a;

        if (!c->available || !scan_queue_scanned(c->scans))
                return NULL;
        advise(c, now, &a);
        if (!a.small && !a.large)
                return NULL;
        describe(c, &a, text, sizeof(text));
        return json_object_new_string(text);
}
