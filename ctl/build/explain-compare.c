/* SPDX-License-Identifier: MIT */
/* One miss against the record of the same source and object
 * (explain-internal.h): what differs between the two calls, weighed in
 * ExplainCause's order into a Verdict: the config, the compiler, the
 * arguments, the environment, the build directory, the files read. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/protocol.h"
#include "build/explain-internal.h"
#include "build/explain.h"

void verdict(Verdict *v, ExplainCause c, const char *fmt, ...) {
        va_list ap;

        if (c > v->cause || (c == v->cause && v->detail[0])) {
                if (c != v->cause)
                        v->also |= 1U << c;
                return;
        }
        if (v->detail[0] && v->cause != CAUSE_UNKNOWN)
                v->also |= 1U << v->cause;
        v->cause = c;
        va_start(ap, fmt);
        vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
        va_end(ap);
}

/* "3 min ago", "2 h ago", "5 d ago". */
const char *explain_ago(int64_t then, int64_t now, char *buf, size_t len) {
        int64_t s = now > then ? now - then : 0;

        if (s < 120)
                snprintf(buf, len, "%" PRId64 " s ago", s);
        else if (s < 7200)
                snprintf(buf, len, "%" PRId64 " min ago", s / 60);
        else if (s < 172800)
                snprintf(buf, len, "%" PRId64 " h ago", s / 3600);
        else
                snprintf(buf, len, "%" PRId64 " d ago", s / 86400);
        return buf;
}

const char *evicted_by_what(const char *by) {
        if (!by[0])
                return "cachekeeperd (before it recorded why)";
        if (strcmp(by, PROTOCOL_EVICTED_BY_CAP) == 0)
                return "the cap trim";
        if (strcmp(by, PROTOCOL_EVICTED_BY_PRESSURE) == 0)
                return "a trim for free space (min_free)";
        if (strcmp(by, PROTOCOL_EVICTED_BY_PURGE) == 0)
                return "a purge";
        if (strcmp(by, PROTOCOL_EVICTED_BY_MERGE) == 0)
                return "a merge";
        return "another program (ccache's own cleanup, or rm)";
}

/* --- Items: "SECTION/key=value" ------------------------------------- */

static size_t item_key_len(const char *item) {
        const char *eq = strchr(item, '=');

        return eq ? (size_t) (eq - item) : strlen(item);
}

/* The key alone: "DIRECT MODE/arg=-g" → "arg". */
static const char *item_key(const char *item, char *buf, size_t len) {
        size_t k = item_key_len(item);
        const char *slash = memchr(item, '/', k);
        const char *s = slash ? slash + 1 : item;

        snprintf(buf, len, "%.*s", (int) (k - (size_t) (s - item)), s);
        return buf;
}

static const char *item_value(const char *item) {
        const char *eq = strchr(item, '=');

        return eq ? eq + 1 : item;
}

static bool has_item(const Call *c, const char *item) {
        for (size_t i = 0; i < c->n_items; i++)
                if (strcmp(c->items[i], item) == 0)
                        return true;
        return false;
}

/* Whether c hashed anything in the section of item ("DIRECT MODE/..."):
 * a direct hit's record has no preprocessor section, and what it lacks
 * there is no evidence. */
static bool has_section(const Call *c, const char *item) {
        const char *slash = strchr(item, '/');
        size_t l = slash ? (size_t) (slash - item) + 1 : 0;

        for (size_t i = 0; l && i < c->n_items; i++)
                if (strncmp(c->items[i], item, l) == 0)
                        return true;
        return false;
}

static bool has_key(const Call *c, const char *key) {
        char k[128];

        for (size_t i = 0; i < c->n_items; i++)
                if (strcmp(item_key(c->items[i], k, sizeof(k)), key) == 0)
                        return true;
        return false;
}

/* The locale's variables: hashed unless sloppiness has locale. */
static bool locale_key(const char *key) {
        return strcmp(key, "LANG") == 0 || strncmp(key, "LC_", 3) == 0;
}

/* A hashed environment variable: ccache hashes each by its name (LANG,
 * CPATH, COMPILER_PATH ...; GCC_COLORS as "gcccolors"). */
static bool env_key(const char *key) {
        if (strcmp(key, "gcccolors") == 0)
                return true;
        for (const char *k = key; *k; k++)
                if (!((*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || *k == '_'))
                        return false;
        return key[0] != '\0';
}

/* What ccache hashes that follows from something else, never a cause of
 * its own: the preprocessor's warnings, depend mode's marker (4.8+). */
static bool consequence_key(const char *key) {
        return strcmp(key, "cppstderr") == 0 || strcmp(key, "result") == 0;
}

/* --- The build directories of two runs ------------------------------- */

static void roots(const char *old, const char *new, Roots *r) {
        size_t a, b;

        *r = (Roots) { .differ = false };
        if (!old || !new || strcmp(old, new) == 0)
                return;
        a = strlen(old);
        b = strlen(new);
        while (a > 1 && b > 1) {
                const char *sa = memrchr(old, '/', a), *sb = memrchr(new, '/', b);
                size_t la, lb;

                if (!sa || !sb || sa == old || sb == new)
                        break;
                la = a - (size_t) (sa - old);
                lb = b - (size_t) (sb - new);
                if (la != lb || memcmp(sa, sb, la) != 0)
                        break;
                a = (size_t) (sa - old);
                b = (size_t) (sb - new);
        }
        snprintf(r->from, sizeof(r->from), "%.*s", (int) a, old);
        snprintf(r->to, sizeof(r->to), "%.*s", (int) b, new);
        r->differ = true;
}

/* s with every r->from replaced by r->to (into buf). */
static const char *rewrite(const Roots *r, const char *s, char *buf, size_t len) {
        size_t fl = strlen(r->from), o = 0;

        if (!r->differ || fl == 0)
                return s;
        while (*s && o + 1 < len) {
                if (strncmp(s, r->from, fl) == 0 && (s[fl] == '/' || s[fl] == '\0' || s[fl] == ' ' || s[fl] == '"')) {
                        o += (size_t) snprintf(buf + o, len - o, "%s", r->to);
                        s += fl;
                        if (o >= len)
                                break;
                        continue;
                }
                buf[o++] = *s++;
        }
        buf[o < len ? o : len - 1] = '\0';
        return buf;
}

/* A directory above a, b and c. */
char *common_dir(const char *a, const char *b, const char *c) {
        size_t n = 0;

        while (a[n] && a[n] == b[n] && a[n] == c[n])
                n++;
        if (!((a[n] == '\0' || a[n] == '/') && (b[n] == '\0' || b[n] == '/') && (c[n] == '\0' || c[n] == '/')))
                while (n > 0 && a[n - 1] != '/')
                        n--;
        while (n > 1 && a[n - 1] == '/')
                n--;
        return n == 0 ? strdup("/") : strndup(a, n);
}

/* --- config ----------------------------------------------------------- */

/* Whether path is below one of dirs (base_dir: one directory, or in
 * 4.12+ a list separated by ':'). */
static bool below(const char *dirs, const char *path) {
        for (const char *d = dirs; d && *d && path;) {
                size_t l = strcspn(d, ":");

                if (l > 0 && strncmp(path, d, l) == 0 && (path[l] == '/' || path[l] == '\0' || d[l - 1] == '/'))
                        return true;
                d += l + (d[l] == ':');
        }
        return false;
}

/* Whether a change of setting key can have changed this call's key. */
static bool setting_matters(const char *key, const char *ov, const char *nv, const Call *old, const Call *new) {
        if (strcmp(key, "direct_mode") == 0 || strcmp(key, "depend_mode") == 0)
                return false;   /* direct mode never changes a result key; depend mode: as used, below */
        if (strcmp(key, "hash_dir") == 0)
                return has_key(old, "cwd") || has_key(new, "cwd");   /* the cwd is hashed only with -g */
        if (strcmp(key, "base_dir") == 0)
                return below(ov, old->workdir) || below(nv, new->workdir) || below(ov, old->source_path) ||
                       below(nv, new->source_path);
        return true;
}

/* The changes of settings that enter the key, into buf; false: none. */
static bool config_changes(const Call *old, const Call *new, char *buf, size_t len) {
        size_t o = 0;

        buf[0] = '\0';
        if (old->version && new->version && strcmp(old->version, new->version) != 0)
                o += (size_t) snprintf(buf + o, len - o, "ccache %s -> %s", old->version, new->version);
        if (old->cache_dir && new->cache_dir && strcmp(old->cache_dir, new->cache_dir) != 0 && o < len)
                o += (size_t) snprintf(buf + o, len - o, "%scache_dir %s -> %s", o ? ", " : "", old->cache_dir,
                                       new->cache_dir);
        if (old->depend != new->depend && o < len) {
                const char *od = call_setting(old, "depend_mode"), *nd = call_setting(new, "depend_mode");
                bool as_set = od && nd && strcmp(od, nd) != 0;

                o += (size_t) snprintf(buf + o, len - o, "%sdepend mode %s -> %s%s", o ? ", " : "",
                                       old->depend ? "used" : "not used", new->depend ? "used" : "not used",
                                       as_set ? " (depend_mode)"
                                       : new->depend ? ""
                                                     : " (ccache disabled it for this compile: no -MD or -MMD)");
        }
        for (size_t i = 0; i < new->n_config && o < len; i++) {
                char key[64];
                const char *eq = strchr(new->config[i], '='), *ov, *nv;

                if (!eq || (size_t) (eq - new->config[i]) >= sizeof(key))
                        continue;
                snprintf(key, sizeof(key), "%.*s", (int) (eq - new->config[i]), new->config[i]);
                nv = eq + 1;
                ov = call_setting(old, key);
                if (!ov || strcmp(ov, nv) == 0 || !setting_matters(key, ov, nv, old, new))
                        continue;
                /* sloppiness: only where what it governs shows (the locale), else unknown */
                if (strcmp(key, "sloppiness") == 0)
                        continue;
                o += (size_t) snprintf(buf + o, len - o, "%s%s %s -> %s", o ? ", " : "", key, ov[0] ? ov : "(unset)",
                                       nv[0] ? nv : "(unset)");
        }
        return o > 0;
}

/* sloppiness old -> new, when it changed; into buf. */
static bool sloppiness_change(const Call *old, const Call *new, char *buf, size_t len) {
        const char *ov = call_setting(old, "sloppiness"), *nv = call_setting(new, "sloppiness");

        if (!ov || !nv || strcmp(ov, nv) == 0)
                return false;
        snprintf(buf, len, "sloppiness %s -> %s", ov[0] ? ov : "(none)", nv[0] ? nv : "(none)");
        return true;
}

/* --- What was hashed --------------------------------------------------- */

/* The flag a path in an argument came with: "-I/x/gen" → "-I"; a path
 * alone takes the argument before it ("-isystem" "/x"). */
static void arg_flag(const Call *c, const char *item, char *buf, size_t len) {
        const char *v = item_value(item), *slash = strchr(v, '/');

        if (v[0] == '-' && slash) {
                snprintf(buf, len, "%.*s", (int) (slash - v), v);
                return;
        }
        for (size_t i = 1; i < c->n_items; i++)
                if (c->items[i] == item && item_value(c->items[i - 1])[0] == '-') {
                        snprintf(buf, len, "%s", item_value(c->items[i - 1]));
                        return;
                }
        snprintf(buf, len, "an argument");
}

/* Options whose value is a path: ccache hashes it as given (relative to
 * where the compile ran, with base_dir). */
static const char *const path_flags[] = {
        "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-isysroot", "--sysroot=", "-I", "-B", "-L",
        NULL,
};

/* The item with a relative path in it made absolute against where c ran:
 * "DIRECT MODE/arg=-I../inc" from /b/sub is "DIRECT MODE/arg=-I/b/inc".
 * Into buf; the item itself when it holds no relative path. */
static const char *canonical(const Call *c, size_t index, char *buf, size_t len) {
        const char *it = c->items[index], *v = item_value(it), *path = NULL;
        char key[128], abs[PATH_MAX];
        size_t flag = 0, tail = 0;

        item_key(it, key, sizeof(key));
        if (strcmp(key, "inputfile") == 0)
                path = v;
        else if (strcmp(key, "path exists") == 0) {   /* "<path> 0|1" */
                const char *sp = strrchr(v, ' ');

                path = v;
                tail = sp ? strlen(sp) : 0;
        } else if (strcmp(key, "arg") == 0) {
                for (const char *const *f = path_flags; *f && !path; f++)
                        if (strncmp(v, *f, strlen(*f)) == 0 && v[strlen(*f)]) {
                                flag = strlen(*f) + (v[strlen(*f)] == ' ');
                                path = v + flag;
                        }
                if (!path && index > 0 && v[0] != '-')   /* "-isystem" "dir" as two */
                        for (const char *const *f = path_flags; *f && !path; f++)
                                if (strcmp(item_value(c->items[index - 1]), *f) == 0)
                                        path = v;
        }
        if (!path || path[0] == '/' || path[0] == '\0' || !c->workdir)
                return it;
        {
                char rel[PATH_MAX];

                snprintf(rel, sizeof(rel), "%.*s", (int) (strlen(path) - tail), path);
                normalise_path(c->workdir, rel, abs, sizeof(abs));
        }
        snprintf(buf, len, "%.*s%s%s", (int) (path - it), it, abs, path + strlen(path) - tail);
        return buf;
}

/* Whether item j of old is item i of new but for the build directory: the
 * same once both are absolute and old's build directory (or working
 * directory) is new's. */
static bool moved_item(const Call *old, size_t j, const Call *new, size_t i, const Roots *r, const Roots *rw) {
        char a[8192], b[8192], c[8192], d[8192];
        const char *o = canonical(old, j, a, sizeof(a)), *n = canonical(new, i, b, sizeof(b));

        if (item_key_len(old->items[j]) != item_key_len(new->items[i]))
                return false;
        return strcmp(rewrite(r, o, c, sizeof(c)), n) == 0 || strcmp(rewrite(rw, o, d, sizeof(d)), n) == 0 ||
               (strcmp(o, n) == 0 && strcmp(old->items[j], new->items[i]) != 0);
}

typedef struct ItemDiff {
        char added[512], removed[512];
        char env_other[256];    /* hashed variables not of the locale */
        bool source_hash;       /* ccache's hash of the source differs */
        bool source_same;       /* the source's content digest did not change */
        char leaks[512];        /* how the build directory reaches the key: "cwd (-g, hash_dir), -I/x/b2/gen" */
        size_t text_paths;      /* paths in the preprocessed text below the build directory */
        char env[256];
        bool cwd_changed, args_changed;
} ItemDiff;

/* "a, b": s added to a list. */
static void append_list(char *buf, size_t len, const char *s) {
        size_t o = strlen(buf), l = strlen(s);

        if (o + 2 + l + 1 > len)
                return;   /* the first few say enough */
        if (o) {
                memcpy(buf + o, ", ", 2);
                o += 2;
        }
        memcpy(buf + o, s, l + 1);
}

static void append(char *buf, size_t len, const char *s) {
        size_t o = strlen(buf);

        if (o + 2 < len)
                snprintf(buf + o, len - o, "%s%s", o ? " " : "", s);
}

/* An item of new (its i-th, of key) that differs from the old call's only
 * by the build directory: what leaks the directory into the hash, added
 * to d->leaks once. */
static void note_leak(const Call *new, size_t i, const char *key, ItemDiff *d) {
        const char *it = new->items[i];
        char leak[600], flag[64], buf[8192];

        if (strcmp(key, "cwd") == 0)
                snprintf(leak, sizeof(leak), "cwd (hashed with -g: hash_dir)");
        else if (strcmp(key, "inputfile") == 0)
                snprintf(leak, sizeof(leak), "the source's path");
        else if (strcmp(key, "arg") == 0) {
                arg_flag(new, it, flag, sizeof(flag));
                if (strncmp(item_value(it), flag, strlen(flag)) == 0)
                        snprintf(leak, sizeof(leak), "%s", item_value(it));
                else
                        snprintf(leak, sizeof(leak), "%s %s", flag, item_value(it));
                if (canonical(new, i, buf, sizeof(buf)) != it)   /* relative: base_dir made it so */
                        snprintf(leak + strlen(leak), sizeof(leak) - strlen(leak),
                                 " (relative to where it ran)");
        } else if (strcmp(key, "path exists") == 0)   /* 4.10+: each path an option names */
                snprintf(leak, sizeof(leak), "the path %.*s an option names", (int) strcspn(item_value(it), " "),
                         item_value(it));
        else
                snprintf(leak, sizeof(leak), "ccache's '%s'", key);
        if (!strstr(d->leaks, leak))
                append_list(d->leaks, sizeof(d->leaks), leak);
}

/* An item it (of key) the new call hashed and the old did not: a verdict,
 * or what d gathers for the verdicts after. */
static void judge_added(const char *it, const char *key, Verdict *v, ItemDiff *d) {
        if (strncmp(key, "cc_", 3) == 0)
                verdict(v, CAUSE_COMPILER, "the compiler's %s changed", key + 3);
        else if (strcmp(key, "sourcecode hash") == 0)
                d->source_hash = true;   /* the files' digests decide, after */
        else if (strcmp(key, "inputfile") == 0)
                verdict(v, CAUSE_ARGUMENT, "the source is named %s (was another path)", item_value(it));
        else if (strcmp(key, "cwd") == 0)
                d->cwd_changed = true;
        else if (locale_key(key))
                append(d->env, sizeof(d->env), it + item_key_len(it) - strlen(key));
        else if (env_key(key))
                append(d->env_other, sizeof(d->env_other), it + item_key_len(it) - strlen(key));
        else if (strcmp(key, "path exists") == 0)
                verdict(v, CAUSE_ARGUMENT, "a path an option names exists or not: %s (1: exists)", item_value(it));
        else if (strcmp(key, "arg") == 0) {
                d->args_changed = true;
                if (!strstr(d->added, item_value(it)))
                        append(d->added, sizeof(d->added), item_value(it));
        } else if (strcmp(key, "ext") == 0 && !strchr(item_value(it), ' '))
                verdict(v, CAUSE_ARGUMENT, "the language: the preprocessed text is .%s now", item_value(it));
        else if (strcmp(key, "ext") == 0)   /* compiler_check's command output follows it, unmarked */
                verdict(v, CAUSE_UNKNOWN, "the language or compiler_check's command output differs");
        else
                verdict(v, CAUSE_UNKNOWN, "what ccache hashes as '%.*s' differs", (int) item_key_len(it), it);
}

/* Each item the old call hashed that the new did not (and not merely
 * moved with the build directory), gathered in d. */
static void compare_removed(const Call *old, const Call *new, const Roots *r, const Roots *rw, ItemDiff *d) {
        char key[128];

        for (size_t j = 0; j < old->n_items; j++) {
                const char *it = old->items[j];
                bool moved = false;

                if (has_item(new, it) || !has_section(new, it))
                        continue;
                for (size_t i = 0; i < new->n_items && !moved; i++)
                        moved = moved_item(old, j, new, i, r, rw);
                if (moved)
                        continue;
                item_key(it, key, sizeof(key));
                if (strcmp(key, "arg") == 0) {
                        d->args_changed = true;
                        if (!strstr(d->removed, item_value(it)))
                                append(d->removed, sizeof(d->removed), item_value(it));
                } else if (strcmp(key, "cwd") == 0)
                        d->cwd_changed = true;
                else if (locale_key(key)) {
                        if (!strstr(d->env, key))
                                append(d->env, sizeof(d->env), key);
                } else if (env_key(key) && !strstr(d->env_other, key))
                        append(d->env_other, sizeof(d->env_other), key);
        }
}

/* Each item the new call hashed that the old did not, and each gone. */
static void compare_items(const Call *old, const Call *new, const Roots *r, const Roots *rw, Verdict *v,
                          ItemDiff *d) {
        char key[128];

        for (size_t i = 0; i < new->n_items; i++) {
                const char *it = new->items[i];
                bool moved = false;

                if (has_item(old, it) || !has_section(old, it))
                        continue;
                /* the same but for the build directory? */
                for (size_t j = 0; j < old->n_items && !moved; j++)
                        moved = moved_item(old, j, new, i, r, rw);
                item_key(it, key, sizeof(key));
                if (consequence_key(key))
                        continue;
                if (moved)
                        note_leak(new, i, key, d);
                else
                        judge_added(it, key, v, d);
        }
        compare_removed(old, new, r, rw, d);
}

/* --- What was read ------------------------------------------------------ */

static const CallFile *find_file(const Call *c, const char *path) {
        for (size_t i = 0; i < c->n_files; i++)
                if (strcmp(c->files[i].path, path) == 0)
                        return &c->files[i];
        return NULL;
}

/* Each file the new call read against the old's: a digest that differs
 * proves a change. */
static void compare_files(const Call *old, const Call *new, const Roots *r, Verdict *v, ItemDiff *d) {
        char buf[PATH_MAX * 2], first[PATH_MAX + 32] = "";
        size_t changed = 0;
        bool same_kind = old->files_kind && old->files_kind == new->files_kind;

        for (size_t i = 0; i < new->n_files; i++) {
                const CallFile *nf = &new->files[i], *of = find_file(old, nf->path);
                bool moved = false;

                for (size_t j = 0; !of && r->differ && j < old->n_files; j++)
                        if (strcmp(rewrite(r, old->files[j].path, buf, sizeof(buf)), nf->path) == 0) {
                                of = &old->files[j];
                                moved = true;
                        }
                /* Its path is in the preprocessed text, unless depend mode hashed
                 * no text, or base_dir made the path relative there. */
                if (of && moved && !new->depend && !below(call_setting(new, "base_dir"), nf->path) &&
                    d->text_paths++ == 0) {
                        char leak[PATH_MAX + 64];

                        snprintf(leak, sizeof(leak), "the path of %s in the preprocessed text", nf->path);
                        append_list(d->leaks, sizeof(d->leaks), leak);
                }
                if (of && of->digest == nf->digest && of->digest != 0 && new->source_path &&
                    strcmp(nf->path, new->source_path) == 0)
                        d->source_same = true;
                if (of && (of->digest == nf->digest || of->digest == 0 || nf->digest == 0))
                        continue;
                if (new->source_path && strcmp(nf->path, new->source_path) == 0) {
                        if (of)
                                verdict(v, CAUSE_SOURCE, "the source file changed");
                        continue;
                }
                if (!of && !same_kind)
                        continue;   /* another list of what it read: the text's, the dependency file's, the manifest's */
                if (changed++ == 0)
                        snprintf(first, sizeof(first), "%s%s", nf->path, of ? "" : " (newly included)");
        }
        for (size_t j = 0; same_kind && j < old->n_files; j++) {
                const CallFile *of = &old->files[j];

                if (find_file(new, of->path) || (r->differ && find_file(new, rewrite(r, of->path, buf, sizeof(buf)))))
                        continue;
                if (changed++ == 0)
                        snprintf(first, sizeof(first), "%s (no longer included)", of->path);
        }
        if (changed == 1)
                verdict(v, CAUSE_INCLUDE, "%s changed", first);
        else if (changed > 1)
                verdict(v, CAUSE_INCLUDE, "%s and %zu more included files changed", first, changed - 1);
}

static bool has_hash(const Call *c, const char *h) {
        for (size_t i = 0; i < c->n_include_hashes; i++)
                if (strcmp(c->include_hashes[i], h) == 0)
                        return true;
        return false;
}

/* Depend mode: ccache's own digests of the includes, new against old; the
 * manifest names the file behind a new digest. */
static void compare_include_hashes(const Call *old, const Call *new, Verdict *v) {
        size_t changed = 0;
        const char *first = NULL;

        for (size_t i = 0; i < new->n_include_hashes; i++) {
                if (has_hash(old, new->include_hashes[i]))
                        continue;
                if (changed++ == 0 || !first)
                        first = new->include_paths ? new->include_paths[i] : NULL;
        }
        for (size_t j = 0; j < old->n_include_hashes; j++)
                if (!has_hash(new, old->include_hashes[j]) && changed == 0)
                        changed++;   /* one fewer: an include gone */
        if (changed == 0)
                return;
        if (first)
                verdict(v, CAUSE_INCLUDE, "%s changed (ccache's digest of it differs)", first);
        else
                verdict(v, CAUSE_INCLUDE, "ccache's digests of the included files differ (%zu of them); its "
                        "manifest names none of the new ones", changed);
}

static bool same_keys(const Call *old, const Call *new) {
        for (size_t i = 0; i < new->n_result_keys; i++)
                for (size_t j = 0; j < old->n_result_keys; j++)
                        if (strcmp(new->result_keys[i], old->result_keys[j]) == 0)
                                return true;
        return false;
}

/* The miss new against the record old of the same source and object. */
void call_compare(const Call *old, const Call *new, int64_t now, Verdict *v, Roots *r) {
        char buf[1024], when[32];
        ItemDiff d = { .added = "" };
        Roots rw, rf = { .differ = false };

        /* The build directories; and where each ran, below them (CMake's Makefiles) */
        roots(old->build_root ?: old->workdir, new->build_root ?: new->workdir, r);
        roots(old->workdir, new->workdir, &rw);
        explain_ago(old->when, now, when, sizeof(when));
        if (old->cache_dir && new->cache_dir && strcmp(old->cache_dir, new->cache_dir) != 0) {
                verdict(v, CAUSE_CONFIG, "another cache: cache_dir %s -> %s", old->cache_dir, new->cache_dir);
                return;
        }
        /* The very key the last run stored or hit, looked up again and missed: gone. */
        if ((old->stored || old->hit) && same_keys(old, new) && (!new->depend || !old->depend ||
                                                                 strcmp(old->manifest_key ?: "", new->manifest_key ?: "") == 0)) {
                verdict(v, CAUSE_EVICTED, "the same inputs as the explained run of %s, whose entry is gone from "
                        "the cache (cachekeeperd did not see it leave)", when);
                return;
        }
        if (config_changes(old, new, buf, sizeof(buf))) {
                verdict(v, CAUSE_CONFIG, "%s (a setting that enters the key: expected once)", buf);
                return;
        }
        compare_items(old, new, r, &rw, v, &d);
        if (old->has_files && new->has_files) {
                /* the files may be an older call's, of another build directory */
                roots(old->files_root ?: old->build_root ?: old->workdir, new->build_root ?: new->workdir, &rf);
                compare_files(old, new, &rf, v, &d);
        }
        if (d.leaks[0])
                verdict(v, CAUSE_BUILD_DIR, "the build directory %s -> %s reaches the key through %s",
                        r->differ ? r->from : rf.from, r->differ ? r->to : rf.to, d.leaks);
        /* a depend-mode hit hashed no include: its record has none to compare */
        if (old->depend && new->depend && old->n_include_hashes > 0 && new->n_include_hashes > 0 &&
            v->cause > CAUSE_INCLUDE)
                compare_include_hashes(old, new, v);
        if (d.added[0] || d.removed[0])
                verdict(v, CAUSE_ARGUMENT, "%s%s%s%s%s", d.added[0] ? "added: " : "", d.added,
                        d.added[0] && d.removed[0] ? "; " : "", d.removed[0] ? "removed: " : "", d.removed);
        /* ccache's hash of the source: its content, unless its digest says otherwise */
        if (d.source_hash && v->cause > CAUSE_SOURCE) {
                if (new->time_macro)
                        verdict(v, CAUSE_TIME_MACRO, "__TIME__, __DATE__ or __TIMESTAMP__ in the source expands anew each build");
                else if (!d.source_same)
                        verdict(v, CAUSE_SOURCE, "the source file changed");
                else
                        verdict(v, CAUSE_UNKNOWN, "ccache's hash of the source differs, though what it holds does not");
        }
        if (d.env_other[0])
                verdict(v, CAUSE_ENVIRONMENT, "a hashed variable changed: %s", d.env_other);
        if (d.env[0]) {
                if (sloppiness_change(old, new, buf, sizeof(buf)))
                        verdict(v, CAUSE_CONFIG, "%s (the locale is hashed or not: expected once)", buf);
                else
                        verdict(v, CAUSE_ENVIRONMENT, "a hashed variable changed: %s", d.env);
        }
        if (d.cwd_changed && !d.args_changed && v->cause >= CAUSE_FIRST_BUILD)
                verdict(v, CAUSE_UNKNOWN, "the working directory entered or left what ccache hashed");
        if (v->cause >= CAUSE_FIRST_BUILD && new->time_macro)
                verdict(v, CAUSE_TIME_MACRO, "__TIME__, __DATE__ or __TIMESTAMP__ in the source expands anew each build");
        if (v->cause >= CAUSE_FIRST_BUILD && sloppiness_change(old, new, buf, sizeof(buf)))
                verdict(v, CAUSE_CONFIG, "%s (expected once)", buf);
        if (v->cause >= CAUSE_FIRST_BUILD && !v->detail[0])
                verdict(v, CAUSE_UNKNOWN, "nothing ccache hashed differs from the explained run of %s, yet the key "
                        "did", when);
}
