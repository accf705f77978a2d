/* SPDX-License-Identifier: MIT */
/* A cache's status: its state and figures one by one, and the status object
 * (ctl/cachectl.1, STATUS JSON). Reads, never changes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/human.h"
#include "base/status-keys.h"
#include "cache/cache-activity.h"
#include "cache/cache-advice.h"
#include "cache/cache-counts.h"
#include "cache/cache-internal.h"
#include "cache/cache-writers.h"
#include "cache/cache-clock.h"
#include "insight/remote-errors.h"

static const char *const state_names[_CACHE_STATE_MAX] = {
        [CACHE_UNAVAILABLE] = "unavailable",
        [CACHE_SCANNING] = "scanning",
        [CACHE_OK] = "ok",
        [CACHE_OVER_CAP] = "over_cap",
        [CACHE_TRIMMING] = "trimming",
};

const char *cache_state_name(CacheState s) {
        return (unsigned) s < _CACHE_STATE_MAX ? state_names[s] : "?";
}

CacheState cache_state(const Cache *c) {
        const TrimResult *r;

        if (!c->available)
                return CACHE_UNAVAILABLE;
        if (!scan_queue_scanned(c->scans))
                return CACHE_SCANNING;
        if ((r = trim_queue_current(c->trims, NULL)) && !r->dry_run)
                return CACHE_TRIMMING;
        return trim_queue_over_cap(c->trims) ? CACHE_OVER_CAP : CACHE_OK;
}

bool cache_ready(const Cache *c) {
        return !c->available || scan_queue_scanned(c->scans);
}

const CacheConfig *cache_config(const Cache *c) {
        return c->config;
}

const AccountTotals *cache_totals(const Cache *c) {
        return account_totals(c->account);
}

dev_t cache_dev(const Cache *c) {
        return c->available ? c->dev : 0;
}

const TrimResult *cache_running_trim(const Cache *c, void *userdata) {
        return trim_queue_running(c->trims, userdata);
}


/* A double that prints as people write it (0.9, not 0.90000000000000002). */
static json_object *json_double(double d) {
        char s[32];

        snprintf(s, sizeof(s), "%.6g", d);
        return json_object_new_double_s(d, s);
}

static json_object *status_kinds(const AccountTotals *t) {
        json_object *kinds = json_object_new_object();

        for (int k = 0; k < _CCACHE_KIND_MAX; k++) {
                json_object *o = json_object_new_object();
                JSON_ADD(o, STATUS_KIND_FILES, JSON_U64(t->kind_files[k]));
                JSON_ADD(o, STATUS_KIND_BYTES, JSON_U64(t->kind_bytes[k]));
                JSON_ADD(kinds, ccache_kind_name((CcacheKind) k), o);
        }
        return kinds;
}

static json_object *status_scan(Cache *c) {
        json_object *o = json_object_new_object();
        const ScanHistory *h = scan_queue_history(c->scans);
        const char *reason;
        usec_t started;
        const ScanProgress *p = scan_queue_current(c->scans, &reason, &started);

        JSON_ADD(o, STATUS_SCAN_RUNNING, json_object_new_boolean(p != NULL));
        if (p) {
                JSON_ADD(o, STATUS_SCAN_REASON, json_object_new_string(reason));
                JSON_ADD(o, STATUS_SCAN_DIRS, JSON_U64(p->dirs));
                JSON_ADD(o, STATUS_SCAN_FILES, JSON_U64(p->files));
                JSON_ADD(o, STATUS_SCAN_SECONDS,
                         json_double((double) (event_now(c->event, CLOCK_MONOTONIC) - started) / USEC_PER_SEC));
        }
        JSON_ADD(o, STATUS_SCAN_RESCANS, JSON_U64(h->rescans));
        if (h->rescans) {
                json_object *l = json_object_new_object();
                JSON_ADD(l, STATUS_RESCAN_REASON, json_object_new_string(h->reason));
                JSON_ADD(l, STATUS_RESCAN_AT, JSON_U64(h->at / USEC_PER_SEC));
                JSON_ADD(l, STATUS_RESCAN_SECONDS, json_double((double) h->duration / USEC_PER_SEC));
                JSON_ADD(l, STATUS_RESCAN_ADDED, JSON_U64(h->added));
                JSON_ADD(l, STATUS_RESCAN_CHANGED, JSON_U64(h->changed));
                JSON_ADD(l, STATUS_RESCAN_REMOVED, JSON_U64(h->removed));
                JSON_ADD(o, STATUS_SCAN_LAST, l);
        }
        JSON_ADD(o, STATUS_SCAN_INOTIFY_OVERFLOWS, JSON_U64(c->overflows));
        /* The running scan's finds are in the size already: in these too. */
        JSON_ADD(o, STATUS_SCAN_FOUND_FILES_TOTAL,
                 JSON_U64(h->found_files + (p && scan_queue_scanned(c->scans) ? p->added : 0)));
        JSON_ADD(o, STATUS_SCAN_FOUND_BYTES_TOTAL,
                 JSON_U64(h->found_bytes + (p && scan_queue_scanned(c->scans) ? p->added_bytes : 0)));
        JSON_ADD(o, STATUS_SCAN_WATCHES, JSON_U64(c->available ? c->watches : 0));
        JSON_ADD(o, STATUS_SCAN_MAX_WATCHES, JSON_U64(c->max_watches));
        JSON_ADD(o, STATUS_SCAN_UNWATCHED_DIRS, JSON_U64(cache_unwatched_dirs(c)));
        return o;
}

static json_object *trim_result_json(const TrimResult *r, const char *reason, usec_t at, usec_t duration) {
        json_object *o = json_object_new_object();

        if (reason)
                JSON_ADD(o, STATUS_TRIM_REASON, json_object_new_string(reason));
        if (at)
                JSON_ADD(o, STATUS_TRIM_AT, JSON_U64(at / USEC_PER_SEC));
        if (duration)
                JSON_ADD(o, STATUS_TRIM_SECONDS, json_double((double) duration / USEC_PER_SEC));
        JSON_ADD(o, STATUS_TRIM_DRY_RUN, json_object_new_boolean(r->dry_run));
        JSON_ADD(o, STATUS_TRIM_TARGET_BYTES, JSON_U64(r->target_bytes));
        JSON_ADD(o, STATUS_TRIM_PLANNED_FILES, JSON_U64(r->planned_files));
        JSON_ADD(o, STATUS_TRIM_PLANNED_BYTES, JSON_U64(r->planned_bytes));
        JSON_ADD(o, STATUS_TRIM_FILES, JSON_U64(r->files));
        JSON_ADD(o, STATUS_TRIM_BYTES, JSON_U64(r->bytes));
        JSON_ADD(o, STATUS_TRIM_OLDEST_KEPT_MTIME, JSON_U64(r->oldest_kept));
        JSON_ADD(o, STATUS_TRIM_INFLIGHT_BYTES, JSON_U64(r->inflight_bytes));
        JSON_ADD(o, STATUS_TRIM_SAVED, JSON_U64(r->saved));
        JSON_ADD(o, STATUS_TRIM_LOCKED_DIRS, JSON_U64(r->locked_dirs));
        JSON_ADD(o, STATUS_TRIM_ERRORS, JSON_U64(r->errors));
        JSON_ADD(o, STATUS_TRIM_STATS_UPDATES, JSON_U64(r->stats_updates));
        JSON_ADD(o, STATUS_TRIM_STATS_FAILURES, JSON_U64(r->stats_failures));
        JSON_ADD(o, STATUS_TRIM_STATS_DEFERRED, JSON_U64(r->stats_deferred));
        JSON_ADD(o, STATUS_TRIM_LOCKS_BROKEN, JSON_U64(r->locks_broken));
        if (r->beyond_table)
                JSON_ADD(o, STATUS_TRIM_BEYOND_TABLE_FILES, JSON_U64(r->beyond_table));
        return o;
}

json_object *cache_trim_json(const TrimResult *r) {
        return trim_result_json(r, NULL, 0, 0);
}

/* The trims' part: totals, the running one, the last real one. */
static void status_trims(Cache *c, json_object *o) {
        const TrimRecord *h = trim_queue_record(c->trims);
        const char *reason;
        const TrimResult *r = trim_queue_current(c->trims, &reason);

        /* Every part as the activity counted it (cache_activity_balance),
         * so that they add up to the size: the evictions as each went,
         * not at the end of each trim. */
        cache_activity_balance(c);
        JSON_ADD(o, STATUS_CACHE_EVICTED_FILES_TOTAL, JSON_U64(c->seen_files[ACTIVITY_EVICTION]));
        JSON_ADD(o, STATUS_CACHE_EVICTED_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_EVICTION]));
        JSON_ADD(o, STATUS_CACHE_STORED_FILES_TOTAL, JSON_U64(c->seen_files[ACTIVITY_STORE]));
        JSON_ADD(o, STATUS_CACHE_STORED_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_STORE]));
        JSON_ADD(o, STATUS_CACHE_REFRESHED_FILES_TOTAL, JSON_U64(c->seen_files[ACTIVITY_HIT]));
        JSON_ADD(o, STATUS_CACHE_REMOVED_FILES_TOTAL, JSON_U64(c->seen_files[ACTIVITY_REMOVAL]));
        JSON_ADD(o, STATUS_CACHE_REMOVED_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_REMOVAL]));
        JSON_ADD(o, STATUS_CACHE_OTHER_ADDED_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_OTHER_ADDED]));
        JSON_ADD(o, STATUS_CACHE_OTHER_REMOVED_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_OTHER_REMOVED]));
        JSON_ADD(o, STATUS_CACHE_ADJUSTED_UP_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_ADJUSTED_UP]));
        JSON_ADD(o, STATUS_CACHE_ADJUSTED_DOWN_BYTES_TOTAL, JSON_U64(c->seen_bytes[ACTIVITY_ADJUSTED_DOWN]));
        JSON_ADD(o, STATUS_CACHE_SIZE_BASE_BYTES, c->fed_size == ACTIVITY_SIZE_UNKNOWN
                                                          ? NULL : json_object_new_int64(cache_activity_size_base(c)));
        if (r)
                JSON_ADD(o, STATUS_CACHE_TRIM, trim_result_json(r, reason, 0, 0));
        if (h->has_last) {
                json_object *l = trim_result_json(&h->last, trim_reason_name(h->last_reason), h->last_at, h->last_duration);
                JSON_ADD(l, STATUS_TRIM_OVER_CAP_AFTER, json_object_new_boolean(h->last_over_cap));
                JSON_ADD(o, STATUS_CACHE_LAST_TRIM, l);
        }
}

/* hit_rate_1h, _24h, _7d: ccache's hits / (hits + misses) over the window,
 * null without cacheable calls in it. */
static void status_hit_rates(Cache *c, json_object *o) {
        static const struct {
                const char *key;
                usec_t window;
        } windows[] = {
                { STATUS_CACHE_HIT_RATE_1H, 3600 * USEC_PER_SEC },
                { STATUS_CACHE_HIT_RATE_24H, 24 * 3600 * USEC_PER_SEC },
                { STATUS_CACHE_HIT_RATE_7D, 7 * 24 * 3600 * USEC_PER_SEC },
        };
        usec_t now = event_now(c->event, CLOCK_REALTIME);

        for (size_t i = 0; i < ELEMENTSOF(windows); i++) {
                double rate;
                JSON_ADD(o, windows[i].key, cache_hit_rate(c, windows[i].window, now, &rate) ? json_double(rate)
                                                                                          : NULL);
        }
}

/* regret: the stores of entries the daemon had evicted (regret.h), their
 * share of all stores over 7 days, and the cap that would have kept 90 %
 * of them, rounded up (null without any). */
static void status_regret(Cache *c, json_object *o) {
        usec_t now = event_now(c->event, CLOCK_REALTIME);
        json_object *r = json_object_new_object();
        ActivityCounts week;
        RegretFigures f;

        regret_figures(c->regret, now / USEC_PER_SEC, &f);
        activity_sum(c->activity, now - 7 * 24 * 3600 * USEC_PER_SEC + 1, now + 1, &week);
        JSON_ADD(r, STATUS_REGRET_STORES_24H, JSON_U64(f.stores_24h));
        JSON_ADD(r, STATUS_REGRET_STORES_7D, JSON_U64(f.stores_7d));
        JSON_ADD(r, STATUS_REGRET_BYTES_24H, JSON_U64(f.bytes_24h));
        JSON_ADD(r, STATUS_REGRET_BYTES_7D, JSON_U64(f.bytes_7d));
        JSON_ADD(r, STATUS_REGRET_SHARE_7D, week.n[ACTIVITY_STORE] ? json_double((double) f.stores_7d /
                                                                     (double) week.n[ACTIVITY_STORE]) : NULL);
        JSON_ADD(r, STATUS_REGRET_SUGGESTED_MAX_SIZE_BYTES,
                 f.stores_7d ? JSON_U64(round_size_up(c->config->max_size_bytes + f.extra_bytes_p90)) : NULL);
        JSON_ADD(r, STATUS_REGRET_REMEMBERED_EVICTIONS, JSON_U64(f.remembered));
        JSON_ADD(o, STATUS_CACHE_REGRET, r);
}

/* working_set_files and working_set_bytes: the entries used within the
 * last 1 h, 24 h, 7 d and 30 d (mtime), exact as of at most CACHE_WS_USEC
 * ago (cache-counts.c). */
static void status_working_set(Cache *c, json_object *o) {
        json_object *files = json_object_new_object(), *bytes = json_object_new_object();

        cache_counts_refresh(c, CACHE_WS_USEC);
        for (size_t i = 0; i < CACHE_WS_WINDOWS; i++) {
                JSON_ADD(files, cache_ws_windows[i].key, JSON_U64(c->ws_files[i]));
                JSON_ADD(bytes, cache_ws_windows[i].key, JSON_U64(c->ws_bytes[i]));
        }
        JSON_ADD(o, STATUS_CACHE_WORKING_SET_FILES, files);
        JSON_ADD(o, STATUS_CACHE_WORKING_SET_BYTES, bytes);
        JSON_ADD(o, STATUS_CACHE_WRITERS, cache_writers_json(c));
        JSON_ADD(o, STATUS_CACHE_WRITERS_PENDING, JSON_U64(cache_writers_unread(c)));
        JSON_ADD(o, STATUS_CACHE_KEY_FAMILIES, cache_families_json(c, event_now(c->event, CLOCK_REALTIME)));
}

int cache_history(const Cache *c, unsigned seconds, unsigned count, usec_t now, history_row_t cb, void *userdata) {
        return history_rows(c->activity, now, seconds, count, cb, userdata);
}

/* The thresholds of the cache's alarms, as configured, and which alarms
 * stand: what monitoring needs to alert as the daemon does. */
static void status_alarms(Cache *c, json_object *o) {
        const CacheConfig *cc = c->config;
        json_object *a = json_object_new_object();

        JSON_ADD(o, STATUS_CACHE_REGRET_ALERT, json_double(cc->regret_alert));
        JSON_ADD(o, STATUS_CACHE_SILENT_WINDOW_SECONDS, JSON_U64(cc->silent_window_usec / USEC_PER_SEC));
        JSON_ADD(o, STATUS_CACHE_SILENT_MIN_CALLS, JSON_U64(cc->silent_min_calls));
        JSON_ADD(o, STATUS_CACHE_SILENT_HIT_RATE, json_double(cc->silent_hit_rate));
        JSON_ADD(o, STATUS_CACHE_IDLE_AFTER_SECONDS, JSON_U64(cc->idle_after_usec / USEC_PER_SEC));
        JSON_ADD(a, alert_kind_name(ALERT_CACHE_SILENT_MISS), json_object_new_boolean(c->alarms.silent));
        JSON_ADD(a, alert_kind_name(ALERT_CACHE_IDLE), json_object_new_boolean(c->alarms.idle));
        JSON_ADD(a, alert_kind_name(ALERT_CACHE_CAP_SMALL), json_object_new_boolean(c->cap_small));
        JSON_ADD(a, alert_kind_name(ALERT_CACHE_VERSION_MIX), json_object_new_boolean(c->version_mix));
        JSON_ADD(o, STATUS_CACHE_ALARMS, a);
}

/* remote-errors: ccache's remote storage errors and timeouts in the window. */
static json_object *status_remote_errors(const Cache *c) {
        usec_t w = c->config->remote_errors_window_usec;
        json_object *o = json_object_new_object();

        JSON_ADD(o, STATUS_REMOTE_ERRORS_WINDOW_SECONDS, JSON_U64(w / USEC_PER_SEC));
        JSON_ADD(o, STATUS_REMOTE_ERRORS_ERRORS,
                 JSON_U64(remote_errors_count(c->activity, w, event_now(c->event, CLOCK_REALTIME), NULL, NULL)));
        JSON_ADD(o, STATUS_REMOTE_ERRORS_ALERT, json_object_new_boolean(c->remote_errors));
        return o;
}

json_object *cache_status_json(Cache *c) {
        const CacheConfig *cc = c->config;
        const AccountTotals *t = account_totals(c->account);
        json_object *o = json_object_new_object();
        uint64_t entry_files = 0, entry_bytes = 0;
        int64_t oldest, newest;
        char mode[8];
        struct stat st;

        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                if (ccache_kind_is_entry((CcacheKind) k)) {
                        entry_files += t->kind_files[k];
                        entry_bytes += t->kind_bytes[k];
                }
        cache_counts_refresh(c, CACHE_WS_USEC);   /* a pass at most every 5 s, never one per request */
        account_entry_mtime_span_recent(c->account, &oldest, &newest);
        snprintf(mode, sizeof(mode), "%04o", (unsigned) cc->mode);
        JSON_ADD(o, STATUS_CACHE_NAME, json_object_new_string(cc->name));
        JSON_ADD(o, STATUS_CACHE_PATH, json_object_new_string(cc->path));
        JSON_ADD(o, STATUS_CACHE_STATE, json_object_new_string(cache_state_name(cache_state(c))));
        if (!c->available)
                JSON_ADD(o, STATUS_CACHE_REASON, json_object_new_string(c->reason));
        JSON_ADD(o, STATUS_CACHE_SIZE_BYTES, JSON_U64(t->bytes));
        JSON_ADD(o, STATUS_CACHE_FILES, JSON_U64(t->files));
        JSON_ADD(o, STATUS_CACHE_MAX_SIZE_BYTES, JSON_U64(cc->max_size_bytes));
        JSON_ADD(o, STATUS_CACHE_MAX_SIZE_TEXT, json_object_new_string(cc->max_size_text));
        JSON_ADD(o, STATUS_CACHE_TRIM_TO, json_double(cc->trim_to));
        JSON_ADD(o, STATUS_CACHE_MODE, json_object_new_string(mode));
        bool have_root = c->available && lstat(cc->path, &st) == 0;
        JSON_ADD(o, STATUS_CACHE_MODE_OK, json_object_new_boolean(have_root && (st.st_mode & 07777) == cc->mode));
        if (have_root) {
                char id[48];

                snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
                JSON_ADD(o, STATUS_CACHE_ROOT_ID, json_object_new_string(id));
        }
        JSON_ADD(o, STATUS_CACHE_MOUNT, c->available ? json_object_new_string(c->mount) : NULL);
        JSON_ADD(o, STATUS_CACHE_HITS, JSON_U64(t->hits));
        JSON_ADD(o, STATUS_CACHE_MISSES, JSON_U64(t->misses));
        status_hit_rates(c, o);
        status_working_set(c, o);
        status_regret(c, o);
        JSON_ADD(o, STATUS_CACHE_CAP_ADVICE, cache_advice_json(c, event_now(c->event, CLOCK_REALTIME)));
        status_alarms(c, o);
        status_trims(c, o);
        JSON_ADD(o, STATUS_CACHE_MODE_REPAIRS, JSON_U64(c->mode_repairs));
        JSON_ADD(o, STATUS_CACHE_CCACHE_CONF_MAX_SIZE, c->config->manage_ccache_conf && c->ccache_max_size[0]
                                                    ? json_object_new_string(c->ccache_max_size) : NULL);
        JSON_ADD(o, STATUS_CACHE_CCACHE_CLEANUPS_TOTAL, JSON_U64(cache_activity_ccache_cleanups(c)));
        JSON_ADD(o, STATUS_CACHE_ENTRY_FILES, JSON_U64(entry_files));
        JSON_ADD(o, STATUS_CACHE_ENTRY_BYTES, JSON_U64(entry_bytes));
        JSON_ADD(o, STATUS_CACHE_OLDEST_ENTRY_MTIME, JSON_U64(oldest));
        JSON_ADD(o, STATUS_CACHE_NEWEST_ENTRY_MTIME, JSON_U64(newest));
        JSON_ADD(o, STATUS_CACHE_KINDS, status_kinds(t));
        JSON_ADD(o, STATUS_CACHE_DIRS, JSON_U64(t->dirs));
        JSON_ADD(o, STATUS_CACHE_SCAN, status_scan(c));
        JSON_ADD(o, STATUS_CACHE_MEMORY_BYTES, JSON_U64(account_memory(c->account) + cache_activity_memory(c)));
        JSON_ADD(o, STATUS_CACHE_REMOTE_ERRORS, status_remote_errors(c));
        return o;
}

/* Why the share's LRU may be blind: no entry older than a day was read
 * since it was written (atime does not move: noatime, or nobody hits) and
 * no hit refreshed an mtime. NULL when a clock moves, or nothing says yet. */
static const char *clock_warning(Cache *c, int64_t oldest, int64_t now) {
        if (!c->clock_scanned || c->clock_touched > 0 || c->clock_read > 0 || c->mtime_refresh_seen ||
            oldest == 0 || oldest > now - 86400)
                return NULL;
        return "neither clock moves: no entry was read since it was written (atime) nor refreshed by a hit "
               "(mtime), so least recently used is least recently written; mount the share without noatime, "
               "or give the writers' remote_storage URL |update-mtime=true";
}

void cache_remote_status(Cache *c, json_object *o) {
        const CacheConfig *cc = c->config;
        const AccountTotals *t = account_totals(c->account);
        int64_t now = (int64_t) (event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC), oldest, newest;
        uint64_t entry_files = 0, entry_bytes = 0;
        json_object *e = json_object_new_object(), *alerts = json_object_new_array();
        const char *warning;

        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                if (ccache_kind_is_entry((CcacheKind) k)) {
                        entry_files += t->kind_files[k];
                        entry_bytes += t->kind_bytes[k];
                }
        cache_counts_refresh(c, CACHE_WS_USEC);
        account_entry_mtime_span_recent(c->account, &oldest, &newest);
        warning = clock_warning(c, oldest, now);
        JSON_ADD(o, STATUS_SHARE_PATH, json_object_new_string(cc->path));
        JSON_ADD(o, STATUS_REMOTE_STATE, json_object_new_string(cache_state_name(cache_state(c))));
        JSON_ADD(o, STATUS_SHARE_REASON, c->available ? NULL : json_object_new_string(c->reason));
        JSON_ADD(o, STATUS_REMOTE_LAST_ERROR, json_object_new_string(c->available ? "" : c->reason));
        if (!c->available && c->share_holder.host[0]) {
                json_object *k = json_object_new_object();

                JSON_ADD(k, STATUS_KEEPER_HOST, json_object_new_string(c->share_holder.host));
                JSON_ADD(k, STATUS_KEEPER_PID, json_object_new_int(c->share_holder.pid));
                JSON_ADD(k, STATUS_KEEPER_HEARTBEAT_AGE_SECONDS, json_object_new_int64(now - c->share_holder.beat));
                JSON_ADD(o, STATUS_SHARE_KEPT_BY, k);
        } else
                JSON_ADD(o, STATUS_SHARE_KEPT_BY, NULL);
        JSON_ADD(o, STATUS_REMOTE_LEVEL, json_object_new_string(c->remote_level ? "critical" : "ok"));
        JSON_ADD(o, STATUS_SHARE_MOUNT, c->available ? json_object_new_string(c->mount) : NULL);
        JSON_ADD(o, STATUS_SHARE_SIZE_BYTES, JSON_U64(t->bytes));
        JSON_ADD(o, STATUS_SHARE_FILES, JSON_U64(t->files));
        JSON_ADD(o, STATUS_SHARE_ENTRY_FILES, JSON_U64(entry_files));
        JSON_ADD(o, STATUS_SHARE_ENTRY_BYTES, JSON_U64(entry_bytes));
        JSON_ADD(o, STATUS_SHARE_MAX_SIZE_BYTES, JSON_U64(cc->max_size_bytes));
        JSON_ADD(o, STATUS_SHARE_MAX_SIZE_TEXT, json_object_new_string(cc->max_size_text));
        JSON_ADD(o, STATUS_SHARE_TRIM_TO, json_double(cc->trim_to));
        JSON_ADD(o, STATUS_SHARE_WATCH, json_object_new_string(c->poll ? "poll" : "inotify"));
        JSON_ADD(o, STATUS_SHARE_WATCH_REASON, json_object_new_string(c->watch_reason));
        JSON_ADD(o, STATUS_SHARE_RESCAN_INTERVAL_SECONDS, JSON_U64(cc->rescan_interval_usec / USEC_PER_SEC));
        JSON_ADD(o, STATUS_SHARE_CLOCK, json_object_new_string(cache_clock_name(c->clock)));
        JSON_ADD(o, STATUS_SHARE_CLOCK_CONFIGURED, json_object_new_string(cache_clock_name(cc->clock)));
        JSON_ADD(e, STATUS_CLOCK_SCANNED, json_object_new_boolean(c->clock_scanned));
        JSON_ADD(e, STATUS_CLOCK_ENTRY_FILES, JSON_U64(c->clock_entries));
        JSON_ADD(e, STATUS_CLOCK_TOUCHED_FILES, JSON_U64(c->clock_touched));
        JSON_ADD(e, STATUS_CLOCK_MTIME_MIN_TOUCHED, JSON_U64(REMOTE_CLOCK_MTIME_MIN_TOUCHED));
        JSON_ADD(e, STATUS_CLOCK_MTIME_MIN_SHARE, json_double(REMOTE_CLOCK_MTIME_MIN_PERMILLE / 1000.0));
        JSON_ADD(e, STATUS_CLOCK_READ_FILES, JSON_U64(c->clock_read));
        JSON_ADD(e, STATUS_CLOCK_MTIME_REFRESH_SEEN, json_object_new_boolean(c->mtime_refresh_seen));
        JSON_ADD(o, STATUS_SHARE_CLOCK_EVIDENCE, e);
        JSON_ADD(o, STATUS_SHARE_CLOCK_WARNING, warning ? json_object_new_string(warning) : NULL);
        JSON_ADD(o, STATUS_SHARE_OLDEST_ENTRY_TIME, JSON_U64(oldest));
        JSON_ADD(o, STATUS_SHARE_NEWEST_ENTRY_TIME, JSON_U64(newest));
        status_trims(c, o);
        JSON_ADD(o, STATUS_SHARE_KINDS, status_kinds(t));
        JSON_ADD(o, STATUS_SHARE_DIRS, JSON_U64(t->dirs));
        JSON_ADD(o, STATUS_SHARE_SCAN, status_scan(c));
        JSON_ADD(o, STATUS_SHARE_MEMORY_BYTES, JSON_U64(account_memory(c->account) + cache_activity_memory(c)));
        if (c->remote_level)
                json_object_array_add(alerts, json_object_new_string(alert_kind_name(ALERT_REMOTE_LEVEL)));
        if (!c->available)
                json_object_array_add(alerts, json_object_new_string(alert_kind_name(ALERT_CACHE_UNAVAILABLE)));
        JSON_ADD(o, STATUS_REMOTE_ALERTS, alerts);
}
