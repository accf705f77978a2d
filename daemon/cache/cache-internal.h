/* SPDX-License-Identifier: MIT */
/* The Cache itself, which its parts (cache-*.c) share and nobody else
 * sees. Each part's functions are in its own header; the parts call down
 * only, never back up into cache.c: alerts (cache-alert) and counts
 * (cache-counts) below; activity, advice, alarms, upkeep and writers above
 * them; status, which reads them all, above those; cache.c on top, which
 * passes them the iteration's root and runs the checks after each feed of
 * the activity. Not a public interface. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "alert/alert.h"
#include "base/slice.h"
#include "cache/cache.h"
#include "ccache/ccache-stats.h"
#include "ccache/ccache.h"
#include "ccache/families.h"
#include "ccache/upkeep.h"
#include "evict/counters.h"
#include "evict/trim-queue.h"
#include "insight/activity.h"
#include "insight/alarm.h"
#include "insight/regret.h"
#include "os/share-lock.h"
#include "tree/scan-queue.h"

#define ROOT_RETRY_USEC (200 * USEC_PER_MSEC)  /* set-up retry after the root vanished */
/* ccache's directories that were removed are recreated once removals have
 * been quiet this long: recreating them at once would fight an rm -rf. */
#define UPKEEP_DEBOUNCE_USEC (2 * USEC_PER_SEC)
/* ccache's counters are fed to the activity this often (and once after the
 * first scan): the hit rates lag by at most this much. */
#define CACHE_ACTIVITY_USEC (10 * USEC_PER_SEC)
/* The working set is counted again (a pass over the files) when status
 * asks and it is older than this. */
#define CACHE_WS_USEC (5 * USEC_PER_SEC)
#define CACHE_WS_WINDOWS 4                 /* 1h, 24h, 7d, 30d: cache-counts.h */
/* Stats files: each level-1 one (slot l1 * 17) and its 16 level-2 ones. */
#define CACHE_STATS_SLOTS (16 * 17)
/* Feeds put off while a ccache -z is seen half done, at most (then its
 * partial sums are taken as they are). */
#define CACHE_ZERO_WAITS 3
/* Key families, told by an entry's name (ccache/README.md §1, §8): ccache <= 4.12
 * (33-char keys, R/M/W suffix) and 4.13+ (40 hex, no suffix). Entries of
 * one family are never hit by a writer of the other. */
/* The status objects' shorthands (cache-status.c, cache-writers.c). */
#define JSON_ADD(o, k, v) json_object_object_add((o), (k), (v))
#define JSON_U64(v) json_object_new_uint64((uint64_t) (v))

/* Directories named in the one line that sums up a round of mode repairs. */
#define CACHE_REPAIR_EXAMPLES 3
typedef struct CacheWriter CacheWriter;   /* cache-writers.c's */

struct Cache {
        sd_event *event;
        Watch *watch;
        Alerter *alerter;                 /* borrowed */
        const CacheConfig *config;
        cache_changed_t changed;
        void *userdata;

        bool available;
        char reason[768];                 /* why unavailable (a path, and the sandbox hint) */
        int state_fd;                     /* borrowed: the state directory, for the root's lock; -1: none */
        int lock_fd;                      /* holds the root's lock (root-lock.h); -1: not held */
        int lock_error;                   /* the last failure to take it (not -EBUSY), logged once */
        dev_t dev;                        /* identity of the root we scanned */
        ino_t ino;
        char mount[PATH_MAX];
        char lost_mount[PATH_MAX];        /* the volume it was on went away: wait for it */
        Account *account;
        /* Forgets the files of forgotten directories (account_purge_step) in
         * slices at idle priority, on from the moment a directory goes: the
         * totals never wait for it. */
        sd_event_source *purge;
        usec_t purge_turn_usec;           /* of slices in its turn so far (slice_turn) */

        /* Opened for one loop iteration, closed by the post source. */
        int root_fd;
        DirId evdir;
        int evdir_fd;
        sd_event_source *post;

        ScanQueue *scans;
        uint64_t overflows;
        uint32_t watches, max_watches;    /* inotify watches held, and the cap (config or auto) */
        bool watch_limited;               /* the cap or the kernel's limit was hit: logged once */

        sd_event_source *retry;

        TrimQueue *trims;

        uint64_t mode_repairs;
        unsigned repairs_unreported;      /* this iteration's, summed up in one alert after it */
        char repair_examples[CACHE_REPAIR_EXAMPLES][16];  /* the first ones' paths in the root ("" the root) */
        mode_t repair_was, repair_now;    /* the first one's modes */
        bool unavailable_alerted;         /* a cache-unavailable alert stands */
        char ccache_max_size[32];
        int conf_error;                   /* the last ccache.conf upkeep failed: -errno, retried */
        /* Directories that could not be kept usable (a volume out of space
         * or inodes): said once, again when it changes or clears, not at
         * every retry. Those of the full pass running, and those said. */
        bool upkeep_pass;
        struct UpkeepFailures {
                unsigned n;               /* directories */
                int error;                /* the first one's -errno ... */
                char what[16];            /* ... and its path in the root */
        } upkeep_failing, upkeep_failed;
        sd_event_source *upkeep_timer;

        /* cache-activity.c */
        Activity *activity;
        uint64_t (*stats)[ACTIVITY_CCACHE_TOTALS];  /* CACHE_STATS_SLOTS stats files' counters */
        uint64_t stats_gen, fed_gen;      /* stats changes made, and fed to the activity */
        bool stats_stale;                 /* the sums were read from nothing again: a new baseline */
        uint64_t fed_zeroed;              /* ccache -z's newest timestamp in the sums fed last */
        unsigned zero_waits;              /* feeds put off for a ccache -z half done */
        /* The size as the activity last had it (fed_size: entries and the
         * rest, fed_entries + fed_other; ACTIVITY_SIZE_UNKNOWN before the
         * first look), and what events explained of the change since:
         * entries stored (bal_up) and evicted or removed (bal_down), stale
         * temporaries evicted (bal_other_down); evictions not yet counted
         * (the trim's, told before the account forgets each file):
         * cache_activity_balance. size_base: the size the parts counted
         * since the start (seen_bytes) began from. */
        uint64_t fed_size, fed_entries, fed_other;
        uint64_t bal_up, bal_down, bal_other_down;
        uint64_t evicting_files, evicting_bytes, evicting_other_bytes;
        int64_t size_base;
        /* ccache's own cleanups (CCACHE_STAT_CLEANUPS_PERFORMED summed) as
         * last fed, and how many ran since the start (status): each one
         * an alert of what to set. */
        uint64_t fed_cleanups, ccache_cleanups;
        bool cleanups_known;
        bool activity_dirty;              /* changed since the history file was written */
        bool regret_dirty;                /* regret changed since its file was written */
        int history_error;                /* the last save's failure, logged once */
        sd_event_source *activity_timer;
        /* An entry moved away (IN_MOVED_FROM) whose IN_MOVED_TO may come
         * next: a rename within the cache (ccache 4.13 renames a legacy
         * entry on a hit), else it was removed. moved_cookie 0: none. */
        uint32_t moved_cookie;
        uint64_t moved_bytes;
        uint64_t moved_key;               /* its regret_key, 0 when unknown */
        /* What the events showed since the daemon started (status, metrics):
         * files and bytes by kind (ACTIVITY_STORE, _HIT, _EVICTION,
         * _REMOVAL; bytes only for _OTHER_* and _ADJUSTED_*). */
        uint64_t seen_files[_ACTIVITY_EVENT_MAX], seen_bytes[_ACTIVITY_EVENT_MAX];
        Regret *regret;                   /* the daemon's evictions, and the stores of them */

        /* cache-writers.c: who wrote the entries (their headers) */
        CacheWriter *writers;             /* the table of writers, by tag (cache-writers.c) */
        size_t n_writers;                 /* tags from CACHE_WRITER_FIRST handed out (some freed since: !used) */
        sd_event_source *writers_pass;    /* reads the headers of entries not read yet, at idle priority */
        FileId writers_next;
        bool writers_again;               /* scans found entries while the pass ran: once more from 0 */
        bool writers_retry_other;         /* slots were freed: the pass reads the entries beyond the table again */
        usec_t writers_reclaim_at;        /* monotonic: the next reclaim a full table may run */
        uint64_t tag_files[256], tag_bytes[256];  /* entries by tag, counted with the working set */
        bool cap_small;                   /* a cache-cap-small alert stands */
        FamilyStores families;            /* stores by key family over 24 h (cache-writers.c) */
        bool version_mix;                 /* a cache-version-mix alert stands */

        /* The working set (cache-status.c): entries used within each of
         * CACHE_WS_WINDOWS, as of ws_at (monotonic; 0: never). */
        usec_t ws_at;
        uint64_t ws_files[CACHE_WS_WINDOWS], ws_bytes[CACHE_WS_WINDOWS];

        /* What changed, named by the silent-miss alarm (realtime usec; 0:
         * not seen since the daemon started). */
        usec_t family_first_store[_KEY_SCHEME_MAX]; /* first store seen of each key scheme */
        usec_t conf_changed_at;           /* ccache.conf's settings changed (not by us) */
        char conf_change[128];            /* how, in words ("namespace: \"\" -> \"x\"") */

        /* cache-alarms.c: cache-silent-miss and cache-idle (alarm.h), in
         * memory; cache-upkeep.c: the settings of ccache.conf last seen,
         * to tell when someone changes them (conf_changed_at). */
        AlarmState alarms;
        bool remote_errors;               /* remote-errors stands (remote-errors.h) */
        char conf_settings[UPKEEP_CONF_SETTINGS_MAX];
        bool conf_settings_known;         /* conf_settings holds the first look or a later one */

        /* A file: remote (cache_config_is_remote): none of the local upkeep,
         * stats or ccache locks; the share's lock, its clock, and how its
         * figures are kept. */
        bool remote;
        int share_fd;                     /* holds the share lock (share-lock.h); -1: not held */
        usec_t share_beat;                /* monotonic: our last beat */
        ShareHolder share_holder;         /* who keeps the share while we may not */
        bool poll;                        /* figures by paced full rescans, no inotify */
        char watch_reason[96];            /* why inotify or poll */
        CacheClock clock;                 /* CACHE_CLOCK_MTIME or _ATIME: what the account's times are */
        ScanCallbacks scan_cb;            /* the scans' callbacks; .atime follows clock */
        usec_t rescan_next;               /* monotonic: the next paced rescan (0: after the first scan) */
        bool clock_scanned;               /* a full scan gave the evidence below */
        uint64_t clock_touched, clock_read; /* its entries touched (mtime moved by a hit), read (atime moved) */
        uint64_t clock_entries;           /* the entries that scan left in the account */
        bool mtime_refresh_seen;          /* inotify showed a hit refreshing mtime since the start
                                           * (the status's warning; never the clock: a touch looks the same) */
        bool remote_level;                /* remote-level (over the cap, cannot trim) stands */
        int root_mode_error;              /* the root's mode could not be kept: -errno, logged once */
};

/* Directories of the account without an inotify watch. */
static inline size_t cache_unwatched_dirs(Cache *c) {
        return c->available ? account_totals(c->account)->dirs - c->watches : 0;
}

/* ccache's entries in the account now (every kind of entry). */
static inline uint64_t cache_entry_files(Cache *c) {
        return account_entry_files(c->account);
}

/* The watch handler (os/watch.h) of every directory the cache watches: one
 * event for the cache owner is, straight from the Watch (cache-events.c). */
void cache_on_watch_event(void *owner, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name);
