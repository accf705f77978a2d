/* SPDX-License-Identifier: MIT */
/* One cache root, kept exact: a first scan, then inotify events, rescans when
 * events were lost, and a periodic audit. Every path below the root is opened
 * with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV) from a
 * root fd that is checked to still be the root we scanned. Its scans are a
 * ScanQueue's (scan-queue.c), its trims a TrimQueue's (trim-queue.c): both
 * are called down into and reach back only through what the cache lends
 * them. Its parts (cache-internal.h says how they stand) are called down
 * into too: upkeep in cache-upkeep.c, who wrote the entries in
 * cache-writers.c, the activity in cache-activity.c; the state, the
 * figures one by one and the status object in cache-status.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "base/human.h"
#include "base/log.h"
#include "base/slice.h"
#include "cache/cache-activity.h"
#include "cache/cache-advice.h"
#include "cache/cache-alarms.h"
#include "cache/cache-alert.h"
#include "cache/cache-internal.h"
#include "cache/cache-root.h"
#include "cache/cache-upkeep.h"
#include "cache/cache-writers.h"
#include "ccache/ccache-stats.h"
#include "ccache/upkeep.h"
#include "cache/cache-clock.h"
#include "os/beneath.h"
#include "os/mounts.h"
#include "os/root-lock.h"
#include "os/sandbox.h"

_Static_assert(TRIM_CAP_PRIORITY == WATCH_PRIORITY, "the cap trim takes turns with the events (trim-queue.h)");

static void close_iteration_fds(Cache *c) {
        if (c->evdir_fd >= 0)
                close(c->evdir_fd);
        if (c->root_fd >= 0)
                close(c->root_fd);
        c->evdir_fd = c->root_fd = -1;
        c->evdir = DIR_NONE;
}

static int on_post(sd_event_source *s, void *userdata) {
        Cache *c = userdata;

        trim_queue_check_cap(c->trims);
        cache_repairs_report(c);
        cache_activity_settle(c);
        cache_activity_balance(c);
        close_iteration_fds(c);
        return 0;
}


int cache_root_get(Cache *c) {
        struct stat st;
        int fd;

        if (c->root_fd >= 0)
                return c->root_fd;
        if (!c->available)
                return -ENODEV;
        fd = open(c->config->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int r = -errno;
                cache_root_lost(c, r == -ENOENT ? "was deleted" : "cannot be opened");
                return r;
        }
        if (fstat(fd, &st) < 0 || st.st_dev != c->dev || st.st_ino != c->ino) {
                close(fd);
                cache_root_lost(c, "was replaced by another directory");
                return -ESTALE;
        }
        c->root_fd = fd;
        return fd;
}

int cache_dir_open(Cache *c, DirId d) {
        char rel[PATH_MAX];
        int root, r;

        root = cache_root_get(c);
        if (root < 0)
                return root;
        r = account_dir_path(c->account, d, rel, sizeof(rel));
        if (r < 0)
                return r;
        return beneath_open_dir(root, rel);
}

void cache_read_stats(Cache *c, DirId d, int dirfd) {
        CcacheStats s;

        if (c->remote)
                return;   /* a share has no stats files: a file of that name is anybody's */
        if (ccache_stats_read(dirfd, "stats", &s) == 0) {
                account_dir_set_stats(c->account, d, ccache_stats_hits(&s), ccache_stats_misses(&s));
                cache_activity_stats(c, d, &s);
        }
}

/* ccache's own directories: the hex levels (entries live at depth 2 to 4),
 * tmp/ and lock/. Only they are watched: whatever else a user puts in the
 * cache is counted by the paced rescans of unwatched directories, so no
 * user can spend root's inotify watches. */
static bool ccache_shaped(const Cache *c, const Dir *dir) {
        if (c->remote)   /* the root, and subdirs' <2 hex> directories */
                return dir->depth == 0 || (dir->hex && dir->depth == 1);
        return dir->depth == 0 || (dir->hex && dir->depth <= 4) ||
               (dir->depth == 1 && (dir->in_tmp || dir->in_lock));
}

static void watch_dir(Cache *c, Dir *dir, DirId d, int fd) {
        int wd = c->watches < c->max_watches ? watch_add(c->watch, fd, WATCH_DIR_EVENTS, cache_on_watch_event, c, d)
                                             : -EDQUOT;

        if (wd < 0) {
                if (!c->watch_limited)
                        log_warning_errno(wd, "Cache %s: cannot watch every directory of ccache's (%s); "
                                          "unwatched ones are rescanned in paced rounds instead.", c->config->name,
                                          wd == -EDQUOT ? "max_watches reached" : "%m");
                c->watch_limited = true;
                return;   /* listed all the same */
        }
        dir->wd = wd;
        c->watches++;
}

static int scan_on_dir(DirId d, int fd, void *userdata) {
        Cache *c = userdata;
        Dir *dir = account_dir(c->account, d);
        char rel[8];

        if (!dir)
                return -ENOENT;
        /* ccache's own directories, created before we could watch them (a
         * new level-1 directory's subdirectories): their mode, right away. */
        if (!c->remote && d != DIR_ROOT && dir->depth <= 2 && account_dir_path(c->account, d, rel, sizeof(rel)) == 0 &&
            ccache_is_top_dir(rel))
                (void) upkeep_dir_fd(fd, rel, cache_on_repair, c);
        if (dir->wd < 0 && !c->poll && ccache_shaped(c, dir))
                watch_dir(c, dir, d, fd);
        return 0;
}

static void scan_on_stats(DirId d, int dirfd, void *userdata) {
        cache_read_stats(userdata, d, dirfd);
}

static const ScanCallbacks scan_callbacks_default = {
        .on_dir = scan_on_dir,
        .on_stats = scan_on_stats,
};

static void on_dir_released(DirId d, Dir *dir, void *userdata) {
        Cache *c = userdata;

        /* Its files left the totals; the table forgets them in slices. */
        (void) sd_event_source_set_enabled(c->purge, SD_EVENT_ON);

        if (dir->wd > 0) {
                watch_remove(c->watch, dir->wd);
                c->watches--;
        }
        dir->wd = -1;
        cache_activity_stats(c, d, NULL);
        if (c->evdir == d && c->evdir_fd >= 0) {
                close(c->evdir_fd);
                c->evdir_fd = -1;
                c->evdir = DIR_NONE;
        }
}

void cache_upkeep_all(Cache *c) {
        int root = cache_root_get(c);

        if (root >= 0)
                cache_upkeep(c, root);
}

/* How many files a first scan will find: ccache's own count of its entries
 * (Σ files_in_cache over the level-1 stats files), no more than the inodes
 * in use on the filesystem. Only an estimate, to size the index once. */
static size_t expected_files(Cache *c) {
        VolumeUsage u;
        uint64_t n = 0;
        int root = cache_root_get(c);

        if (root < 0 || c->remote || volume_usage(root, NULL, &u) < 0)
                return 0;
        for (int i = 0; i < 16; i++) {
                char l1[2] = { "0123456789abcdef"[i], '\0' };
                CcacheStats s;
                int fd = beneath_open_dir(root, l1);

                if (fd < 0)
                        continue;
                if (ccache_stats_read(fd, "stats", &s) == 0)
                        n += s.counters[CCACHE_STAT_FILES_IN_CACHE];
                close(fd);
        }
        return (size_t) (n < u.total_inodes - u.free_inodes ? n : u.total_inodes - u.free_inodes);
}

void cache_rescan(Cache *c, const char *reason) {
        scan_queue_full(c->scans, reason);
}

static void teardown(Cache *c) {
        if (c->share_fd >= 0)
                close(c->share_fd);   /* the share is free for another keeper */
        c->share_fd = -1;
        trim_queue_stop(c->trims);
        scan_queue_stop(c->scans);
        close_iteration_fds(c);
        account_clear(c->account);
        cache_activity_lost(c);
        c->available = false;
        c->watches = 0;   /* account_clear removed them */
        c->watch_limited = false;
        c->dev = 0;
        c->ino = 0;
        c->mount[0] = '\0';
}

_printf_(2, 3)
static void set_unavailable(Cache *c, const char *fmt, ...) {
        char reason[sizeof(c->reason)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        if (!c->unavailable_alerted)
                cache_alert(c, ALERT_CACHE_UNAVAILABLE, LOG_WARNING, "%s %s is unavailable: %s.",
                            c->remote ? "Remote" : "Cache", c->config->name, reason);
        else if (strcmp(reason, c->reason) != 0)
                log_warning("%s %s is unavailable: %s.", c->remote ? "Remote" : "Cache", c->config->name, reason);
        c->unavailable_alerted = true;
        if (c->available)
                teardown(c);
        snprintf(c->reason, sizeof(c->reason), "%s", reason);
        if (c->changed)
                c->changed(c, c->userdata);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        cache_start(userdata);
        return 0;
}

/* The filesystem the cache was kept on is no longer mounted where it was
 * (umount, umount -l): that is no lost root to set up again, for it would be
 * set up on the filesystem below. */
static bool volume_gone(Cache *c) {
        struct stat st;

        return strcmp(c->mount, "/") != 0 && (stat(c->mount, &st) < 0 || st.st_dev != c->dev);
}

void cache_root_lost(Cache *c, const char *why) {
        if (!c->available)
                return;
        if (volume_gone(c)) {
                snprintf(c->lost_mount, sizeof(c->lost_mount), "%s", c->mount);
                set_unavailable(c, "its volume was unmounted ('%s' is not mounted any more)", c->lost_mount);
                return;
        }
        log_warning("Cache %s: root %s %s; setting it up again.", c->config->name, c->config->path, why);
        teardown(c);
        snprintf(c->reason, sizeof(c->reason), "root %s", why);
        if (c->changed)
                c->changed(c, c->userdata);
        (void) sd_event_source_set_time_relative(c->retry, ROOT_RETRY_USEC);
        (void) sd_event_source_set_enabled(c->retry, SD_EVENT_ONESHOT);
}

/* Opens the root, creating it with the configured mode if it is missing. */
static int open_or_create_root(Cache *c) {
        const CacheConfig *cc = c->config;
        int fd;

        fd = open(cc->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT)
                return fd < 0 ? -errno : fd;
        if (mkdir(cc->path, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = open(cc->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* mkdir() filters the mode through the umask and may drop the
         * sticky bit: set it through the fd we hold. */
        if (fchmod(fd, cc->mode) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        log_info("Cache %s: created %s with mode %04o.", cc->name, cc->path, (unsigned) cc->mode);
        return fd;
}

/* Network filesystems: another host's changes raise no inotify event here. */
static const char *network_fs(long type) {
        switch ((unsigned long) type) {
        case 0x6969: return "NFS";
        case 0xFF534D42: return "CIFS";
        case 0xFE534D42: return "SMB2";
        case 0x517B: return "SMB";
        case 0x00C36400: return "Ceph";
        case 0x65735546: return "FUSE";
        case 0x01021997: return "9p";
        case 0x5346414F: return "AFS";
        case 0x0BD00BD0: return "Lustre";
        case 0x47504653: return "GPFS";
        case 0x19830326: return "BeeGFS";
        default: return NULL;
        }
}

/* A share's figures: by inotify, or by paced rescans where other hosts
 * write unseen (watch = "auto" decides by the filesystem). */
static void remote_watch_mode(Cache *c, int fd) {
        struct statfs sf;
        const char *net = fstatfs(fd, &sf) == 0 ? network_fs(sf.f_type) : NULL;

        c->poll = c->config->watch_mode == CACHE_WATCH_POLL || (c->config->watch_mode == CACHE_WATCH_AUTO && net);
        if (c->config->watch_mode != CACHE_WATCH_AUTO)
                snprintf(c->watch_reason, sizeof(c->watch_reason), "configured%s%s%s",
                         net && !c->poll ? " (on " : "", net && !c->poll ? net : "",
                         net && !c->poll ? ": other hosts' stores go unseen until a rescan)" : "");
        else if (net)
                snprintf(c->watch_reason, sizeof(c->watch_reason), "%s: other hosts' changes raise no inotify event", net);
        else
                snprintf(c->watch_reason, sizeof(c->watch_reason), "local filesystem");
}

/* What a planted file was, in words. */
static const char *planted_what(mode_t m) {
        return S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO" :
               S_ISSOCK(m) ? "a socket" : S_ISREG(m) ? "a file" : "a device";
}

/* The share's lock: one keeper per share, across hosts (share-lock.h).
 * Returns 0 (held), or -errno with the share unavailable and why. */
static int remote_lock(Cache *c, int root_fd) {
        usec_t now = event_now(c->event, CLOCK_REALTIME);
        SharePlanted p;
        int fd;

        fd = share_lock_take(root_fd, now, &c->share_holder, &p);
        if (p.found && fd != -EMLINK)
                log_warning("Remote %s: '%s' in %s was not ours (%s, mode %04o, owner uid %u): %s%s%s%s, and the "
                            "share lock taken with a new one.", c->config->name, SHARE_LOCK_NAME, c->config->path,
                            planted_what(p.mode), (unsigned) (p.mode & 07777), (unsigned) p.owner,
                            *p.aside ? "moved aside, as it was, to " : "removed (it held nothing of its own)",
                            *p.aside ? c->config->path : "", *p.aside ? "/" : "", p.aside);
        if (fd == -EMLINK) {
                set_unavailable(c, "a directory (owner uid %u) stands where the share lock %s/%s belongs and the "
                                "quarantine %s/%s is full (%d slots): empty it to keep the share again",
                                (unsigned) p.owner, c->config->path, SHARE_LOCK_NAME, c->config->path,
                                SHARE_QUARANTINE_NAME, SHARE_QUARANTINE_SLOTS);
                return fd;
        }
        if (fd == -EBUSY) {
                const ShareHolder *h = &c->share_holder;
                long long age = (long long) (now / USEC_PER_SEC) - h->beat;

                if (h->host[0])
                        set_unavailable(c, "kept by cachekeeperd on %s (pid %d, heartbeat %llds ago%s); this "
                                        "keeper takes over when that one stops", h->host, (int) h->pid,
                                        age < 0 ? 0 : age, h->flock ? ", holds the lock" : "");
                else
                        set_unavailable(c, "kept by another keeper (it holds the lock on %s/%s)", c->config->path,
                                        SHARE_LOCK_NAME);
                return fd;
        }
        if (fd < 0) {
                set_unavailable(c, "cannot take the share lock %s/%s: %s", c->config->path, SHARE_LOCK_NAME,
                                strerror(-fd));
                return fd;
        }
        c->share_fd = fd;
        c->share_beat = event_now(c->event, CLOCK_MONOTONIC);
        c->share_holder = (ShareHolder) { 0 };
        return 0;
}

/* Our heartbeat in the share lock; losing the lock stands us back. */
static void remote_beat(Cache *c, usec_t now) {
        int root, r;

        if (c->share_fd < 0 || now < c->share_beat + SHARE_LOCK_BEAT_USEC || (root = cache_root_get(c)) < 0)
                return;
        c->share_beat = now;
        r = share_lock_beat(root, c->share_fd, event_now(c->event, CLOCK_REALTIME), &c->share_holder);
        if (r == -EBUSY)
                set_unavailable(c, "kept by cachekeeperd on %s (pid %d): its heartbeat replaced ours in %s/%s "
                                "(the filesystem does not share flock between hosts)", c->share_holder.host,
                                (int) c->share_holder.pid, c->config->path, SHARE_LOCK_NAME);
        else if (r == -ESTALE) {
                log_warning("Remote %s: %s/%s was removed or replaced; taking the lock again.", c->config->name,
                            c->config->path, SHARE_LOCK_NAME);
                close(c->share_fd);
                c->share_fd = -1;
                if (remote_lock(c, root) < 0)
                        return;
        } else if (r < 0)
                log_warning_errno(r, "Remote %s: cannot write the heartbeat into %s/%s: %m", c->config->name,
                                  c->config->path, SHARE_LOCK_NAME);
}

void cache_set_state_dir(Cache *c, int dirfd) {
        c->state_fd = dirfd;
}

int cache_lock(Cache *c, pid_t *ret_holder) {
        int fd;

        *ret_holder = 0;
        if (c->lock_fd >= 0 || c->state_fd < 0)
                return 0;
        fd = root_lock_take(c->state_fd, c->config->path, ret_holder);
        if (fd < 0)
                return fd;
        c->lock_fd = fd;
        return 0;
}

void cache_start(Cache *c) {
        const CacheConfig *cc = c->config;
        struct stat st;
        char lock[ROOT_LOCK_NAME_MAX];
        pid_t holder;
        size_t n;
        int fd, wd;

        if (c->available)
                return;
        fd = cache_lock(c, &holder);
        if (fd == -EBUSY) {
                char pid[32] = "";

                if (holder > 0)
                        snprintf(pid, sizeof(pid), ", pid %d", (int) holder);
                set_unavailable(c, "another cachekeeperd keeps '%s'%s (it holds %s in the state directory)",
                                cc->path, pid, root_lock_name(cc->path, lock, sizeof(lock)));
                return;
        }
        if (fd < 0 && fd != c->lock_error)
                log_warning_errno(fd, "Cache %s: cannot take the lock %s in the state directory, so another "
                                  "daemon could keep %s too: %m", cc->name,
                                  root_lock_name(cc->path, lock, sizeof(lock)), cc->path);
        c->lock_error = fd < 0 ? fd : 0;
        if (cc->require_mount && volume_is_mount_point(cc->require_mount) <= 0) {
                set_unavailable(c, "'%s' is not a mount point", cc->require_mount);
                return;
        }
        /* Its volume went away: only once it is back is the cache looked
         * for (or created) again, never on the filesystem below. */
        if (c->lost_mount[0] && volume_is_mount_point(c->lost_mount) <= 0) {
                set_unavailable(c, "its volume was unmounted ('%s' is not mounted any more)", c->lost_mount);
                return;
        }
        c->lost_mount[0] = '\0';
        fd = c->remote ? open(cc->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : open_or_create_root(c);
        if (c->remote && fd < 0)
                fd = -errno;
        if (fd == -ENOENT && c->remote) {
                /* ccache creates it at its first store; a share never
                 * mounted must not be replaced by a directory below. */
                set_unavailable(c, "'%s' does not exist (the share is not mounted, or nothing was stored yet)", cc->path);
                return;
        }
        if (fd < 0) {
                if (fd == -ELOOP)
                        set_unavailable(c, "'%s' is a symlink; configure the directory it points to", cc->path);
                else if (fd == -ENOENT)
                        set_unavailable(c, "the parent directory of '%s' does not exist", cc->path);
                else {
                        char hint[1024];

                        set_unavailable(c, "'%s' cannot be opened or created: %s%s", cc->path, strerror(-fd),
                                        sandbox_hint(fd, cc->path, hint, sizeof(hint)));
                }
                return;
        }
        if (fstat(fd, &st) < 0 || volume_mount_of(cc->path, c->mount, sizeof(c->mount)) < 0) {
                close(fd);
                set_unavailable(c, "'%s' cannot be examined", cc->path);
                return;
        }
        if (c->remote) {
                remote_watch_mode(c, fd);
                if (remote_lock(c, fd) < 0) {
                        close(fd);
                        return;
                }
        }
        c->max_watches = cc->max_watches ? cc->max_watches : watch_user_limit() / WATCH_AUTO_SHARE;
        if (c->max_watches == 0)
                c->max_watches = 1;
        wd = c->poll ? -EMEDIUMTYPE : watch_add(c->watch, fd, WATCH_DIR_EVENTS, cache_on_watch_event, c, DIR_ROOT);
        close(fd);
        if (wd < 0 && c->poll) {
                c->max_watches = 0;
                wd = -1;
        } else if (wd < 0) {
                if (c->share_fd >= 0)
                        close(c->share_fd);
                c->share_fd = -1;
                set_unavailable(c, "'%s' cannot be watched with inotify: %s", cc->path, strerror(-wd));
                return;
        }
        account_dir(c->account, DIR_ROOT)->wd = wd;
        c->watches = wd >= 0;
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        c->available = true;
        c->reason[0] = '\0';
        scan_queue_start(c->scans);
        if (!c->remote && (fd = cache_root_get(c)) >= 0)
                trim_queue_recover(c->trims, fd);
        if (c->remote)
                log_info("Remote %s: keeping the share %s on %s (%s: %s; LRU by %s).", cc->name, cc->path, c->mount,
                         c->poll ? "paced rescans" : "inotify", c->watch_reason, cache_clock_name(c->clock));
        else
                log_info("Cache %s: keeping %s on %s.", cc->name, cc->path, c->mount);
        if (c->unavailable_alerted) {
                cache_alert(c, ALERT_CACHE_AVAILABLE, LOG_NOTICE, "%s %s is available again, on %s.",
                            c->remote ? "Remote" : "Cache", cc->name, c->mount);
                c->unavailable_alerted = false;
        }
        c->rescan_next = 0;
        cache_upkeep_all(c);
        if (c->changed)
                c->changed(c, c->userdata);
        n = expected_files(c);
        (void) account_reserve(c->account, n + n / 8);
        cache_rescan(c, "initial");
}

/* A share's upkeep at monotonic now: the heartbeat; the root's mode where
 * no event tells of a chmod; paced full rescans where inotify does not see
 * everything (poll mode), does not see what the clock needs (atimes: reads
 * raise no event) or the clock is decided by what the entries show
 * ("auto"); remote-level recovered. */
static void remote_check(Cache *c, usec_t now) {
        int root;

        remote_beat(c, now);
        if (c->available && c->poll && (root = cache_root_get(c)) >= 0)
                cache_upkeep_root(c, root);   /* no event tells of a chmod */
        if (!c->available || !scan_queue_scanned(c->scans))
                return;
        /* "auto" looks again at each rescan which clock the entries show. */
        if ((c->poll || c->clock == CACHE_CLOCK_ATIME || c->config->clock == CACHE_CLOCK_AUTO) &&
            !scan_queue_current(c->scans, NULL, NULL)) {
                if (c->rescan_next == 0)
                        c->rescan_next = now + c->config->rescan_interval_usec;
                else if (now >= c->rescan_next) {
                        c->rescan_next = now + c->config->rescan_interval_usec;
                        cache_rescan(c, c->poll ? "paced" : "atime");
                }
        }
        if (c->remote_level && account_totals(c->account)->bytes <= c->config->max_size_bytes) {
                c->remote_level = false;
                cache_alert_level(c, ALERT_REMOTE_LEVEL, LOG_INFO, "ok", "Remote %s is within its cap again.",
                                  c->config->name);
        }
}

void cache_check(Cache *c, usec_t now) {
        const CacheConfig *cc = c->config;
        struct stat st;

        if (!c->available) {
                if (!sd_event_source_get_enabled(c->retry, NULL))
                        cache_start(c);
                return;
        }
        if (cc->require_mount && volume_is_mount_point(cc->require_mount) <= 0) {
                set_unavailable(c, "'%s' is not a mount point any more", cc->require_mount);
                return;
        }
        if (lstat(cc->path, &st) < 0 || st.st_dev != c->dev || st.st_ino != c->ino) {
                cache_root_lost(c, errno == ENOENT ? "was deleted" : "was replaced");
                return;
        }
        if (volume_gone(c)) {   /* lazily unmounted: the path may still resolve for a while */
                cache_root_lost(c, "was unmounted");
                return;
        }
        if (c->remote)
                remote_check(c, now);
        if (c->available)
                scan_queue_check(c->scans, now, c->poll ? 0 : cache_unwatched_dirs(c));
}

/* The clock the account's times are now: a share in "auto" goes by what
 * its entries showed at the last full scan (remote_clock_decide: many
 * entries touched by hits of writers with update-mtime=true: mtime, which
 * reads that are no hits leave alone; else atime), logged each way, and
 * rescanned to read the other times. */
static void remote_clock_check(Cache *c) {
        CacheClock want = remote_clock_decide(c->config->clock, c->clock, c->clock_entries, c->clock_touched);

        if (want == c->clock)
                return;
        if (want == CACHE_CLOCK_MTIME)
                log_notice("Remote %s: %llu of its %llu entries were touched after they were written (writers with "
                           "update-mtime=true refresh mtime on hits): least recently used is by mtime from now on; "
                           "rescanning to read it.", c->config->name, (unsigned long long) c->clock_touched,
                           (unsigned long long) c->clock_entries);
        else
                log_notice("Remote %s: only %llu of its %llu entries show a touch now (mtime needs %u and %.1f%% of "
                           "them, and keeps while %u and %.1f%% do): least recently used is by atime again; "
                           "rescanning to read it.", c->config->name, (unsigned long long) c->clock_touched,
                           (unsigned long long) c->clock_entries, REMOTE_CLOCK_MTIME_MIN_TOUCHED,
                           REMOTE_CLOCK_MTIME_MIN_PERMILLE / 10.0, REMOTE_CLOCK_ATIME_BELOW_TOUCHED,
                           REMOTE_CLOCK_ATIME_BELOW_PERMILLE / 10.0);
        c->clock = want;
        c->scan_cb.atime = want == CACHE_CLOCK_ATIME;
        if (scan_queue_scanned(c->scans))
                cache_rescan(c, "clock");   /* (a first scan is done again by its queue) */
}


/* The activity fed at realtime now, then what is decided from it: the
 * advice on the cap, the key families' mix, the alarms. A share has no
 * ccache counters: a local cache's alarms mean nothing for it. */
static void feed(Cache *c, usec_t now) {
        cache_activity_feed(c, now);
        if (c->remote)
                return;
        cache_advice_check(c, now);
        cache_writers_check(c, now);
        cache_alarms_check(c, now);
}

/* How often the activity is fed: CACHE_ACTIVITY_USEC. For the tests only,
 * CACHEKEEPER_TEST_FEED in the environment at start (a duration from 100ms
 * up to that) feeds it more often, so that a test waits less for ccache's
 * counters to show; anything else there is ignored, and said. */
static usec_t activity_usec(void) {
        static usec_t usec;
        const char *e;
        usec_t u;

        if (usec != 0)
                return usec;
        usec = CACHE_ACTIVITY_USEC;
        e = getenv("CACHEKEEPER_TEST_FEED");
        if (!e)
                return usec;
        if (parse_duration(e, &u) < 0 || u < 100 * USEC_PER_MSEC || u > CACHE_ACTIVITY_USEC) {
                log_warning("CACHEKEEPER_TEST_FEED=%s is not a duration from 100ms to 10s: ignored.", e);
                return usec;
        }
        log_notice("CACHEKEEPER_TEST_FEED=%s: ccache's counters are fed every %llu ms (tests only).", e,
                   (unsigned long long) (u / USEC_PER_MSEC));
        return usec = u;
}

static int on_activity_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Cache *c = userdata;

        feed(c, event_now(c->event, CLOCK_REALTIME));
        return sd_event_source_set_time_relative(s, activity_usec());
}

int cache_history_save(Cache *c, int dirfd, const char *dir, usec_t now) {
        if (dirfd < 0)
                return 0;
        feed(c, now);
        return cache_activity_save(c, dirfd, dir);
}

static int on_upkeep_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Cache *c = userdata;

        if (c->available)
                cache_upkeep_all(c);
        return 0;
}

/* One slice of the purge: steps of ACCOUNT_PURGE_STEP records until its
 * time is up (daemon/README.md §6), off once no forgotten file is left. */
static int on_purge(sd_event_source *s, void *userdata) {
        Cache *c = userdata;
        SliceBudget slice;
        size_t left;

        slice_begin(&slice, SLICE_USEC, 1);
        do
                left = account_purge_step(c->account, ACCOUNT_PURGE_STEP);
        while (left > 0 && !slice_over(&slice));
        if (left == 0)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        slice_turn(&slice, &c->purge_turn_usec, &c->purge, on_purge, c);   /* the trims', the writers' pass */
        return 0;
}

static int on_writers_pass(sd_event_source *s, void *userdata) {
        Cache *c = userdata;

        return cache_writers_pass(c, cache_root_get(c));
}

/* What the trim queue borrows from its cache. */
static int trims_root(void *userdata, dev_t *ret_dev) {
        Cache *c = userdata;
        int fd = cache_root_get(c);

        if (fd >= 0)
                *ret_dev = c->dev;
        return fd;
}

static void trims_changed(void *userdata) {
        Cache *c = userdata;

        if (c->changed)
                c->changed(c, c->userdata);
}

static void trims_alert(void *userdata, AlertKind kind, int priority, const char *level, const char *message) {
        Cache *c = userdata;

        /* A share over its cap that cannot be trimmed fills its volume for
         * every host: remote-level, recovered once it is within again (the
         * share's own recovery, below its cap, not the trim's). */
        if (c->remote && kind == ALERT_CACHE_TRIM_FAILED) {
                if (!level) {
                        c->remote_level = true;
                        cache_alert_level(c, ALERT_REMOTE_LEVEL, LOG_CRIT, "critical", "%s", message);
                }
                return;
        }
        cache_alert_level(c, kind, priority, level, "%s", message);
}

static bool trims_atime(void *userdata) {
        Cache *c = userdata;

        return c->clock == CACHE_CLOCK_ATIME;
}

/* What the scan queue borrows from its cache. */
static int scans_open_dir(void *userdata, DirId d) {
        return cache_dir_open(userdata, d);
}

/* A full scan is over: for a share, what it showed of the clocks (a first
 * scan whose clock changed is done again: true). */
static bool scans_full_done(void *userdata, uint64_t touched, uint64_t read) {
        Cache *c = userdata;
        CacheClock was = c->clock;

        c->ws_at = 0;   /* a count taken while it ran (the first: part of the cache) is taken again */
        if (!c->remote)
                return false;
        c->clock_scanned = true;
        c->clock_touched = touched;
        c->clock_read = read;
        c->clock_entries = cache_entry_files(c);
        remote_clock_check(c);
        return c->clock != was;
}

/* A scan after the first found files new to the account (a directory
 * renamed in, an unwatched one's): their headers are read too, or a purge
 * by writer would wait for them for good. */
static void scans_found(void *userdata) {
        cache_writers_rescan(userdata);
}

/* The first scan is over: the figures are whole, trims may run. */
static void scans_scanned(void *userdata) {
        Cache *c = userdata;

        trim_queue_start(c->trims);
        feed(c, event_now(c->event, CLOCK_REALTIME));   /* the baseline */
        cache_writers_rescan(c);
        if (c->changed)
                c->changed(c, c->userdata);
}

int cache_new(sd_event *e, Watch *w, Alerter *alerter, const CacheConfig *config, cache_changed_t changed,
              void *userdata, Cache **ret) {
        _cleanup_(cache_freep) Cache *c = NULL;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(e);
        c->watch = w;
        c->alerter = alerter;
        c->config = config;
        c->changed = changed;
        c->userdata = userdata;
        c->root_fd = c->evdir_fd = -1;
        c->state_fd = c->lock_fd = c->share_fd = -1;
        c->evdir = DIR_NONE;
        c->remote = cache_config_is_remote(config);
        c->clock = config->clock == CACHE_CLOCK_MTIME ? CACHE_CLOCK_MTIME : CACHE_CLOCK_ATIME;
        if (!c->remote)
                c->clock = CACHE_CLOCK_MTIME;
        c->scan_cb = scan_callbacks_default;
        c->scan_cb.atime = c->clock == CACHE_CLOCK_ATIME;
        r = account_new(&c->account);
        if (r < 0)
                return r;
        if (c->remote && (r = account_set_layout(c->account, config->layout == CACHE_LAYOUT_REMOTE_FLAT
                                                                     ? ACCOUNT_LAYOUT_REMOTE_FLAT
                                                                     : ACCOUNT_LAYOUT_REMOTE_SUBDIRS)) < 0)
                return r;
        r = cache_activity_init(c);
        if (r < 0)
                return r;
        r = cache_writers_init(c, on_writers_pass);
        if (r < 0)
                return r;
        if ((r = sd_event_add_defer(e, &c->purge, on_purge, c)) < 0)
                return r;
        (void) sd_event_source_set_priority(c->purge, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(c->purge, "cache-purge");
        if ((r = sd_event_source_set_enabled(c->purge, SD_EVENT_OFF)) < 0)
                return r;
        account_set_dir_hook(c->account, on_dir_released, c);
        r = trim_queue_new(e, c, c->account, config,
                           &(TrimQueueEnv) { .root = trims_root, .changed = trims_changed, .alert = trims_alert,
                                             .evicted = cache_activity_evicted, .atime = trims_atime, .userdata = c },
                           &c->trims);
        if (r < 0)
                return r;
        r = scan_queue_new(e, c->account, config,
                           &(ScanQueueEnv) { .open_dir = scans_open_dir, .scanned = scans_scanned,
                                             .full_done = scans_full_done, .found = scans_found,
                                             .callbacks = &c->scan_cb, .userdata = c },
                           &c->scans);
        if (r < 0)
                return r;
        if ((r = sd_event_add_post(e, &c->post, on_post, c)) < 0 ||
            (r = sd_event_add_time_relative(e, &c->retry, CLOCK_MONOTONIC, ROOT_RETRY_USEC, 0, on_retry, c)) < 0 ||
            (r = sd_event_add_time_relative(e, &c->upkeep_timer, CLOCK_MONOTONIC, UPKEEP_DEBOUNCE_USEC, 0,
                                            on_upkeep_timer, c)) < 0 ||
            (r = sd_event_add_time_relative(e, &c->activity_timer, CLOCK_MONOTONIC, activity_usec(), 0,
                                            on_activity_timer, c)) < 0)
                return r;
        (void) sd_event_source_set_priority(c->activity_timer, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(c->activity_timer, "cache-activity");
        if ((r = sd_event_source_set_enabled(c->activity_timer, SD_EVENT_ON)) < 0)   /* every 10 s, not once */
                return r;
        (void) sd_event_source_set_description(c->post, "cache-close-fds");
        (void) sd_event_source_set_description(c->retry, "cache-retry");
        (void) sd_event_source_set_enabled(c->retry, SD_EVENT_OFF);
        *ret = TAKE_PTR(c);
        return 0;
}

void cache_retire(Cache *c) {
        static const struct {
                AlertKind kind;
                const char *what;
        } kinds[] = {
                { ALERT_CACHE_CAP_SMALL, "cache-cap-small" },   /* not status keys: the alerts' names */
                { ALERT_CACHE_VERSION_MIX, "cache-version-mix" },
                { ALERT_CACHE_SILENT_MISS, "cache-silent-miss" },
                { ALERT_CACHE_IDLE, "cache-idle" },
                { ALERT_REMOTE_ERRORS, "remote-errors" },
        };
        const bool standing[] = { c->cap_small, c->version_mix, c->alarms.silent, c->alarms.idle, c->remote_errors };
        const char *what = c->remote ? "Remote" : "Cache", *name = c->config->name;

        /* What stands is taken back, so that nothing looks alive after the
         * cache is gone from the configuration. */
        if (c->unavailable_alerted && !c->available)
                cache_alert(c, ALERT_CACHE_AVAILABLE, LOG_NOTICE,
                            "%s %s is no longer configured: its cache-unavailable no longer stands.", what, name);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (standing[i])
                        cache_alert_level(c, kinds[i].kind, LOG_INFO, "ok",
                                          "%s %s is no longer configured: its %s no longer stands.", what, name,
                                          kinds[i].what);
        c->unavailable_alerted = c->cap_small = c->version_mix = c->remote_errors = false;
        c->alarms.silent = c->alarms.idle = false;
}

Cache *cache_free(Cache *c) {
        if (!c)
                return NULL;
        /* Whoever waits for a trim hears that it ended; nothing new starts. */
        c->changed = NULL;
        c->trims = trim_queue_free(c->trims);
        c->scans = scan_queue_free(c->scans);
        sd_event_source_disable_unref(c->upkeep_timer);
        sd_event_source_disable_unref(c->activity_timer);
        close_iteration_fds(c);
        if (c->account && c->watch)
                account_clear(c->account);   /* removes our watches */
        account_free(c->account);
        sd_event_source_disable_unref(c->purge);
        cache_writers_done(c);
        cache_activity_done(c);
        sd_event_source_disable_unref(c->post);
        sd_event_source_disable_unref(c->retry);
        sd_event_unref(c->event);
        if (c->lock_fd >= 0)
                close(c->lock_fd);   /* the root is free for another daemon */
        if (c->share_fd >= 0)
                close(c->share_fd);
        free(c);
        return NULL;
}

void cache_set_config(Cache *c, const CacheConfig *config) {
        int root;

        c->config = config;
        trim_queue_set_config(c->trims, config);
        scan_queue_set_config(c->scans, config);
        if ((root = cache_root_get(c)) >= 0)
                cache_upkeep_reconfigured(c, root);
}

int cache_trim(Cache *c, uint64_t target, bool dry_run, TrimReason reason, cache_trim_done_t done, void *userdata) {
        if (!c->available)
                return -ENODEV;
        if (!scan_queue_scanned(c->scans))
                return -EAGAIN;
        return trim_queue_add(c->trims, target, dry_run, reason, done, userdata);
}

int cache_trim_plan(Cache *c, EvictPlan *plan, TrimReason reason, cache_trim_done_t done, void *userdata) {
        if (!c->available || !scan_queue_scanned(c->scans)) {
                evict_plan_done(plan);
                return c->available ? -EAGAIN : -ENODEV;
        }
        return trim_queue_add_plan(c->trims, plan, reason, done, userdata);
}

int cache_trim_writer(Cache *c, const char *version, const char *ns, bool dry_run, cache_trim_done_t done,
                      void *userdata) {
        EvictPlan plan = { 0 };
        int r;

        if (!c->available)
                return -ENODEV;
        if (!scan_queue_scanned(c->scans))
                return -EAGAIN;
        r = cache_writers_plan(c, version, ns, &plan);
        if (r < 0)
                return r;
        if (dry_run) {
                TrimResult t = { .dry_run = true, .planned_files = plan.n, .planned_bytes = plan.bytes,
                                 .files = plan.n, .bytes = plan.bytes, .beyond_table = plan.beyond_table };

                evict_plan_done(&plan);
                done(c, &t, userdata);
                return 0;
        }
        return cache_trim_plan(c, &plan, TRIM_REASON_WRITTEN_BY, done, userdata);
}

void cache_trim_forget(Cache *c, void *userdata) {
        trim_queue_forget(c->trims, userdata);
}

bool cache_scan_busy(const Cache *c) {
        return scan_queue_current(c->scans, NULL, NULL) != NULL;
}

int cache_root(Cache *c, dev_t *ret_dev) {
        int fd = cache_root_get(c);

        if (fd >= 0 && ret_dev)
                *ret_dev = c->dev;
        return fd;
}

void cache_counters_moved(Cache *c, unsigned l1, unsigned l2, uint64_t add_files, uint64_t add_kib,
                          uint64_t sub_files, uint64_t sub_kib) {
        if (!c->remote)
                trim_queue_moved(c->trims, l1, l2, add_files, add_kib, sub_files, sub_kib);
}

void cache_recount(Cache *c, unsigned l1, unsigned l2) {
        if (!c->remote)
                trim_queue_recount(c->trims, l1, l2);
}

Account *cache_account(Cache *c) {
        return c->account;
}
