/* SPDX-License-Identifier: MIT */
/* The trim queue: one trim at a time, the automatic one first; the next
 * starts when one ends. Handlers read the loop's time once and pass it on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/human.h"
#include "base/log.h"
#include "base/slice.h"
#include "base/status-keys.h"
#include "ccache/ccache-lock.h"
#include "evict/trim-queue.h"

/* An order for a trim: what, and whom to tell. */
typedef struct TrimOrder {
        uint64_t target;
        bool dry_run;
        bool has_plan;                    /* carry out plan instead of planning for target */
        EvictPlan plan;
        TrimReason reason;
        trim_done_t done;
        void *userdata;
} TrimOrder;

struct TrimQueue {
        sd_event *event;
        Cache *owner;                     /* handed to done callbacks, nothing else */
        Account *account;                 /* borrowed */
        const CacheConfig *config;        /* borrowed */
        TrimQueueEnv env;
        bool started;                     /* the cache is available and scanned */
        bool freeing;

        Trim *trim;                       /* the running trim ... */
        TrimOrder order;                  /* ... its order ... */
        usec_t trim_started;              /* ... and when it began (monotonic) */
        TrimOrder *queue;                 /* what waits for it */
        size_t n_queue;
        usec_t backoff_until;             /* monotonic: after a cap trim that evicted nothing */
        bool backoff_for_entries;         /* ... and found nothing to evict: the first entry stored ends it */
        usec_t inflight_since;            /* monotonic: over the cap by ccache's temporaries in use
                                           * since (0: not), and said in the journal */
        bool failed_alerted;              /* cache-trim-failed raised, its recovery not yet */
        bool cap_again;                   /* the last cap trim was outpaced: the next is due */
        sd_event_source *source, *timer;  /* the slices; the retry of held locks */
        usec_t turn_usec;                 /* of slices in the source's turn so far (slice_turn) */
        TrimRecord record;

        Counters *counters;               /* ccache's counters the trims owe */
        int stats_error;                  /* the failure to fix them last said (-errno), 0: none standing */
        char stats_dir[2];                /* ... and its level-1 directory */
        sd_event_source *counters_timer;  /* pays them while stats.lock is held */
};

const char *trim_reason_name(TrimReason r) {
        static const char *const names[_TRIM_REASON_MAX] = {
                [TRIM_REASON_CAP] = STATUS_TRIM_REASON_CAP,
                [TRIM_REASON_MANUAL] = STATUS_TRIM_REASON_MANUAL,
                [TRIM_REASON_DRY_RUN] = STATUS_TRIM_REASON_DRY_RUN,
                [TRIM_REASON_PRESSURE] = STATUS_TRIM_REASON_PRESSURE,
                [TRIM_REASON_MERGE] = STATUS_TRIM_REASON_MERGE,
                [TRIM_REASON_WRITTEN_BY] = STATUS_TRIM_REASON_WRITTEN_BY,
        };

        return (unsigned) r < _TRIM_REASON_MAX ? names[r] : "?";
}

static void changed(TrimQueue *q) {
        if (!q->freeing)
                q->env.changed(q->env.userdata);
}

/* A finished real trim goes into the record, at now (monotonic). */
static void record(TrimQueue *q, const TrimResult *r, TrimReason reason, usec_t now) {
        TrimRecord *h = &q->record;

        h->last = *r;
        h->has_last = true;
        h->last_reason = reason;
        h->last_at = event_now(q->event, CLOCK_REALTIME);
        h->last_duration = now - q->trim_started;
        h->evicted_files += r->files;
        h->evicted_bytes += r->bytes;
        h->last_over_cap = trim_queue_over_cap(q);
}

/* The cap trim r found nothing to evict, and ccache's temporaries in use
 * (r->inflight_bytes) make all of the excess over the cap: the builds of
 * the moment. Several ccache starting at once on a new cache each write an
 * inode cache of some 6 MB and all but one remove theirs a moment later
 * (evict_in_flight): alerting then would say the cap cannot be held while
 * it is about to be. */
static bool over_by_inflight(TrimQueue *q, const TrimResult *r) {
        return r->planned_files == 0 &&
               account_totals(q->account)->bytes <= q->config->max_size_bytes + r->inflight_bytes;
}

/* The cache is over its cap by ccache's temporaries in use (at now), and
 * has been for less than TRIM_INFLIGHT_GRACE_USEC: a line in the journal
 * (once), the cap tried again when the grace ends or an entry is stored.
 * Returns false when the grace is over: a failure. */
static bool inflight_grace(TrimQueue *q, const TrimResult *r, usec_t now) {
        char f[32], k[32], t[32];

        if (q->inflight_since == 0) {
                q->inflight_since = now;
                log_notice("%s %s is over its cap (%s of %s) by ccache's temporaries in use (%s), with no entry "
                           "to evict: tried again as soon as one is stored, alerted if still so in %llu s.",
                           cache_config_what(q->config), q->config->name,
                           format_size(account_totals(q->account)->bytes, f, sizeof(f)),
                           format_size(q->config->max_size_bytes, k, sizeof(k)),
                           format_size(r->inflight_bytes, t, sizeof(t)),
                           (unsigned long long) (TRIM_INFLIGHT_GRACE_USEC / USEC_PER_SEC));
        }
        if (now - q->inflight_since >= TRIM_INFLIGHT_GRACE_USEC)
                return false;
        q->backoff_until = q->inflight_since + TRIM_INFLIGHT_GRACE_USEC;
        return true;
}

/* The cap trim r left the cache over its cap without evicting anything or
 * learning anything: everything left is locked, in use or unreadable. Not
 * tried again for TRIM_BACKOFF_USEC unless something changes (a reload, a
 * manual trim; when r found nothing at all to evict, the first entry stored
 * since: every entry may go as soon as it is there). Said as
 * cache-trim-failed (once per failure: the alert stands until a trim gets
 * the cache under its cap), unless ccache's temporaries in use make the
 * excess, for less than TRIM_INFLIGHT_GRACE_USEC (inflight_grace). A trim
 * that made progress but was outpaced by writers is no failure: the next one
 * starts at once (start_next). */
static void cap_not_reached(TrimQueue *q, const TrimResult *r, usec_t now) {
        char f[32], k[32], why[256], message[512];

        q->backoff_for_entries = r->planned_files == 0;
        if (!q->failed_alerted && over_by_inflight(q, r) && inflight_grace(q, r, now))
                return;
        q->backoff_until = now + TRIM_BACKOFF_USEC;
        if (q->failed_alerted)
                return;
        snprintf(message, sizeof(message),
                 "%s %s is still over its cap after trimming (%s of %s): %s; retrying in %llu s.",
                 cache_config_what(q->config), q->config->name,
                 format_size(account_totals(q->account)->bytes, f, sizeof(f)),
                 format_size(q->config->max_size_bytes, k, sizeof(k)), trim_result_why(r, why, sizeof(why)),
                 (unsigned long long) (TRIM_BACKOFF_USEC / USEC_PER_SEC));
        q->env.alert(q->env.userdata, ALERT_CACHE_TRIM_FAILED, LOG_ERR, NULL, message);
        q->failed_alerted = true;
}

/* A trim got the cache back within its cap after cap_not_reached said it
 * could not: the recovery. */
static void cap_reached(TrimQueue *q) {
        char f[32], k[32], message[512];

        if (!q->failed_alerted)
                return;
        q->failed_alerted = false;
        snprintf(message, sizeof(message), "%s %s is within its cap again (%s of %s).",
                 cache_config_what(q->config), q->config->name,
                 format_size(account_totals(q->account)->bytes, f, sizeof(f)),
                 format_size(q->config->max_size_bytes, k, sizeof(k)));
        q->env.alert(q->env.userdata, ALERT_CACHE_TRIM_FAILED, LOG_INFO, "ok", message);
}

/* ccache's counters that could not be fixed (failed stats files, the first
 * one's error and level-1 directory; written: those fixed): said once, and
 * again when the error or the directory changes, and the recovery once one
 * is written again. A stats file a user replaced by a directory fails the
 * same way at every trim: one line, not one per trim. */
static void counters_said(TrimQueue *q, unsigned failed, int error, const char *dir, unsigned written) {
        if (failed > 0) {
                if (error != q->stats_error || strcmp(dir, q->stats_dir) != 0)
                        log_warning_errno(error, "%s %s: cannot update ccache's counters in %s/%s/stats (%m); "
                                          "they stay as they are; said again when that changes.",
                                          cache_config_what(q->config), q->config->name, q->config->path, dir);
                q->stats_error = error;
                snprintf(q->stats_dir, sizeof(q->stats_dir), "%s", dir);
        } else if (written > 0 && q->stats_error != 0) {
                log_notice("%s %s: ccache's counters are updated again.", cache_config_what(q->config),
                           q->config->name);
                q->stats_error = 0;
        }
}

/* Ends the running trim (error: why it stopped early, or 0) and tells its
 * caller. What comes next is the caller's to start. */
static void finish(TrimQueue *q, int error) {
        const TrimResult *r = trim_result(q->trim);
        TrimOrder order = q->order;
        usec_t now = event_now(q->event, CLOCK_MONOTONIC);
        bool progress;
        char f[32];

        (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
        /* A dry run is its caller's business: last_trim stays the last real one. */
        if (!r->dry_run)
                record(q, r, order.reason, now);
        log_debug("%s %s: %s trim planned %llu files in %llu slices, %.1f ms.",
                  cache_config_what(q->config), q->config->name, trim_reason_name(order.reason),
                  (unsigned long long) r->planned_files, (unsigned long long) r->planning_slices,
                  (double) r->planning_usec / USEC_PER_MSEC);
        if (!r->dry_run)
                log_info("%s %s: %s trim %s: evicted %llu files, %s in %.2f s; %llu kept as used since "
                         "(%llu of them news to the account), %llu in locked directories.",
                         cache_config_what(q->config), q->config->name, trim_reason_name(order.reason),
                         /* words of the journal's line, not a status key */
                         error < 0 ? "stopped" : "done", (unsigned long long) r->files,
                         format_size(r->bytes, f, sizeof(f)), (double) (now - q->trim_started) / USEC_PER_SEC,
                         (unsigned long long) r->saved, (unsigned long long) r->corrected,
                         (unsigned long long) r->locked_dirs);
        counters_said(q, r->stats_failures, r->stats_error, r->stats_failed_dir, r->stats_updates);
        /* Over the cap after a cap trim: with progress (the cache grew
         * meanwhile; or the account, stale after lost events, was put
         * right: the next plan chooses other files), the next trim starts
         * at once; without, back off. */
        progress = r->files > 0 || r->corrected > 0;
        q->cap_again = !r->dry_run && q->record.last_over_cap && order.reason == TRIM_REASON_CAP && progress &&
                       error >= 0;
        if (!r->dry_run && q->record.last_over_cap && order.reason == TRIM_REASON_CAP && !progress && error >= 0)
                cap_not_reached(q, r, now);
        q->order = (TrimOrder) { 0 };
        if (order.done)
                order.done(q->owner, r, order.userdata);
        q->trim = trim_free(q->trim);
        changed(q);
}

/* Tells order's caller it failed (result: errors = 1, with target_bytes if
 * it had begun to count), and drops its plan. */
static void order_fail(TrimQueue *q, TrimOrder *order, bool with_target) {
        TrimResult failed = { .target_bytes = with_target ? order->target : 0, .dry_run = order->dry_run, .errors = 1 };

        evict_plan_done(&order->plan);
        if (order->done)
                order->done(q->owner, &failed, order->userdata);
}

static void pay_later(TrimQueue *q) {
        if (counters_pending(q->counters) && sd_event_source_get_enabled(q->counters_timer, NULL) == 0) {
                (void) sd_event_source_set_time_relative(q->counters_timer, TRIM_LOCK_RETRY_USEC);
                (void) sd_event_source_set_enabled(q->counters_timer, SD_EVENT_ONESHOT);
        }
}

static void start_next(TrimQueue *q, bool cap_first);
static int on_source(sd_event_source *s, void *userdata);

/* TrimEnv.evicted: the queue's, which adds the running trim's reason. */
static void evicted(void *userdata, DirId dir, const char *name, CcacheKind kind, uint64_t bytes, int64_t mtime) {
        TrimQueue *q = userdata;

        q->env.evicted(q->env.userdata, q->order.reason, dir, name, kind, bytes, mtime);
}

static void run(TrimQueue *q) {
        SliceBudget slice;
        dev_t dev;
        int root = q->env.root(q->env.userdata, &dev), r;

        if (root < 0)
                return;   /* the cache stopped the queue if the root is gone */
        slice_begin(&slice, TRIM_SLICE_USEC, 1);   /* the step's own, to count the turn */
        r = trim_step(q->trim, &(TrimEnv) {
                .account = q->account, .counters = q->counters, .root_fd = root, .dev = dev,
                .now = event_now(q->event, CLOCK_MONOTONIC), .realtime = event_now(q->event, CLOCK_REALTIME),
                .atime = q->env.atime && q->env.atime(q->env.userdata),
                .evicted = q->env.evicted ? evicted : NULL,
                .userdata = q,
        });
        pay_later(q);
        if (r == 1) {
                slice_turn(&slice, &q->turn_usec, &q->source, on_source, q);   /* its equals take turns */
                return;
        }
        if (r == 2) {
                /* Only directories ccache holds locked remain: look again soon. */
                (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
                (void) sd_event_source_set_time_relative(q->timer, TRIM_LOCK_RETRY_USEC);
                (void) sd_event_source_set_enabled(q->timer, SD_EVENT_ONESHOT);
                return;
        }
        finish(q, r);
        /* Outpaced by writers, the cap trims follow each other for as long
         * as the writers keep on: a real trim queued meanwhile (which brings
         * the size down too) gets its turn first, not after them. */
        start_next(q, r >= 0 && !(q->cap_again && q->n_queue > 0 && !q->queue[0].dry_run));
}

static int on_source(sd_event_source *s, void *userdata) {
        run(userdata);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        TrimQueue *q = userdata;

        (void) sd_event_source_set_enabled(q->source, SD_EVENT_ON);
        return 0;
}

static int begin(TrimQueue *q, TrimOrder *order) {
        uint64_t target = order->target ? order->target
                                        : (uint64_t) ((double) q->config->max_size_bytes * q->config->trim_to);
        int r;

        if (order->has_plan)
                r = trim_new_with_plan(&order->plan, target, order->dry_run, &q->trim);
        else
                r = trim_new(q->account, target, order->dry_run,
                             (int64_t) (event_now(q->event, CLOCK_REALTIME) / USEC_PER_SEC), &q->trim);
        if (r < 0)
                return r;
        q->order = *order;
        q->order.has_plan = false;
        q->trim_started = event_now(q->event, CLOCK_MONOTONIC);
        /* Only the cap trim stands level with the events: a build flooding
         * the cache with events must not starve the trim that holds its cap
         * (the loop takes them in turns: a batch of events, a slice). Every
         * other trim yields to them. */
        (void) sd_event_source_set_priority(q->source, q->order.reason == TRIM_REASON_CAP ? TRIM_CAP_PRIORITY
                                                                                            : SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_ON);
        changed(q);
        return 0;
}

/* The running dry run gives way to the cap: it goes back to the head of the
 * queue and is planned again after the cap trim. Returns 0 or -ENOMEM. */
static int dry_run_yield(TrimQueue *q) {
        TrimOrder *n = realloc(q->queue, (q->n_queue + 1) * sizeof(TrimOrder));

        if (!n)
                return -ENOMEM;
        memmove(n + 1, n, q->n_queue * sizeof(TrimOrder));
        n[0] = q->order;
        q->queue = n;
        q->n_queue++;
        q->order = (TrimOrder) { 0 };
        q->trim = trim_free(q->trim);
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
        return 0;
}

void trim_queue_check_cap(TrimQueue *q) {
        /* The cap comes first: before anything queued, and before a dry run
         * (which anyone may ask for, so they cannot hold it off). */
        if (q->failed_alerted && q->started && !trim_queue_over_cap(q))
                cap_reached(q);   /* by a trim, a reload, or ccache's own cleanup */
        if (!trim_queue_over_cap(q)) {
                q->inflight_since = 0;
                return;
        }
        /* Backing off after a trim that found nothing to evict: an entry
         * stored since may go at once (account_entry_files is a sum of 4). */
        if (q->backoff_for_entries && account_entry_files(q->account) > 0) {
                q->backoff_until = 0;
                q->backoff_for_entries = false;
        }
        if (event_now(q->event, CLOCK_MONOTONIC) < q->backoff_until ||
            (q->trim && (!trim_result(q->trim)->dry_run || dry_run_yield(q) < 0)))
                return;
        if (begin(q, &(TrimOrder) { .reason = TRIM_REASON_CAP }) < 0)
                log_error("%s %s: out of memory planning a trim.", cache_config_what(q->config), q->config->name);
}

/* Starts what comes next: the cap trim if due (cap_first), else the
 * queue's head. */
static void start_next(TrimQueue *q, bool cap_first) {
        if (cap_first)
                trim_queue_check_cap(q);
        while (!q->trim && q->n_queue > 0) {
                TrimOrder order = q->queue[0];

                memmove(q->queue, q->queue + 1, --q->n_queue * sizeof(TrimOrder));
                if ((q->started ? begin(q, &order) : -ENODEV) < 0)
                        order_fail(q, &order, true);
        }
}

static int enqueue(TrimQueue *q, TrimOrder *order) {
        TrimOrder *n;

        if (!q->started)
                return -EAGAIN;
        n = realloc(q->queue, (q->n_queue + 1) * sizeof(TrimOrder));
        if (!n)
                return -ENOMEM;
        q->queue = n;
        q->queue[q->n_queue++] = *order;
        /* Someone asked for a real trim: try the cap now too. Not for a dry
         * run: anyone may ask for those, and each would buy a cap trim (a
         * plan over the whole cache and an alert) despite the backoff. */
        if (!order->dry_run)
                q->backoff_until = 0;
        start_next(q, true);
        return 0;
}

int trim_queue_add(TrimQueue *q, uint64_t target, bool dry_run, TrimReason reason, trim_done_t done,
                   void *userdata) {
        TrimOrder order = { .target = target, .dry_run = dry_run, .reason = reason, .done = done,
                            .userdata = userdata };

        return enqueue(q, &order);
}

int trim_queue_add_plan(TrimQueue *q, EvictPlan *plan, TrimReason reason, trim_done_t done, void *userdata) {
        TrimOrder order = { .has_plan = true, .plan = *plan, .reason = reason, .done = done, .userdata = userdata };
        int r;

        *plan = (EvictPlan) { 0 };
        r = enqueue(q, &order);
        if (r < 0)
                evict_plan_done(&order.plan);
        return r;
}

void trim_queue_start(TrimQueue *q) {
        q->started = true;
        pay_later(q);   /* recounts waited for the scan */
}

void trim_queue_stop(TrimQueue *q) {
        /* Ended while the figures still stand: last_trim says where it left them. */
        if (q->trim)
                finish(q, -ENODEV);
        q->started = false;
        while (q->n_queue > 0) {
                TrimOrder order = q->queue[0];

                memmove(q->queue, q->queue + 1, --q->n_queue * sizeof(TrimOrder));
                order_fail(q, &order, true);
        }
}

bool trim_queue_over_cap(const TrimQueue *q) {
        return q->started && account_totals(q->account)->bytes > q->config->max_size_bytes;
}

const TrimResult *trim_queue_current(const TrimQueue *q, const char **ret_reason) {
        if (!q->trim)
                return NULL;
        if (ret_reason)
                *ret_reason = trim_reason_name(q->order.reason);
        return trim_result(q->trim);
}

const TrimResult *trim_queue_running(const TrimQueue *q, void *userdata) {
        return q->trim && q->order.userdata == userdata ? trim_result(q->trim) : NULL;
}

void trim_queue_forget(TrimQueue *q, void *userdata) {
        if (q->trim && q->order.userdata == userdata)
                q->order.done = NULL;
        for (size_t i = 0; i < q->n_queue; i++)
                if (q->queue[i].userdata == userdata)
                        q->queue[i].done = NULL;
}

const TrimRecord *trim_queue_record(const TrimQueue *q) {
        return &q->record;
}

static void counters_report(TrimQueue *q, const CountersFlush *f) {
        if (f->broken)
                log_notice("%s %s: broke %u stale ccache lock%s (unchanged for %llu s, or left by a "
                           "cachekeeperd that is gone).",
                           cache_config_what(q->config), q->config->name, f->broken, f->broken == 1 ? "" : "s",
                           (unsigned long long) (CCACHE_LOCK_STALE_USEC / USEC_PER_SEC));
        if (f->recounted)
                log_notice("%s %s: recounted ccache's counters of %u level-2 director%s.",
                           cache_config_what(q->config), q->config->name,
                           f->recounted, f->recounted == 1 ? "y" : "ies");
        counters_said(q, f->failed, f->error, f->failed_dir, f->written);
}

static int on_counters_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        TrimQueue *q = userdata;
        CountersFlush f = { 0 };
        dev_t dev;
        int root = q->env.root(q->env.userdata, &dev);

        if (root < 0)
                return 0;
        /* Recounts wait until the account is exact: the first scan done. */
        if (counters_flush(q->counters, q->account, root, -1, q->started, event_now(q->event, CLOCK_REALTIME), &f) > 0)
                pay_later(q);
        counters_report(q, &f);
        return 0;
}

void trim_queue_recount(TrimQueue *q, unsigned l1, unsigned l2) {
        counters_recount(q->counters, l1, l2);
        pay_later(q);
}

void trim_queue_moved(TrimQueue *q, unsigned l1, unsigned l2, uint64_t add_files, uint64_t add_kib,
                      uint64_t sub_files, uint64_t sub_kib) {
        if (add_files || add_kib)
                counters_add(q->counters, l1, l2, add_files, add_kib);
        if (sub_files || sub_kib)
                counters_subtract(q->counters, l1, l2, sub_files, sub_kib);
        pay_later(q);
}

void trim_queue_recover(TrimQueue *q, int root_fd) {
        unsigned n;

        counters_clear(q->counters);   /* what was owed to a root we lost */
        n = counters_recover(q->counters, root_fd);
        if (n > 0)
                log_notice("Cache %s: broke %u lock%s left by a cachekeeperd that died mid-trim; ccache's "
                           "counters of what %s covered are recounted once the scan is done.", q->config->name,
                           n, n == 1 ? "" : "s", n == 1 ? "it" : "they");
}

void trim_queue_set_config(TrimQueue *q, const CacheConfig *config) {
        q->config = config;
        /* A new cap (or the same one, reloaded: the operator acted) is worth
         * a try now, not at the end of a backoff the old one earned. */
        q->backoff_until = 0;
}

int trim_queue_new(sd_event *e, Cache *owner, Account *account, const CacheConfig *config, const TrimQueueEnv *env,
                   TrimQueue **ret) {
        _cleanup_(trim_queue_freep) TrimQueue *q = NULL;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->event = sd_event_ref(e);
        q->owner = owner;
        q->account = account;
        q->config = config;
        q->env = *env;
        if ((r = counters_new(&q->counters)) < 0 ||
            (r = sd_event_add_defer(e, &q->source, on_source, q)) < 0 ||
            (r = sd_event_add_time_relative(e, &q->timer, CLOCK_MONOTONIC, TRIM_LOCK_RETRY_USEC, 0, on_timer, q)) < 0 ||
            (r = sd_event_add_time_relative(e, &q->counters_timer, CLOCK_MONOTONIC, TRIM_LOCK_RETRY_USEC, 0,
                                            on_counters_timer, q)) < 0)
                return r;
        (void) sd_event_source_set_description(q->source, "cache-trim");
        (void) sd_event_source_set_description(q->timer, "cache-trim-wait");
        (void) sd_event_source_set_description(q->counters_timer, "cache-counters");
        /* Trimming yields to the socket, and to events unless it holds the cap (begin). */
        (void) sd_event_source_set_priority(q->source, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(q->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(q->counters_timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(q);
        return 0;
}

TrimQueue *trim_queue_free(TrimQueue *q) {
        if (!q)
                return NULL;
        /* Whoever waits for a trim hears that it ended; nothing new starts. */
        q->freeing = true;
        if (q->trim)
                finish(q, -ENODEV);
        for (size_t i = 0; i < q->n_queue; i++)
                order_fail(q, &q->queue[i], false);
        free(q->queue);
        sd_event_source_disable_unref(q->source);
        sd_event_source_disable_unref(q->timer);
        sd_event_source_disable_unref(q->counters_timer);
        counters_free(q->counters);
        sd_event_unref(q->event);
        free(q);
        return NULL;
}
