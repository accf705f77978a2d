/* SPDX-License-Identifier: MIT */
/* ccache's per-build statistics log (CCACHE_STATSLOG, stats_log): each
 * ccache call appends "# <input file>" and then one line per statistics id
 * it counted (ccache's core/statslog.cpp, the same format from 4.0 to 4.14).
 * Read into one outcome per call, as `ccache --show-log-stats` counts them:
 * a hit (direct or preprocessed, perhaps served by remote storage), a miss,
 * a recache (CCACHE_RECACHE: compiled and stored anew without looking, its
 * id "recache"), or neither (uncacheable or an error, with ccache's id as
 * the reason). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum StatsOutcome {
        STATS_HIT_DIRECT,
        STATS_HIT_PREPROCESSED,
        STATS_MISS,
        STATS_UNCACHEABLE,
        STATS_RECACHE,          /* neither a hit nor a miss: the cache was not asked */
} StatsOutcome;

typedef struct StatsCall {
        char *input;            /* the source file as ccache was given it ("" if none) */
        StatsOutcome outcome;
        bool remote;            /* a hit served by remote storage */
        char *reason;           /* STATS_UNCACHEABLE: ccache's statistics id; else NULL */
} StatsCall;

typedef struct StatsLog {
        StatsCall *calls;
        size_t n;
} StatsLog;

typedef struct StatsSummary {
        uint64_t cacheable;     /* hits + misses: what the cache could have served */
        uint64_t hits, direct_hits, preprocessed_hits, remote_hits, misses, uncacheable, recache;
} StatsSummary;

/* The log longer than this is refused (-EFBIG): a build of a million
 * compilations writes about 150 MB. */
#define STATSLOG_MAX_BYTES (1024ULL * 1024 * 1024)

/* Reads the log at path into *ret (empty when the file does not exist:
 * no ccache call wrote to it). Returns 0, -EFBIG, or -errno. */
int statslog_read(const char *path, StatsLog *ret);

/* Parses text (len bytes) into *ret. Returns 0 or -ENOMEM. */
int statslog_parse(const char *text, size_t len, StatsLog *ret);

void statslog_summarize(const StatsLog *l, StatsSummary *ret);

void statslog_done(StatsLog *l);

/* Removes dir, the private directory a build's log (and whatever else the
 * build left there: ccache's debug records) was written in, and everything
 * in it, following no symlink. Errors are ignored: it is only tidying. */
void statslog_dir_remove(const char *dir);
