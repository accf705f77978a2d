/* SPDX-License-Identifier: MIT */
/* Moving one ccache entry from a directory of one cache into the directory
 * of the same name in another (cachectl merge): re-checked first as before
 * an eviction (daemon/README.md §4: a regular file on the source's
 * filesystem, the size and mtime the account says, never a symlink), then
 * on one filesystem renamed with RENAME_NOREPLACE, across filesystems
 * copied into one of ccache's temporaries beside the destination, its mtime
 * kept, renamed into place with RENAME_NOREPLACE and only then the source
 * unlinked (re-checked once more). An entry the destination already has is
 * never overwritten: the newer mtime of the two stays on it, and the
 * source's copy goes. At every moment each name holds a whole entry or
 * nothing; a kill leaves at worst the entry in both caches (the next run
 * drops the source's copy) or a stale temporary (ccache/README.md §1).
 * I/O relative to directory fds only; never follows a symlink; non-logging. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum MoveOutcome {
        MOVE_RENAMED,          /* same filesystem: renamed into the destination */
        MOVE_COPIED,           /* across: copied, renamed into place, source unlinked */
        MOVE_KEPT_DEST,        /* the destination had it: the source's copy went */
        MOVE_CHANGED,          /* the source is not what the account says (gone, another kind of
                                * file, another size or mtime, changed while copied): left alone */
        MOVE_SOURCE_STAYED,    /* in the destination now, but the source changed (a hit) before
                                * its unlink: it stays too, and the next run drops it */
} MoveOutcome;

typedef struct MoveResult {
        MoveOutcome outcome;
        /* The destination's file after the move (every outcome but
         * MOVE_CHANGED): its figures for the destination's account. */
        uint64_t blocks, ino, nlink;
        int64_t mtime;
        bool source_gone;       /* the source's name was unlinked or renamed away */
        uint64_t copied_bytes;  /* read and written (MOVE_COPIED) */
} MoveResult;

/* What the source must still be: on device dev, blocks 512-byte blocks,
 * mtime seconds. */
typedef struct MoveExpect {
        dev_t dev;
        uint64_t blocks;
        int64_t mtime;
} MoveExpect;

/* Moves entry name from directory from_fd into directory to_fd (on device
 * to_dev) as the header says. Returns 0 (*ret says what happened) or
 * -errno for an I/O error (nothing half-done is left under name; a
 * temporary may be left after a failure to remove it). */
int move_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect,
               MoveResult *ret);
