/* SPDX-License-Identifier: MIT */
/* One cache root: finds or creates it (never on the wrong filesystem), keeps
 * its Account exact through scans and inotify events, and reports it. Holds
 * no file descriptor between loop iterations, so it never pins a mount. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "config/config.h"
#include "evict/trim-queue.h"
#include "insight/activity.h"
#include "insight/history.h"
#include "insight/regret.h"
#include "os/watch.h"
#include "tree/account.h"

typedef enum CacheState {
        CACHE_UNAVAILABLE,   /* require_mount absent, root unusable: reason says why */
        CACHE_SCANNING,      /* the first walk is running: figures are partial */
        CACHE_OK,
        CACHE_OVER_CAP,
        CACHE_TRIMMING,
        _CACHE_STATE_MAX,
} CacheState;

const char *cache_state_name(CacheState s);

typedef struct Cache Cache;

/* Called when a cache's state or figures changed in a way the manager acts
 * on (became available or unavailable, first scan finished, over its cap). */
typedef void (*cache_changed_t)(Cache *c, void *userdata);

typedef struct Alerter Alerter;

/* A cache for config (borrowed: must outlive the cache or be replaced with
 * cache_set_config); its events go to alerter (borrowed). Does nothing until
 * cache_start. Returns 0 or -errno. */
int cache_new(sd_event *e, Watch *w, Alerter *alerter, const CacheConfig *config, cache_changed_t changed,
              void *userdata, Cache **ret);
Cache *cache_free(Cache *c);
/* A cache a reload no longer configures, before it is freed: each alert
 * that stands for it (cache-unavailable, cap-small, version-mix,
 * silent-miss, idle, remote-errors) gets its recovery, saying why. */
void cache_retire(Cache *c);
static inline void cache_freep(Cache **c) {
        cache_free(*c);
}

/* The state directory (borrowed, must outlive the cache; -1: none) where
 * the cache takes its root's lock (root-lock.h): one daemon per cache root.
 * Without one, no lock is taken. */
void cache_set_state_dir(Cache *c, int dirfd);

/* Takes the root's lock now, if a state directory is set and it is not
 * held yet. Returns 0 (held, or no state directory), -EBUSY when another
 * process holds it (*ret_holder: its pid, 0 if unknown), or -errno. */
int cache_lock(Cache *c, pid_t *ret_holder);

/* Brings the cache up: takes the root's lock (cache_lock), checks the mount,
 * creates the root if missing, starts the first scan. An unusable cache
 * becomes unavailable (not an error), a cache whose lock another daemon
 * holds too: it is tried again with each cache_check until that daemon is
 * gone. */
void cache_start(Cache *c);

/* Re-checks what events cannot tell: the mount appearing or going, the root
 * replaced behind our back; and, at monotonic now, starts the scans that
 * are due (scan-queue.h: retries, hard links, unwatched directories).
 * Cheap; call on mount changes and periodically. */
void cache_check(Cache *c, usec_t now);

/* Queues a full rescan (reason is logged and reported). */
void cache_rescan(Cache *c, const char *reason);

/* inotify lost events (queue overflow): counts it, checks modes and
 * ccache.conf in full, and rescans. */
void cache_events_lost(Cache *c);

typedef struct TrimResult TrimResult;
/* The same type as trim-queue.h's trim_done_t, which the queue calls. */
typedef void (*cache_trim_done_t)(Cache *c, const TrimResult *r, void *userdata);

/* Evicts least recently used entries down to target bytes (0: the cache's
 * trim_to of max_size), after any trim already running. A dry run only
 * plans. done is called when it is over (with errors = 1 if the cache went
 * unavailable first). Returns 0, -ENODEV (unavailable), -EAGAIN (not scanned
 * yet) or -ENOMEM. */
int cache_trim(Cache *c, uint64_t target, bool dry_run, TrimReason reason, cache_trim_done_t done,
               void *userdata);
/* Carries out plan (taken over; from evict_plan_multi over several caches'
 * accounts), after any trim already running. As cache_trim otherwise. */
typedef struct EvictPlan EvictPlan;
int cache_trim_plan(Cache *c, EvictPlan *plan, TrimReason reason, cache_trim_done_t done, void *userdata);
/* Evicts exactly the entries whose header names version (NULL: any) and
 * namespace (NULL: any), under the rules of every trim (trim.h: each
 * re-checked, ccache's locks and counters kept); a dry run counts them and
 * calls done at once. -EBUSY while some entries' headers are not read yet
 * (writers_pending), -ENODEV/-EAGAIN as cache_trim, -ENOMEM. An entry hit
 * while it runs stays. */
int cache_trim_writer(Cache *c, const char *version, const char *ns, bool dry_run, cache_trim_done_t done,
                      void *userdata);
/* When and why the entry of a ccache key last left c: key as ccache prints
 * it, its entries named "<key>" (4.13+) or "<key>R" / "<key>M"; of them,
 * the one that left last within regret's horizon (regret_left_at; now is
 * realtime). ret->kind says which, unknown for a 4.13+ name (which does not
 * tell a result from a manifest). Returns false, *ret untouched, when the
 * daemon remembers none of them leaving. */
typedef enum CacheLeftKind { CACHE_LEFT_UNKNOWN_KIND, CACHE_LEFT_RESULT, CACHE_LEFT_MANIFEST } CacheLeftKind;
typedef struct CacheLeft {
        uint32_t at;                    /* unix seconds */
        RegretBy by;
        CacheLeftKind kind;
} CacheLeft;
bool cache_left(const Cache *c, const char *key, usec_t now, CacheLeft *ret);
/* Entries whose header is not read yet, counted now. */
uint64_t cache_writers_pending(Cache *c);
/* A scan of the cache runs (a subtree that appeared, a rescan): until it
 * ends, entries of the directories it lists may be missing from the account. */
bool cache_scan_busy(const Cache *c);
/* The cache's accounting, for planning across caches. Borrowed. */
Account *cache_account(Cache *c);

/* The root for this loop iteration (borrowed: closed after it; never kept
 * across iterations) and its device, for a merge; -errno while the cache
 * is unavailable or its root went (the cache is set up again). */
int cache_root(Cache *c, dev_t *ret_dev);
/* Entries moved into (add_*) or out of (sub_*) level-2 directory <l1>/<l2>
 * (hex digit values) by a merge: owed ccache's counters (trim_queue_moved). */
void cache_counters_moved(Cache *c, unsigned l1, unsigned l2, uint64_t add_files, uint64_t add_kib,
                          uint64_t sub_files, uint64_t sub_kib);
/* ccache's counters of <l1>/<l2> are recounted from the account, as after a
 * trim that died (trim-queue.h): a merge that died left them unknown. */
void cache_recount(Cache *c, unsigned l1, unsigned l2);

/* The running trim's progress, if it was started for userdata; else NULL. */
const TrimResult *cache_running_trim(const Cache *c, void *userdata);
/* The caller behind userdata is gone: do not call its done. */
void cache_trim_forget(Cache *c, void *userdata);
json_object *cache_trim_json(const TrimResult *r);

/* Adopts a new config for the same name and path (after a reload) and
 * rewrites ccache.conf for it (a new max_size) if the cache is kept. */
void cache_set_config(Cache *c, const CacheConfig *config);

const CacheConfig *cache_config(const Cache *c);
CacheState cache_state(const Cache *c);
bool cache_ready(const Cache *c);     /* scanned once, or unavailable: nothing to wait for */
const AccountTotals *cache_totals(const Cache *c);
dev_t cache_dev(const Cache *c);      /* device of the root; 0 while unavailable */

/* Each cache's activity history is the file "<name>.history" of the state
 * directory, its eviction regret "<name>.regret" (state-file.h). */
#define CACHE_HISTORY_SUFFIX ".history"
#define CACHE_REGRET_SUFFIX ".regret"
/* Loads the cache's history and eviction regret from dirfd (the state
 * directory dir, for messages; dirfd < 0: none) at realtime now, once,
 * before its first save. A bad file is set aside and logged once (a warning
 * naming the file and what was wrong); it then starts empty. Never fails. */
void cache_history_load(Cache *c, int dirfd, const char *dir, usec_t now);
/* Feeds the activity (realtime now) and writes the history file and the
 * regret file atomically, each if it changed since its last save. Returns 1
 * written, 0 nothing to write (or dirfd < 0), -errno (logged once until a
 * save works again). */
int cache_history_save(Cache *c, int dirfd, const char *dir, usec_t now);
/* ccache's hit rate over the window before realtime now (activity.h):
 * true and *ret in [0, 1], or false when there were no cacheable calls. */
bool cache_hit_rate(const Cache *c, usec_t window, usec_t now, double *ret);
/* The cache's activity summed over [since, until) (realtime usec), as
 * activity_sum. Returns the granularity. */
unsigned cache_activity_sum(const Cache *c, usec_t since, usec_t until, ActivityCounts *ret);

/* cachectl history's rows of the cache (history_rows: the last count rows
 * of seconds each before realtime now, oldest first, each passed to cb).
 * Reads only: rows are as the activity was last fed (at most
 * CACHE_ACTIVITY_USEC ago). Returns the number of rows, or -EINVAL. */
int cache_history(const Cache *c, unsigned seconds, unsigned count, usec_t now, history_row_t cb, void *userdata);

/* The cache's status object (ctl/cachectl.1, STATUS JSON). New reference. */
json_object *cache_status_json(Cache *c);
/* A share's (a file: remote's) part of its remote status object o: state,
 * who keeps it, figures against the cap, how they are kept, its clock. */
void cache_remote_status(Cache *c, json_object *o);
