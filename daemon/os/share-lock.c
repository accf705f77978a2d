/* SPDX-License-Identifier: MIT */
/* The share lock (share-lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/beneath.h"
#include "os/root-lock.h"
#include "os/share-lock.h"

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

/* Is the directory open as fd our quarantine: ours, 0700, on dev? */
static bool quarantine_ours(int fd, dev_t dev) {
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
               (st.st_mode & 07777) == 0700 && st.st_dev == dev;
}

/* A new empty directory of ours in root_fd under a random name
 * (SHARE_QUARANTINE_NAME.XXXXXX, in name). Returns its fd or -errno. */
static int fresh_quarantine(int root_fd, dev_t dev, char name[NAME_MAX + 1]) {
        for (int attempt = 0; attempt < 16; attempt++) {
                char suffix[7];
                struct stat st;
                int fd, r = random_suffix(suffix);

                if (r < 0)
                        return r;
                snprintf(name, NAME_MAX + 1, "%s.%s", SHARE_QUARANTINE_NAME, suffix);
                if (mkdirat(root_fd, name, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return -errno;
                }
                fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                /* Made by us: only a umask may have taken bits off. */
                if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() && st.st_dev == dev &&
                    fchmod(fd, 0700) == 0 && quarantine_ours(fd, dev))
                        return fd;
                if (fd >= 0)
                        close(fd);
                return -EEXIST;   /* swapped under us (a root without the sticky bit): next time */
        }
        return -EEXIST;
}

/* The quarantine's fd: ours as it stands, made, or swapped in for whatever
 * squats its name (which goes into the new one's first slot). */
static int open_quarantine(int root_fd) {
        char name[NAME_MAX + 1];
        struct stat root, ours, named;
        int fd, r;

        if (fstat(root_fd, &root) < 0)
                return -errno;
        fd = beneath_open_dir(root_fd, SHARE_QUARANTINE_NAME);
        if (fd >= 0 && quarantine_ours(fd, root.st_dev))
                return fd;
        if (fd >= 0)
                close(fd);
        else if (fd != -ENOENT && fd != -ELOOP && fd != -ENOTDIR && fd != -EXDEV)
                return fd;
        fd = fresh_quarantine(root_fd, root.st_dev, name);
        if (fd < 0)
                return fd;
        if (renameat2(root_fd, name, root_fd, SHARE_QUARANTINE_NAME, RENAME_NOREPLACE) == 0)
                return fd;   /* nothing stood there */
        r = -errno;
        if (r == -EEXIST) {
                /* A squatter: ours takes its place in one step, and it goes
                 * into ours, under a name that is free in an empty one. */
                if (renameat2(root_fd, name, root_fd, SHARE_QUARANTINE_NAME, RENAME_EXCHANGE) == 0) {
                        if (renameat2(root_fd, name, fd, "0", RENAME_NOREPLACE) == 0)
                                return fd;
                        close(fd);   /* the squatter stays under the random name: left alone */
                        return -errno;
                }
                r = -errno;
        }
        /* Ours, empty, never renamed: gone again (if it is still ours). */
        if (fstat(fd, &ours) == 0 && fstatat(root_fd, name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
            ours.st_ino == named.st_ino && ours.st_dev == named.st_dev)
                (void) unlinkat(root_fd, name, AT_REMOVEDIR);
        close(fd);
        return r == -ENOENT ? -EAGAIN : r;   /* the squatter went meanwhile: next time */
}

int share_quarantine(int root_fd, const char *name, char *aside, size_t len) {
        int q = open_quarantine(root_fd), r = -EMLINK;

        if (q < 0)
                return q;
        for (int slot = 0; slot < SHARE_QUARANTINE_SLOTS; slot++) {
                char s[16];

                snprintf(s, sizeof(s), "%d", slot);
                if (renameat2(root_fd, name, q, s, RENAME_NOREPLACE) == 0) {
                        snprintf(aside, len, "%s/%s", SHARE_QUARANTINE_NAME, s);
                        r = slot;
                        break;
                }
                if (errno != EEXIST) {
                        r = -errno;
                        break;
                }
        }
        close(q);
        return r;
}

/* Clears the lock's name of what was planted there (*ret: what, where to). */
static int clear_planted(int root_fd, SharePlanted *ret) {
        struct stat st;
        int r;

        if (fstatat(root_fd, SHARE_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        *ret = (SharePlanted) { .found = true, .mode = st.st_mode, .owner = st.st_uid };
        /* What holds something goes aside; a directory cannot go otherwise. */
        if (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink == 1)) {
                r = share_quarantine(root_fd, SHARE_LOCK_NAME, ret->aside, sizeof(ret->aside));
                if (r >= 0 || r == -ENOENT)
                        return 0;
                if (r != -EMLINK || S_ISDIR(st.st_mode))
                        return r;
        }
        /* A symlink, a FIFO, one more name of a file (or another user's
         * file the full quarantine cannot take): only the name goes.
         * unlinkat follows nothing. */
        if (unlinkat(root_fd, SHARE_LOCK_NAME, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR)
                return -errno;
        /* A directory swapped in since we looked. */
        ret->mode = S_IFDIR;
        r = share_quarantine(root_fd, SHARE_LOCK_NAME, ret->aside, sizeof(ret->aside));
        return r == -ENOENT ? 0 : r < 0 ? r : 0;
}

static int fix_mode(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
                return -errno;
        return 0;
}

/* Our lock file fd's flock is held, and on this host by other users'
 * processes only (a keeper is root's; a keeper on another host is not
 * listed here, and is never taken for one): the name goes, if it is still
 * fd's, so that a new file takes its place. Returns whether it went. */
static bool held_by_user(int root_fd, int fd) {
        struct stat st, named;

        if (fstat(fd, &st) < 0 || flock_holders(&st) != 0)
                return false;
        if (fstatat(root_fd, SHARE_LOCK_NAME, &named, AT_SYMLINK_NOFOLLOW) < 0 || named.st_ino != st.st_ino ||
            named.st_dev != st.st_dev)
                return false;
        return unlinkat(root_fd, SHARE_LOCK_NAME, 0) == 0;
}

/* Opens the lock file: ours, or a new one in place of whatever was planted. */
static int open_lock(int root_fd, SharePlanted *ret_planted) {
        struct stat st;
        int fd, r;

        *ret_planted = (SharePlanted) { 0 };
        for (int tries = 0; tries < 2; tries++) {
                fd = openat(root_fd, SHARE_LOCK_NAME,
                            O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (tries ? O_EXCL : 0),
                            0600);
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
                 * root's O_CREAT on it): planted. */
                r = clear_planted(root_fd, ret_planted);
                if (r < 0)
                        return r;
        }
        return -EEXIST;
}

int share_lock_take(int root_fd, usec_t now, ShareHolder *ret_holder, SharePlanted *ret_planted) {
        ShareHolder h;
        int fd, r;

        *ret_holder = (ShareHolder) { 0 };
        fd = open_lock(root_fd, ret_planted);
        if (fd < 0)
                return fd;
        /* 0600: a user who could open it could hold its flock and keep
         * every keeper off the share. One an older version left 0644 is
         * made so; one such a user holds already is ours to replace. */
        r = fix_mode(fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK && held_by_user(root_fd, fd)) {
                close(fd);
                fd = open_lock(root_fd, ret_planted);
                if (fd < 0)
                        return fd;
        }
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
