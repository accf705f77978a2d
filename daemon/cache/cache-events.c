/* SPDX-License-Identifier: MIT */
/* A cache's event path, the top of the cache: each inotify event (or an
 * overflow) turned into the account's truth, the activity it shows
 * (stores, hits, removals), who wrote a new entry, and the upkeep it calls
 * for. It calls down into cache.c for the iteration's root (cache-root.h)
 * and into the parts; nothing calls back up into it but the watch. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/cache-activity.h"
#include "cache/cache-internal.h"
#include "cache/cache-root.h"
#include "cache/cache-upkeep.h"
#include "cache/cache-writers.h"
#include "os/share-lock.h"
#include "tree/scan.h"

/* dir_open, cached for the events of one loop iteration. Borrowed fd. */
static int evdir_get(Cache *c, DirId d) {
        int fd;

        if (c->evdir == d && c->evdir_fd >= 0)
                return c->evdir_fd;
        if (d == DIR_ROOT)
                return cache_root_get(c);
        fd = cache_dir_open(c, d);
        if (fd < 0)
                return fd;
        if (c->evdir_fd >= 0)
                close(c->evdir_fd);
        c->evdir = d;
        c->evdir_fd = fd;
        return fd;
}

/* A ccache entry of the account (not a temporary, stats or other file):
 * its figures into *ret. */
static bool entry_info(Cache *c, DirId d, const char *name, FileInfo *ret) {
        return account_file_info(c->account, account_file_find(c->account, d, name), ret) == 0 &&
               ccache_kind_is_entry(ret->kind);
}

/* What an event on a file that is (still) there shows of ccache's
 * activity: r is what account_file_set_inode returned. A new entry is a
 * store. A hit is ccache's utimensat(NULL) on a known entry: IN_ATTRIB
 * with ccache_hit_times, which neither a chmod of an entry not just written or
 * hit (ctime only) nor a write and rename (IN_MOVED_TO, no IN_ATTRIB)
 * leaves. */
static void file_activity(Cache *c, DirId d, int dirfd, const char *name, uint32_t mask, uint32_t cookie, int r,
                          const struct statx *stx) {
        FileInfo fi;

        if (!entry_info(c, d, name, &fi)) {
                cache_activity_settle(c);
                return;
        }
        /* A share's headers are not read: reading would move the atimes
         * its LRU may go by. */
        if (r == 1 && (mask & (IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE))) {
                if (cache_activity_appeared(c, d, fi.kind, name, stx->stx_blocks * 512, mask & IN_MOVED_TO ? cookie : 0)) {
                        if (!c->remote)
                                cache_writers_stored(c, d, name, fi.kind, dirfd);
                } else
                        cache_writers_moved(c, d, name, fi.kind, dirfd);   /* renamed within: no store, a new name */
        } else if (r != 1 && (mask & IN_ATTRIB) &&
                   ccache_hit_times(&stx->stx_mtime, &stx->stx_ctime, ccache_clock_tick_nsec())) {
                cache_activity_refreshed(c, stx->stx_blocks * 512);
                /* A share's clock is decided by its full scans: one touch
                 * by a user looks just like this. */
                if (c->remote)
                        c->mtime_refresh_seen = true;
                else
                        cache_writers_hit(c, d, name, fi.kind, dirfd);
        } else
                cache_activity_settle(c);
}

static void refresh_file(Cache *c, DirId d, const char *name, uint32_t mask, uint32_t cookie) {
        const Dir *dir = account_dir(c->account, d);
        struct statx stx;
        FileInfo fi;
        int fd, r;

        /* Gone from here: no need to look. A file created under the same
         * name since has its own event still to come. This also keeps the
         * echo of our own trims (an IN_DELETE per victim) cheap: they are
         * gone from the account already, and no removal by someone else. */
        if (mask & (IN_DELETE | IN_MOVED_FROM)) {
                bool entry = entry_info(c, d, name, &fi);

                if (account_file_remove(c->account, d, name) > 0 && entry)
                        cache_activity_removed(c, d, name, (uint64_t) fi.blocks * 512,
                                               mask & IN_MOVED_FROM ? cookie : 0);
                else
                        cache_activity_settle(c);
                if (dir && (dir->depth == 1 || dir->depth == 2) && strcmp(name, "stats") == 0) {
                        account_dir_set_stats(c->account, d, 0, 0);
                        cache_activity_stats(c, d, NULL);
                }
                return;
        }
        fd = evdir_get(c, d);
        if (fd < 0)
                return;   /* the directory went away: its own events follow */
        if (statx(fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
                  SCAN_STATX_MASK | STATX_CTIME, &stx) == 0 &&
            S_ISREG(stx.stx_mode)) {
                r = account_file_set_inode(c->account, d, name, stx.stx_blocks,
                                           (c->clock == CACHE_CLOCK_ATIME ? stx.stx_atime : stx.stx_mtime).tv_sec,
                                           stx.stx_ino, stx.stx_nlink, true);
                if (r >= 0)
                        file_activity(c, d, fd, name, mask, cookie, r, &stx);
        } else
                (void) account_file_remove(c->account, d, name);
        if (dir && (dir->depth == 1 || dir->depth == 2) && strcmp(name, "stats") == 0)
                cache_read_stats(c, d, fd);
}

static void subdir_appeared(Cache *c, DirId parent, const char *name) {
        DirId d = account_dir_find(c->account, parent, name);

        /* A new directory under this name: whatever we knew there is stale. */
        if (d != DIR_NONE)
                account_dir_remove(c->account, d);
        if (account_dir_add(c->account, parent, name, &d) < 0) {
                cache_rescan(c, "out of memory adding a directory");
                return;
        }
        scan_queue_subtree(c->scans, d);
}

void cache_on_watch_event(void *owner, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name) {
        Cache *c = owner;
        Dir *d;
        int root;

        if (!c->available || !(d = account_dir(c->account, dir)))
                return;
        if (!name || (mask & IN_ISDIR))
                cache_activity_settle(c);
        if (mask & IN_IGNORED) {
                if (d->wd >= 0)
                        c->watches--;
                d->wd = -1;   /* the kernel dropped the watch: nothing to remove */
                if (dir == DIR_ROOT)
                        cache_root_lost(c, "was deleted or unmounted");
                else
                        account_dir_remove(c->account, dir);
                return;
        }
        if (!name) {
                if (dir == DIR_ROOT && (mask & (IN_DELETE_SELF | IN_MOVE_SELF)))
                        cache_root_lost(c, mask & IN_DELETE_SELF ? "was deleted" : "was moved away");
                else if ((mask & IN_ATTRIB) && (root = cache_root_get(c)) >= 0)
                        cache_upkeep_event(c, root, dir, NULL);
                return;
        }
        /* The share lock's name removed, replaced or planted: looked at
         * now, not at the next beat. */
        if (c->remote && dir == DIR_ROOT && (mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)) &&
            strcmp(name, SHARE_LOCK_NAME) == 0)
                c->share_beat = 0;
        if (mask & IN_ISDIR) {
                if (mask & (IN_CREATE | IN_MOVED_TO))
                        subdir_appeared(c, dir, name);
                else if (mask & (IN_DELETE | IN_MOVED_FROM))
                        account_dir_remove(c->account, account_dir_find(c->account, dir, name));
                /* A kept directory created or chmod'ed: put it right now;
                 * removed: recreate it once removals are over. */
                if (mask & (IN_DELETE | IN_MOVED_FROM))
                        cache_upkeep_later(c);
                else if ((root = cache_root_get(c)) >= 0)
                        cache_upkeep_event(c, root, dir, name);
                return;
        }
        refresh_file(c, dir, name, mask, cookie);
        if ((root = cache_root_get(c)) >= 0)
                cache_upkeep_file_event(c, root, dir, name, mask);
}

void cache_events_lost(Cache *c) {
        c->overflows++;
        cache_upkeep_all(c);   /* a ccache.conf or symlink planted meanwhile went unseen */
        cache_rescan(c, "inotify queue overflow");
}
