/* SPDX-License-Identifier: MIT */
/* Why a compilation missed: what ccache hashed for it (its debug mode's
 * *.ccache-input-text, read by its sections and keys, never by line
 * numbers) against what it hashed for the same source and object in the
 * last explained run, kept per user. A fingerprint keeps the hashed items
 * (compiler, arguments, cwd, the source's hash) and, from the preprocessed
 * text, one digest per file it came from: small, and enough to name the
 * first thing that differs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ExplainCause {
        CAUSE_COMPILER,         /* cc_mtime, cc_name, cc_content ...: another compiler, or the same one reinstalled */
        CAUSE_ARGUMENT,         /* a hashed argument or setting other than the build directory */
        CAUSE_SOURCE,           /* the source file itself */
        CAUSE_TIME_MACRO,       /* __TIME__, __DATE__, __TIMESTAMP__: a new value each build */
        CAUSE_INCLUDE,          /* an included file's content: a real change, correctly invalidated */
        CAUSE_BUILD_DIR,        /* only the build directory: cwd, or a path in the arguments or the text */
        CAUSE_FIRST_BUILD,      /* no earlier explained run of this source and object */
        CAUSE_UNKNOWN,          /* nothing this compares differs (or there was no debug record) */
        _CAUSE_MAX,
} ExplainCause;

typedef struct ExplainMiss {
        char *source;           /* absolute */
        ExplainCause cause;
        char *detail;           /* one line: what differs */
} ExplainMiss;

typedef struct Explained {
        ExplainMiss *misses;
        size_t n;
        size_t counts[_CAUSE_MAX];
        char *base_dir;         /* CAUSE_BUILD_DIR: a directory above both build directories, or NULL */
        size_t records;         /* debug records read (every call ccache logged) */
} Explained;

/* "build-dir", "include-changed", ...: the names cachectl(1), measure, gives. */
const char *explain_cause_name(ExplainCause c);

/* The one-line fix for cause, or NULL where there is none to make (a
 * real change). base_dir: Explained.base_dir. Written into buf. */
const char *explain_cause_fix(ExplainCause c, const char *base_dir, char *buf, size_t len);

/* The store of fingerprints of the user running us: $XDG_CACHE_HOME or
 * ~/.cache, then cachekeeper/explain, made 0700. Returns 0 or -errno. */
int explain_store_dir(char *buf, size_t len);

/* At most this much is kept in the store; the least recently written
 * fingerprints go first. */
#define EXPLAIN_STORE_MAX_BYTES (64ULL * 1024 * 1024)

/* Reads every record ccache's debug mode wrote below debug_dir; explains
 * each miss against store_dir's fingerprint of the same source and
 * object, then keeps this run's fingerprints there (those of calls that
 * ran the preprocessor: a direct hit's record says nothing of its
 * includes, and what was kept for it still holds). Returns 0 or -errno. */
int explain_run(const char *debug_dir, const char *store_dir, Explained *ret);

void explained_done(Explained *e);
