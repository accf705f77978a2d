/* SPDX-License-Identifier: MIT */
/* What the cache*.c files share and nobody else sees: the Cache itself and
 * the functions one part of it calls in another. Not a public interface. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "activity.h"
#include "alarm.h"
#include "alert.h"
#include "cache.h"
#include "ccache-stats.h"
#include "counters.h"
#include "scan-queue.h"
#include "trim-queue.h"
#include "upkeep.h"

#define ROOT_RETRY_USEC (200 * USEC_PER_MSEC)  /* set-up retry after the root vanished */
/* ccache's directories that were removed are recreated once removals have
 * been quiet this long: recreating them at once would fight an rm -rf. */
#define UPKEEP_DEBOUNCE_USEC (2 * USEC_PER_SEC)
/* ccache's counters are fed to the activity this often (and once after the
 * first scan): the hit rates lag by at most this much. */
#define CACHE_ACTIVITY_USEC (10 * USEC_PER_SEC)
/* Stats files: each level-1 one (slot l1 * 17) and its 16 level-2 ones. */
#define CACHE_STATS_SLOTS (16 * 17)
/* Feeds put off while a ccache -z is seen half done, at most (then its
 * partial sums are taken as they are). */
#define CACHE_ZERO_WAITS 3
/* Key families, told by an entry's name (CCACHE.md §1): ccache <= 4.12
 * (33-char keys, R/M/W suffix) and 4.13+ (40 hex, no suffix). Entries of
 * one family are never hit by a writer of the other. */
typedef enum CacheFamily {
        CACHE_FAMILY_LEGACY,
        CACHE_FAMILY_HEX,
        CACHE_FAMILIES,
} CacheFamily;

struct Cache {
        sd_event *event;
        Watch *watch;
        Alerter *alerter;                 /* borrowed */
        const CacheConfig *config;
        cache_changed_t changed;
        void *userdata;

        bool available;
        char reason[256];                 /* why unavailable */
        dev_t dev;                        /* identity of the root we scanned */
        ino_t ino;
        char mount[PATH_MAX];
        char lost_mount[PATH_MAX];        /* the volume it was on went away: wait for it */
        Account *account;

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
        unsigned repairs_unreported;      /* this iteration's, alerted together after it */
        char first_repair[256];
        bool unavailable_alerted;         /* a cache-unavailable alert stands */
        char ccache_max_size[32];
        int conf_error;                   /* the last ccache.conf upkeep failed: -errno, retried */
        sd_event_source *upkeep_timer;

        /* cache-activity.c */
        Activity *activity;
        uint64_t (*stats)[ACTIVITY_CCACHE_TOTALS];  /* CACHE_STATS_SLOTS stats files' counters */
        uint64_t stats_gen, fed_gen;      /* stats changes made, and fed to the activity */
        bool stats_stale;                 /* the sums were read from nothing again: a new baseline */
        uint64_t fed_zeroed;              /* ccache -z's newest timestamp in the sums fed last */
        unsigned zero_waits;              /* feeds put off for a ccache -z half done */
        uint64_t fed_evicted_files, fed_evicted_bytes, fed_size;
        bool activity_dirty;              /* changed since the history file was written */
        int history_error;                /* the last save's failure, logged once */
        sd_event_source *activity_timer;

        /* What changed, named by the silent-miss alarm (realtime usec; 0:
         * not seen since the daemon started). */
        usec_t family_first_store[CACHE_FAMILIES];  /* first store seen of each key family */
        usec_t family_last_store[CACHE_FAMILIES];   /* and the latest */
        usec_t conf_changed_at;           /* ccache.conf's settings changed (not by us) */
        char conf_change[128];            /* how, in words ("namespace: \"\" -> \"x\"") */

        /* cache-alarms.c: cache-silent-miss and cache-idle (alarm.h), in
         * memory; cache-upkeep.c: the settings of ccache.conf last seen,
         * to tell when someone changes them (conf_changed_at). */
        AlarmState alarms;
        char conf_settings[UPKEEP_CONF_SETTINGS_MAX];
        bool conf_settings_known;         /* conf_settings holds the first look or a later one */
};

/* Directories of the account without an inotify watch. */
static inline size_t cache_unwatched_dirs(Cache *c) {
        return c->available ? account_totals(c->account)->dirs - c->watches : 0;
}

/* cache.c */
/* The root for this loop iteration, checked to be the one we scanned;
 * -errno (and the cache set up again) when it is not. Borrowed fd. */
int cache_root_get(Cache *c);
/* A cache event for the journal and alert_command. */
void cache_alert(Cache *c, AlertKind kind, int priority, const char *fmt, ...) _printf_(4, 5);

/* cache-activity.c: ccache's counters of stats file directory d (NULL: it
 * is gone) as the event path or a scan read them; feeding the activity at
 * realtime now (on its timer, after the first scan, before a save); the
 * cache lost (its sums start again from nothing). */
int cache_activity_init(Cache *c);
void cache_activity_done(Cache *c);
void cache_activity_stats(Cache *c, DirId d, const CcacheStats *s);
void cache_activity_feed(Cache *c, usec_t now);
void cache_activity_lost(Cache *c);

/* cache-alarms.c: evaluates the cache's alarms at realtime now (after a
 * feed of its activity, when it is available and scanned) and sends what
 * fires or recovers through the alert path. */
void cache_alarms_check(Cache *c, usec_t now);

/* cache-upkeep.c: modes and ccache.conf (ccache.conf's max_size is 1.2 x the
 * cap: ccache trims only past it, so while the daemon keeps the cache under
 * the cap ccache's own cleanup never competes; if the daemon stops, ccache
 * still bounds the cache) */
void cache_on_repair(const UpkeepReport *r, void *userdata);
void cache_upkeep(Cache *c);
void cache_upkeep_conf(Cache *c, int root);
void cache_upkeep_event(Cache *c, DirId d, const char *name);
void cache_upkeep_file_event(Cache *c, DirId d, const char *name, uint32_t mask);
void cache_upkeep_reconfigured(Cache *c);
void cache_upkeep_later(Cache *c);
int cache_on_upkeep_timer(sd_event_source *s, uint64_t usec, void *userdata);

