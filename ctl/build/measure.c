/* SPDX-License-Identifier: MIT */
/* cachectl measure (measure.h): the command: its arguments, the build run
 * with ccache's statistics log (and debug records) in a private directory,
 * the gate. What the daemon saw: measure-daemon.c; what is said:
 * measure-print.c (measure-internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/text.h"
#include "build/explain.h"
#include "build/measure-internal.h"
#include "build/measure.h"
#include "build/statslog.h"
#include "core/client.h"
#include "core/command.h"

/* How long the build waits for the daemon's figures before it starts. */
#define MEASURE_ASK_USEC (2 * USEC_PER_SEC)

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

int measure_command_exit(int status) {
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
char *measure_command_line(char **argv) {
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

/* The hit rate (0..1) of the build's calls, or of its cache over the
 * run in the fallback; -1 when nothing the cache could serve was called
 * (recaches are neither hits nor misses). */
double measure_hit_rate(const Measure *m, const StatsSummary *s) {
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

/* measure's arguments into m: [CACHE] [OPTIONS] -- COMMAND [ARGS...].
 * Returns 0, or the usage error's exit status. */
static int parse_args(int argc, char **argv, Measure *m) {
        int dashdash = -1, c;

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0) {
                        dashdash = i;
                        break;
                }
        if (dashdash < 0 || dashdash + 1 >= argc)
                return command_usage_error("measure runs a build: its command follows '--'");
        while ((c = getopt_long(dashdash, argv, "", measure_options, NULL)) >= 0)
                switch (c) {
                case 'e': m->explain = true; break;
                case 'j': m->json = true; break;
                case 'm':
                        if (parse_rate(optarg, &m->min_hit_rate) < 0)
                                return ctl_usage_error("--min-hit-rate takes a percentage from 0 to 100 "
                                                       "(95, or 95%%), not '%s'", optarg);
                        break;
                default:
                        return command_usage_error(NULL);
                }
        if (dashdash - optind > 1)
                return ctl_usage_error("measure takes at most one cache name before --");
        m->cache = optind < dashdash ? argv[optind] : NULL;
        m->command = argv + dashdash + 1;   /* main's argv: NULL after the last */
        return 0;
}

/* The daemon's status before the build, for the fallback only (NULL when
 * it does not answer): a stopped daemon must not hold the build back for
 * long (an absent one answers at once). Which of its caches the build uses
 * is asked only if the fallback is needed. */
static json_object *status_before(void) {
        usec_t t = ctl_timeout_usec;
        json_object *before;

        ctl_timeout_usec = t < MEASURE_ASK_USEC ? t : MEASURE_ASK_USEC;
        before = measure_daemon_status();
        ctl_timeout_usec = t;
        return before;
}

/* --explain: why each miss of the build missed, from its debug records
 * and what store keeps of earlier builds, into *ex. Returns whether it
 * could say (what it could not, said on stderr). */
static bool explain_misses(const Measure *m, const char *store, Explained *ex) {
        char debug[4200];
        int r;

        snprintf(debug, sizeof(debug), "%s/debug", m->dir);
        r = explain_run(debug, store, measure_ask_evictions, NULL, (int64_t) time(NULL), ex);
        if (r < 0)
                fprintf(stderr, "cachectl: cannot explain the misses: %s\n", strerror(-r));
        /* Evicted, but when and by what only the daemon knows. */
        if (measure_evictions_unasked[0])
                fprintf(stderr, "cachectl: entries left the cache, and the daemon could not be asked when "
                        "or why: %s (in a container: mount the host's /run/cachekeeper there)\n",
                        measure_evictions_unasked);
        return r == 0;
}

int cmd_measure(int argc, char **argv) {
        Measure m = { .min_hit_rate = -1, .rate = -1 };
        StatsLog l = { 0 };
        StatsSummary s = { 0 };
        Explained ex = { 0 };
        json_object *before = NULL;
        char log[4200], store[4096];
        const char *tmp = getenv("TMPDIR");
        bool have_explained = false;
        int status, r, ret;
        usec_t start, end;

        if ((r = parse_args(argc, argv, &m)) != 0)
                return r;
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
        before = status_before();
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
                return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? CTL_EXIT_REFUSED : measure_command_exit(status);
        }
        statslog_summarize(&l, &s);
        if (l.n == 0)
                measure_judge_silent_build(&m, before);
        json_object_put(before);
        if (m.source == SOURCE_UNKNOWN)
                say_unknown(&m);
        if (m.explain && m.source == SOURCE_STATSLOG)
                have_explained = explain_misses(&m, store, &ex);
        m.rate = measure_hit_rate(&m, &s);
        if (m.json)
                measure_print_json(&m, &l, &s, have_explained ? &ex : NULL, (double) (end - start) / USEC_PER_SEC, status);
        else
                measure_print_text(&m, &l, &s, have_explained ? &ex : NULL, (double) (end - start) / USEC_PER_SEC, status);
        ret = measure_command_exit(status);
        if (ret == 0 && below_gate(&m))
                ret = MEASURE_EXIT_BELOW;
        statslog_done(&l);
        explained_done(&ex);
        measure_done(&m);
        statslog_dir_remove(m.dir);
        return ret;
}
