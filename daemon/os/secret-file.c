/* SPDX-License-Identifier: MIT */
/* A secret's file (secret-file.h): every directory from / checked on its
 * open fd, the file stat'ed before it is opened and again after. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "os/secret-file.h"

static int mode_refusal(const struct stat *st, char *err, size_t len) {
        if (!S_ISREG(st->st_mode)) {
                snprintf(err, len, "is not a regular file");
                return -EPERM;
        }
        if (st->st_uid != 0 || (st->st_mode & 077) != 0) {
                snprintf(err, len, "must be owned by root and not readable by group or other "
                         "(chown root and chmod 600 it); it is owned by uid %u with mode %04o",
                         (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

/* Whether only root can change what the names in directory dir (at st)
 * lead to: owned by root, and writable by no one else, or sticky (in a
 * sticky directory no one but root may rename or unlink root's entries,
 * and every next name on the way is checked to be root's). */
static int dir_refusal(const struct stat *st, const char *dir, char *err, size_t len) {
        if (!S_ISDIR(st->st_mode)) {
                snprintf(err, len, "is under '%s', which is not a directory", dir);
                return -EPERM;
        }
        if (st->st_uid != 0) {
                snprintf(err, len, "is in directory '%s', owned by uid %u, who could replace the file: "
                         "keep it in a directory chain only root can write", dir, (unsigned) st->st_uid);
                return -EPERM;
        }
        if ((st->st_mode & 022) != 0 && !(st->st_mode & S_ISVTX)) {
                snprintf(err, len, "is in directory '%s' (mode %04o), writable by others, who could replace the file: "
                         "keep it in a directory chain only root can write", dir, (unsigned) (st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

/* Opens path's directory walking down from /, one name at a time without
 * following a symlink, each directory checked (dir_refusal) on its open fd.
 * Returns that fd (O_PATH) with *ret_base the file's name in path, or
 * -errno (-EPERM: why in err). */
static int open_parent(const char *path, const char **ret_base, char *err, size_t len) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int fd = -1;
        const char *base = strrchr(path, '/');
        char *end, *p, *slash, saved;
        struct stat st;
        int r, nfd;

        if (path[0] != '/' || !base || !base[1]) {
                snprintf(err, len, "is not an absolute path to a file");
                return -EINVAL;
        }
        if (!(dir = strndup(path, (size_t) (base - path) + 1)))   /* "/a/b/" */
                return -ENOMEM;
        if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return -errno;
        for (end = dir + 1;;) {                 /* fd is dir's first end - dir bytes */
                saved = *end;
                *end = '\0';
                r = fstat(fd, &st) < 0 ? -errno : dir_refusal(&st, dir, err, len);
                if (r < 0 && r != -EPERM)
                        snprintf(err, len, "cannot be read: '%s': %s", dir, strerror(-r));
                *end = saved;
                if (r < 0)
                        return r;
                p = end + strspn(end, "/");
                if (!*p)
                        break;
                slash = strchr(p, '/');
                *slash = '\0';
                nfd = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0) {
                        r = -errno;
                        if (r == -ENOTDIR || r == -ELOOP) {
                                snprintf(err, len, "is under '%s', a symlink or not a directory: "
                                         "name the file by its real path", dir);
                                r = -EPERM;
                        } else
                                snprintf(err, len, "cannot be read: '%s': %s", dir, strerror(-r));
                        return r;
                }
                *slash = '/';
                close(fd);
                fd = nfd;
                end = slash;
        }
        *ret_base = base + 1;
        return TAKE_FD(fd);
}

/* Opens the password file after every check: its directories (open_parent),
 * then the file itself, stat'ed before it is opened (a FIFO, a device, a
 * symlink is never opened), opened without blocking, without following a
 * symlink, never as a controlling tty, and checked again on the open fd.
 * Returns the fd or -errno (-EPERM: why in err). */
static int open_password(const char *path, char *err, size_t len) {
        _cleanup_close_ int dfd = -1, fd = -1;
        const char *base = NULL;
        struct stat st;
        int r;

        dfd = open_parent(path, &base, err, len);
        if (dfd < 0)
                return dfd;
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                snprintf(err, len, "cannot be read: %s", strerror(errno));
                return r;
        }
        if ((r = mode_refusal(&st, err, len)) < 0)
                return r;
        fd = openat(dfd, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(err, len, "cannot be read: %s", strerror(errno));
                return r;
        }
        if ((r = mode_refusal(&st, err, len)) < 0)
                return r;
        return TAKE_FD(fd);
}

int secret_file_check(const char *path, char *err, size_t len) {
        int fd = open_password(path, err, len);

        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int secret_file_read(const char *path, char *buf, size_t len, char *err, size_t errlen) {
        _cleanup_close_ int fd = -1;
        ssize_t n;
        int r;

        fd = open_password(path, err, errlen);
        if (fd < 0)
                return fd;
        n = read(fd, buf, len - 1);
        if (n < 0) {
                r = -errno;
                snprintf(err, errlen, "cannot be read: %s", strerror(errno));
        } else {
                buf[n] = '\0';
                buf[strcspn(buf, "\r\n")] = '\0';
                if ((size_t) n == len - 1 && strlen(buf) == (size_t) n) {
                        r = -E2BIG;
                        snprintf(err, errlen, "has a first line longer than %zu bytes", len - 1);
                } else
                        r = (int) strlen(buf);
        }
        if (r < 0)
                explicit_bzero(buf, len);
        return r;
}
