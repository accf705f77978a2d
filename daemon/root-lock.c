/* SPDX-License-Identifier: MIT */
/* The per-root lock files of the state directory (root-lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "root-lock.h"
#include "util.h"

char *root_lock_name(const char *path, char *buf, size_t len) {
        uint64_t h = 0xcbf29ce484222325ULL;   /* FNV-1a: the same name in every build */

        for (const char *p = path; *p; p++)
                h = (h ^ (unsigned char) *p) * 0x100000001b3ULL;
        snprintf(buf, len, "root-%016llx.lock", (unsigned long long) hash_mix(h));
        return buf;
}

/* The pid the holder wrote at the start of the file, or 0. */
static pid_t read_holder(int fd) {
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        long pid;

        if (n <= 0)
                return 0;
        buf[n] = '\0';
        pid = strtol(buf, NULL, 10);
        return pid > 0 && pid <= INT32_MAX ? (pid_t) pid : 0;
}

int root_lock_take(int dirfd, const char *path, pid_t *ret_holder) {
        char name[ROOT_LOCK_NAME_MAX], *text = NULL;
        _cleanup_close_ int fd = -1;
        int n;

        *ret_holder = 0;
        fd = openat(dirfd, root_lock_name(path, name, sizeof(name)),
                    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return -errno;
                *ret_holder = read_holder(fd);
                return -EBUSY;
        }
        n = asprintf(&text, "%d %s\n", (int) getpid(), path);
        if (n < 0)
                return -ENOMEM;
        /* Only for messages: a failed write costs the next daemon the pid,
         * never the lock. */
        if (ftruncate(fd, 0) == 0)
                (void) !pwrite(fd, text, (size_t) n, 0);
        free(text);
        return TAKE_FD(fd);
}
