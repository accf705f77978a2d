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
 * two mtimes; the source's copy goes. Something else than a regular file
 * there (planted): nothing is done. */
static int keep_dest(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *e,
                     struct statx *dst, MoveResult *ret) {
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
        return drop_source(from_fd, name, e, MOVE_KEPT_DEST, ret);
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
                        return keep_dest(from_fd, to_fd, to_dev, name, e, &stx, ret);
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

/* Copies size bytes of in to out. Returns 0, -errno, or -ESTALE when in
 * ended early (truncated meanwhile). */
static int copy_bytes(int in, int out, uint64_t size, uint64_t *copied) {
        off_t off = 0;

        while ((uint64_t) off < size) {
                size_t chunk = size - (uint64_t) off > (1u << 30) ? (1u << 30) : (size_t) (size - (uint64_t) off);
                ssize_t n = sendfile(out, in, &off, chunk);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ESTALE;
                *copied += (uint64_t) n;
        }
        return 0;
}

static int copy_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *e, MoveResult *ret) {
        _cleanup_close_ int in = -1, out = -1;
        char tmp[NAME_MAX + 1];
        struct statx stx, after;
        int r;

        /* The destination first: an entry it has is never read again. */
        if (look(to_fd, name, &stx) == 0)
                return keep_dest(from_fd, to_fd, to_dev, name, e, &stx, ret);
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
        if (strlen(name) + 16 > sizeof(tmp))
                return -ENAMETOOLONG;
        out = ccache_tmpfile(to_fd, name, stx.stx_mode & 0666, tmp, sizeof(tmp));
        if (out < 0)
                return out;
        r = copy_bytes(in, out, stx.stx_size, &ret->copied_bytes);
        /* Changed while copied (a hit moved its mtime, a rewrite its size):
         * this copy is not the entry that was checked. */
        if (r == 0 && (statx(in, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK, &after) < 0 ||
                       after.stx_size != stx.stx_size || after.stx_mtime.tv_sec != stx.stx_mtime.tv_sec ||
                       after.stx_mtime.tv_nsec != stx.stx_mtime.tv_nsec))
                r = -ESTALE;
        /* Its owner and mode, as the rename would have kept them: ccache's
         * hit refreshes an entry's mtime with utimensat(NULL), which its
         * owner or a writer may do, not another user's ccache on a file of
         * root's. No set-id or sticky bit is carried. */
        if (r == 0 && (fchown(out, stx.stx_uid, stx.stx_gid) < 0 || fchmod(out, stx.stx_mode & 0777) < 0))
                r = -errno;
        if (r == 0 && futimens(out, (struct timespec[2]) {
                            { .tv_sec = stx.stx_atime.tv_sec, .tv_nsec = stx.stx_atime.tv_nsec },
                            { .tv_sec = stx.stx_mtime.tv_sec, .tv_nsec = stx.stx_mtime.tv_nsec } }) < 0)
                r = -errno;
        if (r == 0 && renameat2(to_fd, tmp, to_fd, name, RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(to_fd, tmp, 0);
                if (r == -ESTALE) {
                        ret->outcome = MOVE_CHANGED;
                        return 0;
                }
                if (r == -EEXIST && look(to_fd, name, &stx) == 0)   /* written there meanwhile */
                        return keep_dest(from_fd, to_fd, to_dev, name, e, &stx, ret);
                return r;
        }
        if (statx(out, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, MOVE_STATX_MASK, &after) < 0)
                return -errno;
        fill(ret, &after);
        return drop_source(from_fd, name, e, MOVE_COPIED, ret);
}

int move_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect, MoveResult *ret) {
        *ret = (MoveResult) { 0 };
        if (expect->dev == to_dev)
                return rename_entry(from_fd, to_fd, to_dev, name, expect, ret);
        return copy_entry(from_fd, to_fd, to_dev, name, expect, ret);
}
