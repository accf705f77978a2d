/* SPDX-License-Identifier: MIT */
/* cachectl measure (measure.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/text.h"
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
/* `ccache -k cache_dir` answers one path: more is not read. */
#define CACHE_DIR_ASK_MAX_BYTES 8192

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

/* Asks the daemon quietly: no daemon is no error (measure needs none).
 * Returns its status, or NULL. */
static json_object *daemon_status(void) {
        json_object *status = NULL;
        int r;

        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        ctl_quiet = false;
        return r > 0 ? status : NULL;
}

/* The counters of the cache named name in status. Returns 0 or -ENOENT. */
static int cache_figures(json_object *status, const char *name, Figures *ret) {
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *n = protocol_field_str(c, STATUS_CACHE_NAME);

                if (n && strcmp(n, name) == 0) {
                        *ret = (Figures) { .hits = protocol_field_u64(c, STATUS_CACHE_HITS),
                                           .misses = protocol_field_u64(c, STATUS_CACHE_MISSES) };
                        return 0;
                }
        }
        return -ENOENT;
}

static int cache_figures_now(const char *name, Figures *ret) {
        json_object *status = daemon_status();
        int r = status ? cache_figures(status, name, ret) : -ECONNREFUSED;

        json_object_put(status);
        return r;
}

/* Looks until two looks SETTLE_STEP_USEC apart agree: the last compiles'
 * counters reach the daemon through inotify, a moment after the build. */
static int cache_figures_settled(const char *name, Figures *ret) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + SETTLE_MAX_USEC;
        Figures prev;

        if (cache_figures_now(name, &prev) < 0)
                return -1;
        for (;;) {
                struct timespec ts = { 0, (long) SETTLE_STEP_USEC * 1000 };

                nanosleep(&ts, NULL);
                if (cache_figures_now(name, ret) < 0)
                        return -1;
                if ((ret->hits == prev.hits && ret->misses == prev.misses) || now_usec(CLOCK_MONOTONIC) >= deadline)
                        return 0;
                prev = *ret;
        }
}

/* ccache's own answer to where the build's cache is: `ccache -k
 * cache_dir` in the build's environment (its config files,
 * CCACHE_CONFIGPATH, XDG_CACHE_HOME, the legacy ~/.ccache all weighed as
 * ccache weighs them). Returns a new string, or NULL when ccache cannot be
 * run here or answers no absolute path. */
static char *ccache_cache_dir(void) {
        char buf[CACHE_DIR_ASK_MAX_BYTES];
        int pipefd[2], status = 0;
        size_t len = 0;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return NULL;
        pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0 ||
                    dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                execlp("ccache", "ccache", "-k", "cache_dir", (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        while (pid > 0 && len < sizeof(buf) - 1) {
                ssize_t n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        close(pipefd[0]);
        if (pid < 0)
                return NULL;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return NULL;
        buf[len] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf[0] == '/' ? strdup(buf) : NULL;
}

/* Whether a and b name the same directory: the same inode, so that a
 * symlinked or bind-mounted spelling of a cache is that cache; where
 * either cannot be looked at, the same spelling. */
static bool same_dir(const char *a, const char *b) {
        struct stat sa, sb;

        if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
                return S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
        return strcmp(a, b) == 0;
}

/* Which of the daemon's caches (status, NULL when it cannot be asked) the
 * build uses: the CACHE argument; else the one at the build's CCACHE_DIR;
 * else the one at ccache's cache_dir as ccache resolves it. Never all. */
static void build_cache(const Measure *m, json_object *status, BuildCache *ret) {
        const char *env = getenv("CCACHE_DIR");

        *ret = (BuildCache) { 0 };
        if (!m->cache && env && *env) {
                ret->dir = strdup(env);
                ret->from = "the build's CCACHE_DIR";
        } else if (!m->cache) {
                ret->dir = ccache_cache_dir();
                ret->from = "ccache's cache_dir";
        }
        for (size_t i = 0; status && i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *name = protocol_field_str(c, STATUS_CACHE_NAME);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);

                if (name && (m->cache ? strcmp(name, m->cache) == 0 : ret->dir && path && same_dir(ret->dir, path))) {
                        ret->name = strdup(name);
                        return;
                }
        }
}

/* No call of the build reached its log: nothing was compiled, unless the
 * daemon saw the build's cache used meanwhile (the build ran where this
 * environment does not reach; the cache's figures over the run stand in).
 * before: the daemon's status before the run, or NULL. Sets m->source. */
static void judge_silent_build(Measure *m, json_object *before) {
        const char *name;
        int r;

        build_cache(m, before, &m->bc);
        name = m->bc.name;
        m->source = m->cache ? SOURCE_UNKNOWN : SOURCE_NOTHING;   /* until the cache is looked at */
        if (!before)
                r = asprintf(&m->unchecked, "cachekeeperd cannot be asked");
        else if (m->cache && !name)
                r = asprintf(&m->unchecked, "cachekeeperd keeps no cache %s", m->cache);
        else if (!name && m->bc.dir)
                r = asprintf(&m->unchecked, "its cache, %s (%s), is none cachekeeperd keeps", m->bc.dir, m->bc.from);
        else if (!name)
                r = asprintf(&m->unchecked, "where its cache is is not known (CCACHE_DIR is unset, and ccache cannot "
                                            "be asked here)");
        else if (cache_figures(before, name, &m->before) < 0 || cache_figures_settled(name, &m->after) < 0)
                r = asprintf(&m->unchecked, "cachekeeperd lost track of cache %s meanwhile", name);
        else if (m->after.hits == m->before.hits && m->after.misses == m->before.misses) {
                m->source = SOURCE_NOTHING;
                return;
        } else if (m->after.hits < m->before.hits || m->after.misses < m->before.misses)
                r = asprintf(&m->unchecked, "the counters of cache %s went down meanwhile (zeroed?)", name);
        else {
                m->source = SOURCE_DAEMON;
                return;
        }
        if (r < 0)
                m->unchecked = NULL;
}

/* The daemon's answer to "which of these keys left cache_dir?"
 * (explain.h's ExplainAsk): its cache whose path is cache_dir, asked in
 * batches that fit a request line. */
#define EVICTIONS_BATCH ((PROTOCOL_REQUEST_MAX - 128) / (PROTOCOL_EVICTIONS_KEY_MAX + 3))
/* Why the daemon could not be asked which entries it evicted ("" when it
 * was, or never needed): said once, after the explanation. */
static char evictions_unasked[CTL_PROBLEM_MAX];
static int ask_evictions(void *userdata, const char *cache_dir, const char *const *keys, size_t n,
                         ExplainEviction *out, char *cache) {
        json_object *status = NULL;
        const char *name = NULL;
        int r;

        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        if (r <= 0) {
                snprintf(evictions_unasked, sizeof(evictions_unasked), "%s", ctl_problem);
                ctl_quiet = false;
                return 0;
        }
        /* By its path, or in a container where the cache is mounted
         * elsewhere (-v /var/cache/x:/ccache) by its root's device and inode. */
        struct stat st;
        char id[48] = "";
        if (stat(cache_dir, &st) == 0)
                snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES) && !name; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);
                const char *root_id = protocol_field_str(c, STATUS_CACHE_ROOT_ID);
                char real[PATH_MAX];

                if ((path && realpath(path, real) && strcmp(real, cache_dir) == 0) ||
                    (root_id && id[0] && strcmp(root_id, id) == 0))
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

/* argv as a shell would need it typed (sh -c 'a b'): a word of only
 * characters no shell treats specially as it is, any other in single
 * quotes (a quote in it as '\''), an empty one as ''. Not yet escaped for
 * a terminal. Returns a new string, or NULL out of memory. */
static char *command_line(char **argv) {
        static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./-_";
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        if (!f)
                return NULL;
        for (char **a = argv; *a; a++) {
                if (a != argv)
                        fputc(' ', f);
                if (**a && strspn(*a, plain) == strlen(*a)) {
                        fputs(*a, f);
                        continue;
                }
                fputc('\'', f);
                for (const char *p = *a; *p; p++)
                        fputs(*p == '\'' ? "'\\''" : (char[]) { *p, '\0' }, f);
                fputc('\'', f);
        }
        if (fclose(f) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* Prose: wrapped at 80 columns on a terminal, one line otherwise (for grep
 * and logs), the lines after the first indented by indent. Names in it
 * are the caller's to escape. */
_printf_(3, 4)
static void say(bool tty, size_t indent, const char *fmt, ...) {
        char *line = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        if (tty)
                print_wrapped(stdout, line, HUMAN_WIDTH, indent);
        else
                printf("%s\n", line);
        free(line);
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

/* " (/var/cache/ccache, the build's CCACHE_DIR)": how the build's cache was
 * found, escaped; "" when it was named. Returns a new string or NULL. */
static char *cache_whence(const BuildCache *bc) {
        _cleanup_free_ char *dir = bc->dir ? text_escaped(bc->dir) : NULL;
        char *s;

        if (!dir || asprintf(&s, " (%s, %s)", dir, bc->from) < 0)
                return strdup("");
        return s;
}

/* The command, how long it took, how it ended: the first line. */
static void print_header(const Measure *m, double seconds, int status) {
        _cleanup_free_ char *line = command_line(m->command);
        _cleanup_free_ char *cmd = text_escaped(line ? line : m->command[0]);

        if (WIFSIGNALED(status))
                printf("%s: %.1f s, killed by signal %d\n", cmd ?: "?", seconds, WTERMSIG(status));
        else
                printf("%s: %.1f s, exit status %d\n", cmd ?: "?", seconds, command_exit(status));
}

/* No call reached the log: what the daemon saw of the build's cache. */
static void print_silent(const Measure *m, bool tty) {
        _cleanup_free_ char *name = m->bc.name ? text_escaped(m->bc.name) : NULL;
        _cleanup_free_ char *whence = cache_whence(&m->bc);
        _cleanup_free_ char *why = m->unchecked ? text_escaped(m->unchecked) : NULL;

        if (m->source == SOURCE_NOTHING && !m->unchecked)
                say(tty, 2, "Nothing was compiled: no ccache call reached this build's statistics log, and "
                            "cachekeeperd saw none meanwhile in the build's cache, %s%s.", name ?: "?", whence ?: "");
        else if (m->source == SOURCE_NOTHING)
                say(tty, 2, "Nothing was compiled: no ccache call reached this build's statistics log (%s, so "
                            "calls made out of its sight could not be looked for).", why ?: "?");
        if (m->source != SOURCE_DAEMON)
                return;
        say(tty, 0, "No ccache call of this build reached its statistics log, but cachekeeperd saw calls meanwhile "
                    "in the build's cache, %s%s: the build ran where this environment does not reach (a container?). "
                    "From the daemon's figures of cache %s over the command's run instead, which include every "
                    "other build in that window:", name ?: "?", whence ?: "", name ?: "?");
        printf("  Hits          %8llu\n  Misses        %8llu\n",
               (unsigned long long) (m->after.hits - m->before.hits),
               (unsigned long long) (m->after.misses - m->before.misses));
        if (m->rate >= 0)
                printf("  Hit rate      %7.1f %%\n", m->rate * 100);
}

/* The build's own calls, from its log. */
static void print_calls(const Measure *m, const StatsLog *l, const StatsSummary *s) {
        Reason rs[64];
        size_t nr;

        printf("  Cacheable calls %6llu", (unsigned long long) s->cacheable);
        if (s->cacheable == 0)
                printf("   %s", s->recache ? "recaches only: no hit rate"
                                           : "nothing was compiled that the cache could serve: no hit rate");
        printf("\n    Hits          %6llu", (unsigned long long) s->hits);
        if (m->rate >= 0)
                printf("   %5.1f %%", m->rate * 100);
        printf("   (direct %llu, preprocessed %llu, remote %llu)\n", (unsigned long long) s->direct_hits,
               (unsigned long long) s->preprocessed_hits, (unsigned long long) s->remote_hits);
        printf("    Misses        %6llu\n", (unsigned long long) s->misses);
        if (s->recache)
                printf("  Recache         %6llu   (CCACHE_RECACHE: stored anew without a lookup; "
                       "not in the hit rate)\n", (unsigned long long) s->recache);
        nr = reasons(l, rs, 64);
        printf("  Uncacheable     %6llu", (unsigned long long) s->uncacheable);
        for (size_t i = 0; i < nr; i++)
                printf("%s%s %llu", i ? ", " : "   (", rs[i].id, (unsigned long long) rs[i].n);
        printf("%s\n", nr ? ")" : "");
}

static void print_text(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
                       double seconds, int status) {
        size_t shown = 0, total_missed;
        bool tty = isatty(STDOUT_FILENO);

        print_header(m, seconds, status);
        if (m->source == SOURCE_UNKNOWN)
                return;   /* said on stderr */
        if (m->source != SOURCE_STATSLOG) {
                print_silent(m, tty);
                return;
        }
        print_calls(m, l, s);
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
                        {
                                _cleanup_free_ char *shown_line = text_escaped(line);   /* the fix names paths */

                                say(tty, 28, "%s", shown_line ?: line);
                        }
                }
        }
        total_missed = ex ? ex->n : s->misses;
        if (total_missed == 0)
                return;
        printf("Missed (%zu):\n", total_missed);
        if (ex) {
                /* one line each, never wrapped: grep finds a source with its cause */
                for (size_t i = 0; i < ex->n && (!tty || shown < MISSED_SHOWN); i++, shown++) {
                        printf("  ");
                        text_put(stdout, ex->misses[i].source);
                        printf("   %s: ", explain_cause_name(ex->misses[i].cause));
                        text_put(stdout, ex->misses[i].detail);
                        putchar('\n');
                }
        } else {
                for (size_t i = 0; i < l->n && (!tty || shown < MISSED_SHOWN); i++)
                        if (l->calls[i].outcome == STATS_MISS) {
                                printf("  ");
                                text_put(stdout, l->calls[i].input);
                                putchar('\n');
                                shown++;
                        }
        }
        if (shown < total_missed)
                printf("  ... and %zu more (--json lists all)\n", total_missed - shown);
}

static json_object *json_u64_or_null(bool known, uint64_t v) {
        return known ? json_object_new_uint64(v) : NULL;
}

static void print_json(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
                       double seconds, int status) {
        json_object *o = json_object_new_object(), *cmd = json_object_new_array(), *calls = json_object_new_object(),
                    *unc = json_object_new_object(), *missed = json_object_new_array();
        bool fallback = m->source == SOURCE_DAEMON;
        uint64_t hits = fallback ? m->after.hits - m->before.hits : s->hits;
        uint64_t misses = fallback ? m->after.misses - m->before.misses : s->misses;
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
        /* the cache whose figures were looked at: the fallback's, or the one that saw nothing */
        json_object_object_add(o, "cache", m->bc.name && (fallback || (m->source == SOURCE_NOTHING && !m->unchecked))
                                                   ? json_object_new_string(m->bc.name) : NULL);
        json_object_object_add(calls, "cacheable", json_object_new_uint64(hits + misses));
        json_object_object_add(calls, "hits", json_object_new_uint64(hits));   /* not a status key: measure's JSON */
        json_object_object_add(calls, "direct_hits", json_u64_or_null(!fallback, s->direct_hits));
        json_object_object_add(calls, "preprocessed_hits", json_u64_or_null(!fallback, s->preprocessed_hits));
        json_object_object_add(calls, "remote_hits", json_u64_or_null(!fallback, s->remote_hits));
        json_object_object_add(calls, "misses", json_object_new_uint64(misses));   /* not a status key: measure's JSON */
        json_object_object_add(calls, "recache", json_u64_or_null(!fallback, s->recache));
        nr = fallback ? 0 : reasons(l, rs, 64);
        for (size_t i = 0; i < nr; i++)
                json_object_object_add(unc, rs[i].id, json_object_new_uint64(rs[i].n));
        json_object_object_add(calls, "uncacheable", fallback ? (json_object_put(unc), NULL) : unc);
        json_object_object_add(o, "calls", calls);
        if (m->rate >= 0) {
                char text[32];

                snprintf(text, sizeof(text), "%.4f", m->rate);
                json_object_object_add(o, "hit_rate", json_object_new_double_s(m->rate, text));
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

/* The hit rate (0..1) of the build's calls, or of its cache over the
 * run in the fallback; -1 when nothing the cache could serve was called
 * (recaches are neither hits nor misses). */
static double hit_rate(const Measure *m, const StatsSummary *s) {
        uint64_t h = s->hits, n = s->cacheable;

        if (m->source == SOURCE_DAEMON) {
                h = m->after.hits - m->before.hits;
                n = h + (m->after.misses - m->before.misses);
        }
        return n > 0 ? (double) h / (double) n : -1;
}

/* Whether --min-hit-rate fails the build (said on stderr). A build that
 * compiled nothing has no rate and passes; one whose calls could not be
 * counted at all fails. */
static bool below_gate(const Measure *m) {
        if (m->min_hit_rate < 0)
                return false;
        if (m->rate >= 0 && m->rate < m->min_hit_rate)
                fprintf(stderr, "cachectl: the hit rate %.1f %% is below --min-hit-rate %.1f %%\n", m->rate * 100,
                        m->min_hit_rate * 100);
        else if (m->rate < 0 && m->source == SOURCE_UNKNOWN)
                fprintf(stderr, "cachectl: no figures to hold to --min-hit-rate %.1f %%\n", m->min_hit_rate * 100);
        else
                return false;
        return true;
}

/* The named cache could not be looked at: nothing to measure by. */
static void say_unknown(const Measure *m) {
        fprintf(stderr, "cachectl: no ccache call of this build reached its statistics log, and ");
        text_put(stderr, m->unchecked ?: "cachekeeperd cannot say");
        fprintf(stderr, ": nothing to measure by.\n");
}

static void measure_done(Measure *m) {
        free(m->bc.name);
        free(m->bc.dir);
        free(m->unchecked);
}

const struct option measure_options[] = {
        { "explain", no_argument, NULL, 'e' },
        { "min-hit-rate", required_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        {},
};

int cmd_measure(int argc, char **argv) {
        Measure m = { .min_hit_rate = -1, .rate = -1 };
        StatsLog l = { 0 };
        StatsSummary s = { 0 };
        Explained ex = { 0 };
        json_object *before = NULL;
        char log[4200], debug[4200], store[4096];
        const char *tmp = getenv("TMPDIR");
        bool have_explained = false;
        int dashdash = -1, status, c, r, ret;
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
         * back for long (an absent one answers at once). Which of its
         * caches the build uses is asked only if the fallback is needed. */
        {
                usec_t t = ctl_timeout_usec;

                ctl_timeout_usec = t < MEASURE_ASK_USEC ? t : MEASURE_ASK_USEC;
                before = daemon_status();
                ctl_timeout_usec = t;
        }
        start = now_usec(CLOCK_MONOTONIC);
        status = run(&m);
        end = now_usec(CLOCK_MONOTONIC);
        if (status < 0) {
                fprintf(stderr, "cachectl: cannot run ");
                text_put(stderr, m.command[0]);
                fprintf(stderr, ": %s\n", strerror(-status));
                json_object_put(before);
                statslog_dir_remove(m.dir);
                return status == -ENOENT ? 127 : 126;
        }
        snprintf(log, sizeof(log), "%s/stats.log", m.dir);
        r = statslog_read(log, &l);
        if (r < 0) {
                fprintf(stderr, "cachectl: cannot read the build's statistics log %s: %s\n", log, strerror(-r));
                json_object_put(before);
                statslog_dir_remove(m.dir);
                return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? CTL_EXIT_REFUSED : command_exit(status);
        }
        statslog_summarize(&l, &s);
        if (l.n == 0)
                judge_silent_build(&m, before);
        json_object_put(before);
        if (m.source == SOURCE_UNKNOWN)
                say_unknown(&m);
        if (m.explain && m.source == SOURCE_STATSLOG) {
                snprintf(debug, sizeof(debug), "%s/debug", m.dir);
                r = explain_run(debug, store, ask_evictions, NULL, (int64_t) time(NULL), &ex);
                if (r < 0)
                        fprintf(stderr, "cachectl: cannot explain the misses: %s\n", strerror(-r));
                have_explained = r == 0;
                /* Evicted, but when and by what only the daemon knows. */
                if (evictions_unasked[0])
                        fprintf(stderr, "cachectl: entries left the cache, and the daemon could not be asked when "
                                "or why: %s (in a container: mount the host's /run/cachekeeper there)\n",
                                evictions_unasked);
        }
        m.rate = hit_rate(&m, &s);
        if (m.json)
                print_json(&m, &l, &s, have_explained ? &ex : NULL, (double) (end - start) / USEC_PER_SEC, status);
        else
                print_text(&m, &l, &s, have_explained ? &ex : NULL, (double) (end - start) / USEC_PER_SEC, status);
        ret = command_exit(status);
        if (ret == 0 && below_gate(&m))
                ret = MEASURE_EXIT_BELOW;
        statslog_done(&l);
        explained_done(&ex);
        measure_done(&m);
        statslog_dir_remove(m.dir);
        return ret;
}
