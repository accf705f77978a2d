/* SPDX-License-Identifier: MIT */
/* One ccache call as its debug mode recorded it (explain-internal.h). The
 * formats read here, ccache 4.7 to 4.12 (ccache's src/ccache/ccache.cpp,
 * where the debug files are written):
 *
 *   <object>.<time>.ccache-log   the call's log: "[time pid] text" lines.
 *       "=== CCACHE 4.7.5 STARTED", "Config: (origin) key = value" (every
 *       setting), "Working directory: ", "Source file: ", "Object file: ",
 *       "Dependency file: ", "Manifest key: ", "Result key: " (each key it
 *       looked up or computed), "Stored KEY in local storage", "Disabling
 *       depend mode", "Found __TIME__ ...", "Result: cache_miss" or
 *       "Result: direct_cache_hit" ... (its statistics counters).
 *   <object>.<time>.ccache-input-text   what it hashed, readable:
 *       "=== SECTION ===" (COMMON, DIRECT MODE, PREPROCESSOR MODE), then
 *       "### key" and the lines hashed under it. "### cpp" is the
 *       preprocessed text, whose linemarkers name every file it came from;
 *       in depend mode "### include" is the digest of one included file,
 *       whose paths only the dependency file names. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build/explain-internal.h"
#include "build/explain.h"
#include "core/readfile.h"

/* The settings that enter a key (ccache's hash_common_info and the mode
 * it runs in): what `config` verdicts compare. direct_mode is kept too,
 * though it never changes a result key: explain-compare.c says so. */
static const char *const key_settings[] = {
        "base_dir", "hash_dir", "sloppiness", "compiler_check", "depend_mode", "direct_mode",
        "namespace", "run_second_cpp",   /* not a status key: ccache's settings */ "keep_comments_cpp", "extra_files_to_hash", "ignore_options",
        "ignore_headers_in_manifest", "cpp_extension", "compiler", "compiler_type",
        "pch_external_checksum", NULL,
};

uint64_t explain_fnv(uint64_t h, const void *s, size_t n) {
        const unsigned char *p = s;

        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

void strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

void call_done(Call *c) {
        free(c->version);
        free(c->cache_dir);
        strv_free(c->config, c->n_config);
        free(c->workdir);
        free(c->source);
        free(c->source_path);
        free(c->object_path);
        free(c->object_rel);
        free(c->build_root);
        free(c->files_root);
        strv_free(c->missing, c->n_missing);
        free(c->depfile);
        free(c->manifest_key);
        strv_free(c->result_keys, c->n_result_keys);
        free(c->manifest_result);
        free(c->manifest_path);
        free(c->ccache);
        for (size_t i = 0; c->include_paths && i < c->n_include_hashes; i++)
                free(c->include_paths[i]);
        free(c->include_paths);
        strv_free(c->items, c->n_items);
        strv_free(c->include_hashes, c->n_include_hashes);
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i].path);
        free(c->files);
        *c = (Call) { 0 };
}

int strv_add(char ***v, size_t *n, const char *s, size_t len) {
        char **nv = realloc(*v, (*n + 1) * sizeof(char *));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = strndup(s, len)))
                return -ENOMEM;
        (*n)++;
        return 0;
}

const char *call_setting(const Call *c, const char *key) {
        size_t k = strlen(key);

        for (size_t i = 0; i < c->n_config; i++)
                if (strncmp(c->config[i], key, k) == 0 && c->config[i][k] == '=')
                        return c->config[i] + k + 1;
        return NULL;
}

/* Adds the file the call read at path (as the text or the dependency file
 * spells it), once by its normalised path. */
static int add_file(Call *c, Digests *d, const char *path) {
        char norm[PATH_MAX];
        CallFile *files;
        uint64_t digest;
        struct stat st;

        if (path[0] == '<' || path[0] == '\0')
                return 0;   /* <built-in>, <command-line> */
        if (path[strlen(path) - 1] == '/' || strcmp(path, ".") == 0)
                return 0;   /* gcc's working-directory marker (-g): a directory, not a file read */
        digests_normalise(d, c->workdir, path, norm, sizeof(norm));
        for (size_t i = c->n_files; i > 0; i--)
                if (strcmp(c->files[i - 1].path, norm) == 0)
                        return 0;
        digest = digests_of(d, norm);
        if (digest == 0 && stat(norm, &st) == 0 && S_ISDIR(st.st_mode))
                return 0;   /* gcc's working-directory marker (-g), as ccache hashes it: no file read */
        files = realloc(c->files, (c->n_files + 1) * sizeof(CallFile));
        if (!files)
                return -ENOMEM;
        c->files = files;
        c->files[c->n_files] = (CallFile) { .path = strdup(norm), .digest = digest };
        if (!c->files[c->n_files].path)
                return -ENOMEM;
        c->n_files++;
        return 0;
}

static int add_item(Call *c, const char *section, const char *key, const char *value, size_t vlen) {
        char buf[ITEM_MAX + 256];
        int l;

        if (strcmp(key, "include") == 0)
                return strv_add(&c->include_hashes, &c->n_include_hashes, value, vlen);
        if (strcmp(key, "cppstderr") == 0)
                return 0;   /* the preprocessor's warnings: a consequence of what it read, never a cause */
        if (vlen > ITEM_MAX)
                l = snprintf(buf, sizeof(buf), "%s/%s=#%016" PRIx64, section, key, explain_fnv(FNV_INIT, value, vlen));
        else
                l = snprintf(buf, sizeof(buf), "%s/%s=%.*s", section, key, (int) vlen, value);
        return strv_add(&c->items, &c->n_items, buf, (size_t) l < sizeof(buf) ? (size_t) l : sizeof(buf) - 1);
}

/* "# 12 "" (the path on the next line, as ccache hashes it: in parts, for
 * base_dir) or "# 12 "path" 1 3". */
static bool linemarker_start(const char *line, const char **path, size_t *path_len) {
        const char *p = line + 2, *q;

        if (line[0] != '#' || line[1] != ' ' || *p < '0' || *p > '9')
                return false;
        while (*p >= '0' && *p <= '9')
                p++;
        if (p[0] != ' ' || p[1] != '"')
                return false;
        p += 2;
        q = strchr(p, '"');
        *path = p;
        *path_len = q ? (size_t) (q - p) : 0;   /* 0: on the next line */
        return true;
}

typedef struct TextState {
        char section[64], key[128];
        char *value;
        size_t vlen, vcap;
        bool path_next;
} TextState;

static int text_value_line(TextState *s, const char *line, size_t n) {
        if (s->vlen + n + 2 > s->vcap) {
                char *v = realloc(s->value, s->vcap = (s->vlen + n + 2) * 2);

                if (!v)
                        return -ENOMEM;
                s->value = v;
        }
        if (s->vlen > 0)
                s->value[s->vlen++] = ' ';
        memcpy(s->value + s->vlen, line, n);
        s->vlen += n;
        s->value[s->vlen] = '\0';
        return 0;
}

/* One line of the preprocessed text: only its linemarkers matter. */
static int text_cpp_line(TextState *s, Call *c, Digests *d, char *line) {
        const char *mpath;
        size_t mlen;

        if (s->path_next) {
                s->path_next = false;
                return add_file(c, d, line);
        }
        if (!linemarker_start(line, &mpath, &mlen))
                return 0;
        if (mlen == 0) {
                s->path_next = true;
                return 0;
        }
        line[mpath - line + mlen] = '\0';
        return add_file(c, d, mpath);
}

/* Reads ccache's hashed input text: items, and the files the text came from. */
static int read_input_text(const char *path, Call *c, Digests *d) {
        TextState s = { 0 };
        ReadFile f;
        char *line;
        size_t n;
        int r;

        if ((r = readfile_begin(&f, NULL, path, RECORD_MAX_BYTES)) < 0)
                return r == -EINVAL ? -ENOENT : r;   /* no regular file: none to read */
        c->has_text = true;
        for (;;) {
                bool boundary;

                line = readfile_line(&f, RECORD_LINE_MAX, &n);
                if (!line && readfile_cut(&f)) {
                        r = -EFBIG;
                        break;
                }
                boundary = !line || strncmp(line, "### ", 4) == 0 || strncmp(line, "=== ", 4) == 0;
                /* A key ends at the next key, section or the end. */
                if (boundary && s.key[0] && strcmp(s.key, "cpp") != 0 &&
                    (r = add_item(c, s.section, s.key, s.value ?: "", s.vlen)) < 0)
                        break;
                if (boundary) {
                        s.key[0] = '\0';
                        s.vlen = 0;
                }
                if (!line)
                        break;
                if (strncmp(line, "=== ", 4) == 0) {
                        char *end = strstr(line + 4, " ===");

                        snprintf(s.section, sizeof(s.section), "%.*s", end ? (int) (end - line - 4) : 0, line + 4);
                } else if (strncmp(line, "### ", 4) == 0) {
                        snprintf(s.key, sizeof(s.key), "%s", line + 4);
                        s.path_next = false;
                        if (strcmp(s.key, "cpp") == 0) {
                                c->has_files = true;
                                c->files_kind = 't';
                        }
                } else if (s.key[0] && strcmp(s.key, "cpp") == 0)
                        r = text_cpp_line(&s, c, d, line);
                else if (s.key[0])
                        r = text_value_line(&s, line, n);
                if (r < 0)
                        break;
        }
        free(s.value);
        readfile_end(&f);
        return r;
}

/* The dependency file (depend mode): Make syntax, "target: dep dep \\".
 * Its prerequisites are the files the compiler read. */
typedef struct Token {
        char s[PATH_MAX];
        size_t n;
} Token;

static void token_put(Token *t, int ch) {
        if (t->n + 1 < sizeof(t->s))
                t->s[t->n++] = (char) ch;
}

/* Ends the token: a prerequisite is added, a target ("x.o:") is not. */
static int token_end(Call *c, Digests *d, Token *t) {
        int r = 0;

        t->s[t->n] = '\0';
        if (t->n > 0 && t->s[t->n - 1] != ':')
                r = add_file(c, d, t->s);
        t->n = 0;
        return r;
}

/* One line of a dependency file into tokens; its end is a separator (a
 * backslash before it continues the rule: a separator too). */
static int depfile_line(Call *c, Digests *d, Token *t, const char *line, size_t len) {
        int r = 0;

        for (size_t i = 0; r == 0 && i <= len; i++) {
                char ch = i < len ? line[i] : '\n', next = i + 1 < len ? line[i + 1] : '\n';

                if (ch == '\\' && (next == ' ' || next == '#')) {
                        token_put(t, next);   /* an escaped character */
                        i++;
                } else if (ch == '\\' && next != '\n' && next != '\r')
                        token_put(t, ch);
                else if (ch == '$') {
                        token_put(t, ch);   /* "$$" is one "$" */
                        i += next == '$';
                } else if (ch == '\\' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
                        r = token_end(c, d, t);
                else
                        token_put(t, ch);
        }
        return r;
}

static int read_depfile(Call *c, Digests *d) {
        char path[PATH_MAX];
        Token t = { .n = 0 };
        ReadFile f;
        char *line;
        size_t len;
        int r = 0;

        digests_normalise(d, c->workdir, c->depfile, path, sizeof(path));
        if (readfile_begin(&f, &d->budget, path, RECORD_MAX_BYTES) < 0)
                return 0;   /* gone, no regular file, or the budget spent: nothing known of what it read */
        c->has_files = true;
        c->files_kind = 'd';
        while (r == 0 && (line = readfile_line(&f, RECORD_LINE_MAX, &len)))
                r = depfile_line(c, d, &t, line, len);
        if (r == 0)
                r = token_end(c, d, &t);
        readfile_end(&f);
        return r;
}

/* Depend mode: the path behind each "### include" digest, from ccache's
 * manifest; each such file is one the call read. */
static int include_paths(Call *c, Digests *d) {
        Manifest m = { 0 };
        int r;

        if (!c->manifest_path || !c->ccache || c->n_include_hashes == 0)
                return 0;
        if ((r = manifest_read(c->ccache, c->manifest_path, &m)) < 0 || m.n_infos == 0)
                goto out;
        if (!(c->include_paths = calloc(c->n_include_hashes, sizeof(char *)))) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < c->n_include_hashes; i++)
                for (size_t j = 0; j < m.n_infos; j++)
                        if (m.info_hash[j] && strcmp(m.info_hash[j], c->include_hashes[i]) == 0 &&
                            m.info_path[j] < m.n_paths) {
                                char norm[PATH_MAX];

                                digests_normalise(d, c->workdir, m.paths[m.info_path[j]], norm, sizeof(norm));
                                if (!(c->include_paths[i] = strdup(norm))) {
                                        r = -ENOMEM;
                                        goto out;
                                }
                                break;
                        }
        /* What it read: the source and every include named. */
        c->has_files = true;
        c->files_kind = 'm';
        if (c->source && (r = add_file(c, d, c->source)) < 0)
                goto out;
        for (size_t i = 0; i < c->n_include_hashes; i++)
                if (c->include_paths[i] && (r = add_file(c, d, c->include_paths[i])) < 0)
                        goto out;
out:
        manifest_done(&m);
        return r;
}

/* The text after "[time pid] " of a log line, or NULL. */
static const char *log_text(const char *line) {
        const char *p;

        if (line[0] != '[' || !(p = strstr(line, "] ")))
                return NULL;
        return p + 2;
}

static int take_field(char **field, const char *value) {
        if (*field)
                return 0;   /* the first: ccache logs each once a call */
        *field = strdup(value);
        return *field ? 0 : -ENOMEM;
}

/* "Config: (origin) key = value": a setting that enters a key. */
static int take_config(Call *c, const char *t) {
        const char *k = strchr(t, ')'), *eq;
        char buf[ITEM_MAX];

        if (!k || k[1] != ' ')
                return 0;
        k += 2;
        if (!(eq = strstr(k, " = ")))
                return 0;
        for (const char *const *s = key_settings; *s; s++)
                if (strlen(*s) == (size_t) (eq - k) && strncmp(k, *s, (size_t) (eq - k)) == 0) {
                        int l = snprintf(buf, sizeof(buf), "%s=%s", *s, eq + 3);

                        return strv_add(&c->config, &c->n_config, buf,
                                        (size_t) l < sizeof(buf) ? (size_t) l : sizeof(buf) - 1);
                }
        if (strncmp(k, "cache_dir = ", 12) == 0 && !c->cache_dir)
                return take_field(&c->cache_dir, k + 12);
        return 0;
}

static int log_line(Call *c, const char *t) {
        const char *v;

        if (strncmp(t, "=== CCACHE ", 11) == 0) {
                const char *e = strchr(t + 11, ' ');

                free(c->version);
                c->version = strndup(t + 11, e ? (size_t) (e - t - 11) : strlen(t + 11));
                return c->version ? 0 : -ENOMEM;
        }
        if (strncmp(t, "Config: ", 8) == 0)
                return take_config(c, t + 8);
        if (strncmp(t, "Working directory: ", 19) == 0)
                return take_field(&c->workdir, t + 19);
        if (strncmp(t, "Source file: ", 13) == 0)
                return take_field(&c->source, t + 13);
        if (strncmp(t, "Object file: ", 13) == 0)
                return take_field(&c->object_path, t + 13);
        if (strncmp(t, "Dependency file: ", 17) == 0)
                return take_field(&c->depfile, t + 17);
        if (strncmp(t, "Manifest key: ", 14) == 0)
                return take_field(&c->manifest_key, t + 14);
        if (strcmp(t, "Got result key from manifest") == 0) {
                c->got_from_manifest = true;
                return 0;
        }
        if (strncmp(t, "No ", 3) == 0 && c->manifest_result && strncmp(t + 3, c->manifest_result,
                                                                         strlen(c->manifest_result)) == 0 &&
            strcmp(t + 3 + strlen(c->manifest_result), " in local storage") == 0) {
                c->manifest_result_gone = true;
                return 0;
        }
        if (strncmp(t, "Result key: ", 12) == 0) {
                v = t + 12;
                if (c->got_from_manifest && !c->manifest_result && !(c->manifest_result = strdup(v)))
                        return -ENOMEM;
                c->got_from_manifest = false;
                for (size_t i = 0; i < c->n_result_keys; i++)
                        if (strcmp(c->result_keys[i], v) == 0)
                                return 0;
                return strv_add(&c->result_keys, &c->n_result_keys, v, strlen(v));
        }
        if (strncmp(t, "Command line: ", 14) == 0 && !c->ccache) {
                const char *w = t + 14, *e = strchr(w, ' '), *base;
                size_t l = e ? (size_t) (e - w) : strlen(w);

                base = memrchr(w, '/', l);
                base = base ? base + 1 : w;
                /* "ccache gcc ...", or a compiler that is a symlink to ccache */
                c->ccache = strncmp(base, "ccache", 6) == 0 ? strndup(w, l) : strdup("ccache");
                return c->ccache ? 0 : -ENOMEM;
        }
        if (c->manifest_key && (strncmp(t, "Stored ", 7) == 0 || strncmp(t, "Retrieved ", 10) == 0)) {
                const char *k = t + (t[0] == 'S' ? 7 : 10), *open = strrchr(t, '(');
                size_t kl = strlen(c->manifest_key), l = open ? strlen(open) : 0;

                if (strncmp(k, c->manifest_key, kl) == 0 && k[kl] == ' ' && l > 2 && open[l - 1] == ')') {
                        free(c->manifest_path);
                        if (!(c->manifest_path = strndup(open + 1, l - 2)))
                                return -ENOMEM;
                }
        }
        if (strncmp(t, "No ", 3) == 0 && (v = strstr(t + 3, " in local storage")) && v[17] == '\0' && v > t + 3)
                return strv_add(&c->missing, &c->n_missing, t + 3, (size_t) (v - t - 3));
        if (strncmp(t, "Stored ", 7) == 0 && strstr(t, " in local storage"))
                c->stored = true;
        else if (strcmp(t, "Disabling depend mode") == 0 || strncmp(t, "Disabling depend mode", 21) == 0)
                c->depend = false;
        else if (strcmp(t, "Result: cache_miss") == 0)
                c->miss = true;
        else if (strcmp(t, "Result: direct_cache_hit") == 0 || strcmp(t, "Result: preprocessed_cache_hit") == 0)
                c->hit = true;
        else if (strcmp(t, "Result: recache") == 0)
                c->recache = true;
        else if (strncmp(t, "Found __TIME__ ", 15) == 0 || strncmp(t, "Found __DATE__ ", 15) == 0 ||
                 strncmp(t, "Found __TIMESTAMP__ ", 20) == 0)
                c->time_macro = true;
        return 0;
}

/* "[2026-12-03T15:22:28.650063 5136 ] ...": when ccache wrote the line
 * (local time), in unix seconds; 0 when it says no time. */
static int64_t log_time(const char *line) {
        struct tm tm = { .tm_isdst = -1 };
        const char *end = strptime(line + 1, "%Y-%m-%dT%H:%M:%S", &tm);

        if (line[0] != '[' || !end)
                return 0;
        return (int64_t) mktime(&tm);
}

/* Reads a call's debug log: its settings, where it ran, what it compiled,
 * its keys, and whether it missed. */
static int read_log(const char *path, Call *c) {
        bool depend_disabled = false;
        ReadFile f;
        char *line;
        int r;

        if ((r = readfile_begin(&f, NULL, path, RECORD_MAX_BYTES)) < 0)
                return r == -EINVAL ? -ENOENT : r;
        while (r == 0 && (line = readfile_line(&f, RECORD_LINE_MAX, NULL))) {
                const char *t;

                if (!(t = log_text(line)))
                        continue;
                if (!c->started)
                        c->started = log_time(line);
                depend_disabled |= strncmp(t, "Disabling depend mode", 21) == 0;
                r = log_line(c, t);
        }
        if (r == 0 && readfile_cut(&f))
                r = -EFBIG;
        readfile_end(&f);
        if (r == 0) {
                const char *dm = call_setting(c, "depend_mode");

                c->depend = dm && strcmp(dm, "true") == 0 && !depend_disabled;
        }
        return r;
}

/* The build directory of a call that ran in dir (normalised): the nearest
 * of dir and its parents holding CMakeCache.txt or build.ninja (CMake's
 * Makefiles compile in a directory per sub-directory), else dir. */
static const char *build_root(Digests *d, const char *dir, char *buf, size_t len) {
        size_t n = sizeof(d->roots) / sizeof(d->roots[0]), l;
        char probe[PATH_MAX + 32];

        for (size_t i = 0; i < n; i++)
                if (d->roots[i].dir && strcmp(d->roots[i].dir, dir) == 0) {
                        snprintf(buf, len, "%s", d->roots[i].root);
                        return buf;
                }
        snprintf(buf, len, "%s", dir);
        for (l = strlen(buf); l > 0;) {
                struct stat st;

                snprintf(probe, sizeof(probe), "%.*s/CMakeCache.txt", (int) l, buf);
                if (stat(probe, &st) == 0 && S_ISREG(st.st_mode))
                        break;
                snprintf(probe, sizeof(probe), "%.*s/build.ninja", (int) l, buf);
                if (stat(probe, &st) == 0 && S_ISREG(st.st_mode))
                        break;
                while (l > 0 && buf[l - 1] != '/')
                        l--;
                if (l > 0)
                        l--;   /* the slash: its parent */
        }
        if (l == 0)
                snprintf(buf, len, "%s", dir);   /* none: where it ran */
        else
                buf[l] = '\0';
        free(d->roots[d->next_root].dir);
        free(d->roots[d->next_root].root);
        d->roots[d->next_root].dir = strdup(dir);
        d->roots[d->next_root].root = strdup(buf);
        d->next_root = (d->next_root + 1) % n;
        return buf;
}

/* The identities: the source's real path, the object's normalised path
 * and its path below the build directory. */
static int identify(Call *c, Digests *d) {
        char buf[PATH_MAX], wd[PATH_MAX];
        size_t w;

        if (c->cache_dir) {
                digests_normalise(d, NULL, c->cache_dir, buf, sizeof(buf));
                free(c->cache_dir);
                if (!(c->cache_dir = strdup(buf)))
                        return -ENOMEM;
        }
        if (c->ccache && c->ccache[0] != '/' && strchr(c->ccache, '/') && c->workdir) {
                /* "./ccache": where that call ran */
                normalise_path(c->workdir, c->ccache, buf, sizeof(buf));
                free(c->ccache);
                if (!(c->ccache = strdup(buf)))
                        return -ENOMEM;
        }
        if (!c->source || !c->workdir)
                return 0;
        if (!(c->source_path = strdup(digests_normalise(d, c->workdir, c->source, buf, sizeof(buf)))))
                return -ENOMEM;
        if (c->object_path) {
                digests_normalise(d, c->workdir, c->object_path, buf, sizeof(buf));
                free(c->object_path);
                if (!(c->object_path = strdup(buf)))
                        return -ENOMEM;
                /* Below the build directory as it really is (a symlinked one too). */
                digests_normalise(d, NULL, c->workdir, wd, sizeof(wd));
                if (!(c->build_root = strdup(build_root(d, wd, buf, sizeof(buf)))))
                        return -ENOMEM;
                w = strlen(buf);
                if (strncmp(c->object_path, buf, w) == 0 && c->object_path[w] == '/')
                        c->object_rel = strdup(c->object_path + w + 1);
                else
                        c->object_rel = strdup(c->object_path);
                if (!c->object_rel)
                        return -ENOMEM;
        }
        return 0;
}

int call_read(const char *log_path, Digests *digests, Call *ret) {
        char text[PATH_MAX + 64];
        size_t l = strlen(log_path);
        Call c = { 0 };
        int r;

        if ((r = read_log(log_path, &c)) < 0 || (r = identify(&c, digests)) < 0)
                goto fail;
        if (l > 11 && l < PATH_MAX) {
                snprintf(text, sizeof(text), "%.*s.ccache-input-text", (int) (l - 11), log_path);
                r = read_input_text(text, &c, digests);
                if (r < 0 && r != -ENOENT)
                        goto fail;
        }
        /* The files it read: the text's linemarkers, else (depend mode) its dependency file. */
        if (!c.has_files && c.depfile && c.workdir && (r = read_depfile(&c, digests)) < 0)
                goto fail;
        /* Depend mode: ccache's manifest names each include it hashed (and
         * the files, where the build tool took the dependency file away). */
        if (c.depend && c.miss && (r = include_paths(&c, digests)) < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        call_done(&c);
        return r;
}
