/* SPDX-License-Identifier: MIT */
/* One identity per path and one digest per file (explain-internal.h,
 * Digests): a path a build's text names, made absolute, lexically clean and
 * resolved (each once a run, symlinks followed at most RESOLVE_DEPTH
 * directories by hand, then realpath()); the file behind it digested once a
 * run within the budget (core/readfile.h), or claimed nothing of. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/explain-internal.h"
#include "core/readfile.h"

/* Lexically: "." and ".." and "//" gone. path is absolute. */
static void lexical(const char *path, char *buf, size_t len) {
        size_t o = 0;
        const char *p = path;

        buf[0] = '\0';
        while (*p) {
                const char *e;
                size_t l;

                while (*p == '/')
                        p++;
                e = strchrnul(p, '/');
                l = (size_t) (e - p);
                if (l == 0 || (l == 1 && p[0] == '.')) {
                        p = e;
                        continue;
                }
                if (l == 2 && p[0] == '.' && p[1] == '.') {
                        while (o > 0 && buf[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--;   /* the slash */
                        buf[o] = '\0';
                        p = e;
                        continue;
                }
                if (o + l + 2 > len)
                        break;
                buf[o++] = '/';
                memcpy(buf + o, p, l);
                o += l;
                buf[o] = '\0';
                p = e;
        }
        if (o == 0)
                snprintf(buf, len, "/");
}

/* joined (absolute) resolved: realpath(), or where that fails lexically.
 * Returns whether realpath() did. */
static bool resolve(const char *joined, char *buf, size_t len) {
        char real[PATH_MAX];

        if (realpath(joined, real)) {
                snprintf(buf, len, "%s", real);
                return true;
        }
        lexical(joined[0] == '/' ? joined : "/", buf, len);
        return false;
}

static void join(const char *dir, const char *path, char *buf, size_t len) {
        if (path[0] == '/' || !dir)
                snprintf(buf, len, "%s", path);
        else
                snprintf(buf, len, "%s/%s", dir, path);
}

const char *normalise_path(const char *dir, const char *path, char *buf, size_t len) {
        char joined[PATH_MAX * 2];

        join(dir, path, joined, sizeof(joined));
        resolve(joined, buf, len);
        return buf;
}

static struct Resolved *resolved_slot(Digests *d, const char *joined, uint64_t h) {
        size_t i;

        if (d->n_paths + 1 > d->cap_paths / 2) {
                size_t cap = d->cap_paths ? d->cap_paths * 2 : 1024;
                struct Resolved *paths = calloc(cap, sizeof(*paths));

                if (!paths)
                        return NULL;
                for (size_t j = 0; j < d->cap_paths; j++)
                        if (d->paths[j].joined) {
                                uint64_t hj = explain_fnv(FNV_INIT, d->paths[j].joined, strlen(d->paths[j].joined));

                                for (i = hj & (cap - 1); paths[i].joined; i = (i + 1) & (cap - 1))
                                        ;
                                paths[i] = d->paths[j];
                        }
                free(d->paths);
                d->paths = paths;
                d->cap_paths = cap;
        }
        for (i = h & (d->cap_paths - 1); d->paths[i].joined; i = (i + 1) & (d->cap_paths - 1))
                if (strcmp(d->paths[i].joined, joined) == 0)
                        break;
        return &d->paths[i];
}

/* Directories above a path resolved through resolve_once, at most: a
 * deeper one (a name in a build's text is anyone's) goes to realpath()
 * whole, and the stack stays small. */
#define RESOLVE_DEPTH 32

/* resolve(), each path once a run; a path whose directory resolved before
 * and whose last part is no symlink costs one lstat (the same answer as
 * realpath's, which reads every part of it). */
static bool resolve_once(Digests *d, const char *joined, char *buf, size_t len, unsigned depth) {
        char dir[PATH_MAX * 2], cand[PATH_MAX * 2];
        uint64_t h = explain_fnv(FNV_INIT, joined, strlen(joined));
        struct Resolved *slot = resolved_slot(d, joined, h);
        const char *base = strrchr(joined, '/');
        struct stat st;
        bool real = false, done = false;

        if (slot && slot->joined) {
                snprintf(buf, len, "%s", slot->norm);
                return slot->real;
        }
        if (depth < RESOLVE_DEPTH && base && base > joined && strcmp(base, "/.") != 0 && strcmp(base, "/..") != 0 &&
            base[1]) {
                snprintf(dir, sizeof(dir), "%.*s", (int) (base - joined), joined);
                if (resolve_once(d, dir, cand, sizeof(cand), depth + 1)) {
                        size_t l = strlen(cand);

                        snprintf(cand + l, sizeof(cand) - l, "%s%s", strcmp(cand, "/") == 0 ? "" : "/", base + 1);
                        if (lstat(cand, &st) == 0 && !S_ISLNK(st.st_mode) && strlen(cand) < PATH_MAX) {
                                snprintf(buf, len, "%s", cand);
                                real = done = true;
                        }
                }
                /* resolve_once grew the table: the slot moved */
                slot = resolved_slot(d, joined, h);
        }
        if (!done)
                real = resolve(joined, buf, len);
        if (slot && !slot->joined && (slot->joined = strdup(joined))) {
                if ((slot->norm = strdup(buf))) {
                        slot->real = real;
                        d->n_paths++;
                } else {
                        free(slot->joined);
                        slot->joined = NULL;
                }
        }
        return real;
}

/* normalise_path(), each path resolved once a run. */
const char *digests_normalise(Digests *d, const char *dir, const char *path, char *buf, size_t len) {
        char joined[PATH_MAX * 2];

        join(dir, path, joined, sizeof(joined));
        if (!d || joined[0] != '/')
                resolve(joined, buf, len);
        else
                resolve_once(d, joined, buf, len, 0);
        return buf;
}

/* What a file holds now: 0 when it is no regular file we may read, or
 * the budget left it unread (readfile.h): nothing is claimed of it then. */
static uint64_t content_digest(ReadBudget *b, const char *path) {
        char buf[65536];
        uint64_t h = FNV_INIT;
        ReadFile f;
        ssize_t n;
        bool whole;

        if (readfile_begin(&f, b, path, CONTENT_MAX_BYTES) < 0)
                return 0;
        if ((unsigned long long) f.st.st_size > CONTENT_MAX_BYTES) {
                h = explain_fnv(h, &f.st.st_size, sizeof(f.st.st_size));
                h = explain_fnv(h, &f.st.st_mtim, sizeof(f.st.st_mtim));
                readfile_end(&f);
                return h ?: 1;
        }
        while ((n = readfile_read(&f, buf, sizeof(buf))) > 0)
                h = explain_fnv(h, buf, (size_t) n);
        whole = n == 0 && !readfile_cut(&f);
        readfile_end(&f);
        return whole ? (h ?: 1) : 0;
}

/* The digest of the file at the normalised path, read once a run. */
uint64_t digests_of(Digests *d, const char *path) {
        uint64_t h = explain_fnv(FNV_INIT, path, strlen(path));
        size_t i;

        if (d->n + 1 > d->cap / 2) {
                size_t cap = d->cap ? d->cap * 2 : 1024;
                struct Digest *slots = calloc(cap, sizeof(*slots));

                if (!slots)
                        return content_digest(&d->budget, path);   /* no memory to remember: read again */
                for (size_t j = 0; j < d->cap; j++)
                        if (d->slots[j].path) {
                                uint64_t hj = explain_fnv(FNV_INIT, d->slots[j].path, strlen(d->slots[j].path));

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
        d->slots[i].digest = content_digest(&d->budget, path);
        if (d->slots[i].path)
                d->n++;
        return d->slots[i].digest;
}

void digests_init(Digests *d) {
        *d = (Digests) { 0 };
        readfile_budget_init(&d->budget, EXPLAIN_READ_MAX_BYTES, EXPLAIN_FILES_MAX, false);
}

void digests_done(Digests *d) {
        for (size_t i = 0; i < d->cap; i++)
                free(d->slots[i].path);
        free(d->slots);
        for (size_t i = 0; i < sizeof(d->roots) / sizeof(d->roots[0]); i++) {
                free(d->roots[i].dir);
                free(d->roots[i].root);
        }
        for (size_t i = 0; i < d->cap_paths; i++) {
                free(d->paths[i].joined);
                free(d->paths[i].norm);
        }
        free(d->paths);
        readfile_budget_done(&d->budget);
        *d = (Digests) { 0 };
}
