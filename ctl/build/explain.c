/* SPDX-License-Identifier: MIT */
/* Why compilations missed (explain.h): each miss against the evidence, in
 * its order. A verdict is only what the evidence proves; what it does not
 * decide is "unknown". */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/protocol.h"
#include "base/util.h"
#include "build/explain-internal.h"
#include "build/explain.h"

static const char *const cause_names[_CAUSE_MAX] = {
        [CAUSE_EVICTED] = "evicted",
        [CAUSE_CONFIG] = "config",
        [CAUSE_COMPILER] = "compiler",
        [CAUSE_ARGUMENT] = "argument",
        [CAUSE_ENVIRONMENT] = "environment",
        [CAUSE_BUILD_DIR] = "build-dir",
        [CAUSE_SOURCE] = "source",
        [CAUSE_INCLUDE] = "include-changed",
        [CAUSE_TIME_MACRO] = "time-macro",
        [CAUSE_FIRST_BUILD] = "first-build",
        [CAUSE_UNKNOWN] = "unknown",
};

const char *explain_cause_name(ExplainCause c) {
        return c >= 0 && c < _CAUSE_MAX ? cause_names[c] : "unknown";
}

const char *explain_cause_fix(ExplainCause c, const Explained *e, char *buf, size_t len) {
        const char *b = e->base_dir ?: "<a directory above the build directories>";

        switch (c) {
        case CAUSE_EVICTED:
                snprintf(buf, len, "a larger max_size for the cache: `cachectl status%s%s` shows what the cap "
                         "evicted and would have kept (regret)", e->cache ? " " : "", e->cache ?: "");
                return buf;
        case CAUSE_BUILD_DIR:
                /* The environment first: it reaches this build alone; ccache 4.8+
                 * also takes settings before the compiler, in the launcher. In the
                 * cache's ccache.conf cachekeeperd keeps hash_dir from any file,
                 * base_dir only where root wrote the file (daemon/ccache/README.md §6). */
                if (e->launcher_config)
                        snprintf(buf, len,
                                 "CCACHE_BASEDIR=%s CCACHE_NOHASHDIR=1 in the build's environment, or in the launcher: "
                                 "ccache base_dir=%s hash_dir=false (CMAKE_<LANG>_COMPILER_LAUNCHER), or for every "
                                 "build of the cache base_dir = %s and hash_dir = false in its ccache.conf, written "
                                 "as root (cachekeeperd keeps base_dir only in a file root wrote)", b, b, b);
                else
                        snprintf(buf, len,
                                 "CCACHE_BASEDIR=%s CCACHE_NOHASHDIR=1 in the build's environment, or for every "
                                 "build of the cache base_dir = %s and hash_dir = false in its ccache.conf, written "
                                 "as root (cachekeeperd keeps base_dir only in a file root wrote)", b, b);
                return buf;
        case CAUSE_TIME_MACRO:
                snprintf(buf, len, "add time_macros to sloppiness (CCACHE_SLOPPINESS), if the embedded time "
                         "does not matter");
                return buf;
        case CAUSE_COMPILER:
                snprintf(buf, len, "CCACHE_COMPILERCHECK=content, if the same compiler is reinstalled (its "
                         "mtime changes, not the compiler)");
                return buf;
        case CAUSE_ENVIRONMENT:
                snprintf(buf, len, "the same locale in every build's environment (or locale in sloppiness)");
                return buf;
        default:
                return NULL;
        }
}

/* --- A run ---------------------------------------------------------------- */

typedef struct Walk {
        char **logs;
        size_t n;
        int error;
} Walk;

static Walk *the_walk;

static int on_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        size_t l = strlen(path);
        char **logs;

        if (type != FTW_F || l < 11 || strcmp(path + l - 11, ".ccache-log") != 0 || !S_ISREG(st->st_mode))
                return 0;
        logs = realloc(the_walk->logs, (the_walk->n + 1) * sizeof(char *));
        if (!logs || !(logs[the_walk->n] = strdup(path))) {
                if (logs)
                        the_walk->logs = logs;
                the_walk->error = -ENOMEM;
                return 1;
        }
        the_walk->logs = logs;
        the_walk->n++;
        return 0;
}

/* "<object>.<YYYYmmdd_HHMMSS_usec>.ccache-log": the call's start time. */
static const char *log_stamp(const char *path) {
        size_t l = strlen(path);
        const char *dot = l > 11 ? memrchr(path, '.', l - 11) : NULL;

        return dot ? dot + 1 : path;
}

/* In the order they ran, whatever directory their objects are in. */
static int by_time(const void *a, const void *b) {
        const char *x = *(char *const *) a, *y = *(char *const *) b;
        int c = strcmp(log_stamp(x), log_stamp(y));

        return c ? c : strcmp(x, y);
}

/* The misses' keys the daemon may have seen leave, asked in one go per
 * cache: each key a miss looked up and did not find, its result keys (and
 * its manifest in depend mode, where a missing manifest alone makes a
 * miss; elsewhere the preprocessor's lookup follows). A key found, or
 * computed without a lookup, proves nothing: it may have left and come
 * back long before. */
typedef struct Asked {
        const char **keys;
        size_t *owner;          /* the call each key is of */
        ExplainEviction *out;
        size_t n;
} Asked;

/* The keys the misses of calls looked up and did not find (a manifest's
 * own key only in depend mode), with the call each is of, into a. Returns
 * 0 or -ENOMEM. */
static int collect_keys(const Call *calls, size_t n, Asked *a) {
        for (size_t i = 0; i < n; i++) {
                size_t k = calls[i].n_missing;

                if (!calls[i].miss || !calls[i].cache_dir || k == 0)
                        continue;
                const char **keys = realloc(a->keys, (a->n + k) * sizeof(char *));
                size_t *owner = keys ? realloc(a->owner, (a->n + k) * sizeof(size_t)) : NULL;

                if (keys)
                        a->keys = keys;
                if (owner)
                        a->owner = owner;
                if (!keys || !owner)
                        return -ENOMEM;
                for (size_t j = 0; j < calls[i].n_missing; j++) {
                        const char *key = calls[i].missing[j];

                        if (calls[i].manifest_key && strcmp(key, calls[i].manifest_key) == 0 && !calls[i].depend)
                                continue;
                        a->keys[a->n] = key;
                        a->owner[a->n++] = i;
                }
        }
        return 0;
}

/* Asks the daemon about the keys a->keys[from..] of the cache dir that
 * a->keys[from] is of, at once; their answers into a->out (since -1: not
 * known). Returns 0 or -ENOMEM. */
static int ask_cache(const Call *calls, Asked *a, size_t from, ExplainAsk ask, void *userdata, Explained *e) {
        const char *dir = calls[a->owner[from]].cache_dir;
        _cleanup_free_ const char **keys = calloc(a->n, sizeof(char *));
        _cleanup_free_ size_t *idx = calloc(a->n, sizeof(size_t));
        _cleanup_free_ ExplainEviction *out = NULL;
        char cache[64] = "";
        size_t m = 0;
        int q;

        if (!keys || !idx)
                return -ENOMEM;
        for (size_t j = from; j < a->n; j++)
                if (a->out[j].since == 0 && strcmp(calls[a->owner[j]].cache_dir, dir) == 0) {
                        idx[m] = j;
                        keys[m++] = a->keys[j];
                }
        out = calloc(m, sizeof(ExplainEviction));
        q = out ? ask(userdata, dir, keys, m, out, cache) : -ENOMEM;
        for (size_t j = 0; j < m; j++)
                a->out[idx[j]] = q == 1 ? out[j] : (ExplainEviction) { .since = -1 };
        if (q == 1) {
                e->asked = true;
                if (!e->cache && cache[0])
                        e->cache = strdup(cache);
        }
        return 0;
}

/* The verdicts of the calls whose keys the daemon says it evicted: when,
 * and by what. */
static void mark_evicted(const Call *calls, const Asked *a, int64_t now, const Explained *e, Verdict *vs) {
        for (size_t i = 0; i < a->n; i++) {
                Verdict *v = &vs[a->owner[i]];
                char when[32];

                if (a->out[i].since < 0 || v->cause == CAUSE_EVICTED)
                        continue;
                v->cause = CAUSE_EVICTED;
                v->since = a->out[i].since;
                snprintf(v->by, sizeof(v->by), "%s", a->out[i].by);
                /* The daemon says when the key left last: after this compile stored
                 * it again, that is not when it left before the lookup. */
                if (calls[a->owner[i]].started && a->out[i].since > calls[a->owner[i]].started + 1)
                        snprintf(v->detail, sizeof(v->detail), "gone when this compile looked it up, which then "
                                 "stored it again; it left again %s, by %s%s%s", explain_ago(a->out[i].since, now, when, sizeof(when)),
                                 evicted_by_what(a->out[i].by), e->cache ? " of " : "", e->cache ?: "");
                else
                        snprintf(v->detail, sizeof(v->detail), "evicted %s by %s%s%s",
                                 explain_ago(a->out[i].since, now, when, sizeof(when)), evicted_by_what(a->out[i].by),
                                 e->cache ? " of " : "", e->cache ?: "");
        }
}

static int ask_daemon(Call *calls, size_t n, ExplainAsk ask, void *userdata, int64_t now, Explained *e,
                      Verdict *vs) {
        Asked a = { 0 };
        int r;

        r = collect_keys(calls, n, &a);
        if (r < 0 || a.n == 0 || !ask)
                goto out;
        if (!(a.out = calloc(a.n, sizeof(ExplainEviction)))) {
                r = -ENOMEM;
                goto out;
        }
        /* One question per cache: the first miss's cache, then any other. */
        for (size_t i = 0; i < a.n && r == 0; i++)
                if (a.out[i].since == 0)   /* not asked yet */
                        r = ask_cache(calls, &a, i, ask, userdata, e);
        if (r == 0)
                mark_evicted(calls, &a, now, e, vs);
out:
        free(a.keys);
        free(a.owner);
        free(a.out);
        return r;
}

static int add_miss(Explained *e, const Call *c, const Verdict *v) {
        ExplainMiss *ms = realloc(e->misses, (e->n + 1) * sizeof(ExplainMiss)), *m;
        char detail[1400];

        if (!ms)
                return -ENOMEM;
        e->misses = ms;
        m = &e->misses[e->n];
        snprintf(detail, sizeof(detail), "%s", v->detail);
        if (v->also)
                for (int k = 0; k < _CAUSE_MAX; k++)
                        if (v->also & (1U << k) && k != (int) v->cause) {
                                size_t o = strlen(detail);

                                snprintf(detail + o, sizeof(detail) - o, "%s%s", strstr(detail, " (also: ") ? ", " : " (also: ",
                                         cause_names[k]);
                        }
        if (strstr(detail, " (also: "))
                strncat(detail, ")", sizeof(detail) - strlen(detail) - 1);
        *m = (ExplainMiss) {
                .source = strdup(c->source_path ?: c->source ?: "?"),
                .object = c->object_path ? strdup(c->object_path) : NULL,
                .cause = v->cause,
                .detail = strdup(detail),
                .since = v->cause == CAUSE_EVICTED ? v->since : -1,
                .by = v->cause == CAUSE_EVICTED && v->by[0] ? strdup(v->by) : NULL,
        };
        if (!m->source || !m->detail) {
                free(m->source);
                free(m->object);
                free(m->detail);
                free(m->by);
                return -ENOMEM;
        }
        e->n++;
        e->counts[v->cause]++;
        return 0;
}

/* Explains calls[i], a miss, against its record (if any); the roots of a
 * build-dir verdict feed the base_dir of the fix. */
static int explain_one(const char *store_dir, const Call *c, Explained *e, Verdict *v, int64_t now) {
        Call old;
        Roots r = { .differ = false };
        int q;

        if (v->cause == CAUSE_EVICTED)
                return 0;   /* the daemon saw it leave */
        if (c->manifest_result_gone) {
                verdict(v, CAUSE_EVICTED, "ccache's manifest named its entry for these very inputs, and the entry "
                        "is gone (cachekeeperd %s)", e->asked ? "did not see it leave" : "was not asked");
                return 0;
        }
        q = record_load(store_dir, c, &old);
        if (q < 0)
                return q;
        if (q == 0) {
                verdict(v, CAUSE_FIRST_BUILD, "no earlier explained run built it%s",
                        e->asked ? ", and cachekeeperd saw no entry of it leave" : " (cachekeeperd was not asked)");
                return 0;
        }
        call_compare(&old, c, now, v, &r);
        if (v->cause == CAUSE_BUILD_DIR && !e->base_dir && r.differ)
                e->base_dir = common_dir(r.from, r.to, c->source_path ?: r.to);
        call_done(&old);
        return 0;
}

/* Reads every call below debug_dir; what of the build's files was left
 * unread, and the records read, into e. */
static int read_calls(const char *debug_dir, Call **ret, size_t *ret_n, Explained *e) {
        Walk w = { 0 };
        Digests digests;
        Call *calls = NULL;
        int r = 0;

        digests_init(&digests);
        the_walk = &w;
        if (nftw(debug_dir, on_entry, 16, FTW_PHYS) < 0 && errno != ENOENT)
                w.error = -errno;
        the_walk = NULL;
        if (w.error < 0) {
                r = w.error;
                goto out;
        }
        qsort(w.logs, w.n, sizeof(char *), by_time);
        calls = calloc(w.n ? w.n : 1, sizeof(Call));
        if (!calls) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < w.n; i++) {
                if ((r = call_read(w.logs[i], &digests, &calls[i])) < 0)
                        goto out;
                e->records++;
        }
        e->unread_files = digests.budget.files_unread;
        e->not_regular = digests.budget.not_regular;
        e->first_unread = TAKE_PTR(digests.budget.first_unread);
        e->first_not_regular = TAKE_PTR(digests.budget.first_not_regular);
out:
        for (size_t i = 0; i < w.n; i++)
                free(w.logs[i]);
        free(w.logs);
        digests_done(&digests);
        if (r < 0) {
                for (size_t i = 0; calls && i < w.n; i++)
                        call_done(&calls[i]);
                free(calls);
                return r;
        }
        *ret = calls;
        *ret_n = w.n;
        return 0;
}

/* Keeps this run's calls for the next: the last of each source and object. */
static int save_calls(const char *store_dir, const Call *calls, size_t n, int64_t now) {
        for (size_t i = 0; i < n; i++) {
                const Call *c = &calls[i];
                Call old;
                int r;

                if (!c->source_path || (!c->miss && !c->hit) || (c->miss && !c->stored))
                        continue;   /* only what ccache stored or served is known to have been in the cache */
                if (!c->has_files) {
                        /* A direct hit read no file list: keep the last one known. */
                        r = record_load(store_dir, c, &old);
                        if (r < 0)
                                return r;
                        r = record_save(store_dir, c, r == 1 ? &old : NULL, now);
                        call_done(&old);
                } else
                        r = record_save(store_dir, c, NULL, now);
                if (r < 0)
                        return r;
        }
        record_bound(store_dir);
        return 0;
}

int explain_run(const char *debug_dir, const char *store_dir, ExplainAsk ask, void *userdata, int64_t now,
                Explained *ret) {
        Explained e = { 0 };
        Call *calls = NULL;
        Verdict *vs = NULL;
        size_t n = 0;
        int r;

        *ret = e;
        if ((r = read_calls(debug_dir, &calls, &n, &e)) < 0) {
                explained_done(&e);
                return r;
        }
        vs = calloc(n ? n : 1, sizeof(Verdict));
        if (!vs) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                vs[i] = (Verdict) { .cause = CAUSE_UNKNOWN, .since = -1 };
        if ((r = ask_daemon(calls, n, ask, userdata, now, &e, vs)) < 0)
                goto out;
        for (size_t i = 0; i < n; i++) {
                int major = 0, minor = 0;

                if (!calls[i].miss)
                        continue;
                if (calls[i].version && sscanf(calls[i].version, "%d.%d", &major, &minor) == 2 &&
                    (major > 4 || (major == 4 && minor >= 8)))
                        e.launcher_config = true;
                if ((r = explain_one(store_dir, &calls[i], &e, &vs[i], now)) < 0 || (r = add_miss(&e, &calls[i], &vs[i])) < 0)
                        goto out;
        }
        r = save_calls(store_dir, calls, n, now);
out:
        for (size_t i = 0; i < n; i++)
                call_done(&calls[i]);
        free(calls);
        free(vs);
        if (r < 0)
                explained_done(&e);
        else
                *ret = e;
        return r;
}

int explain_store_dir(char *buf, size_t len) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char base[4096];

        if (xdg && xdg[0] == '/')
                snprintf(base, sizeof(base), "%s", xdg);
        else if (home && home[0] == '/')
                snprintf(base, sizeof(base), "%s/.cache", home);
        else
                return -ENOENT;
        if (mkdir(base, 0700) < 0 && errno != EEXIST)
                return -errno;
        snprintf(buf, len, "%s/cachekeeper", base);
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return -errno;
        snprintf(buf, len, "%s/cachekeeper/explain", base);
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

void explained_done(Explained *e) {
        for (size_t i = 0; i < e->n; i++) {
                free(e->misses[i].source);
                free(e->misses[i].object);
                free(e->misses[i].detail);
                free(e->misses[i].by);
        }
        free(e->misses);
        free(e->base_dir);
        free(e->cache);
        free(e->first_unread);
        free(e->first_not_regular);
        *e = (Explained) { 0 };
}
