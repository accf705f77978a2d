/* SPDX-License-Identifier: MIT */
/* ccache's on-disk formats (CCACHE.md): which files are cache entries under
 * both naming schemes, a compact exact encoding of entry names, and the
 * stats files' counters. Pure except for the stats reader. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum CcacheKind {
        CCACHE_KIND_RESULT,     /* <key>R (4.7-4.12) */
        CCACHE_KIND_MANIFEST,   /* <key>M (4.7-4.12) */
        CCACHE_KIND_RAW,        /* <key><n>W (4.7-4.12), <key>_<nn> (4.13) */
        CCACHE_KIND_ENTRY,      /* <key> (4.13: result or manifest, the name does not say) */
        CCACHE_KIND_TMP,        /* *.tmp.* anywhere, or any file under tmp/ */
        CCACHE_KIND_STATS,      /* <l1>/stats, <l1>/<l2>/stats */
        CCACHE_KIND_OTHER,      /* ccache.conf, CACHEDIR.TAG, *.alive, lock/ files, anything else */
        _CCACHE_KIND_MAX,
} CcacheKind;

static inline bool ccache_kind_is_entry(CcacheKind k) {
        return k <= CCACHE_KIND_ENTRY;
}
const char *ccache_kind_name(CcacheKind k);

/* Entries live at depth 2-4 below the root, in directories named by one hex
 * digit each (CCACHE.md §1). */
#define CCACHE_DEPTH_MIN 2
#define CCACHE_DEPTH_MAX 4

/* A packed entry name: 20 bytes plus a 4-bit code, exact and reversible. */
#define CCACHE_PACKED_SIZE 20
#define CCACHE_NAME_MAX    48   /* longest entry file name + NUL, with room */

/* If name is a ccache entry's file name for a file whose directory is depth
 * levels below the root (every level a single hex digit), packs it into out,
 * stores the 4-bit code in *ret_code and returns its kind; otherwise returns
 * -EINVAL and leaves out and *ret_code untouched. */
int ccache_pack_name(const char *name, unsigned depth, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code);

/* Writes the file name packed by ccache_pack_name (same depth) into buf,
 * which holds CCACHE_NAME_MAX bytes. Returns buf. */
char *ccache_unpack_name(const uint8_t in[CCACHE_PACKED_SIZE], uint8_t code, unsigned depth, char *buf);

/* The kind of a code returned by ccache_pack_name. */
CcacheKind ccache_code_kind(uint8_t code);

/* The kind of a regular file that is not a packable entry: tmp, stats or other.
 * in_tmp_dir: the file is under the root's tmp/. */
CcacheKind ccache_classify_other(const char *name, unsigned depth, bool in_tmp_dir);

/* Stats counters (CCACHE.md §2). */
#define CCACHE_STAT_CACHE_MISS             4
#define CCACHE_STAT_PREPROCESSED_CACHE_HIT 8
#define CCACHE_STAT_FILES_IN_CACHE         11
#define CCACHE_STAT_CACHE_SIZE_KIBIBYTE    12
#define CCACHE_STAT_DIRECT_CACHE_HIT       22
#define CCACHE_STAT_SUBDIR_FILES_BASE      49   /* 4.8+: 49+i files in L2 subdir i */
#define CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE 65 /* 4.8+: 65+i KiB in L2 subdir i */
#define CCACHE_STATS_MAX                   128  /* lines we keep; ccache writes up to 85 */

typedef struct CcacheStats {
        uint64_t counters[CCACHE_STATS_MAX];
        size_t n;             /* lines read */
        bool truncated;       /* the file had more lines than we keep */
} CcacheStats;

/* Parses the text of a stats file: one unsigned decimal per line, as
 * ccache's StatsFile::read (a malformed line reads as 0, extra lines kept up
 * to CCACHE_STATS_MAX). */
void ccache_stats_parse(const char *text, size_t len, CcacheStats *ret);

/* Reads dirfd/name (not following symlinks) into *ret. A missing file is all
 * zeros (as in ccache). Returns 0 or -errno. */
int ccache_stats_read(int dirfd, const char *name, CcacheStats *ret);

static inline uint64_t ccache_stats_hits(const CcacheStats *s) {
        return s->counters[CCACHE_STAT_DIRECT_CACHE_HIT] + s->counters[CCACHE_STAT_PREPROCESSED_CACHE_HIT];
}
static inline uint64_t ccache_stats_misses(const CcacheStats *s) {
        return s->counters[CCACHE_STAT_CACHE_MISS];
}

/* ccache's lock files (CCACHE.md §2, §7): <name>.lock is a symlink whose
 * text names the holder, <name>.alive a regular file whose mtime shows it is
 * alive. Locks we hold are only ever held for well under a second. */
typedef struct CcacheLock {
        int dirfd;               /* borrowed */
        char name[64];
        char content[128];
        bool held;
} CcacheLock;

/* Takes the lock <name> in dirfd without waiting. Returns 1 taken, 0 held
 * by someone else, or -errno. */
int ccache_lock_try(CcacheLock *l, int dirfd, const char *name);
/* Releases a lock we hold (only if its symlink still names us). */
void ccache_lock_release(CcacheLock *l);

/* Subtracts files and KiB from the counters of the level-1 stats file in
 * l1fd, for its level-2 subdirectory l2 (0-15): index 11 and 12, and 49+l2
 * and 65+l2 when the file has them (4.8+). Takes stats.lock, waiting at
 * most wait_usec; writes atomically; keeps every other line. Counters clamp
 * at 0. Returns 1 updated, 0 nothing to update (no stats file), -EBUSY if
 * the lock stayed taken, or -errno. */
int ccache_stats_subtract(int l1fd, unsigned l2, uint64_t files, uint64_t kib, uint64_t wait_usec);

/* Creates a new file "<base>.tmp.XXXXXX.tmp" in dirfd (ccache's temporary
 * naming, so a stale one is swept like ccache's own) with O_EXCL and a
 * random suffix. Returns the fd and the name in name, or -errno. */
int ccache_tmpfile(int dirfd, const char *base, mode_t mode, char *name, size_t len);
