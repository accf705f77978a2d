/* SPDX-License-Identifier: MIT */
/* The walk. One frame per open directory on an explicit stack, each with its
 * own getdents64 buffer, so the walk can stop after any entry and resume.
 * The stack holds SCAN_DEPTH_MAX frames: a directory below that is noted and
 * walked once the stack is empty, opened again from the start directory
 * (beneath it, through no symlink), so no tree is too deep to be counted.
 * The regular files of each buffer are statx'ed as one batch, shared with a
 * helper thread when there are many: both claim the next run of names from
 * one counter, and the caller's thread applies each result to the Account, in
 * the buffer's order, as soon as it is there, claiming more names meanwhile;
 * so the helper stats while the caller inserts, and a helper the scheduler
 * keeps waiting costs nothing but its share. The Account is touched by the
 * caller's thread only, within the same step, so to the event loop a batch is
 * as atomic as a single file was. The helper also reads the directory's next
 * buffer (getdents64 into the frame's spare one) while the batch is stat'ed:
 * listing a directory costs the caller nothing but its first buffer. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "ccache/ccache.h"
#include "os/beneath.h"
#include "tree/scan.h"

#define DENTS_BUFFER 32768
#define BATCH_MAX (DENTS_BUFFER / 24 + 1)   /* a dirent is at least 24 bytes */
#define PARALLEL_MIN 64                     /* files in a batch before the helper is worth waking */
/* Names claimed at a time: runs of neighbours, so that the two threads share
 * a cache line of the batch (the counter, the results) once a run, not once
 * a name (measured: claims of one name cost more than they saved). */
#define CLAIM 32
#define PATH_CHUNK 2048                     /* a deep path is opened this many characters at a time */
#define DEEP_PATH_MAX (1u << 20)            /* deeper paths than this are not walked (errors) */

struct linux_dirent64 {
        ino64_t d_ino;
        off64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

typedef struct Frame {
        int fd;
        DirId dir;
        uint32_t gen;            /* dir's gen: an event may forget dir meanwhile */
        size_t pos, len;
        char *buf;
        char *spare;             /* the next buffer, read ahead by the helper ... */
        ssize_t spare_len;       /* ... getdents64's return (0: the end, -errno) */
        bool spare_read;         /* ... when set */
} Frame;

typedef struct Stat {
        uint64_t blocks, ino, nlink;
        int64_t mtime, atime;
        uint16_t mode;
        bool ok;
        bool touched;            /* set by utimensat(NULL) after its birth: ccache_hit_times, mtime <= atime */
        bool read;               /* atime > mtime: read since it was written */
} Stat;

static bool ts_after(const struct statx_timestamp *a, const struct statx_timestamp *b) {
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

static void stat_from(const struct statx *stx, Stat *out) {
        *out = (Stat) {
                .blocks = stx->stx_blocks, .ino = stx->stx_ino, .nlink = stx->stx_nlink,
                .mtime = stx->stx_mtime.tv_sec, .atime = stx->stx_atime.tv_sec, .mode = stx->stx_mode, .ok = true,
                /* utimensat(NULL) sets all three to one instant (ctime
                 * perhaps a tick later: ccache_hit_times); a read may
                 * move atime on since. A write leaves mtime == ctime too
                 * (ccache 4.7 writes a share's entries in place), with
                 * coarse timestamps even atime: only mtime two seconds or more
                 * after the birth, atime not before it, tells a touch
                 * (where the filesystem tells the birth: not NFS). */
                .touched = (stx->stx_mask & STATX_BTIME) && stx->stx_mtime.tv_sec >= stx->stx_btime.tv_sec + 2 &&
                           !ts_after(&stx->stx_mtime, &stx->stx_atime) &&
                           ccache_hit_times(&stx->stx_mtime, &stx->stx_ctime, ccache_clock_tick_nsec()),
                .read = ts_after(&stx->stx_atime, &stx->stx_mtime),
        };
}

/* A second thread that only ever calls statx on names of the batch it is
 * handed, claimed one at a time from next (shared with the caller). */
typedef struct Helper {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t go, done;
        int dirfd;
        const char *const *names;
        Stat *out;
        bool *ready;             /* out[] of run r is whole: stored last (release), by the thread that claimed it */
        size_t n;
        size_t next;             /* the next name to claim (CLAIM at a time): __atomic_fetch_add by both threads */
        Frame *ahead;            /* a frame whose next buffer to read first, or NULL */
        bool busy;               /* a batch is handed over ... */
        bool taken;              /* ... and the helper is on it (else the caller may take it back) */
        bool quit, running;
} Helper;

struct Scan {
        Account *account;
        const ScanCallbacks *cb;
        void *userdata;
        dev_t dev;
        uint32_t gen;
        DirId start;
        uint64_t released;       /* account_dirs_released() when the frames were last checked */
        int start_fd;            /* the start directory, to open deep ones from */
        Frame stack[SCAN_DEPTH_MAX];
        struct { DirId dir; uint32_t gen; } *deep;   /* below the stack's reach, to walk later */
        size_t n_deep, deep_cap;
        size_t depth;
        ScanProgress progress;
        const char *names[BATCH_MAX];
        Stat stats[BATCH_MAX];
        bool ready[BATCH_MAX / CLAIM + 1];
        Helper helper;
};

static void stat_name(int dirfd, const char *name, Stat *out) {
        struct statx stx;

        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, SCAN_STATX_MASK, &stx) ==
            0)
                stat_from(&stx, out);
        else
                out->ok = false;
}

/* Claims and stats the next run of names of h's batch; false if none was left. */
static bool stat_claim(Helper *h) {
        size_t first = __atomic_fetch_add(&h->next, CLAIM, __ATOMIC_RELAXED);

        if (first >= h->n)
                return false;
        for (size_t i = first; i < first + CLAIM && i < h->n; i++)
                stat_name(h->dirfd, h->names[i], &h->out[i]);
        __atomic_store_n(&h->ready[first / CLAIM], true, __ATOMIC_RELEASE);
        return true;
}

static void *helper_main(void *userdata) {
        Helper *h = userdata;
        sigset_t all;

        /* Signals are the event loop's (signalfd): never delivered here. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        pthread_mutex_lock(&h->lock);
        for (;;) {
                while (!h->busy && !h->quit)
                        pthread_cond_wait(&h->go, &h->lock);
                if (h->quit)
                        break;
                h->taken = true;
                pthread_mutex_unlock(&h->lock);
                if (h->ahead) {
                        ssize_t n = getdents64(h->ahead->fd, h->ahead->spare, DENTS_BUFFER);
                        h->ahead->spare_len = n < 0 ? -errno : n;
                        h->ahead->spare_read = true;
                }
                while (stat_claim(h))
                        ;
                pthread_mutex_lock(&h->lock);
                h->busy = h->taken = false;
                pthread_cond_signal(&h->done);
        }
        pthread_mutex_unlock(&h->lock);
        return NULL;
}

static bool helper_start(Helper *h) {
        if (h->running)
                return true;
        if (pthread_mutex_init(&h->lock, NULL) != 0)
                return false;
        pthread_cond_init(&h->go, NULL);
        pthread_cond_init(&h->done, NULL);
        h->running = pthread_create(&h->thread, NULL, helper_main, h) == 0;
        if (!h->running) {
                pthread_cond_destroy(&h->go);
                pthread_cond_destroy(&h->done);
                pthread_mutex_destroy(&h->lock);
        }
        return h->running;
}

static void helper_stop(Helper *h) {
        if (!h->running)
                return;
        pthread_mutex_lock(&h->lock);
        h->quit = true;
        pthread_cond_signal(&h->go);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
        pthread_cond_destroy(&h->go);
        pthread_cond_destroy(&h->done);
        pthread_mutex_destroy(&h->lock);
        h->running = false;
}

/* Hands the batch names[0..n) of f's buffer to the helper (woken when there
 * are enough names for it to pay; the caller claims from the same batch),
 * and f's next buffer to read (when f->spare could be had). */
static void batch_begin(Scan *s, Frame *f, size_t n) {
        Helper *h = &s->helper;
        bool wake = n >= PARALLEL_MIN && helper_start(h);
        int dirfd = f->fd;

        memset(s->ready, 0, sizeof(s->ready));
        if (wake)
                pthread_mutex_lock(&h->lock);
        h->dirfd = dirfd;
        h->names = s->names;
        h->out = s->stats;
        h->ready = s->ready;
        h->n = n;
        h->next = 0;
        h->ahead = NULL;
        if (wake && (f->spare || (f->spare = malloc(DENTS_BUFFER))))
                h->ahead = f;
        if (wake) {
                h->busy = true;
                pthread_cond_signal(&h->go);
                pthread_mutex_unlock(&h->lock);
        }
}

/* Waits until the helper has let go of the batch (claims nothing more); one
 * not woken yet (the scheduler's delay) is not waited for: the batch is
 * taken back. */
static void batch_end(Scan *s) {
        Helper *h = &s->helper;

        if (!h->running)
                return;
        pthread_mutex_lock(&h->lock);
        if (!h->taken)
                h->busy = false;
        while (h->busy)
                pthread_cond_wait(&h->done, &h->lock);
        pthread_mutex_unlock(&h->lock);
}

/* The stat of name i of the batch: stats names meanwhile; waits for the
 * helper only when it has the last ones in hand. */
static const Stat *batch_get(Scan *s, size_t i) {
        while (!__atomic_load_n(&s->ready[i / CLAIM], __ATOMIC_ACQUIRE))
                if (!stat_claim(&s->helper))
                        batch_end(s);   /* i is the helper's, in flight: it is done when the helper is */
        return &s->stats[i];
}

/* Pushes directory d open as fd; takes ownership of fd. */
static int push(Scan *s, DirId d, int fd) {
        Frame *f = &s->stack[s->depth];
        Dir *dir;

        if (s->cb && s->cb->on_dir && s->cb->on_dir(d, fd, s->userdata) < 0) {
                close(fd);
                s->progress.skipped++;
                return 0;
        }
        if (!f->buf && !(f->buf = malloc(DENTS_BUFFER))) {
                close(fd);
                return -ENOMEM;
        }
        f->fd = fd;
        f->dir = d;
        f->gen = 0;
        f->pos = f->len = 0;
        f->spare_read = false;
        s->depth++;
        if ((dir = account_dir(s->account, d))) {
                dir->scan_gen = s->gen;
                f->gen = dir->gen;
        }
        s->progress.dirs++;
        return 0;
}

static void pop(Scan *s) {
        close(s->stack[--s->depth].fd);
}

/* Between two steps, events may have made the account forget directories
 * the stack holds (deleted, or renamed: the new name has a scan of its own
 * queued). Their frames, and those above them (their subdirectories), go. */
static void drop_forgotten(Scan *s) {
        uint64_t released = account_dirs_released(s->account);

        if (released == s->released)
                return;
        s->released = released;
        for (size_t i = 0; i < s->depth; i++)
                if (!account_dir_check(s->account, s->stack[i].dir, s->stack[i].gen)) {
                        s->progress.dropped += s->depth - i;
                        while (s->depth > i)
                                pop(s);
                        return;
                }
}

/* Notes subdirectory name of f, which the full stack cannot enter now. */
static int defer_deep(Scan *s, Frame *f, const char *name) {
        DirId d;
        int r;

        if (s->n_deep == s->deep_cap) {
                size_t cap = s->deep_cap ? 2 * s->deep_cap : 16;
                void *n = realloc(s->deep, cap * sizeof(*s->deep));
                if (!n)
                        return -ENOMEM;
                s->deep = n;
                s->deep_cap = cap;
        }
        r = account_dir_add(s->account, f->dir, name, &d);
        if (r < 0)
                return r;
        s->deep[s->n_deep].dir = d;
        s->deep[s->n_deep++].gen = account_dir(s->account, d)->gen;
        return 0;
}

/* Opens rel below base_fd, beneath it and through no symlink, in pieces when
 * it is longer than the kernel takes at once. rel is modified and restored. */
static int open_below(int base_fd, char *rel) {
        int fd = base_fd, owned = -1;

        while (strlen(rel) > PATH_CHUNK) {
                char *cut = rel + PATH_CHUNK;

                while (cut > rel && *cut != '/')
                        cut--;
                if (cut == rel)
                        break;   /* cannot happen: a name is at most 255 bytes */
                *cut = '\0';
                fd = beneath_open_dir(fd, rel);
                *cut = '/';
                if (owned >= 0)
                        close(owned);
                if (fd < 0)
                        return fd;
                owned = fd;
                rel = cut + 1;
        }
        fd = beneath_open_dir(fd, rel);
        if (owned >= 0)
                close(owned);
        return fd;
}

/* Opens directory d (below the start) from the start directory. */
static int open_deep(Scan *s, DirId d) {
        _cleanup_free_ char *rel = NULL;
        struct stat st;
        size_t len = 4096;
        int fd, r;

        for (;;) {
                free(rel);
                if (!(rel = malloc(len)))
                        return -ENOMEM;
                r = account_dir_relpath(s->account, s->start, d, rel, len);
                if (r != -ENAMETOOLONG)
                        break;
                if ((len *= 2) > DEEP_PATH_MAX)
                        return r;
        }
        if (r < 0)
                return r;
        fd = open_below(s->start_fd, rel);
        if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != s->dev)) {
                close(fd);
                return -EXDEV;
        }
        return fd;
}

/* The stack is empty: walks the next deep directory still known. */
static int next_deep(Scan *s) {
        while (s->n_deep > 0 && s->depth == 0) {
                DirId d = s->deep[--s->n_deep].dir;
                int fd, r;

                if (!account_dir_check(s->account, d, s->deep[s->n_deep].gen))
                        continue;   /* forgotten meanwhile (deleted, renamed) */
                fd = open_deep(s, d);
                if (fd == -ENOMEM)
                        return fd;
                if (fd < 0) {
                        if (fd != -ENOENT && fd != -ENOTDIR)
                                s->progress.errors++;
                        continue;
                }
                s->progress.deep++;
                r = push(s, d, fd);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int enter(Scan *s, Frame *f, const char *name) {
        struct stat st;
        DirId d;
        int fd, r;

        if (s->depth == SCAN_DEPTH_MAX)
                return defer_deep(s, f, name);
        fd = openat(f->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                        s->progress.errors++;
                return 0;
        }
        if (fstat(fd, &st) < 0 || st.st_dev != s->dev) {
                close(fd);
                s->progress.skipped++;   /* a mount point inside the cache: not ours */
                return 0;
        }
        r = account_dir_add(s->account, f->dir, name, &d);
        if (r < 0) {
                close(fd);
                return r;
        }
        return push(s, d, fd);
}

static int add_file(Scan *s, Frame *f, const char *name, const Stat *st) {
        int r;

        /* Only a walk of the whole cache sees every name of an inode. */
        r = account_file_set_inode(s->account, f->dir, name, st->blocks, s->cb && s->cb->atime ? st->atime : st->mtime,
                                   st->ino, st->nlink, s->start != DIR_ROOT);
        if (r < 0)
                return r;
        s->progress.files++;
        /* The clock's evidence is the entries': never the keeper's lock
         * file (rewritten and read at each beat) nor anyone's other files. */
        if ((st->touched || st->read) && account_name_is_entry(s->account, f->dir, name)) {
                s->progress.touched += st->touched;
                s->progress.read += st->read;
        }
        s->progress.added += r == 1;
        s->progress.added_bytes += r == 1 ? st->blocks * 512 : 0;
        s->progress.changed += r == 2;
        if (s->cb && s->cb->on_stats && strcmp(name, "stats") == 0) {
                const Dir *dir = account_dir(s->account, f->dir);
                if (dir && (dir->depth == 1 || dir->depth == 2))
                        s->cb->on_stats(f->dir, f->fd, s->userdata);
        }
        return 0;
}

/* A name whose d_type said nothing: look at it alone. */
static int file(Scan *s, Frame *f, const char *name) {
        struct statx stx;

        if (statx(f->fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, SCAN_STATX_MASK, &stx) < 0)
                return 0;   /* vanished since getdents: an event will say so */
        if (S_ISDIR(stx.stx_mode))
                return enter(s, f, name);
        if (!S_ISREG(stx.stx_mode))
                return 0;   /* symlinks (ccache's locks), FIFOs, sockets: not counted */
        Stat st;
        stat_from(&stx, &st);
        return add_file(s, f, name, &st);
}

/* Accounts every regular file (by d_type) of the buffer just read. */
static int files_of_buffer(Scan *s, Frame *f) {
        size_t n = 0;

        for (size_t pos = 0; pos < f->len;) {
                struct linux_dirent64 *de = (struct linux_dirent64 *) (f->buf + pos);

                pos += de->d_reclen;
                if (de->d_type == DT_REG && n < BATCH_MAX)
                        s->names[n++] = de->d_name;
        }
        s->progress.batch = n;
        batch_begin(s, f, n);
        for (size_t i = 0; i < n; i++) {
                const Stat *st = batch_get(s, i);
                int r;

                if (!st->ok || !S_ISREG(st->mode))
                        continue;   /* vanished, or no longer a file: an event will say */
                r = add_file(s, f, s->names[i], st);
                if (r < 0) {
                        batch_end(s);   /* the helper may still hold names of the buffer */
                        return r;
                }
        }
        batch_end(s);
        return 0;
}

int scan_new(Account *a, DirId start, int fd, uint32_t gen, const ScanCallbacks *cb, void *userdata,
             Scan **ret) {
        _cleanup_(scan_freep) Scan *s = NULL;
        struct stat st;
        int copy, r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->start_fd = -1;
        s->account = a;
        s->cb = cb;
        s->userdata = userdata;
        s->gen = gen;
        s->start = start;
        if (fstat(fd, &st) < 0)
                return -errno;
        s->dev = st.st_dev;
        s->released = account_dirs_released(a);
        s->start_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (s->start_fd < 0)
                return -errno;
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        r = push(s, start, copy);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int scan_step(Scan *s, size_t budget) {
        while (budget > 0) {
                struct linux_dirent64 *de;
                Frame *f;
                int r = 0;

                drop_forgotten(s);
                if (s->depth == 0 && (r = next_deep(s)) < 0)
                        return r;
                if (s->depth == 0)
                        break;
                f = &s->stack[s->depth - 1];
                if (f->pos >= f->len) {
                        ssize_t n;

                        if (f->spare_read) {   /* read ahead by the helper */
                                char *buf = f->buf;

                                f->buf = f->spare;
                                f->spare = buf;
                                f->spare_read = false;
                                n = f->spare_len;
                                if (n < 0)
                                        errno = (int) -n;
                        } else
                                n = getdents64(f->fd, f->buf, DENTS_BUFFER);
                        if (n <= 0) {
                                if (n < 0)
                                        s->progress.errors++;
                                pop(s);
                                continue;
                        }
                        f->len = (size_t) n;
                        f->pos = 0;
                        r = files_of_buffer(s, f);
                        if (r < 0)
                                return r;
                        budget = budget > s->progress.batch ? budget - s->progress.batch : 1;
                }
                de = (struct linux_dirent64 *) (f->buf + f->pos);
                f->pos += de->d_reclen;
                budget--;
                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                switch (de->d_type) {
                case DT_DIR:
                        r = enter(s, f, de->d_name);
                        break;
                case DT_UNKNOWN:
                        r = file(s, f, de->d_name);
                        break;
                default:
                        break;  /* regular files: done with the buffer; symlinks, FIFOs, sockets, devices */
                }
                if (r < 0)
                        return r;
        }
        return s->depth > 0 || s->n_deep > 0;
}

const ScanProgress *scan_progress(const Scan *s) {
        return &s->progress;
}

uint32_t scan_gen(const Scan *s) {
        return s->gen;
}

Scan *scan_free(Scan *s) {
        if (!s)
                return NULL;
        helper_stop(&s->helper);
        while (s->depth > 0)
                pop(s);
        for (size_t i = 0; i < SCAN_DEPTH_MAX; i++) {
                free(s->stack[i].buf);
                free(s->stack[i].spare);
        }
        if (s->start_fd >= 0)
                close(s->start_fd);
        free(s->deep);
        free(s);
        return NULL;
}
