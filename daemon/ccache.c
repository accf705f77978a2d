/* SPDX-License-Identifier: MIT */
/* ccache's file names and stats files. Name packing must be exact: the
 * daemon deletes by the unpacked name, so pack(unpack(x)) == x is tested. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* The first lock this process looked at: a lock naming our pid from before
 * then was taken by a previous process with the same pid. */
static uint64_t lock_first_use_usec;

static uint64_t lock_first_use(void) {
        if (lock_first_use_usec == 0)
                lock_first_use_usec = now_usec(CLOCK_REALTIME);
        return lock_first_use_usec;
}

static uint64_t hash_text(const char *s) {
        uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
}

/* This host's name as ccache writes it into a lock (HOST_NAME_MAX is 64). */
static void host_name(char buf[65]) {
        if (gethostname(buf, 65) < 0)
                snprintf(buf, 65, "localhost");
        buf[64] = '\0';
}

static void lock_names(const char *name, char *lock, char *alive, size_t len) {
        snprintf(lock, len, "%s.lock", name);
        snprintf(alive, len, "%s.alive", name);
}

/* The holder's text and its .alive's mtime (0 without one: never followed,
 * so a symlink planted as .alive shows its own mtime). -ENOENT if the lock
 * is gone. */
static int lock_inspect(int dirfd, const char *lock, const char *alive, char *content, size_t len,
                        int64_t *ret_alive_nsec) {
        struct stat st;
        ssize_t n;

        /* Not a symlink (EINVAL): something planted under the lock's name
         * holds it as an empty text would; it goes stale like any lock. */
        n = readlinkat(dirfd, lock, content, len - 1);
        if (n < 0 && errno != EINVAL)
                return -errno;
        content[n < 0 ? 0 : n] = '\0';
        *ret_alive_nsec = fstatat(dirfd, alive, &st, AT_SYMLINK_NOFOLLOW) == 0
                                  ? (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
        return 0;
}

/* Records what was seen of a held lock at now; true when it is stale: its
 * text and .alive mtime unchanged for CCACHE_LOCK_STALE_USEC. On first sight
 * the last activity is the .alive's mtime, as in ccache (never later than
 * now: a future mtime must not keep a lock alive for ever); a change of
 * holder or a touched .alive is activity now. */
static bool lock_seen_stale(CcacheLockSeen *seen, const char *content, int64_t alive_nsec, uint64_t now) {
        uint64_t h = hash_text(content);

        if (!seen->valid) {
                uint64_t alive = alive_nsec > 0 ? (uint64_t) alive_nsec / 1000 : now;
                *seen = (CcacheLockSeen) { .content_hash = h, .alive_nsec = alive_nsec,
                                           .since_usec = alive < now ? alive : now, .valid = true };
        } else if (seen->content_hash != h || seen->alive_nsec != alive_nsec) {
                seen->content_hash = h;
                seen->alive_nsec = alive_nsec;
                seen->since_usec = now;
        }
        return now >= seen->since_usec && now - seen->since_usec >= CCACHE_LOCK_STALE_USEC;
}

bool ccache_lock_is_ours_dead(const char *content) {
        char host[65];
        const char *p[3] = { NULL };     /* the last three '-' */
        long long pid, tid, sec;
        char *end;

        for (const char *c = content; *c; c++)
                if (*c == '-') {
                        p[0] = p[1];
                        p[1] = p[2];
                        p[2] = c;
                }
        if (!p[0])
                return false;
        pid = strtoll(p[0] + 1, &end, 10);
        if (end != p[1] || pid <= 0 || pid > INT32_MAX)
                return false;
        tid = strtoll(p[1] + 1, &end, 10);
        if (end != p[2] || tid != pid)
                return false;
        sec = strtoll(p[2] + 1, &end, 10);
        host_name(host);
        if ((size_t) (p[0] - content) != strlen(host) || strncmp(content, host, strlen(host)) != 0)
                return false;
        if (pid == getpid())
                return (uint64_t) sec < lock_first_use() / 1000000;
        return kill((pid_t) pid, 0) < 0 && errno == ESRCH;
}

/* Breaks the lock whose text we judged stale, as ccache does: .alive, then
 * .lock; unless its text changed meanwhile (a new holder). */
static void lock_break(int dirfd, const char *lock, const char *alive, const char *content) {
        char now_content[128];
        int64_t alive_nsec;

        if (lock_inspect(dirfd, lock, alive, now_content, sizeof(now_content), &alive_nsec) < 0 ||
            strcmp(now_content, content) != 0)
                return;
        (void) unlinkat(dirfd, alive, 0);
        (void) unlinkat(dirfd, lock, 0);
}

int ccache_lock_break_ours_dead(int dirfd, const char *name) {
        char lock[80], alive[80], content[128];
        int64_t alive_nsec;
        int r;

        lock_names(name, lock, alive, sizeof(lock));
        r = lock_inspect(dirfd, lock, alive, content, sizeof(content), &alive_nsec);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (!ccache_lock_is_ours_dead(content))
                return 0;
        lock_break(dirfd, lock, alive, content);
        return 1;
}

int ccache_lock_try(CcacheLock *l, int dirfd, const char *name, CcacheLockSeen *seen, uint64_t now) {
        char host[65], lock[80], alive[80], content[128];
        CcacheLockSeen first_look = { 0 };
        struct timespec ts;
        int64_t alive_nsec;
        int fd, r;

        *l = (CcacheLock) { .dirfd = dirfd };
        (void) lock_first_use();
        host_name(host);
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(l->name, sizeof(l->name), "%s", name);
        /* The pid twice where ccache writes a pthread id: see ccache_lock_is_ours_dead. */
        snprintf(l->content, sizeof(l->content), "%s-%d-%d-%lld.%09ld", host, (int) getpid(), (int) getpid(),
                 (long long) ts.tv_sec, ts.tv_nsec);
        lock_names(name, lock, alive, sizeof(lock));
        for (int attempt = 0;; attempt++) {
                if (symlinkat(l->content, dirfd, lock) == 0)
                        break;
                if (errno != EEXIST)
                        return -errno;
                if (attempt == 2)
                        return 0;     /* others keep taking it: theirs */
                r = lock_inspect(dirfd, lock, alive, content, sizeof(content), &alive_nsec);
                if (r == -ENOENT)
                        continue;     /* released just now */
                if (r < 0)
                        return r;
                if (!ccache_lock_is_ours_dead(content) &&
                    !lock_seen_stale(seen ? seen : &first_look, content, alive_nsec, now))
                        return 0;
                lock_break(dirfd, lock, alive, content);
                l->broke = true;
                snprintf(l->broken, sizeof(l->broken), "%s", content);
                if (seen)
                        *seen = (CcacheLockSeen) { 0 };
        }
        l->held = true;
        l->refreshed_usec = now_usec(CLOCK_MONOTONIC);
        fd = openat(dirfd, alive, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
        if (fd >= 0) {
                (void) futimens(fd, NULL);
                close(fd);
        }
        return 1;
}

void ccache_lock_refresh(CcacheLock *l, uint64_t now) {
        char lock[80], alive[80];

        if (!l->held || now - l->refreshed_usec < CCACHE_LOCK_REFRESH_USEC)
                return;
        lock_names(l->name, lock, alive, sizeof(lock));
        (void) utimensat(l->dirfd, alive, NULL, AT_SYMLINK_NOFOLLOW);
        l->refreshed_usec = now;
}

void ccache_lock_release(CcacheLock *l) {
        char lock[80], alive[80], target[sizeof(l->content)];
        ssize_t n;

        if (!l->held)
                return;
        lock_names(l->name, lock, alive, sizeof(lock));
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

static bool fix_is_empty(const CcacheStatsFix *fix) {
        for (size_t i = 0; i < 16; i++)
                if (fix->sub_files[i] || fix->sub_kib[i] || fix->recount[i])
                        return false;
        return true;
}

/* Sets counter *c to v, moving the total *total by the difference. */
static void set_moving_total(uint64_t *c, uint64_t v, uint64_t *total) {
        *total = sub_clamped(*total, *c) + v;
        *c = v;
}

static void stats_apply(CcacheStats *s, const CcacheStatsFix *fix) {
        uint64_t *files = &s->counters[CCACHE_STAT_FILES_IN_CACHE], *kib = &s->counters[CCACHE_STAT_CACHE_SIZE_KIBIBYTE];
        bool per_subdir = s->n > CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE + 15, recount = false;
        uint64_t all_files = 0, all_kib = 0;

        for (size_t i = 0; i < 16; i++) {
                uint64_t *sf = &s->counters[CCACHE_STAT_SUBDIR_FILES_BASE + i];
                uint64_t *sk = &s->counters[CCACHE_STAT_SUBDIR_SIZE_KIBIBYTE_BASE + i];

                recount |= fix->recount[i];
                all_files += fix->files[i];
                all_kib += fix->kib[i];
                if (per_subdir && fix->recount[i]) {
                        set_moving_total(sf, fix->files[i], files);
                        set_moving_total(sk, fix->kib[i], kib);
                        continue;
                }
                *files = sub_clamped(*files, fix->sub_files[i]);
                *kib = sub_clamped(*kib, fix->sub_kib[i]);
                if (per_subdir) {
                        *sf = sub_clamped(*sf, fix->sub_files[i]);
                        *sk = sub_clamped(*sk, fix->sub_kib[i]);
                }
        }
        /* 4.7 keeps no per-subdirectory counters: the level-1 total it is. */
        if (!per_subdir && recount) {
                *files = all_files;
                *kib = all_kib;
        }
        if (s->n <= CCACHE_STAT_CACHE_SIZE_KIBIBYTE)
                s->n = CCACHE_STAT_CACHE_SIZE_KIBIBYTE + 1;
}

int ccache_stats_fix(int l1fd, const CcacheStatsFix *fix, CcacheLockSeen *seen, uint64_t now, bool *ret_broke) {
        CcacheLock lock;
        CcacheStats s;
        int r;

        if (fix_is_empty(fix))
                return 0;
        r = ccache_lock_try(&lock, l1fd, "stats", seen, now);
        if (r == 0)
                return -EBUSY;
        if (r < 0)
                return r;
        if (ret_broke)
                *ret_broke = lock.broke;
        r = ccache_stats_read(l1fd, "stats", &s);
        if (r == 0 && s.n == 0)
                r = 0;   /* no stats file: ccache reads that as all zeros already */
        else if (r == 0 && s.truncated)
                r = -E2BIG;   /* more lines than we keep: do not lose any */
        else if (r == 0) {
                stats_apply(&s, fix);
                r = stats_write(l1fd, &s);
                r = r < 0 ? r : 1;
        }
        ccache_lock_release(&lock);
        return r;
}

int ccache_stats_subtract(int l1fd, unsigned l2, uint64_t files, uint64_t kib, CcacheLockSeen *seen, uint64_t now) {
        CcacheStatsFix fix = { 0 };

        if (l2 >= 16)
                return -EINVAL;
        fix.sub_files[l2] = files;
        fix.sub_kib[l2] = kib;
        return ccache_stats_fix(l1fd, &fix, seen, now, NULL);
}
