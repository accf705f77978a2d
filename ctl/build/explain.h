/* SPDX-License-Identifier: MIT */
/* Why a compilation missed, from what ccache's debug mode recorded of it
 * (explain-record.c reads the records), in this order of evidence:
 *
 *   evicted      the key the call looked up was in this cache and is gone:
 *                cachekeeperd saw it leave (asked through ExplainAsk), or
 *                ccache's own manifest named it, or the last explained run
 *                of the same source and object stored that very key
 *   config       a ccache setting that enters the key changed (or ccache)
 *   compiler, argument, environment, build-dir, source, include-changed,
 *   time-macro   what differs from the last explained run of the same
 *                source and object (one identity: their normalised real
 *                paths, the object also below where it ran), proven by
 *                what ccache hashed and by digests of the files it read
 *   first-build  nothing is known of it: no record, and no eviction seen
 *   unknown      the evidence does not decide
 *
 * The records are kept per user (explain-store.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ExplainCause {
        CAUSE_EVICTED,          /* the entry was in this cache and is gone */
        CAUSE_CONFIG,           /* a ccache setting that enters the key changed: expected once */
        CAUSE_COMPILER,         /* cc_mtime, cc_name, cc_content ...: another compiler, or the same one reinstalled */
        CAUSE_ARGUMENT,         /* a hashed argument, by itself: "-g" added */
        CAUSE_ENVIRONMENT,      /* a hashed variable: LANG, LC_* */
        CAUSE_BUILD_DIR,        /* the build directory reaches the key: cwd, a path in an argument or the text */
        CAUSE_SOURCE,           /* the source file itself */
        CAUSE_INCLUDE,          /* an included file's content, proven by digests: a real change */
        CAUSE_TIME_MACRO,       /* __TIME__, __DATE__, __TIMESTAMP__: a new value each build */
        CAUSE_FIRST_BUILD,      /* nothing is known of it */
        CAUSE_UNKNOWN,          /* the evidence does not decide */
        _CAUSE_MAX,
} ExplainCause;

typedef struct ExplainMiss {
        char *source;           /* normalised real path */
        char *object;           /* normalised absolute path, or NULL */
        ExplainCause cause;
        char *detail;           /* one line: what differs */
        int64_t since;          /* CAUSE_EVICTED: when it left (unix seconds), or -1 */
        char *by;               /* CAUSE_EVICTED: "cap", "pressure", "purge", "merge", "other", or NULL */
} ExplainMiss;

/* What a run reads in all of the files a build names (sources, headers,
 * dependency files), each once: a build's headers are a few hundred MiB at
 * most; a source naming a thousand big files costs a second or so, and
 * those left unread are said (Explained.unread_files). */
#define EXPLAIN_READ_MAX_BYTES (1024ULL * 1024 * 1024)
#define EXPLAIN_FILES_MAX 200000

typedef struct Explained {
        ExplainMiss *misses;
        size_t n;
        size_t counts[_CAUSE_MAX];
        char *base_dir;         /* CAUSE_BUILD_DIR: a directory above both build directories, or NULL */
        char *cache;            /* CAUSE_EVICTED: the daemon's name of the cache, or NULL */
        size_t records;         /* debug records read (every call ccache logged) */
        bool asked;             /* cachekeeperd answered about the misses' keys */
        bool launcher_config;   /* the ccache that missed takes settings before the compiler (4.8+) */
        /* Files the build names that were not read (readfile.h), so nothing
         * was claimed of them: the run's read budget reached, or no regular
         * file (a FIFO, a device: never opened). */
        uint64_t unread_files, not_regular;
        char *first_unread, *first_not_regular;   /* the first of each, or NULL */
} Explained;

/* What cachekeeperd saw leave cache_dir of keys[0..n): for each, out[i]
 * gets since (unix seconds; -1: not seen) and by ("cap" ...). cache (64
 * bytes) gets the daemon's name of the cache. Returns 1 answered, 0 not
 * asked (no daemon, or it keeps no such cache), -errno. */
typedef struct ExplainEviction {
        int64_t since;
        char by[16];
} ExplainEviction;
typedef int (*ExplainAsk)(void *userdata, const char *cache_dir, const char *const *keys, size_t n,
                          ExplainEviction *out, char *cache);

/* "build-dir", "include-changed", ...: the names cachectl(1), measure, gives. */
const char *explain_cause_name(ExplainCause c);

/* The one-line fix for cause in e, or NULL where there is none to make (a
 * real change, a change of setting). Written into buf. */
const char *explain_cause_fix(ExplainCause c, const Explained *e, char *buf, size_t len);

/* The store of records of the user running us: $XDG_CACHE_HOME or
 * ~/.cache, then cachekeeper/explain, made 0700. Returns 0 or -errno. */
int explain_store_dir(char *buf, size_t len);

/* At most this much is kept in the store; the least recently written
 * records go first. */
#define EXPLAIN_STORE_MAX_BYTES (64ULL * 1024 * 1024)

/* Reads every record ccache's debug mode wrote below debug_dir; explains
 * each miss (ask may be NULL: the daemon is not asked), then keeps this
 * run's calls in store_dir for the next. now: unix seconds. Returns 0 or
 * -errno. */
int explain_run(const char *debug_dir, const char *store_dir, ExplainAsk ask, void *userdata, int64_t now,
                Explained *ret);

void explained_done(Explained *e);
