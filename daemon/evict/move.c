/* SPDX-License-Identifier: MIT */
/* One entry moved between two caches (move.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/util.h"
#include "ccache/ccache-lock.h"
#include "evict/evict.h"
#include "evict/move.h"

#define MOVE_STATX_MASK (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_ATIME | STATX_MTIME | STATX_BLOCKS | STATX_INO | STATX_NLINK | STATX_SIZE)

static dev_t stx_dev(const struct statx *stx) {
        return makedev(stx->stx_dev_major, stx->stx_dev_minor);
}

/* The source is still what the account says: a regular file on its
 * device, its size and mtime. */
static bool as_expected(const struct statx *stx, const MoveExpect *e) {
        return S_ISREG(stx->stx_mode) && stx_dev(stx) == e->dev && stx->stx_blocks == e->blocks &&
               stx->stx_mtime.tv_sec == e->mtime;
}

/* Looks at name in dirfd without following anything. Returns 0, -ENOENT, or -errno. */
static int look(int dirfd, const char *name, struct statx *ret) {
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK,
                  ret) < 0)
                return -errno;
        return 0;
}

static void fill(MoveResult *ret, const struct statx *stx) {
        ret->blocks = stx->stx_blocks;
        ret->ino = stx->stx_ino;
        ret->nlink = stx->stx_nlink;
        ret->mtime = stx->stx_mtime.tv_sec;
}

/* The source's copy goes, re-checked as before an eviction; outcome is what
 * the destination's side was. */
static int drop_source(int from_fd, const char *name, const MoveExpect *e, MoveOutcome outcome, MoveResult *ret) {
        int r = evict_unlink_clock(from_fd, name, e->dev, e->mtime, e->blocks, false, NULL);

        if (r < 0)
                return r;
        ret->source_gone = r > 0;
        ret->outcome = r > 0 ? outcome : MOVE_SOURCE_STAYED;
        return 0;
}

/* The destination has name already (dst): it stays, with the newer of the
 * two mtimes; the source's copy goes on commit. Something else than a
 * regular file there (planted): nothing is done. */
static int keep_dest(int to_fd, dev_t to_dev, const char *name, const MoveExpect *e, struct statx *dst,
                     MoveResult *ret) {
        if (!S_ISREG(dst->stx_mode) || stx_dev(dst) != to_dev) {
                ret->outcome = MOVE_CHANGED;
                return 0;
        }
        if (dst->stx_mtime.tv_sec < e->mtime) {
                /* AT_SYMLINK_NOFOLLOW: were it swapped for a symlink since,
                 * the link's own time is what changes, nothing it names. */
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = e->mtime } };

                if (utimensat(to_fd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                dst->stx_mtime.tv_sec = e->mtime;
                dst->stx_mtime.tv_nsec = 0;
        }
        fill(ret, dst);
        ret->outcome = MOVE_KEPT_DEST;
        return 0;
}

static int rename_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *e,
                        MoveResult *ret) {
        struct statx stx;
        int r;

        if (look(from_fd, name, &stx) < 0 || !as_expected(&stx, e)) {
                ret->outcome = MOVE_CHANGED;
                return 0;
        }
        if (renameat2(from_fd, name, to_fd, name, RENAME_NOREPLACE) < 0) {
                if (errno == EEXIST && look(to_fd, name, &stx) == 0)
                        return keep_dest(to_fd, to_dev, name, e, &stx, ret);
                if (errno == ENOENT) {
                        ret->outcome = MOVE_CHANGED;
                        return 0;
                }
                return -errno;
        }
        /* The name is a name: swapped between the look and the rename, what
         * went is whatever a user put at it in the source's directory. Not a
         * regular file of this filesystem: it goes back where it was. */
        r = look(to_fd, name, &stx);
        if (r < 0 || !S_ISREG(stx.stx_mode) || stx_dev(&stx) != to_dev) {
                /* Back; or, should a name be planted there meanwhile, what
                 * the user planted goes (unlinkat follows nothing). */
                if (renameat2(to_fd, name, from_fd, name, RENAME_NOREPLACE) < 0 && r == 0)
                        (void) unlinkat(to_fd, name, S_ISDIR(stx.stx_mode) ? AT_REMOVEDIR : 0);
                ret->outcome = MOVE_CHANGED;
                return 0;
        }
        fill(ret, &stx);
        ret->source_gone = true;
        ret->outcome = MOVE_RENAMED;
        return 0;
}

/* Begins copying name: the destination first (an entry it has is never
 * read again), then the source opened and checked, then the temporary. */
static int copy_begin(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *e, MoveCopy *c,
                      MoveResult *ret) {
        _cleanup_close_ int in = -1, out = -1, dir = -1;
        struct statx stx;

        if (look(to_fd, name, &stx) == 0)
                return keep_dest(to_fd, to_dev, name, e, &stx, ret);
        if (strlen(name) + 16 > sizeof(c->tmp))
                return -ENAMETOOLONG;
        /* O_NOFOLLOW: a symlink fails (ELOOP); O_NONBLOCK: a FIFO opens
         * without waiting, and is refused below, unread. */
        in = openat(from_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (in < 0) {
                if (errno == ENOENT || errno == ELOOP || errno == ENXIO || errno == EACCES || errno == EPERM) {
                        ret->outcome = MOVE_CHANGED;
                        return 0;
                }
                return -errno;
        }
        /* What was opened is checked, not the name: no race between the two. */
        if (statx(in, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK, &stx) < 0)
                return -errno;
        if (!as_expected(&stx, e)) {
                ret->outcome = MOVE_CHANGED;
                return 0;
        }
        /* Its size, not its blocks, is what a copy reads and writes: beyond
         * the blocks (a sparse file) it is no entry ccache wrote. */
        if (stx.stx_size > stx.stx_blocks * 512 + MOVE_SLACK_BYTES) {
                ret->outcome = MOVE_SPARSE;
                ret->size = stx.stx_size;
                return 0;
        }
        dir = fcntl(to_fd, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return -errno;
        out = ccache_tmpfile(to_fd, name, stx.stx_mode & 0666, c->tmp, sizeof(c->tmp));
        if (out < 0)
                return out;
        c->in = TAKE_FD(in);
        c->out = TAKE_FD(out);
        c->dir_fd = TAKE_FD(dir);
        c->off = 0;
        c->size = stx.stx_size;
        c->src = stx;
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->busy = true;
        return 1;
}

int move_place(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect, MoveCopy *copy,
               MoveResult *ret) {
        *ret = (MoveResult) { 0 };
        if (expect->dev == to_dev)
                return rename_entry(from_fd, to_fd, to_dev, name, expect, ret);
        return copy_begin(from_fd, to_fd, to_dev, name, expect, copy, ret);
}

int move_copy_step(MoveCopy *c, uint64_t budget, uint64_t *copied) {
        off_t off = (off_t) c->off;
        uint64_t end = c->size - c->off > budget ? c->off + (budget ? budget : 1) : c->size;

        while ((uint64_t) off < end) {
                size_t chunk = end - (uint64_t) off > (1u << 20) ? (1u << 20) : (size_t) (end - (uint64_t) off);
                ssize_t n = sendfile(c->out, c->in, &off, chunk);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        c->off = (uint64_t) off;
                        return -errno;
                }
                if (n == 0)
                        return -ESTALE;
                *copied += (uint64_t) n;
        }
        c->off = (uint64_t) off;
        return c->off < c->size;
}

/* Closes what *c holds and leaves it idle. */
static void copy_close(MoveCopy *c) {
        int fds[3] = { c->in, c->out, c->dir_fd };

        if (!c->busy)
                return;
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        *c = (MoveCopy) { 0 };
}

void move_copy_abort(MoveCopy *c) {
        if (!c->busy)
                return;
        (void) unlinkat(c->dir_fd, c->tmp, 0);
        copy_close(c);
}

int move_copy_finish(MoveCopy *c, dev_t to_dev, MoveResult *ret) {
        const struct statx *src = &c->src;
        struct statx after;
        int r = 0;

        /* Changed while copied (a hit moved its mtime, a rewrite its size):
         * this copy is not the entry that was checked. */
        if (statx(c->in, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK, &after) < 0 ||
            after.stx_size != src->stx_size || after.stx_mtime.tv_sec != src->stx_mtime.tv_sec ||
            after.stx_mtime.tv_nsec != src->stx_mtime.tv_nsec)
                r = -ESTALE;
        /* Its owner and mode, as the rename would have kept them: ccache's
         * hit refreshes an entry's mtime with utimensat(NULL), which its
         * owner or a writer may do, not another user's ccache on a file of
         * root's. No set-id or sticky bit is carried. */
        if (r == 0 && (fchown(c->out, src->stx_uid, src->stx_gid) < 0 || fchmod(c->out, src->stx_mode & 0777) < 0))
                r = -errno;
        if (r == 0 && futimens(c->out, (struct timespec[2]) {
                            { .tv_sec = src->stx_atime.tv_sec, .tv_nsec = src->stx_atime.tv_nsec },
                            { .tv_sec = src->stx_mtime.tv_sec, .tv_nsec = src->stx_mtime.tv_nsec } }) < 0)
                r = -errno;
        if (r == 0 && renameat2(c->dir_fd, c->tmp, c->dir_fd, c->name, RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0) {
                MoveExpect e = { .dev = stx_dev(src), .blocks = src->stx_blocks, .mtime = src->stx_mtime.tv_sec };
                struct statx dst;

                (void) unlinkat(c->dir_fd, c->tmp, 0);
                if (r == -ESTALE) {
                        ret->outcome = MOVE_CHANGED;
                        r = 0;
                } else if (r == -EEXIST && look(c->dir_fd, c->name, &dst) == 0)   /* written there meanwhile */
                        r = keep_dest(c->dir_fd, to_dev, c->name, &e, &dst, ret);
                copy_close(c);
                return r;
        }
        r = statx(c->out, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK, &after) < 0 ? -errno : 0;
        if (r == 0) {
                fill(ret, &after);
                ret->outcome = MOVE_COPIED;
        }
        copy_close(c);
        return r;
}

int move_commit(int from_fd, const char *name, const MoveExpect *e, MoveResult *ret) {
        if (ret->outcome != MOVE_COPIED && ret->outcome != MOVE_KEPT_DEST)
                return 0;
        return drop_source(from_fd, name, e, ret->outcome, ret);
}

int move_undo(int from_fd, int to_fd, const char *name, MoveResult *ret) {
        struct statx stx;

        switch (ret->outcome) {
        case MOVE_RENAMED:
                if (renameat2(to_fd, name, from_fd, name, RENAME_NOREPLACE) == 0)
                        break;
                if (errno != EEXIST)
                        return errno == ENOENT ? 0 : -errno;
                __attribute__((fallthrough));
        case MOVE_COPIED:
                /* Ours (its inode), else whatever is there now is not. */
                if (look(to_fd, name, &stx) < 0 || stx.stx_ino != ret->ino || !S_ISREG(stx.stx_mode))
                        return 0;
                if (unlinkat(to_fd, name, 0) < 0)
                        return errno == ENOENT ? 0 : -errno;
                break;
        case MOVE_KEPT_DEST:
                break;
        default:
                return 0;
        }
        ret->outcome = MOVE_UNDONE;
        ret->source_gone = false;
        return 0;
}

int move_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect, MoveResult *ret) {
        MoveCopy c = { 0 };
        int r = move_place(from_fd, to_fd, to_dev, name, expect, &c, ret);

        while (r == 1)
                r = move_copy_step(&c, UINT64_MAX, &ret->copied_bytes);
        if (move_copy_busy(&c)) {
                if (r == 0)
                        r = move_copy_finish(&c, to_dev, ret);
                else {
                        move_copy_abort(&c);
                        if (r == -ESTALE) {
                                ret->outcome = MOVE_CHANGED;
                                r = 0;
                        }
                }
        }
        if (r < 0)
                return r;
        return move_commit(from_fd, name, expect, ret);
}
