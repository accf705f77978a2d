/* SPDX-License-Identifier: MIT */
/* cachectl measure (measure.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "client.h"
#include "explain.h"
#include "measure.h"
#include "statslog.h"

/* Missed sources listed on a terminal; --json lists all. */
#define MISSED_SHOWN 20
/* The daemon's figures settle when two looks this far apart agree. */
#define SETTLE_STEP_USEC (300 * 1000ULL)
#define SETTLE_MAX_USEC (5 * 1000 * 1000ULL)
/* How long the build waits for the daemon's figures before it starts. */
#define MEASURE_ASK_USEC (2 * USEC_PER_SEC)

typedef struct Measure {
        const char *cache;        /* the fallback's cache; NULL: all */
        bool explain, json;
        double min_hit_rate;      /* 0..1; < 0: none */
        char **command;
        char dir[4096];           /* private: the statistics log and the debug records */
} Measure;

/* What the daemon says of the cache (or all) at one moment. */
typedef struct Figures {
        bool known;
        uint64_t hits, misses;
} Figures;

/* Asks the daemon quietly: no daemon is no error until the fallback needs one. */
static int daemon_figures(const Measure *m, Figures *ret) {
        json_object *status = NULL;
        bool found = false;
        int r;

        *ret = (Figures) { 0 };
        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        ctl_quiet = false;
        if (r <= 0)
                return -1;
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *name = protocol_field_str(c, STATUS_CACHE_NAME);

                if (m->cache && (!name || strcmp(name, m->cache) != 0))
                        continue;
                found = true;
                ret->hits += protocol_field_u64(c, STATUS_CACHE_HITS);
                ret->misses += protocol_field_u64(c, STATUS_CACHE_MISSES);
        }
        json_object_put(status);
        ret->known = found;
        return found ? 0 : -ENOENT;
}

/* Looks until two looks SETTLE_STEP_USEC apart agree: the last compiles'
 * counters reach the daemon through inotify, a moment after the build. */
static int daemon_figures_settled(const Measure *m, Figures *ret) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + SETTLE_MAX_USEC;
        Figures prev;

        if (daemon_figures(m, &prev) < 0)
                return -1;
        for (;;) {
                struct timespec ts = { 0, (long) SETTLE_STEP_USEC * 1000 };

                nanosleep(&ts, NULL);
                if (daemon_figures(m, ret) < 0)
                        return -1;
                if ((ret->hits == prev.hits && ret->misses == prev.misses) || now_usec(CLOCK_MONOTONIC) >= deadline)
                        return 0;
                prev = *ret;
        }
}

/* The daemon's answer to "which of these keys left cache_dir?"
 * (explain.h's ExplainAsk): its cache whose path is cache_dir, asked in
 * batches that fit a request line. */
#define EVICTIONS_BATCH ((PROTOCOL_REQUEST_MAX - 128) / (PROTOCOL_EVICTIONS_KEY_MAX + 3))
static int ask_evictions(void *userdata, const char *cache_dir, const char *const *keys, size_t n,
                         ExplainEviction *out, char *cache) {
        json_object *status = NULL;
        const char *name = NULL;
        int r;

        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        if (r <= 0) {
                ctl_quiet = false;
                return 0;
        }
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES) && !name; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);
                char real[PATH_MAX];

                if (path && realpath(path, real) && strcmp(real, cache_dir) == 0)
                        name = protocol_field_str(c, STATUS_CACHE_NAME);
        }
        if (!name) {
                json_object_put(status);
                ctl_quiet = false;
                return 0;   /* a cache the daemon does not keep */
        }
        snprintf(cache, 64, "%s", name);
        for (size_t i = 0; i < n; i++)
                out[i] = (ExplainEviction) { .since = -1 };
        for (size_t at = 0; at < n && r > 0; at += EVICTIONS_BATCH) {
                size_t m = n - at < EVICTIONS_BATCH ? n - at : EVICTIONS_BATCH;
                ProtocolEvictions req = { .cache = name, .keys = (const char **) keys + at, .n_keys = m };
                json_object *result = NULL, *found;

                r = ctl_ask(protocol_encode_evictions(&req), NULL, &result);
                if (r <= 0 || !json_object_object_get_ex(result, PROTOCOL_EVICTIONS_KEYS, &found)) {
                        json_object_put(result);
                        break;
                }
                for (size_t j = 0; j < m; j++) {
                        json_object *k, *since, *by;

                        if (!json_object_object_get_ex(found, keys[at + j], &k))
                                continue;
                        if (json_object_object_get_ex(k, PROTOCOL_EVICTION_SINCE, &since))
                                out[at + j].since = json_object_get_int64(since);
                        if (json_object_object_get_ex(k, PROTOCOL_EVICTION_BY, &by) && by)
                                snprintf(out[at + j].by, sizeof(out[at + j].by), "%s", json_object_get_string(by));
                }
                json_object_put(result);
        }
        ctl_quiet = false;
        json_object_put(status);
        (void) userdata;
        return r > 0 ? 1 : 0;
}

/* Runs the command with ccache's per-build log (and debug records) in our
 * private directory. Returns its wait status, or -errno when it could not
 * be started. Interrupts reach the build (its process group is ours); we
 * wait for it and report. */
static int run(const Measure *m) {
        char log[4200], debug[4200];
        struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
        int status, pipefd[2], e = 0;
        pid_t pid;

        snprintf(log, sizeof(log), "%s/stats.log", m->dir);
        snprintf(debug, sizeof(debug), "%s/debug", m->dir);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        sigaction(SIGINT, &ign, &old_int);
        sigaction(SIGQUIT, &ign, &old_quit);
        pid = fork();
        if (pid < 0) {
                e = -errno;
                goto out;
        }
        if (pid == 0) {
                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGQUIT, &old_quit, NULL);
                close(pipefd[0]);
                /* --json: our stdout is the JSON, the build's output goes to stderr */
                if (m->json && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(126);
                setenv("CCACHE_STATSLOG", log, 1);
                if (m->explain) {
                        setenv("CCACHE_DEBUG", "1", 1);
                        setenv("CCACHE_DEBUGDIR", debug, 1);
                }
                execvp(m->command[0], m->command);
                e = errno;
                (void) !write(pipefd[1], &e, sizeof(e));
                _exit(127);
        }
        close(pipefd[1]);
        pipefd[1] = -1;
        if (read(pipefd[0], &e, sizeof(e)) == sizeof(e))
                e = -e;   /* exec failed */
        else
                e = 0;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        e = -errno;
                        break;
                }
out:
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        close(pipefd[0]);
        if (pipefd[1] >= 0)
                close(pipefd[1]);
        return e < 0 ? e : status;
}

static int command_exit(int status) {
        return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/* "95", "95%", "99.5": a percentage. */
static int parse_rate(const char *s, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || (*end && strcmp(end, "%") != 0) || !isfinite(v) || v < 0 || v > 100)
                return -EINVAL;
        *ret = v / 100;
        return 0;
}

static char *command_line(char **argv) {
        size_t len = 1;
        char *s;

        for (char **a = argv; *a; a++)
                len += strlen(*a) + 1;
        s = calloc(1, len);
        for (char **a = argv; s && *a; a++) {
                if (a != argv)
                        strcat(s, " ");
                strcat(s, *a);
        }
        return s;
}

typedef struct Reason {
        const char *id;
        uint64_t n;
} Reason;

/* Counts the uncacheable calls by ccache's id; returns how many ids. */
static size_t reasons(const StatsLog *l, Reason *out, size_t max) {
        size_t n = 0;

        for (size_t i = 0; i < l->n; i++) {
                const char *id = l->calls[i].reason;
                size_t j;

                if (l->calls[i].outcome != STATS_UNCACHEABLE || !id)
                        continue;
                for (j = 0; j < n && strcmp(out[j].id, id) != 0; j++)
                        ;
                if (j == n) {
                        if (n == max)
                                continue;
                        out[n++] = (Reason) { .id = id };
                }
                out[j].n++;
        }
        return n;
}

static void print_text(const Measure *m, const StatsLog *l, const StatsSummary *s, const Figures *before,
                       const Figures *after, const Explained *ex, double seconds, int status, bool fallback,
                       double rate) {
        char *cmd = command_line(m->command);
        Reason rs[64];
        size_t nr, shown = 0, total_missed;
        bool tty = isatty(STDOUT_FILENO);

        if (WIFSIGNALED(status))
                printf("%s: %.1f s, killed by signal %d\n", cmd ? cmd : m->command[0], seconds, WTERMSIG(status));
        else
                printf("%s: %.1f s, exit status %d\n", cmd ? cmd : m->command[0], seconds, command_exit(status));
        free(cmd);
        if (fallback) {
                printf("No ccache call of this build reached its statistics log (the build ran where this\n"
                       "environment does not reach: a container?). From the daemon's figures of %s%s\n"
                       "over the command's run instead, which include every other build in that window:\n",
                       m->cache ? "cache " : "all caches", m->cache ? m->cache : "");
                printf("  Hits          %8llu\n  Misses        %8llu\n",
                       (unsigned long long) (after->hits - before->hits),
                       (unsigned long long) (after->misses - before->misses));
                if (rate >= 0)
                        printf("  Hit rate      %7.1f %%\n", rate * 100);
                return;
        }
        printf("  Cacheable calls %6llu\n", (unsigned long long) s->cacheable);
        printf("    Hits          %6llu", (unsigned long long) s->hits);
        if (rate >= 0)
                printf("   %5.1f %%", rate * 100);
        printf("   (direct %llu, preprocessed %llu, remote %llu)\n", (unsigned long long) s->direct_hits,
               (unsigned long long) s->preprocessed_hits, (unsigned long long) s->remote_hits);
        printf("    Misses        %6llu\n", (unsigned long long) s->misses);
        nr = reasons(l, rs, 64);
        printf("  Uncacheable     %6llu", (unsigned long long) s->uncacheable);
        for (size_t i = 0; i < nr; i++)
                printf("%s%s %llu", i ? ", " : "   (", rs[i].id, (unsigned long long) rs[i].n);
        printf("%s\n", nr ? ")" : "");
        if (ex && ex->n > 0) {
                char fix[1024];

                printf("Why they missed:\n");
                for (int c = 0; c < _CAUSE_MAX; c++) {
                        const char *f;

                        char line[1400];

                        if (ex->counts[c] == 0)
                                continue;
                        f = explain_cause_fix((ExplainCause) c, ex, fix, sizeof(fix));
                        snprintf(line, sizeof(line), "  %-16s %5zu%s%s", explain_cause_name((ExplainCause) c),
                                 ex->counts[c],
                                 c == CAUSE_INCLUDE ? "   a real change: correctly recompiled"
                                 : c == CAUSE_FIRST_BUILD ? "   nothing to compare with yet: explain the next build"
                                 : c == CAUSE_CONFIG ? "   a changed setting: expected once"
                                 : f ? "   fix: " : "",
                                 c == CAUSE_INCLUDE || c == CAUSE_FIRST_BUILD || c == CAUSE_CONFIG || !f ? "" : f);
                        print_wrapped(stdout, line, HUMAN_WIDTH, 28);
                }
        }
        total_missed = ex ? ex->n : s->misses;
        if (total_missed == 0)
                return;
        printf("Missed (%zu):\n", total_missed);
        if (ex) {
                for (size_t i = 0; i < ex->n && (!tty || shown < MISSED_SHOWN); i++, shown++) {
                        char line[8192];

                        snprintf(line, sizeof(line), "  %s   %s: %s", ex->misses[i].source,
                                 explain_cause_name(ex->misses[i].cause), ex->misses[i].detail);
                        print_wrapped(stdout, line, HUMAN_WIDTH, 4);
                }
        } else {
                for (size_t i = 0; i < l->n && (!tty || shown < MISSED_SHOWN); i++)
                        if (l->calls[i].outcome == STATS_MISS) {
                                printf("  %s\n", l->calls[i].input);
                                shown++;
                        }
        }
        if (shown < total_missed)
                printf("  ... and %zu more (--json lists all)\n", total_missed - shown);
}

static json_object *json_u64_or_null(bool known, uint64_t v) {
        return known ? json_object_new_uint64(v) : NULL;
}

static void print_json(const Measure *m, const StatsLog *l, const StatsSummary *s, const Figures *before,
                       const Figures *after, const Explained *ex, double seconds, int status, bool fallback,
                       double rate) {
        json_object *o = json_object_new_object(), *cmd = json_object_new_array(), *calls = json_object_new_object(),
                    *unc = json_object_new_object(), *missed = json_object_new_array();
        uint64_t hits = fallback ? after->hits - before->hits : s->hits;
        uint64_t misses = fallback ? after->misses - before->misses : s->misses;
        Reason rs[64];
        size_t nr;

        for (char **a = m->command; *a; a++)
                json_object_array_add(cmd, json_object_new_string(*a));
        json_object_object_add(o, "command", cmd);
        json_object_object_add(o, "exit_status", json_object_new_int(command_exit(status)));
        {
                char text[32];

                snprintf(text, sizeof(text), "%.3f", seconds);
                json_object_object_add(o, "seconds", json_object_new_double_s(seconds, text));   /* not a status key: measure's JSON */
        }
        json_object_object_add(o, "source", json_object_new_string(fallback ? "daemon" : "statslog"));
        if (fallback && m->cache)
                json_object_object_add(o, "cache", json_object_new_string(m->cache));
        json_object_object_add(calls, "cacheable", json_object_new_uint64(hits + misses));
        json_object_object_add(calls, "hits", json_object_new_uint64(hits));   /* not a status key: measure's JSON */
        json_object_object_add(calls, "direct_hits", json_u64_or_null(!fallback, s->direct_hits));
        json_object_object_add(calls, "preprocessed_hits", json_u64_or_null(!fallback, s->preprocessed_hits));
        json_object_object_add(calls, "remote_hits", json_u64_or_null(!fallback, s->remote_hits));
        json_object_object_add(calls, "misses", json_object_new_uint64(misses));   /* not a status key: measure's JSON */
        nr = fallback ? 0 : reasons(l, rs, 64);
        for (size_t i = 0; i < nr; i++)
                json_object_object_add(unc, rs[i].id, json_object_new_uint64(rs[i].n));
        json_object_object_add(calls, "uncacheable", fallback ? (json_object_put(unc), NULL) : unc);
        json_object_object_add(o, "calls", calls);
        if (rate >= 0) {
                char text[32];

                snprintf(text, sizeof(text), "%.4f", rate);
                json_object_object_add(o, "hit_rate", json_object_new_double_s(rate, text));
        } else
                json_object_object_add(o, "hit_rate", NULL);
        if (ex) {
                json_object *causes = json_object_new_array();

                for (size_t i = 0; i < ex->n; i++) {
                        json_object *e = json_object_new_object();

                        json_object_object_add(e, "source", json_object_new_string(ex->misses[i].source));
                        json_object_object_add(e, "cause",
                                               json_object_new_string(explain_cause_name(ex->misses[i].cause)));
                        json_object_object_add(e, "detail", json_object_new_string(ex->misses[i].detail));
                        json_object_object_add(e, "object",
                                               ex->misses[i].object ? json_object_new_string(ex->misses[i].object) : NULL);
                        json_object_object_add(e, "since", ex->misses[i].since >= 0
                                                                   ? json_object_new_int64(ex->misses[i].since)
                                                                   : NULL);
                        json_object_object_add(e, "by", ex->misses[i].by ? json_object_new_string(ex->misses[i].by) : NULL);
                        json_object_array_add(missed, e);
                }
                for (int c = 0; c < _CAUSE_MAX; c++) {
                        json_object *e;
                        char fix[1024];
                        const char *f;

                        if (ex->counts[c] == 0)
                                continue;
                        e = json_object_new_object();
                        f = explain_cause_fix((ExplainCause) c, ex, fix, sizeof(fix));
                        json_object_object_add(e, "cause", json_object_new_string(explain_cause_name((ExplainCause) c)));
                        json_object_object_add(e, "count", json_object_new_uint64(ex->counts[c]));
                        json_object_object_add(e, "fix", f ? json_object_new_string(f) : NULL);
                        json_object_array_add(causes, e);
                }
                json_object_object_add(o, "missed", missed);
                json_object_object_add(o, "causes", causes);
        } else {
                for (size_t i = 0; !fallback && i < l->n; i++)
                        if (l->calls[i].outcome == STATS_MISS) {
                                json_object *e = json_object_new_object();

                                json_object_object_add(e, "source", json_object_new_string(l->calls[i].input));
                                json_object_array_add(missed, e);
                        }
                json_object_object_add(o, "missed", missed);
        }
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}

const struct option measure_options[] = {
        { "explain", no_argument, NULL, 'e' },
        { "min-hit-rate", required_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        {},
};

int cmd_measure(int argc, char **argv) {
        Measure m = { .min_hit_rate = -1 };
        StatsLog l = { 0 };
        StatsSummary s = { 0 };
        Explained ex = { 0 };
        Figures before = { 0 }, after = { 0 };
        char log[4200], debug[4200], store[4096];
        const char *tmp = getenv("TMPDIR");
        bool fallback = false, have_explained = false;
        int dashdash = -1, status, c, r, ret;
        double rate = -1;
        usec_t start, end;

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0) {
                        dashdash = i;
                        break;
                }
        if (dashdash < 0 || dashdash + 1 >= argc)
                return ctl_usage_error("measure runs a build: cachectl measure [CACHE] [--explain] "
                                       "[--min-hit-rate P] [--json] -- COMMAND [ARGS...]");
        while ((c = getopt_long(dashdash, argv, "", measure_options, NULL)) >= 0)
                switch (c) {
                case 'e': m.explain = true; break;
                case 'j': m.json = true; break;
                case 'm':
                        if (parse_rate(optarg, &m.min_hit_rate) < 0)
                                return ctl_usage_error("--min-hit-rate takes a percentage from 0 to 100 "
                                                       "(95, or 95%%), not '%s'", optarg);
                        break;
                default:
                        return ctl_usage_error("usage: cachectl measure [CACHE] [--explain] [--min-hit-rate P] "
                                               "[--json] -- COMMAND [ARGS...]");
                }
        if (dashdash - optind > 1)
                return ctl_usage_error("measure takes at most one cache name before --");
        m.cache = optind < dashdash ? argv[optind] : NULL;
        m.command = argv + dashdash + 1;   /* main's argv: NULL after the last */

        snprintf(m.dir, sizeof(m.dir), "%s/cachectl-measure.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
        if (!mkdtemp(m.dir)) {
                fprintf(stderr, "cachectl: cannot make a private directory for the build's statistics: %m\n");
                return CTL_EXIT_REFUSED;
        }
        if (m.explain && (r = explain_store_dir(store, sizeof(store))) < 0) {
                fprintf(stderr, "cachectl: cannot keep what --explain compares with (under $XDG_CACHE_HOME or "
                                "~/.cache): %s\n", strerror(-r));
                statslog_dir_remove(m.dir);
                return CTL_EXIT_REFUSED;
        }
        /* For the fallback only: a stopped daemon must not hold the build
         * back for long (an absent one answers at once). */
        {
                usec_t t = ctl_timeout_usec;

                ctl_timeout_usec = t < MEASURE_ASK_USEC ? t : MEASURE_ASK_USEC;
                (void) daemon_figures(&m, &before);
                ctl_timeout_usec = t;
        }
        start = now_usec(CLOCK_MONOTONIC);
        status = run(&m);
        end = now_usec(CLOCK_MONOTONIC);
        if (status < 0) {
                fprintf(stderr, "cachectl: cannot run %s: %s\n", m.command[0], strerror(-status));
                statslog_dir_remove(m.dir);
                return status == -ENOENT ? 127 : 126;
        }
        snprintf(log, sizeof(log), "%s/stats.log", m.dir);
        r = statslog_read(log, &l);
        if (r < 0) {
                fprintf(stderr, "cachectl: cannot read the build's statistics log %s: %s\n", log, strerror(-r));
                statslog_dir_remove(m.dir);
                return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? CTL_EXIT_REFUSED : command_exit(status);
        }
        statslog_summarize(&l, &s);
        if (l.n == 0) {
                /* Nothing reached the log: the daemon's view, if it has one. */
                if (before.known && daemon_figures_settled(&m, &after) == 0 && after.hits >= before.hits &&
                    after.misses >= before.misses)
                        fallback = true;
                else if (!m.json)
                        fprintf(stderr, "cachectl: no ccache call of this build reached its statistics log, and "
                                        "cachekeeperd %s: nothing to measure by.\n",
                                before.known ? "lost track of the cache meanwhile" : "cannot be asked either");
        }
        if (m.explain && !fallback) {
                snprintf(debug, sizeof(debug), "%s/debug", m.dir);
                r = explain_run(debug, store, ask_evictions, NULL, (int64_t) time(NULL), &ex);
                if (r < 0)
                        fprintf(stderr, "cachectl: cannot explain the misses: %s\n", strerror(-r));
                have_explained = r == 0;
        }
        if (fallback) {
                uint64_t h = after.hits - before.hits, mi = after.misses - before.misses;

                rate = h + mi > 0 ? (double) h / (double) (h + mi) : -1;
        } else if (s.cacheable > 0)
                rate = (double) s.hits / (double) s.cacheable;
        if (m.json)
                print_json(&m, &l, &s, &before, &after, have_explained ? &ex : NULL,
                           (double) (end - start) / USEC_PER_SEC, status, fallback, rate);
        else
                print_text(&m, &l, &s, &before, &after, have_explained ? &ex : NULL,
                           (double) (end - start) / USEC_PER_SEC, status, fallback, rate);
        ret = command_exit(status);
        if (ret == 0 && m.min_hit_rate >= 0 && (rate < 0 || rate < m.min_hit_rate)) {
                if (rate < 0)
                        fprintf(stderr, "cachectl: no cacheable call, so no hit rate to hold to --min-hit-rate "
                                        "%.1f %%\n", m.min_hit_rate * 100);
                else
                        fprintf(stderr, "cachectl: the hit rate %.1f %% is below --min-hit-rate %.1f %%\n",
                                rate * 100, m.min_hit_rate * 100);
                ret = MEASURE_EXIT_BELOW;
        }
        statslog_done(&l);
        explained_done(&ex);
        statslog_dir_remove(m.dir);
        return ret;
}
