/* SPDX-License-Identifier: MIT */
/* The state files: envelope (magic, version, sizes, CRC-32) around
 * activity_encode or regret_encode, atomic writes, bounded reads, bad files
 * set aside. I/O
 * relative to a directory fd only; never logs. */
#include <assert.h>
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ccache/ccache-lock.h"
#include "insight/state-file.h"

/* A kind of state file: its magic, the versions this build reads (each
 * with the header's layout: header bytes, three counts, payload bytes) and
 * the words of its messages. The last version is the one written. */
typedef struct FileVersion {
        uint32_t version;
        uint32_t layout[5];
} FileVersion;

typedef struct Format {
        const char *what, *What;        /* "history file", "History file" */
        const char *empty;              /* "history starts empty" */
        uint8_t magic[8];
        size_t n_versions;
        FileVersion versions[3];
} Format;

/* Version 1 predates ACTIVITY_REGRET: its buckets hold one daemon kind
 * less; version 2 predates the rest of a size change (ACTIVITY_OTHER_ADDED
 * and after): four less than version 3's. */
#define HISTORY_LAYOUT(events) { STATE_FILE_HEADER_BYTES, ACTIVITY_MINUTES, ACTIVITY_HOURS, \
                                 ACTIVITY_BUCKET_BYTES_OF(events), ACTIVITY_ENCODED_BYTES_OF(events) }
static const Format history_format = {
        "history file", "History file", "history starts empty", { 0x89, 'C', 'K', 'H', 'I', 'S', 'T', '\n' }, 3,
        { { 1, HISTORY_LAYOUT(ACTIVITY_REGRET) }, { 2, HISTORY_LAYOUT(ACTIVITY_OTHER_ADDED) },
          { ACTIVITY_FILE_VERSION, HISTORY_LAYOUT(_ACTIVITY_EVENT_MAX) } },
};
/* Version 1 predates the reasons and the other departures (regret.h). */
#define REGRET_LAYOUT(bytes) { STATE_FILE_HEADER_BYTES, REGRET_KEYS, REGRET_HOURS, REGRET_RETURNS, bytes }
static const Format regret_format = {
        "regret file", "Regret file", "eviction regret starts empty", { 0x89, 'C', 'K', 'R', 'G', 'R', 'T', '\n' }, 2,
        { { 1, REGRET_LAYOUT(REGRET_ENCODED_BYTES_V1) }, { REGRET_FILE_VERSION, REGRET_LAYOUT(REGRET_ENCODED_BYTES) } },
};

/* The daemon kinds of the buckets of history format version vi (an index). */
static unsigned history_events(size_t vi) {
        return vi == 0 ? ACTIVITY_REGRET : vi == 1 ? ACTIVITY_OTHER_ADDED : _ACTIVITY_EVENT_MAX;
}

/* The size of a whole file of version vi of f. */
static size_t file_bytes(const Format *f, size_t vi) {
        return STATE_FILE_HEADER_BYTES + f->versions[vi].layout[4] + 4;
}

uint32_t state_file_crc32(const void *p, size_t n) {
        /* The reflected polynomial 0xedb88320, four bits at a time. */
        static const uint32_t nibble[16] = {
                0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
                0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
        };
        const uint8_t *b = p;
        uint32_t c = 0xffffffffU;

        while (n--) {
                c ^= *b++;
                c = (c >> 4) ^ nibble[c & 15];
                c = (c >> 4) ^ nibble[c & 15];
        }
        return ~c;
}

static void put32(uint8_t *p, uint32_t v) {
        v = htole32(v);
        memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, 4);
        return le32toh(v);
}

/* One path component, with room for the temporary's and the set-aside suffix. */
static bool name_ok(const char *name) {
        return *name && !strchr(name, '/') && strlen(name) <= NAME_MAX - 32;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k, n -= (size_t) k;
        }
        return 0;
}

/* Writes buf as a new 0644 file and renames it over dirfd/name. */
static int replace_file(int dirfd, const char *name, const uint8_t *buf, size_t n) {
        char tmp[NAME_MAX + 1];
        int fd, r;

        fd = ccache_tmpfile(dirfd, name, 0644, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        r = write_all(fd, buf, n);
        /* The mode whatever the umask: history is for any user to read. */
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = -errno;
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dirfd, tmp, 0);
                return r;
        }
        /* The rename itself survives a crash only once the directory is synced. */
        return fsync(dirfd) < 0 ? -errno : 0;
}

/* Writes obj's payload (ENCODED_BYTES of f's newest layout) at buf. */
typedef void (*encode_t)(const void *obj, uint8_t *buf);

/* Writes obj as a file of f's newest version over dirfd/name, atomically:
 * the header, encode's payload, the checksum. */
static int file_save(const Format *f, int dirfd, const char *name, encode_t encode, const void *obj) {
        const FileVersion *v = &f->versions[f->n_versions - 1];
        size_t n = file_bytes(f, f->n_versions - 1);
        _cleanup_free_ uint8_t *buf = NULL;

        assert(name && obj);
        if (!name_ok(name))
                return -EINVAL;
        buf = malloc(n);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, f->magic, sizeof(f->magic));
        put32(buf + 8, v->version);
        for (size_t i = 0; i < ELEMENTSOF(v->layout); i++)
                put32(buf + 12 + 4 * i, v->layout[i]);
        encode(obj, buf + STATE_FILE_HEADER_BYTES);
        put32(buf + n - 4, state_file_crc32(buf, n - 4));
        return replace_file(dirfd, name, buf, n);
}

static void encode_history(const void *obj, uint8_t *buf) {
        activity_encode(obj, buf);
}

int activity_file_save(int dirfd, const char *name, const Activity *a) {
        return file_save(&history_format, dirfd, name, encode_history, a);
}

static void encode_regret(const void *obj, uint8_t *buf) {
        regret_encode(obj, buf);
}

int regret_file_save(int dirfd, const char *name, const Regret *rg) {
        return file_save(&regret_format, dirfd, name, encode_regret, rg);
}

/* What is wrong with the n bytes at buf as a file of f (state_file_check),
 * and the index of its version in f->versions in *ret_vi (when not NULL)
 * if nothing is. */
static StateFileStatus file_check(const Format *f, const uint8_t *buf, size_t n, size_t *ret_vi, char *detail,
                                    size_t size) {
        size_t magic = n < sizeof(f->magic) ? n : sizeof(f->magic), vi = 0, bytes = 0;
        uint32_t version;

        if (memcmp(buf, f->magic, magic) != 0) {
                snprintf(detail, size, "is not a %s (no magic)", f->what);
                return STATE_FILE_GARBAGE;
        }
        if (n < 12)
                goto truncated;
        version = get32(buf + 8);
        while (vi < f->n_versions && f->versions[vi].version != version)
                vi++;
        if (vi == f->n_versions) {
                snprintf(detail, size, "has format version %u, this build reads %u to %u", version,
                         f->versions[0].version, f->versions[f->n_versions - 1].version);
                return STATE_FILE_WRONG_VERSION;
        }
        bytes = file_bytes(f, vi);
        if (n < STATE_FILE_HEADER_BYTES)
                goto truncated;
        for (size_t i = 0; i < ELEMENTSOF(f->versions[vi].layout); i++)
                if (get32(buf + 12 + 4 * i) != f->versions[vi].layout[i]) {
                        snprintf(detail, size, "has a layout this build does not read");
                        return STATE_FILE_BAD_LAYOUT;
                }
        if (n < bytes)
                goto truncated;
        if (n > bytes) {
                snprintf(detail, size, "has %zu bytes after its end", n - bytes);
                return STATE_FILE_GARBAGE;
        }
        if (state_file_crc32(buf, n - 4) != get32(buf + n - 4)) {
                snprintf(detail, size, "fails its checksum");
                return STATE_FILE_BAD_CHECKSUM;
        }
        if (ret_vi)
                *ret_vi = vi;
        return STATE_FILE_OK;
truncated:
        /* Before the version is read, the size of this build's files. */
        snprintf(detail, size, "is truncated (%zu of %zu bytes)", n,
                 bytes ? bytes : file_bytes(f, f->n_versions - 1));
        return STATE_FILE_TRUNCATED;
}

StateFileStatus state_file_check(const uint8_t *buf, size_t n, char *detail, size_t size) {
        return file_check(&history_format, buf, n, NULL, detail, size);
}

/* Reads what fd holds, at most max bytes (one more says it is bigger). */
static int read_bounded(int fd, size_t max, uint8_t **ret, size_t *ret_n) {
        _cleanup_free_ uint8_t *buf = malloc(max + 1);
        size_t n = 0;

        if (!buf)
                return -ENOMEM;
        while (n <= max) {
                ssize_t k = read(fd, buf + n, max + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        *ret = TAKE_PTR(buf);
        *ret_n = n;
        return 0;
}

/* Opens dirfd/name for reading into *ret_fd if it is a regular file of
 * ours, not too big. Returns STATE_FILE_OK, _MISSING, a bad status
 * (detail says why), or -errno. */
static int open_checked(int dirfd, const char *name, int *ret_fd, char *detail, size_t size) {
        _cleanup_close_ int fd = -1;
        struct stat st, fst;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? STATE_FILE_MISSING : -errno;
        if (!S_ISREG(st.st_mode)) {
                snprintf(detail, size, "is not a regular file (%s)", S_ISLNK(st.st_mode) ? "a symlink, not followed" :
                                                                     S_ISDIR(st.st_mode) ? "a directory" : "a special file");
                return STATE_FILE_NOT_REGULAR;
        }
        /* O_NOFOLLOW and the same inode: nothing swapped in since the stat. */
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? STATE_FILE_MISSING : -errno;
        if (fstat(fd, &fst) < 0)
                return -errno;
        if (fst.st_ino != st.st_ino || fst.st_dev != st.st_dev || !S_ISREG(fst.st_mode)) {
                snprintf(detail, size, "was replaced while being opened");
                return STATE_FILE_NOT_REGULAR;
        }
        if (fst.st_uid != geteuid()) {
                snprintf(detail, size, "is owned by uid %u, not %u", (unsigned) fst.st_uid, (unsigned) geteuid());
                return STATE_FILE_FOREIGN_OWNER;
        }
        if ((uint64_t) fst.st_size > STATE_FILE_MAX_BYTES) {
                snprintf(detail, size, "is too big (%jd bytes, at most %u)", (intmax_t) fst.st_size,
                         STATE_FILE_MAX_BYTES);
                return STATE_FILE_TOO_BIG;
        }
        *ret_fd = TAKE_FD(fd);
        return STATE_FILE_OK;
}

/* Decodes the payload of a good file of version vi (an index) into obj;
 * what of it was dropped, if anything, goes to note (size bytes, left as
 * it is when nothing was). Returns 0 or -EBADMSG. */
typedef int (*decode_t)(void *obj, size_t vi, const uint8_t *payload, usec_t now, char *note, size_t size);

/* Reads, checks and decodes dirfd/name of format f into obj. Returns a
 * StateFileStatus (detail set when bad, or when good but not all of it
 * was loaded) or -errno. */
static int load(const Format *f, int dirfd, const char *name, decode_t decode, void *obj, usec_t now, char *detail,
                size_t size) {
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -1;
        size_t n = 0, vi = 0;
        int r;

        r = open_checked(dirfd, name, &fd, detail, size);
        if (r != STATE_FILE_OK)
                return r;
        r = read_bounded(fd, STATE_FILE_MAX_BYTES, &buf, &n);
        if (r < 0)
                return r;
        if (n > STATE_FILE_MAX_BYTES) {
                snprintf(detail, size, "is too big (grew past %u bytes while read)", STATE_FILE_MAX_BYTES);
                return STATE_FILE_TOO_BIG;
        }
        r = file_check(f, buf, n, &vi, detail, size);
        if (r != STATE_FILE_OK)
                return r;
        r = decode(obj, vi, buf + STATE_FILE_HEADER_BYTES, now, detail, size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(detail, size, "holds figures this build cannot read");
                return STATE_FILE_BAD_LAYOUT;
        }
        return STATE_FILE_OK;
}

/* Renames dirfd/name to "<name>.corrupt-<sec>" (or with ".<n>" after it),
 * never over an existing file. Returns 0 and the new name in aside, or -errno. */
static int set_aside(int dirfd, const char *name, usec_t now, char *aside, size_t size) {
        for (unsigned i = 0; i < 100; i++) {
                if (i == 0)
                        snprintf(aside, size, "%s.corrupt-%ju", name, (uintmax_t) (now / USEC_PER_SEC));
                else
                        snprintf(aside, size, "%s.corrupt-%ju.%u", name, (uintmax_t) (now / USEC_PER_SEC), i);
                if (renameat2(dirfd, name, dirfd, aside, RENAME_NOREPLACE) == 0)
                        return 0;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Removes the temporaries "<name>.tmp.XXXXXX.tmp" a save cut short by a
 * crash left in dirfd. Best effort: a failure leaves them for next time. */
static void sweep_temporaries(int dirfd, const char *name) {
        size_t len = strlen(name);
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        DIR *d;

        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (n == len + 15 && strncmp(de->d_name, name, len) == 0 &&
                    strncmp(de->d_name + len, ".tmp.", 5) == 0 && strcmp(de->d_name + n - 4, ".tmp") == 0)
                        (void) unlinkat(dirfd, de->d_name, 0);  /* a symlink goes itself, never its target */
        }
        closedir(d);
}

/* Loads dirfd/name of format f into obj (activity_file_load). */
static int file_load(const Format *f, int dirfd, const char *name, decode_t decode, void *obj, usec_t now,
                     char *message, size_t message_size) {
        char detail[320] = "", aside[NAME_MAX + 1];
        int r, k;

        assert(name && obj && message && message_size > 0);
        message[0] = '\0';
        if (!name_ok(name))
                return -EINVAL;
        sweep_temporaries(dirfd, name);
        r = load(f, dirfd, name, decode, obj, now, detail, sizeof(detail));
        if (r == STATE_FILE_OK && detail[0])
                snprintf(message, message_size, "%s '%s' %s", f->What, name, detail);
        if (r < 0 || r == STATE_FILE_OK || r == STATE_FILE_MISSING)
                return r;

        k = set_aside(dirfd, name, now, aside, sizeof(aside));
        if (k < 0)
                snprintf(message, message_size, "%s '%s' %s; could not set it aside (%s), %s", f->What, name, detail,
                         strerror(-k), f->empty);
        else
                snprintf(message, message_size, "%s '%s' %s; set aside as '%s', %s", f->What, name, detail, aside,
                         f->empty);
        return r;
}

/* Whether the encoded bucket at p (bytes long) holds a figure: a count or
 * bytes of some kind (its first 8 bytes, the cache's size then, are not). */
static bool bucket_has_figures(const uint8_t *p, size_t bytes) {
        for (size_t i = 8; i < bytes; i++)
                if (p[i])
                        return true;
        return false;
}

/* "YYYY-MM-DD HH:MM" (UTC) of minute m since the epoch. */
static void format_minute(uint64_t m, char *buf, size_t size) {
        time_t t = (time_t) (m * 60);
        struct tm tm;

        if (m > (uint64_t) INT64_MAX / 60 || !gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, size, "minute %ju", (uintmax_t) m);
}

/* A file whose newest minute is after now (written by a clock that was
 * ahead, or forged): activity_decode drops its buckets after now, as when
 * the clock steps back (activity_advance). They cannot be placed: history
 * ends at now, so they would stay unseen until their time came and then be
 * added to what really happens in it; the clock that dated them was wrong.
 * The buckets up to now are kept. Says in note (size bytes) what goes: how
 * many buckets that held figures and the span they cover; left as it is
 * when the file is not from the future. */
static void future_note(const uint8_t *payload, unsigned events, usec_t now, char *note, size_t size) {
        const size_t bucket = ACTIVITY_BUCKET_BYTES_OF(events);
        const uint8_t *minutes = payload + 24, *hours = minutes + ACTIVITY_MINUTES * bucket;
        uint64_t head, now_min = now / ((usec_t) ACTIVITY_MINUTE_SEC * USEC_PER_SEC), first = UINT64_MAX, last = 0;
        size_t n_minutes = 0, n_hours = 0;
        char newest[32], from[32], to[32];
        bool far;

        (void) le_get64(payload, &head);
        if (head <= now_min || head < ACTIVITY_HOURS * 60)
                return;
        /* As activity_advance steps back: a whole ring ahead, now's hour goes too. */
        far = head - now_min >= ACTIVITY_MINUTES;
        for (uint64_t i = 0; i < ACTIVITY_MINUTES; i++) {
                uint64_t m = head - (ACTIVITY_MINUTES - 1) + i;

                if (m > now_min && bucket_has_figures(minutes + i * bucket, bucket)) {
                        n_minutes++;
                        first = m < first ? m : first;
                        last = m + 1 > last ? m + 1 : last;
                }
        }
        for (uint64_t i = 0; i < ACTIVITY_HOURS; i++) {
                uint64_t h = head / 60 - (ACTIVITY_HOURS - 1) + i;

                if ((h > now_min / 60 || (far && h == now_min / 60)) && bucket_has_figures(hours + i * bucket, bucket)) {
                        n_hours++;
                        first = h * 60 < first ? h * 60 : first;
                        last = (h + 1) * 60 > last ? (h + 1) * 60 : last;
                }
        }
        format_minute(head, newest, sizeof(newest));
        if (n_minutes + n_hours == 0) {
                snprintf(note, size, "is dated %ju min in the future (its newest minute %s UTC): no bucket after now "
                         "held figures, the rest is loaded", (uintmax_t) (head - now_min), newest);
                return;
        }
        format_minute(first, from, sizeof(from));
        format_minute(last, to, sizeof(to));
        snprintf(note, size, "is dated %ju min in the future (its newest minute %s UTC): dropped the %zu minute and "
                 "%zu hour buckets with figures from then, spanning %s to %s UTC; the rest is loaded",
                 (uintmax_t) (head - now_min), newest, n_minutes, n_hours, from, to);
}

static int decode_history(void *obj, size_t vi, const uint8_t *payload, usec_t now, char *note, size_t size) {
        int r = activity_decode(obj, payload, history_events(vi), now);

        if (r >= 0)
                future_note(payload, history_events(vi), now, note, size);
        return r;
}

int activity_file_load(int dirfd, const char *name, Activity *a, usec_t now, char *message, size_t message_size) {
        return file_load(&history_format, dirfd, name, decode_history, a, now, message, message_size);
}

static int decode_regret(void *obj, size_t vi, const uint8_t *payload, usec_t now, char *note, size_t size) {
        return regret_decode(obj, payload, regret_format.versions[vi].version);
}

int regret_file_load(int dirfd, const char *name, Regret *rg, usec_t now, char *message, size_t message_size) {
        return file_load(&regret_format, dirfd, name, decode_regret, rg, now, message, message_size);
}
