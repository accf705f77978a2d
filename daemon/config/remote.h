/* SPDX-License-Identifier: MIT */
/* ccache remote storage this host watches or keeps: the `remotes` config
 * entries and their URLs (redis://, redis+unix:, file:), and the one check
 * a secret's file must pass. Pure but for remote_password_file_check and
 * remote_password_read (which read the file); non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/util.h"
#include "config/config.h"

#define REMOTE_URL_MAX          1024
#define REMOTE_PASSWORD_MAX     512     /* bytes of a password_file's first line */
#define REMOTE_DEFAULT_POLL_USEC    (30 * USEC_PER_SEC)
#define REMOTE_DEFAULT_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define REMOTE_DEFAULT_ROUND_TIMEOUT_USEC (60 * USEC_PER_SEC)
#define REMOTE_DEFAULT_SERVER_USER  "redis"
#define REMOTE_DEFAULT_RESCAN_USEC  (10 * 60 * USEC_PER_SEC)
#define REMOTE_RESCAN_MIN_USEC      USEC_PER_SEC
#define REMOTE_RESCAN_MAX_USEC      (86400 * USEC_PER_SEC)

typedef enum RemoteKind {
        REMOTE_REDIS,           /* redis://[user@]host:port[/db] or redis+unix:/path */
        REMOTE_FILE,            /* file:/path (ccache's layout, kept as a cache: cache.h) */
} RemoteKind;

/* A URL taken apart. Strings are the struct's own (remote_url_done). */
typedef struct RemoteUrl {
        RemoteKind kind;
        char *host;             /* redis:// only */
        uint16_t port;          /* redis:// only; 6379 when absent */
        char *user;             /* redis:// only, NULL: none */
        char *path;             /* redis+unix: socket, file: directory (absolute) */
        uint32_t db;            /* redis: database number (0 when absent) */
} RemoteUrl;

typedef struct RemoteConfig {
        char *name;
        char *url;              /* as written, without any secret (one in it is refused) */
        RemoteUrl u;
        char *password_file;    /* redis: NULL, or an absolute path (checked at load) */
        usec_t poll_interval_usec;
        usec_t timeout_usec;    /* connect and each reply */
        usec_t round_timeout_usec; /* a whole round (>= timeout_usec) */
        char *server_user;      /* redis: who may hold the port AUTH goes to (and root) */
        uid_t server_uid;       /* its uid, when server_uid_known (looked up at load) */
        bool server_uid_known;
        Threshold warn_free;    /* redis: of maxmemory, under a non-evicting policy */
        Threshold crit_free;
        /* file: the share kept as a cache (cache.h): name, path, max_size,
         * layout, trim_to, clock, watch, rescan_interval, mode (of the
         * root); its other settings are the defaults and mean nothing for
         * a remote. */
        CacheConfig cache;
} RemoteConfig;

/* Parses url into *ret (overwritten; free with remote_url_done). Returns 0,
 * or -EINVAL with a reason in err (len bytes): unknown scheme, a password
 * in the URL (secrets come from password_file), a bad port or db, a
 * relative path. Never echoes a secret into err. */
int remote_url_parse(const char *url, RemoteUrl *ret, char *err, size_t len);
void remote_url_done(RemoteUrl *u);

const char *remote_kind_name(RemoteKind k);
const char *remote_layout_name(CacheLayout l);   /* "subdirs" or "flat" */
const char *cache_clock_name(CacheClock c);
const char *cache_watch_mode_name(CacheWatchMode m);

/* Whether the file at path may hold a secret: every directory from / down
 * to it a real directory (no symlink on the way) owned by root and
 * writable by no one else (or sticky: in a sticky root directory no one
 * else can replace root's entries), the file itself a regular file (not a
 * symlink, a FIFO, a device: stat'ed before it is opened, opened
 * O_NONBLOCK|O_NOFOLLOW|O_NOCTTY, checked again on the fd), owned by root,
 * with no permission for group or other. Never blocks. Returns 0, or -errno
 * (cannot stat: -ENOENT ...) with why in err, -EPERM for a refusal. */
int remote_password_file_check(const char *path, char *err, size_t len);

/* Reads the first line of password_file, after the checks above (made
 * again at each call), into buf (len bytes, NUL-terminated, no newline).
 * Returns its length, or -errno with why in err (errlen bytes; -EPERM:
 * refused, -E2BIG: longer than len - 1). buf is wiped on failure. */
int remote_password_read(const char *path, char *buf, size_t len, char *err, size_t errlen);

/* A share's clock under "auto" (README "Remote storage"): least recently
 * used by atime, unless a full scan shows many entries touched (mtime
 * set by utimensat(NULL) after the entry was written: the hits of writers
 * with update-mtime=true, or a user's touch), both in count and in share
 * of the entries, so one touch (or a few) never decides it; and back to
 * atime once that evidence is gone, with hysteresis (half of each) so a
 * share near the line does not flap. Only ccache entries count: the
 * keeper's own lock file, its quarantine and other files never do. */
#define REMOTE_CLOCK_MTIME_MIN_TOUCHED   8       /* entries touched, at least, */
#define REMOTE_CLOCK_MTIME_MIN_PERMILLE  10      /* and 1 % of the entries, to go by mtime */
#define REMOTE_CLOCK_ATIME_BELOW_TOUCHED 4       /* by atime again below either */
#define REMOTE_CLOCK_ATIME_BELOW_PERMILLE 5

/* The clock a share configured with clock (mtime, atime: that one; auto:
 * decided) goes by after a full scan that found touched of its entries
 * entries touched, while it went by current (CACHE_CLOCK_MTIME or _ATIME). */
CacheClock remote_clock_decide(CacheClock configured, CacheClock current, uint64_t entries, uint64_t touched);

/* Frees what rc owns (not rc itself). */
void remote_config_done(RemoteConfig *rc);
