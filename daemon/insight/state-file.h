/* SPDX-License-Identifier: MIT */
/* A cache's state files: its activity (activity.h; CACHE.history, what
 * `cachectl history` shows) and its eviction regret (regret.h; CACHE.regret),
 * each kept in a file in the state directory, so they survive restarts.
 * Written atomically (a temporary in the same directory, fsync, rename), read with a size bound, never through a
 * symlink. A bad file is set aside (renamed, never deleted) and history
 * starts empty. All access relative to a directory fd; never logs: the
 * caller logs the one message a load hands back.
 *
 * Layout (integers little-endian), ACTIVITY_FILE_BYTES in all:
 *   0   8  magic "\x89" "CKHIST\n"
 *   8   4  version (3; version 2, whose buckets lack ACTIVITY_OTHER_ADDED
 *          and the three kinds after it, and version 1, which also lacks
 *          ACTIVITY_REGRET, are read too: what they lack reads as 0, and
 *          the next save is version 3)
 *   12  4  header bytes (32)
 *   16  4  minute buckets (1440)
 *   20  4  hour buckets (2160)
 *   24  4  bytes per bucket (ACTIVITY_BUCKET_BYTES, 144; version 2: 96; version 1: 84)
 *   28  4  payload bytes (ACTIVITY_ENCODED_BYTES, 518,424; version 2: 345,624;
 *          version 1: 302,424)
 *   32  payload: activity_encode (newest minute, first minute, flags, then
 *       the minute and the hour buckets, oldest first)
 *   end-4  4  CRC-32 of every byte before it (zlib's crc32: python3 -c
 *          'import zlib,sys; d=open(sys.argv[1],"rb").read(); print(zlib.crc32(d[:-4]) == int.from_bytes(d[-4:], "little"))' FILE) */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "insight/activity.h"
#include "insight/regret.h"

#define ACTIVITY_FILE_VERSION 3U
/* The regret file: the same envelope, magic "\x89" "CKRGRT\n", its layout
 * (32, REGRET_KEYS, REGRET_HOURS, REGRET_RETURNS, REGRET_ENCODED_BYTES) and
 * regret_encode's payload: 2,773,020 bytes in all. Version 2 (the
 * evictions' reasons and the other departures, regret.h); version 1 (its
 * payload REGRET_ENCODED_BYTES_V1, 2,117,644 bytes in all) is read too,
 * its evictions' reasons unknown, and the next save is version 2. */
#define REGRET_FILE_VERSION 2U
#define STATE_FILE_HEADER_BYTES 32U
#define ACTIVITY_FILE_BYTES (STATE_FILE_HEADER_BYTES + ACTIVITY_ENCODED_BYTES + 4U)
/* A file larger than this is refused without being read. */
#define STATE_FILE_MAX_BYTES (4U << 20)

typedef enum StateFileStatus {
        STATE_FILE_OK,
        STATE_FILE_MISSING,           /* no file: a first start, nothing to say */
        /* Bad: set aside, history starts empty. */
        STATE_FILE_TRUNCATED,
        STATE_FILE_GARBAGE,           /* not our magic, or bytes after the end */
        STATE_FILE_WRONG_VERSION,
        STATE_FILE_BAD_LAYOUT,        /* sizes in the header, or the payload, not this build's */
        STATE_FILE_BAD_CHECKSUM,
        STATE_FILE_TOO_BIG,
        STATE_FILE_NOT_REGULAR,       /* a symlink (not followed), a directory, a fifo... */
        STATE_FILE_FOREIGN_OWNER,     /* owned by another uid than ours: not trusted */
        _STATE_FILE_STATUS_MAX,
} StateFileStatus;

/* CRC-32 of n bytes at p, the same as zlib's crc32(0, p, n). */
uint32_t state_file_crc32(const void *p, size_t n);

/* What is wrong with the n bytes at buf as the content of a state file:
 * STATE_FILE_OK, _TRUNCATED, _GARBAGE, _WRONG_VERSION, _BAD_LAYOUT (its
 * header) or _BAD_CHECKSUM; detail (size bytes) says how when bad. Pure. */
StateFileStatus state_file_check(const uint8_t *buf, size_t n, char *detail, size_t size);

/* Writes a to dirfd/name (one path component) atomically: a new 0644 file
 * "<name>.tmp.XXXXXX.tmp" in dirfd, fsync'ed, renamed over name, then
 * dirfd fsync'ed. A reader sees the old file or the new one, never a part.
 * Returns 0, -EINVAL for a name with a '/', or -errno (the old file kept,
 * the temporary removed). */
int activity_file_save(int dirfd, const char *name, const Activity *a);

/* Reads dirfd/name into a (activity_decode: the buckets replaced, then moved
 * to now, realtime usec), once at start, before any save of name: the
 * temporaries a save cut short by a crash left are removed first. Never follows a symlink, refuses a file above
 * STATE_FILE_MAX_BYTES without reading it. Returns:
 *   STATE_FILE_OK: a holds the file's history; message is empty, or, for
 *     a file dated after now (its clock was ahead, or it is forged), says
 *     what was dropped (its buckets after now: how many held figures, the
 *     span they cover; the rest is loaded): log it once;
 *   STATE_FILE_MISSING: no such file, a unchanged, nothing to say;
 *   another StateFileStatus: the file is bad, a unchanged; it was renamed
 *     to "<name>.corrupt-<unix seconds>" (".<n>" added if that exists) and
 *     message (message_size bytes, always terminated) says what was wrong and
 *     where it went, or why it could not be set aside: log it once;
 *   -errno: the file could not be read (a unchanged, the file left alone),
 *     -EINVAL for a name with a '/'. */
int activity_file_load(int dirfd, const char *name, Activity *a, usec_t now, char *message, size_t message_size);

/* The eviction regret (regret.h) of a cache in its own file beside the
 * history, so that the evictions it remembers survive a restart: saved and
 * loaded as activity_file_save and activity_file_load do, the same checks,
 * the same setting aside of a bad file ("eviction regret starts empty"). */
int regret_file_save(int dirfd, const char *name, const Regret *rg);
int regret_file_load(int dirfd, const char *name, Regret *rg, usec_t now, char *message, size_t message_size);

