/* SPDX-License-Identifier: MIT */
/* A cache's trims: the automatic one when it goes over its cap, which comes
 * first (a dry run being planned gives way to it); manual, pressure and dry
 * runs queued behind it; each carried out by trim.c in slices from a defer
 * source at idle priority. ccache's counters the trims owe are paid here,
 * from a timer, while stats.lock is taken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache-internal.h"
#include "log.h"
#include "units.h"

static void trim_start_next(Cache *c, bool cap_first);

void cache_trim_finish(Cache *c, int error) {
        const TrimResult *r = trim_result(c->trim);
        TrimCall call = c->trim_call;
        char f[32], k[32], why[256];

        (void) sd_event_source_set_enabled(c->trim_source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(c->trim_timer, SD_EVENT_OFF);
        /* A dry run is its caller's business: last_trim stays the last real one. */
        if (!r->dry_run) {
                c->last_trim = *r;
                c->has_last_trim = true;
                snprintf(c->last_trim_reason, sizeof(c->last_trim_reason), "%s", call.reason);
                c->last_trim_at = event_now(c->event, CLOCK_REALTIME);
                c->last_trim_duration = event_now(c->event, CLOCK_MONOTONIC) - c->trim_started;
                c->evicted_files += r->files;
                c->evicted_bytes += r->bytes;
                c->last_trim_over_cap = c->available && account_totals(c->account)->bytes > c->config->max_size_bytes;
        }
        log_debug("Cache %s: %s trim planned %llu files in %llu slices, %.1f ms.", c->config->name, call.reason,
                  (unsigned long long) r->planned_files, (unsigned long long) r->planning_slices,
                  (double) r->planning_usec / USEC_PER_MSEC);
        if (!r->dry_run)
                log_info("Cache %s: %s trim %s: evicted %llu files, %s in %.2f s; %llu kept as used since, "
                         "%llu in locked directories.", c->config->name, call.reason,
                         error < 0 ? "stopped" : "done", (unsigned long long) r->files,
                         format_size(r->bytes, f, sizeof(f)),
                         (double) (event_now(c->event, CLOCK_MONOTONIC) - c->trim_started) / USEC_PER_SEC,
                         (unsigned long long) r->saved, (unsigned long long) r->locked_dirs);
        if (!r->dry_run && c->last_trim_over_cap && strcmp(call.reason, "cap") == 0) {
                cache_alert(c, ALERT_CACHE_TRIM_FAILED, LOG_ERR,
                            "Cache %s is still over its cap after trimming (%s of %s): %s; retrying in %llu s.",
                            c->config->name, format_size(account_totals(c->account)->bytes, f, sizeof(f)),
                            format_size(c->config->max_size_bytes, k, sizeof(k)), trim_result_why(r, why, sizeof(why)),
                            (unsigned long long) (TRIM_BACKOFF_USEC / USEC_PER_SEC));
                c->trim_backoff_until = event_now(c->event, CLOCK_MONOTONIC) + TRIM_BACKOFF_USEC;
        }
        c->trim_call = (TrimCall) { 0 };
        if (call.done)
                call.done(c, r, call.userdata);
        c->trim = trim_free(c->trim);
        if (c->changed)
                c->changed(c, c->userdata);
        trim_start_next(c, error >= 0);
}

static void counters_report(Cache *c, const CountersFlush *f) {
        if (f->broken)
                log_notice("Cache %s: broke %u stale ccache lock%s (unchanged for %llu s, or left by a "
                           "cachekeeperd that is gone).", c->config->name, f->broken, f->broken == 1 ? "" : "s",
                           (unsigned long long) (CCACHE_LOCK_STALE_USEC / USEC_PER_SEC));
        if (f->recounted)
                log_notice("Cache %s: recounted ccache's counters of %u level-2 director%s.", c->config->name,
                           f->recounted, f->recounted == 1 ? "y" : "ies");
        if (f->failed)
                log_warning_errno(f->error, "Cache %s: cannot update ccache's counters in %s/%s/stats (%m); "
                                  "they stay as they are.", c->config->name, c->config->path, f->failed_dir);
}

void cache_counters_later(Cache *c) {
        if (c->counters && counters_pending(c->counters) &&
            sd_event_source_get_enabled(c->counters_timer, NULL) == 0) {
                (void) sd_event_source_set_time_relative(c->counters_timer, TRIM_LOCK_RETRY_USEC);
                (void) sd_event_source_set_enabled(c->counters_timer, SD_EVENT_ONESHOT);
        }
}

static int on_counters_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Cache *c = userdata;
        CountersFlush f = { 0 };
        int root = cache_root_get(c);

        if (root < 0)
                return 0;
        if (counters_flush(c->counters, c->account, root, -1, c->scanned_once,
                           event_now(c->event, CLOCK_REALTIME), &f) > 0)
                cache_counters_later(c);
        counters_report(c, &f);
        return 0;
}

int cache_counters_new(Cache *c) {
        int r = counters_new(&c->counters);

        if (r < 0)
                return r;
        r = sd_event_add_time_relative(c->event, &c->counters_timer, CLOCK_MONOTONIC, TRIM_LOCK_RETRY_USEC, 0,
                                       on_counters_timer, c);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(c->counters_timer, "cache-counters");
        return sd_event_source_set_enabled(c->counters_timer, SD_EVENT_OFF);
}

void cache_counters_free(Cache *c) {
        c->counters_timer = sd_event_source_disable_unref(c->counters_timer);
        c->counters = counters_free(c->counters);
}

void cache_counters_recover(Cache *c, int root) {
        unsigned n;

        counters_clear(c->counters);   /* what was owed to a root we lost */
        n = counters_recover(c->counters, root);
        if (n > 0)
                log_notice("Cache %s: broke %u lock%s left by a cachekeeperd that died mid-trim; ccache's "
                           "counters of what %s covered are recounted once the scan is done.", c->config->name,
                           n, n == 1 ? "" : "s", n == 1 ? "it" : "they");
}

static void trim_run(Cache *c) {
        int root = cache_root_get(c), r;

        if (root < 0)
                return;   /* root_lost() finished the trim */
        r = trim_step(c->trim, &(TrimEnv) {
                .account = c->account, .counters = c->counters, .root_fd = root, .dev = c->dev,
                .now = event_now(c->event, CLOCK_MONOTONIC), .realtime = event_now(c->event, CLOCK_REALTIME),
        });
        cache_counters_later(c);
        if (r == 1)
                return;
        if (r == 2) {
                /* Only directories ccache holds locked remain: look again soon. */
                (void) sd_event_source_set_enabled(c->trim_source, SD_EVENT_OFF);
                (void) sd_event_source_set_time_relative(c->trim_timer, TRIM_LOCK_RETRY_USEC);
                (void) sd_event_source_set_enabled(c->trim_timer, SD_EVENT_ONESHOT);
                return;
        }
        cache_trim_finish(c, r);
}

int cache_on_trim_source(sd_event_source *s, void *userdata) {
        trim_run(userdata);
        return 0;
}

int cache_on_trim_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Cache *c = userdata;

        (void) sd_event_source_set_enabled(c->trim_source, SD_EVENT_ON);
        return 0;
}

static int trim_begin(Cache *c, TrimCall *call) {
        uint64_t target = call->target ? call->target
                                       : (uint64_t) ((double) c->config->max_size_bytes * c->config->trim_to);
        int r;

        if (call->has_plan)
                r = trim_new_with_plan(&call->plan, target, call->dry_run, &c->trim);
        else
                r = trim_new(c->account, target, call->dry_run,
                             (int64_t) (event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC), &c->trim);
        if (r < 0)
                return r;
        c->trim_call = *call;
        c->trim_call.has_plan = false;
        c->trim_started = event_now(c->event, CLOCK_MONOTONIC);
        (void) sd_event_source_set_enabled(c->trim_source, SD_EVENT_ON);
        if (c->changed)
                c->changed(c, c->userdata);
        return 0;
}

/* Over its cap and not backing off: an automatic trim is due. */
static bool cap_trim_due(Cache *c) {
        return c->available && c->scanned_once && account_totals(c->account)->bytes > c->config->max_size_bytes &&
               event_now(c->event, CLOCK_MONOTONIC) >= c->trim_backoff_until;
}

/* The running dry run gives way to the cap: it goes back to the head of the
 * queue and is planned again after the cap trim. Returns 0 or -ENOMEM. */
static int dry_run_yield(Cache *c) {
        TrimCall *q = realloc(c->trim_queue, (c->n_trim_queue + 1) * sizeof(TrimCall));

        if (!q)
                return -ENOMEM;
        memmove(q + 1, q, c->n_trim_queue * sizeof(TrimCall));
        q[0] = c->trim_call;
        c->trim_queue = q;
        c->n_trim_queue++;
        c->trim_call = (TrimCall) { 0 };
        c->trim = trim_free(c->trim);
        (void) sd_event_source_set_enabled(c->trim_source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(c->trim_timer, SD_EVENT_OFF);
        return 0;
}

void cache_maybe_trim(Cache *c) {
        /* The cap comes first: before anything queued, and before a dry run
         * (which anyone may ask for, so they cannot hold it off). */
        if (!cap_trim_due(c) || (c->trim && (!trim_result(c->trim)->dry_run || dry_run_yield(c) < 0)))
                return;
        if (trim_begin(c, &(TrimCall) { .reason = "cap" }) < 0)
                log_error("Cache %s: out of memory planning a trim.", c->config->name);
}

/* Starts what comes next: the cap trim if due (cap_first; not while the
 * cache is being torn down), else the queue's head. */
static void trim_start_next(Cache *c, bool cap_first) {
        if (cap_first)
                cache_maybe_trim(c);
        while (!c->trim && c->n_trim_queue > 0) {
                TrimCall call = c->trim_queue[0];
                int r;

                memmove(c->trim_queue, c->trim_queue + 1, --c->n_trim_queue * sizeof(TrimCall));
                r = c->available && c->scanned_once ? trim_begin(c, &call) : -ENODEV;
                if (r < 0)
                        evict_plan_done(&call.plan);
                if (r < 0 && call.done) {
                        TrimResult failed = { .target_bytes = call.target, .dry_run = call.dry_run, .errors = 1 };
                        call.done(c, &failed, call.userdata);
                }
        }
}

static int trim_enqueue(Cache *c, TrimCall *call) {
        TrimCall *q;

        if (!c->available)
                return -ENODEV;
        if (!c->scanned_once)
                return -EAGAIN;
        q = realloc(c->trim_queue, (c->n_trim_queue + 1) * sizeof(TrimCall));
        if (!q)
                return -ENOMEM;
        c->trim_queue = q;
        c->trim_queue[c->n_trim_queue++] = *call;
        /* Someone asked for a real trim: try the cap now too. Not for a dry
         * run: anyone may ask for those, and each would buy a cap trim (a
         * plan over the whole cache and an alert) despite the backoff. */
        if (!call->dry_run)
                c->trim_backoff_until = 0;
        trim_start_next(c, true);
        return 0;
}

int cache_trim_plan(Cache *c, EvictPlan *plan, const char *reason, cache_trim_done_t done, void *userdata) {
        TrimCall call = { .has_plan = true, .plan = *plan, .done = done, .userdata = userdata };
        int r;

        *plan = (EvictPlan) { 0 };
        snprintf(call.reason, sizeof(call.reason), "%s", reason);
        r = trim_enqueue(c, &call);
        if (r < 0)
                evict_plan_done(&call.plan);
        return r;
}

Account *cache_account(Cache *c) {
        return c->account;
}

int cache_trim(Cache *c, uint64_t target, bool dry_run, const char *reason, cache_trim_done_t done, void *userdata) {
        TrimCall call = { .target = target, .dry_run = dry_run, .done = done, .userdata = userdata };

        snprintf(call.reason, sizeof(call.reason), "%s", reason);
        return trim_enqueue(c, &call);
}

const TrimResult *cache_running_trim(const Cache *c, void *userdata) {
        return c->trim && c->trim_call.userdata == userdata ? trim_result(c->trim) : NULL;
}

void cache_trim_forget(Cache *c, void *userdata) {
        if (c->trim && c->trim_call.userdata == userdata)
                c->trim_call.done = NULL;
        for (size_t i = 0; i < c->n_trim_queue; i++)
                if (c->trim_queue[i].userdata == userdata)
                        c->trim_queue[i].done = NULL;
}
