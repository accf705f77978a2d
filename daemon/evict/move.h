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
 *
 * A copy never reads more than the source's allocated blocks plus
 * MOVE_SLACK_BYTES: ccache never writes a sparse file, so a name whose size
 * is beyond that (truncate -s 20G: no blocks, 20 GiB to read and write) is
 * left alone, unread (MOVE_SPARSE). A copy goes in steps of a byte budget
 * (move_copy_step), so that a caller in an event loop copies a big entry
 * over several slices.
 *
 * Placing and committing are apart (move_place, then move_commit or
 * move_undo): the caller re-checks that the destination directory is still
 * where it should be (a user may rename it away meanwhile, the fd still
 * writing into it) before the source goes; if it is not, move_undo puts a
 * renamed entry back and removes a copy, the source untouched.
 * I/O relative to directory fds only; never follows a symlink; non-logging. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* How far an entry's size may pass its allocated blocks (a tail kept in the
 * inode: ext4's inline data, btrfs's inline extents) and still be copied. */
#define MOVE_SLACK_BYTES 4096u

typedef enum MoveOutcome {
        MOVE_RENAMED,          /* same filesystem: renamed into the destination */
        MOVE_COPIED,           /* across: copied, renamed into place (source unlinked on commit) */
        MOVE_KEPT_DEST,        /* the destination had it: the source's copy goes on commit */
        MOVE_CHANGED,          /* the source is not what the account says (gone, another kind of
                                * file, another size or mtime, changed while copied): left alone */
        MOVE_SOURCE_STAYED,    /* in the destination now, but the source changed (a hit) before
                                * its unlink: it stays too, and the next run drops it */
        MOVE_SPARSE,           /* across: its size is beyond its blocks plus MOVE_SLACK_BYTES (a
                                * sparse file, no entry of ccache's): left alone, never read */
        MOVE_UNDONE,           /* move_undo: the destination was not where it should be; the
                                * entry is back in (or never left) the source */
} MoveOutcome;

typedef struct MoveResult {
        MoveOutcome outcome;
        /* The destination's file after the move (MOVE_RENAMED, MOVE_COPIED,
         * MOVE_KEPT_DEST, MOVE_SOURCE_STAYED): its figures for the
         * destination's account. */
        uint64_t blocks, ino, nlink;
        int64_t mtime;
        bool source_gone;       /* the source's name was unlinked or renamed away */
        uint64_t copied_bytes;  /* read and written (MOVE_COPIED) */
        uint64_t size;          /* MOVE_SPARSE: the source's apparent size */
} MoveResult;

/* What the source must still be: on device dev, blocks 512-byte blocks,
 * mtime seconds. */
typedef struct MoveExpect {
        dev_t dev;
        uint64_t blocks;
        int64_t mtime;
} MoveExpect;

/* A copy across filesystems under way: the source opened, ccache's
 * temporary beside the destination's name. Zeroed, then move_place. */
typedef struct MoveCopy {
        bool busy;
        int in, out, dir_fd;    /* dir_fd: the destination's directory (its own fd) */
        uint64_t off, size;
        struct statx src;       /* the source as checked when opened */
        char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
} MoveCopy;

/* Puts entry name of directory from_fd into directory to_fd (on device
 * to_dev). On one filesystem the rename is done (MOVE_RENAMED; the source
 * is gone). Across, a destination that has the name is given the newer mtime
 * (MOVE_KEPT_DEST), else the copy begins: returns 1 and *copy holds it (go
 * on with move_copy_step and move_copy_finish). Nothing of the source is
 * unlinked here: move_commit does that. Returns 0 (*ret says what
 * happened), 1, or -errno for an I/O error (nothing is left under name). */
int move_place(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect, MoveCopy *copy,
               MoveResult *ret);
/* Copies at most budget more bytes of *copy (at least one chunk). Returns 1
 * while there is more, 0 when all is copied, or -errno (-ESTALE: the source
 * ended early). */
int move_copy_step(MoveCopy *copy, uint64_t budget, uint64_t *copied);
/* All copied: the copy checked against the source (changed meanwhile:
 * MOVE_CHANGED), given its owner, mode and times, and renamed into place
 * (MOVE_COPIED, or MOVE_KEPT_DEST when the name was written meanwhile).
 * *copy is closed whatever happens. Returns 0 or -errno (no temporary left
 * unless its removal failed). */
int move_copy_finish(MoveCopy *copy, dev_t to_dev, MoveResult *ret);
/* Stops *copy: its temporary removed, everything closed. Idempotent. */
void move_copy_abort(MoveCopy *copy);
/* Is a copy under way in *copy? */
static inline bool move_copy_busy(const MoveCopy *copy) {
        return copy->busy;
}

/* The destination's name is where it should be: the source's copy goes
 * (MOVE_COPIED, MOVE_KEPT_DEST), re-checked as before an eviction (changed
 * meanwhile: MOVE_SOURCE_STAYED). Other outcomes: nothing to do. Returns 0
 * or -errno. */
int move_commit(int from_fd, const char *name, const MoveExpect *expect, MoveResult *ret);
/* The destination's directory to_fd proved not to be where it should be:
 * a renamed entry goes back to from_fd (should the source's directory have
 * the name again, the one in to_fd is removed: the key is in the source), a
 * copy (the inode *ret names) is removed; the source untouched. outcome
 * becomes MOVE_UNDONE unless the entry could not be put back (then 0 is
 * returned with the outcome as it was, or -errno). */
int move_undo(int from_fd, int to_fd, const char *name, MoveResult *ret);

/* move_place, the whole copy, move_commit: in one go. */
int move_entry(int from_fd, int to_fd, dev_t to_dev, const char *name, const MoveExpect *expect,
               MoveResult *ret);
