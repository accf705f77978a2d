/* SPDX-License-Identifier: MIT */
/* ccache's file names (ccache/README.md §1): which files are cache entries under
 * both naming schemes, in a local cache and in a `file:` remote storage
 * directory, a compact exact encoding of entry names, the kind of every
 * other file, and the times a hit leaves on an entry. Pure: no I/O. ccache's
 * stats files are ccache-stats.h, its locks and temporary files ccache-lock.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

typedef enum CcacheKind {
        CCACHE_KIND_RESULT,     /* <key>R (4.7-4.12) */
        CCACHE_KIND_MANIFEST,   /* <key>M (4.7-4.12) */
        CCACHE_KIND_RAW,        /* <key><n>W (4.7-4.12), <key>_<nn> (4.13) */
        CCACHE_KIND_ENTRY,      /* <key> (4.13, or any remote entry: result or manifest, the name does not say) */
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
 * digit each (ccache/README.md §1). */
#define CCACHE_DEPTH_MIN 2
#define CCACHE_DEPTH_MAX 4

/* ccache's directories (ccache/README.md §1), the one place their names are
 * spelled: at the root, tmp/ (temporaries, the inode cache), lock/ (4.8+:
 * the content locks) and the level directories, one hex digit each; a path
 * "rel" is relative to the cache's root. */
#define CCACHE_TMP_DIR  "tmp"
#define CCACHE_LOCK_DIR "lock"
/* Is name a level directory's name (one lower-case hex digit)? */
bool ccache_is_level_name(const char *name);
/* Is rel a level-2 directory or below one ("a/b", "a/b/c")? Its two digits'
 * values into *l1 and *l2 (either may be NULL) when so. */
bool ccache_level2_of(const char *rel, unsigned *l1, unsigned *l2);
/* Is rel one of the directories ccache keeps at the top of a cache: tmp,
 * lock, a level-1 ("a") or a level-2 ("a/b") directory? */
bool ccache_is_top_dir(const char *rel);
/* Is name a directory of a `file:` remote storage's layout subdirs (the
 * first CCACHE_REMOTE_DIR_CHARS_SUBDIRS key chars, hex)? */
bool ccache_is_remote_subdir_name(const char *name);

/* A packed entry name: 20 bytes plus a 4-bit code, exact and reversible. */
#define CCACHE_PACKED_SIZE 20
#define CCACHE_NAME_MAX    48   /* longest entry file name + NUL, with room */

/* If name is a ccache entry's file name for a file whose directory is depth
 * levels below the root (every level a single hex digit), packs it into out,
 * stores the 4-bit code in *ret_code and returns its kind; otherwise returns
 * -EINVAL and leaves out and *ret_code untouched. */
int ccache_pack_name(const char *name, unsigned depth, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code);

/* A remote storage directory (`file:`) names an entry by its bare key, legacy
 * (33 chars: 4 hex, 29 base32hex) or 4.13 (40 hex), with no R/M/W suffix;
 * layout subdirs puts the first 2 key chars in the directory path, flat
 * none. The most key chars a directory path may hold: */
#define CCACHE_REMOTE_DIR_CHARS_MAX 4
#define CCACHE_REMOTE_DIR_CHARS_SUBDIRS 2
#define CCACHE_REMOTE_DIR_CHARS_FLAT 0

/* If name is a bare key less the dir_chars key chars its directory path holds
 * (dir_chars <= CCACHE_REMOTE_DIR_CHARS_MAX), packs it into out, stores the
 * 4-bit code in *ret_code and returns CCACHE_KIND_ENTRY; otherwise returns
 * -EINVAL and leaves out and *ret_code untouched. Only names ccache writes
 * pack: lower case, base16 where the key is base16, and a last base32hex
 * char whose padding bit is 0 (the digest's 144 bits take 28 chars and 4
 * bits of the 29th); so a legacy key packs in 160 bits even at dir_chars 0,
 * and unpacks to exactly the name packed. */
int ccache_pack_remote_name(const char *name, unsigned dir_chars, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code);

/* Writes the file name packed by ccache_pack_name (same depth) or by
 * ccache_pack_remote_name (depth: the same dir_chars) into buf, which holds
 * CCACHE_NAME_MAX bytes. Returns buf. */
char *ccache_unpack_name(const uint8_t in[CCACHE_PACKED_SIZE], uint8_t code, unsigned depth, char *buf);

/* The kind of a code returned by ccache_pack_name or ccache_pack_remote_name. */
CcacheKind ccache_code_kind(uint8_t code);

/* The kind of a regular file that is not a packable entry: tmp, stats or other.
 * in_tmp_dir: the file is under the root's tmp/. */
CcacheKind ccache_classify_other(const char *name, unsigned depth, bool in_tmp_dir);

/* The same in a remote storage directory, which has no stats files and no
 * tmp/: tmp (a *.tmp.* name) or other. */
CcacheKind ccache_classify_remote_other(const char *name);

/* The tick of the coarse clock the kernel stamps files' times by (4 ms at
 * HZ=250); 10 ms, the coarsest (HZ=100), if clock_getres cannot tell. */
uint64_t ccache_clock_tick_nsec(void);

/* Whether an entry's mtime and ctime are what ccache's hit leaves (its
 * utimensat(NULL): ccache/README.md §4): ctime at mtime's instant, or up to two
 * ticks of tick_nsec after it (tmpfs may stamp ctime once more, a tick
 * later). A chmod moves ctime alone, a rewrite renames a new file in. Any
 * times (set by the entry's owner) are safe: no overflow. */
bool ccache_hit_times(const struct statx_timestamp *mtime, const struct statx_timestamp *ctime, uint64_t tick_nsec);
