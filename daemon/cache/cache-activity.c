/* SPDX-License-Identifier: MIT */
/* A cache's activity (activity.h): ccache's own counters, taken from the
 * stats files the event path and the scans already read (no read of its
 * own), the evictions of its trims and its size, fed from a timer at idle
 * priority; and the history file in the state directory that keeps them
 * across restarts (state-file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cache/cache-activity.h"
#include "cache/cache-alert.h"
#include "cache/cache-internal.h"
#include "ccache/ccache-conf.h"
#include "insight/state-file.h"

static int stats_slot(const Cache *c, DirId d) {
        const Dir *dir = account_dir(c->account, d), *parent;
        int l1, l2;

        if (!dir || !dir->hex || !dir->name)
                return -1;
        if (dir->depth == 1)
                return (l1 = hex_digit(dir->name[0])) < 0 ? -1 : l1 * 17;
        if (dir->depth != 2 || !(parent = account_dir(c->account, dir->parent)) || !parent->name)
                return -1;
        l1 = hex_digit(parent->name[0]);
        l2 = hex_digit(dir->name[0]);
        return l1 < 0 || l2 < 0 ? -1 : l1 * 17 + 1 + l2;
}

void cache_activity_stats(Cache *c, DirId d, const CcacheStats *s) {
        uint64_t now[ACTIVITY_CCACHE_TOTALS] = { 0 };
        int slot = stats_slot(c, d);

        if (slot < 0)
                return;
        if (s)
                memcpy(now, s->counters, sizeof(now));   /* CCACHE_STATS_MAX >= ACTIVITY_CCACHE_TOTALS */
        if (memcmp(c->stats[slot], now, sizeof(now)) == 0)
                return;
        memcpy(c->stats[slot], now, sizeof(now));
        c->stats_gen++;
}

/* ccache's totals as `ccache -s` adds them: every counter summed over the
 * stats files, the zeroed timestamp (31) the newest of them. */
static void stats_totals(const Cache *c, uint64_t totals[ACTIVITY_CCACHE_TOTALS]) {
        memset(totals, 0, ACTIVITY_CCACHE_TOTALS * sizeof(*totals));
        for (size_t s = 0; s < CACHE_STATS_SLOTS; s++)
                for (size_t i = 0; i < ACTIVITY_CCACHE_TOTALS; i++)
                        if (i == 31)
                                totals[i] = c->stats[s][i] > totals[i] ? c->stats[s][i] : totals[i];
                        else
                                totals[i] += c->stats[s][i];
}

/* ccache -z zeroes the stats files one by one, giving each the same new
 * zeroed timestamp (31): seen half done, the calls of the files not zeroed
 * yet would count as new (a lifetime of them). True while a newer timestamp
 * than the last fed one is on some files and others still hold calls under
 * an older one. */
static bool zeroing(const Cache *c) {
        uint64_t newest = 0;

        for (size_t s = 0; s < CACHE_STATS_SLOTS; s++)
                if (c->stats[s][31] > newest)
                        newest = c->stats[s][31];
        if (newest <= c->fed_zeroed)
                return false;
        for (size_t s = 0; s < CACHE_STATS_SLOTS; s++)
                if (c->stats[s][31] < newest &&
                    c->stats[s][CCACHE_STAT_DIRECT_CACHE_HIT] + c->stats[s][CCACHE_STAT_PREPROCESSED_CACHE_HIT] +
                                    c->stats[s][CCACHE_STAT_CACHE_MISS] > 0)
                        return true;
        return false;
}

/* ccache's own cleanup ran (its cleanups_performed counter, summed over
 * the stats files at total, moved since the last feed): deletions the
 * daemon did not decide, in a cache whose ccache.conf should keep them out
 * (ccache_conf_max_size). Counted, and alerted with what to set. A total
 * that went down (ccache -z, a stats file gone) is a new baseline. */
static void cleanups_check(Cache *c, uint64_t total) {
        const CacheConfig *cc = c->config;
        unsigned long long n = total - c->fed_cleanups;
        char want[32];

        if (!c->cleanups_known || total <= c->fed_cleanups) {
                c->cleanups_known = true;
                c->fed_cleanups = total;
                return;
        }
        c->fed_cleanups = total;
        c->ccache_cleanups += n;
        ccache_conf_max_size(cc->max_size_bytes, want, sizeof(want));
        if (cc->manage_ccache_conf)
                cache_alert(c, ALERT_CACHE_CCACHE_CLEANUP, LOG_WARNING,
                            "Cache %s: ccache's own cleanup ran %llu time%s (its cleanups_performed counter), deleting "
                            "what the daemon keeps (removals by others); %s/ccache.conf says max_size = %s, which no "
                            "directory of the cache reaches under its cap: a writer's ccache went by another "
                            "(CCACHE_MAXSIZE or CCACHE_CONFIGPATH in its environment) or ran ccache -c; unset them, "
                            "or set CCACHE_MAXSIZE=%s.", cc->name, n, n == 1 ? "" : "s", cc->path, want, want);
        else
                cache_alert(c, ALERT_CACHE_CCACHE_CLEANUP, LOG_WARNING,
                            "Cache %s: ccache's own cleanup ran %llu time%s (its cleanups_performed counter), deleting "
                            "what the daemon keeps (removals by others); its ccache.conf is the admin's "
                            "(ccache_conf = false): set max_size = 0 there, or %s (ccache 4.7 cleans a first-level "
                            "directory past max_size/16), and no CCACHE_MAXSIZE in the writers' environment.",
                            cc->name, n, n == 1 ? "" : "s", want);
}

uint64_t cache_activity_ccache_cleanups(const Cache *c) {
        return c->ccache_cleanups;
}

void cache_activity_feed(Cache *c, usec_t now) {
        uint64_t totals[ACTIVITY_CCACHE_TOTALS];

        activity_advance(c->activity, now);
        /* Only whole sums: the first scan has read every stats file. */
        if (!c->available || !scan_queue_scanned(c->scans))
                return;
        if (!c->stats_stale && c->stats_gen != c->fed_gen && c->zero_waits < CACHE_ZERO_WAITS && zeroing(c)) {
                if (c->zero_waits++ == 0)
                        log_debug("Cache %s: ccache -z is under way, its counters are counted once it is over.",
                                  c->config->name);
        } else if (c->stats_stale || c->stats_gen != c->fed_gen) {
                stats_totals(c, totals);
                cleanups_check(c, totals[CCACHE_STAT_CLEANUPS_PERFORMED]);
                c->fed_zeroed = totals[31];
                c->zero_waits = 0;
                if (activity_counters(c->activity, totals, now) == 0)
                        c->activity_dirty = true;
                c->fed_gen = c->stats_gen;
                c->stats_stale = false;
        }
        cache_activity_balance(c);
}

size_t cache_activity_memory(const Cache *c) {
        return activity_bytes() + CACHE_STATS_SLOTS * sizeof(uint64_t[ACTIVITY_CCACHE_TOTALS]) + regret_bytes(c->regret);
}

unsigned cache_activity_sum(const Cache *c, usec_t since, usec_t until, ActivityCounts *ret) {
        return activity_sum(c->activity, since, until, ret);
}

static usec_t realtime(const Cache *c) {
        return event_now(c->event, CLOCK_REALTIME);
}

/* n files of kind, bytes in all, counted at now (seen_* too). */
static void count_n(Cache *c, ActivityKind kind, uint64_t n, uint64_t bytes, usec_t now) {
        (void) activity_add(c->activity, kind, n, bytes, now);
        c->activity_dirty = true;
        c->seen_files[kind] += n;
        c->seen_bytes[kind] += bytes;
}

/* The account's bytes of entries, and of every other file (ccache's
 * temporaries, stats files, locks, ccache.conf): its size in two parts. */
static void size_parts(Cache *c, uint64_t *ret_entries, uint64_t *ret_other) {
        const AccountTotals *t = account_totals(c->account);
        uint64_t e = 0;

        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                if (ccache_kind_is_entry((CcacheKind) k))
                        e += t->kind_bytes[k];
        *ret_entries = e;
        *ret_other = t->bytes - e;
}

/* What took a part from was to is that no event explained: into up or
 * down, bytes only. */
static void count_rest(Cache *c, ActivityKind up, ActivityKind down, uint64_t was, uint64_t is, usec_t now) {
        if (is > was)
                count_n(c, up, 0, is - was, now);
        else if (is < was)
                count_n(c, down, 0, was - is, now);
}

/* The parts' net since the start: what size_base is the size less. */
static int64_t seen_net(const Cache *c) {
        const uint64_t *b = c->seen_bytes;

        return (int64_t) (b[ACTIVITY_STORE] + b[ACTIVITY_ADJUSTED_UP] + b[ACTIVITY_OTHER_ADDED]) -
               (int64_t) (b[ACTIVITY_EVICTION] + b[ACTIVITY_REMOVAL] + b[ACTIVITY_ADJUSTED_DOWN] +
                          b[ACTIVITY_OTHER_REMOVED]);
}

void cache_activity_balance(Cache *c) {
        usec_t now = realtime(c);
        uint64_t entries, other;

        if (!c->available || !scan_queue_scanned(c->scans))
                return;
        /* The trims' evictions since: the account has forgotten them. */
        if (c->evicting_files > 0) {
                count_n(c, ACTIVITY_EVICTION, c->evicting_files, c->evicting_bytes + c->evicting_other_bytes, now);
                c->bal_down += c->evicting_bytes;
                c->bal_other_down += c->evicting_other_bytes;
                c->evicting_files = c->evicting_bytes = c->evicting_other_bytes = 0;
        }
        size_parts(c, &entries, &other);
        /* An entry moved away whose fate the next event decides (a rename
         * within the cache, or a removal): here until then. */
        if (c->moved_cookie != 0)
                entries += c->moved_bytes;
        if (c->fed_size == ACTIVITY_SIZE_UNKNOWN)
                /* The first look (or the first since the cache was lost and
                 * came back): what changed before it has no parts. */
                c->size_base = (int64_t) (entries + other) - seen_net(c);
        else {
                count_rest(c, ACTIVITY_OTHER_ADDED, ACTIVITY_OTHER_REMOVED, c->fed_other, other + c->bal_other_down, now);
                count_rest(c, ACTIVITY_ADJUSTED_UP, ACTIVITY_ADJUSTED_DOWN, c->fed_entries + c->bal_up,
                           entries + c->bal_down, now);
        }
        c->bal_up = c->bal_down = c->bal_other_down = 0;
        c->fed_entries = entries;
        c->fed_other = other;
        if (entries + other != c->fed_size) {
                activity_set_size(c->activity, entries + other, now);
                c->fed_size = entries + other;
                c->activity_dirty = true;
        }
}

int64_t cache_activity_size_base(const Cache *c) {
        return c->size_base;
}

/* One event of kind, of bytes, at now: a store or a removal is part of the
 * size's change, counted in the same bucket as it (balanced at once). */
static void count(Cache *c, ActivityKind kind, uint64_t bytes) {
        count_n(c, kind, 1, bytes, realtime(c));
        if (kind == ACTIVITY_STORE)
                c->bal_up += bytes;
        else if (kind == ACTIVITY_REMOVAL)
                c->bal_down += bytes;
        else
                return;
        cache_activity_balance(c);
}

/* An entry of key (0: unknown) and bytes was removed by someone else:
 * counted, and remembered as left (never as regret). */
static void removed(Cache *c, uint64_t key, uint64_t bytes) {
        count(c, ACTIVITY_REMOVAL, bytes);
        if (key && regret_left(c->regret, key, realtime(c) / USEC_PER_SEC, REGRET_BY_OTHER) == 0)
                c->regret_dirty = true;
}

void cache_activity_settle(Cache *c) {
        if (c->moved_cookie == 0)
                return;
        c->moved_cookie = 0;   /* first: a removal now, no longer here (cache_activity_balance) */
        removed(c, c->moved_key, c->moved_bytes);
}

/* The fingerprint of entry name of directory d (regret.h), or 0 when its
 * path cannot be had. */
static uint64_t entry_key(const Cache *c, DirId d, const char *name) {
        char digits[16];

        return account_dir_path(c->account, d, digits, sizeof(digits)) < 0 ? 0 : regret_key(digits, name);
}

void cache_activity_removed(Cache *c, DirId d, const char *name, uint64_t bytes, uint32_t cookie) {
        uint64_t key = entry_key(c, d, name);

        cache_activity_settle(c);
        if (cookie == 0) {
                removed(c, key, bytes);
                return;
        }
        c->moved_cookie = cookie;
        c->moved_bytes = bytes;
        c->moved_key = key;
}

void cache_activity_evicted(void *userdata, TrimReason reason, DirId d, const char *name, CcacheKind kind,
                            uint64_t bytes, int64_t mtime) {
        Cache *c = userdata;
        uint64_t key, now = realtime(c) / USEC_PER_SEC;

        /* Counted at the next balance, once the account has forgotten it. */
        c->evicting_files++;
        if (!ccache_kind_is_entry(kind)) {
                c->evicting_other_bytes += bytes;
                return;
        }
        c->evicting_bytes += bytes;
        key = entry_key(c, d, name);
        if (!key)
                return;
        switch (reason) {
        case TRIM_REASON_PRESSURE:
                (void) regret_evicted(c->regret, key, bytes, mtime, now, REGRET_BY_PRESSURE);
                break;
        case TRIM_REASON_MERGE:
                (void) regret_evicted(c->regret, key, bytes, mtime, now, REGRET_BY_MERGE);
                break;
        case TRIM_REASON_WRITTEN_BY:
                /* A purge by writer is not the cap's doing: no regret of it. */
                (void) regret_left(c->regret, key, now, REGRET_BY_PURGE);
                break;
        default:
                /* The cap's, or a manual trim: the same LRU down to a size. */
                (void) regret_evicted(c->regret, key, bytes, mtime, now, REGRET_BY_CAP);
                break;
        }
        c->regret_dirty = true;
}

bool cache_left(const Cache *c, const char *key, usec_t now, CacheLeft *ret) {
        static const struct {
                const char *suffix;
                CacheLeftKind kind;
        } names[] = {
                { "", CACHE_LEFT_UNKNOWN_KIND },        /* 4.13+: <key>, result or manifest */
                { "R", CACHE_LEFT_RESULT },             /* up to 4.12 */
                { "M", CACHE_LEFT_MANIFEST },
        };
        char name[CCACHE_NAME_MAX];     /* a longer one is no entry's: never remembered */
        CacheLeft best = {};
        bool found = false;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                CacheLeft l = { .kind = names[i].kind };

                if ((size_t) snprintf(name, sizeof(name), "%s%s", key, names[i].suffix) >= sizeof(name))
                        continue;
                if (regret_left_at(c->regret, regret_key("", name), now / USEC_PER_SEC, &l.at, &l.by) &&
                    (!found || l.at >= best.at)) {
                        best = l;
                        found = true;
                }
        }
        if (found)
                *ret = best;
        return found;
}

bool cache_activity_appeared(Cache *c, DirId d, CcacheKind kind, const char *name, uint64_t bytes, uint32_t cookie) {
        uint64_t key = entry_key(c, d, name);
        KeyScheme f;
        usec_t now;

        if (cookie != 0 && cookie == c->moved_cookie) {
                c->moved_cookie = 0;   /* renamed within the cache: neither gone nor new */
                return false;
        }
        cache_activity_settle(c);
        /* Before the first scan is over, a file new to the account may
         * just not have been listed yet. */
        if (!scan_queue_scanned(c->scans))
                return false;
        count(c, ACTIVITY_STORE, bytes);
        f = key_scheme_of(kind, name);
        now = realtime(c);
        if (key && regret_stored(c->regret, key, bytes, now / USEC_PER_SEC)) {
                count(c, ACTIVITY_REGRET, bytes);
                c->regret_dirty = true;
        }
        if (c->family_first_store[f] == 0)
                c->family_first_store[f] = now;
        return true;
}

void cache_activity_refreshed(Cache *c, uint64_t bytes) {
        cache_activity_settle(c);
        count(c, ACTIVITY_HIT, bytes);
}

/* The cache was lost: its stats files are read again from nothing by the
 * next first scan, whose sums are a new baseline, not a reset. */
void cache_activity_lost(Cache *c) {
        memset(c->stats, 0, CACHE_STATS_SLOTS * sizeof(*c->stats));
        activity_counters_rebase(c->activity);
        c->stats_stale = true;
        c->moved_cookie = 0;
        c->cleanups_known = false;
        /* Its size is looked at again from nothing once it is back. */
        c->fed_size = ACTIVITY_SIZE_UNKNOWN;
        c->bal_up = c->bal_down = c->bal_other_down = 0;
}

int cache_activity_init(Cache *c) {
        int r;

        r = activity_new(&c->activity);
        if (r < 0)
                return r;
        r = regret_new(&c->regret);
        if (r < 0)
                return r;
        c->stats = calloc(CACHE_STATS_SLOTS, sizeof(*c->stats));
        if (!c->stats)
                return -ENOMEM;
        c->stats_stale = true;
        c->fed_size = ACTIVITY_SIZE_UNKNOWN;
        return 0;
}

void cache_activity_done(Cache *c) {
        c->activity = activity_free(c->activity);
        c->regret = regret_free(c->regret);
        free(c->stats);
        c->stats = NULL;
}

/* The cache's state file of suffix (CACHE_HISTORY_SUFFIX, _REGRET_SUFFIX). */
static void state_name(const Cache *c, const char *suffix, char *buf, size_t size) {
        snprintf(buf, size, "%s%s", c->config->name, suffix);
}

#define STATE_NAME_MAX (CONFIG_NAME_MAX + sizeof(CACHE_HISTORY_SUFFIX) + sizeof(CACHE_REGRET_SUFFIX))

/* Logs what a load of the state file name (what: "history") said. */
static void loaded(const Cache *c, int r, const char *what, const char *dir, const char *name, const char *message) {
        if (r == STATE_FILE_OK && message[0])
                log_warning("Cache %s: %s (in %s).", c->config->name, message, dir);
        else if (r == STATE_FILE_OK)
                log_debug("Cache %s: %s loaded from %s/%s.", c->config->name, what, dir, name);
        else if (r < 0)
                log_warning_errno(r, "Cache %s: cannot read its %s %s/%s, starting empty: %m", c->config->name, what,
                                  dir, name);
        else if (r != STATE_FILE_MISSING)
                log_warning("Cache %s: %s (in %s).", c->config->name, message, dir);
}

void cache_history_load(Cache *c, int dirfd, const char *dir, usec_t now) {
        char name[STATE_NAME_MAX], message[512];
        int r;

        if (dirfd < 0)
                return;
        state_name(c, CACHE_HISTORY_SUFFIX, name, sizeof(name));
        r = activity_file_load(dirfd, name, c->activity, now, message, sizeof(message));
        loaded(c, r, "history", dir, name, message);
        state_name(c, CACHE_REGRET_SUFFIX, name, sizeof(name));
        r = regret_file_load(dirfd, name, c->regret, now, message, sizeof(message));
        loaded(c, r, "eviction regret", dir, name, message);
}

/* Writes the cache's history file (history) or regret file if *dirty; a
 * failure logged once until a save works again. Returns 1 written, 0 or
 * -errno. */
static int save_one(Cache *c, int dirfd, const char *dir, bool history, bool *dirty) {
        const char *what = history ? "history" : "eviction regret";
        char name[STATE_NAME_MAX];
        int r;

        if (!*dirty)
                return 0;
        state_name(c, history ? CACHE_HISTORY_SUFFIX : CACHE_REGRET_SUFFIX, name, sizeof(name));
        r = history ? activity_file_save(dirfd, name, c->activity) : regret_file_save(dirfd, name, c->regret);
        if (r < 0) {
                /* Said once until it works again, not every minute. */
                if (r != c->history_error)
                        log_warning_errno(r, "Cache %s: cannot save its %s to %s/%s: %m", c->config->name, what, dir,
                                          name);
                c->history_error = r;
                return r;
        }
        if (c->history_error)
                log_info("Cache %s: its %s is saved to %s/%s again.", c->config->name, what, dir, name);
        c->history_error = 0;
        *dirty = false;
        return 1;
}

int cache_activity_save(Cache *c, int dirfd, const char *dir) {
        int r, k;

        r = save_one(c, dirfd, dir, true, &c->activity_dirty);
        k = save_one(c, dirfd, dir, false, &c->regret_dirty);
        return r < 0 ? r : k < 0 ? k : (r | k);
}

bool cache_hit_rate(const Cache *c, usec_t window, usec_t now, double *ret) {
        return activity_hit_rate(c->activity, window, now, ret);
}
