/* SPDX-License-Identifier: MIT */
/* A cache's scans: the full one (first, on lost events, audits, hard links,
 * retries after a failure) and the subtree ones (new directories, paced
 * rescans of the unwatched ones), run one at a time by scan.c in slices
 * from a defer source at SCAN_PRIORITY, grouped into rounds that sweep what
 * they did not find. Its cache calls it; it reaches the cache only through
 * what ScanQueueEnv lends. Logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "base/slice.h"
#include "config/config.h"
#include "os/watch.h"
#include "tree/account.h"
#include "tree/scan.h"

#define SCAN_STEP 256                          /* directory entries between two looks at the clock */
#define SCAN_SLICE_USEC SLICE_USEC             /* a slice of a scan: its steps until then */
/* A scan is how the events that were lost (an inotify overflow) or never
 * come (unwatched directories) reach the account: its slices take turns
 * with the inotify sources and the cap trim (WATCH_PRIORITY, watch.h), after
 * the socket and the timers. At idle priority an overflow's rescan starved
 * behind a writer flood's events and cap trims (a 236-file rescan took 23 s
 * in the soak), while the cache's real size ran past its cap unseen. */
#define SCAN_PRIORITY WATCH_PRIORITY
#define SCAN_RETRY_USEC (60 * USEC_PER_SEC)    /* after a scan that failed */
/* Directories not watched (not ccache's shape, or beyond the watch cap) are
 * rescanned in rounds, no more often than this, and spending at most a
 * tenth of the time on it. */
#define UNWATCHED_ROUND_MIN_USEC USEC_PER_SEC
#define UNWATCHED_DUTY 10
/* Hard links seen through events are counted by a full rescan, no more
 * often than this (ccache's hard_link mode links every raw result in). */
#define LINKS_RESCAN_MIN_USEC (30 * USEC_PER_SEC)

typedef struct ScanQueue ScanQueue;

/* What the cache lends its queue for the queue's lifetime. */
typedef struct ScanQueueEnv {
        /* Opens directory d of the account beneath the root (a new fd), or
         * -errno. Finding the root gone makes the cache unavailable, which
         * stops the queue (scan_queue_stop) before this returns. */
        int (*open_dir)(void *userdata, DirId d);
        /* The first full scan is over: the account is exact. */
        void (*scanned)(void *userdata);
        /* Any full scan is over (before scanned, for the first): how many
         * of ccache's entries it found touched and read (ScanProgress;
         * the totals are swept and exact by then). Returns true when
         * what the scans record changed (a share's clock): the first scan
         * is then done again before scanned. May be NULL. */
        bool (*full_done)(void *userdata, uint64_t touched, uint64_t read);
        /* A round of scans (full or subtree) after the first full scan is
         * over and added files the account did not know. May be NULL. */
        void (*found)(void *userdata);
        const ScanCallbacks *callbacks;   /* handed to every scan, with userdata */
        void *userdata;
} ScanQueueEnv;

/* A queue scanning into account (borrowed: outlives the queue) for config
 * (borrowed; replaced with scan_queue_set_config). Stopped until
 * scan_queue_start. Returns 0 or -errno. */
int scan_queue_new(sd_event *e, Account *account, const CacheConfig *config, const ScanQueueEnv *env,
                   ScanQueue **ret);
/* Drops the running scan (the account keeps what it listed). Accepts NULL;
 * returns NULL. */
ScanQueue *scan_queue_free(ScanQueue *q);
static inline void scan_queue_freep(ScanQueue **q) {
        scan_queue_free(*q);
}

/* The cache's config after a reload (borrowed): its name and path, for the log. */
void scan_queue_set_config(ScanQueue *q, const CacheConfig *config);

/* The cache is available (its root set up, the account empty): scans may
 * be queued. */
void scan_queue_start(ScanQueue *q);
/* The cache is no longer available: the running scan and everything queued
 * are dropped, and the account must be scanned in full again. */
void scan_queue_stop(ScanQueue *q);

/* Queues a full scan (reason is logged and reported); it replaces every
 * subtree scan queued. Nothing while stopped. Asked for while a full scan
 * runs, it follows that one (which may have listed already what changed):
 * any number of asks meanwhile make one more scan, not more. */
void scan_queue_full(ScanQueue *q, const char *reason);
/* Queues a scan of directory d, just added to the account (nothing known
 * in it: its round needs no sweep). */
void scan_queue_subtree(ScanQueue *q, DirId d);
/* At monotonic now, with unwatched_dirs directories of the account not
 * watched: a failed scan is retried after SCAN_RETRY_USEC, hard links seen
 * through events are counted by a full scan, unwatched directories are
 * rescanned in paced rounds. Cheap: call it periodically. */
void scan_queue_check(ScanQueue *q, usec_t now, size_t unwatched_dirs);

/* The first full scan since the start is over. */
bool scan_queue_scanned(const ScanQueue *q);
/* The running scan's progress, its reason ("subtree" for a subtree scan) and
 * when it began (monotonic); NULL when none runs. */
const ScanProgress *scan_queue_current(const ScanQueue *q, const char **ret_reason, usec_t *ret_started);

/* The full rescans after the first scan, and what the last one corrected. */
typedef struct ScanHistory {
        uint64_t rescans;
        char reason[64];
        uint64_t added, changed, removed;
        usec_t at;                        /* realtime */
        usec_t duration;
        /* Files new to the account that scans after the first one found:
         * stores the events did not show (lost in an overflow, in a
         * directory not watched yet or at all), and their bytes; the
         * running scan's are added when it ends (its ScanProgress has them
         * meanwhile: status adds them, as the size has them already). */
        uint64_t found_files, found_bytes;
} ScanHistory;
const ScanHistory *scan_queue_history(const ScanQueue *q);
