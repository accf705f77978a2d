/* SPDX-License-Identifier: MIT */
/* One keeper per file: remote share, across hosts: a lock file in the
 * share's root, SHARE_LOCK_NAME, held with flock(LOCK_EX) and holding one
 * line, "cachekeeperd HOST PID UNIX-TIME", rewritten every
 * SHARE_LOCK_BEAT_USEC. The line is for network filesystems where flock is
 * not shared between hosts (NFS mounted with local_lock, some FUSE and SMB
 * setups): a keeper that gets the flock still stands back while the line
 * names another host and is fresh, and a keeper that finds its own line
 * replaced by another's yields at its next beat.
 *
 * The share is writable by every build user: the file is opened beneath the
 * root, never through a symlink, and must be a regular file with one link
 * owned by us; anything else under that name was planted and goes before
 * ours is created exclusively. What holds something (a directory, however
 * full, or another user's file) is moved aside into the quarantine, never
 * emptied or read; a name that holds nothing of its own (a symlink, a FIFO,
 * a socket, a device, one more link to a file) is removed (the name is
 * ours). Non-logging.
 *
 * The quarantine is SHARE_QUARANTINE_NAME in the share's root: a directory
 * of ours (owned by the daemon's user, mode 0700, on the share's
 * filesystem) holding at most SHARE_QUARANTINE_SLOTS slots named "0", "1",
 * ...: every user can see it and none can put anything in it, so its
 * names cannot be taken in advance. Anything found under its name that is
 * not ours is itself moved into a fresh one swapped in
 * (renameat2(RENAME_EXCHANGE)). Every rename is relative to the root's and
 * the quarantine's fds: nothing is followed and nothing leaves the share.
 * A directory planted while every slot is taken is not moved (-EMLINK):
 * the daemon never makes more names than the slots, and never deletes what
 * a user put there. With the sticky bit on the root (its mode, 1777 by
 * default), only the root's owner and root can remove our lock file to
 * plant again; others can plant once, before the first keeper. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"

#define SHARE_LOCK_NAME       ".cachekeeper.lock"
#define SHARE_LOCK_BEAT_USEC  (30 * USEC_PER_SEC)
#define SHARE_LOCK_STALE_USEC (3 * SHARE_LOCK_BEAT_USEC)
#define SHARE_LOCK_HOST_MAX   256
#define SHARE_QUARANTINE_NAME ".cachekeeper.quarantine"
#define SHARE_QUARANTINE_SLOTS 8

/* Who holds a share (as its line says). */
typedef struct ShareHolder {
        char host[SHARE_LOCK_HOST_MAX];   /* "" when the line names nobody */
        pid_t pid;
        int64_t beat;                     /* unix seconds of its last beat */
        bool flock;                       /* it holds the flock (else: only its fresh line) */
} ShareHolder;

/* What stood under SHARE_LOCK_NAME that was not ours, and where it went. */
typedef struct SharePlanted {
        bool found;                       /* something was planted there */
        mode_t mode;                      /* its st_mode (type and bits) */
        uid_t owner;
        /* Where it is now, relative to the root (".cachekeeper.quarantine/3");
         * "" when its name was removed (it held nothing of its own). */
        char aside[64];
} SharePlanted;

/* Takes the share lock in the share root root_fd at realtime now (usec)
 * and writes our line. Returns the lock file's fd (held until closed;
 * ret_planted->found set when something planted had to go first),
 * -EBUSY when another keeper holds it (*ret_holder says who), -EMLINK when
 * a directory is planted there and the quarantine is full
 * (ret_planted says what), or -errno. */
int share_lock_take(int root_fd, usec_t now, ShareHolder *ret_holder, SharePlanted *ret_planted);

/* Moves name (in root_fd, the share's root) into a free slot of the
 * quarantine (made, or taken back from a squatter, as above). Returns the
 * slot, with its path relative to the root in aside (len bytes), -EMLINK
 * when every slot is taken, -ENOENT when name is gone, or -errno. */
int share_quarantine(int root_fd, const char *name, char *aside, size_t len);

/* Our beat at realtime now, with fd from share_lock_take on root_fd: checks
 * that the file is still the one in the root and its line still ours, then
 * rewrites it. Returns 0; -ESTALE when the file was removed or replaced
 * (close fd and take the lock again); -EBUSY when another host's keeper
 * wrote its line over ours (*ret_holder: it; close fd and stand back); or
 * -errno. */
int share_lock_beat(int root_fd, int fd, usec_t now, ShareHolder *ret_holder);

/* Parses a lock file's line. Returns 0 or -EINVAL (nobody: *ret zeroed). */
int share_lock_parse(const char *line, ShareHolder *ret);
