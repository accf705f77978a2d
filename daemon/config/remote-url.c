/* SPDX-License-Identifier: MIT */
/* Remote storage URLs (remote-url.h). */
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/remote-url.h"

#define REDIS_DEFAULT_PORT 6379

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
