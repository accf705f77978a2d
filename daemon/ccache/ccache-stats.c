/* SPDX-License-Identifier: MIT */
/* ccache's stats files: parsed as ccache's StatsFile::read parses them, and
 * rewritten the way ccache rewrites them (under stats.lock, through a
 * temporary file and a rename), every line we do not change kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccache/ccache-stats.h"

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

static uint64_t sub_clamped(uint64_t v, uint64_t d) {
        return v > d ? v - d : 0;
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
        /* No fsync, as ccache's own StatsFile::update: counters, not data;
         * the rename keeps a read whole (ccache/README.md). */
        if (fflush(f) != 0)
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
                if (fix->sub_files[i] || fix->sub_kib[i] || fix->add_files[i] || fix->add_kib[i] || fix->recount[i])
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
                *files = sub_clamped(*files, fix->sub_files[i]) + fix->add_files[i];
                *kib = sub_clamped(*kib, fix->sub_kib[i]) + fix->add_kib[i];
                if (per_subdir) {
                        *sf = sub_clamped(*sf, fix->sub_files[i]) + fix->add_files[i];
                        *sk = sub_clamped(*sk, fix->sub_kib[i]) + fix->add_kib[i];
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

/* Entries are added, or a recount finds some: a missing stats file (zeros)
 * must be written. */
static bool fix_adds(const CcacheStatsFix *fix) {
        for (size_t i = 0; i < 16; i++)
                if ((fix->recount[i] && (fix->files[i] || fix->kib[i])) || fix->add_files[i] || fix->add_kib[i])
                        return true;
        return false;
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
        if (r == 0 && s.n == 0 && !fix_adds(fix))
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
