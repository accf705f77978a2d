/* SPDX-License-Identifier: MIT */
/* Filesystem change hints through inotify, via libinotifytools, driven from
 * the sd-event loop. The only file that includes inotifytools.h. Events are
 * hints: the scan stays the source of truth. Single instance, one thread. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/inotify.h>

#include <systemd/sd-event.h>

typedef struct Watch Watch;

/* Events dispatched per loop iteration at most: the control socket and the
 * timers get their turn between two such batches, whatever the flood. */
#define WATCH_DRAIN_MAX 256
/* The inotify sources' priority: after the control socket and timers
 * (SD_EVENT_PRIORITY_NORMAL), before scans and trims (idle). */
#define WATCH_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 1)
/* At most this many batches in this long; beyond, events wait (the kernel
 * queues them, or overflows and a rescan follows) while scans and trims run. */
#define WATCH_RATELIMIT_USEC (100 * 1000)
#define WATCH_RATELIMIT_BURST 20

/* Events a cache directory is watched for. IN_ACCESS and IN_MODIFY are left
 * out on purpose: they would flood the queue and carry nothing we need. */
#define WATCH_DIR_EVENTS (IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | \
                          IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

/* One event, to the handler of the watch it came on, straight: owner/dir
 * are what watch_add was given; name is NULL for an event on the directory
 * itself; cookie pairs an IN_MOVED_FROM with its IN_MOVED_TO (0 for other
 * events). mask IN_IGNORED: the watch is gone (directory deleted or
 * unmounted) and already forgotten here. */
typedef void (*watch_handler_t)(void *owner, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name);
/* The kernel's queue overflowed: events were lost, for every watch. The
 * only event that is no one watch's, so the one that goes to the Watch's
 * owner (who knows every watcher). */
typedef void (*watch_overflow_t)(void *userdata);

/* Initialises libinotifytools, finds its fd and puts it on the loop.
 * Returns 0, -EBUSY if a Watch exists already, or -errno. */
int watch_new(sd_event *e, watch_overflow_t overflow, void *userdata, Watch **ret);

/* Watches the directory open as dirfd (exactly that inode, whatever its
 * path has become) for owner/dir, whose events go to handler. Returns the
 * watch descriptor, or -errno: -ENOSPC at the user's watch limit. */
int watch_add(Watch *w, int dirfd, uint32_t mask, watch_handler_t handler, void *owner, uint32_t dir);

/* Stops watching wd. Unknown or already gone wds are ignored. */
void watch_remove(Watch *w, int wd);

/* Number of directories watched now. */
size_t watch_count(const Watch *w);

/* A cache's share of the user's inotify watches when its max_watches is
 * "auto": one eighth, so that several caches and the rest of the system
 * (root's other inotify users) keep theirs. */
#define WATCH_AUTO_SHARE 8

/* The user's inotify watch limit: the lower of fs.inotify.max_user_watches
 * and the user namespace's user.max_inotify_watches; 8192 (the kernel's old
 * default) when neither can be read. */
uint32_t watch_user_limit(void);

/* Detaches from the loop, then inotifytools_cleanup(). Accepts NULL. */
Watch *watch_free(Watch *w);
static inline void watch_freep(Watch **w) {
        watch_free(*w);
}
