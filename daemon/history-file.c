/* SPDX-License-Identifier: MIT */
/* The activity state file: envelope (magic, version, sizes, CRC-32) around
 * activity_encode, atomic writes, bounded reads, bad files set aside. I/O
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
#include <unistd.h>

#include "ccache-lock.h"
#include "history-file.h"

static const uint8_t history_magic[8] = { 0x89, 'C', 'K', 'H', 'I', 'S', 'T', '\n' };

/* What the header says after the magic and the version, in this build. */
static const uint32_t history_layout[] = {
        HISTORY_FILE_HEADER_BYTES, ACTIVITY_MINUTES, ACTIVITY_HOURS, ACTIVITY_BUCKET_BYTES,
        ACTIVITY_ENCODED_BYTES,
};

static const char *const status_names[_HISTORY_FILE_STATUS_MAX] = {
        [HISTORY_FILE_OK] = "ok",
        [HISTORY_FILE_MISSING] = "missing",
        [HISTORY_FILE_TRUNCATED] = "truncated",
        [HISTORY_FILE_GARBAGE] = "garbage",
        [HISTORY_FILE_WRONG_VERSION] = "wrong-version",
        [HISTORY_FILE_BAD_LAYOUT] = "bad-layout",
        [HISTORY_FILE_BAD_CHECKSUM] = "bad-checksum",
        [HISTORY_FILE_TOO_BIG] = "too-big",
        [HISTORY_FILE_NOT_REGULAR] = "not-regular",
        [HISTORY_FILE_FOREIGN_OWNER] = "foreign-owner",
};

const char *history_file_status_to_string(HistoryFileStatus s) {
        return (unsigned) s < _HISTORY_FILE_STATUS_MAX ? status_names[s] : "?";
}

uint32_t history_file_crc32(const void *p, size_t n) {
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

int history_file_save(int dirfd, const char *name, const Activity *a) {
        _cleanup_free_ uint8_t *buf = NULL;
        uint8_t *p;

        assert(name && a);
        if (!name_ok(name))
                return -EINVAL;
        buf = malloc(HISTORY_FILE_BYTES);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, history_magic, sizeof(history_magic));
        put32(buf + 8, HISTORY_FILE_VERSION);
        p = buf + 12;
        for (size_t i = 0; i < ELEMENTSOF(history_layout); i++, p += 4)
                put32(p, history_layout[i]);
        activity_encode(a, buf + HISTORY_FILE_HEADER_BYTES);
        put32(buf + HISTORY_FILE_BYTES - 4, history_file_crc32(buf, HISTORY_FILE_BYTES - 4));
        return replace_file(dirfd, name, buf, HISTORY_FILE_BYTES);
}

HistoryFileStatus history_file_check(const uint8_t *buf, size_t n, char *detail, size_t size) {
        size_t magic = n < sizeof(history_magic) ? n : sizeof(history_magic);
        uint32_t version;

        if (memcmp(buf, history_magic, magic) != 0) {
                snprintf(detail, size, "is not a history file (no magic)");
                return HISTORY_FILE_GARBAGE;
        }
        if (n < 12)
                goto truncated;
        version = get32(buf + 8);
        if (version != HISTORY_FILE_VERSION) {
                snprintf(detail, size, "has format version %u, this build reads %u", version, HISTORY_FILE_VERSION);
                return HISTORY_FILE_WRONG_VERSION;
        }
        if (n < HISTORY_FILE_HEADER_BYTES)
                goto truncated;
        for (size_t i = 0; i < ELEMENTSOF(history_layout); i++)
                if (get32(buf + 12 + 4 * i) != history_layout[i]) {
                        snprintf(detail, size, "has a layout this build does not read");
                        return HISTORY_FILE_BAD_LAYOUT;
                }
        if (n < HISTORY_FILE_BYTES)
                goto truncated;
        if (n > HISTORY_FILE_BYTES) {
                snprintf(detail, size, "has %zu bytes after its end", n - HISTORY_FILE_BYTES);
                return HISTORY_FILE_GARBAGE;
        }
        if (history_file_crc32(buf, n - 4) != get32(buf + n - 4)) {
                snprintf(detail, size, "fails its checksum");
                return HISTORY_FILE_BAD_CHECKSUM;
        }
        return HISTORY_FILE_OK;
truncated:
        snprintf(detail, size, "is truncated (%zu of %u bytes)", n, HISTORY_FILE_BYTES);
        return HISTORY_FILE_TRUNCATED;
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
 * ours, not too big. Returns HISTORY_FILE_OK, _MISSING, a bad status
 * (detail says why), or -errno. */
static int open_checked(int dirfd, const char *name, int *ret_fd, char *detail, size_t size) {
        _cleanup_close_ int fd = -1;
        struct stat st, fst;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? HISTORY_FILE_MISSING : -errno;
        if (!S_ISREG(st.st_mode)) {
                snprintf(detail, size, "is not a regular file (%s)", S_ISLNK(st.st_mode) ? "a symlink, not followed" :
                                                                     S_ISDIR(st.st_mode) ? "a directory" : "a special file");
                return HISTORY_FILE_NOT_REGULAR;
        }
        /* O_NOFOLLOW and the same inode: nothing swapped in since the stat. */
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? HISTORY_FILE_MISSING : -errno;
        if (fstat(fd, &fst) < 0)
                return -errno;
        if (fst.st_ino != st.st_ino || fst.st_dev != st.st_dev || !S_ISREG(fst.st_mode)) {
                snprintf(detail, size, "was replaced while being opened");
                return HISTORY_FILE_NOT_REGULAR;
        }
        if (fst.st_uid != geteuid()) {
                snprintf(detail, size, "is owned by uid %u, not %u", (unsigned) fst.st_uid, (unsigned) geteuid());
                return HISTORY_FILE_FOREIGN_OWNER;
        }
        if ((uint64_t) fst.st_size > HISTORY_FILE_MAX_BYTES) {
                snprintf(detail, size, "is too big (%jd bytes, at most %u)", (intmax_t) fst.st_size,
                         HISTORY_FILE_MAX_BYTES);
                return HISTORY_FILE_TOO_BIG;
        }
        *ret_fd = TAKE_FD(fd);
        return HISTORY_FILE_OK;
}

/* Reads, checks and decodes dirfd/name into a. Returns a HistoryFileStatus
 * (detail set when bad) or -errno. */
static int load(int dirfd, const char *name, Activity *a, usec_t now, char *detail, size_t size) {
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_close_ int fd = -1;
        size_t n = 0;
        int r;

        r = open_checked(dirfd, name, &fd, detail, size);
        if (r != HISTORY_FILE_OK)
                return r;
        r = read_bounded(fd, HISTORY_FILE_MAX_BYTES, &buf, &n);
        if (r < 0)
                return r;
        if (n > HISTORY_FILE_MAX_BYTES) {
                snprintf(detail, size, "is too big (grew past %u bytes while read)", HISTORY_FILE_MAX_BYTES);
                return HISTORY_FILE_TOO_BIG;
        }
        r = history_file_check(buf, n, detail, size);
        if (r != HISTORY_FILE_OK)
                return r;
        if (activity_decode(a, buf + HISTORY_FILE_HEADER_BYTES, now) < 0) {
                snprintf(detail, size, "holds buckets this build cannot read");
                return HISTORY_FILE_BAD_LAYOUT;
        }
        return HISTORY_FILE_OK;
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

int history_file_load(int dirfd, const char *name, Activity *a, usec_t now, char *message, size_t message_size) {
        char detail[160] = "", aside[NAME_MAX + 1];
        int r, k;

        assert(name && a && message && message_size > 0);
        message[0] = '\0';
        if (!name_ok(name))
                return -EINVAL;
        sweep_temporaries(dirfd, name);
        r = load(dirfd, name, a, now, detail, sizeof(detail));
        if (r < 0 || r == HISTORY_FILE_OK || r == HISTORY_FILE_MISSING)
                return r;

        k = set_aside(dirfd, name, now, aside, sizeof(aside));
        if (k < 0)
                snprintf(message, message_size,
                         "History file '%s' %s; could not set it aside (%s), history starts empty", name, detail,
                         strerror(-k));
        else
                snprintf(message, message_size, "History file '%s' %s; set aside as '%s', history starts empty",
                         name, detail, aside);
        return r;
}
