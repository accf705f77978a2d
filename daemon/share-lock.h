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
 * owned by us; anything else under that name was planted and is removed
 * (the name is ours) before ours is created exclusively. Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define SHARE_LOCK_NAME       ".cachekeeper.lock"
#define SHARE_LOCK_BEAT_USEC  (30 * USEC_PER_SEC)
#define SHARE_LOCK_STALE_USEC (3 * SHARE_LOCK_BEAT_USEC)
#define SHARE_LOCK_HOST_MAX   256

/* Who holds a share (as its line says). */
typedef struct ShareHolder {
        char host[SHARE_LOCK_HOST_MAX];   /* "" when the line names nobody */
        pid_t pid;
        int64_t beat;                     /* unix seconds of its last beat */
        bool flock;                       /* it holds the flock (else: only its fresh line) */
} ShareHolder;

/* Takes the share lock in the share root root_fd at realtime now (usec)
 * and writes our line. Returns the lock file's fd (held until closed;
 * *ret_planted set when a planted file had to go first), -EBUSY when
 * another keeper holds it (*ret_holder says who), or -errno. */
int share_lock_take(int root_fd, usec_t now, ShareHolder *ret_holder, bool *ret_planted);

/* Our beat at realtime now, with fd from share_lock_take on root_fd: checks
 * that the file is still the one in the root and its line still ours, then
 * rewrites it. Returns 0; -ESTALE when the file was removed or replaced
 * (close fd and take the lock again); -EBUSY when another host's keeper
 * wrote its line over ours (*ret_holder: it; close fd and stand back); or
 * -errno. */
int share_lock_beat(int root_fd, int fd, usec_t now, ShareHolder *ret_holder);

/* Parses a lock file's line. Returns 0 or -EINVAL (nobody: *ret zeroed). */
int share_lock_parse(const char *line, ShareHolder *ret);
