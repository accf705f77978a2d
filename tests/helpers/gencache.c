/* SPDX-License-Identifier: MIT */
/* gencache: builds synthetic ccache trees for the benchmark and the tests
 * (ccache's layout and entry names, realistic or tiny sizes, spread mtimes),
 * or a file: remote storage directory (a share: bare keys, subdirs or flat),
 * hard-link copies of a tree, and bare unlinks of a victim list.
 * A test tool: it trusts its arguments and never runs against a live cache
 * unless asked to (--add). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ccache's share of results among entries (the rest are manifests). */
#define RESULT_FRACTION 0.6
/* Realistic result sizes: log-normal, median 30 kB, σ = 1 (mean ≈ 50 kB). */
#define RESULT_MEDIAN_BYTES 30000.0
#define RESULT_SIGMA 1.0
#define RESULT_MIN_BYTES 200
#define RESULT_MAX_BYTES (4u << 20)
/* Manifests: uniform 1–4 kB. */
#define MANIFEST_MIN_BYTES 1000
#define MANIFEST_MAX_BYTES 4000
/* Writers emit 85 counters since ccache 4.12 (daemon/ccache/README.md §2). */
#define STATS_COUNTERS 85
#define NSEC_PER_SEC 1000000000LL

static const char hex_chars[] = "0123456789abcdef";
static const char base32hex_chars[] = "0123456789abcdefghijklmnopqrstuv";
static const char cachedir_tag[] =
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by ccache.\n"
        "# For information about cache directory tags, see:\n"
        "#\thttp://www.brynosaurus.com/cachedir/\n";

/* xoshiro256** seeded by splitmix64: fast, and the same tree for the same seed. */
typedef struct {
        uint64_t s[4];
} Rng;

static uint64_t splitmix64(uint64_t *x) {
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static void rng_seed(Rng *r, uint64_t seed) {
        for (int i = 0; i < 4; i++)
                r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(Rng *r) {
        uint64_t *s = r->s;
        uint64_t result = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
}

/* Uniform in [0, 1). */
static double rng_unit(Rng *r) {
        return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_normal(Rng *r) {
        double u1 = 1.0 - rng_unit(r); /* (0, 1] */
        double u2 = rng_unit(r);
        return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static double now_seconds(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *name) {
        fprintf(stderr, "gencache: %s %s: %s\n", what, name ? name : "", strerror(errno));
        exit(1);
}

static int hexval(char c) {
        return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void write_all(int fd, const char *buf, size_t len, const char *name) {
        while (len > 0) {
                ssize_t n = write(fd, buf, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        die("cannot write", name);
                }
                buf += n;
                len -= (size_t)n;
        }
}

/* mkdir that accepts an existing directory; returns an O_NOFOLLOW dir fd. */
static int mkdir_open(int parent_fd, const char *name, mode_t mode) {
        if (mkdirat(parent_fd, name, mode) < 0 && errno != EEXIST)
                die("cannot create directory", name);
        int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                die("cannot open directory", name);
        return fd;
}

/* Writes a small file (truncating), returns its st_blocks*512. */
static uint64_t write_small(int dir_fd, const char *name, const char *text, bool keep_existing) {
        int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (keep_existing ? O_EXCL : O_TRUNC);
        int fd = openat(dir_fd, name, flags, 0666);
        if (fd < 0) {
                if (keep_existing && errno == EEXIST)
                        return UINT64_MAX;
                die("cannot create", name);
        }
        write_all(fd, text, strlen(text), name);
        struct stat st;
        if (fstat(fd, &st) < 0)
                die("cannot stat", name);
        close(fd);
        return (uint64_t)st.st_blocks * 512;
}

static void raise_fd_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* Which tree: a local cache, or a share in one of ccache's remote layouts. */
typedef enum {
        LAYOUT_LOCAL,
        LAYOUT_REMOTE_SUBDIRS, /* <first 2 key chars>/<rest of the key> */
        LAYOUT_REMOTE_FLAT,    /* <key> in the root */
} Layout;

typedef struct {
        uint64_t seed;
        Layout layout;
        double deep_fraction;
        bool v413;
        bool tiny;
        bool add;
        bool quiet;
        int64_t now_sec;
        double days;
} Options;

typedef struct {
        int root_fd;
        int l1_fd[16];
        int l2_fd[256]; /* a share's <2 chars> dirs, opened on demand; -1 until then */
        int *l3_fd; /* 4096, opened on demand; -1 until then */
        uint64_t l2_files[256], l2_bytes[256];
} Tree;

static int l3_dir(Tree *t, int l12, int l3) {
        int *slot = &t->l3_fd[l12 * 16 + l3];
        if (*slot < 0) {
                char name[2] = { hex_chars[l3], 0 };
                *slot = mkdir_open(t->l2_fd[l12], name, 0777);
        }
        return *slot;
}

/* The directory a share's entry goes in (the key's first 2 chars are hex in
 * both key schemes) and sets *name to the rest of the key. */
static int share_dir(Tree *t, const Options *o, char *key, char **name) {
        if (o->layout == LAYOUT_REMOTE_FLAT) {
                *name = key;
                return t->root_fd;
        }
        int l12 = hexval(key[0]) * 16 + hexval(key[1]);
        if (t->l2_fd[l12] < 0) {
                char dir[3] = { key[0], key[1], 0 };
                t->l2_fd[l12] = mkdir_open(t->root_fd, dir, 0777);
        }
        *name = key + 2;
        return t->l2_fd[l12];
}

/* Fills key with a ccache ≤4.12 key (4 hex + 29 base32hex) or a 4.13 key (40 hex). */
static size_t make_key(Rng *r, bool v413, char *key) {
        uint64_t bits = rng_next(r);
        int avail = 64;
        size_t len = v413 ? 40 : 33;
        for (size_t i = 0; i < len; i++) {
                bool hex = v413 || i < 4;
                int need = hex ? 4 : 5;
                if (avail < need) {
                        bits = rng_next(r);
                        avail = 64;
                }
                unsigned v = (unsigned)(bits & ((1u << need) - 1));
                bits >>= need;
                avail -= need;
                /* 144 bits in 29 base32hex chars: the last one carries 4 bits and a 0. */
                if (!v413 && i == len - 1)
                        v &= ~1u;
                key[i] = hex ? hex_chars[v] : base32hex_chars[v];
        }
        key[len] = 0;
        return len;
}

static off_t pick_size(Rng *r, const Options *o, bool result) {
        if (o->tiny)
                return (off_t)(rng_next(r) & 1);
        if (!result)
                return MANIFEST_MIN_BYTES +
                       (off_t)(rng_unit(r) * (MANIFEST_MAX_BYTES - MANIFEST_MIN_BYTES + 1));
        double s = RESULT_MEDIAN_BYTES * exp(RESULT_SIGMA * rng_normal(r));
        if (s < RESULT_MIN_BYTES)
                s = RESULT_MIN_BYTES;
        if (s > RESULT_MAX_BYTES)
                s = RESULT_MAX_BYTES;
        return (off_t)s;
}

/* The L1 stats file as ccache 4.12 writes it: files, KiB, per-L2 sub-counters,
 * and some hit/miss figures so status has something to sum. */
static uint64_t write_stats(Tree *t, int l1, Rng *r) {
        uint64_t c[STATS_COUNTERS] = { 0 };
        for (int l2 = 0; l2 < 16; l2++) {
                uint64_t files = t->l2_files[l1 * 16 + l2];
                uint64_t kib = t->l2_bytes[l1 * 16 + l2] / 1024;
                c[11] += files;
                c[12] += kib;
                c[49 + l2] = files;
                c[65 + l2] = kib;
        }
        c[4] = rng_next(r) % 10000;  /* cache_miss */
        c[8] = rng_next(r) % 1000;   /* preprocessed_cache_hit */
        c[22] = rng_next(r) % 50000; /* direct_cache_hit */
        char text[STATS_COUNTERS * 24], *p = text;
        for (int i = 0; i < STATS_COUNTERS; i++)
                p += sprintf(p, "%llu\n", (unsigned long long)c[i]);
        return write_small(t->l1_fd[l1], "stats", text, false);
}

/* A local cache's 16 L1 and 256 L2 directories, all made up front; a
 * share's directories are made as its keys need them. */
static void open_tree(Tree *t, const char *dir, const Options *o) {
        bool local = o->layout == LAYOUT_LOCAL;
        if (mkdir(dir, local ? 01777 : 0777) < 0 && errno != EEXIST)
                die("cannot create", dir);
        t->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (t->root_fd < 0)
                die("cannot open", dir);
        for (int i = 0; i < 16; i++) {
                char name[2] = { hex_chars[i], 0 };
                t->l1_fd[i] = local ? mkdir_open(t->root_fd, name, 0777) : -1;
                for (int j = 0; j < 16; j++) {
                        char name2[2] = { hex_chars[j], 0 };
                        t->l2_fd[i * 16 + j] = local ? mkdir_open(t->l1_fd[i], name2, 0777) : -1;
                }
        }
}

/* What goes beside the entries (unless --add): a local cache's stats,
 * CACHEDIR.TAGs and ccache.conf; a share's one CACHEDIR.TAG in its root. */
static void write_meta(Tree *t, const Options *o, Rng *rng, uint64_t *files, uint64_t *bytes) {
        if (o->layout != LAYOUT_LOCAL) {
                *bytes += write_small(t->root_fd, "CACHEDIR.TAG", cachedir_tag, false);
                (*files)++;
                return;
        }
        for (int i = 0; i < 16; i++) {
                *bytes += write_stats(t, i, rng);
                *bytes += write_small(t->l1_fd[i], "CACHEDIR.TAG", cachedir_tag, false);
                *files += 2;
        }
        uint64_t b = write_small(t->root_fd, "ccache.conf", "max_size = 100G\n", true);
        if (b != UINT64_MAX) {
                (*files)++;
                *bytes += b;
        }
}

static int generate(const char *dir, uint64_t n, const Options *o) {
        double t0 = now_seconds();
        Tree t;
        Rng rng;
        rng_seed(&rng, o->seed);
        umask(0);
        raise_fd_limit();
        open_tree(&t, dir, o);
        t.l3_fd = malloc(4096 * sizeof(int));
        if (!t.l3_fd)
                die("out of memory", NULL);
        for (int i = 0; i < 4096; i++)
                t.l3_fd[i] = -1;
        memset(t.l2_files, 0, sizeof t.l2_files);
        memset(t.l2_bytes, 0, sizeof t.l2_bytes);

        /* One buffer of incompressible bytes serves every write. */
        size_t data_len = o->tiny ? 1 : RESULT_MAX_BYTES;
        char *data = malloc(data_len);
        if (!data)
                die("out of memory", NULL);
        for (size_t i = 0; i < data_len; i += 8) {
                uint64_t v = rng_next(&rng);
                memcpy(data + i, &v, data_len - i < 8 ? data_len - i : 8);
        }

        int64_t now_ns = o->now_sec * NSEC_PER_SEC;
        int64_t span_ns = (int64_t)(o->days * 86400.0 * (double)NSEC_PER_SEC);
        uint64_t created = 0, bytes = 0, deep = 0, manifests = 0, collisions = 0;
        uint64_t attempts = 0, max_attempts = 2 * n + 1000;
        while (created < n && attempts++ < max_attempts) {
                char key[48];
                size_t len = make_key(&rng, o->v413, key);
                bool result = rng_unit(&rng) < RESULT_FRACTION;
                bool is_deep = o->deep_fraction > 0 && rng_unit(&rng) < o->deep_fraction;
                off_t size = pick_size(&rng, o, result);
                int64_t mtime_ns = now_ns - (int64_t)(rng_unit(&rng) * (double)span_ns);

                int l12 = hexval(key[0]) * 16 + hexval(key[1]);
                char *name;
                int dir_fd;
                if (o->layout != LAYOUT_LOCAL)
                        dir_fd = share_dir(&t, o, key, &name); /* a bare key */
                else {
                        dir_fd = is_deep ? l3_dir(&t, l12, hexval(key[2])) : t.l2_fd[l12];
                        name = key + (is_deep ? 3 : 2);
                }
                if (!o->v413 && o->layout == LAYOUT_LOCAL) {
                        key[len] = result ? 'R' : 'M';
                        key[len + 1] = 0;
                }
                int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
                if (fd < 0) {
                        if (errno == EEXIST) {
                                collisions++;
                                continue;
                        }
                        die("cannot create", name);
                }
                if (size > 0)
                        write_all(fd, data, (size_t)size, name);
                struct timespec ts[2] = {
                        { .tv_sec = mtime_ns / NSEC_PER_SEC, .tv_nsec = mtime_ns % NSEC_PER_SEC },
                        { .tv_sec = mtime_ns / NSEC_PER_SEC, .tv_nsec = mtime_ns % NSEC_PER_SEC },
                };
                if (futimens(fd, ts) < 0)
                        die("cannot set the mtime of", name);
                struct stat st;
                if (fstat(fd, &st) < 0)
                        die("cannot stat", name);
                close(fd);
                uint64_t b = (uint64_t)st.st_blocks * 512;
                t.l2_files[l12]++;
                t.l2_bytes[l12] += b;
                created++;
                bytes += b;
                deep += is_deep;
                manifests += !o->v413 && o->layout == LAYOUT_LOCAL && !result; /* named so */
                if (!o->quiet && created % 100000 == 0)
                        fprintf(stderr, "gencache: %llu files...\r", (unsigned long long)created);
        }
        if (created < n) {
                fprintf(stderr, "gencache: gave up after %llu name collisions (same --seed as before?)\n",
                        (unsigned long long)collisions);
                return 1;
        }

        uint64_t meta_files = 0, meta_bytes = 0;
        if (!o->add)
                write_meta(&t, o, &rng, &meta_files, &meta_bytes);
        if (!o->quiet)
                fprintf(stderr, "%30s\r", "");
        printf("gencache: files=%llu bytes=%llu entries=%llu entry_bytes=%llu manifests=%llu "
               "deep=%llu collisions=%llu seconds=%.3f\n",
               (unsigned long long)(created + meta_files), (unsigned long long)(bytes + meta_bytes),
               (unsigned long long)created, (unsigned long long)bytes, (unsigned long long)manifests,
               (unsigned long long)deep, (unsigned long long)collisions, now_seconds() - t0);
        return 0;
}

/* ---- --hardlink-copy ---------------------------------------------------- */

typedef struct {
        uint64_t linked, copied, dirs, skipped;
        dev_t dev;
} CopyStats;

/* stats and ccache.conf are rewritten in place by some tools: give each copy its own. */
static bool copy_not_link(const char *name) {
        return strcmp(name, "stats") == 0 || strcmp(name, "ccache.conf") == 0;
}

static void copy_file(int src_dir, int dst_dir, const char *name, const struct stat *st) {
        int in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0)
                die("cannot open", name);
        int out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                         st->st_mode & 07777);
        if (out < 0)
                die("cannot create", name);
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
                write_all(out, buf, (size_t)n, name);
        if (n < 0)
                die("cannot read", name);
        struct timespec ts[2] = { st->st_atim, st->st_mtim };
        (void)futimens(out, ts);
        close(in);
        close(out);
}

static void copy_tree(int src_dir, int dst_dir, CopyStats *cs) {
        int fd = dup(src_dir);
        if (fd < 0)
                die("cannot dup", NULL);
        DIR *d = fdopendir(fd);
        if (!d)
                die("cannot read directory", NULL);
        struct dirent *de;
        while ((de = readdir(d))) {
                const char *name = de->d_name;
                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
                        continue;
                struct stat st;
                if (fstatat(src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        die("cannot stat", name);
                if (S_ISDIR(st.st_mode)) {
                        if (st.st_dev != cs->dev) {
                                cs->skipped++;
                                continue;
                        }
                        int s = openat(src_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (s < 0)
                                die("cannot open", name);
                        int t = mkdir_open(dst_dir, name, st.st_mode & 07777);
                        (void)fchmod(t, st.st_mode & 07777);
                        cs->dirs++;
                        copy_tree(s, t, cs);
                        struct timespec ts[2] = { st.st_atim, st.st_mtim };
                        (void)futimens(t, ts);
                        close(s);
                        close(t);
                } else if (S_ISREG(st.st_mode) && copy_not_link(name)) {
                        copy_file(src_dir, dst_dir, name, &st);
                        cs->copied++;
                } else {
                        /* linkat without AT_SYMLINK_FOLLOW links a symlink itself. */
                        if (linkat(src_dir, name, dst_dir, name, 0) < 0)
                                die("cannot link", name);
                        cs->linked++;
                }
        }
        closedir(d);
}

static int hardlink_copy(const char *src, const char *dst) {
        double t0 = now_seconds();
        umask(0);
        int s = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0)
                die("cannot open", src);
        struct stat st;
        if (fstat(s, &st) < 0)
                die("cannot stat", src);
        if (mkdir(dst, st.st_mode & 07777) < 0 && errno != EEXIST)
                die("cannot create", dst);
        int t = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
                die("cannot open", dst);
        (void)fchmod(t, st.st_mode & 07777);
        CopyStats cs = { .dev = st.st_dev };
        copy_tree(s, t, &cs);
        struct timespec ts[2] = { st.st_atim, st.st_mtim };
        (void)futimens(t, ts);
        printf("gencache: linked=%llu copied=%llu dirs=%llu skipped=%llu seconds=%.3f\n",
               (unsigned long long)cs.linked, (unsigned long long)cs.copied,
               (unsigned long long)cs.dirs, (unsigned long long)cs.skipped, now_seconds() - t0);
        return 0;
}

/* ---- --unlink-list ------------------------------------------------------ */

/* The physical limit of an eviction: unlink each listed path (relative to
 * DIR, one per line) and nothing else. */
static int unlink_list(const char *list, const char *dir, bool recheck) {
        FILE *f = strcmp(list, "-") == 0 ? stdin : fopen(list, "re");
        if (!f)
                die("cannot open", list);
        int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                die("cannot open", dir);
        /* Read the whole list first so only the unlinks are timed. */
        size_t cap = 0, count = 0;
        char **paths = NULL;
        char *line = NULL;
        size_t line_cap = 0;
        ssize_t len;
        while ((len = getline(&line, &line_cap, f)) > 0) {
                if (line[len - 1] == '\n')
                        line[--len] = 0;
                if (len == 0)
                        continue;
                if (count == cap) {
                        cap = cap ? cap * 2 : 4096;
                        paths = realloc(paths, cap * sizeof *paths);
                        if (!paths)
                                die("out of memory", NULL);
                }
                paths[count] = strdup(line);
                if (!paths[count++])
                        die("out of memory", NULL);
        }
        double t0 = now_seconds();
        uint64_t done = 0, missing = 0;
        for (size_t i = 0; i < count; i++) {
                struct statx stx;

                /* --recheck: the statx a safe eviction makes before it
                 * unlinks (still the planned file: type, device, time,
                 * size), the result unused. */
                if (recheck && statx(root, paths[i], AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                                     STATX_TYPE | STATX_MTIME | STATX_ATIME | STATX_BLOCKS | STATX_INO | STATX_NLINK,
                                     &stx) < 0 && errno != ENOENT)
                        die("cannot stat", paths[i]);
                if (unlinkat(root, paths[i], 0) == 0)
                        done++;
                else if (errno == ENOENT)
                        missing++;
                else
                        die("cannot unlink", paths[i]);
        }
        printf("gencache: unlinked=%llu missing=%llu seconds=%.3f\n", (unsigned long long)done,
               (unsigned long long)missing, now_seconds() - t0);
        return 0;
}

static void usage(FILE *out) {
        fprintf(out,
                "Usage: gencache [OPTIONS] DIR N           create N ccache entries under DIR\n"
                "       gencache --hardlink-copy SRC DST   DST = SRC's tree, files hard-linked\n"
                "       gencache --unlink-list LIST DIR    unlink each path in LIST (relative to\n"
                "                                          DIR, one per line, '-' = stdin)\n"
                "       gencache --unlink-list LIST --recheck DIR  statx each before its unlink\n\n"
                "Options for creating entries:\n"
                "  --seed=N         random seed (default 1): same seed, same tree\n"
                "  --deep=FRACTION  put this fraction of entries at depth 3 (<l1>/<l2>/<l3>/name)\n"
                "  --v413           ccache 4.13 names (40 hex, no R/M suffix); default 4.12 style\n"
                "  --remote[=subdirs|flat]  a file: remote storage directory (a share) instead\n"
                "                   of a local cache: entries named by the bare key (4 hex +\n"
                "                   29 base32hex, or 40 hex with --v413; no R/M suffix), in\n"
                "                   <first 2 key chars>/<rest> (subdirs, the default) or in\n"
                "                   DIR itself (flat); one CACHEDIR.TAG in DIR, no stats, no\n"
                "                   ccache.conf; same sizes and times as a local cache\n"
                "  --tiny           every file 0 or 1 byte (for 1M files quickly)\n"
                "  --add            add entries to an existing cache: no stats, CACHEDIR.TAG or\n"
                "                   ccache.conf; use a different --seed than before\n"
                "  --now=EPOCH      mtimes are spread over the --days before EPOCH (default now)\n"
                "  --days=D         spread of the mtimes in days (default 30)\n"
                "  --quiet          no progress on stderr\n\n"
                "Entries: 60 %% results <key>R (log-normal sizes, median 30 kB, up to 4 MiB),\n"
                "40 %% manifests <key>M (1-4 kB); mtimes uniform over the --days before --now,\n"
                "atime = mtime (a share's LRU clock may be either).\n"
                "Without --add it also writes <l1>/stats (ccache 4.12 counters matching the\n"
                "entries), <l1>/CACHEDIR.TAG and, if absent, ccache.conf (max_size = 100G).\n\n"
                "Prints one line: gencache: files=N bytes=B (Σ st_blocks*512 of what it created)\n"
                "entries=E entry_bytes=EB manifests=M deep=D collisions=C seconds=S\n"
                "(manifests: entries named <key>M; 0 with --v413 or --remote)\n"
                "--hardlink-copy links every non-directory (stats and ccache.conf are copied, so\n"
                "a tool rewriting them in one copy leaves the others alone), keeps modes and\n"
                "mtimes, and stays on SRC's filesystem. --unlink-list times only the unlinks.\n");
}

int main(int argc, char **argv) {
        enum { OPT_SEED = 256, OPT_DEEP, OPT_V413, OPT_TINY, OPT_ADD, OPT_NOW, OPT_DAYS,
               OPT_QUIET, OPT_LINK, OPT_UNLINK, OPT_REMOTE, OPT_RECHECK };
        static const struct option longopts[] = {
                { "seed", required_argument, NULL, OPT_SEED },
                { "deep", required_argument, NULL, OPT_DEEP },
                { "v413", no_argument, NULL, OPT_V413 },
                { "remote", optional_argument, NULL, OPT_REMOTE },
                { "tiny", no_argument, NULL, OPT_TINY },
                { "add", no_argument, NULL, OPT_ADD },
                { "now", required_argument, NULL, OPT_NOW },
                { "days", required_argument, NULL, OPT_DAYS },
                { "quiet", no_argument, NULL, OPT_QUIET },
                { "hardlink-copy", no_argument, NULL, OPT_LINK },
                { "recheck", no_argument, NULL, OPT_RECHECK },
                { "unlink-list", required_argument, NULL, OPT_UNLINK },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        Options o = { .seed = 1, .now_sec = time(NULL), .days = 30 };
        bool link_mode = false, recheck = false;
        const char *unlink_file = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                char *end;
                switch (c) {
                case OPT_SEED:
                        o.seed = strtoull(optarg, &end, 0);
                        if (*end)
                                goto bad;
                        break;
                case OPT_DEEP:
                        o.deep_fraction = strtod(optarg, &end);
                        if (*end || o.deep_fraction < 0 || o.deep_fraction > 1)
                                goto bad;
                        break;
                case OPT_V413: o.v413 = true; break;
                case OPT_REMOTE:
                        if (!optarg || strcmp(optarg, "subdirs") == 0)
                                o.layout = LAYOUT_REMOTE_SUBDIRS;
                        else if (strcmp(optarg, "flat") == 0)
                                o.layout = LAYOUT_REMOTE_FLAT;
                        else
                                goto bad;
                        break;
                case OPT_TINY: o.tiny = true; break;
                case OPT_ADD: o.add = true; break;
                case OPT_QUIET: o.quiet = true; break;
                case OPT_NOW:
                        o.now_sec = strtoll(optarg, &end, 0);
                        if (*end)
                                goto bad;
                        break;
                case OPT_DAYS:
                        o.days = strtod(optarg, &end);
                        if (*end || o.days < 0)
                                goto bad;
                        break;
                case OPT_LINK: link_mode = true; break;
                case OPT_UNLINK: unlink_file = optarg; break;
                case OPT_RECHECK: recheck = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if ((link_mode && unlink_file) || (recheck && !unlink_file))
                goto bad;
        if (link_mode) {
                if (argc - optind != 2)
                        goto bad;
                return hardlink_copy(argv[optind], argv[optind + 1]);
        }
        if (unlink_file) {
                if (argc - optind != 1)
                        goto bad;
                return unlink_list(unlink_file, argv[optind], recheck);
        }
        if (argc - optind != 2 || (o.layout != LAYOUT_LOCAL && o.deep_fraction > 0))
                goto bad; /* a share has no depth 3 */
        char *end;
        uint64_t n = strtoull(argv[optind + 1], &end, 10);
        if (*end || !*argv[optind + 1])
                goto bad;
        return generate(argv[optind], n, &o);
bad:
        usage(stderr);
        return 2;
}
