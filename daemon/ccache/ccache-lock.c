/* SPDX-License-Identifier: MIT */
/* ccache's lock protocol and temporary files. Nothing here waits: a lock
 * someone holds is reported held, and the caller tries again later. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "ccache/ccache-lock.h"

/* The first lock this process looked at: a lock naming our pid from before
 * then was taken by a previous process with the same pid. */
static uint64_t lock_first_use_usec;

static uint64_t lock_first_use(void) {
        if (lock_first_use_usec == 0)
                lock_first_use_usec = now_usec(CLOCK_REALTIME);
        return lock_first_use_usec;
}

static uint64_t hash_text(const char *s) {
        uint64_t h = 1469598103934665603ULL;   /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
}

/* This host's name as ccache writes it into a lock (HOST_NAME_MAX is 64). */
static void host_name(char buf[65]) {
        if (gethostname(buf, 65) < 0)
                snprintf(buf, 65, "localhost");
        buf[64] = '\0';
}

static void lock_names(const char *name, char *lock, char *alive, size_t len) {
        snprintf(lock, len, "%s.lock", name);
        snprintf(alive, len, "%s.alive", name);
}

/* The holder's text and its .alive's mtime (0 without one: never followed,
 * so a symlink planted as .alive shows its own mtime). -ENOENT if the lock
 * is gone. */
static int lock_inspect(int dirfd, const char *lock, const char *alive, char *content, size_t len,
                        int64_t *ret_alive_nsec) {
        struct stat st;
        ssize_t n;

        /* Not a symlink (EINVAL): something planted under the lock's name
         * holds it as an empty text would; it goes stale like any lock. */
        n = readlinkat(dirfd, lock, content, len - 1);
        if (n < 0 && errno != EINVAL)
                return -errno;
        content[n < 0 ? 0 : n] = '\0';
        *ret_alive_nsec = fstatat(dirfd, alive, &st, AT_SYMLINK_NOFOLLOW) == 0
                                  ? (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
        return 0;
}

/* Records what was seen of a held lock at now; true when it is stale: its
 * text and .alive mtime unchanged for CCACHE_LOCK_STALE_USEC. On first sight
 * the last activity is the .alive's mtime, as in ccache (never later than
 * now: a future mtime must not keep a lock alive for ever); a change of
 * holder or a touched .alive is activity now. */
static bool lock_seen_stale(CcacheLockSeen *seen, const char *content, int64_t alive_nsec, uint64_t now) {
        uint64_t h = hash_text(content);

        if (!seen->valid) {
                uint64_t alive = alive_nsec > 0 ? (uint64_t) alive_nsec / 1000 : now;
                *seen = (CcacheLockSeen) { .content_hash = h, .alive_nsec = alive_nsec,
                                           .since_usec = alive < now ? alive : now, .valid = true };
        } else if (seen->content_hash != h || seen->alive_nsec != alive_nsec) {
                seen->content_hash = h;
                seen->alive_nsec = alive_nsec;
                seen->since_usec = now;
        }
        return now >= seen->since_usec && now - seen->since_usec >= CCACHE_LOCK_STALE_USEC;
}

bool ccache_lock_is_ours_dead(const char *content) {
        char host[65];
        const char *p[3] = { NULL };     /* the last three '-' */
        long long pid, tid, sec;
        char *end;

        for (const char *c = content; *c; c++)
                if (*c == '-') {
                        p[0] = p[1];
                        p[1] = p[2];
                        p[2] = c;
                }
        if (!p[0])
                return false;
        pid = strtoll(p[0] + 1, &end, 10);
        if (end != p[1] || pid <= 0 || pid > INT32_MAX)
                return false;
        tid = strtoll(p[1] + 1, &end, 10);
        if (end != p[2] || tid != pid)
                return false;
        sec = strtoll(p[2] + 1, &end, 10);
        host_name(host);
        if ((size_t) (p[0] - content) != strlen(host) || strncmp(content, host, strlen(host)) != 0)
                return false;
        if (pid == getpid())
                return (uint64_t) sec < lock_first_use() / 1000000;
        return kill((pid_t) pid, 0) < 0 && errno == ESRCH;
}

/* Breaks the lock whose text we judged stale, as ccache does: .alive, then
 * .lock; unless its text changed meanwhile (a new holder). */
static void lock_break(int dirfd, const char *lock, const char *alive, const char *content) {
        char now_content[128];
        int64_t alive_nsec;

        if (lock_inspect(dirfd, lock, alive, now_content, sizeof(now_content), &alive_nsec) < 0 ||
            strcmp(now_content, content) != 0)
                return;
        (void) unlinkat(dirfd, alive, 0);
        (void) unlinkat(dirfd, lock, 0);
}

int ccache_lock_break_ours_dead(int dirfd, const char *name) {
        char lock[80], alive[80], content[128];
        int64_t alive_nsec;
        int r;

        lock_names(name, lock, alive, sizeof(lock));
        r = lock_inspect(dirfd, lock, alive, content, sizeof(content), &alive_nsec);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (!ccache_lock_is_ours_dead(content))
                return 0;
        lock_break(dirfd, lock, alive, content);
        return 1;
}

int ccache_lock_try(CcacheLock *l, int dirfd, const char *name, CcacheLockSeen *seen, uint64_t now) {
        char host[65], lock[80], alive[80], content[128];
        CcacheLockSeen first_look = { 0 };
        struct timespec ts;
        int64_t alive_nsec;
        int fd, r;

        *l = (CcacheLock) { .dirfd = dirfd };
        (void) lock_first_use();
        host_name(host);
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(l->name, sizeof(l->name), "%s", name);
        /* The pid twice where ccache writes a pthread id: see ccache_lock_is_ours_dead. */
        snprintf(l->content, sizeof(l->content), "%s-%d-%d-%lld.%09ld", host, (int) getpid(), (int) getpid(),
                 (long long) ts.tv_sec, ts.tv_nsec);
        lock_names(name, lock, alive, sizeof(lock));
        for (int attempt = 0;; attempt++) {
                if (symlinkat(l->content, dirfd, lock) == 0)
                        break;
                if (errno != EEXIST)
                        return -errno;
                if (attempt == 2)
                        return 0;     /* others keep taking it: theirs */
                r = lock_inspect(dirfd, lock, alive, content, sizeof(content), &alive_nsec);
                if (r == -ENOENT)
                        continue;     /* released just now */
                if (r < 0)
                        return r;
                if (!ccache_lock_is_ours_dead(content) &&
                    !lock_seen_stale(seen ? seen : &first_look, content, alive_nsec, now))
                        return 0;
                lock_break(dirfd, lock, alive, content);
                l->broke = true;
                snprintf(l->broken, sizeof(l->broken), "%s", content);
                if (seen)
                        *seen = (CcacheLockSeen) { 0 };
        }
        l->held = true;
        l->refreshed_usec = now_usec(CLOCK_MONOTONIC);
        fd = openat(dirfd, alive, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
        if (fd >= 0) {
                (void) futimens(fd, NULL);
                close(fd);
        }
        return 1;
}

void ccache_lock_refresh(CcacheLock *l, uint64_t now) {
        char lock[80], alive[80];

        if (!l->held || now - l->refreshed_usec < CCACHE_LOCK_REFRESH_USEC)
                return;
        lock_names(l->name, lock, alive, sizeof(lock));
        (void) utimensat(l->dirfd, alive, NULL, AT_SYMLINK_NOFOLLOW);
        l->refreshed_usec = now;
}

void ccache_lock_release(CcacheLock *l) {
        char lock[80], alive[80], target[sizeof(l->content)];
        ssize_t n;

        if (!l->held)
                return;
        lock_names(l->name, lock, alive, sizeof(lock));
        n = readlinkat(l->dirfd, lock, target, sizeof(target) - 1);
        /* A waiter may have judged us stale and broken the lock: never
         * remove a lock that is not ours. */
        if (n >= 0 && (target[n] = '\0', strcmp(target, l->content) == 0)) {
                (void) unlinkat(l->dirfd, alive, 0);
                (void) unlinkat(l->dirfd, lock, 0);
        }
        l->held = false;
}

int ccache_tmpfile(int dirfd, const char *base, mode_t mode, char *name, size_t len) {
        for (int attempt = 0; attempt < 100; attempt++) {
                char suffix[7];
                int fd, r = random_suffix(suffix);

                if (r < 0)
                        return r;
                snprintf(name, len, "%s.tmp.%s.tmp", base, suffix);
                /* O_EXCL: never write into a file someone placed there. */
                fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd >= 0 || errno != EEXIST)
                        return fd >= 0 ? fd : -errno;
        }
        return -EEXIST;
}
