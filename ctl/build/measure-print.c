/* SPDX-License-Identifier: MIT */
/* What measure says (measure-internal.h): prose wrapped on a terminal and
 * one line a fact otherwise, every name the build chose escaped; or JSON. */
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/human.h"
#include "base/text.h"
#include "build/explain.h"
#include "build/measure-internal.h"
#include "build/statslog.h"

/* Missed sources listed on a terminal; --json lists all. */
#define MISSED_SHOWN 20

/* Prose: wrapped at 80 columns on a terminal, one line otherwise (for grep
 * and logs), the lines after the first indented by indent. Names in it
 * are the caller's to escape. */
_printf_(3, 4)
void measure_say(bool tty, size_t indent, const char *fmt, ...) {
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
        _cleanup_free_ char *line = measure_command_line(m->command);
        _cleanup_free_ char *cmd = text_escaped(line ? line : m->command[0]);

        if (WIFSIGNALED(status))
                printf("%s: %.1f s, killed by signal %d\n", cmd ?: "?", seconds, WTERMSIG(status));
        else
                printf("%s: %.1f s, exit status %d\n", cmd ?: "?", seconds, measure_command_exit(status));
}

/* No call reached the log: what the daemon saw of the build's cache. */
static void print_silent(const Measure *m, bool tty) {
        _cleanup_free_ char *name = m->bc.name ? text_escaped(m->bc.name) : NULL;
        _cleanup_free_ char *whence = cache_whence(&m->bc);
        _cleanup_free_ char *why = m->unchecked ? text_escaped(m->unchecked) : NULL;

        if (m->source == SOURCE_NOTHING && !m->unchecked)
                measure_say(tty, 2, "Nothing was compiled: no ccache call reached this build's statistics log, and "
                            "cachekeeperd saw none meanwhile in the build's cache, %s%s.", name ?: "?", whence ?: "");
        else if (m->source == SOURCE_NOTHING)
                measure_say(tty, 2, "Nothing was compiled: no ccache call reached this build's statistics log (%s, so "
                            "calls made out of its sight could not be looked for).", why ?: "?");
        if (m->source != SOURCE_DAEMON)
                return;
        measure_say(tty, 0, "No ccache call of this build reached its statistics log, but cachekeeperd saw calls meanwhile "
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
        for (size_t i = 0; i < nr; i++) {
                printf("%s", i ? ", " : "   (");
                text_put(stdout, rs[i].id);   /* an id from the statistics log */
                printf(" %llu", (unsigned long long) rs[i].n);
        }
        printf("%s\n", nr ? ")" : "");
}

/* What --explain did not read of the files the build names: nothing was
 * claimed of them. */
static void print_unread(const Explained *ex, bool tty) {
        _cleanup_free_ char *unread = ex->first_unread ? text_escaped(ex->first_unread) : NULL;
        _cleanup_free_ char *odd = ex->first_not_regular ? text_escaped(ex->first_not_regular) : NULL;

        if (ex->unread_files > 0)
                measure_say(tty, 2, "The read budget was reached (%llu MiB, %d files in all): %" PRIu64 " file%s the build "
                            "names not read, so nothing is claimed of them (first: %s).", EXPLAIN_READ_MAX_BYTES >> 20,
                    EXPLAIN_FILES_MAX, ex->unread_files, ex->unread_files == 1 ? "" : "s", unread ?: "?");
        if (ex->not_regular > 0)
                measure_say(tty, 2, "%" PRIu64 " file%s the build names %s not a regular file, never opened (first: %s).",
                    ex->not_regular, ex->not_regular == 1 ? "" : "s", ex->not_regular == 1 ? "is" : "are", odd ?: "?");
}

void measure_print_text(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
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

                                measure_say(tty, 28, "%s", shown_line ?: line);
                        }
                }
        }
        if (ex)
                print_unread(ex, tty);
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

/* The "calls" object of measure's JSON: the build's own counts, or the
 * daemon's hits and misses of its cache (the rest null) in the fallback. */
static json_object *json_calls(const StatsLog *l, const StatsSummary *s, bool fallback, uint64_t hits,
                               uint64_t misses) {
        json_object *calls = json_object_new_object(), *unc = json_object_new_object();
        Reason rs[64];
        size_t nr;

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
        return calls;
}

/* --explain's part of measure's JSON, into o: "missed" (each miss, its
 * cause and detail), "causes" (each cause's count and fix), and what was
 * not read. */
static void json_explained(json_object *o, const Explained *ex) {
        json_object *missed = json_object_new_array(), *causes = json_object_new_array();

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
        json_object_object_add(o, "files_unread", json_object_new_uint64(ex->unread_files));
        json_object_object_add(o, "files_not_regular", json_object_new_uint64(ex->not_regular));
}

void measure_print_json(const Measure *m, const StatsLog *l, const StatsSummary *s, const Explained *ex,
                       double seconds, int status) {
        json_object *o = json_object_new_object(), *cmd = json_object_new_array();
        bool fallback = m->source == SOURCE_DAEMON;
        uint64_t hits = fallback ? m->after.hits - m->before.hits : s->hits;
        uint64_t misses = fallback ? m->after.misses - m->before.misses : s->misses;
        char text[32];

        for (char **a = m->command; *a; a++)
                json_object_array_add(cmd, json_object_new_string(*a));
        json_object_object_add(o, "command", cmd);
        json_object_object_add(o, "exit_status", json_object_new_int(measure_command_exit(status)));
        snprintf(text, sizeof(text), "%.3f", seconds);
        json_object_object_add(o, "seconds", json_object_new_double_s(seconds, text));   /* not a status key: measure's JSON */
        json_object_object_add(o, "source", json_object_new_string(fallback ? "daemon" : "statslog"));
        /* the cache whose figures were looked at: the fallback's, or the one that saw nothing */
        json_object_object_add(o, "cache", m->bc.name && (fallback || (m->source == SOURCE_NOTHING && !m->unchecked))
                                                   ? json_object_new_string(m->bc.name) : NULL);
        json_object_object_add(o, "calls", json_calls(l, s, fallback, hits, misses));
        if (m->rate >= 0) {
                snprintf(text, sizeof(text), "%.4f", m->rate);
                json_object_object_add(o, "hit_rate", json_object_new_double_s(m->rate, text));
        } else
                json_object_object_add(o, "hit_rate", NULL);
        if (ex)
                json_explained(o, ex);
        else {
                json_object *missed = json_object_new_array();

                for (size_t i = 0; !fallback && i < l->n; i++)
                        if (l->calls[i].outcome == STATS_MISS) {
                                json_object *e = json_object_new_object();

                                json_object_object_add(e, "source", json_object_new_string(l->calls[i].input));
                                json_object_array_add(missed, e);
                        }
                json_object_object_add(o, "missed", missed);
        }
        text_put_json(stdout, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}
