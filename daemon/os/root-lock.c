/* SPDX-License-Identifier: MIT */
/* The per-root lock files of the state directory (root-lock.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "os/root-lock.h"

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

int flock_holders(const struct stat *st) {
        FILE *f = fopen("/proc/locks", "re");
        char line[256];
        int r = -ESRCH;

        if (!f)
                return -errno;
        while (r != 1 && fgets(line, sizeof(line), f)) {
                unsigned maj, min;
                unsigned long long ino;
                char kind[16], path[32];
                struct stat ps;
                int pid;

                /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
                if (sscanf(line, "%*s %15s %*s %*s %d %x:%x:%llu", kind, &pid, &maj, &min, &ino) != 5 ||
                    strcmp(kind, "FLOCK") != 0 || ino != (unsigned long long) st->st_ino ||
                    makedev(maj, min) != st->st_dev)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d", pid);
                /* Gone since: no longer a holder. A daemon is always root's. */
                if (stat(path, &ps) == 0)
                        r = ps.st_uid == 0 ? 1 : 0;
        }
        fclose(f);
        return r;
}

/* The lock file fd (named name in dirfd) is held, but by no process of
 * root's: another user opened it (the file was 0644 before this version)
 * and holds it to keep every daemon off this root. Replaces the file with a
 * new one only root can open, unless the name has changed meanwhile.
 * Returns the new file's fd, -EBUSY if it is held after all, or -errno. */
static int replace_hostile(int dirfd, const char *name, int fd) {
        struct stat st, now;
        int r, nfd;

        if (fstat(fd, &st) < 0)
                return -errno;
        r = flock_holders(&st);
        if (r != 0)
                return r == -ESRCH || r == 1 ? -EBUSY : r;
        if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev)
                return -EBUSY;
        if (unlinkat(dirfd, name, 0) < 0)
                return -errno;
        nfd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (nfd < 0)
                return errno == EEXIST ? -EBUSY : -errno;   /* another daemon was quicker */
        if (flock(nfd, LOCK_EX | LOCK_NB) < 0) {
                r = errno == EWOULDBLOCK ? -EBUSY : -errno;
                close(nfd);
                return r;
        }
        log_warning("The lock %s in the state directory was held by another user's process, not a "
                    "cachekeeperd: replaced with one only root can open.", name);
        return nfd;
}

/* Is fd still the file named name in dirfd? A lock taken on a file that was
 * removed (or replaced) since it was opened keeps nobody else away. */
static bool still_named(int dirfd, const char *name, int fd) {
        struct stat st, now;

        return fstat(fd, &st) == 0 && fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
               now.st_ino == st.st_ino && now.st_dev == st.st_dev;
}

/* One try of root_lock_take; -EAGAIN: the name changed under us, try again. */
static int take_once(int dirfd, const char *name, pid_t *ret_holder) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        /* 0600: no other user may open it, so none may hold it (flock needs
         * only an open file). One an older version left 0644 is made so. */
        fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int nfd;

                if (errno != EWOULDBLOCK)
                        return -errno;
                *ret_holder = read_holder(fd);
                nfd = replace_hostile(dirfd, name, fd);
                if (nfd < 0)
                        return -EBUSY;   /* held, by a daemon or by what we cannot replace */
                close(fd);
                fd = nfd;
                *ret_holder = 0;
        }
        /* A sweep (root_lock_sweep) removes a file only while holding it: if
         * it did between our open and our flock, ours is a lock on nothing. */
        if (!still_named(dirfd, name, fd))
                return -EAGAIN;
        return TAKE_FD(fd);
}

int root_lock_take(int dirfd, const char *path, pid_t *ret_holder) {
        char name[ROOT_LOCK_NAME_MAX], *text = NULL;
        _cleanup_close_ int fd = -EAGAIN;
        int n;

        *ret_holder = 0;
        root_lock_name(path, name, sizeof(name));
        /* Each retry follows a removal by another daemon's sweep, which
         * needs that daemon to find the file unheld: a handful is plenty. */
        for (int i = 0; i < 8 && fd == -EAGAIN; i++)
                fd = take_once(dirfd, name, ret_holder);
        if (fd < 0)
                return fd == -EAGAIN ? -EBUSY : fd;
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

/* "root-" + 16 lower-case hex digits + ".lock", as root_lock_name writes. */
static bool is_lock_name(const char *name) {
        if (strncmp(name, "root-", 5) != 0 || strlen(name) != 5 + 16 + 5 || strcmp(name + 21, ".lock") != 0)
                return false;
        for (size_t i = 5; i < 21; i++)
                if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
                        return false;
        return true;
}

/* Removes name if it is a lock file of root's that nobody holds. 1 removed, 0 left. */
static int sweep_one(int dirfd, const char *name) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
                return 0;
        /* Held: another daemon (same state directory, other socket) keeps
         * that root, or another user holds it (its daemon replaces it). */
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return 0;
        if (!still_named(dirfd, name, fd) || unlinkat(dirfd, name, 0) < 0)
                return 0;
        return 1;
}

int root_lock_sweep(int dirfd, char (*keep)[ROOT_LOCK_NAME_MAX], size_t n_keep) {
        DIR *d;
        struct dirent *de;
        int fd, removed = 0;

        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                bool kept = false;

                if (!is_lock_name(de->d_name))
                        continue;
                for (size_t i = 0; i < n_keep && !kept; i++)
                        kept = strcmp(keep[i], de->d_name) == 0;
                if (!kept)
                        removed += sweep_one(dirfd, de->d_name);
        }
        closedir(d);
        return removed;
}
