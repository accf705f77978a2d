/* SPDX-License-Identifier: MIT */
/* The scan queue: one scan at a time, a full one before any subtree, in
 * rounds. Handlers read the loop's time once and pass it on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/human.h"
#include "base/log.h"
#include "base/slice.h"
#include "tree/scan-queue.h"

/* A subtree waiting for its scan: the directory and its gen, since events
 * may forget it (and its DirId go to another directory) before its turn. */
typedef struct QueuedDir {
        DirId dir;
        uint32_t gen;
        bool fresh;                       /* just added, nothing known in it: no sweep needed */
} QueuedDir;

struct ScanQueue {
        sd_event *event;
        Account *account;                 /* borrowed */
        const CacheConfig *config;        /* borrowed */
        ScanQueueEnv env;
        bool started;                     /* the cache is available */
        bool scanned;                     /* its first full scan is over */

        Scan *scan;                       /* the running scan ... */
        bool scan_full;                   /* ... covers the whole root */
        char scan_reason[64];
        usec_t scan_started;
        bool round, round_full;           /* a scan round is open (see round_begin) */
        bool round_sweeps;                /* it began with account_scan_begin and ends with a sweep */
        uint64_t round_added, round_changed, round_errors;
        uint64_t round_touched, round_read;
        usec_t round_started;
        uint32_t gen;                     /* the round's, stamped into what it lists */
        bool full_pending;
        char full_reason[64];
        QueuedDir *queue;                 /* subtrees waiting to be scanned (Dir.queued set) */
        size_t n_queue, queue_cap;
        sd_event_source *source;
        usec_t turn_usec;                 /* of slices in its turn so far (slice_turn) */
        usec_t retry_at;                  /* after a failed scan */

        bool unwatched_round;             /* rescans of unwatched directories under way */
        usec_t unwatched_started, unwatched_next;
        usec_t links_rescan_next;
        ScanHistory history;
};

static void scan_next(ScanQueue *q, usec_t now);
static void full(ScanQueue *q, const char *reason, usec_t now);

/* A scan round: one full scan, or the subtree scans queued one after another
 * (new directories, unwatched ones). A round that may find files gone (a
 * full one, rescans of unwatched directories) tells the account once when
 * it begins (an O(n) reset of the marks) and sweeps once when it ends; one of
 * new directories only (nothing known in them) does neither, so that each
 * directory a user creates costs O(1) of accounting, not O(files). */
static void round_begin(ScanQueue *q, bool full, bool sweeps, usec_t now) {
        if (sweeps)
                account_scan_begin(q->account);
        q->gen++;
        q->round = true;
        q->round_full = full;
        q->round_sweeps = sweeps;
        q->round_added = q->round_changed = q->round_errors = 0;
        q->round_touched = q->round_read = 0;
        q->round_started = now;
}

/* The rescans of unwatched directories are over: the next ones in ten times
 * what they took (a tenth of the time at most), UNWATCHED_ROUND_MIN_USEC at least. */
static void unwatched_round_done(ScanQueue *q, usec_t now) {
        usec_t took = now - q->unwatched_started;

        q->unwatched_next = now + (UNWATCHED_DUTY * took > UNWATCHED_ROUND_MIN_USEC ? UNWATCHED_DUTY * took
                                                                                       : UNWATCHED_ROUND_MIN_USEC);
        q->unwatched_round = false;
}

/* A full rescan after the first scan: what it corrected goes in the history. */
static void rescan_done(ScanQueue *q, size_t removed, usec_t took) {
        ScanHistory *h = &q->history;
        const AccountTotals *t = account_totals(q->account);

        h->rescans++;
        snprintf(h->reason, sizeof(h->reason), "%s", q->scan_reason);
        h->added = q->round_added;
        h->changed = q->round_changed;
        h->removed = removed;
        h->at = event_now(q->event, CLOCK_REALTIME);
        h->duration = took;
        if ((q->round_added || q->round_changed || removed) && !cache_config_is_remote(q->config))
                log_notice("%s %s: %s rescan corrected drift: %llu files added, %llu changed, %zu removed.",
                           cache_config_what(q->config), q->config->name, q->scan_reason,
                           (unsigned long long) q->round_added, (unsigned long long) q->round_changed, removed);
        else if (q->round_added || q->round_changed || removed)   /* a share's paced rescans find what others did */
                log_info("%s %s: %s rescan: %llu files added, %llu changed, %zu removed.",
                         cache_config_what(q->config), q->config->name,
                         q->scan_reason, (unsigned long long) q->round_added, (unsigned long long) q->round_changed,
                         removed);
        else
                log_info("%s %s: %s rescan found no drift (%llu files, %.1f s).",
                         cache_config_what(q->config), q->config->name,
                         q->scan_reason, (unsigned long long) t->files, (double) took / USEC_PER_SEC);
}

static void round_end(ScanQueue *q, usec_t now) {
        size_t removed = q->round_sweeps ? account_scan_sweep(q->account, q->gen) : 0;
        const AccountTotals *t = account_totals(q->account);
        usec_t took = now - q->round_started;
        char size[32];

        q->round = false;
        if (q->unwatched_round && q->n_queue == 0)
                unwatched_round_done(q, now);
        if (q->scanned && q->round_added > 0 && q->env.found)
                q->env.found(q->env.userdata);
        if (q->round_errors)
                log_warning("%s %s: %llu directories could not be read during the scan.",
                            cache_config_what(q->config), q->config->name,
                            (unsigned long long) q->round_errors);
        if (!q->round_full)
                return;
        /* What the first scan read must be read again first: the figures
         * are not whole yet, no trim may go by them. */
        if (q->env.full_done && q->env.full_done(q->env.userdata, q->round_touched, q->round_read) && !q->scanned) {
                full(q, "clock", now);
                return;
        }
        if (q->scanned) {
                rescan_done(q, removed, took);
                return;
        }
        log_info("%s %s: scanned %s in %.2f s: %llu files, %s.", cache_config_what(q->config), q->config->name,
                 q->config->path, (double) took / USEC_PER_SEC, (unsigned long long) t->files,
                 format_size(t->bytes, size, sizeof(size)));
        q->scanned = true;
        q->env.scanned(q->env.userdata);
}

static void scan_finished(ScanQueue *q, usec_t now) {
        const ScanProgress *p = scan_progress(q->scan);

        q->round_added += p->added;
        if (q->scanned) {
                q->history.found_files += p->added;
                q->history.found_bytes += p->added_bytes;
        }
        q->round_changed += p->changed;
        q->round_errors += p->errors;
        q->round_touched += p->touched;
        q->round_read += p->read;
        q->scan = scan_free(q->scan);
        /* A full round is its one scan; a subtree round lasts while the
         * queue has more (unless a full scan now waits: it starts its own). */
        if (q->round_full || q->full_pending || q->n_queue == 0)
                round_end(q, now);
}

/* One slice of the running scan: steps of SCAN_STEP entries until its time
 * is up, and the scan's end when it gets there (a round's end sweeps the
 * account: a pass over it). The start of the next (a round's begin resets
 * the marks: another pass) waits for a slice of its own when this one is
 * spent. */
static int on_source(sd_event_source *s, void *userdata) {
        ScanQueue *q = userdata;
        usec_t now = event_now(q->event, CLOCK_MONOTONIC);
        SliceBudget slice;
        int r;

        if (!q->scan) {
                scan_next(q, now);
                return 0;
        }
        slice_begin(&slice, SCAN_SLICE_USEC, 1);
        do
                r = scan_step(q->scan, SCAN_STEP);
        while (r > 0 && !slice_over(&slice));
        if (r > 0) {
                slice_turn(&slice, &q->turn_usec, &q->source, on_source, q);   /* the events', the cap trim's */
                return 0;
        }
        if (r < 0) {
                log_error_errno(r, "%s %s: scan failed: %m; retrying in a minute.", cache_config_what(q->config),
                                q->config->name);
                q->scan = scan_free(q->scan);
                q->round = false;   /* no sweep: a half-listed directory would lose files */
                q->full_pending = true;
                q->retry_at = now + SCAN_RETRY_USEC;
                snprintf(q->full_reason, sizeof(q->full_reason), "retry");
                (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
                return 0;
        }
        scan_finished(q, now);
        if (!slice_over_now(&slice))
                scan_next(q, now);
        else
                slice_turn(&slice, &q->turn_usec, &q->source, on_source, q);
        return 0;
}

/* Empties the queue of subtree scans (a full scan covers them). */
static void queue_clear(ScanQueue *q) {
        for (size_t i = 0; i < q->n_queue; i++) {
                Dir *dir = account_dir_check(q->account, q->queue[i].dir, q->queue[i].gen);
                if (dir)
                        dir->queued = false;
        }
        q->n_queue = 0;
}

static void full(ScanQueue *q, const char *reason, usec_t now) {
        if (!q->started)
                return;
        q->full_pending = true;
        snprintf(q->full_reason, sizeof(q->full_reason), "%s", reason);
        queue_clear(q);
        /* One running already does not see what changed in the directories
         * it has listed (events lost in an inotify overflow may be there):
         * this one follows it. */
        scan_next(q, now);
}

/* Queues a scan of d's subtree; fresh: d was just added (nothing known in it). */
static void queue_subtree(ScanQueue *q, DirId d, bool fresh, usec_t now) {
        Dir *dir = account_dir(q->account, d);

        if (q->full_pending || !dir || dir->queued)
                return;
        if (q->n_queue == q->queue_cap) {
                size_t cap = q->queue_cap ? q->queue_cap * 2 : 16;
                QueuedDir *n = realloc(q->queue, cap * sizeof(QueuedDir));
                if (!n) {
                        full(q, "out of memory queueing a subtree", now);
                        return;
                }
                q->queue = n;
                q->queue_cap = cap;
        }
        dir->queued = true;
        q->queue[q->n_queue++] = (QueuedDir) { .dir = d, .gen = dir->gen, .fresh = fresh };
        scan_next(q, now);
}

/* The next queued subtree still known, taken off the queue; false if none. */
static bool queue_pop(ScanQueue *q, QueuedDir *ret) {
        while (q->n_queue > 0) {
                QueuedDir n = q->queue[--q->n_queue];
                Dir *dir = account_dir_check(q->account, n.dir, n.gen);

                if (dir) {
                        dir->queued = false;
                        *ret = n;
                        return true;
                }
        }
        return false;
}

/* Starts the next queued scan if none is running. */
static void scan_next(ScanQueue *q, usec_t now) {
        QueuedDir next = { .dir = DIR_ROOT };
        bool sweeps = true;
        int fd, r;

        if (q->scan || !q->started)
                return;
        if (!q->full_pending && q->n_queue == 0) {
                if (q->round)
                        round_end(q, now);   /* what was queued went away before its scan */
                else if (q->unwatched_round)
                        unwatched_round_done(q, now);
                (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
                return;
        }
        q->scan_full = q->full_pending;
        if (q->full_pending) {
                snprintf(q->scan_reason, sizeof(q->scan_reason), "%s", q->full_reason);
                q->full_pending = false;
                queue_clear(q);
        } else if (!queue_pop(q, &next)) {
                scan_next(q, now);   /* what was queued went away before its scan */
                return;
        } else
                sweeps = !next.fresh;
        fd = q->env.open_dir(q->env.userdata, next.dir);
        if (fd < 0) {
                if (q->started)
                        scan_next(q, now);   /* the subtree went away: its events say so */
                return;
        }
        /* A full scan overtakes a subtree round; a round sweeps or not. */
        if (q->round && (q->scan_full || q->round_sweeps != sweeps))
                round_end(q, now);
        if (!q->round)
                round_begin(q, q->scan_full, sweeps, now);
        r = scan_new(q->account, next.dir, fd, q->gen, q->env.callbacks, q->env.userdata, &q->scan);
        close(fd);
        if (r < 0) {
                log_error_errno(r, "%s %s: cannot start a scan: %m", cache_config_what(q->config), q->config->name);
                return;
        }
        q->scan_started = now;
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_ON);
}

/* An unwatched directory whose parent is watched: the scan of its subtree
 * covers its unwatched subdirectories too. */
static bool unwatched_top(ScanQueue *q, DirId d) {
        const Dir *dir = account_dir(q->account, d), *parent;

        if (!dir || dir->wd >= 0)
                return false;
        parent = d == DIR_ROOT ? NULL : account_dir(q->account, dir->parent);
        return !parent || parent->wd >= 0;
}

/* Queues the scans of every unwatched subtree (one round, paced by
 * unwatched_round_done). */
static void rescan_unwatched(ScanQueue *q, usec_t now) {
        size_t n = 0;

        q->unwatched_started = now;
        q->unwatched_round = true;
        for (DirId d = 0; d < account_dir_limit(q->account); d++)
                if (unwatched_top(q, d) && ++n)
                        queue_subtree(q, d, false, now);
        if (n == 0)
                unwatched_round_done(q, now);
}

void scan_queue_check(ScanQueue *q, usec_t now, size_t unwatched_dirs) {
        if (!q->started)
                return;
        /* A scan that failed (out of memory) is tried again, now and then. */
        if (q->full_pending && !q->scan && now >= q->retry_at)
                scan_next(q, now);
        /* Hard links that came in through events: a full rescan counts their
         * inodes once (their other names may be counted on their own). */
        if (account_links_unsure(q->account) > 0 && !q->scan && !q->full_pending && now >= q->links_rescan_next) {
                q->links_rescan_next = now + LINKS_RESCAN_MIN_USEC;
                full(q, "hard links", now);
                return;
        }
        /* Directories we do not watch may have changed unseen: look again,
         * in rounds paced so that they take at most a tenth of the time. */
        if (!q->unwatched_round && !q->full_pending && !q->scan && q->n_queue == 0 && unwatched_dirs > 0 &&
            now >= q->unwatched_next)
                rescan_unwatched(q, now);
}

void scan_queue_full(ScanQueue *q, const char *reason) {
        full(q, reason, event_now(q->event, CLOCK_MONOTONIC));
}

void scan_queue_subtree(ScanQueue *q, DirId d) {
        queue_subtree(q, d, true, event_now(q->event, CLOCK_MONOTONIC));
}

void scan_queue_start(ScanQueue *q) {
        q->started = true;
}

void scan_queue_stop(ScanQueue *q) {
        q->scan = scan_free(q->scan);
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        q->full_pending = false;
        queue_clear(q);
        q->round = false;
        q->started = false;
        q->scanned = false;
        q->unwatched_round = false;
        q->unwatched_next = 0;
}

bool scan_queue_scanned(const ScanQueue *q) {
        return q->scanned;
}

const ScanProgress *scan_queue_current(const ScanQueue *q, const char **ret_reason, usec_t *ret_started) {
        if (!q->scan)
                return NULL;
        if (ret_reason)
                *ret_reason = q->scan_full ? q->scan_reason : "subtree";
        if (ret_started)
                *ret_started = q->scan_started;
        return scan_progress(q->scan);
}

const ScanHistory *scan_queue_history(const ScanQueue *q) {
        return &q->history;
}

void scan_queue_set_config(ScanQueue *q, const CacheConfig *config) {
        q->config = config;
}

int scan_queue_new(sd_event *e, Account *account, const CacheConfig *config, const ScanQueueEnv *env,
                   ScanQueue **ret) {
        _cleanup_(scan_queue_freep) ScanQueue *q = NULL;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->event = sd_event_ref(e);
        q->account = account;
        q->config = config;
        q->env = *env;
        r = sd_event_add_defer(e, &q->source, on_source, q);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(q->source, "cache-scan");
        (void) sd_event_source_set_priority(q->source, SCAN_PRIORITY);
        (void) sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        *ret = TAKE_PTR(q);
        return 0;
}

ScanQueue *scan_queue_free(ScanQueue *q) {
        if (!q)
                return NULL;
        scan_free(q->scan);
        sd_event_source_disable_unref(q->source);
        free(q->queue);
        sd_event_unref(q->event);
        free(q);
        return NULL;
}
