/* SPDX-License-Identifier: MIT */
/* ccache's file names and stats files. Name packing must be exact: the
 * daemon deletes by the unpacked name, so pack(unpack(x)) == x is tested. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccache.h"
#include "util.h"

/* Codes: 0 R, 1 M, 2-11 legacy raw <n>W with n = code-2, 12 4.13 entry,
 * 13 4.13 raw _<nn> (nn packed after the key). */
#define CODE_RESULT   0
#define CODE_MANIFEST 1
#define CODE_RAW0     2
#define CODE_V413     12
#define CODE_V413_RAW 13

/* Up to 4.12 a key is 4 base16 then 29 base32hex chars (33 in all); 4.13
 * uses 40 base16 chars. The directory levels consume the first chars. */
#define LEGACY_KEY_LEN 33
#define LEGACY_HEX_PREFIX 4
#define V413_KEY_LEN 40

static const char base32hex[] = "0123456789abcdefghijklmnopqrstuv";

/* Value + 1 of each base32hex char; 0 for anything else. Hex digits are the
 * first 16. A table: packing runs for every file the scan sees. */
static const uint8_t b32_table[256] = {
        ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
        ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
        ['g'] = 17, ['h'] = 18, ['i'] = 19, ['j'] = 20, ['k'] = 21, ['l'] = 22, ['m'] = 23, ['n'] = 24,
        ['o'] = 25, ['p'] = 26, ['q'] = 27, ['r'] = 28, ['s'] = 29, ['t'] = 30, ['u'] = 31, ['v'] = 32,
};

static inline int b32_value(char c) {
        return (int) b32_table[(unsigned char) c] - 1;
}

static inline int hex_value(char c) {
        int v = b32_value(c);
        return v < 16 ? v : -1;
}

/* Bits into and out of the 20 packed bytes, most significant first. */
typedef struct Bits {
        uint8_t *buf;
        unsigned pos, n;     /* bytes written or read; bits pending in acc */
        uint64_t acc;
} Bits;

static inline void put_bits(Bits *b, unsigned value, unsigned nbits) {
        b->acc = (b->acc << nbits) | value;
        b->n += nbits;
        while (b->n >= 8) {
                b->n -= 8;
                b->buf[b->pos++] = (uint8_t) (b->acc >> b->n);
        }
}

static inline void flush_bits(Bits *b) {
        if (b->n > 0)
                b->buf[b->pos++] = (uint8_t) (b->acc << (8 - b->n));
        b->n = 0;
}

static inline unsigned get_bits(Bits *b, unsigned nbits) {
        while (b->n < nbits) {
                b->acc = (b->acc << 8) | b->buf[b->pos++];
                b->n += 8;
        }
        b->n -= nbits;
        return (unsigned) (b->acc >> b->n) & ((1u << nbits) - 1);
}

static int pack_legacy(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = LEGACY_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        Bits b = { .buf = buf };
        uint8_t code;

        if (len == keylen + 1 && name[keylen] == 'R')
                code = CODE_RESULT;
        else if (len == keylen + 1 && name[keylen] == 'M')
                code = CODE_MANIFEST;
        else if (len == keylen + 2 && name[keylen + 1] == 'W' && name[keylen] >= '0' && name[keylen] <= '9')
                code = (uint8_t) (CODE_RAW0 + (name[keylen] - '0'));
        else
                return -EINVAL;
        for (size_t i = 0; i < keylen; i++) {
                /* The first 4 key chars are base16, so those left after the
                 * directory levels must be too. */
                int v = i + depth < LEGACY_HEX_PREFIX ? hex_value(name[i]) : b32_value(name[i]);
                if (v < 0)
                        return -EINVAL;
                put_bits(&b, (unsigned) v, 5);
        }
        flush_bits(&b);
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

static int pack_v413(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = V413_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        Bits b = { .buf = buf };
        uint8_t code;

        if (len == keylen)
                code = CODE_V413;
        else if (len == keylen + 3 && name[keylen] == '_' && hex_value(name[keylen + 1]) >= 0 &&
                 hex_value(name[keylen + 2]) >= 0)
                code = CODE_V413_RAW;
        else
                return -EINVAL;
        for (size_t i = 0; i < keylen; i++) {
                int v = hex_value(name[i]);
                if (v < 0)
                        return -EINVAL;
                put_bits(&b, (unsigned) v, 4);
        }
        if (code == CODE_V413_RAW) {
                put_bits(&b, (unsigned) hex_value(name[keylen + 1]), 4);
                put_bits(&b, (unsigned) hex_value(name[keylen + 2]), 4);
        }
        flush_bits(&b);
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

int ccache_pack_name(const char *name, unsigned depth, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code) {
        size_t len = strlen(name);
        uint8_t code;

        if (depth < CCACHE_DEPTH_MIN || depth > CCACHE_DEPTH_MAX)
                return -EINVAL;
        /* The length says which scheme it could be: 32-33 chars (legacy) or
         * 38/41 (4.13) at depth 2, one less per extra level. */
        if (len + depth <= LEGACY_KEY_LEN + 2 ? pack_legacy(name, len, depth, out, &code) < 0
                                              : pack_v413(name, len, depth, out, &code) < 0)
                return -EINVAL;
        *ret_code = code;
        return ccache_code_kind(code);
}

char *ccache_unpack_name(const uint8_t in[CCACHE_PACKED_SIZE], uint8_t code, unsigned depth, char *buf) {
        Bits b = { .buf = (uint8_t *) in };
        size_t i, keylen;

        if (code >= CODE_V413) {
                keylen = V413_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(&b, 4)];
                if (code == CODE_V413_RAW) {
                        buf[i++] = '_';
                        buf[i++] = base32hex[get_bits(&b, 4)];
                        buf[i++] = base32hex[get_bits(&b, 4)];
                }
        } else {
                keylen = LEGACY_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(&b, 5)];
                if (code == CODE_RESULT)
                        buf[i++] = 'R';
                else if (code == CODE_MANIFEST)
                        buf[i++] = 'M';
                else {
                        buf[i++] = (char) ('0' + code - CODE_RAW0);
                        buf[i++] = 'W';
                }
        }
        buf[i] = '\0';
        return buf;
}

CcacheKind ccache_code_kind(uint8_t code) {
        switch (code) {
        case CODE_RESULT: return CCACHE_KIND_RESULT;
        case CODE_MANIFEST: return CCACHE_KIND_MANIFEST;
        case CODE_V413: return CCACHE_KIND_ENTRY;
        default: return CCACHE_KIND_RAW;
        }
}

CcacheKind ccache_classify_other(const char *name, unsigned depth, bool in_tmp_dir) {
        if (in_tmp_dir || strstr(name, ".tmp."))
                return CCACHE_KIND_TMP;
        if ((depth == 1 || depth == 2) && strcmp(name, "stats") == 0)
                return CCACHE_KIND_STATS;
        return CCACHE_KIND_OTHER;
}

const char *ccache_kind_name(CcacheKind k) {
        static const char *const names[_CCACHE_KIND_MAX] = {
                [CCACHE_KIND_RESULT] = "result",
                [CCACHE_KIND_MANIFEST] = "manifest",
                [CCACHE_KIND_RAW] = "raw",
                [CCACHE_KIND_ENTRY] = "entry",
                [CCACHE_KIND_TMP] = "tmp",
                [CCACHE_KIND_STATS] = "stats",
                [CCACHE_KIND_OTHER] = "other",
        };
        return (unsigned) k < _CCACHE_KIND_MAX ? names[k] : "?";
}

void ccache_stats_parse(const char *text, size_t len, CcacheStats *ret) {
        const char *p = text, *end = text + len;

        memset(ret, 0, sizeof(*ret));
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                uint64_t v = 0;

                if (!nl)
                        nl = end;
                if (ret->n == CCACHE_STATS_MAX) {
                        ret->truncated = true;
                        break;
                }
                for (const char *q = p; q < nl && *q >= '0' && *q <= '9'; q++)
                        v = v * 10 + (uint64_t) (*q - '0');
                ret->counters[ret->n++] = v;
                p = nl + 1;
        }
}

int ccache_stats_read(int dirfd, const char *name, CcacheStats *ret) {
        char buf[4096];
        size_t len = 0;
        int fd;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ENOENT) {
                        memset(ret, 0, sizeof(*ret));
                        return 0;
                }
                return -errno;
        }
        /* A FIFO or device planted as "stats" must not be read (or block us). */
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EBADF;
        }
        for (;;) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                if (n == 0 || (len += (size_t) n) == sizeof(buf) - 1)
                        break;
        }
        close(fd);
        ccache_stats_parse(buf, len, ret);
        if (len == sizeof(buf) - 1)
                ret->truncated = true;   /* bigger than any stats file ccache writes */
        return 0;
}

int ccache_lock_try(CcacheLock *l, int dirfd, const char *name) {
        char host[64] = "localhost", lock[80], alive[80];
        struct timespec ts;
        int fd;

        *l = (CcacheLock) { .dirfd = dirfd };
        (void) gethostname(host, sizeof(host) - 1);
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(l->name, sizeof(l->name), "%s", name);
        snprintf(l->content, sizeof(l->content), "%s-%d-%d-%lld.%09ld", host, (int) getpid(), (int) gettid(),
                 (long long) ts.tv_sec, ts.tv_nsec);
        snprintf(lock, sizeof(lock), "%s.lock", name);
        snprintf(alive, sizeof(alive), "%s.alive", name);
        if (symlinkat(l->content, dirfd, lock) < 0)
                return errno == EEXIST ? 0 : -errno;
        l->held = true;
        fd = openat(dirfd, alive, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
        if (fd >= 0) {
                (void) futimens(fd, NULL);
                close(fd);
        }
        return 1;
}

void ccache_lock_release(CcacheLock *l) {
        char lock[80], alive[80], target[sizeof(l->content)];
        ssize_t n;

        if (!l->held)
                return;
        snprintf(lock, sizeof(lock), "%s.lock", l->name);
        snprintf(alive, sizeof(alive), "%s.alive", l->name);
        n = readlinkat(l->dirfd, lock, target, sizeof(target) - 1);
        /* A waiter may have judged us stale and broken the lock: never
         * remove a lock that is not ours. */
        if (n >= 0 && (target[n] = '\0', strcmp(target, l->content) == 0)) {
                (void) unlinkat(l->dirfd, alive, 0);
                (void) unlinkat(l->dirfd, lock, 0);
        }
        l->held = false;
}

static uint64_t sub_clamped(uint64_t v, uint64_t d) {
        return v > d ? v - d : 0;
}

int ccache_tmpfile(int dirfd, const char *base, mode_t mode, char *name, size_t len) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

        for (int attempt = 0; attempt < 100; attempt++) {
                unsigned char rnd[6];
                char suffix[7];
                int fd;

                if (getentropy(rnd, sizeof(rnd)) < 0)
                        return -errno;
                for (size_t i = 0; i < sizeof(rnd); i++)
                        suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
                suffix[6] = '\0';
                snprintf(name, len, "%s.tmp.%s.tmp", base, suffix);
                /* O_EXCL: never write into a file someone placed there. */
                fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd >= 0 || errno != EEXIST)
                        return fd >= 0 ? fd : -errno;
        }
        return -EEXIST;
}

static int stats_write(int l1fd, const CcacheStats *s) {
        char tmp[64], line[32];
        int fd, r = 0;
        FILE *f;

        fd = ccache_tmpfile(l1fd, "stats", 0666, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        /* Like ccache with umask 000: every user may replace it next time. */
        (void) fchmod(fd, 0666);
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                goto fail;
        }
        for (size_t i = 0; i < s->n; i++) {
                snprintf(line, sizeof(line), "%llu\n", (unsigned long long) s->counters[i]);
                fputs(line, f);
        }
        if (fflush(f) != 0 || fsync(fileno(f)) < 0)
                r = -errno;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(l1fd, tmp, l1fd, "stats") < 0)
                r = -errno;
        if (r == 0)
                return 0;
fail:
        (void) unlinkat(l1fd, tmp, 0);
        return r;
}

int ccache_stats_subtract(int l1fd, unsigned l2, uint64_t files, uint64_t kib, uint64_t wait_usec) {
        CcacheLock lock;
        CcacheStats s;
        uint64_t waited = 0;
        int r;

        while ((r = ccache_lock_try(&lock, l1fd, "stats")) == 0) {
                if (waited >= wait_usec)
                        return -EBUSY;
                usleep(10000);   /* ccache holds it for microseconds */
                waited += 10000;
        }
        if (r < 0)
                return r;
        r = ccache_stats_read(l1fd, "stats", &s);
        if (r == 0 && s.n == 0)
                r = 0;   /* no stats file: ccache reads that as all zeros already */
        else if (r == 0 && s.truncated)
                r = -E2BIG;   /* more lines than we keep: do not lose any */
        else if (r == 0) {
                s.counters[CCACHE_STAT_FILES_IN_CACHE] = sub_clamped(s.counters[CCACHE_STAT_FILES_IN_CACHE], files);
                s.counters[CCACHE_STAT_CACHE_SIZE_KIBIBYTE] = sub_clamped(s.counters[CCACHE_STAT_CACHE_SIZE_KIBIBYTE], kib);
                if (l2 < 16 && s.n > CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE + 15) {
                        uint64_t *sf = &s.counters[CCACHE_STAT_SUBDIR_FILES_BASE + l2];
                        uint64_t *sk = &s.counters[CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE + l2];
                        *sf = sub_clamped(*sf, files);
                        *sk = sub_clamped(*sk, kib);
                }
                r = stats_write(l1fd, &s);
                r = r < 0 ? r : 1;
        }
        ccache_lock_release(&lock);
        return r;
}
