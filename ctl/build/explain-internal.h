/* SPDX-License-Identifier: MIT */
/* What the parts of explain (explain.h) share, one file each:
 *
 *   explain.c           a run: the debug records walked, each miss explained, kept
 *   explain-compare.c   one miss against the record of the same source and object
 *   explain-record.c    one ccache call read from its debug records (Call)
 *   explain-digest.c    one identity per path, one digest per file (Digests)
 *   explain-manifest.c  a manifest read through `ccache --inspect` (Manifest)
 *   explain-store.c     the store that keeps the last explained call of each
 *                       source and object per user
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "build/explain.h"
#include "core/readfile.h"

/* A value longer than this is kept as its digest: a record stays small. */
#define ITEM_MAX 1024
/* A debug log, hashed text or dependency file longer than this is not read. */
#define RECORD_MAX_BYTES (512ULL * 1024 * 1024)
/* A file longer than this is told by its size and mtime alone. */
#define CONTENT_MAX_BYTES (64ULL * 1024 * 1024)
/* A line of a record longer than this is cut (a value that long is kept
 * as a digest anyway). */
#define RECORD_LINE_MAX (4U << 20)

#define FNV_INIT 0xcbf29ce484222325ULL
uint64_t explain_fnv(uint64_t h, const void *s, size_t n);

/* A file the compilation read (a header, or the source), by its normalised
 * real path, and a digest of what it held when the call was explained (0:
 * not a regular file we could read: nothing is claimed of it). */
typedef struct CallFile {
        char *path;
        uint64_t digest;
} CallFile;

typedef struct Call {
        char *version;          /* ccache's: "4.7.5" */
        char *cache_dir;        /* normalised */
        char **config;          /* "key=value", the settings that enter a key (explain-record.c) */
        size_t n_config;
        char *workdir;          /* as logged: where it ran */
        char *source;           /* as logged (relative to workdir, or absolute) */
        char *source_path;      /* normalised real path: the identity */
        char *object_path;      /* normalised absolute */
        char *build_root;       /* the build directory: the nearest of workdir and its parents holding
                                 * CMakeCache.txt or build.ninja, else workdir (normalised) */
        char *object_rel;       /* relative to build_root when below it, else object_path: the identity */
        char *depfile;          /* as logged, or NULL */
        char *manifest_key;
        char **result_keys;     /* every result key it looked up or computed, in order */
        size_t n_result_keys;
        char **missing;         /* every key it looked up and did not find ("No KEY in local storage") */
        size_t n_missing;
        char *manifest_result;  /* the result key ccache's manifest named for these inputs, or NULL */
        bool manifest_result_gone;  /* ... and it was not in the cache: the manifest proves it was */
        bool got_from_manifest; /* parsing: the next result key is the manifest's */
        char *manifest_path;    /* where ccache stored or found the manifest, as it logged */
        char *ccache;           /* the ccache the build ran (its command line's first word) */
        char **include_paths;   /* depend mode: the path of each include_hashes[i] (ccache's manifest), or NULL */
        bool miss, hit, stored, recache, time_macro, depend, has_text, has_files;
        char **items;           /* "SECTION/key=value" hashed, in order; not the text, not the includes */
        size_t n_items;
        char **include_hashes;  /* depend mode's "### include" digests, in order */
        size_t n_include_hashes;
        CallFile *files;        /* what it read: from the text's linemarkers or the dependency file */
        char files_kind;        /* where the files came from: 't' the text's linemarkers, 'd' the
                                 * dependency file, 'm' ccache's manifest; 0 none */
        char *files_root;       /* records: the build directory of the call that read files (a direct
                                 * hit keeps an older call's), or NULL: build_root */
        size_t n_files;
        int64_t when;           /* unix seconds the call was explained (records), or 0 */
        int64_t started;        /* unix seconds the call started (its log's first line), or 0 */
} Call;

void call_done(Call *c);

/* Appends a copy of s's first len bytes to the array *v of *n strings.
 * Returns 0 or -ENOMEM. */
int strv_add(char ***v, size_t *n, const char *s, size_t len);
/* Frees the n strings of v, and v. */
void strv_free(char **v, size_t n);

/* Files' digests by path, each file read once a run; and each path as
 * normalise_path turns it, resolved once a run (nothing moves under a
 * finished build while it is explained). */
typedef struct Digests {
        struct Digest {
                char *path;        /* NULL: empty slot */
                uint64_t digest;
        } *slots;
        size_t n, cap;
        struct {                   /* the last build roots found, by working directory */
                char *dir, *root;
        } roots[8];
        size_t next_root;
        struct Resolved {
                char *joined;      /* the path as named, made absolute; NULL: empty slot */
                char *norm;        /* what normalise_path makes of it */
                bool real;         /* realpath() resolved it */
        } *paths;
        size_t n_paths, cap_paths;
        ReadBudget budget;         /* the files the build names (explain.h's EXPLAIN_READ_MAX_BYTES) */
} Digests;
/* An empty Digests, its budget full. */
void digests_init(Digests *d);
void digests_done(Digests *d);

/* Reads the call whose log is log_path (its .ccache-input-text beside it,
 * the dependency file it names): every path normalised, every file it read
 * digested now. Returns 0 or -errno (-EFBIG for an oversized record). */
int call_read(const char *log_path, Digests *digests, Call *ret);

/* path made absolute against dir (when relative), "." and ".." and "//"
 * resolved; symlinks resolved too where the path exists. Into buf. */
const char *normalise_path(const char *dir, const char *path, char *buf, size_t len);

/* normalise_path() through d: each path resolved once a run (explain-digest.c). */
const char *digests_normalise(Digests *d, const char *dir, const char *path, char *buf, size_t len);
/* The digest of the file at the normalised path, read once a run within
 * d's budget; 0 when it is no regular file or the budget left it unread. */
uint64_t digests_of(Digests *d, const char *path);

/* The value of a config line "key=value" in c, or NULL. */
const char *call_setting(const Call *c, const char *key);

/* The store: one record a source and object, named by a digest of the two
 * identities. Returns 1 found (*ret filled), 0 none, -errno. */
int record_load(const char *store_dir, const Call *c, Call *ret);
/* Keeps c as the record of its source and object. files_from: when c read
 * no file list (a direct hit), the files are taken from this older record
 * (may be NULL). Returns 0 or -errno. */
int record_save(const char *store_dir, const Call *c, const Call *files_from, int64_t now);
/* Keeps the store under EXPLAIN_STORE_MAX_BYTES: the oldest go first. */
void record_bound(const char *store_dir);

/* The verdict of one miss: the cause of most weight (the first in
 * ExplainCause's order) with what it is, the others named after it. */
typedef struct Verdict {
        ExplainCause cause;
        char detail[1024];
        unsigned also;          /* bits of the other causes found */
        int64_t since;
        char by[16];
} Verdict;

/* Weighs cause c, with its detail, into v: the cause of most weight keeps
 * the detail, the others are named in v->also. */
void verdict(Verdict *v, ExplainCause c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Their working directories with the components they end in alike taken
 * off (b1/sub and b2/sub: b1 and b2), so that any path below either maps. */
typedef struct Roots {
        char from[PATH_MAX], to[PATH_MAX];
        bool differ;
} Roots;

/* The miss new against the record old of the same source and object, into
 * v; the build directories of the two runs into r. now: for "ago". */
void call_compare(const Call *old, const Call *new, int64_t now, Verdict *v, Roots *r);
/* The deepest directory above a, b and c ("/" at least), malloc'd; NULL on ENOMEM. */
char *common_dir(const char *a, const char *b, const char *c);
/* "3 min ago", "2 h ago", "5 d ago" (into buf). */
const char *explain_ago(int64_t then, int64_t now, char *buf, size_t len);
/* What removed an entry, as the daemon's evictions request names it
 * (PROTOCOL_EVICTED_BY_*), in words. */
const char *evicted_by_what(const char *by);

/* ccache's manifest as `ccache --inspect PATH` prints it (4.7 to 4.12):
 *
 *   File paths (2):
 *     0: ../proj/inc/v.h
 *   File infos (7):
 *     0:
 *       Path index: 0
 *       Hash: 6fe126fa1smd3h5gtd95dfv8l3g770ebc
 *
 * Each info's digest is what depend mode hashes as "### include": the
 * manifest names the file behind each digest. */
typedef struct Manifest {
        char **paths;
        size_t n_paths;
        size_t *info_path;      /* each info's path index */
        char **info_hash;
        size_t n_infos;
} Manifest;
/* Runs `ccache --inspect` on the manifest at path with the ccache the call
 * named; its output read into m. 0 (m may be empty: it could not be read)
 * or -ENOMEM. */
int manifest_read(const char *ccache, const char *path, Manifest *m);
void manifest_done(Manifest *m);
