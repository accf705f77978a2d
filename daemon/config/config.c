/* SPDX-License-Identifier: MIT */
/* libconfig → immutable Config, with every error pointing at the line of the
 * setting at fault: the schema, read with the typed getters of config-get.h
 * (libconfig.h stays within config/). Non-logging. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include "base/human.h"
#include "ccache/ccache-conf.h"
#include "config/config-get.h"
#include "config/config-hint.h"
#include "config/config.h"
#include "config/remote-url.h"
#include "os/secret-file.h"
#include "os/users.h"

#define DEFAULT_CHECK_INTERVAL_USEC (10 * USEC_PER_SEC)
#define DEFAULT_FULL_WITHIN_USEC    (24 * 3600 * USEC_PER_SEC)
#define DEFAULT_ALERT_TIMEOUT_USEC  (30 * USEC_PER_SEC)
/* A person paged once a minute per volume or cache and kind reads every
 * page; a user looping chmod made hundreds a second without it. A day at
 * most: a recovery waits for the end of the window. */
#define DEFAULT_ALERT_MIN_INTERVAL_USEC (60 * USEC_PER_SEC)
#define MAX_ALERT_MIN_INTERVAL_USEC     (24 * 3600 * USEC_PER_SEC)
/* A full audit of a 1M-file cache costs a few seconds of I/O: hourly is
 * cheap insurance against anything inotify could not tell us. */
#define DEFAULT_AUDIT_INTERVAL_USEC (3600 * USEC_PER_SEC)
#define DEFAULT_TRIM_TO             0.9
#define DEFAULT_REGRET_ALERT        0.10
#define DEFAULT_MODE                01777
/* A silently-missing cache found within the hour; 50 calls is a small
 * build, fewer say little; 5 % is what a build that changed every key
 * still hits (a few unchanged files). A cache unused for a week lost its
 * users (a mount, a compiler shim). */
#define DEFAULT_SILENT_WINDOW_USEC  (3600 * USEC_PER_SEC)
#define DEFAULT_SILENT_MIN_CALLS    50
#define DEFAULT_SILENT_HIT_RATE     0.05
#define DEFAULT_IDLE_AFTER_USEC     (7 * 86400 * USEC_PER_SEC)
/* ccache retries nothing: a store that failed is a miss for every host
 * after it. A quarter of an hour of errors is a pattern, not a blip. */
#define DEFAULT_REMOTE_ERRORS_WINDOW_USEC (15 * 60 * USEC_PER_SEC)


static const char *const top_keys[] = {
        "socket", "state_dir", "admin_group", "alert_command", "alert_timeout", "alert_min_interval",
        "audit_interval", "container_rights", "volumes", "caches", "remotes", NULL,
};

const char *const config_right_names[] = {
        "status", "history", "evictions", "dry-run", "trim", "merge", "reload", NULL,
};
static const char *const volumes_keys[] = {
        "check_interval", "warn_free", "crit_free", "warn_free_inodes", "crit_free_inodes",
        "min_free", "full_within", "hysteresis", "overrides", NULL,
};
static const char *const override_keys[] = {
        "mount", "warn_free", "crit_free", "warn_free_inodes", "crit_free_inodes",
        "min_free", "full_within", "hysteresis", NULL,
};
static const char *const cache_keys[] = {
        "name", "path", "max_size", "mode", "trim_to", "require_mount", "ccache_conf", "ccache_conf_allow",
        "max_watches", "regret_alert", "silent_window", "silent_min_calls", "silent_hit_rate", "idle_after",
        "remote_errors_window", NULL,
};

static const char *const remote_keys[] = {
        "name", "url", "password_file", "poll_interval", "timeout", "round_timeout", "server_user", "warn_free",
        "crit_free", "max_size", "layout", "trim_to", "clock", "watch", "rescan_interval", "mode", NULL,
};
/* Keys that mean something for one kind of remote only. */
static const char *const redis_only_keys[] = { "password_file", "poll_interval", "timeout", "round_timeout",
                                               "server_user", "warn_free", "crit_free", NULL };
static const char *const file_only_keys[] = { "max_size", "layout", "trim_to", "clock", "watch", "rescan_interval",
                                              "mode", NULL };

static int parse_alarms(Ctx *ctx, const config_setting_t *g, CacheConfig *cc) {
        int r;

        cc->silent_window_usec = DEFAULT_SILENT_WINDOW_USEC;
        cc->silent_min_calls = DEFAULT_SILENT_MIN_CALLS;
        cc->silent_hit_rate = DEFAULT_SILENT_HIT_RATE;
        cc->idle_after_usec = DEFAULT_IDLE_AFTER_USEC;
        cc->remote_errors_window_usec = DEFAULT_REMOTE_ERRORS_WINDOW_USEC;
        if ((r = cfg_get_window(ctx, g, "silent_window", CONFIG_SILENT_WINDOW_MIN, CONFIG_SILENT_WINDOW_MAX,
                            "the finest history is a minute; it holds 90 days, which must hold the window twice "
                            "and the day before it", &cc->silent_window_usec)) < 0 ||
            (r = cfg_get_positive(ctx, g, "silent_min_calls", &cc->silent_min_calls)) < 0 ||
            (r = cfg_get_percent(ctx, g, "silent_hit_rate", &cc->silent_hit_rate)) < 0 ||
            (r = cfg_get_window(ctx, g, "idle_after", CONFIG_IDLE_AFTER_MIN, CONFIG_IDLE_AFTER_MAX,
                            "the finest history is a minute; it holds 90 days", &cc->idle_after_usec)) < 0 ||
            (r = cfg_get_window(ctx, g, "remote_errors_window", CONFIG_REMOTE_ERRORS_WINDOW_MIN,
                            CONFIG_REMOTE_ERRORS_WINDOW_MAX, "the finest history is a minute; the minute ring holds a day",
                            &cc->remote_errors_window_usec)) < 0)
                return r;
        return 0;
}

static void free_strv(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

/* Why key may not be in ccache_conf_allow, or NULL if it may. */
static const char *conf_allow_refusal(const char *key, char *buf, size_t len) {
        switch (ccache_conf_class(key)) {
        case CCACHE_CONF_UNKNOWN:
                return "is not a setting of ccache 4.7 to 4.14";
        case CCACHE_CONF_OURS:
                return "is written by the daemon (set max_size here, or ccache_conf = false)";
        case CCACHE_CONF_NEVER:
                snprintf(buf, len, "can never be allowed: it %s, and any user may plant a ccache.conf line "
                         "(set it in the builds' environment or /etc/ccache.conf)", ccache_conf_why(key));
                return buf;
        default:
                return NULL;   /* SAFE ones are kept anyway */
        }
}

/* container_rights = [ "status", ... ]: names of config_right_names, into
 * bits; absent: the default. */
static int get_container_rights(Ctx *ctx, const config_setting_t *root, unsigned *ret) {
        const config_setting_t *s = config_setting_get_member(root, "container_rights");
        const char *example = "e.g. [ \"status\", \"history\", \"evictions\", \"dry-run\" ]";
        unsigned bits = 0;

        *ret = CONFIG_DEFAULT_CONTAINER_RIGHTS;
        if (!s)
                return 0;
        if (!config_setting_is_array(s) && !config_setting_is_list(s))
                return cfg_fail(ctx, s, "'container_rights' must be a list of request names, %s", example);
        for (int i = 0; i < config_setting_length(s); i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *name = config_setting_get_string(e);
                int k = 0;

                while (name && config_right_names[k] && strcmp(name, config_right_names[k]) != 0)
                        k++;
                if (!name || !config_right_names[k])
                        return cfg_fail(ctx, e, "'container_rights': \"%s\" is none of status, history, evictions, "
                                        "dry-run, trim, merge, reload", name ? name : "(not a string)");
                bits |= 1u << k;
        }
        *ret = bits;
        return 1;
}

/* ccache_conf_allow = [ "base_dir", ... ]: names of ccache settings. */
static int get_conf_allow(Ctx *ctx, const config_setting_t *group, char ***ret) {
        const config_setting_t *s = config_setting_get_member(group, "ccache_conf_allow");
        char where[256], why[256], **v;
        int n;

        if (!s)
                return 0;
        cfg_setting_path(s, where, sizeof(where));
        if (!config_setting_is_array(s) && !config_setting_is_list(s))
                return cfg_fail(ctx, s, "'%s' must be a list of ccache setting names, e.g. [ \"base_dir\" ]", where);
        n = config_setting_length(s);
        v = calloc((size_t) n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *key = config_setting_get_string(e), *refusal;
                int r;

                if (!key)
                        r = cfg_fail(ctx, e, "'%s' must be a list of ccache setting names, e.g. [ \"base_dir\" ]", where);
                else if ((refusal = conf_allow_refusal(key, why, sizeof(why))))
                        r = cfg_fail(ctx, e, "'%s': \"%s\" %s", where, key, refusal);
                else
                        r = (v[i] = strdup(key)) ? 0 : -ENOMEM;
                if (r < 0) {
                        free_strv(v);
                        return r;
                }
        }
        *ret = v;
        return 1;
}

static int get_alert_command(Ctx *ctx, const config_setting_t *root, char ***ret) {
        const config_setting_t *s = config_setting_get_member(root, "alert_command");
        char **argv;
        int n;

        if (!s)
                return 0;
        if (config_setting_type(s) == CONFIG_TYPE_STRING)
                n = 1;
        else if (config_setting_is_array(s) || config_setting_is_list(s))
                n = config_setting_length(s);
        else
                n = 0;
        if (n == 0)
                return cfg_fail(ctx, s, "'alert_command' must be a path or a list of strings, "
                            "e.g. \"/usr/local/bin/page-me\" or [\"/usr/bin/logger\", \"-t\", \"cache\"]");
        argv = calloc((size_t) n + 1, sizeof(char *));
        if (!argv)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                const config_setting_t *e = config_setting_type(s) == CONFIG_TYPE_STRING
                                                    ? s : config_setting_get_elem(s, (unsigned) i);
                const char *v = config_setting_get_string(e);

                if (!v || !(argv[i] = strdup(v))) {
                        for (int k = 0; k < i; k++)
                                free(argv[k]);
                        free(argv);
                        return v ? -ENOMEM : cfg_fail(ctx, e, "'alert_command' arguments must be strings");
                }
        }
        /* A command line in one string: no shell splits it. */
        if (n == 1 && strpbrk(argv[0], " \t") && access(argv[0], F_OK) < 0) {
                char list[1024] = "[ ";
                size_t used = 2;
                int r;

                for (const char *w = argv[0]; *w && used < sizeof(list) - 8;) {
                        size_t l = strcspn(w, " \t");

                        if (l > 0)
                                used += (size_t) snprintf(list + used, sizeof(list) - used, "%s\"%.*s\"",
                                                          used > 2 ? ", " : "", (int) l, w);
                        w += l;
                        w += strspn(w, " \t");
                }
                if (used < sizeof(list) - 3)
                        strcpy(list + used, " ]");
                r = cfg_fail(ctx, s, "'alert_command' is run without a shell, so \"%s\" names no program: "
                             "give the program and its arguments as a list, alert_command = %s;", argv[0], list);
                for (int k = 0; k < n; k++)
                        free(argv[k]);
                free(argv);
                return r;
        }
        if (argv[0][0] != '/') {
                int r = cfg_fail(ctx, s, "'alert_command' must start with an absolute path (it is run "
                             "without a shell), not \"%s\"", argv[0]);
                for (int k = 0; k < n; k++)
                        free(argv[k]);
                free(argv);
                return r;
        }
        *ret = argv;
        return 1;
}

/* Two thresholds of the same kind must leave a warning band above critical. */
static int check_order(Ctx *ctx, const config_setting_t *group, const char *warn_key,
                       const Threshold *warn, const char *crit_key, const Threshold *crit) {
        bool bad;

        if (warn->kind == THRESHOLD_UNSET || crit->kind == THRESHOLD_UNSET || warn->kind != crit->kind)
                return 0;
        bad = warn->kind == THRESHOLD_PERCENT ? crit->percent >= warn->percent : crit->value >= warn->value;
        if (!bad)
                return 0;
        return cfg_fail(ctx, config_setting_get_member(group, crit_key) ?: group,
                    "'%s' must be below '%s' (critical is the lower free-space level)", crit_key, warn_key);
}

static int parse_volume_limits(Ctx *ctx, const config_setting_t *g, VolumeConfig *v) {
        int r;

        if ((r = cfg_get_threshold(ctx, g, "warn_free", false, &v->warn_free)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "crit_free", false, &v->crit_free)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "warn_free_inodes", true, &v->warn_free_inodes)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "crit_free_inodes", true, &v->crit_free_inodes)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "min_free", false, &v->min_free)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "hysteresis", false, &v->hysteresis)) < 0 ||
            (r = cfg_get_duration(ctx, g, "full_within", true, &v->full_within_usec)) < 0)
                return r;
        if ((r = check_order(ctx, g, "warn_free", &v->warn_free, "crit_free", &v->crit_free)) < 0 ||
            (r = check_order(ctx, g, "warn_free_inodes", &v->warn_free_inodes, "crit_free_inodes",
                             &v->crit_free_inodes)) < 0)
                return r;
        return 0;
}

static void volume_config_done(VolumeConfig *v) {
        free(v->mount);
        v->mount = NULL;
}

static int parse_volumes(Ctx *ctx, const config_setting_t *root, Config *c) {
        const config_setting_t *g, *list;
        int r;

        c->volume_defaults = (VolumeConfig) {
                .warn_free = { THRESHOLD_PERCENT, 0, 10 },
                .crit_free = { THRESHOLD_PERCENT, 0, 5 },
                .warn_free_inodes = { THRESHOLD_PERCENT, 0, 10 },
                .crit_free_inodes = { THRESHOLD_PERCENT, 0, 5 },
                .hysteresis = { THRESHOLD_PERCENT, 0, 1 },
                .full_within_usec = DEFAULT_FULL_WITHIN_USEC,
        };
        c->check_interval_usec = DEFAULT_CHECK_INTERVAL_USEC;

        r = cfg_get_setting(ctx, root, "volumes", CONFIG_TYPE_GROUP, "a group: volumes = { ... };", &g);
        if (r <= 0)
                return r;
        if ((r = cfg_check_keys(ctx, g, volumes_keys)) < 0 ||
            (r = cfg_get_duration(ctx, g, "check_interval", false, &c->check_interval_usec)) < 0 ||
            (r = parse_volume_limits(ctx, g, &c->volume_defaults)) < 0)
                return r;

        r = cfg_get_setting(ctx, g, "overrides", CONFIG_TYPE_LIST,
                        "a list of groups: overrides = ( { mount = \"/mnt/x\"; ... } );", &list);
        if (r <= 0)
                return r;
        c->n_volume_overrides = 0;
        c->volume_overrides = calloc((size_t) config_setting_length(list) + 1, sizeof(VolumeConfig));
        if (!c->volume_overrides)
                return -ENOMEM;
        for (int i = 0; i < config_setting_length(list); i++) {
                const config_setting_t *o = config_setting_get_elem(list, (unsigned) i);
                VolumeConfig *v = &c->volume_overrides[c->n_volume_overrides];

                if (!config_setting_is_group(o))
                        return cfg_fail(ctx, o, "'volumes.overrides' entries must be groups: { mount = \"/mnt/x\"; ... }");
                *v = c->volume_defaults;
                v->mount = NULL;
                c->n_volume_overrides++;
                if ((r = cfg_check_keys(ctx, o, override_keys)) < 0 ||
                    (r = cfg_require(ctx, o, "mount", cfg_get_path(ctx, o, "mount", &v->mount))) < 0 ||
                    (r = parse_volume_limits(ctx, o, v)) < 0)
                        return r;
                for (size_t k = 0; k + 1 < c->n_volume_overrides; k++)
                        if (strcmp(c->volume_overrides[k].mount, v->mount) == 0)
                                return cfg_fail(ctx, config_setting_get_member(o, "mount"),
                                            "volume override for '%s' given twice", v->mount);
        }
        return 0;
}

static bool path_contains(const char *outer, const char *inner) {
        size_t n = strlen(outer);

        if (strcmp(outer, "/") == 0)
                return true;
        return strncmp(outer, inner, n) == 0 && (inner[n] == '/' || inner[n] == '\0');
}

static bool valid_name(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > CONFIG_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char) s[i]) && !strchr("._-", s[i]))
                        return false;
        return true;
}

static int parse_cache(Ctx *ctx, const config_setting_t *g, CacheConfig *cc) {
        const config_setting_t *s = NULL;
        const char *name;
        int r;

        cc->trim_to = DEFAULT_TRIM_TO;
        cc->regret_alert = DEFAULT_REGRET_ALERT;
        cc->mode = DEFAULT_MODE;
        cc->manage_ccache_conf = true;

        if (!config_setting_is_group(g))
                return cfg_fail(ctx, g, "'caches' entries must be groups: { name = \"x\"; path = \"/x\"; max_size = \"10G\"; }");
        if ((r = cfg_check_keys(ctx, g, cache_keys)) < 0 ||
            (r = cfg_require(ctx, g, "name", cfg_get_string(ctx, g, "name", "\"mi210\"", &s, &name))) < 0)
                return r;
        if (!valid_name(name))
                return cfg_fail(ctx, s, "cache name \"%s\" must be 1-%d letters, digits, '.', '_' or '-'",
                            name, CONFIG_NAME_MAX);
        if (!(cc->name = strdup(name)))
                return -ENOMEM;
        if ((r = cfg_require(ctx, g, "path", cfg_get_path(ctx, g, "path", &cc->path))) < 0 ||
            (r = cfg_require(ctx, g, "max_size", cfg_get_size(ctx, g, "max_size", &cc->max_size_bytes, cc->max_size_text))) < 0 ||
            (r = cfg_get_mode(ctx, g, "mode", &cc->mode)) < 0 ||
            (r = cfg_get_fraction(ctx, g, "trim_to", &cc->trim_to)) < 0 ||
            (r = cfg_get_path(ctx, g, "require_mount", &cc->require_mount)) < 0 ||
            (r = cfg_get_bool(ctx, g, "ccache_conf", &cc->manage_ccache_conf)) < 0 ||
            (r = get_conf_allow(ctx, g, &cc->ccache_conf_allow)) < 0 ||
            (r = cfg_get_count_or_auto(ctx, g, "max_watches", &cc->max_watches)) < 0 ||
            (r = cfg_get_percent(ctx, g, "regret_alert", &cc->regret_alert)) < 0 ||
            (r = parse_alarms(ctx, g, cc)) < 0)
                return r;
        if (strcmp(cc->path, "/") == 0)
                return cfg_fail(ctx, config_setting_get_member(g, "path"), "cache path must not be '/'");
        if (cc->require_mount && !path_contains(cc->require_mount, cc->path))
                return cfg_fail(ctx, config_setting_get_member(g, "require_mount"),
                            "require_mount '%s' must be the cache path or a directory above it ('%s')",
                            cc->require_mount, cc->path);
        return 0;
}

static int parse_caches(Ctx *ctx, const config_setting_t *root, Config *c) {
        const config_setting_t *list;
        int r;

        r = cfg_get_setting(ctx, root, "caches", CONFIG_TYPE_LIST,
                        "a list of groups: caches = ( { name = \"x\"; ... } );", &list);
        if ((r = cfg_require(ctx, root, "caches", r)) < 0)
                return r;
        if (config_setting_length(list) == 0)
                return cfg_fail(ctx, list, "'caches' is empty: there is nothing to keep");
        c->caches = calloc((size_t) config_setting_length(list), sizeof(CacheConfig));
        if (!c->caches)
                return -ENOMEM;
        for (int i = 0; i < config_setting_length(list); i++) {
                const config_setting_t *g = config_setting_get_elem(list, (unsigned) i);
                CacheConfig *cc = &c->caches[c->n_caches++];

                if ((r = parse_cache(ctx, g, cc)) < 0)
                        return r;
                for (size_t k = 0; k + 1 < c->n_caches; k++) {
                        const CacheConfig *o = &c->caches[k];

                        if (strcmp(o->name, cc->name) == 0)
                                return cfg_fail(ctx, config_setting_get_member(g, "name"),
                                            "cache name \"%s\" is used twice", cc->name);
                        if (strcmp(o->path, cc->path) == 0)
                                return cfg_fail(ctx, config_setting_get_member(g, "path"),
                                            "caches '%s' and '%s' have the same path '%s'",
                                            o->name, cc->name, cc->path);
                        if (path_contains(o->path, cc->path) || path_contains(cc->path, o->path))
                                return cfg_fail(ctx, config_setting_get_member(g, "path"),
                                            "cache '%s' (%s) and cache '%s' (%s) overlap: one is inside the other",
                                            cc->name, cc->path, o->name, o->path);
                }
        }
        return 0;
}

/* Only for redis: a file with the secret, which must not be readable by
 * anyone but root (checked now, and again each time it is read). */
static int get_password_file(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        const config_setting_t *s = config_setting_get_member(g, "password_file");
        char why[256];
        int r;

        if (!s)
                return 0;
        r = cfg_get_path(ctx, g, "password_file", &rc->password_file);
        if (r <= 0)
                return r;
        r = secret_file_check(rc->password_file, why, sizeof(why));
        if (r < 0)
                return cfg_fail(ctx, s, "password_file '%s' %s", rc->password_file, why);
        return 1;
}

/* Only for redis: the user the server runs as, who alone (with root) may
 * hold the port the password is sent to (remote-redis.h). Looked up now,
 * never on the loop. The default, "redis", may be missing: root only. */
static int get_server_user(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        const config_setting_t *s = NULL;
        const char *v;
        int r;

        r = cfg_get_string(ctx, g, "server_user", "\"redis\"", &s, &v);
        if (r < 0)
                return r;
        if (!(rc->server_user = strdup(r > 0 ? v : REMOTE_DEFAULT_SERVER_USER)))
                return -ENOMEM;
        if (user_uid(rc->server_user, &rc->server_uid) > 0)
                rc->server_uid_known = true;
        else if (r > 0)
                return cfg_fail(ctx, s, "server_user: no user \"%s\" on this host", v);
        return 0;
}

/* A file: remote is kept as a cache of ccache's remote layout: its
 * CacheConfig, the defaults but for what the remote sets. */
static int parse_file_remote(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        CacheConfig *cc = &rc->cache;
        int layout = 0, clock = CACHE_CLOCK_AUTO, watch = CACHE_WATCH_AUTO, r;

        *cc = (CacheConfig) { .trim_to = DEFAULT_TRIM_TO, .regret_alert = DEFAULT_REGRET_ALERT,
                              .rescan_interval_usec = REMOTE_DEFAULT_RESCAN_USEC, .mode = DEFAULT_MODE };
        if (!(cc->name = strdup(rc->name)) || !(cc->path = strdup(rc->u.path)))
                return -ENOMEM;
        r = cfg_get_size(ctx, g, "max_size", &cc->max_size_bytes, cc->max_size_text);
        if (r == 0)
                return cfg_fail(ctx, g, "remote %s: a file: remote needs max_size (ccache never trims it: the keeper "
                            "does, to this cap), e.g. max_size = \"500G\";", rc->name);
        if (r < 0 || (r = parse_alarms(ctx, g, cc)) < 0 || (r = cfg_get_fraction(ctx, g, "trim_to", &cc->trim_to)) < 0 ||
            (r = cfg_get_choice(ctx, g, "layout", (const char *const[]) { "subdirs", "flat", NULL }, &layout)) < 0 ||
            (r = cfg_get_choice(ctx, g, "clock", (const char *const[]) { "mtime", "atime", "auto", NULL }, &clock)) < 0 ||
            (r = cfg_get_choice(ctx, g, "watch", (const char *const[]) { "inotify", "poll", "auto", NULL }, &watch)) < 0 ||
            (r = cfg_get_mode(ctx, g, "mode", &cc->mode)) < 0 ||
            (r = cfg_get_window(ctx, g, "rescan_interval", REMOTE_RESCAN_MIN_USEC, REMOTE_RESCAN_MAX_USEC,
                            "a paced rescan keeps the figures within it of the truth", &cc->rescan_interval_usec)) < 0)
                return r;
        cc->layout = layout ? CACHE_LAYOUT_REMOTE_FLAT : CACHE_LAYOUT_REMOTE_SUBDIRS;
        cc->clock = (CacheClock) clock;
        cc->watch_mode = (CacheWatchMode) watch;
        if (strcmp(cc->path, "/") == 0)
                return cfg_fail(ctx, config_setting_get_member(g, "url"), "remote %s: a file: remote must not be '/'", rc->name);
        return 0;
}

static int parse_remote(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        const config_setting_t *s = NULL;
        const char *v;
        char why[256];
        int r;

        if (!config_setting_is_group(g))
                return cfg_fail(ctx, g, "each entry of 'remotes' must be a group: { name = \"x\"; url = \"...\"; }");
        if ((r = cfg_check_keys(ctx, g, remote_keys)) < 0)
                return r;
        r = cfg_get_string(ctx, g, "name", "\"team-redis\"", &s, &v);
        if ((r = cfg_require(ctx, g, "name", r)) < 0)
                return r;
        if (!*v || strlen(v) > CONFIG_NAME_MAX || v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")])
                return cfg_fail(ctx, s, "remote name \"%s\" must be 1 to %d of A-Z a-z 0-9 . _ -", v, CONFIG_NAME_MAX);
        if (!(rc->name = strdup(v)))
                return -ENOMEM;
        r = cfg_get_string(ctx, g, "url", "\"redis://127.0.0.1:6379\"", &s, &v);
        if ((r = cfg_require(ctx, g, "url", r)) < 0)
                return r;
        if (strlen(v) > REMOTE_URL_MAX)
                return cfg_fail(ctx, s, "remote %s: the url is longer than %d bytes", rc->name, REMOTE_URL_MAX);
        r = remote_url_parse(v, &rc->u, why, sizeof(why));
        if (r == -EINVAL)
                return cfg_fail(ctx, s, "remote %s: invalid url: %s", rc->name, why);
        if (r < 0 || !(rc->url = strdup(v)))
                return -ENOMEM;
        for (const char *const *k = rc->u.kind == REMOTE_FILE ? redis_only_keys : file_only_keys; *k; k++)
                if ((s = config_setting_get_member(g, *k)))
                        return cfg_fail(ctx, s, "'%s' is for %s remotes only", *k,
                                    rc->u.kind == REMOTE_FILE ? "redis" : "file:");
        if (rc->u.kind == REMOTE_FILE)
                return parse_file_remote(ctx, g, rc);
        rc->poll_interval_usec = REMOTE_DEFAULT_POLL_USEC;
        rc->timeout_usec = REMOTE_DEFAULT_TIMEOUT_USEC;
        rc->round_timeout_usec = REMOTE_DEFAULT_ROUND_TIMEOUT_USEC;
        rc->warn_free = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = 10 };
        rc->crit_free = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = 5 };
        if ((r = get_password_file(ctx, g, rc)) < 0 ||
            (r = cfg_get_duration(ctx, g, "poll_interval", false, &rc->poll_interval_usec)) < 0 ||
            (r = cfg_get_duration(ctx, g, "timeout", false, &rc->timeout_usec)) < 0 ||
            (r = cfg_get_duration(ctx, g, "round_timeout", false, &rc->round_timeout_usec)) < 0 ||
            (r = get_server_user(ctx, g, rc)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "warn_free", false, &rc->warn_free)) < 0 ||
            (r = cfg_get_threshold(ctx, g, "crit_free", false, &rc->crit_free)) < 0 ||
            (r = check_order(ctx, g, "warn_free", &rc->warn_free, "crit_free", &rc->crit_free)) < 0)
                return r;
        if (rc->round_timeout_usec < rc->timeout_usec)
                return cfg_fail(ctx, config_setting_get_member(g, "round_timeout") ?: g,
                            "remote %s: round_timeout must be at least timeout", rc->name);
        return 0;
}

/* A share is kept as a cache: it must not be, contain or lie inside a
 * cache or another share (two keepers of one file, one deleting what the
 * other counts). */
static int check_share_overlap(Ctx *ctx, const config_setting_t *g, const Config *c, const RemoteConfig *rc) {
        const config_setting_t *url = config_setting_get_member(g, "url");
        const char *p = rc->u.path;

        if (rc->u.kind != REMOTE_FILE)
                return 0;
        for (size_t k = 0; k < c->n_caches; k++)
                if (path_contains(c->caches[k].path, p) || path_contains(p, c->caches[k].path))
                        return cfg_fail(ctx, url, "remote %s (%s) and cache '%s' (%s) overlap: a share must be a "
                                    "directory of its own", rc->name, p, c->caches[k].name, c->caches[k].path);
        for (size_t k = 0; k + 1 < c->n_remotes; k++) {
                const RemoteConfig *o = &c->remotes[k];

                if (o->u.kind == REMOTE_FILE && (path_contains(o->u.path, p) || path_contains(p, o->u.path)))
                        return cfg_fail(ctx, url, "remotes %s (%s) and %s (%s) overlap: a share must be a directory of "
                                    "its own", o->name, o->u.path, rc->name, p);
        }
        return 0;
}

static int parse_remotes(Ctx *ctx, const config_setting_t *root, Config *c) {
        const config_setting_t *list;
        int r, n;

        r = cfg_get_setting(ctx, root, "remotes", CONFIG_TYPE_LIST,
                        "a list of groups: remotes = ( { name = \"x\"; url = \"redis://...\"; } );", &list);
        if (r <= 0)
                return r;
        n = config_setting_length(list);
        if (n == 0)
                return 0;
        c->remotes = calloc((size_t) n, sizeof(RemoteConfig));
        if (!c->remotes)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                const config_setting_t *g = config_setting_get_elem(list, (unsigned) i);
                RemoteConfig *rc = &c->remotes[c->n_remotes++];

                if ((r = parse_remote(ctx, g, rc)) < 0)
                        return r;
                for (size_t k = 0; k + 1 < c->n_remotes; k++)
                        if (strcmp(c->remotes[k].name, rc->name) == 0)
                                return cfg_fail(ctx, config_setting_get_member(g, "name"),
                                            "remote name \"%s\" is used twice", rc->name);
                if ((r = check_share_overlap(ctx, g, c, rc)) < 0)
                        return r;
        }
        return 0;
}

static int get_alert_min_interval(Ctx *ctx, const config_setting_t *root, usec_t *ret) {
        int r = cfg_get_duration(ctx, root, "alert_min_interval", true, ret);

        if (r > 0 && *ret > MAX_ALERT_MIN_INTERVAL_USEC)
                return cfg_fail(ctx, config_setting_get_member(root, "alert_min_interval"),
                            "'alert_min_interval' must be at most 1d (a recovery waits for the end of the interval)");
        return r;
}

static int parse_root(Ctx *ctx, const config_setting_t *root, Config *c) {
        const char *v;
        int r;

        c->alert_timeout_usec = DEFAULT_ALERT_TIMEOUT_USEC;
        c->alert_min_interval_usec = DEFAULT_ALERT_MIN_INTERVAL_USEC;
        c->audit_interval_usec = DEFAULT_AUDIT_INTERVAL_USEC;

        if ((r = cfg_check_keys(ctx, root, top_keys)) < 0)
                return r;
        r = cfg_get_path(ctx, root, "socket", &c->socket_path);
        if (r < 0)
                return r;
        if (r == 0 && !(c->socket_path = strdup(CONFIG_DEFAULT_SOCKET)))
                return -ENOMEM;
        r = cfg_get_path(ctx, root, "state_dir", &c->state_dir);
        if (r < 0)
                return r;
        if (r == 0 && !(c->state_dir = strdup(CONFIG_DEFAULT_STATE_DIR)))
                return -ENOMEM;
        r = cfg_get_string(ctx, root, "admin_group", "\"root\"", NULL, &v);
        if (r < 0)
                return r;
        if (!(c->admin_group = strdup(r > 0 ? v : "root")))
                return -ENOMEM;
        if ((r = get_alert_command(ctx, root, &c->alert_argv)) < 0 ||
            (r = get_container_rights(ctx, root, &c->container_rights)) < 0 ||
            (r = cfg_get_duration(ctx, root, "alert_timeout", false, &c->alert_timeout_usec)) < 0 ||
            (r = get_alert_min_interval(ctx, root, &c->alert_min_interval_usec)) < 0 ||
            (r = cfg_get_duration(ctx, root, "audit_interval", true, &c->audit_interval_usec)) < 0 ||
            (r = parse_volumes(ctx, root, c)) < 0 ||
            (r = parse_caches(ctx, root, c)) < 0 ||
            (r = parse_remotes(ctx, root, c)) < 0)
                return r;
        /* The daemon writes there: never into a cache it keeps. */
        for (size_t i = 0; i < c->n_caches; i++)
                if (path_contains(c->caches[i].path, c->state_dir))
                        return cfg_fail(ctx, config_setting_get_member(root, "state_dir"),
                                    "'state_dir' (%s) must not be inside cache %s (%s)", c->state_dir,
                                    c->caches[i].name, c->caches[i].path);
        return 0;
}

#define HINT_FILE_MAX (1u << 20)   /* a bigger file is not read again for a hint */

/* The first HINT_FILE_MAX bytes of file, malloc'd, into *ret; or NULL. */
static char *read_for_hint(const char *file, size_t *ret) {
        _cleanup_free_ char *buf = NULL;
        FILE *f = fopen(file, "re");
        size_t n;

        if (!f)
                return NULL;
        buf = malloc(HINT_FILE_MAX);
        n = buf ? fread(buf, 1, HINT_FILE_MAX, f) : 0;
        fclose(f);
        *ret = n;
        return n > 0 ? TAKE_PTR(buf) : NULL;
}

/* libconfig's message, with a hint when its bare "syntax error" has a likely
 * cause on the line (config-hint.h). text is the source when in memory
 * (NULL: the file named in the error is read again). */
static void parse_error(config_t *lc, const char *name, const char *text, char *err, size_t errlen) {
        const char *file = config_error_file(lc) ?: name, *msg = config_error_text(lc);
        _cleanup_free_ char *again = NULL;
        char hint[256];
        size_t len = 0;

        if (msg && strcmp(msg, "syntax error") == 0) {
                if (text && !config_error_file(lc))
                        len = strlen(text);
                else
                        text = again = read_for_hint(file, &len);
        } else
                text = NULL;
        if (text && config_syntax_hint(text, len, config_error_line(lc), hint, sizeof(hint)))
                snprintf(err, errlen, "%s:%d: %s: %s", file, config_error_line(lc), msg, hint);
        else
                snprintf(err, errlen, "%s:%d: %s", file, config_error_line(lc), msg);
}

static int load(config_t *lc, bool ok, const char *name, const char *text, char *err, size_t errlen,
                Config **ret) {
        _cleanup_(config_freep) Config *c = NULL;
        Ctx ctx = { .name = name, .err = err, .errlen = errlen };
        int r;

        if (!ok) {
                if (config_error_type(lc) == CONFIG_ERR_FILE_IO) {
                        snprintf(err, errlen, "%s: cannot read the file", config_error_file(lc) ?: name);
                        return -EIO;
                }
                parse_error(lc, name, text, err, errlen);
                return -EINVAL;
        }
        c = calloc(1, sizeof(*c));
        if (!c || !(c->file = strdup(name)))
                return -ENOMEM;
        r = parse_root(&ctx, config_root_setting(lc), c);
        if (r == -ENOMEM)
                snprintf(err, errlen, "%s: out of memory", name);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, char *err, size_t errlen, Config **ret) {
        struct stat st;
        config_t lc;
        FILE *f;
        int fd, r;

        /* Open it ourselves: libconfig reports every failure to open as a
         * parse error without errno, and its scanner exits the process on a
         * directory. Never waits on a FIFO; only a regular file is read. */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(err, errlen, "%s: %s", path,
                         S_ISDIR(st.st_mode) ? "is a directory, not a config file" : "is not a regular file");
                close(fd);
                return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        }
        f = fdopen(fd, "re");
        if (!f) {
                r = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                close(fd);
                return r;
        }
        config_init(&lc);
        r = load(&lc, config_read(&lc, f) == CONFIG_TRUE, path, NULL, err, errlen, ret);
        config_destroy(&lc);
        fclose(f);
        return r;
}

int config_load_string(const char *text, const char *name, char *err, size_t errlen, Config **ret) {
        config_t lc;
        int r;

        config_init(&lc);
        r = load(&lc, config_read_string(&lc, text) == CONFIG_TRUE, name, text, err, errlen, ret);
        config_destroy(&lc);
        return r;
}

int config_load_builtin(char *err, size_t errlen, Config **ret) {
        return config_load_string(config_builtin_text, "<built-in>", err, errlen, ret);
}

/* The schema's names of its enums, and freeing a remote's entry. */
const char *remote_layout_name(CacheLayout l) {
        return l == CACHE_LAYOUT_REMOTE_FLAT ? "flat" : "subdirs";
}

const char *cache_clock_name(CacheClock c) {
        return c == CACHE_CLOCK_ATIME ? "atime" : c == CACHE_CLOCK_AUTO ? "auto" : "mtime";
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

uint64_t threshold_resolve(const Threshold *t, uint64_t total) {
        switch (t->kind) {
        case THRESHOLD_ABSOLUTE:
                return t->value;
        case THRESHOLD_PERCENT:
                return (uint64_t) ((double) total * t->percent / 100.0);
        default:
                return 0;
        }
}

const VolumeConfig *config_volume(const Config *c, const char *mount) {
        for (size_t i = 0; i < c->n_volume_overrides; i++)
                if (strcmp(c->volume_overrides[i].mount, mount) == 0)
                        return &c->volume_overrides[i];
        return &c->volume_defaults;
}

const CacheConfig *config_cache(const Config *c, const char *name) {
        for (size_t i = 0; i < c->n_caches; i++)
                if (strcmp(c->caches[i].name, name) == 0)
                        return &c->caches[i];
        return NULL;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        free(c->file);
        free(c->socket_path);
        free(c->state_dir);
        free(c->admin_group);
        if (c->alert_argv)
                for (char **a = c->alert_argv; *a; a++)
                        free(*a);
        free(c->alert_argv);
        for (size_t i = 0; i < c->n_volume_overrides; i++)
                volume_config_done(&c->volume_overrides[i]);
        free(c->volume_overrides);
        for (size_t i = 0; i < c->n_caches; i++) {
                free(c->caches[i].name);
                free(c->caches[i].path);
                free(c->caches[i].require_mount);
                free_strv(c->caches[i].ccache_conf_allow);
        }
        free(c->caches);
        for (size_t i = 0; i < c->n_remotes; i++)
                remote_config_done(&c->remotes[i]);
        free(c->remotes);
        free(c);
        return NULL;
}
