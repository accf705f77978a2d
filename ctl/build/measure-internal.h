/* SPDX-License-Identifier: MIT */
/* What the parts of cachectl measure (build/measure.h) share:
 *
 *   measure.c          the command: arguments, the build run, the gate
 *   measure-daemon.c   what the daemon saw of the build's cache around the run
 *   measure-print.c    what is said of it: text or JSON
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/util.h"
#include "build/explain.h"
#include "build/statslog.h"
#include "core/client.h"

/* Where the figures come from. */
typedef enum Source {
        SOURCE_STATSLOG,        /* the build's own calls, in its statistics log */
        SOURCE_DAEMON,          /* none reached the log, the daemon saw the build's cache used: the fallback */
        SOURCE_NOTHING,         /* none reached the log, and nothing says one ran elsewhere: nothing compiled */
        SOURCE_UNKNOWN,         /* none reached the log, and the cache named cannot be looked at */
} Source;

/* What the daemon says of one cache at one moment. */
typedef struct Figures {
        uint64_t hits, misses;
} Figures;

/* The cache the build uses: what the fallback may count, and nothing else. */
typedef struct BuildCache {
        char *name;             /* the daemon's cache; NULL: none it keeps, or not known */
        char *dir;              /* its directory as the build resolves it; NULL with CACHE, or not known */
        const char *from;       /* where dir came from, for the text; NULL with CACHE */
} BuildCache;

typedef struct Measure {
        const char *cache;        /* the CACHE argument, or NULL */
        bool explain, json;
        double min_hit_rate;      /* 0..1; < 0: none */
        char **command;
        char dir[4096];           /* private: the statistics log and the debug records */
        /* With no call in the log: */
        Source source;
        BuildCache bc;
        char *unchecked;          /* SOURCE_NOTHING, SOURCE_UNKNOWN: why no other place was looked at */
        Figures before, after;    /* SOURCE_DAEMON: the build's cache, around the run */
        double rate;              /* 0..1; < 0: none */
} Measure;

/* measure.c */
/* The exit status a command's wait status stands for (128 + N for signal N). */
int measure_command_exit(int status);
/* argv as a shell would need it typed, malloc'd (NULL on ENOMEM). */
char *measure_command_line(char **argv);
/* The hit rate (0..1) of the build's calls, or of its cache over the run
 * (SOURCE_DAEMON); < 0: none (nothing cacheable was compiled). */
double measure_hit_rate(const Measure *m, const StatsSummary *s);

/* measure-daemon.c */
/* The daemon's status, asked quietly: NULL when there is no daemon (measure needs none). */
json_object *measure_daemon_status(void);
/* No call reached the log: decides m->source (and m->bc, m->before/after)
 * from what the daemon saw of the build's cache since before. */
void measure_judge_silent_build(Measure *m, json_object *before);
/* ExplainAskEvictions for explain_run(): asks the daemon which of keys left cache_dir. */
/* Why the daemon could not be asked which entries it evicted ("" when it
 * was, or never needed): said once, after the explanation. */
extern char measure_evictions_unasked[CTL_PROBLEM_MAX];
int measure_ask_evictions(void *userdata, const char *cache_dir, const char *const *keys, size_t n,
                          ExplainEviction *out, char *cache);

/* measure-print.c */
/* Prose: wrapped at 80 columns (indent after the first line) on a terminal, one line otherwise. */
void measure_say(bool tty, size_t indent, const char *fmt, ...) _printf_(3, 4);
/* What the build did, as text on stdout. */
void measure_print_text(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
                        double seconds, int status);
/* The same as one JSON object on stdout. */
void measure_print_json(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
                        double seconds, int status);
