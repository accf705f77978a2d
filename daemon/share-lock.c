/* SPDX-License-Identifier: MIT */
/* The share lock (share-lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "share-lock.h"

#define LINE_MAX_BYTES 512

static void host_name(char buf[SHARE_LOCK_HOST_MAX]) {
        if (gethostname(buf, SHARE_LOCK_HOST_MAX) < 0)
                snprintf(buf, SHARE_LOCK_HOST_MAX, "localhost");
        buf[SHARE_LOCK_HOST_MAX - 1] = '\0';
        /* The line is split at spaces: a host name never has any. */
        for (char *p = buf; *p; p++)
                if (*p <= ' ' || *p > '~')
                        *p = '_';
}

int share_lock_parse(const char *line, ShareHolder *ret) {
        char host[SHARE_LOCK_HOST_MAX];
        long long pid, beat;
        int n = 0;

        *ret = (ShareHolder) { 0 };
        if (sscanf(line, "cachekeeperd %255s %lld %lld%n", host, &pid, &beat, &n) != 3 || n == 0 ||
            (line[n] != '\n' && line[n] != '\0') || pid <= 0 || pid > INT32_MAX || beat < 0)
                return -EINVAL;
        snprintf(ret->host, sizeof(ret->host), "%s", host);
        ret->pid = (pid_t) pid;
        ret->beat = beat;
        return 0;
}

static void read_holder(int fd, ShareHolder *ret) {
        char line[LINE_MAX_BYTES];
        ssize_t n = pread(fd, line, sizeof(line) - 1, 0);

        line[n > 0 ? n : 0] = '\0';
        (void) share_lock_parse(line, ret);
}

static int write_line(int fd, usec_t now) {
        char host[SHARE_LOCK_HOST_MAX], line[LINE_MAX_BYTES];
        int n;

        host_name(host);
        n = snprintf(line, sizeof(line), "cachekeeperd %s %d %" PRId64 "\n", host, (int) getpid(),
                     (int64_t) (now / USEC_PER_SEC));
        if (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t) n, 0) != n)
                return -errno ?: -EIO;
        return 0;
}

/* Another keeper's line, fresh at now: one on another host (on this host,
 * the flock alone decides: a dead keeper's line is only history). */
static bool fresh_elsewhere(const ShareHolder *h, usec_t now) {
        char host[SHARE_LOCK_HOST_MAX];

        host_name(host);
        return h->host[0] && strcmp(h->host, host) != 0 &&
               (usec_t) h->beat * USEC_PER_SEC + SHARE_LOCK_STALE_USEC > now;
}

/* Opens the lock file: ours, or a new one in place of whatever was planted. */
static int open_lock(int root_fd, bool *ret_planted) {
        struct stat st;
        int fd;

        *ret_planted = false;
        for (int tries = 0; tries < 2; tries++) {
                fd = openat(root_fd, SHARE_LOCK_NAME,
                            O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (tries ? O_EXCL : 0),
                            0644);
                if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
                    (st.st_uid == geteuid() || tries > 0))
                        return fd;
                if (fd < 0 && errno != ELOOP && errno != EACCES && errno != EEXIST && errno != ENXIO &&
                    errno != EISDIR && errno != EWOULDBLOCK)
                        return -errno;
                if (fd >= 0)
                        close(fd);
                if (tries > 0)
                        return -EEXIST;   /* planted again in between: next time */
                /* A symlink, a FIFO, a directory, a hard link to some other
                 * file, another user's file (fs.protected_regular refuses
                 * root's O_CREAT on it): planted. unlinkat follows nothing. */
                if (unlinkat(root_fd, SHARE_LOCK_NAME, 0) < 0 &&
                    (errno != EISDIR || unlinkat(root_fd, SHARE_LOCK_NAME, AT_REMOVEDIR) < 0) && errno != ENOENT)
                        return -errno;
                *ret_planted = true;
        }
        return -EEXIST;
}

int share_lock_take(int root_fd, usec_t now, ShareHolder *ret_holder, bool *ret_planted) {
        ShareHolder h;
        int fd, r;

        *ret_holder = (ShareHolder) { 0 };
        fd = open_lock(root_fd, ret_planted);
        if (fd < 0)
                return fd;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = errno == EWOULDBLOCK ? -EBUSY : -errno;
                read_holder(fd, ret_holder);
                ret_holder->flock = true;
                close(fd);
                return r;
        }
        read_holder(fd, &h);
        if (fresh_elsewhere(&h, now)) {
                *ret_holder = h;
                close(fd);
                return -EBUSY;
        }
        r = write_line(fd, now);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int share_lock_beat(int root_fd, int fd, usec_t now, ShareHolder *ret_holder) {
        char host[SHARE_LOCK_HOST_MAX];
        struct stat ours, named;
        ShareHolder h;

        *ret_holder = (ShareHolder) { 0 };
        /* Removed or replaced (a share without the sticky bit lets any
         * writer do that): the flock we hold guards nothing any more. */
        if (fstat(fd, &ours) < 0 || fstatat(root_fd, SHARE_LOCK_NAME, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
            ours.st_dev != named.st_dev || ours.st_ino != named.st_ino)
                return -ESTALE;
        read_holder(fd, &h);
        host_name(host);
        if (h.host[0] && (strcmp(h.host, host) != 0 || h.pid != getpid()) && fresh_elsewhere(&h, now)) {
                *ret_holder = h;
                return -EBUSY;
        }
        return write_line(fd, now);
}
