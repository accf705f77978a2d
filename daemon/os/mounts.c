/* SPDX-License-Identifier: MIT */
/* Mount points and free space. A mount point here is where the device
 * changes: what holds a volume's data, not any bind mount. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "os/mounts.h"

int volume_is_mount_point(const char *path) {
        struct statx stx, parent;
        char up[PATH_MAX];

        if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &stx) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        if (!S_ISDIR(stx.stx_mode))
                return 0;
        /* A different device than the parent's, not STATX_ATTR_MOUNT_ROOT:
         * systemd's sandboxing (ReadWritePaths=) bind-mounts writable paths
         * onto themselves, and those are no volumes. */
        if (snprintf(up, sizeof(up), "%s/..", path) >= (int) sizeof(up))
                return -ENAMETOOLONG;
        if (statx(AT_FDCWD, up, AT_NO_AUTOMOUNT, STATX_INO, &parent) < 0)
                return -errno;
        return stx.stx_dev_major != parent.stx_dev_major || stx.stx_dev_minor != parent.stx_dev_minor ||
               stx.stx_ino == parent.stx_ino;
}

int volume_mount_of(const char *path, char *buf, size_t len) {
        char p[PATH_MAX];
        int r;

        if (strlen(path) >= sizeof(p) || path[0] != '/')
                return -EINVAL;
        strcpy(p, path);
        for (;;) {
                char *slash;

                r = volume_is_mount_point(p[0] ? p : "/");
                if (r < 0)
                        return r;
                if (r > 0 || !p[0])
                        break;
                slash = strrchr(p, '/');
                *slash = '\0';
        }
        if (snprintf(buf, len, "%s", p[0] ? p : "/") >= (int) len)
                return -ENAMETOOLONG;
        return 0;
}

int volume_usage(int fd, const char *path, VolumeUsage *ret) {
        struct statvfs sv;

        if ((fd >= 0 ? fstatvfs(fd, &sv) : statvfs(path, &sv)) < 0)
                return -errno;
        *ret = (VolumeUsage) {
                .total_bytes = (uint64_t) sv.f_blocks * sv.f_frsize,
                .free_bytes = (uint64_t) sv.f_bfree * sv.f_frsize,
                .avail_bytes = (uint64_t) sv.f_bavail * sv.f_frsize,
                .total_inodes = sv.f_files,
                .free_inodes = sv.f_ffree,
                .avail_inodes = sv.f_favail,
        };
        return 0;
}
