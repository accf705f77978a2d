/* SPDX-License-Identifier: MIT */
/* Remote storage URLs as ccache writes them, and the secret's file: taken
 * apart and checked, never printed. Non-logging; reads only a
 * password_file. */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/remote.h"

#define REDIS_DEFAULT_PORT 6379

const char *remote_kind_name(RemoteKind k) {
        return k == REMOTE_FILE ? "file" : "redis";
}

const char *remote_layout_name(CacheLayout l) {
        return l == CACHE_LAYOUT_REMOTE_FLAT ? "flat" : "subdirs";
}

void remote_url_done(RemoteUrl *u) {
        free(u->host);
        free(u->user);
        free(u->path);
        *u = (RemoteUrl) { 0 };
}

/* A whole decimal number in [0, max] of exactly n characters at s. */
static int parse_number(const char *s, size_t n, unsigned long max, unsigned long *ret) {
        unsigned long v = 0;

        if (n == 0 || n > 10 || strspn(s, "0123456789") < n)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                v = v * 10 + (unsigned long) (s[i] - '0');
        if (v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* An absolute path after a scheme: "/p" or "///p" (an empty authority). */
static int parse_path(const char *s, size_t n, char **ret) {
        if (n >= 3 && strncmp(s, "///", 3) == 0) {
                s += 2;
                n -= 2;
        }
        if (n < 2 || s[0] != '/' || memchr(s, '\0', n))
                return -EINVAL;
        *ret = strndup(s, n);
        return *ret ? 0 : -ENOMEM;
}

static bool numeric_host(const char *h) {
        unsigned char buf[sizeof(struct in6_addr)];

        return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

/* [user@]host[:port][/db] of a redis:// URL, n characters at s. */
static int parse_redis(const char *s, size_t n, RemoteUrl *u, char *err, size_t len) {
        const char *end = s + n, *at = memchr(s, '@', n), *h, *hend, *colon, *slash;
        unsigned long v;

        if (at) {
                if (memchr(s, ':', (size_t) (at - s))) {
                        snprintf(err, len, "a password in the URL is refused: put it in password_file");
                        return -EINVAL;
                }
                if (at == s)
                        goto bad;
                if (!(u->user = strndup(s, (size_t) (at - s))))
                        return -ENOMEM;
                s = at + 1;
        }
        slash = memchr(s, '/', (size_t) (end - s));
        hend = slash ? slash : end;
        if (s < hend && *s == '[') {             /* [::1]:6379 */
                h = s + 1;
                colon = memchr(h, ']', (size_t) (hend - h));
                if (!colon)
                        goto bad;
                u->host = strndup(h, (size_t) (colon - h));
                colon = colon + 1 < hend && colon[1] == ':' ? colon + 1 : NULL;
        } else {
                colon = memchr(s, ':', (size_t) (hend - s));
                u->host = strndup(s, (size_t) ((colon ? colon : hend) - s));
        }
        if (!u->host)
                return -ENOMEM;
        if (!u->host[0])
                goto bad;
        if (strcmp(u->host, "localhost") == 0) {
                free(u->host);
                if (!(u->host = strdup("127.0.0.1")))
                        return -ENOMEM;
        }
        if (!numeric_host(u->host)) {
                snprintf(err, len, "the host must be an IP address (or localhost): hiredis would resolve a name "
                         "with a blocking lookup on the daemon's loop at every poll");
                return -EINVAL;
        }
        u->port = REDIS_DEFAULT_PORT;
        if (colon) {
                if (parse_number(colon + 1, (size_t) (hend - colon - 1), 65535, &v) < 0 || v == 0) {
                        snprintf(err, len, "the port must be a number from 1 to 65535");
                        return -EINVAL;
                }
                u->port = (uint16_t) v;
        }
        if (slash && slash + 1 < end) {
                if (parse_number(slash + 1, (size_t) (end - slash - 1), 1000000, &v) < 0) {
                        snprintf(err, len, "the database after '/' must be a number");
                        return -EINVAL;
                }
                u->db = (uint32_t) v;
        }
        return 0;
bad:
        snprintf(err, len, "expected redis://[USER@]HOST[:PORT][/DB]");
        return -EINVAL;
}

int remote_url_parse(const char *url, RemoteUrl *ret, char *err, size_t len) {
        RemoteUrl u = { 0 };
        size_t n = strcspn(url, "|");   /* ccache's "|attribute=value" suffixes */
        int r;

        if (strncmp(url, "redis://", 8) == 0) {
                u.kind = REMOTE_REDIS;
                r = parse_redis(url + 8, n - 8, &u, err, len);
        } else if (strncmp(url, "redis+unix:", 11) == 0) {
                u.kind = REMOTE_REDIS;
                r = parse_path(url + 11, n - 11, &u.path);
                if (r == -EINVAL)
                        snprintf(err, len, "expected redis+unix:/PATH/TO/SOCKET (an absolute path)");
        } else if (strncmp(url, "file:", 5) == 0) {
                u.kind = REMOTE_FILE;
                r = parse_path(url + 5, n - 5, &u.path);
                if (r == -EINVAL)
                        snprintf(err, len, "expected file:/PATH (an absolute path)");
        } else {
                snprintf(err, len, "unknown kind of remote storage: redis://, redis+unix: and file: are known");
                r = -EINVAL;
        }
        if (r == -ENOMEM)
                snprintf(err, len, "out of memory");
        if (r < 0) {
                remote_url_done(&u);
                return r;
        }
        *ret = u;
        return 0;
}

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

int remote_password_file_check(const char *path, char *err, size_t len) {
        int fd = open_password(path, err, len);

        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

int remote_password_read(const char *path, char *buf, size_t len, char *err, size_t errlen) {
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

const char *cache_clock_name(CacheClock c) {
        return c == CACHE_CLOCK_ATIME ? "atime" : c == CACHE_CLOCK_AUTO ? "auto" : "mtime";
}

CacheClock remote_clock_decide(CacheClock configured, CacheClock current, uint64_t entries, uint64_t touched) {
        if (configured != CACHE_CLOCK_AUTO)
                return configured;
        if (touched > entries)
                touched = entries;   /* (entries counted since the scan: cannot be fewer) */
        if (current == CACHE_CLOCK_MTIME)
                return touched >= REMOTE_CLOCK_ATIME_BELOW_TOUCHED &&
                                       touched * 1000 >= entries * REMOTE_CLOCK_ATIME_BELOW_PERMILLE
                               ? CACHE_CLOCK_MTIME
                               : CACHE_CLOCK_ATIME;
        return touched >= REMOTE_CLOCK_MTIME_MIN_TOUCHED && touched * 1000 >= entries * REMOTE_CLOCK_MTIME_MIN_PERMILLE
                       ? CACHE_CLOCK_MTIME
                       : CACHE_CLOCK_ATIME;
}

const char *cache_watch_mode_name(CacheWatchMode m) {
        return m == CACHE_WATCH_POLL ? "poll" : m == CACHE_WATCH_AUTO ? "auto" : "inotify";
}

void remote_config_done(RemoteConfig *rc) {
        free(rc->cache.name);
        free(rc->cache.path);
        free(rc->name);
        free(rc->url);
        free(rc->password_file);
        free(rc->server_user);
        remote_url_done(&rc->u);
        *rc = (RemoteConfig) { 0 };
}
