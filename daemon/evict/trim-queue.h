/* SPDX-License-Identifier: MIT */
/* A cache's trims: the automatic one when it goes over its cap, which comes
 * first (a dry run being planned gives way to it); manual, pressure and dry
 * runs queued behind it; each carried out by trim.c in slices from a defer
 * source at idle priority; what they did; and what they owe ccache's
 * counters, paid from a timer while stats.lock is held. Its cache calls it;
 * it reaches the cache only through what TrimQueueEnv lends. Logs. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "config/config.h"
#include "evict/evict.h"
#include "evict/trim.h"
#include "tree/account.h"

/* After an automatic trim that left the cache over its cap having evicted
 * nothing (what is left is locked, in use or unreadable), wait this long
 * before trying again instead of spinning. A reload ends the wait. A trim
 * that evicted but was outpaced by writers is followed by the next at once. */
#define TRIM_BACKOFF_USEC (60 * USEC_PER_SEC)

/* A cache over its cap with nothing to evict, by ccache's temporaries in
 * use (evict_in_flight), is no failure for this long: the inode cache race
 * of ccache starting at once on a new cache lasts under a second, a
 * compile's temporaries go with it. Longer, the cap is smaller than what
 * the builds hold in flight, or someone keeps a file there young: said as
 * cache-trim-failed. The cap is tried again at once when an entry is stored,
 * and at the end of this. */
#define TRIM_INFLIGHT_GRACE_USEC (10 * USEC_PER_SEC)

/* The cap trim's slices run at the inotify sources' priority (WATCH_PRIORITY,
 * checked where both are known): a flood of events takes turns with them,
 * never starves them. Other trims run at idle priority. */
#define TRIM_CAP_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 1)

typedef struct TrimQueue TrimQueue;

/* Why a trim runs; its wire name (trim_reason_name) goes in the status. */
typedef enum TrimReason {
        TRIM_REASON_CAP,                  /* the automatic one: over the cap */
        TRIM_REASON_MANUAL,               /* cachectl trim */
        TRIM_REASON_DRY_RUN,              /* cachectl trim --dry-run */
        TRIM_REASON_PRESSURE,             /* the volume below min_free (space.c) */
        TRIM_REASON_MERGE,                /* room made for a merge (merge.c) */
        TRIM_REASON_WRITTEN_BY,           /* a purge by writer (cache_trim_writer) */
        _TRIM_REASON_MAX,
} TrimReason;

/* STATUS_TRIM_REASON_CAP ("cap") and the others; "?" for none of them. */
const char *trim_reason_name(TrimReason r);

/* The queue's owner, its cache: only handed back to done callbacks, never
 * looked into (the queue knows its name, not its parts: no cache.h here). */
typedef struct Cache Cache;
/* A queued trim is over: r is what it did (errors = 1: it never ran). */
typedef void (*trim_done_t)(Cache *owner, const TrimResult *r, void *userdata);

/* What the cache lends its queue for the queue's lifetime. */
typedef struct TrimQueueEnv {
        /* The root for this loop iteration (fd borrowed) and its device, or
         * -errno while the cache is unavailable. Finding the root gone makes
         * the cache unavailable, which stops the queue (trim_queue_stop)
         * before this returns. */
        int (*root)(void *userdata, dev_t *ret_dev);
        /* A trim began or ended: the cache's state changed. */
        void (*changed)(void *userdata);
        /* An alert about the cache (level NULL, or "ok" for a recovery),
         * message for a person. */
        void (*alert)(void *userdata, AlertKind kind, int priority, const char *level, const char *message);
        /* A file was evicted (TrimEnv.evicted: an entry, or a stale
         * temporary) by a trim for reason; may be NULL. */
        void (*evicted)(void *userdata, TrimReason reason, DirId dir, const char *name, CcacheKind kind,
                        uint64_t bytes, int64_t mtime);
        /* Whether the account's times are atimes now (TrimEnv.atime); NULL: never. */
        bool (*atime)(void *userdata);
        void *userdata;
} TrimQueueEnv;

/* A queue for owner (only handed to done callbacks), trimming account
 * (borrowed: outlives the queue) for config (borrowed; replaced with
 * trim_queue_set_config). Stopped until trim_queue_start. Returns 0 or
 * -errno. */
int trim_queue_new(sd_event *e, Cache *owner, Account *account, const CacheConfig *config, const TrimQueueEnv *env,
                   TrimQueue **ret);
/* Ends the running trim and every queued one (their done callbacks get
 * errors = 1); env's changed is not called. Accepts NULL; returns NULL. */
TrimQueue *trim_queue_free(TrimQueue *q);
static inline void trim_queue_freep(TrimQueue **q) {
        trim_queue_free(*q);
}

/* The cache's config after a reload (borrowed): the cap, trim_to and the
 * name the next decisions use. Ends a backoff: the cap is tried again. */
void trim_queue_set_config(TrimQueue *q, const CacheConfig *config);

/* The cache is available and scanned: trims may run (the cap is checked by
 * trim_queue_check_cap), and ccache's counters owed recounts are paid. */
void trim_queue_start(TrimQueue *q);
/* The cache is no longer available: the running trim ends (last_trim says
 * so), each queued one fails (done with errors = 1), nothing new starts. */
void trim_queue_stop(TrimQueue *q);

/* Queues a trim down to target bytes (0: the cache's trim_to of max_size),
 * behind the running one; a dry run only plans. done(cache, result,
 * userdata) is called when it is over. Returns 0, -EAGAIN (stopped) or
 * -ENOMEM. */
int trim_queue_add(TrimQueue *q, uint64_t target, bool dry_run, TrimReason reason, trim_done_t done,
                   void *userdata);
/* Queues plan (taken over, also on failure) to be carried out, as
 * trim_queue_add otherwise. */
int trim_queue_add_plan(TrimQueue *q, EvictPlan *plan, TrimReason reason, trim_done_t done, void *userdata);
/* Starts the automatic trim if the cache is over its cap and not backing
 * off after one that could not help; a dry run running gives way to it.
 * Cheap: called after every loop iteration that touched the cache. */
void trim_queue_check_cap(TrimQueue *q);

/* Is the cache over its cap: started, and more bytes than max_size. The one
 * place this is decided. */
bool trim_queue_over_cap(const TrimQueue *q);
/* The running trim and its reason's name; NULL when none runs. */
const TrimResult *trim_queue_current(const TrimQueue *q, const char **ret_reason);
/* The running trim's progress if it was queued for userdata; else NULL. */
const TrimResult *trim_queue_running(const TrimQueue *q, void *userdata);
/* The caller behind userdata is gone: its done callbacks are not called. */
void trim_queue_forget(TrimQueue *q, void *userdata);

/* What the real trims did (a dry run is its caller's business). */
typedef struct TrimRecord {
        uint64_t evicted_files, evicted_bytes;
        bool has_last;
        TrimResult last;
        TrimReason last_reason;
        usec_t last_at;                   /* realtime */
        usec_t last_duration;
        bool last_over_cap;               /* still over the cap when it ended */
} TrimRecord;
const TrimRecord *trim_queue_record(const TrimQueue *q);

/* ccache's counters of level-2 directory <l1>/<l2> (hex digit values) are
 * to be recounted from the account (counters_recount): entries came or went
 * otherwise than by a trim (a merge). Paid from the timer once the scan is
 * done, under the directory's content lock and stats.lock. */
void trim_queue_recount(TrimQueue *q, unsigned l1, unsigned l2);
/* Entries moved into (add_*) and out of (sub_*) level-2 directory <l1>/<l2>
 * otherwise than by a trim (a merge): owed ccache's counters, relative, paid
 * from the timer as a trim's subtractions are. */
void trim_queue_moved(TrimQueue *q, unsigned l1, unsigned l2, uint64_t add_files, uint64_t add_kib,
                      uint64_t sub_files, uint64_t sub_kib);

/* At set-up, root_fd open: forgets what was owed to a root the cache lost,
 * and breaks the locks a killed cachekeeperd left behind (counters.h),
 * owing recounts of what they covered. */
void trim_queue_recover(TrimQueue *q, int root_fd);
