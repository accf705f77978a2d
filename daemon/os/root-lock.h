/* SPDX-License-Identifier: MIT */
/* One daemon per cache root: each cache root a daemon keeps has a lock file
 * in the state directory, "root-<16 hex digits>.lock" (a hash of the
 * normalised path, so any path fits in a file name), held with
 * flock(LOCK_EX) for as long as the daemon keeps the cache and released by
 * the kernel when it exits, however it exits. The file holds the holder's
 * pid and the root's path, for the next daemon's message and for people.
 * Lock files are 0600 (another user who could open one could hold it, and
 * keep every daemon off that root). One held by no process of root's (a
 * daemon is always root's) is another user's, and is replaced; one of a
 * root no longer kept is removed by root_lock_sweep, under its own lock.
 * A taker checks, once it holds the lock, that the file it locked is still
 * the one named so (else it was removed meanwhile: it takes the new one),
 * so a removal never leaves two daemons each holding "the" lock. */
#pragma once

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define ROOT_LOCK_NAME_MAX 32

/* The lock file's name for cache root path, into buf (at least
 * ROOT_LOCK_NAME_MAX bytes). Returns buf. */
char *root_lock_name(const char *path, char *buf, size_t len);

/* Takes the lock of cache root path in state directory dirfd without
 * waiting, and writes our pid and path into it. Returns the lock's fd (the
 * lock is held until it is closed), -EBUSY when another daemon holds it
 * (*ret_holder: the pid written there, 0 if none is yet), or -errno. */
int root_lock_take(int dirfd, const char *path, pid_t *ret_holder);

/* Removes the lock files in dirfd ("root-<16 hex>.lock", regular, root's)
 * whose name is not among the n_keep in keep (root_lock_name's), each only
 * while holding its lock: one another daemon holds is left. Never follows a
 * symlink. Returns how many went, or -errno if dirfd cannot be listed. */
int root_lock_sweep(int dirfd, char (*keep)[ROOT_LOCK_NAME_MAX], size_t n_keep);

/* Who on this host holds a flock on the file st describes, as /proc/locks
 * tells (the pid that took each lock): 1 a process of root's, 0 only other
 * users' processes, -ESRCH none listed here (released since, or a lock
 * another host holds on a network filesystem), or -errno. */
int flock_holders(const struct stat *st);
