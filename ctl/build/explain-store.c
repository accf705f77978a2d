/* SPDX-License-Identifier: MIT */
/* The store of explained calls (explain-internal.h): one text file a
 * source and object, named by a digest of their identities, in the user's
 * own 0700 directory. A line a field, "TAG value"; an older record
 * ("cachekeeper-fingerprint 1", keyed by the spelling the build used) is
 * never matched and ages out. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build/explain-internal.h"
#include "build/explain.h"

#define RECORD_MAGIC "cachekeeper-explain-record 2"

static void record_name(const Call *c, char *buf, size_t len) {
        uint64_t h = explain_fnv(FNV_INIT, c->source_path, strlen(c->source_path));

        h = explain_fnv(h, "\n", 1);
        h = explain_fnv(h, c->object_rel ?: "", strlen(c->object_rel ?: ""));
        snprintf(buf, len, "%016" PRIx64 ".rec", h);
}

/* A value on one line: newlines would end it early. */
static void put_line(FILE *fp, const char *tag, const char *s) {
        if (!s)
                return;
        fputs(tag, fp);
        fputc(' ', fp);
        for (size_t n; *s; s += n) {   /* a run at a time, not a character at a time */
                n = strcspn(s, "\n");
                fwrite(s, 1, n, fp);
                if (s[n]) {
                        fputc(' ', fp);
                        n++;
                }
        }
        fputc('\n', fp);
}

static void put_files(FILE *fp, const Call *c) {
        for (size_t i = 0; i < c->n_files; i++) {
                char tag[32];

                snprintf(tag, sizeof(tag), "f %016" PRIx64, c->files[i].digest);
                put_line(fp, tag, c->files[i].path);
        }
}

/* Everything after the "when" line. */
static void put_body(FILE *fp, const Call *c, const Call *files_from) {
        const Call *ff = !c->has_files && files_from && files_from->has_files ? files_from : c;

        put_line(fp, "v", c->version);
        put_line(fp, "C", c->cache_dir);
        for (size_t i = 0; i < c->n_config; i++)
                put_line(fp, "k", c->config[i]);
        put_line(fp, "w", c->workdir);
        put_line(fp, "s", c->source);
        put_line(fp, "S", c->source_path);
        put_line(fp, "O", c->object_path);
        put_line(fp, "R", c->object_rel);
        put_line(fp, "B", c->build_root);
        put_line(fp, "m", c->manifest_key);
        for (size_t i = 0; i < c->n_result_keys; i++)
                put_line(fp, "r", c->result_keys[i]);
        fprintf(fp, "b %d%d%d%d%d%d%d\n", c->miss, c->hit, c->stored, c->time_macro, c->depend, ff->has_files,
                c->has_text);
        for (size_t i = 0; i < c->n_items; i++)
                put_line(fp, "i", c->items[i]);
        for (size_t i = 0; i < c->n_include_hashes; i++)
                put_line(fp, "h", c->include_hashes[i]);
        put_line(fp, "F", ff->files_root ?: ff->build_root);
        if (ff->files_kind)
                fprintf(fp, "K %c\n", ff->files_kind);
        put_files(fp, ff);
}

/* Whether the record at path holds body after its "when" line: a warm
 * build's direct hits are, and rewriting them all (a new file renamed over
 * each: a new inode written back, the old one freed) was most of what
 * --explain cost such a build. */
static bool same_body(const char *path, const char *body, size_t len) {
        char *buf, *p;
        struct stat st;
        ssize_t n;
        bool same = false;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return false;
        /* The magic line and "when N\n" are at most 64 bytes. */
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t) st.st_size <= len ||
            (size_t) st.st_size > len + 64 || !(buf = malloc((size_t) st.st_size + 1))) {
                close(fd);
                return false;
        }
        n = read(fd, buf, (size_t) st.st_size + 1);
        close(fd);
        if (n == st.st_size && strncmp(buf, RECORD_MAGIC "\nwhen ", sizeof(RECORD_MAGIC "\nwhen ") - 1) == 0 &&
            (p = memchr(buf + sizeof(RECORD_MAGIC), '\n', (size_t) n - sizeof(RECORD_MAGIC))))
                same = (size_t) (buf + n - (p + 1)) == len && memcmp(p + 1, body, len) == 0;
        free(buf);
        return same;
}

int record_save(const char *store_dir, const Call *c, const Call *files_from, int64_t now) {
        char name[64], tmp[4200], path[4200], *body = NULL;
        size_t blen = 0;
        FILE *fp;
        int fd, r = 0;

        if (!c->source_path)
                return 0;
        record_name(c, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", store_dir, name);
        if (!(fp = open_memstream(&body, &blen)))
                return -errno;
        put_body(fp, c, files_from);
        if (fclose(fp) != 0)
                return -errno;
        /* The same as kept: only when it was last seen changes, in its
         * mtime (record_load takes the later of the two; record_bound
         * goes by it). */
        if (same_body(path, body, blen) && utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW) == 0) {
                free(body);
                return 0;
        }
        snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", store_dir, name);
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                free(body);
                return r;
        }
        fp = fdopen(fd, "w");
        if (!fp) {
                r = -errno;
                close(fd);
                unlink(tmp);
                free(body);
                return r;
        }
        fprintf(fp, RECORD_MAGIC "\n");
        fprintf(fp, "when %" PRId64 "\n", now);
        fwrite(body, 1, blen, fp);
        free(body);
        if (fclose(fp) != 0 || rename(tmp, path) < 0) {
                r = -errno;
                unlink(tmp);
        }
        return r;
}

static int set_field(char **field, const char *value) {
        free(*field);
        *field = strdup(value);
        return *field ? 0 : -ENOMEM;
}

static int add_record_file(Call *c, const char *rest) {
        uint64_t d;
        int off = 0;
        CallFile *files;

        if (sscanf(rest, "%" SCNx64 " %n", &d, &off) != 1 || off == 0)
                return 0;
        files = realloc(c->files, (c->n_files + 1) * sizeof(CallFile));
        if (!files)
                return -ENOMEM;
        c->files = files;
        c->files[c->n_files] = (CallFile) { .path = strdup(rest + off), .digest = d };
        if (!c->files[c->n_files].path)
                return -ENOMEM;
        c->n_files++;
        return 0;
}

static int record_line(Call *c, char tag, const char *v) {
        switch (tag) {
        case 'v': return set_field(&c->version, v);
        case 'C': return set_field(&c->cache_dir, v);
        case 'k': return strv_add(&c->config, &c->n_config, v, strlen(v));
        case 'w': return set_field(&c->workdir, v);
        case 's': return set_field(&c->source, v);
        case 'S': return set_field(&c->source_path, v);
        case 'O': return set_field(&c->object_path, v);
        case 'R': return set_field(&c->object_rel, v);
        case 'B': return set_field(&c->build_root, v);
        case 'F': return set_field(&c->files_root, v);
        case 'K': c->files_kind = v[0]; return 0;
        case 'm': return set_field(&c->manifest_key, v);
        case 'r': return strv_add(&c->result_keys, &c->n_result_keys, v, strlen(v));
        case 'i': return strv_add(&c->items, &c->n_items, v, strlen(v));
        case 'h': return strv_add(&c->include_hashes, &c->n_include_hashes, v, strlen(v));
        case 'f': return add_record_file(c, v);
        case 'b':
                if (strlen(v) >= 7) {
                        c->miss = v[0] == '1';
                        c->hit = v[1] == '1';
                        c->stored = v[2] == '1';
                        c->time_macro = v[3] == '1';
                        c->depend = v[4] == '1';
                        c->has_files = v[5] == '1';
                        c->has_text = v[6] == '1';
                }
                return 0;
        default:
                return 0;
        }
}

int record_load(const char *store_dir, const Call *c, Call *ret) {
        char name[64], path[4200], *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int r = 0;
        bool magic = false;
        struct stat st;
        int64_t mtime = 0;
        FILE *fp;

        *ret = (Call) { 0 };
        if (!c->source_path)
                return 0;
        record_name(c, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", store_dir, name);
        fp = fopen(path, "re");
        if (!fp)
                return errno == ENOENT ? 0 : -errno;
        /* A record kept unchanged was last seen when it was touched (record_save). */
        if (fstat(fileno(fp), &st) == 0)
                mtime = st.st_mtim.tv_sec;
        while (r == 0 && (n = getline(&line, &cap, fp)) >= 0) {
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                if (!magic) {
                        magic = strcmp(line, RECORD_MAGIC) == 0;
                        if (!magic)
                                break;
                        continue;
                }
                if (strncmp(line, "when ", 5) == 0)
                        ret->when = strtoll(line + 5, NULL, 10);
                else if (n >= 2 && line[1] == ' ')
                        r = record_line(ret, line[0], line + 2);
        }
        free(line);
        fclose(fp);
        if (mtime > ret->when)
                ret->when = mtime;
        /* Another's under the same digest, or not a record at all: none. */
        if (r < 0 || !magic || !ret->source_path || strcmp(ret->source_path, c->source_path) != 0 ||
            strcmp(ret->object_rel ?: "", c->object_rel ?: "") != 0) {
                call_done(ret);
                return r < 0 ? r : 0;
        }
        return 1;
}

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

static bool stored_name(const char *name) {
        size_t l = strlen(name);

        return l >= 5 && l < sizeof(((Kept *) 0)->name) &&
               (strcmp(name + l - 4, ".rec") == 0 || strcmp(name + l - 3, ".fp") == 0);
}

/* Beside the records: its mtime is the directory's when the store was
 * last found within its bound. Every record written, replaced or removed
 * moves the directory's mtime; one touched (record_save) does not: a
 * warm build's run leaves the store as it was, and its hundreds or
 * thousands of records need not be counted again. */
#define BOUND_STAMP ".bounded"

static bool same_time(struct timespec a, struct timespec b) {
        return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool unchanged_since_bound(int dfd) {
        struct stat dir, stamp;

        return fstat(dfd, &dir) == 0 && fstatat(dfd, BOUND_STAMP, &stamp, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(stamp.st_mode) && same_time(stamp.st_mtim, dir.st_mtim);
}

/* Stamps the store as within its bound; not while the directory's mtime
 * is this second's (a file system with coarse times could change it again
 * within the same tick, unseen): the next run counts once more. */
static void stamp_bound(int dfd) {
        struct stat dir;
        int fd = openat(dfd, BOUND_STAMP, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);

        if (fd < 0)
                return;
        if (fstat(dfd, &dir) == 0 && dir.st_mtim.tv_sec + 2 <= time(NULL))
                (void) futimens(fd, (struct timespec[2]) { dir.st_mtim, dir.st_mtim });
        close(fd);
}

void record_bound(const char *store_dir) {
        DIR *d = opendir(store_dir);
        Kept *kept = NULL;
        size_t n = 0, cap = 0;
        unsigned long long total = 0;
        struct dirent *de;
        bool complete = true;

        if (!d)
                return;
        if (unchanged_since_bound(dirfd(d))) {
                closedir(d);
                return;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (!stored_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (n == cap) {
                        Kept *k = realloc(kept, (cap = cap ? cap * 2 : 256) * sizeof(Kept));

                        if (!k) {
                                complete = false;   /* not all counted: not stamped */
                                break;
                        }
                        kept = k;
                }
                memcpy(kept[n].name, de->d_name, strlen(de->d_name) + 1);   /* stored_name: it fits */
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
        if (total <= EXPLAIN_STORE_MAX_BYTES && complete)
                stamp_bound(dirfd(d));
        free(kept);
        closedir(d);
}
