/* SPDX-License-Identifier: MIT */
/* libinotifytools on sd-event (os/README.md §1). The library owns the inotify fd
 * and its read buffer; we find the fd, poll it, and drain with
 * inotifytools_next_events(0, 1), at most WATCH_DRAIN_MAX events per loop
 * iteration: what the library read beyond that waits in its buffer, which
 * epoll cannot see, so a defer source goes on draining it in the next
 * iteration, after the control socket's turn. Watches are added with inotify_add_watch() on
 * the library's fd, through /proc/self/fd/N: the library's own add functions
 * return no descriptor and key watches by path, which goes wrong as soon as
 * a directory is deleted and recreated under the same name. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <inotifytools/inotifytools.h>

#include "base/util.h"
#include "os/watch.h"

typedef struct Slot {
        int wd;              /* 0: empty */
        uint32_t dir;
        watch_handler_t handler;
        void *owner;
} Slot;

struct Watch {
        sd_event_source *source, *more;   /* the fd; the library's buffer */
        int fd;              /* borrowed from libinotifytools */
        watch_overflow_t overflow;
        void *userdata;
        Slot *slots;
        size_t n_slots, count;
};

static Watch *the_watch;   /* libinotifytools is process-wide: so are we */

static size_t slot_home(const Watch *w, int wd) {
        return ((uint32_t) wd * 2654435761u) & (w->n_slots - 1);
}

static Slot *slot_find(const Watch *w, int wd) {
        for (size_t i = slot_home(w, wd);; i = (i + 1) & (w->n_slots - 1))
                if (w->slots[i].wd == wd || w->slots[i].wd == 0)
                        return &w->slots[i];
}

static int slots_grow(Watch *w) {
        Slot *old = w->slots;
        size_t n = w->n_slots;

        w->slots = calloc(n * 2, sizeof(Slot));
        if (!w->slots) {
                w->slots = old;
                return -ENOMEM;
        }
        w->n_slots = n * 2;
        for (size_t i = 0; i < n; i++)
                if (old[i].wd)
                        *slot_find(w, old[i].wd) = old[i];
        free(old);
        return 0;
}

static void slot_delete(Watch *w, Slot *s) {
        size_t i = (size_t) (s - w->slots), j = i;

        w->slots[i].wd = 0;
        w->count--;
        for (;;) {
                size_t k;

                j = (j + 1) & (w->n_slots - 1);
                if (w->slots[j].wd == 0)
                        return;
                k = slot_home(w, w->slots[j].wd);
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        w->slots[i] = w->slots[j];
                        w->slots[j].wd = 0;
                        i = j;
                }
        }
}

static void dispatch(Watch *w, const struct inotify_event *ev) {
        const char *name = ev->len > 0 && ev->name[0] ? ev->name : NULL;
        Slot *s;

        if (ev->mask & IN_Q_OVERFLOW) {
                w->overflow(w->userdata);
                return;
        }
        s = slot_find(w, ev->wd);
        if (s->wd == 0)
                return;   /* a watch we removed: its last events are stale */
        if (ev->mask & IN_IGNORED) {
                Slot copy = *s;
                slot_delete(w, s);
                copy.handler(copy.owner, copy.dir, IN_IGNORED, 0, NULL);
                return;
        }
        s->handler(s->owner, s->dir, ev->mask, ev->cookie, name);
}

static int read_error(void) {
        int error = inotifytools_error();

        return error && error != EAGAIN && error != EINTR ? -error : 0;
}

/* Dispatches at most max events. Returns 1 if it stopped at max (more may
 * wait in the library's buffer), 0 when there was nothing more to read, or
 * -errno on a read error (a read error loses hints only: the audit repairs). */
static int drain_some(Watch *w, size_t max) {
        for (size_t n = 0; n < max; n++) {
                struct inotify_event *ev = inotifytools_next_events(0, 1);

                if (!ev)
                        return read_error();
                dispatch(w, ev);
        }
        return 1;
}

static void drain_step(Watch *w) {
        if (drain_some(w, WATCH_DRAIN_MAX) > 0)
                (void) sd_event_source_set_enabled(w->more, SD_EVENT_ONESHOT);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        drain_step(userdata);
        return 0;
}

static int on_more(sd_event_source *s, void *userdata) {
        drain_step(userdata);
        return 0;
}

/* Both sources: after the control socket and the timers, before scans and
 * trims; and rate-limited, so that a flood of events leaves those their share. */
static int source_setup(sd_event_source *s, const char *description) {
        int r;

        (void) sd_event_source_set_description(s, description);
        r = sd_event_source_set_priority(s, WATCH_PRIORITY);
        if (r >= 0)
                r = sd_event_source_set_ratelimit(s, WATCH_RATELIMIT_USEC, WATCH_RATELIMIT_BURST);
        return r;
}

/* libinotifytools hides its fd: learn the lowest free fd, let it take that
 * one, and check that it really is an inotify instance. */
static int find_fd(void) {
        char link[64], target[64];
        ssize_t n;
        int probe;

        probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (probe < 0)
                return -errno;
        close(probe);
        if (!inotifytools_init(0, 0, 0))
                return -(inotifytools_error() ?: EIO);
        snprintf(link, sizeof(link), "/proc/self/fd/%d", probe);
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0 || (target[n] = '\0', strcmp(target, "anon_inode:inotify") != 0)) {
                inotifytools_cleanup();
                return -ENOTRECOVERABLE;
        }
        if (probe >= FD_SETSIZE) {   /* the library select()s on it */
                inotifytools_cleanup();
                return -EMFILE;
        }
        return probe;
}

int watch_new(sd_event *e, watch_overflow_t overflow, void *userdata, Watch **ret) {
        Watch *w;
        int fd, r;

        if (the_watch)
                return -EBUSY;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->n_slots = 256;
        w->slots = calloc(w->n_slots, sizeof(Slot));
        if (!w->slots) {
                free(w);
                return -ENOMEM;
        }
        fd = find_fd();
        if (fd < 0) {
                free(w->slots);
                free(w);
                return fd;
        }
        w->fd = fd;
        w->overflow = overflow;
        w->userdata = userdata;
        the_watch = w;
        /* The library only reads after select() and FIONREAD say there is
         * data, so non-blocking costs nothing and rules out a stuck read. */
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
            fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                r = -errno;
                watch_free(w);
                return r;
        }
        r = sd_event_add_io(e, &w->source, fd, EPOLLIN, on_io, w);
        if (r >= 0)
                r = source_setup(w->source, "inotify");
        if (r >= 0)
                r = sd_event_add_defer(e, &w->more, on_more, w);
        if (r >= 0)
                r = source_setup(w->more, "inotify-buffered");
        if (r >= 0)
                r = sd_event_source_set_enabled(w->more, SD_EVENT_OFF);
        if (r < 0) {
                watch_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

int watch_add(Watch *w, int dirfd, uint32_t mask, watch_handler_t handler, void *owner, uint32_t dir) {
        char path[64];
        Slot *s;
        int wd;

        if (w->count + 1 > w->n_slots / 2 && slots_grow(w) < 0)
                return -ENOMEM;
        /* The magic link names exactly the directory we opened. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
        wd = inotify_add_watch(w->fd, path, mask);
        if (wd < 0)
                return -errno;
        s = slot_find(w, wd);
        if (s->wd == 0)
                w->count++;
        *s = (Slot) { .wd = wd, .dir = dir, .handler = handler, .owner = owner };
        return wd;
}

void watch_remove(Watch *w, int wd) {
        Slot *s;

        if (wd <= 0)
                return;
        s = slot_find(w, wd);
        if (s->wd == 0)
                return;
        slot_delete(w, s);
        (void) inotify_rm_watch(w->fd, wd);
}

size_t watch_count(const Watch *w) {
        return w->count;
}

static uint64_t read_limit(const char *path) {
        char buf[32];
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return UINT64_MAX;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return UINT64_MAX;
        buf[n] = '\0';
        return strtoull(buf, NULL, 10) ?: UINT64_MAX;
}

uint32_t watch_user_limit(void) {
        uint64_t a = read_limit("/proc/sys/fs/inotify/max_user_watches");
        uint64_t b = read_limit("/proc/sys/user/max_inotify_watches");
        uint64_t n = a < b ? a : b;

        return n == UINT64_MAX ? 8192 : n > UINT32_MAX ? UINT32_MAX : (uint32_t) n;
}

/* The library keeps what it read and did not return yet in a buffer of
 * its own that outlives inotifytools_cleanup(): the next instance would be
 * handed this one's last events first, under watch descriptors that name
 * other directories there (seen: a test's second cache losing its
 * subtrees to the IN_IGNORED of the first test's). Read them out, and what
 * the kernel still queues with them: at most its queue, which
 * max_queued_events bounds, beside the library's buffer. */
static void forget_buffered(void) {
        uint64_t max = read_limit("/proc/sys/fs/inotify/max_queued_events");

        max = (max == UINT64_MAX ? 16384 : max) + 4096;
        for (uint64_t n = 0; n < max && inotifytools_next_events(0, 1); n++)
                ;
}

Watch *watch_free(Watch *w) {
        if (!w)
                return NULL;
        w->source = sd_event_source_disable_unref(w->source);
        w->more = sd_event_source_disable_unref(w->more);
        forget_buffered();
        inotifytools_cleanup();
        the_watch = NULL;
        free(w->slots);
        free(w);
        return NULL;
}
