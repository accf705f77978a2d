/* SPDX-License-Identifier: MIT */
/* The filesystems below a path: where they are mounted and how full they
 * are, as the kernel says (statx, statvfs). Non-logging, no state. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct VolumeUsage {
        uint64_t total_bytes, free_bytes, avail_bytes;    /* avail: what unprivileged users may write */
        uint64_t total_inodes, free_inodes, avail_inodes;
} VolumeUsage;

/* 1 if path is where a filesystem is mounted (its device differs from its
 * parent's; a bind mount of the same filesystem is not), 0 if not or if it
 * does not exist, -errno on other errors. */
int volume_is_mount_point(const char *path);

/* Writes the mount point of the filesystem holding path (an existing
 * directory) into buf. Returns 0 or -errno. */
int volume_mount_of(const char *path, char *buf, size_t len);

/* Samples the filesystem holding fd (or path when fd < 0). Returns 0 or -errno. */
int volume_usage(int fd, const char *path, VolumeUsage *ret);
