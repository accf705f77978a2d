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
 * text names the holder ("host-pid-tid-sec.nsec"), <name>.alive a regular
 * file whose mtime shows it is alive. Nothing here ever waits: a lock held
 * by someone else is tried again later, from the loop. */

/* ccache's k_staleness_limit: a lock whose symlink text and .alive mtime
 * have not changed for this long is stale, and ccache breaks it. */
#define CCACHE_LOCK_STALE_USEC 2000000ULL
/* A lock we hold this long gets its .alive touched (ccache's long-lived
 * locks use 500 ms), so that no waiter judges us stale. */
#define CCACHE_LOCK_REFRESH_USEC 500000ULL

typedef struct CcacheLock {
        int dirfd;               /* borrowed */
        char name[64];
        char content[128];
        bool held;
        bool broke;              /* taking it broke a stale lock ... */
        char broken[128];        /* ... whose text was this */
        uint64_t refreshed_usec; /* monotonic: when .alive was last touched */
} CcacheLock;

/* What one waiter has seen of a lock someone else holds, kept by the caller
 * from one try to the next (zeroed at first). */
typedef struct CcacheLockSeen {
        uint64_t content_hash;   /* the holder's symlink text */
        int64_t alive_nsec;      /* its .alive's mtime, 0 without one */
        uint64_t since_usec;     /* realtime of the last activity seen */
        bool valid;
} CcacheLockSeen;

/* Takes the lock <name> in dirfd without waiting. If someone else holds it,
 * records in seen (may be NULL: a first look only) what it looks like at
 * now (realtime, usec); a lock is stale, and is broken the way ccache breaks
 * it (unlink .alive, then .lock) and taken, when
 *  - its text and .alive mtime have not changed for CCACHE_LOCK_STALE_USEC
 *    (on first sight, as in ccache, from the .alive's mtime if there is one),
 *  - or its text names a cachekeeperd of this host that is gone
 *    (ccache_lock_is_ours_dead).
 * Returns 1 taken (l->broke says whether a stale lock went first), 0 held
 * by someone else, or -errno. */
int ccache_lock_try(CcacheLock *l, int dirfd, const char *name, CcacheLockSeen *seen, uint64_t now);
/* Touches the .alive of a lock we hold when CCACHE_LOCK_REFRESH_USEC have
 * passed since it was last touched (monotonic now, usec). */
void ccache_lock_refresh(CcacheLock *l, uint64_t now);
/* Releases a lock we hold (only if its symlink still names us). */
void ccache_lock_release(CcacheLock *l);

/* Is content the text of a lock taken by a cachekeeperd on this host that
 * no longer runs: its pid is gone, or it is this process's pid but older than
 * this process (a previous run in the same pid namespace)? Our text is
 * "host-pid-pid-sec.nsec": ccache writes a pthread id where we repeat the
 * pid, so a live ccache's lock never matches, even if its pid is in another
 * pid namespace. */
bool ccache_lock_is_ours_dead(const char *content);
/* Breaks the lock <name> in dirfd if ccache_lock_is_ours_dead says it was
 * left by a cachekeeperd that is gone. Returns 1 broken, 0 no such lock (or
 * not ours), or -errno. */
int ccache_lock_break_ours_dead(int dirfd, const char *name);

/* What to change in one level-1 stats file's size counters (CCACHE.md §2),
 * per level-2 subdirectory i (0-15). */
typedef struct CcacheStatsFix {
        uint64_t sub_files[16], sub_kib[16];   /* subtract (deleted entries) */
        bool recount[16];                      /* set from the exact figures below instead */
        uint64_t files[16], kib[16];           /* exact figures, read when any recount is set */
} CcacheStatsFix;

/* Applies fix to the stats file of the level-1 directory l1fd, under its
 * stats.lock taken with ccache_lock_try (seen, now: never waits).
 * Subtractions: from index 11 and 12, and 49+i and 65+i when the file has
 * them (4.8+). A recount of i sets 49+i and 65+i to the exact figures and
 * moves 11 and 12 by the difference; a file without per-subdirectory
 * counters (4.7) gets 11 and 12 set to the sum of the exact figures, the
 * subtractions being part of them. Counters clamp at 0; every other line is
 * kept; the file is replaced atomically. Returns 1 written, 0 nothing to
 * write (no stats file: ccache reads zeros already), -EBUSY the lock is held
 * and not stale (try again later), -E2BIG more lines than we keep, or
 * -errno. *ret_broke (may be NULL) says whether a stale lock was broken. */
int ccache_stats_fix(int l1fd, const CcacheStatsFix *fix, CcacheLockSeen *seen, uint64_t now, bool *ret_broke);

/* ccache_stats_fix of one subtraction: files and KiB from subdirectory l2. */
int ccache_stats_subtract(int l1fd, unsigned l2, uint64_t files, uint64_t kib, CcacheLockSeen *seen,
                          uint64_t now);

/* Creates a new file "<base>.tmp.XXXXXX.tmp" in dirfd (ccache's temporary
 * naming, so a stale one is swept like ccache's own) with O_EXCL and a
 * random suffix. Returns the fd and the name in name, or -errno. */
int ccache_tmpfile(int dirfd, const char *base, mode_t mode, char *name, size_t len);
