/* SPDX-License-Identifier: MIT */
/* A resumable walk of one subtree of a cache, relative to directory fds:
 * getdents64 + statx, never following symlinks, never leaving the starting
 * filesystem, tolerating files that vanish. Feeds an Account. Non-logging. */
#pragma once

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "tree/account.h"

/* Directories open at once (ccache uses 4 levels); deeper ones are walked
 * later, opened again from the start: every depth is counted. */
#define SCAN_DEPTH_MAX 16

/* What is asked of statx for a file: enough to count its inode once. */
#define SCAN_STATX_MASK (STATX_TYPE | STATX_BLOCKS | STATX_MTIME | STATX_INO | STATX_NLINK | STATX_ATIME | STATX_CTIME | \
                         STATX_BTIME)

typedef struct Scan Scan;

typedef struct ScanCallbacks {
        /* Directory d (fd borrowed, open for the call only) is about to be
         * listed. A negative return skips it. */
        int (*on_dir)(DirId d, int fd, void *userdata);
        /* A file named "stats" was found in d (depth 1 or 2): dirfd is d. */
        void (*on_stats)(DirId d, int dirfd, void *userdata);
        /* Each file's time in the account is its atime, not its mtime (a
         * file: remote whose readers leave mtime alone). */
        bool atime;
} ScanCallbacks;

typedef struct ScanProgress {
        uint64_t dirs, files;          /* listed so far */
        uint64_t added, changed;       /* files the account did not know, or knew otherwise */
        uint64_t added_bytes;          /* the blocks of those added, in bytes */
        uint64_t errors;               /* directories that could not be opened or read */
        uint64_t skipped;              /* other filesystems */
        uint64_t deep;                 /* directories walked from a path below SCAN_DEPTH_MAX */
        uint64_t dropped;              /* directories left half-listed: forgotten by the account meanwhile */
        uint64_t batch;                /* regular files in the last directory buffer read */
        /* How the entries' times move (a remote's clock; ccache's entries
         * only, account_name_is_entry): mtime equal to
         * ctime to the ns, atime not before them, and mtime two seconds or
         * more after the birth (set by utimensat(NULL) after the file was
         * written: a hit of a writer with update-mtime=true, or touch); and
         * atime after mtime (read since written: the filesystem updates
         * atime). */
        uint64_t touched, read;
} ScanProgress;

/* Prepares a walk of start (already in the account, fd = its directory,
 * duplicated) that stamps gen into the scan_gen of every directory it lists.
 * Directories on another device than fd's are not entered. Returns 0 or -errno. */
int scan_new(Account *a, DirId start, int fd, uint32_t gen, const ScanCallbacks *cb, void *userdata,
             Scan **ret);

/* Walks on for at most budget directory entries. Between two calls the
 * account may forget directories the walk is in (events: deleted, renamed):
 * the walk notices (Dir.gen) and leaves those subtrees. Returns 1 while there
 * is more to do, 0 when done, or -errno if the account ran out of memory. */
int scan_step(Scan *s, size_t budget);

const ScanProgress *scan_progress(const Scan *s);
uint32_t scan_gen(const Scan *s);

Scan *scan_free(Scan *s);
static inline void scan_freep(Scan **s) {
        scan_free(*s);
}
