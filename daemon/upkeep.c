/* SPDX-License-Identifier: MIT */
/* Mode and ccache.conf upkeep of one cache root. Non-logging: repairs are
 * reported through the caller's callback. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "ccache.h"
#include "upkeep.h"
#include "util.h"

#define CONF_MAX 65536

int upkeep_root(int root_fd, mode_t mode, upkeep_report_t report, void *userdata) {
        struct stat st;

        if (fstat(root_fd, &st) < 0)
                return -errno;
        if ((st.st_mode & 07777) == mode)
                return 0;
        if (fchmod(root_fd, mode) < 0)
                return -errno;
        if (report)
                report("", st.st_mode & 07777, mode, userdata);
        return 1;
}

int upkeep_dir(int root_fd, const char *rel, upkeep_report_t report, void *userdata) {
        bool created = false;
        int fd, r;

        fd = beneath_open_dir(root_fd, rel);
        if (fd == -ENOENT) {
                /* Create it relative to its parent, itself opened beneath the
                 * root: mkdirat on "b/4" from the root would follow a "b"
                 * swapped for a symlink since the open above. */
                const char *slash = strrchr(rel, '/');
                char parent[8];
                int pfd = root_fd;

                if (slash) {
                        if ((size_t) (slash - rel) >= sizeof(parent))
                                return -ENAMETOOLONG;
                        memcpy(parent, rel, (size_t) (slash - rel));
                        parent[slash - rel] = '\0';
                        pfd = beneath_open_dir(root_fd, parent);
                        if (pfd < 0)
                                return pfd;
                }
                r = mkdirat(pfd, slash ? slash + 1 : rel, UPKEEP_DIR_MODE) < 0 && errno != EEXIST ? -errno : 0;
                if (pfd != root_fd)
                        close(pfd);
                if (r < 0)
                        return r;
                created = true;
                fd = beneath_open_dir(root_fd, rel);
        }
        if (fd < 0)
                return fd;
        r = upkeep_dir_fd(fd, rel, created ? NULL : report, userdata);
        close(fd);
        return r < 0 ? r : (created || r > 0);
}

int upkeep_dir_fd(int fd, const char *rel, upkeep_report_t report, void *userdata) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || (st.st_mode & 07777) == UPKEEP_DIR_MODE)
                return 0;
        if (fchmod(fd, UPKEEP_DIR_MODE) < 0)
                return -errno;
        if (report)
                report(rel, st.st_mode & 07777, UPKEEP_DIR_MODE, userdata);
        return 1;
}

int upkeep_all_dirs(int root_fd, upkeep_report_t report, void *userdata) {
        char rel[4];
        int n = 0, r;

        if ((r = upkeep_dir(root_fd, "tmp", report, userdata)) < 0 ||
            (n += r, r = upkeep_dir(root_fd, "lock", report, userdata)) < 0)
                return r;
        n += r;
        for (int a = 0; a < 16; a++) {
                snprintf(rel, sizeof(rel), "%x", a);
                if ((r = upkeep_dir(root_fd, rel, report, userdata)) < 0)
                        return r;
                n += r;
                for (int b = 0; b < 16; b++) {
                        snprintf(rel, sizeof(rel), "%x/%x", a, b);
                        if ((r = upkeep_dir(root_fd, rel, report, userdata)) < 0)
                                return r;
                        n += r;
                }
        }
        return n;
}

bool upkeep_is_kept_dir(const char *rel) {
        if (strcmp(rel, "tmp") == 0 || strcmp(rel, "lock") == 0)
                return true;
        return hex_digit(rel[0]) >= 0 &&
               (rel[1] == '\0' || (rel[1] == '/' && hex_digit(rel[2]) >= 0 && rel[3] == '\0'));
}

/* Reads root_fd/ccache.conf (a regular file, not followed) into a new string. */
static int read_conf(int root_fd, char **ret) {
        struct stat st;
        char *buf;
        ssize_t n;
        int fd;

        fd = openat(root_fd, "ccache.conf", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                return 0;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= CONF_MAX) {
                close(fd);
                return -EINVAL;
        }
        buf = calloc(1, (size_t) st.st_size + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        n = read(fd, buf, (size_t) st.st_size);
        close(fd);
        if (n < 0) {
                free(buf);
                return -EIO;
        }
        buf[n] = '\0';
        *ret = buf;
        return 0;
}

int upkeep_ccache_conf(int root_fd, const char *max_size, char *ret_old_max, size_t old_max_len) {
        _cleanup_free_ char *old = NULL, *new = NULL;
        char tmp[64];
        size_t len;
        int fd, r;

        r = read_conf(root_fd, &old);
        if (r < 0)
                return r;
        new = ccache_conf_update(old, max_size, ret_old_max, old_max_len);
        if (!new)
                return -ENOMEM;
        if (old && strcmp(old, new) == 0)
                return 0;
        /* Owned by us, 0644: in the sticky root no other user can replace it. */
        fd = ccache_tmpfile(root_fd, "ccache.conf", 0644, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        len = strlen(new);
        if (write(fd, new, len) != (ssize_t) len || fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                r = -errno ?: -EIO;
                close(fd);
                (void) unlinkat(root_fd, tmp, 0);
                return r;
        }
        close(fd);
        if (renameat(root_fd, tmp, root_fd, "ccache.conf") < 0) {
                r = -errno;
                (void) unlinkat(root_fd, tmp, 0);
                return r;
        }
        return 1;
}
