/* SPDX-License-Identifier: MIT */
/* The configuration: parsed from libconfig syntax into an immutable Config.
 * The only module that includes libconfig.h. Non-logging: errors come back
 * as "FILE:LINE: message" in a caller-owned buffer. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/protocol.h"
#include "base/util.h"

#define CONFIG_DEFAULT_FILE   "/etc/cachekeeper.conf"
#define CONFIG_DEFAULT_SOCKET PROTOCOL_SOCKET_DEFAULT   /* cachectl's default too: one constant */
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/cachekeeper"

/* container_rights: what a peer in a container (another mount namespace)
 * may ask, one bit per name of config_right_names (in this order). A
 * request its uid may not make on the host it may not make from a
 * container either. */
typedef enum ConfigRight {
        CONFIG_RIGHT_STATUS    = 1u << 0,   /* "status" (check, metrics) */
        CONFIG_RIGHT_HISTORY   = 1u << 1,   /* "history" */
        CONFIG_RIGHT_EVICTIONS = 1u << 2,   /* "evictions" (measure --explain) */
        CONFIG_RIGHT_DRY_RUN   = 1u << 3,   /* "dry-run": trim and merge --dry-run */
        CONFIG_RIGHT_TRIM      = 1u << 4,   /* "trim" */
        CONFIG_RIGHT_MERGE     = 1u << 5,   /* "merge" */
        CONFIG_RIGHT_RELOAD    = 1u << 6,   /* "reload" */
} ConfigRight;
#define CONFIG_DEFAULT_CONTAINER_RIGHTS \
        (CONFIG_RIGHT_STATUS | CONFIG_RIGHT_HISTORY | CONFIG_RIGHT_EVICTIONS | CONFIG_RIGHT_DRY_RUN)
extern const char *const config_right_names[];   /* NULL-terminated */
#define CONFIG_NAME_MAX       32
#define CONFIG_ERROR_MAX      512
/* The alarms' windows: a minute is the finest bucket; the history holds 90
 * days, which a silent_window must fit in twice (a new cache's rule) with the
 * 24 h before it. */
#define CONFIG_SILENT_WINDOW_MIN (60 * USEC_PER_SEC)
#define CONFIG_SILENT_WINDOW_MAX (30 * 86400 * USEC_PER_SEC)
#define CONFIG_IDLE_AFTER_MIN    (60 * USEC_PER_SEC)
#define CONFIG_IDLE_AFTER_MAX    (90 * 86400 * USEC_PER_SEC)
/* remote_errors_window: minute buckets are the finest; the minute ring holds a day. */
#define CONFIG_REMOTE_ERRORS_WINDOW_MIN (60 * USEC_PER_SEC)
#define CONFIG_REMOTE_ERRORS_WINDOW_MAX (86400 * USEC_PER_SEC)

typedef enum ThresholdKind {
        THRESHOLD_UNSET,
        THRESHOLD_ABSOLUTE,  /* value is bytes (or inodes) */
        THRESHOLD_PERCENT,   /* percent of the total, 0 < percent < 100 */
} ThresholdKind;

/* A size as configured ("1.5Ti"), kept for -t to print back: the longest. */
#define CONFIG_SIZE_TEXT_MAX 64

typedef struct Threshold {
        ThresholdKind kind;
        uint64_t value;
        double percent;
        char text[CONFIG_SIZE_TEXT_MAX];  /* ABSOLUTE: the value as configured ("20G", "100000") */
} Threshold;

/* Limits for one volume. The top-level `volumes` group gives the defaults;
 * each entry of `volumes.overrides` is a full copy with its own changes. */
typedef struct VolumeConfig {
        char *mount;                 /* NULL for the defaults */
        Threshold warn_free;
        Threshold crit_free;
        Threshold warn_free_inodes;
        Threshold crit_free_inodes;
        Threshold min_free;          /* UNSET: no pressure eviction */
        Threshold hysteresis;        /* margin above a threshold before a level is left */
        usec_t full_within_usec;     /* 0: no trend alert */
} VolumeConfig;

/* What a Cache keeps (cache.h): a local ccache directory, or a file:
 * remote's (RemoteConfig, below) in one of ccache's remote layouts. */
typedef enum CacheLayout {
        CACHE_LAYOUT_LOCAL,          /* <l1>/<l2>/[<l3>/...]<key>R|M|W, stats files, ccache.conf */
        CACHE_LAYOUT_REMOTE_SUBDIRS, /* <2 chars>/<rest of the bare key> */
        CACHE_LAYOUT_REMOTE_FLAT,    /* <bare key> in the root */
} CacheLayout;

/* The time least-recently-used eviction orders entries by. A local cache
 * always uses mtime (ccache refreshes it at every hit); a remote one uses
 * mtime where its writers set update-mtime=true, else atime. */
typedef enum CacheClock {
        CACHE_CLOCK_MTIME,
        CACHE_CLOCK_ATIME,
        CACHE_CLOCK_AUTO,            /* remote: decided by each full scan (remote_clock_decide) */
} CacheClock;

/* How a remote's figures are kept: inotify (local filesystems) or paced
 * full rescans (network filesystems, where other hosts' changes raise no
 * event). */
typedef enum CacheWatchMode {
        CACHE_WATCH_INOTIFY,
        CACHE_WATCH_POLL,
        CACHE_WATCH_AUTO,            /* poll on a network filesystem, else inotify */
} CacheWatchMode;

typedef struct CacheConfig {
        char *name;
        char *path;                  /* absolute, normalised (no //, ., .., trailing /) */
        char *require_mount;         /* NULL, or path itself or an ancestor of it */
        uint64_t max_size_bytes;
        char max_size_text[CONFIG_SIZE_TEXT_MAX];  /* as configured, for -t: "1.5Ti" */
        double trim_to;              /* fraction of max_size to evict down to, (0, 1] */
        mode_t mode;                 /* permission bits of the root, <= 07777 */
        bool manage_ccache_conf;     /* keep umask and max_size in $root/ccache.conf */
        char **ccache_conf_allow;    /* ccache settings kept beyond the safe list (ccache-conf.h
                                      * ALLOWABLE ones), NULL-terminated; NULL: none */
        uint32_t max_watches;        /* inotify watches at most; 0: "auto" (watch.h) */
        double regret_alert;         /* cache-cap-small above this 7-day regret share, [0, 1] */
        /* The cache-silent-miss and cache-idle alarms (alarm.h). */
        usec_t silent_window_usec;   /* [CONFIG_SILENT_WINDOW_MIN, CONFIG_SILENT_WINDOW_MAX] */
        uint64_t silent_min_calls;   /* >= 1 */
        double silent_hit_rate;      /* fraction, [0, 1]; 0: never fires */
        usec_t idle_after_usec;      /* [CONFIG_IDLE_AFTER_MIN, CONFIG_IDLE_AFTER_MAX] */
        /* remote-errors: ccache counted remote storage errors or timeouts in
         * the cache's stats within this window. */
        usec_t remote_errors_window_usec; /* [CONFIG_REMOTE_ERRORS_WINDOW_MIN, _MAX] */
        /* A file: remote's (RemoteConfig; CACHE_LAYOUT_LOCAL and the zero
         * values for a cache): none of a local cache's upkeep but the
         * root's mode (ccache's directories' modes, ccache.conf, stats
         * files, ccache's locks) applies to it. */
        CacheLayout layout;
        CacheClock clock;
        CacheWatchMode watch_mode;
        usec_t rescan_interval_usec;  /* poll mode: a full rescan starts at least this often */
} CacheConfig;

static inline bool cache_config_is_remote(const CacheConfig *cc) {
        return cc->layout != CACHE_LAYOUT_LOCAL;
}

/* How the logs name it: "Cache t", "Remote s". */
static inline const char *cache_config_what(const CacheConfig *cc) {
        return cache_config_is_remote(cc) ? "Remote" : "Cache";
}

/* One entry of `remotes`: ccache remote storage this host watches (redis://,
 * redis+unix:) or keeps as a cache (file:). */
#define REMOTE_URL_MAX          1024
#define REMOTE_PASSWORD_MAX     512     /* bytes of a password_file's first line (os/secret-file.h) */
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

/* Frees what rc owns (not rc itself). */
void remote_config_done(RemoteConfig *rc);

/* The schema's names of its enums, as the config file writes them. */
const char *remote_layout_name(CacheLayout l);   /* "subdirs" or "flat" */
const char *cache_clock_name(CacheClock c);
const char *cache_watch_mode_name(CacheWatchMode m);

typedef struct Config {
        char *file;                  /* what it was loaded from, for messages */
        char *socket_path;
        char *state_dir;             /* absolute: each cache's history (state-file.h) */
        char *admin_group;
        char **alert_argv;           /* NULL-terminated, or NULL when unset */
        unsigned container_rights;   /* ConfigRight bits */
        usec_t alert_timeout_usec;
        usec_t alert_min_interval_usec; /* per subject and kind; 0: every alert runs */
        usec_t audit_interval_usec;  /* 0: no periodic audit rescan */
        usec_t check_interval_usec;  /* volumes.check_interval */
        VolumeConfig volume_defaults;
        VolumeConfig *volume_overrides;
        size_t n_volume_overrides;
        CacheConfig *caches;
        size_t n_caches;
        RemoteConfig *remotes;       /* NULL when none */
        size_t n_remotes;
} Config;

/* Parses and validates the file at path. On success stores a new Config in
 * *ret and returns 0. On failure returns -EINVAL (bad content) or -errno (cannot
 * read), writes "FILE:LINE: message" (or "FILE: message") to err and leaves
 * *ret untouched. */
int config_load(const char *path, char *err, size_t errlen, Config **ret);

/* As config_load, for text held in memory; name stands in for the file name
 * in messages. */
int config_load_string(const char *text, const char *name, char *err, size_t errlen,
                       Config **ret);

/* The configuration compiled into the binary (the shipped etc/cachekeeper.conf). */
int config_load_builtin(char *err, size_t errlen, Config **ret);
extern const char config_builtin_text[];

/* Prints c in normalised form, a config that loads again to the same
 * values and prints the same: every setting (defaults included), paths
 * normalised, durations in seconds, sizes as configured with their byte
 * count in a comment, fractions and percentages in the fewest digits that
 * read back exactly. */
void config_dump(const Config *c, FILE *f);

/* Frees c and everything it owns. Accepts NULL; returns NULL. */
Config *config_free(Config *c);
static inline void config_freep(Config **c) {
        config_free(*c);
}

/* The limits for the volume mounted at mount: its override, else the defaults. */
const VolumeConfig *config_volume(const Config *c, const char *mount);
const CacheConfig *config_cache(const Config *c, const char *name);

/* A size ("100G", human.h) or a percentage of the total ("10%"); with
 * allow_count a bare integer is a count (inodes). A size or count is kept
 * as written in ret->text (CONFIG_SIZE_TEXT_MAX - 1 characters at most).
 * Returns 0 or -EINVAL. */
int config_parse_threshold(const char *s, bool allow_count, Threshold *ret);

/* The threshold in units of total (bytes or inodes). UNSET resolves to 0. */
uint64_t threshold_resolve(const Threshold *t, uint64_t total);
