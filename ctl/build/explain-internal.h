/* SPDX-License-Identifier: MIT */
/* What explain.c, explain-record.c and explain-store.c share: one ccache
 * call as its debug mode recorded it, with every path it names turned into
 * one identity (its normalised real path), and the store that keeps the
 * last explained call of each source and object per user. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
