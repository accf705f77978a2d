/* SPDX-License-Identifier: MIT */
/* Bounded, regular-only reads of a build tree's files (readfile.h). Never
 * opens for reading what fstat of an O_PATH fd did not call a regular
 * file; never reads past a file's limit or the run's budget. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "core/readfile.h"

void readfile_budget_init(ReadBudget *b, uint64_t bytes, uint64_t files, bool once) {
        *b = (ReadBudget) { .bytes_left = bytes, .files_left = files, .once = once };
}

void readfile_budget_done(ReadBudget *b) {
        free(b->first_unread);
        free(b->first_not_regular);
        free(b->seen);
        *b = (ReadBudget) { 0 };
}

bool readfile_budget_reached(const ReadBudget *b) {
        return b->files_unread > 0;
}

static void note(char **first, uint64_t *count, const char *path) {
        if (!*first && path)
                *first = strdup(path);
        (*count)++;
}

static size_t seen_slot(const ReadBudget *b, dev_t dev, ino_t ino) {
        size_t i = hash_mix((uint64_t) dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t) ino) & (b->cap_seen - 1);

        while (b->seen[i].ino != 0 && (b->seen[i].dev != dev || b->seen[i].ino != ino))
                i = (i + 1) & (b->cap_seen - 1);
        return i;
}

/* Marks the file seen. Returns 1 if it was already, 0, or -ENOMEM. Inode 0
 * (none on Linux's filesystems) marks an empty slot. */
static int seen_add(ReadBudget *b, const struct stat *st) {
        size_t i;

        if (b->n_seen + 1 > b->cap_seen / 2) {
                size_t cap = b->cap_seen ? b->cap_seen * 2 : 256;
                struct ReadSeen *old = b->seen, *nw = calloc(cap, sizeof(*nw));
                size_t old_cap = b->cap_seen;

                if (!nw)
                        return -ENOMEM;
                b->seen = nw;
                b->cap_seen = cap;
                for (size_t j = 0; j < old_cap; j++)
                        if (old[j].ino != 0)
                                b->seen[seen_slot(b, old[j].dev, old[j].ino)] = old[j];
                free(old);
        }
        i = seen_slot(b, st->st_dev, st->st_ino);
        if (b->seen[i].ino != 0)
                return 1;
        b->seen[i] = (struct ReadSeen) { .dev = st->st_dev, .ino = st->st_ino ?: 1 };
        b->n_seen++;
        return 0;
}

int readfile_open(const char *path, struct stat *ret_st) {
        char proc[64];
        struct stat st, opened;
        int pfd, fd, r;

        pfd = open(path, O_PATH | O_CLOEXEC);
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
                r = S_ISREG(st.st_mode) ? -errno : -EINVAL;
                close(pfd);
                return r;
        }
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        r = -errno;
        close(pfd);
        if (fd < 0)
                return r;
        if (fstat(fd, &opened) < 0 || !S_ISREG(opened.st_mode) || opened.st_ino != st.st_ino ||
            opened.st_dev != st.st_dev) {
                close(fd);
                return -EINVAL;   /* cannot be: the magic link is the inode checked */
        }
        if (ret_st)
                *ret_st = opened;
        return fd;
}

const char *readfile_strerror(int r) {
        return r == -EINVAL ? "not a regular file" : strerror(-r);
}

int readfile_begin(ReadFile *f, ReadBudget *b, const char *path, uint64_t max_bytes) {
        struct stat st;
        int fd, r;

        *f = (ReadFile) { .fd = -1 };
        if (b && b->files_left == 0) {
                note(&b->first_unread, &b->files_unread, path);
                return -ENOSPC;
        }
        fd = readfile_open(path, &st);
        if (fd < 0) {
                if (fd == -EINVAL && b)
                        note(&b->first_not_regular, &b->not_regular, path);
                return fd;
        }
        if (b && b->once && (r = seen_add(b, &st)) != 0) {
                close(fd);
                return r > 0 ? -EALREADY : r;
        }
        if (b)
                b->files_left--;
        *f = (ReadFile) { .fd = fd, .budget = b, .path = strdup(path), .left = max_bytes, .st = st };
        return 0;
}

/* What may be read now of want bytes: the file's and the budget's limits. */
static size_t allowed(const ReadFile *f, size_t want) {
        uint64_t n = want;

        if (n > f->left)
                n = f->left;
        if (f->budget && n > f->budget->bytes_left)
                n = f->budget->bytes_left;
        return (size_t) n;
}

/* read() within the limits. Returns the count, 0 at the end or a limit
 * (f->eof), or -errno. */
static ssize_t bounded_read(ReadFile *f, void *buf, size_t want) {
        size_t n = allowed(f, want);
        ssize_t k;

        if (f->eof || f->fd < 0)
                return 0;
        if (n == 0) {
                f->eof = true;
                return 0;
        }
        do
                k = read(f->fd, buf, n);
        while (k < 0 && errno == EINTR);
        if (k <= 0) {
                f->eof = true;
                return k < 0 ? -errno : 0;
        }
        f->left -= (uint64_t) k;
        f->pos += (uint64_t) k;
        if (f->budget)
                f->budget->bytes_left -= (uint64_t) k;
        return k;
}

ssize_t readfile_read(ReadFile *f, void *buf, size_t n) {
        return bounded_read(f, buf, n);
}

/* Fills f->buf after what it holds. Returns the bytes added (0: no more). */
static size_t fill(ReadFile *f) {
        ssize_t k;

        if (f->start > 0) {
                memmove(f->buf, f->buf + f->start, f->end - f->start);
                f->end -= f->start;
                f->start = 0;
        }
        k = bounded_read(f, f->buf + f->end, f->cap - 1 - f->end);
        if (k <= 0)
                return 0;
        f->end += (size_t) k;
        return (size_t) k;
}

char *readfile_line(ReadFile *f, size_t line_max, size_t *ret_len) {
        char *line, *nl;
        size_t len;

        if (line_max == 0)
                line_max = READFILE_LINE_MAX;
        if (f->cap < line_max + 1) {
                char *nb = realloc(f->buf, line_max + 1);

                if (!nb)
                        return NULL;
                f->buf = nb;
                f->cap = line_max + 1;
        }
        for (;;) {
                size_t have = f->end - f->start;

                nl = memchr(f->buf + f->start, '\n', have);
                if (f->skipping) {
                        f->skipping = !nl;
                        f->start = nl ? (size_t) (nl - f->buf) + 1 : f->end;
                        if (!nl && fill(f) == 0)
                                return NULL;
                        continue;
                }
                if (nl || have >= line_max)
                        break;
                if (fill(f) == 0) {
                        if (have == 0)
                                return NULL;
                        break;  /* the last line, without a newline */
                }
        }
        line = f->buf + f->start;
        nl = memchr(line, '\n', f->end - f->start);
        len = nl ? (size_t) (nl - line) : f->end - f->start;
        if (len > line_max)
                len = line_max;
        f->start += len;
        if (nl && line + len == nl)
                f->start++;                     /* past its newline */
        else if (len == line_max)
                f->skipping = true;             /* the rest of a long line */
        /* f->buf has room for the NUL: the newline's place, or cap - 1 >= line_max */
        line[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return line;
}

bool readfile_cut(const ReadFile *f) {
        return f->fd >= 0 && f->eof && f->pos < (uint64_t) f->st.st_size &&
               (f->left == 0 || (f->budget && f->budget->bytes_left == 0));
}

void readfile_end(ReadFile *f) {
        if (f->budget && readfile_cut(f))
                note(&f->budget->first_unread, &f->budget->files_unread, f->path);
        if (f->fd >= 0)
                close(f->fd);
        free(f->path);
        free(f->buf);
        *f = (ReadFile) { .fd = -1 };
}

int readfile_all(ReadBudget *b, const char *path, uint64_t max_bytes, char **ret, size_t *ret_len) {
        ReadFile f;
        char *data;
        size_t len = 0, cap;
        bool cut;
        int r;

        if ((r = readfile_begin(&f, b, path, max_bytes)) < 0)
                return r;
        cap = (size_t) ((uint64_t) f.st.st_size < max_bytes ? (uint64_t) f.st.st_size : max_bytes) + 1;
        if (!(data = malloc(cap))) {
                readfile_end(&f);
                return -ENOMEM;
        }
        for (;;) {
                ssize_t k;

                if (len + 1 == cap) {
                        char *nd = cap - 1 < max_bytes ? realloc(data, cap * 2) : NULL;

                        if (!nd) {
                                (void) bounded_read(&f, NULL, 0);   /* at the limit: f.eof */
                                break;
                        }
                        data = nd;
                        cap *= 2;
                }
                k = bounded_read(&f, data + len, cap - 1 - len);
                if (k <= 0)
                        break;
                len += (size_t) k;
        }
        data[len] = '\0';
        cut = readfile_cut(&f);
        readfile_end(&f);
        *ret = data;
        if (ret_len)
                *ret_len = len;
        return cut ? 1 : 0;
}
