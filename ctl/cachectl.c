/* SPDX-License-Identifier: MIT */
/* cachectl: asks cachekeeperd over its Unix socket and prints the answer.
 * Exit status: 0 ok, 1 refused or failed, 2 usage, 3 daemon unreachable
 * (or it turned us away, or broke the connection). Never dies of SIGPIPE. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/text.h"
#include "build/doctor.h"
#include "build/measure.h"
#include "core/client.h"
#include "core/command.h"
#include "core/path.h"
#include "merge.h"
#include "views/progress.h"
#include "views/report.h"
#include "views/results.h"
#include "views/status-table.h"

/* For a command that takes no option: getopt still names a wrong one. */
static const struct option no_options[] = {
        {},
};

static int cmd_reload(int argc, char **argv) {
        json_object *result = NULL;
        int r;

        if (getopt_long(argc, argv, "", no_options, NULL) >= 0)
                return command_usage_error(NULL);
        if (optind < argc)
                return ctl_usage_error("'reload' takes no arguments");
        r = ctl_ask(protocol_encode_reload(), NULL, &result);
        if (r > 0 && result) {
                if (json_object_is_type(result, json_type_string))
                        fputs(json_object_get_string(result), stdout);
                else
                        text_put_json(stdout, json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
                                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        }
        json_object_put(result);
        return ctl_exit_status(r);
}

static const struct option status_options[] = {
        { "json", no_argument, NULL, 'j' },
        {},
};

static int cmd_status(int argc, char **argv) {
        ProtocolStatus req = {};
        json_object *result = NULL;
        bool json = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "", status_options, NULL)) >= 0)
                if (c == 'j')
                        json = true;
                else
                        return command_usage_error(NULL);
        if (argc - optind > 1)
                return ctl_usage_error("status takes at most one cache name");
        if (optind < argc)
                req.cache = argv[optind];
        r = ctl_ask(protocol_encode_status(&req), NULL, &result);
        if (r > 0 && json)
                text_put_json(stdout, json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        else if (r > 0) {
                char *text = status_table(result, req.cache != NULL, ctl_want_color(STDOUT_FILENO));

                if (text)
                        fputs(text, stdout);
                else {
                        fprintf(stderr, "cachectl: out of memory\n");
                        r = 0;
                }
                free(text);
        }
        json_object_put(result);
        return ctl_exit_status(r);
}

static const struct option trim_options[] = {
        { "to", required_argument, NULL, 't' },
        { "dry-run", no_argument, NULL, 'n' },
        { "written-by", required_argument, NULL, 'w' },
        { "namespace", required_argument, NULL, 'N' },
        {},
};

static int cmd_trim(int argc, char **argv) {
        ProtocolTrim req = {};
        json_object *result = NULL;
        bool failed = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "", trim_options, NULL)) >= 0)
                switch (c) {
                case 't':
                        if (parse_size(optarg, &req.to_bytes) < 0)
                                return ctl_usage_error("invalid size '%s' (a number and a unit: k, M, G, T, or Ki, Mi, Gi, Ti)", optarg);
                        break;
                case 'n': req.dry_run = true; break;
                case 'w': req.written_by = optarg; break;
                case 'N': req.ns = optarg; break;
                default: return command_usage_error(NULL);
                }
        if ((req.written_by || req.ns) && req.to_bytes)
                return ctl_usage_error("--written-by and --namespace evict what that writer wrote: they take no --to");
        if (req.written_by && !*req.written_by)
                return ctl_usage_error("--written-by needs a ccache version, such as 4.9.1");
        if (argc - optind > PROTOCOL_TRIM_CACHES_MAX)
                return ctl_usage_error("trim names at most %u caches at once", (unsigned) PROTOCOL_TRIM_CACHES_MAX);
        for (int i = optind; i < argc; i++)
                req.caches[req.n_caches++] = argv[i];
        r = ctl_ask(protocol_encode_trim(&req), isatty(STDERR_FILENO) ? progress_trim : NULL, &result);
        progress_end();
        if (r > 0)
                failed = results_trim(stdout, result, time(NULL));
        json_object_put(result);
        return r > 0 && failed ? CTL_EXIT_REFUSED : ctl_exit_status(r);
}

/* A --minutes, --hours or --days argument: a whole number of rows from 1
 * to the most the daemon keeps. Returns 0, or the usage error's status. */
static int parse_rows(const char *option, const char *arg, unsigned seconds, ProtocolHistory *h) {
        unsigned max = protocol_history_max(seconds);
        unsigned long n;
        char *end;

        if (h->seconds)
                return ctl_usage_error("--minutes, --hours and --days exclude each other: give one");
        errno = 0;
        n = strtoul(arg, &end, 10);
        if (arg[0] < '0' || arg[0] > '9' || *end || errno || n == 0 || n > max)
                return ctl_usage_error("--%s takes a number from 1 to %u, not '%s'", option, max, arg);
        h->seconds = seconds;
        h->count = (unsigned) n;
        return 0;
}

static const struct option history_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "minutes", required_argument, NULL, 'm' },
        { "hours", required_argument, NULL, 'H' },
        { "days", required_argument, NULL, 'd' },
        {},
};

static int cmd_history(int argc, char **argv) {
        ProtocolHistory req = {};
        json_object *result = NULL;
        bool json = false, tty = isatty(STDOUT_FILENO);
        int c, r;

        while ((c = getopt_long(argc, argv, "", history_options, NULL)) >= 0)
                switch (c) {
                case 'j': json = true; break;
                case 'm': if ((r = parse_rows("minutes", optarg, PROTOCOL_HISTORY_MINUTE, &req))) return r; break;
                case 'H': if ((r = parse_rows("hours", optarg, PROTOCOL_HISTORY_HOUR, &req))) return r; break;
                case 'd': if ((r = parse_rows("days", optarg, PROTOCOL_HISTORY_DAY, &req))) return r; break;
                default: return command_usage_error(NULL);
                }
        if (argc - optind > 1)
                return ctl_usage_error("history takes at most one cache name");
        if (optind < argc)
                req.cache = argv[optind];
        if (!req.seconds)
                req = (ProtocolHistory) { .cache = req.cache, .seconds = PROTOCOL_HISTORY_HOUR, .count = 24 };
        r = ctl_ask(protocol_encode_history(&req), NULL, &result);
        if (r > 0 && json)
                text_put_json(stdout, json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        else if (r > 0)
                results_history(stdout, result, tty);
        json_object_put(result);
        return ctl_exit_status(r);
}

/* -t, or each command's default. */
static bool timeout_given;
#define CHECK_TIMEOUT_DEFAULT_USEC (8 * USEC_PER_SEC)

static int cmd_check(int argc, char **argv) {
        json_object *status = NULL;
        char line[4096];
        ReportLevel level;
        int r;

        /* Monitoring reads 2 as critical: a bad invocation is unknown (3). */
        if (argc > 1) {
                printf("CACHEKEEPER UNKNOWN - usage: cachectl [-s SOCKET] %s\n", command_usage());
                return REPORT_UNKNOWN;
        }
        /* Within NRPE's and Icinga's 10 s, so that ours is the line they show. */
        if (!timeout_given)
                ctl_timeout_usec = CHECK_TIMEOUT_DEFAULT_USEC;
        ctl_quiet = true;   /* the reason goes in the one line, on stdout */
        r = ctl_fetch_status(&status);
        if (r <= 0) {
                /* The monitoring contract: unknown, with the reason, on stdout. */
                if (r < 0)
                        printf("CACHEKEEPER UNKNOWN - %s\n", ctl_problem);
                else
                        printf("CACHEKEEPER UNKNOWN - cachekeeperd at %s refused the status request: %s\n",
                               ctl_socket_path, ctl_problem);
                return REPORT_UNKNOWN;
        }
        level = report_check(status, line, sizeof(line));
        printf("%s\n", line);
        json_object_put(status);
        return (int) level;
}

/* metrics [--output FILE]. When the daemon does not answer: on stdout
 * cachekeeper_up 0 alone (a scrape wrapper shows the daemon down, not a
 * failed scrape); with --output, FILE is removed (a stale file never looks
 * healthy). Either way the exit status says so (1 or 3). */
static const struct option metrics_options[] = {
        { "output", required_argument, NULL, 'o' },
        {},
};

static int cmd_metrics(int argc, char **argv) {
        const char *output = NULL;
        json_object *status = NULL;
        char *text;
        int c, r;

        while ((c = getopt_long(argc, argv, "o:", metrics_options, NULL)) >= 0)
                switch (c) {
                case 'o': output = optarg; break;
                default: return command_usage_error(NULL);
                }
        if (optind < argc)
                return ctl_usage_error("'metrics' takes no arguments but --output FILE");
        if (output && !*output)
                return ctl_usage_error("--output needs a file name");
        r = ctl_fetch_status(&status);
        if (r <= 0) {
                if (!output)
                        fputs(report_metrics_down, stdout);
                else if (unlink(output) == 0)
                        fprintf(stderr, "cachectl: removed %s: the daemon did not answer\n", output);
                else if (errno != ENOENT)
                        fprintf(stderr, "cachectl: cannot remove %s: %m\n", output);
                return ctl_exit_status(r);
        }
        text = report_metrics(status);
        json_object_put(status);
        if (!text) {
                fprintf(stderr, "cachectl: out of memory\n");
                return CTL_EXIT_REFUSED;
        }
        if (output)
                r = path_write_atomically(output, text);
        else
                fputs(text, stdout);
        free(text);
        return output && r < 0 ? CTL_EXIT_REFUSED : EXIT_SUCCESS;
}

/* -t: whole or fractional seconds ("2.5"), or a duration ("500ms", "1m");
 * more than 0. Returns 0 or -EINVAL. */
static int parse_timeout(const char *s, usec_t *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (end != s && *end == '\0' && errno == 0 && v > 0 && v <= 86400) {
                *ret = (usec_t) (v * USEC_PER_SEC);
                return 0;
        }
        if (parse_duration(s, ret) < 0 || *ret == 0)
                return -EINVAL;
        return 0;
}

/* check's only option, which main() answers; listed for completion. */
static const struct option check_options[] = {
        { "version", no_argument, NULL, 'V' },
        {},
};

/* The commands, in the order the top-level help lists them. */
static const Command commands[] = {
        { "status", cmd_status, status_options, "status [--json] [CACHE]",
          "sizes, caps, files, hit rates, free space",
          "Every cache (or CACHE) and every volume holding one: size against the cap,\n"
          "files, hit rates, mode; for a named cache also its working set, writers and\n"
          "cap advice.\n"
          "  --json   the daemon's status object as it is" },
        { "trim", cmd_trim, trim_options,
          "trim [CACHE...] [--to SIZE | --written-by VERSION | --namespace NS] [--dry-run]",
          "evict least recently used entries now, or\n"
          "exactly what that ccache version (or\n"
          "namespace) wrote",
          "Evict now: the least recently used entries down to each cache's target (or\n"
          "SIZE), or exactly the entries a ccache version or namespace wrote. For root\n"
          "and admin_group; --dry-run (anyone) only counts what would go.\n"
          "  --to SIZE              down to SIZE (80G, 500Mi)\n"
          "  --written-by VERSION   the entries whose header names this ccache version\n"
          "  --namespace NS         the entries written in this namespace\n"
          "  --dry-run              count, delete nothing" },
        { "history", cmd_history, history_options, "history [CACHE] [--minutes N | --hours N | --days N] [--json]",
          "activity per minute, hour or day (default\n"
          "--hours 24): stores, hits, misses, hit\n"
          "rate, evictions, removals, size",
          "Each cache's activity, a row per minute, hour or UTC day (default --hours 24):\n"
          "stores, hits, misses, hit rate, evictions, removals, size; a sparkline of the\n"
          "hit rate on a terminal.\n"
          "  --json   {\"cache\": ..., \"buckets\": [...]} (\"caches\" without CACHE)" },
        { "merge", cmd_merge, merge_options, "merge FROM --into TO [--dry-run] [--allow-mixed]",
          "move every entry of cache FROM into TO,\n"
          "within TO's cap, keeping the LRU order",
          "Move every entry of cache FROM into cache TO while both are in use, keeping each\n"
          "entry's mtime (LRU order) and TO within its cap (the coldest of both go first);\n"
          "then says what to change (FROM out of cachekeeper.conf, the containers' -v). For\n"
          "root and admin_group; --dry-run (anyone) says what would move and be evicted.\n"
          "  --into TO       the cache that takes the entries\n"
          "  --dry-run       say what would happen and how long it would take; move\n"
          "                  nothing\n"
          "  --allow-mixed   merge even when their ccache key families differ" },
        { "reload", cmd_reload, NULL, "reload",
          "re-read the configuration",
          "Re-read the configuration (root and admin_group). A bad one is refused with\n"
          "FILE:LINE and the daemon keeps the one it has." },
        { "check", cmd_check, check_options, "check",
          "one line for monitoring; exit 0 ok,\n"
          "1 warning, 2 critical, 3 unknown",
          "One line for monitoring, with performance data after '|' (U: not known yet).\n"
          "Exit status: 0 ok, 1 warning, 2 critical, 3 unknown (also when the daemon cannot\n"
          "be asked, within 8s unless -t says otherwise: inside NRPE's 10s).\n"
          "  -V, --version   the version" },
        { "metrics", cmd_metrics, metrics_options, "metrics [--output FILE]",
          "Prometheus text exposition",
          "Every figure in the Prometheus text exposition format; cachekeeper_up 0 alone\n"
          "(and exit 3) when the daemon does not answer.\n"
          "  -o, --output FILE   write FILE atomically instead (node_exporter's textfile\n"
          "                      collector); remove it when the daemon does not answer" },
        { "measure", cmd_measure, measure_options,
          "measure [CACHE] [--explain] [--min-hit-rate PERCENT] [--json] -- COMMAND [ARGS...]",
          "run a build; say what it alone did with\n"
          "the cache, which files missed, and why",
          "Run COMMAND with ccache's statistics log (CCACHE_STATSLOG) in a private\n"
          "directory, then say what this build alone did: cacheable calls, hits (direct,\n"
          "preprocessed, remote), misses, uncacheable calls by reason, the hit rate, the\n"
          "wall time, and the sources that missed (20 on a terminal; --json lists all).\n"
          "Recaches (CCACHE_RECACHE) are counted apart, out of the rate. Nobody's\n"
          "counters are zeroed. When no call reaches the log, nothing was compiled (no\n"
          "hit rate, and --min-hit-rate passes), unless the daemon saw the build's cache\n"
          "used meanwhile (a build in a container, by docker exec): then its figures of\n"
          "that cache over the run stand in, other builds included. The build's cache:\n"
          "CACHE, else the one at CCACHE_DIR, else at ccache's cache_dir. Exit status:\n"
          "COMMAND's when it fails, else 0, or 4 below --min-hit-rate.\n"
          "  --explain                also run ccache's debug mode and name why each miss\n"
          "                           missed, from the evidence: evicted, config,\n"
          "                           compiler, argument, environment, build-dir,\n"
          "                           source, include-changed, time-macro, first-build,\n"
          "                           or unknown\n"
          "  --min-hit-rate PERCENT   exit 4 when the hit rate is below PERCENT (a CI\n"
          "                           gate)\n"
          "  --json                   the figures as JSON" },
        { "doctor", cmd_doctor, doctor_options,
          "doctor [BUILD_DIR] [--json]\n"
          "doctor --compiler PATH [--source FILE] [--json] [-- ARGS...]",
          "does this CMake build (or this compiler\n"
          "shim) use the cache? exit 0 ok,\n"
          "1 warning, 2 failed, 3 could not check",
          "Does this build use the cache? In a CMake build directory (default: here):\n"
          "every language CMake enabled has a ccache launcher or a compiler that is a\n"
          "ccache shim; every compile rule in build.ninja or the Makefiles is counted,\n"
          "ASM's too (CMake gives ASM no launcher); the CCACHE_DIR they use is a cache\n"
          "cachekeeperd keeps and you can write; depend mode is suggested when objects\n"
          "depend on 200 or more files on average, and rules without -MD (HIP under\n"
          "the Makefile generator) are named, as depend mode cannot serve them. With\n"
          "--compiler, compiles a new tiny source (a GPU kernel for HIP or CUDA, for\n"
          "the arch in ARGS) twice through PATH (with ARGS) and passes when the first\n"
          "call is a ccache miss that stores, the second a hit, the objects have the\n"
          "same size and the real compiler behind the shim runs (its version shown);\n"
          "warns when that compiler is a script ccache knows by its mtime alone; on\n"
          "failure it prints the rollback (mv PATH.real PATH when that exists). Never\n"
          "zeroes ccache's counters. Each check says ok, WARN or FAIL and the one line\n"
          "that fixes it.\n"
          "Exit status: 0 ok, 1 warning, 2 failed, 3 could not check.\n"
          "  --compiler PATH   check the compiler shim PATH instead of a build directory\n"
          "  --source FILE     with --compiler: compile FILE (yours) instead\n"
          "  --json            {\"checks\": [{\"name\", \"level\", \"message\", \"fix\"}],\n"
          "                     \"level\"}" },
};

static void help(void) {
        printf("Usage: cachectl [-s SOCKET] [-t T] COMMAND [ARGS]\n"
               "Ask cachekeeperd about the ccache directories it keeps.\n\n"
               "Commands:\n");
        command_list(commands, ELEMENTSOF(commands));
        printf("\nOptions:\n"
               "  -s, --socket PATH   the daemon's socket (default $CACHEKEEPER_SOCKET,\n"
               "                      else %s,\n"
               "                      else %s if that does not exist)\n"
               "  -t, --timeout T     wait at most T for the daemon (default 10s, 8s for\n"
               "                      check; a trim's or a merge's progress restarts\n"
               "                      it): seconds or a duration (500ms, 1m); then exit 3\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "Exit status: 0 success, 1 the daemon refused or failed, 2 usage error,\n"
               "3 the daemon cannot be reached, turned the connection away (too many),\n"
               "closed it without a whole reply, or answered in a newer protocol.\n"
               "See cachectl(1).\n",
               PROTOCOL_SOCKET_DEFAULT, PROTOCOL_SOCKET_LEGACY);
}

/* -h or --help among a command's arguments (before "--"). */
static bool wants_help(int argc, char **argv, const Command *cmd) {
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        return false;
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
                        return true;
        }
        return false;
}

static const struct option main_options[] = {
        { "socket", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "timeout", required_argument, NULL, 't' },
        {},
};

/* Prints options' long names, one a line, "=" after those that take a
 * value. */
static void list_options(const struct option *options) {
        for (const struct option *o = options; o && o->name; o++)
                printf("--%s%s\n", o->name, o->has_arg == required_argument ? "=" : "");
}

/* The hidden command the bash completion asks (not a stable interface):
 * "__complete commands" the commands; "__complete options [COMMAND]" the
 * global options, or COMMAND's and --help; "__complete caches" the caches'
 * names, from the daemon (nothing, and exit 3, when it does not answer);
 * "__complete writers" and "__complete namespaces" the ccache versions and
 * namespaces that wrote into the caches, from the daemon too.
 * One a line. */
static int complete(int argc, char **argv) {
        const char *what = argc > 1 ? argv[1] : "";

        if (strcmp(what, "commands") == 0 && argc == 2) {
                for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                        printf("%s\n", commands[i].name);
                return EXIT_SUCCESS;
        }
        if (strcmp(what, "options") == 0 && argc == 2) {
                list_options(main_options);
                return EXIT_SUCCESS;
        }
        if (strcmp(what, "options") == 0 && argc == 3) {
                for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                        if (strcmp(argv[2], commands[i].name) == 0) {
                                list_options(commands[i].options);
                                printf("--help\n");
                                return EXIT_SUCCESS;
                        }
                return CTL_EXIT_USAGE;
        }
        if (strcmp(what, "caches") == 0 && argc == 2) {        /* not a status key: the word to complete */
                json_object *status = NULL;
                int r = ctl_fetch_status(&status);

                for (size_t i = 0; r > 0 && i < protocol_field_count(status, STATUS_CACHES); i++)
                        printf("%s\n",
                               protocol_field_str(protocol_field_item(status, STATUS_CACHES, i), STATUS_CACHE_NAME));
                json_object_put(status);
                return ctl_exit_status(r);
        }
        /* not status keys: the words to complete */
        if ((strcmp(what, "writers") == 0 || strcmp(what, "namespaces") == 0) && argc == 2) {   /* not a status key */
                const char *key = what[0] == 'w' ? STATUS_WRITER_CCACHE_VERSION : STATUS_WRITER_NAMESPACE;
                json_object *status = NULL;
                int r = ctl_fetch_status(&status);

                /* Every cache's writers: a value may come more than once (the shell makes them unique). */
                for (size_t i = 0; r > 0 && i < protocol_field_count(status, STATUS_CACHES); i++) {
                        json_object *c = protocol_field_item(status, STATUS_CACHES, i);

                        for (size_t j = 0; j < protocol_field_count(c, STATUS_CACHE_WRITERS); j++) {
                                const char *v = protocol_field_str(protocol_field_item(c, STATUS_CACHE_WRITERS, j), key);

                                if (v && *v)
                                        printf("%s\n", v);
                        }
                }
                json_object_put(status);
                return ctl_exit_status(r);
        }
        return CTL_EXIT_USAGE;
}

/* Runs cmd with its arguments (argv[0] its name), or shows its --help. */
static int run_command(const Command *cmd, int argc, char **argv) {
        static char waiting[64];

        if (wants_help(argc, argv, cmd)) {
                command_help(cmd);
                return EXIT_SUCCESS;
        }
        if (strcmp(cmd->name, "check") == 0 && argc == 2 &&
            (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)) {
                printf("cachectl %s\n", CACHEKEEPER_VERSION);   /* as monitoring plugins answer -V */
                return EXIT_SUCCESS;
        }
        /* not a status key: the commands */
        if (strcmp(cmd->name, "trim") == 0 || strcmp(cmd->name, "merge") == 0)
                snprintf(waiting, sizeof(waiting), "the %s's progress or result", cmd->name);
        else
                snprintf(waiting, sizeof(waiting), "its answer to '%s'", cmd->name);
        ctl_waiting_for = waiting;
        argv[0] = (char *) "cachectl";   /* getopt's messages: "cachectl: unrecognized option" */
        return command_run(cmd, argc, argv);
}

/* The usage error for a command cachectl does not have, with the one it
 * may have been meant to be. */
static int unknown_command(const char *name) {
        const char *names[ELEMENTSOF(commands) + 1] = { 0 }, *near;

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                names[i] = commands[i].name;
        near = closest_word(name, names);
        return ctl_usage_error("unknown command '%s'%s%s%s", name, near ? " (did you mean '" : "",
                               near ? near : "", near ? "'?)" : "");
}

int main(int argc, char *argv[]) {
        const char *env = getenv("CACHEKEEPER_SOCKET");
        const Command *cmd;
        int c;

        if (env && *env)
                ctl_socket_path = env;
        /* "+": stop at the command, whose own options follow it. */
        while ((c = getopt_long(argc, argv, "+s:ht:", main_options, NULL)) >= 0)
                switch (c) {
                case 's': ctl_socket_path = optarg; break;
                case 't':
                        timeout_given = true;
                        if (parse_timeout(optarg, &ctl_timeout_usec) < 0)
                                return ctl_usage_error("invalid timeout '%s' (seconds, or a duration such as 500ms or 1m)", optarg);
                        break;
                case 'h': help(); return EXIT_SUCCESS;
                case 'V': printf("cachectl %s\n", CACHEKEEPER_VERSION); return EXIT_SUCCESS;
                default: fprintf(stderr, "Try 'cachectl --help'.\n"); return CTL_EXIT_USAGE;
                }
        if (optind >= argc)
                return ctl_usage_error("%s", "a command is required: status, history, trim, merge, reload, check, "
                                             "metrics, measure or doctor");
        argc -= optind;
        argv += optind;
        optind = 0;
        if (strcmp(argv[0], "__complete") == 0)
                return complete(argc, argv);

        cmd = command_find(commands, ELEMENTSOF(commands), argv[0]);
        return cmd ? run_command(cmd, argc, argv) : unknown_command(argv[0]);
}
