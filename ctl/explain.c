/* SPDX-License-Identifier: MIT */
/* Why compilations missed (explain.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explain.h"

/* A value longer than this is kept as its digest: a fingerprint stays small. */
#define ITEM_MAX 1024
/* A debug record's log or hashed text longer than this is not read. */
#define RECORD_MAX_BYTES (512ULL * 1024 * 1024)

typedef struct File {
        char *path;
        uint64_t digest;        /* FNV-1a over the lines the preprocessed text attributes to it */
} File;

typedef struct Fingerprint {
        char *workdir, *source, *object;   /* as ccache's log says; source and object as given */
        bool miss, time_macro, has_cpp;
        char **items;                      /* "SECTION/key=value value ..." in the order hashed */
        size_t n_items;
        File *files;
        size_t n_files;
} Fingerprint;

static const char *const cause_names[_CAUSE_MAX] = {
        [CAUSE_COMPILER] = "compiler",
        [CAUSE_ARGUMENT] = "argument",
        [CAUSE_SOURCE] = "source",
        [CAUSE_TIME_MACRO] = "time-macro",
        [CAUSE_INCLUDE] = "include-changed",
        [CAUSE_BUILD_DIR] = "build-dir",
        [CAUSE_FIRST_BUILD] = "first-build",
        [CAUSE_UNKNOWN] = "unknown",
};

const char *explain_cause_name(ExplainCause c) {
        return c >= 0 && c < _CAUSE_MAX ? cause_names[c] : "unknown";
}

const char *explain_cause_fix(ExplainCause c, const char *base_dir, char *buf, size_t len) {
        switch (c) {
        case CAUSE_BUILD_DIR:
                snprintf(buf, len,
                         "base_dir = %s and hash_dir = false in ccache.conf (or CCACHE_BASEDIR=%s "
                         "CCACHE_NOHASHDIR=1 in the build's environment)",
                         base_dir ? base_dir : "<a directory above the build directories>",
                         base_dir ? base_dir : "<dir>");
                return buf;
        case CAUSE_TIME_MACRO:
                snprintf(buf, len, "sloppiness = time_macros in ccache.conf, if the embedded time does not matter");
                return buf;
        case CAUSE_COMPILER:
                snprintf(buf, len,
                         "compiler_check = content in ccache.conf, if the same compiler is reinstalled "
                         "(its mtime changes, not the compiler)");
                return buf;
        default:
                return NULL;
        }
}

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char) s[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

#define FNV_INIT 0xcbf29ce484222325ULL

static void fingerprint_done(Fingerprint *f) {
        free(f->workdir);
        free(f->source);
        free(f->object);
        for (size_t i = 0; i < f->n_items; i++)
                free(f->items[i]);
        free(f->items);
        for (size_t i = 0; i < f->n_files; i++)
                free(f->files[i].path);
        free(f->files);
        *f = (Fingerprint) { 0 };
}

static int add_item(Fingerprint *f, const char *section, const char *key, const char *value, size_t vlen) {
        char **items = realloc(f->items, (f->n_items + 1) * sizeof(char *));
        char *s;

        if (!items)
                return -ENOMEM;
        f->items = items;
        if (vlen > ITEM_MAX) {
                if (asprintf(&s, "%s/%s=#%016" PRIx64, section, key, fnv(FNV_INIT, value, vlen)) < 0)
                        return -ENOMEM;
        } else if (asprintf(&s, "%s/%s=%.*s", section, key, (int) vlen, value) < 0)
                return -ENOMEM;
        f->items[f->n_items++] = s;
        return 0;
}

/* The file's index, added if new; -1 out of memory. */
static ssize_t file_index(Fingerprint *f, const char *path) {
        File *files;

        for (size_t i = f->n_files; i > 0; i--)
                if (strcmp(f->files[i - 1].path, path) == 0)
                        return (ssize_t) i - 1;
        files = realloc(f->files, (f->n_files + 1) * sizeof(File));
        if (!files)
                return -1;
        f->files = files;
        f->files[f->n_files] = (File) { .path = strdup(path), .digest = FNV_INIT };
        if (!f->files[f->n_files].path)
                return -1;
        return (ssize_t) f->n_files++;
}

/* What a file holds now, by path: each file read once a run, however many
 * compilations included it. */
typedef struct Digests {
        struct Digest {
                char *path;        /* NULL: empty slot */
                uint64_t digest;   /* 0: not a regular file we may read */
        } *slots;
        size_t n, cap;
} Digests;

/* A file longer than this is told by its size and mtime alone. */
#define CONTENT_MAX_BYTES (64ULL * 1024 * 1024)

static uint64_t content_digest(const char *path) {
        char buf[65536];
        struct stat st;
        uint64_t h = FNV_INIT, total = 0;
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return 0;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return 0;
        }
        if ((unsigned long long) st.st_size > CONTENT_MAX_BYTES) {
                close(fd);
                h = fnv(h, (const char *) &st.st_size, sizeof(st.st_size));
                return fnv(h, (const char *) &st.st_mtim, sizeof(st.st_mtim)) ?: 1;
        }
        while ((n = read(fd, buf, sizeof(buf))) > 0 && (total += (uint64_t) n) <= CONTENT_MAX_BYTES)
                h = fnv(h, buf, (size_t) n);
        close(fd);
        return h ?: 1;
}

static uint64_t digest_of(Digests *d, const char *path) {
        uint64_t h = fnv(FNV_INIT, path, strlen(path));
        size_t i;

        if (d->n + 1 > d->cap / 2) {
                size_t cap = d->cap ? d->cap * 2 : 1024;
                struct Digest *slots = calloc(cap, sizeof(*slots));

                if (!slots)
                        return content_digest(path);   /* no memory to remember: read again */
                for (size_t j = 0; j < d->cap; j++)
                        if (d->slots[j].path) {
                                uint64_t hj = fnv(FNV_INIT, d->slots[j].path, strlen(d->slots[j].path));

                                for (i = hj & (cap - 1); slots[i].path; i = (i + 1) & (cap - 1))
                                        ;
                                slots[i] = d->slots[j];
                        }
                free(d->slots);
                d->slots = slots;
                d->cap = cap;
        }
        for (i = h & (d->cap - 1); d->slots[i].path; i = (i + 1) & (d->cap - 1))
                if (strcmp(d->slots[i].path, path) == 0)
                        return d->slots[i].digest;
        d->slots[i].path = strdup(path);
        d->slots[i].digest = content_digest(path);
        if (d->slots[i].path)
                d->n++;
        return d->slots[i].digest;
}

static void digests_done(Digests *d) {
        for (size_t i = 0; i < d->cap; i++)
                free(d->slots[i].path);
        free(d->slots);
        *d = (Digests) { 0 };
}

/* Each file the preprocessed text came from, told by what it holds now
 * (a header of macros alone adds no line of its own to the text; a header
 * whose content is unchanged may still be read from another path). What
 * cannot be read keeps the digest of its lines in the text. */
static void take_contents(Fingerprint *f, Digests *d) {
        for (size_t i = 0; i < f->n_files; i++) {
                const char *p = f->files[i].path;
                char abs[4096];
                uint64_t c;

                if (p[0] == '<')
                        continue;   /* <built-in>, <command-line> */
                if (p[0] != '/') {
                        if (!f->workdir)
                                continue;
                        snprintf(abs, sizeof(abs), "%s/%s", f->workdir, p);   /* relative to where it ran */
                        p = abs;
                }
                c = digest_of(d, p);
                if (c != 0)
                        f->files[i].digest = c;
        }
}

/* "# 12 "" (a linemarker whose path follows on the next line, as ccache
 * hashes it: in parts, for base_dir) or "# 12 "path" 1 3". */
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

/* Reads ccache's hashed input text: "=== SECTION ===", then "### key" and
 * the lines hashed under it. The preprocessed text ("### cpp") is split by
 * its linemarkers into one digest per file. */
static int read_input_text(const char *path, Fingerprint *f) {
        char *line = NULL, section[64] = "", key[128] = "", *value = NULL;
        size_t cap = 0, vlen = 0, vcap = 0;
        ssize_t n, cur = -1;
        bool path_next = false, close_next = false;
        uint64_t total = 0;
        int r = 0;
        FILE *fp = fopen(path, "re");

        if (!fp)
                return -errno;
        for (;;) {
                n = getline(&line, &cap, fp);
                if (n >= 0 && (total += (uint64_t) n) > RECORD_MAX_BYTES) {
                        r = -EFBIG;
                        break;
                }
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                /* A key ends at the next key, section or the end. */
                if (n < 0 || strncmp(line, "### ", 4) == 0 || strncmp(line, "=== ", 4) == 0) {
                        if (key[0] && strcmp(key, "cpp") != 0 && (r = add_item(f, section, key, value ?: "", vlen)) < 0)
                                break;
                        key[0] = '\0';
                        vlen = 0;
                }
                if (n < 0)
                        break;
                if (strncmp(line, "=== ", 4) == 0) {
                        char *end = strstr(line + 4, " ===");

                        snprintf(section, sizeof(section), "%.*s", end ? (int) (end - line - 4) : 0, line + 4);
                        continue;
                }
                if (strncmp(line, "### ", 4) == 0) {
                        snprintf(key, sizeof(key), "%s", line + 4);
                        f->has_cpp |= strcmp(key, "cpp") == 0;
                        cur = -1;
                        continue;
                }
                if (!key[0])
                        continue;
                if (strcmp(key, "cpp") == 0) {
                        const char *mpath;
                        size_t mlen;

                        if (path_next) {
                                path_next = false;
                                close_next = true;
                                if ((cur = file_index(f, line)) < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                continue;
                        }
                        if (close_next && line[0] == '"') {
                                close_next = false;
                                continue;
                        }
                        close_next = false;
                        if (linemarker_start(line, &mpath, &mlen)) {
                                if (mlen == 0) {
                                        path_next = true;
                                        continue;
                                }
                                char *p = strndup(mpath, mlen);

                                cur = p ? file_index(f, p) : -1;
                                free(p);
                                if (cur < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                continue;
                        }
                        if (cur >= 0)
                                f->files[cur].digest = fnv(fnv(f->files[cur].digest, line, (size_t) n), "\n", 1);
                        continue;
                }
                /* A value's lines, joined by spaces. */
                if (vlen + (size_t) n + 2 > vcap) {
                        char *v = realloc(value, vcap = (vlen + (size_t) n + 2) * 2);

                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        value = v;
                }
                if (vlen > 0)
                        value[vlen++] = ' ';
                memcpy(value + vlen, line, (size_t) n);
                vlen += (size_t) n;
                value[vlen] = '\0';
        }
        free(line);
        free(value);
        fclose(fp);
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

/* Reads a call's debug log: where it ran, what it compiled, and whether it
 * missed. */
static int read_log(const char *path, Fingerprint *f) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        uint64_t total = 0;
        int r = 0;
        FILE *fp = fopen(path, "re");

        if (!fp)
                return -errno;
        while (r == 0 && (n = getline(&line, &cap, fp)) >= 0) {
                const char *t;

                if ((total += (uint64_t) n) > RECORD_MAX_BYTES) {
                        r = -EFBIG;
                        break;
                }
                if (n > 0 && line[n - 1] == '\n')
                        line[n - 1] = '\0';
                if (!(t = log_text(line)))
                        continue;
                if (strncmp(t, "Working directory: ", 19) == 0)
                        r = take_field(&f->workdir, t + 19);
                else if (strncmp(t, "Source file: ", 13) == 0)
                        r = take_field(&f->source, t + 13);
                else if (strncmp(t, "Object file: ", 13) == 0)
                        r = take_field(&f->object, t + 13);
                else if (strcmp(t, "Result: cache_miss") == 0)
                        f->miss = true;
                else if (strncmp(t, "Found __TIME__ ", 15) == 0 || strncmp(t, "Found __DATE__ ", 15) == 0 ||
                         strncmp(t, "Found __TIMESTAMP__ ", 20) == 0)
                        f->time_macro = true;
        }
        free(line);
        fclose(fp);
        return r;
}

/* The source as an absolute path (into buf). */
static const char *absolute_source(const Fingerprint *f, char *buf, size_t len) {
        const char *s = f->source ?: "";

        if (s[0] == '/' || !f->workdir)
                snprintf(buf, len, "%s", s);
        else
                snprintf(buf, len, "%s/%s", f->workdir, strncmp(s, "./", 2) == 0 ? s + 2 : s);
        return buf;
}

/* The store's name for f: a digest of its source and object (relative to
 * where it ran, so that the same target built elsewhere finds it). */
static void store_name(const Fingerprint *f, char *buf, size_t len) {
        char abs[4096];
        const char *o = f->object ?: "";
        size_t w = f->workdir ? strlen(f->workdir) : 0;
        uint64_t h;

        if (w > 0 && strncmp(o, f->workdir, w) == 0 && o[w] == '/')
                o += w + 1;
        absolute_source(f, abs, sizeof(abs));
        h = fnv(fnv(fnv(FNV_INIT, abs, strlen(abs)), "\n", 1), o, strlen(o));
        snprintf(buf, len, "%016" PRIx64 ".fp", h);
}

/* A value on one line: newlines would end it early. */
static void put_line(FILE *fp, const char *tag, const char *s) {
        fprintf(fp, "%s ", tag);
        for (; s && *s; s++)
                fputc(*s == '\n' ? ' ' : *s, fp);
        fputc('\n', fp);
}

static int save(const char *store_dir, const Fingerprint *f) {
        char name[64], tmp[4200], path[4200];
        FILE *fp;
        int fd, r = 0;

        store_name(f, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", store_dir, name);
        snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", store_dir, name);
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        fp = fdopen(fd, "w");
        if (!fp) {
                r = -errno;
                close(fd);
                unlink(tmp);
                return r;
        }
        fprintf(fp, "cachekeeper-fingerprint 1\n");
        put_line(fp, "w", f->workdir);
        put_line(fp, "s", f->source);
        put_line(fp, "o", f->object);
        fprintf(fp, "t %d\n", f->time_macro);
        for (size_t i = 0; i < f->n_items; i++)
                put_line(fp, "i", f->items[i]);
        for (size_t i = 0; i < f->n_files; i++) {
                char tag[32];

                snprintf(tag, sizeof(tag), "f %016" PRIx64, f->files[i].digest);
                put_line(fp, tag, f->files[i].path);
        }
        if (fclose(fp) != 0 || rename(tmp, path) < 0) {
                r = -errno;
                unlink(tmp);
        }
        return r;
}

/* The fingerprint kept for the same source and object as f, into *ret:
 * 1 found, 0 none (or another's under the same digest), -errno. */
static int load(const char *store_dir, const Fingerprint *f, Fingerprint *ret) {
        char name[64], path[4200], *line = NULL, a[4096], b[4096];
        size_t cap = 0;
        ssize_t n;
        int r = 0;
        FILE *fp;

        *ret = (Fingerprint) { .has_cpp = false };
        store_name(f, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", store_dir, name);
        fp = fopen(path, "re");
        if (!fp)
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && (n = getline(&line, &cap, fp)) >= 0) {
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                if (n < 2 || line[1] != ' ')
                        continue;
                switch (line[0]) {
                case 'w': r = take_field(&ret->workdir, line + 2); break;
                case 's': r = take_field(&ret->source, line + 2); break;
                case 'o': r = take_field(&ret->object, line + 2); break;
                case 't': ret->time_macro = line[2] == '1'; break;
                case 'i': {
                        char **items = realloc(ret->items, (ret->n_items + 1) * sizeof(char *));

                        if (!items || !(items[ret->n_items] = strdup(line + 2)))
                                r = -ENOMEM;
                        if (items)
                                ret->items = items;
                        if (r == 0)
                                ret->n_items++;
                        break;
                }
                case 'f': {
                        uint64_t d;
                        int off = 0;
                        ssize_t i;

                        if (sscanf(line + 2, "%" SCNx64 " %n", &d, &off) != 1 || off == 0)
                                break;
                        i = file_index(ret, line + 2 + off);
                        if (i < 0)
                                r = -ENOMEM;
                        else
                                ret->files[i].digest = d;
                        ret->has_cpp = true;
                        break;
                }
                }
        }
        free(line);
        fclose(fp);
        if (r < 0) {
                fingerprint_done(ret);
                return r;
        }
        /* The same source and object? (The digest may name another's.) */
        absolute_source(ret, a, sizeof(a));
        absolute_source(f, b, sizeof(b));
        if (strcmp(a, b) != 0) {
                fingerprint_done(ret);
                return 0;
        }
        return 1;
}

/* The build directories of two runs: their working directories with the
 * path components they end in alike taken off (b1/sub and b2/sub: b1 and
 * b2), so that a path below either root is mapped. */
typedef struct Roots {
        char from[4096], to[4096];
        bool differ;
} Roots;

static void roots(const char *old, const char *new, Roots *r) {
        size_t a, b;

        *r = (Roots) { 0 };
        if (!old || !new || strcmp(old, new) == 0)
                return;
        a = strlen(old);
        b = strlen(new);
        /* Drop common trailing components. */
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

/* A directory above a, b and c (each a directory or file path). */
static char *common_dir(const char *a, const char *b, const char *c) {
        size_t n = 0;

        while (a[n] && a[n] == b[n] && a[n] == c[n])
                n++;
        /* back to the last whole component */
        if (!((a[n] == '\0' || a[n] == '/') && (b[n] == '\0' || b[n] == '/') && (c[n] == '\0' || c[n] == '/')))
                while (n > 0 && a[n - 1] != '/')
                        n--;
        while (n > 1 && a[n - 1] == '/')
                n--;
        return n == 0 ? strdup("/") : strndup(a, n);
}

/* What an item is about: "SECTION/key". */
static size_t item_key_len(const char *item) {
        const char *eq = strchr(item, '=');

        return eq ? (size_t) (eq - item) : strlen(item);
}

static ExplainCause item_cause(const char *item) {
        size_t k = item_key_len(item);

        if (strncmp(item, "COMMON/cc_", 10) == 0)
                return CAUSE_COMPILER;
        if (k >= 15 && strncmp(item + k - 15, "sourcecode hash", 15) == 0)
                return CAUSE_SOURCE;
        if (k >= 9 && strncmp(item + k - 9, "inputfile", 9) == 0)
                return CAUSE_SOURCE;
        if (k >= 7 && strncmp(item + k - 7, "version", 7) == 0)   /* not a status key: ccache's */
                return CAUSE_UNKNOWN;   /* another ccache */
        if (k >= 9 && strncmp(item + k - 9, "cppstderr", 9) == 0)
                return CAUSE_UNKNOWN;
        return CAUSE_ARGUMENT;
}

static bool has_item(const Fingerprint *f, const char *item) {
        for (size_t i = 0; i < f->n_items; i++)
                if (strcmp(f->items[i], item) == 0)
                        return true;
        return false;
}

/* The cause of more weight: the first in ExplainCause's order. */
static void note(ExplainCause *cause, char *detail, size_t len, ExplainCause c, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void note(ExplainCause *cause, char *detail, size_t len, ExplainCause c, const char *fmt, ...) {
        va_list ap;

        /* The first difference of a cause tells it; one of more weight wins. */
        if (c > *cause || (c == *cause && detail[0]))
                return;
        *cause = c;
        va_start(ap, fmt);
        vsnprintf(detail, len, fmt, ap);
        va_end(ap);
}

/* An item for a message: "DIRECT MODE/arg=-O2" → "-O2". */
static const char *item_value(const char *item) {
        const char *eq = strchr(item, '=');

        return eq ? eq + 1 : item;
}

/* Compares the old run's fingerprint with the new; the cause of more
 * weight wins, with what differs. */
static ExplainCause compare(const Fingerprint *old, const Fingerprint *new, char *detail, size_t len,
                            Roots *ret_roots) {
        ExplainCause cause = CAUSE_UNKNOWN;
        size_t includes = 0;
        char buf[8192], first_include[4096] = "";
        Roots r;

        roots(old->workdir, new->workdir, &r);
        *ret_roots = r;
        detail[0] = '\0';
        /* Items: each of the new run's not in the old; then each of the old's gone. */
        for (size_t i = 0; i < new->n_items; i++) {
                const char *it = new->items[i];

                if (has_item(old, it))
                        continue;
                /* the same but for the build directory? */
                for (size_t j = 0; j < old->n_items; j++)
                        if (item_key_len(old->items[j]) == item_key_len(it) &&
                            strcmp(rewrite(&r, old->items[j], buf, sizeof(buf)), it) == 0) {
                                note(&cause, detail, len, CAUSE_BUILD_DIR, "%s %s -> %s",
                                     strncmp(it, "COMMON/cwd=", 11) == 0 ? "cwd" : "path", r.from, r.to);   /* not a status key */
                                goto next;
                        }
                switch (item_cause(it)) {
                case CAUSE_COMPILER:
                        note(&cause, detail, len, CAUSE_COMPILER, "the compiler: %.*s changed",
                             (int) item_key_len(it) - 7, it + 7);
                        break;
                case CAUSE_SOURCE:
                        if (new->time_macro)
                                break;   /* its hash is empty: the text decides */
                        note(&cause, detail, len, CAUSE_SOURCE, "the source file changed");
                        break;
                case CAUSE_ARGUMENT:
                        note(&cause, detail, len, CAUSE_ARGUMENT, "added or changed: %s", item_value(it));
                        break;
                default:
                        note(&cause, detail, len, CAUSE_UNKNOWN, "%s differs", it);
                        break;
                }
next:;
        }
        for (size_t j = 0; j < old->n_items; j++) {
                const char *it = rewrite(&r, old->items[j], buf, sizeof(buf));

                if (!has_item(new, it) && !has_item(new, old->items[j]) && item_cause(old->items[j]) == CAUSE_ARGUMENT)
                        note(&cause, detail, len, CAUSE_ARGUMENT, "removed: %s", item_value(old->items[j]));
        }
        if (!old->has_cpp || !new->has_cpp)
                goto done;
        /* The preprocessed text, file by file. */
        for (size_t i = 0; i < new->n_files; i++) {
                const File *nf = &new->files[i];
                const File *of = NULL;
                bool moved = false;

                if (nf->path[0] == '<')
                        continue;   /* <built-in>, <command-line> */
                for (size_t j = 0; j < old->n_files && !of; j++) {
                        if (strcmp(old->files[j].path, nf->path) == 0)
                                of = &old->files[j];
                        else if (strcmp(rewrite(&r, old->files[j].path, buf, sizeof(buf)), nf->path) == 0) {
                                of = &old->files[j];
                                moved = true;
                        }
                }
                if (of && moved)
                        note(&cause, detail, len, CAUSE_BUILD_DIR, "path %s -> %s", r.from, r.to);
                if (of && of->digest == nf->digest)
                        continue;
                if (new->source && strcmp(nf->path, new->source) == 0) {
                        if (new->time_macro)
                                note(&cause, detail, len, CAUSE_TIME_MACRO,
                                     "__TIME__, __DATE__ or __TIMESTAMP__ in the source expands anew each build");
                        else
                                note(&cause, detail, len, CAUSE_SOURCE, "the source file changed");
                        continue;
                }
                if (nf->path[strlen(nf->path) - 1] == '/' || (of == NULL && r.differ &&
                                                              strncmp(nf->path, r.to, strlen(r.to)) == 0))
                        continue;   /* gcc's working-directory marker (-g), or a path below the new root */
                if (includes++ == 0)
                        snprintf(first_include, sizeof(first_include), "%s%s", nf->path, of ? "" : " (newly included)");
        }
        if (includes > 0) {
                if (includes == 1)
                        note(&cause, detail, len, CAUSE_INCLUDE, "%s changed", first_include);
                else
                        note(&cause, detail, len, CAUSE_INCLUDE, "%s and %zu more included files changed", first_include,
                             includes - 1);
        }
done:
        if (cause == CAUSE_UNKNOWN && !detail[0] && new->time_macro)
                note(&cause, detail, len, CAUSE_TIME_MACRO,
                     "__TIME__, __DATE__ or __TIMESTAMP__ in the source expands anew each build");
        if (!detail[0])
                snprintf(detail, len, "nothing ccache hashed differs from the last explained run");
        return cause;
}

/* The fingerprint records under debug_dir: every *.ccache-log. */
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

static int by_name(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Keeps the store under EXPLAIN_STORE_MAX_BYTES: the oldest go first. */
typedef struct Kept {
        char name[64];
        off_t size;
        struct timespec mtime;
} Kept;

static int by_age(const void *a, const void *b) {
        const Kept *x = a, *y = b;

        if (x->mtime.tv_sec != y->mtime.tv_sec)
                return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

static void bound_store(const char *store_dir) {
        DIR *d = opendir(store_dir);
        Kept *kept = NULL;
        size_t n = 0, cap = 0;
        unsigned long long total = 0;
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                struct stat st;
                size_t l = strlen(de->d_name);

                if (l < 4 || l >= sizeof(kept->name) || strcmp(de->d_name + l - 3, ".fp") != 0 ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (n == cap) {
                        Kept *k = realloc(kept, (cap = cap ? cap * 2 : 256) * sizeof(Kept));

                        if (!k)
                                break;
                        kept = k;
                }
                memcpy(kept[n].name, de->d_name, l + 1);   /* l < sizeof(name): checked above */
                kept[n].size = st.st_size;
                kept[n].mtime = st.st_mtim;
                total += (unsigned long long) st.st_size;
                n++;
        }
        if (total > EXPLAIN_STORE_MAX_BYTES) {
                qsort(kept, n, sizeof(Kept), by_age);
                for (size_t i = 0; i < n && total > EXPLAIN_STORE_MAX_BYTES; i++)
                        if (unlinkat(dirfd(d), kept[i].name, 0) == 0)
                                total -= (unsigned long long) kept[i].size;
        }
        free(kept);
        closedir(d);
}

int explain_run(const char *debug_dir, const char *store_dir, Explained *ret) {
        Walk w = { 0 };
        Digests digests = { 0 };
        Explained e = { 0 };
        Fingerprint *fps = NULL;
        int r = 0;

        *ret = e;
        the_walk = &w;
        if (nftw(debug_dir, on_entry, 16, FTW_PHYS) < 0 && errno != ENOENT)
                w.error = -errno;
        the_walk = NULL;
        if (w.error < 0) {
                r = w.error;
                goto out;
        }
        /* In the order they ran: the name ends in the call's start time. */
        qsort(w.logs, w.n, sizeof(char *), by_name);
        fps = calloc(w.n ? w.n : 1, sizeof(Fingerprint));
        if (!fps) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < w.n; i++) {
                char text[4200];
                size_t l = strlen(w.logs[i]);

                if ((r = read_log(w.logs[i], &fps[i])) < 0)
                        goto out;
                snprintf(text, sizeof(text), "%.*s.ccache-input-text", (int) (l - 11), w.logs[i]);
                r = read_input_text(text, &fps[i]);
                if (r < 0 && r != -ENOENT)
                        goto out;
                take_contents(&fps[i], &digests);
                r = 0;
                e.records++;
        }
        /* Explain each miss against what was kept... */
        for (size_t i = 0; i < w.n; i++) {
                Fingerprint old;
                ExplainMiss *m, *ms;
                char detail[1024], abs[4096];
                ExplainCause c;
                Roots roots_seen = { 0 };

                if (!fps[i].miss)
                        continue;
                r = load(store_dir, &fps[i], &old);
                if (r < 0)
                        goto out;
                if (r == 0) {
                        c = CAUSE_FIRST_BUILD;
                        snprintf(detail, sizeof(detail), "no earlier explained run built it");
                } else {
                        c = compare(&old, &fps[i], detail, sizeof(detail), &roots_seen);
                        fingerprint_done(&old);
                }
                r = 0;
                if (c == CAUSE_BUILD_DIR && !e.base_dir && roots_seen.differ)
                        e.base_dir = common_dir(roots_seen.from, roots_seen.to,
                                                absolute_source(&fps[i], abs, sizeof(abs)));
                ms = realloc(e.misses, (e.n + 1) * sizeof(ExplainMiss));
                if (!ms) {
                        r = -ENOMEM;
                        goto out;
                }
                e.misses = ms;
                m = &e.misses[e.n];
                *m = (ExplainMiss) { .source = strdup(absolute_source(&fps[i], abs, sizeof(abs))), .cause = c,
                                     .detail = strdup(detail) };
                if (!m->source || !m->detail) {
                        free(m->source);
                        free(m->detail);
                        r = -ENOMEM;
                        goto out;
                }
                e.n++;
                e.counts[c]++;
        }
        /* ...then keep this run's, for the next. */
        for (size_t i = 0; i < w.n; i++)
                if (fps[i].has_cpp && fps[i].source && (r = save(store_dir, &fps[i])) < 0)
                        goto out;
        bound_store(store_dir);
out:
        for (size_t i = 0; i < w.n; i++) {
                free(w.logs[i]);
                if (fps)
                        fingerprint_done(&fps[i]);
        }
        free(w.logs);
        free(fps);
        digests_done(&digests);
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
                free(e->misses[i].detail);
        }
        free(e->misses);
        free(e->base_dir);
        *e = (Explained) { 0 };
}
