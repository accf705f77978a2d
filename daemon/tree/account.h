/* SPDX-License-Identifier: MIT */
/* Per-cache accounting: every directory and regular file under a cache root,
 * with exact totals. Pure data structure, no I/O. Sized for ~1M files: an
 * entry name is packed into 20 bytes (ccache.h), a file costs 32 bytes (its
 * tag byte included) plus its 4-byte hash slot, files live in fixed chunks
 * so growth never copies, and the index grows in place. A hard-linked name
 * costs 12 bytes more (links.h). Each directory keeps its share of the
 * totals, so that forgetting one takes its subtree's files out of them at
 * once; the table forgets those files later, in steps its owner runs
 * (account_purge_step). Reading the totals never writes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccache/ccache.h"

typedef uint32_t DirId;
#define DIR_ROOT ((DirId) 0)
#define DIR_NONE ((DirId) UINT32_MAX)
#define ACCOUNT_DIRS_MAX (1u << 24)

typedef uint32_t FileId;
#define FILE_NONE ((FileId) UINT32_MAX)

typedef struct Account Account;

/* Where ccache's entries are, and how they are named. */
typedef enum AccountLayout {
        ACCOUNT_LAYOUT_LOCAL,           /* a cache directory: <l1>/<l2>[/<l3>[/<l4>]]/<rest of key><suffix> */
        ACCOUNT_LAYOUT_REMOTE_SUBDIRS,  /* a file: remote storage, layout subdirs: <2 hex>/<rest of bare key> */
        ACCOUNT_LAYOUT_REMOTE_FLAT,     /* a file: remote storage, layout flat: <bare key> in the root */
        _ACCOUNT_LAYOUT_MAX,
} AccountLayout;

typedef struct Dir {
        char *name;              /* NULL for the root */
        DirId parent, first_child, next_sibling, prev_sibling;
        uint32_t hash;           /* of (parent, name), for the index */
        /* Tells this directory from any other that held or will hold its
         * DirId: whoever keeps a DirId across loop iterations keeps this
         * with it and checks both (account_dir_check). Never 0. */
        uint32_t gen;
        uint32_t files;          /* regular files directly in this directory */
        uint32_t scan_gen;       /* the last scan that listed this directory */
        int wd;                  /* inotify watch descriptor, -1 when not watched */
        uint8_t depth;           /* 0 for the root; 255 for 255 and deeper */
        bool used;
        bool queued;             /* its owner has a scan of it queued */
        /* One of ccache's entry directories (watch it). Local layout: depth
         * 1-4, and this and every ancestor below the root is one hex digit
         * (its files may be entries at depth 2-4). Remote subdirs: depth 1,
         * named by exactly 2 lower-case hex digits (its files may be
         * entries). Remote flat: never (the entries are in the root). */
        bool hex;
        bool in_tmp;             /* local layout: the root's tmp/ or below it */
        bool in_lock;            /* local layout: the root's lock/ or below it: ccache's locks, never evicted */
        uint64_t stats_hits, stats_misses;  /* from this directory's stats file */
        /* Its share of the totals: the files directly in it by kind, and
         * their bytes with those of the hard-linked inodes it holds (the
         * nearest directory above all of an inode's names: links.h's owner).
         * Σ kind_files is files. */
        uint32_t kind_files[_CCACHE_KIND_MAX];
        uint64_t kind_bytes[_CCACHE_KIND_MAX];
        /* Bounds of its entries' mtimes (oldest > newest: none yet): they
         * widen as entries come and never narrow, so that forgetting it
         * keeps the span exact when they are inside it. */
        uint32_t entry_oldest, entry_newest;
} Dir;

typedef struct AccountTotals {
        /* files: every name of a regular file (as find and ccache count);
         * bytes: Σ st_blocks·512 over their inodes, each once (as du counts). */
        uint64_t files, bytes;
        uint64_t kind_files[_CCACHE_KIND_MAX];
        uint64_t kind_bytes[_CCACHE_KIND_MAX];
        uint64_t hits, misses;                  /* ccache's own counters, summed over stats files */
        size_t dirs;
} AccountTotals;

/* What eviction needs to know of one file. */
typedef struct FileInfo {
        DirId dir;
        uint32_t dir_gen;        /* the directory's gen (see Dir) */
        CcacheKind kind;
        uint64_t blocks;         /* st_blocks, 512-byte units */
        int64_t mtime;           /* seconds */
} FileInfo;

/* Returns a new, empty account holding only the root directory. */
int account_new(Account **ret);
Account *account_free(Account *a);
static inline void account_freep(Account **a) {
        account_free(*a);
}

/* Sets where the entries are and how they are named (ACCOUNT_LAYOUT_LOCAL
 * for a new account). Only while the account holds the root alone, with no
 * file (after account_new or account_clear; the files of forgotten
 * directories are purged first, all at once): returns 0, -EBUSY otherwise
 * (nothing changes), -EINVAL for no such layout. account_clear keeps it.
 * In a remote layout, files directly in the entry directories (the root for
 * flat, a hex one for subdirs) that are bare keys are entries
 * (ccache_pack_remote_name), *.tmp.* files are tmp, everything else is
 * other; no directory is in_tmp or in_lock and there are no stats files. */
int account_set_layout(Account *a, AccountLayout layout);
AccountLayout account_layout(const Account *a);
/* May files directly in d be entries? Local: a hex directory at depth 2-4;
 * remote subdirs: a hex directory; remote flat: the root. False for a
 * directory not in use. */
bool account_entry_dir(const Account *a, DirId d);

/* Is name, a file directly in d, one of ccache's entries (by its name and
 * its directory, as the account classes it)? No lookup. */
bool account_name_is_entry(const Account *a, DirId d, const char *name);

/* Called for each directory about to be forgotten (by account_dir_remove,
 * account_scan_sweep or account_clear, the root included by the latter), so
 * the owner can drop what it keyed on the DirId, such as its inotify watch. */
typedef void (*account_dir_hook_t)(DirId d, Dir *dir, void *userdata);
void account_set_dir_hook(Account *a, account_dir_hook_t hook, void *userdata);

/* Sizes the index for n files up front, so that a scan of a large cache
 * does not rebuild it again and again as it grows. Returns 0 or -ENOMEM
 * (the account stays usable either way). */
int account_reserve(Account *a, size_t n);

/* Forgets every file and directory except the (now empty) root. */
void account_clear(Account *a);

/* Adds directory name under parent (or finds it). Returns 1 if added, 0 if it
 * existed, -ENOMEM, or -E2BIG past ACCOUNT_DIRS_MAX; *ret set when >= 0. */
int account_dir_add(Account *a, DirId parent, const char *name, DirId *ret);
DirId account_dir_find(const Account *a, DirId parent, const char *name);
/* Removes d (not the root), its subdirectories and every file in them:
 * their share leaves the totals at once, O(1) per directory forgotten, never
 * a pass over files. The files stay in the table, found by no lookup
 * (account_file_info says -ENOENT), until account_purge_step has forgotten
 * them; the DirIds of their directories are not given again until then. An
 * inode with names both inside and outside d keeps its bytes; one whose
 * every name is inside loses them (but for one that lost names since its
 * owner was joined: the bytes then go when the purge reaches its last name). */
void account_dir_remove(Account *a, DirId d);
/* One past the highest DirId in use; account_dir() says which are. */
DirId account_dir_limit(const Account *a);
/* Borrowed; valid until the next account_dir_add. NULL if d is not in use. */
Dir *account_dir(const Account *a, DirId d);
/* account_dir(a, d) if d is still the directory whose gen was gen when the
 * caller took d; NULL if it was forgotten since (its DirId may now be
 * another directory's). */
Dir *account_dir_check(const Account *a, DirId d, uint32_t gen);
/* How many directories were ever forgotten. Whoever holds DirIds across
 * loop iterations need only check them (account_dir_check) when this moved. */
uint64_t account_dirs_released(const Account *a);
/* Writes d's path relative to the root ("" for the root) into buf. Returns
 * 0, or -ENAMETOOLONG. */
int account_dir_path(const Account *a, DirId d, char *buf, size_t len);
/* The same, relative to base; -EINVAL if base is not d or one of its ancestors. */
int account_dir_relpath(const Account *a, DirId base, DirId d, char *buf, size_t len);
/* Records the counters of d's stats file and updates the totals. */
void account_dir_set_stats(Account *a, DirId d, uint64_t hits, uint64_t misses);

/* Records regular file name in d with its size and mtime (inserting or
 * updating) and marks it as seen by the current scan. Returns 1 inserted,
 * 2 updated with another size or mtime, 0 unchanged, or -ENOMEM. */
int account_file_set(Account *a, DirId d, const char *name, uint64_t blocks, int64_t mtime);
/* The same for a file with nlink links of inode ino: the inode's blocks
 * count once in the totals, however many of its names the account holds
 * (files counts every name). nlink 1 or ino 0: as account_file_set.
 * unsure: not seen by a full scan (an event, a subtree scan), so other names
 * of ino may be held as files of their own, recorded when they had one
 * link: if ino is new here, its bytes wait for a full scan to see it
 * (account_links_unsure() counts such inodes) rather than count twice. */
int account_file_set_inode(Account *a, DirId d, const char *name, uint64_t blocks, int64_t mtime, uint64_t ino,
                           uint64_t nlink, bool unsure);
/* Inodes whose bytes wait for a full scan (see account_file_set_inode). */
size_t account_links_unsure(const Account *a);
/* Forgets file name in d. Returns 1 if it was known, 0 if not. */
int account_file_remove(Account *a, DirId d, const char *name);
FileId account_file_find(const Account *a, DirId d, const char *name);
/* -ENOENT for a free id, or a file of a directory forgotten since. */
int account_file_info(const Account *a, FileId f, FileInfo *ret);
/* Writes file f's name into buf (CCACHE_NAME_MAX bytes or longer). Returns
 * 0, or -ENAMETOOLONG if the name does not fit. */
int account_file_name(const Account *a, FileId f, char *buf, size_t len);
/* One past the highest FileId in use; iterate with account_file_info, which
 * returns -ENOENT for free slots. */
FileId account_file_limit(const Account *a);

/* A scan of the subtree at some directories is starting: files it does not
 * see again, in directories it lists, are gone. */
void account_scan_begin(Account *a);
/* After the scan that stamped gen into the scan_gen of the directories it
 * listed: removes their files not seen since account_scan_begin, and their
 * subdirectories the scan did not list (but for those added since
 * account_scan_begin: an event told of them after the listing), and the
 * files of forgotten directories the purge has not reached. Returns the
 * number of files the sweep found gone (not those of directories forgotten
 * before it: they had left the totals already). */
size_t account_scan_sweep(Account *a, uint32_t gen);

/* The totals, exact, kept as files and directories come and go: O(1),
 * writes nothing. */
const AccountTotals *account_totals(const Account *a);
/* ccache's entries among them (every kind of entry), as exact: a sum of 4. */
uint64_t account_entry_files(const Account *a);
/* One step of the purge: forgets the files of forgotten directories among
 * the next max records of the table (at most max files), going round the
 * table from where the last step stopped. Returns how many such files are
 * left; at 0 every DirId forgotten is free again. The owner runs it in
 * slices from its loop (daemon/README.md §6) after a directory is
 * forgotten; nothing reads the totals through it. */
/* Records a step looks at: half of them forgotten costs some 0.3-0.8 ms
 * (an index deletion each), so a slice looks at its clock often enough. */
#define ACCOUNT_PURGE_STEP 512
size_t account_purge_step(Account *a, size_t max);
/* Oldest and newest mtime over ccache entries (0, 0 when there are none),
 * exact: kept as entries come and go, but an entry at either edge that
 * leaves (evicted, or hit: its mtime moves; or a forgotten directory whose
 * entries' bounds reach an edge) takes a pass over the files to find the
 * next one; so does account_entry_counts, on its way. */
void account_entry_mtime_span(Account *a, int64_t *ret_oldest, int64_t *ret_newest);
/* The same without the pass: exact as of the last account_entry_counts or
 * account_entry_mtime_span at least, as of the moment before an entry at
 * either edge left since at most. */
void account_entry_mtime_span_recent(const Account *a, int64_t *ret_oldest, int64_t *ret_newest);
/* The ccache entries' counts, exact, in one pass over the files: the
 * working set, for each of n (at most ACCOUNT_WINDOWS_MAX) moments since[i]
 * (unix seconds), the entries used since (mtime >= since[i]: ccache
 * refreshes an entry's mtime at every hit), their files and bytes
 * (st_blocks, per name: within a cache an entry has one); and the entries
 * and their bytes by tag (account_file_tag). Makes the mtime span exact
 * again (account_entry_mtime_span_recent). */
#define ACCOUNT_WINDOWS_MAX 8
void account_entry_counts(Account *a, const int64_t *since, size_t n, uint64_t *ret_files, uint64_t *ret_bytes,
                          uint64_t tag_files[256], uint64_t tag_bytes[256]);
/* A byte the owner keeps with each file, 0 for a new one (cache-writers.c:
 * which ccache wrote the entry). Out-of-range ids read 0 and are ignored. */
uint8_t account_file_tag(const Account *a, FileId id);
void account_file_set_tag(Account *a, FileId id, uint8_t tag);
/* Bytes of memory held, for status and the benchmark: the tables and the
 * names kept on the heap. */
size_t account_memory(const Account *a);
/* How many passes over every file the account has made (the working set,
 * the mtime span, a sweep): tests, which show what costs one. The purge's
 * steps are not passes. */
uint64_t account_passes(const Account *a);
/* The longest run of occupied slots in the file index: what a lookup may
 * probe at worst (tests: names users plant must not pile up). */
size_t account_index_longest_run(const Account *a);
