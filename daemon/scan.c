/* SPDX-License-Identifier: MIT */
/* The walk. One frame per open directory on an explicit stack, each with its
 * own getdents64 buffer, so the walk can stop after any entry and resume. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "util.h"

#define DENTS_BUFFER 32768

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
        size_t pos, len;
        char *buf;
} Frame;

struct Scan {
        Account *account;
        const ScanCallbacks *cb;
        void *userdata;
        dev_t dev;
        uint32_t gen;
        DirId start;
        Frame stack[SCAN_DEPTH_MAX];
        size_t depth;
        ScanProgress progress;
};

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
        f->pos = f->len = 0;
        s->depth++;
        if ((dir = account_dir(s->account, d)))
                dir->scan_gen = s->gen;
        s->progress.dirs++;
        return 0;
}

static void pop(Scan *s) {
        close(s->stack[--s->depth].fd);
}

static int enter(Scan *s, Frame *f, const char *name) {
        struct stat st;
        DirId d;
        int fd, r;

        if (s->depth == SCAN_DEPTH_MAX) {
                s->progress.skipped++;
                return 0;
        }
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

static int file(Scan *s, Frame *f, const char *name) {
        struct statx stx;
        int r;

        if (statx(f->fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
                  STATX_TYPE | STATX_BLOCKS | STATX_MTIME, &stx) < 0)
                return 0;   /* vanished since getdents: an event will say so */
        if (S_ISDIR(stx.stx_mode))
                return enter(s, f, name);
        if (!S_ISREG(stx.stx_mode))
                return 0;   /* symlinks (ccache's locks), FIFOs, sockets: not counted */
        r = account_file_set(s->account, f->dir, name, stx.stx_blocks, stx.stx_mtime.tv_sec);
        if (r < 0)
                return r;
        s->progress.files++;
        s->progress.added += r == 1;
        s->progress.changed += r == 2;
        if (s->cb && s->cb->on_stats && strcmp(name, "stats") == 0) {
                const Dir *dir = account_dir(s->account, f->dir);
                if (dir && (dir->depth == 1 || dir->depth == 2))
                        s->cb->on_stats(f->dir, f->fd, s->userdata);
        }
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
        s->account = a;
        s->cb = cb;
        s->userdata = userdata;
        s->gen = gen;
        s->start = start;
        if (fstat(fd, &st) < 0)
                return -errno;
        s->dev = st.st_dev;
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
        while (s->depth > 0 && budget > 0) {
                Frame *f = &s->stack[s->depth - 1];
                struct linux_dirent64 *de;
                int r = 0;

                if (f->pos >= f->len) {
                        ssize_t n = getdents64(f->fd, f->buf, DENTS_BUFFER);
                        if (n <= 0) {
                                if (n < 0)
                                        s->progress.errors++;
                                pop(s);
                                continue;
                        }
                        f->len = (size_t) n;
                        f->pos = 0;
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
                case DT_REG:
                case DT_UNKNOWN:
                        r = file(s, f, de->d_name);
                        break;
                default:
                        break;  /* symlinks, FIFOs, sockets, devices */
                }
                if (r < 0)
                        return r;
        }
        return s->depth > 0;
}

const ScanProgress *scan_progress(const Scan *s) {
        return &s->progress;
}

uint32_t scan_gen(const Scan *s) {
        return s->gen;
}

DirId scan_start(const Scan *s) {
        return s->start;
}

Scan *scan_free(Scan *s) {
        if (!s)
                return NULL;
        while (s->depth > 0)
                pop(s);
        for (size_t i = 0; i < SCAN_DEPTH_MAX; i++)
                free(s->stack[i].buf);
        free(s);
        return NULL;
}
