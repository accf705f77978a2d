/* SPDX-License-Identifier: MIT */
/* libconfig → immutable Config, with every error pointing at the line of the
 * setting at fault. The only file that includes libconfig.h. Non-logging. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "base/human.h"
#include "ccache/ccache-conf.h"
#include "config/config-hint.h"
#include "config/config.h"
#include "config/remote-url.h"
#include "os/secret-file.h"

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

typedef struct Ctx {
        const char *name;       /* file name for messages */
        char *err;
        size_t errlen;
} Ctx;

static const char *const top_keys[] = {
        "socket", "state_dir", "admin_group", "alert_command", "alert_timeout", "alert_min_interval",
        "audit_interval", "volumes", "caches", "remotes", NULL,
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

_printf_(3, 4)
static int fail(Ctx *ctx, const config_setting_t *s, const char *fmt, ...) {
        const char *file = s ? config_setting_source_file(s) : NULL;
        size_t n;
        va_list ap;

        if (!file)
                file = ctx->name;
        if (s && config_setting_source_line(s) > 0)
                n = (size_t) snprintf(ctx->err, ctx->errlen, "%s:%u: ", file,
                                      config_setting_source_line(s));
        else
                n = (size_t) snprintf(ctx->err, ctx->errlen, "%s: ", file);
        if (n < ctx->errlen) {
                va_start(ap, fmt);
                vsnprintf(ctx->err + n, ctx->errlen - n, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* "caches[1].max_size": where a setting sits, for messages. */
static const char *setting_path(const config_setting_t *s, char *buf, size_t len) {
        const config_setting_t *chain[16];
        size_t n = 0, used = 0;

        for (; s && !config_setting_is_root(s) && n < ELEMENTSOF(chain); s = config_setting_parent(s))
                chain[n++] = s;
        buf[0] = '\0';
        while (n-- > 0 && used < len) {
                const char *name = config_setting_name(chain[n]);
                int k = name ? snprintf(buf + used, len - used, "%s%s", used ? "." : "", name)
                             : snprintf(buf + used, len - used, "[%d]", config_setting_index(chain[n]));
                if (k < 0)
                        break;
                used += (size_t) k;
        }
        return buf;
}

static int check_keys(Ctx *ctx, const config_setting_t *group, const char *const *allowed) {
        for (int i = 0; i < config_setting_length(group); i++) {
                const config_setting_t *s = config_setting_get_elem(group, (unsigned) i);
                const char *name = config_setting_name(s);
                size_t k;

                for (k = 0; allowed[k]; k++)
                        if (strcmp(name, allowed[k]) == 0)
                                break;
                if (!allowed[k]) {
                        char where[256];
                        return fail(ctx, s, "unknown setting '%s'", setting_path(s, where, sizeof(where)));
                }
        }
        return 0;
}

/* Each getter returns 1 if the key is present and valid, 0 if absent,
 * -EINVAL (message written) if present and wrong. */
static int get_setting(Ctx *ctx, const config_setting_t *group, const char *key, int type,
                       const char *what, const config_setting_t **ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];

        if (!s)
                return 0;
        if (config_setting_type(s) != type &&
            !(type == CONFIG_TYPE_FLOAT && config_setting_is_number(s)))
                return fail(ctx, s, "'%s' must be %s", setting_path(s, where, sizeof(where)), what);
        *ret = s;
        return 1;
}

static int get_string(Ctx *ctx, const config_setting_t *group, const char *key, const char *example,
                      const config_setting_t **ret_setting, const char **ret) {
        const config_setting_t *s = NULL;
        char what[128];
        int r;

        snprintf(what, sizeof(what), "a string, e.g. %s", example);
        r = get_setting(ctx, group, key, CONFIG_TYPE_STRING, what, &s);
        if (r <= 0)
                return r;
        *ret = config_setting_get_string(s);
        if (ret_setting)
                *ret_setting = s;
        return 1;
}

static int require(Ctx *ctx, const config_setting_t *group, const char *key, int r) {
        char where[256];

        if (r != 0)
                return r;
        if (config_setting_is_root(group))
                return fail(ctx, NULL, "missing required setting '%s'", key);
        return fail(ctx, group, "%s: missing required setting '%s'",
                    setting_path(group, where, sizeof(where)), key);
}

/* Absolute, with "//" and a trailing "/" folded; "." and ".." refused so that
 * two spellings of one directory cannot slip past the overlap check. */
static int get_path(Ctx *ctx, const config_setting_t *group, const char *key, char **ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *out, *o;
        int r;

        r = get_string(ctx, group, key, "\"/var/cache/ccache\"", &s, &v);
        if (r <= 0)
                return r;
        setting_path(s, where, sizeof(where));
        if (v[0] != '/')
                return fail(ctx, s, "'%s' must be an absolute path, not \"%s\"", where, v);
        out = o = malloc(strlen(v) + 1);
        if (!out)
                return -ENOMEM;
        for (const char *p = v; *p;) {
                size_t len;

                while (*p == '/')
                        p++;
                len = strcspn(p, "/");
                if (len == 0)
                        break;
                if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
                        free(out);
                        return fail(ctx, s, "'%s' must not contain '.' or '..' components: \"%s\"", where, v);
                }
                *o++ = '/';
                memcpy(o, p, len);
                o += len;
                p += len;
        }
        if (o == out)
                *o++ = '/';
        *o = '\0';
        *ret = out;
        return 1;
}

/* A size into *ret, and as written into ret_text (CONFIG_SIZE_TEXT_MAX bytes; may be NULL). */
static int get_size(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret, char *ret_text) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        int r;

        r = get_string(ctx, group, key, "\"100G\"", &s, &v);
        if (r <= 0)
                return r;
        if (parse_size(v, ret) < 0 || strlen(v) >= CONFIG_SIZE_TEXT_MAX)
                return fail(ctx, s, "'%s': invalid size \"%s\" (a positive number and a unit: "
                            "k, M, G, T for powers of 1000, Ki, Mi, Gi, Ti for powers of 1024)",
                            setting_path(s, where, sizeof(where)), v);
        if (ret_text)
                snprintf(ret_text, CONFIG_SIZE_TEXT_MAX, "%s", v);
        return 1;
}

static int get_duration(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_zero,
                        usec_t *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        usec_t u;
        int r;

        r = get_string(ctx, group, key, "\"10s\"", &s, &v);
        if (r <= 0)
                return r;
        if (parse_duration(v, &u) < 0)
                return fail(ctx, s, "'%s': invalid duration \"%s\" (a number and a unit: ms, s, m, h, d)",
                            setting_path(s, where, sizeof(where)), v);
        if (u == 0 && !allow_zero)
                return fail(ctx, s, "'%s' must be longer than zero", setting_path(s, where, sizeof(where)));
        *ret = u;
        return 1;
}

static int get_threshold(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_count,
                         Threshold *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        int r;

        r = get_string(ctx, group, key, allow_count ? "\"10%\" or \"100000\"" : "\"10%\" or \"20G\"", &s, &v);
        if (r <= 0)
                return r;
        if (config_parse_threshold(v, allow_count, ret) < 0)
                return fail(ctx, s, "'%s': invalid threshold \"%s\" (%s)", setting_path(s, where, sizeof(where)), v,
                            allow_count ? "a percentage of all inodes such as \"10%\", or a count"
                                        : "a percentage of the volume such as \"10%\", or a size such as \"20G\"");
        return 1;
}

static int get_mode(Ctx *ctx, const config_setting_t *group, const char *key, mode_t *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *end;
        unsigned long m;
        int r;

        r = get_string(ctx, group, key, "\"1777\"", &s, &v);
        if (r <= 0)
                return r;
        errno = 0;
        m = strtoul(v, &end, 8);
        if (!*v || *end || errno != 0 || m > 07777 || v[strspn(v, "01234567")] != '\0')
                return fail(ctx, s, "'%s': \"%s\" is not an octal permission mode such as \"1777\"",
                            setting_path(s, where, sizeof(where)), v);
        *ret = (mode_t) m;
        return 1;
}

static int get_fraction(Ctx *ctx, const config_setting_t *group, const char *key, double *ret) {
        const config_setting_t *s = NULL;
        char where[256];
        double v;
        int r;

        r = get_setting(ctx, group, key, CONFIG_TYPE_FLOAT, "a number, e.g. 0.9", &s);
        if (r <= 0)
                return r;
        v = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                        : (double) config_setting_get_int64(s);
        if (!(v > 0 && v <= 1))
                return fail(ctx, s, "'%s' must be greater than 0 and at most 1, not %g",
                            setting_path(s, where, sizeof(where)), v);
        *ret = v;
        return 1;
}

/* Is s a whole number from 1 to UINT32_MAX? Into *ret if so. */
static bool positive_u32(const config_setting_t *s, uint32_t *ret) {
        long long v;

        if ((config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64) ||
            (v = config_setting_get_int64(s)) < 1 || v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

/* A positive count, or the string "auto" (stored as 0). */
static int get_count_or_auto(Ctx *ctx, const config_setting_t *group, const char *key, uint32_t *ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];

        if (!s)
                return 0;
        if (config_setting_type(s) == CONFIG_TYPE_STRING && strcmp(config_setting_get_string(s), "auto") == 0) {
                *ret = 0;
                return 1;
        }
        if (!positive_u32(s, ret))
                return fail(ctx, s, "'%s' must be a positive whole number or \"auto\"",
                            setting_path(s, where, sizeof(where)));
        return 1;
}

static int get_bool(Ctx *ctx, const config_setting_t *group, const char *key, bool *ret) {
        const config_setting_t *s = NULL;
        int r;

        r = get_setting(ctx, group, key, CONFIG_TYPE_BOOL, "true or false", &s);
        if (r <= 0)
                return r;
        *ret = config_setting_get_bool(s);
        return 1;
}

/* A duration within [min, max] (the alarms' windows). */
static int get_window(Ctx *ctx, const config_setting_t *group, const char *key, usec_t min, usec_t max,
                      const char *why, usec_t *ret) {
        char where[256], lo[32], hi[32];
        usec_t u;
        int r;

        r = get_duration(ctx, group, key, true, &u);
        if (r <= 0)
                return r;
        if (u < min || u > max) {
                const config_setting_t *s = config_setting_get_member(group, key);
                return fail(ctx, s, "'%s' must be between %s and %s (%s)", setting_path(s, where, sizeof(where)),
                            format_duration(min, lo, sizeof(lo)), format_duration(max, hi, sizeof(hi)), why);
        }
        *ret = u;
        return 1;
}

/* A percentage from 0 to 100 ("5%", "0.5%"), as a fraction. */
static int get_percent(Ctx *ctx, const config_setting_t *group, const char *key, double *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *end;
        double p;
        int r;

        r = get_string(ctx, group, key, "\"5%\"", &s, &v);
        if (r <= 0)
                return r;
        errno = 0;
        p = strtod(v, &end);
        if (!isdigit((unsigned char) v[0]) || errno != 0 || end == v || strcmp(end, "%") != 0 || !isfinite(p) ||
            p < 0 || p > 100)
                return fail(ctx, s, "'%s': invalid percentage \"%s\" (from \"0%%\" to \"100%%\", e.g. \"5%%\")",
                            setting_path(s, where, sizeof(where)), v);
        *ret = p / 100.0;
        return 1;
}

/* A whole number from 1 to UINT32_MAX. */
static int get_positive(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];
        uint32_t v;

        if (!s)
                return 0;
        if (!positive_u32(s, &v))
                return fail(ctx, s, "'%s' must be a whole number from 1 to %u, e.g. 50",
                            setting_path(s, where, sizeof(where)), UINT32_MAX);
        *ret = v;
        return 1;
}

static int parse_alarms(Ctx *ctx, const config_setting_t *g, CacheConfig *cc) {
        int r;

        cc->silent_window_usec = DEFAULT_SILENT_WINDOW_USEC;
        cc->silent_min_calls = DEFAULT_SILENT_MIN_CALLS;
        cc->silent_hit_rate = DEFAULT_SILENT_HIT_RATE;
        cc->idle_after_usec = DEFAULT_IDLE_AFTER_USEC;
        cc->remote_errors_window_usec = DEFAULT_REMOTE_ERRORS_WINDOW_USEC;
        if ((r = get_window(ctx, g, "silent_window", CONFIG_SILENT_WINDOW_MIN, CONFIG_SILENT_WINDOW_MAX,
                            "the finest history is a minute; it holds 90 days, which must hold the window twice "
                            "and the day before it", &cc->silent_window_usec)) < 0 ||
            (r = get_positive(ctx, g, "silent_min_calls", &cc->silent_min_calls)) < 0 ||
            (r = get_percent(ctx, g, "silent_hit_rate", &cc->silent_hit_rate)) < 0 ||
            (r = get_window(ctx, g, "idle_after", CONFIG_IDLE_AFTER_MIN, CONFIG_IDLE_AFTER_MAX,
                            "the finest history is a minute; it holds 90 days", &cc->idle_after_usec)) < 0 ||
            (r = get_window(ctx, g, "remote_errors_window", CONFIG_REMOTE_ERRORS_WINDOW_MIN,
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

/* ccache_conf_allow = [ "base_dir", ... ]: names of ccache settings. */
static int get_conf_allow(Ctx *ctx, const config_setting_t *group, char ***ret) {
        const config_setting_t *s = config_setting_get_member(group, "ccache_conf_allow");
        char where[256], why[256], **v;
        int n;

        if (!s)
                return 0;
        setting_path(s, where, sizeof(where));
        if (!config_setting_is_array(s) && !config_setting_is_list(s))
                return fail(ctx, s, "'%s' must be a list of ccache setting names, e.g. [ \"base_dir\" ]", where);
        n = config_setting_length(s);
        v = calloc((size_t) n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *key = config_setting_get_string(e), *refusal;
                int r;

                if (!key)
                        r = fail(ctx, e, "'%s' must be a list of ccache setting names, e.g. [ \"base_dir\" ]", where);
                else if ((refusal = conf_allow_refusal(key, why, sizeof(why))))
                        r = fail(ctx, e, "'%s': \"%s\" %s", where, key, refusal);
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
                return fail(ctx, s, "'alert_command' must be a path or a list of strings, "
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
                        return v ? -ENOMEM : fail(ctx, e, "'alert_command' arguments must be strings");
                }
        }
        if (argv[0][0] != '/') {
                int r = fail(ctx, s, "'alert_command' must start with an absolute path (it is run "
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
        return fail(ctx, config_setting_get_member(group, crit_key) ?: group,
                    "'%s' must be below '%s' (critical is the lower free-space level)", crit_key, warn_key);
}

static int parse_volume_limits(Ctx *ctx, const config_setting_t *g, VolumeConfig *v) {
        int r;

        if ((r = get_threshold(ctx, g, "warn_free", false, &v->warn_free)) < 0 ||
            (r = get_threshold(ctx, g, "crit_free", false, &v->crit_free)) < 0 ||
            (r = get_threshold(ctx, g, "warn_free_inodes", true, &v->warn_free_inodes)) < 0 ||
            (r = get_threshold(ctx, g, "crit_free_inodes", true, &v->crit_free_inodes)) < 0 ||
            (r = get_threshold(ctx, g, "min_free", false, &v->min_free)) < 0 ||
            (r = get_threshold(ctx, g, "hysteresis", false, &v->hysteresis)) < 0 ||
            (r = get_duration(ctx, g, "full_within", true, &v->full_within_usec)) < 0)
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

        r = get_setting(ctx, root, "volumes", CONFIG_TYPE_GROUP, "a group: volumes = { ... };", &g);
        if (r <= 0)
                return r;
        if ((r = check_keys(ctx, g, volumes_keys)) < 0 ||
            (r = get_duration(ctx, g, "check_interval", false, &c->check_interval_usec)) < 0 ||
            (r = parse_volume_limits(ctx, g, &c->volume_defaults)) < 0)
                return r;

        r = get_setting(ctx, g, "overrides", CONFIG_TYPE_LIST,
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
                        return fail(ctx, o, "'volumes.overrides' entries must be groups: { mount = \"/mnt/x\"; ... }");
                *v = c->volume_defaults;
                v->mount = NULL;
                c->n_volume_overrides++;
                if ((r = check_keys(ctx, o, override_keys)) < 0 ||
                    (r = require(ctx, o, "mount", get_path(ctx, o, "mount", &v->mount))) < 0 ||
                    (r = parse_volume_limits(ctx, o, v)) < 0)
                        return r;
                for (size_t k = 0; k + 1 < c->n_volume_overrides; k++)
                        if (strcmp(c->volume_overrides[k].mount, v->mount) == 0)
                                return fail(ctx, config_setting_get_member(o, "mount"),
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
                return fail(ctx, g, "'caches' entries must be groups: { name = \"x\"; path = \"/x\"; max_size = \"10G\"; }");
        if ((r = check_keys(ctx, g, cache_keys)) < 0 ||
            (r = require(ctx, g, "name", get_string(ctx, g, "name", "\"mi210\"", &s, &name))) < 0)
                return r;
        if (!valid_name(name))
                return fail(ctx, s, "cache name \"%s\" must be 1-%d letters, digits, '.', '_' or '-'",
                            name, CONFIG_NAME_MAX);
        if (!(cc->name = strdup(name)))
                return -ENOMEM;
        if ((r = require(ctx, g, "path", get_path(ctx, g, "path", &cc->path))) < 0 ||
            (r = require(ctx, g, "max_size", get_size(ctx, g, "max_size", &cc->max_size_bytes, cc->max_size_text))) < 0 ||
            (r = get_mode(ctx, g, "mode", &cc->mode)) < 0 ||
            (r = get_fraction(ctx, g, "trim_to", &cc->trim_to)) < 0 ||
            (r = get_path(ctx, g, "require_mount", &cc->require_mount)) < 0 ||
            (r = get_bool(ctx, g, "ccache_conf", &cc->manage_ccache_conf)) < 0 ||
            (r = get_conf_allow(ctx, g, &cc->ccache_conf_allow)) < 0 ||
            (r = get_count_or_auto(ctx, g, "max_watches", &cc->max_watches)) < 0 ||
            (r = get_percent(ctx, g, "regret_alert", &cc->regret_alert)) < 0 ||
            (r = parse_alarms(ctx, g, cc)) < 0)
                return r;
        if (strcmp(cc->path, "/") == 0)
                return fail(ctx, config_setting_get_member(g, "path"), "cache path must not be '/'");
        if (cc->require_mount && !path_contains(cc->require_mount, cc->path))
                return fail(ctx, config_setting_get_member(g, "require_mount"),
                            "require_mount '%s' must be the cache path or a directory above it ('%s')",
                            cc->require_mount, cc->path);
        return 0;
}

static int parse_caches(Ctx *ctx, const config_setting_t *root, Config *c) {
        const config_setting_t *list;
        int r;

        r = get_setting(ctx, root, "caches", CONFIG_TYPE_LIST,
                        "a list of groups: caches = ( { name = \"x\"; ... } );", &list);
        if ((r = require(ctx, root, "caches", r)) < 0)
                return r;
        if (config_setting_length(list) == 0)
                return fail(ctx, list, "'caches' is empty: there is nothing to keep");
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
                                return fail(ctx, config_setting_get_member(g, "name"),
                                            "cache name \"%s\" is used twice", cc->name);
                        if (strcmp(o->path, cc->path) == 0)
                                return fail(ctx, config_setting_get_member(g, "path"),
                                            "caches '%s' and '%s' have the same path '%s'",
                                            o->name, cc->name, cc->path);
                        if (path_contains(o->path, cc->path) || path_contains(cc->path, o->path))
                                return fail(ctx, config_setting_get_member(g, "path"),
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
        r = get_path(ctx, g, "password_file", &rc->password_file);
        if (r <= 0)
                return r;
        r = secret_file_check(rc->password_file, why, sizeof(why));
        if (r < 0)
                return fail(ctx, s, "password_file '%s' %s", rc->password_file, why);
        return 1;
}

/* Only for redis: the user the server runs as, who alone (with root) may
 * hold the port the password is sent to (remote-redis.h). Looked up now,
 * never on the loop. The default, "redis", may be missing: root only. */
static int get_server_user(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        const config_setting_t *s = NULL;
        const struct passwd *pw;
        const char *v;
        int r;

        r = get_string(ctx, g, "server_user", "\"redis\"", &s, &v);
        if (r < 0)
                return r;
        if (!(rc->server_user = strdup(r > 0 ? v : REMOTE_DEFAULT_SERVER_USER)))
                return -ENOMEM;
        errno = 0;
        pw = getpwnam(rc->server_user);
        if (pw) {
                rc->server_uid = pw->pw_uid;
                rc->server_uid_known = true;
        } else if (r > 0)
                return fail(ctx, s, "server_user: no user \"%s\" on this host", v);
        return 0;
}

/* One of names (NULL-terminated), by its index; absent: *ret untouched. */
static int get_choice(Ctx *ctx, const config_setting_t *g, const char *key, const char *const *names, int *ret) {
        const config_setting_t *s = NULL;
        char list[128] = "";
        const char *v;
        int r;

        r = get_string(ctx, g, key, "\"auto\"", &s, &v);
        if (r <= 0)
                return r;
        for (int i = 0; names[i]; i++) {
                if (strcmp(v, names[i]) == 0) {
                        *ret = i;
                        return 1;
                }
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", i ? ", " : "", names[i]);
        }
        return fail(ctx, s, "'%s' must be one of %s, not \"%s\"", key, list, v);
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
        r = get_size(ctx, g, "max_size", &cc->max_size_bytes, cc->max_size_text);
        if (r == 0)
                return fail(ctx, g, "remote %s: a file: remote needs max_size (ccache never trims it: the keeper "
                            "does, to this cap), e.g. max_size = \"500G\";", rc->name);
        if (r < 0 || (r = parse_alarms(ctx, g, cc)) < 0 || (r = get_fraction(ctx, g, "trim_to", &cc->trim_to)) < 0 ||
            (r = get_choice(ctx, g, "layout", (const char *const[]) { "subdirs", "flat", NULL }, &layout)) < 0 ||
            (r = get_choice(ctx, g, "clock", (const char *const[]) { "mtime", "atime", "auto", NULL }, &clock)) < 0 ||
            (r = get_choice(ctx, g, "watch", (const char *const[]) { "inotify", "poll", "auto", NULL }, &watch)) < 0 ||
            (r = get_mode(ctx, g, "mode", &cc->mode)) < 0 ||
            (r = get_window(ctx, g, "rescan_interval", REMOTE_RESCAN_MIN_USEC, REMOTE_RESCAN_MAX_USEC,
                            "a paced rescan keeps the figures within it of the truth", &cc->rescan_interval_usec)) < 0)
                return r;
        cc->layout = layout ? CACHE_LAYOUT_REMOTE_FLAT : CACHE_LAYOUT_REMOTE_SUBDIRS;
        cc->clock = (CacheClock) clock;
        cc->watch_mode = (CacheWatchMode) watch;
        if (strcmp(cc->path, "/") == 0)
                return fail(ctx, config_setting_get_member(g, "url"), "remote %s: a file: remote must not be '/'", rc->name);
        return 0;
}

static int parse_remote(Ctx *ctx, const config_setting_t *g, RemoteConfig *rc) {
        const config_setting_t *s = NULL;
        const char *v;
        char why[256];
        int r;

        if (!config_setting_is_group(g))
                return fail(ctx, g, "each entry of 'remotes' must be a group: { name = \"x\"; url = \"...\"; }");
        if ((r = check_keys(ctx, g, remote_keys)) < 0)
                return r;
        r = get_string(ctx, g, "name", "\"team-redis\"", &s, &v);
        if ((r = require(ctx, g, "name", r)) < 0)
                return r;
        if (!*v || strlen(v) > CONFIG_NAME_MAX || v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")])
                return fail(ctx, s, "remote name \"%s\" must be 1 to %d of A-Z a-z 0-9 . _ -", v, CONFIG_NAME_MAX);
        if (!(rc->name = strdup(v)))
                return -ENOMEM;
        r = get_string(ctx, g, "url", "\"redis://127.0.0.1:6379\"", &s, &v);
        if ((r = require(ctx, g, "url", r)) < 0)
                return r;
        if (strlen(v) > REMOTE_URL_MAX)
                return fail(ctx, s, "remote %s: the url is longer than %d bytes", rc->name, REMOTE_URL_MAX);
        r = remote_url_parse(v, &rc->u, why, sizeof(why));
        if (r == -EINVAL)
                return fail(ctx, s, "remote %s: invalid url: %s", rc->name, why);
        if (r < 0 || !(rc->url = strdup(v)))
                return -ENOMEM;
        for (const char *const *k = rc->u.kind == REMOTE_FILE ? redis_only_keys : file_only_keys; *k; k++)
                if ((s = config_setting_get_member(g, *k)))
                        return fail(ctx, s, "'%s' is for %s remotes only", *k,
                                    rc->u.kind == REMOTE_FILE ? "redis" : "file:");
        if (rc->u.kind == REMOTE_FILE)
                return parse_file_remote(ctx, g, rc);
        rc->poll_interval_usec = REMOTE_DEFAULT_POLL_USEC;
        rc->timeout_usec = REMOTE_DEFAULT_TIMEOUT_USEC;
        rc->round_timeout_usec = REMOTE_DEFAULT_ROUND_TIMEOUT_USEC;
        rc->warn_free = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = 10 };
        rc->crit_free = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = 5 };
        if ((r = get_password_file(ctx, g, rc)) < 0 ||
            (r = get_duration(ctx, g, "poll_interval", false, &rc->poll_interval_usec)) < 0 ||
            (r = get_duration(ctx, g, "timeout", false, &rc->timeout_usec)) < 0 ||
            (r = get_duration(ctx, g, "round_timeout", false, &rc->round_timeout_usec)) < 0 ||
            (r = get_server_user(ctx, g, rc)) < 0 ||
            (r = get_threshold(ctx, g, "warn_free", false, &rc->warn_free)) < 0 ||
            (r = get_threshold(ctx, g, "crit_free", false, &rc->crit_free)) < 0 ||
            (r = check_order(ctx, g, "warn_free", &rc->warn_free, "crit_free", &rc->crit_free)) < 0)
                return r;
        if (rc->round_timeout_usec < rc->timeout_usec)
                return fail(ctx, config_setting_get_member(g, "round_timeout") ?: g,
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
                        return fail(ctx, url, "remote %s (%s) and cache '%s' (%s) overlap: a share must be a "
                                    "directory of its own", rc->name, p, c->caches[k].name, c->caches[k].path);
        for (size_t k = 0; k + 1 < c->n_remotes; k++) {
                const RemoteConfig *o = &c->remotes[k];

                if (o->u.kind == REMOTE_FILE && (path_contains(o->u.path, p) || path_contains(p, o->u.path)))
                        return fail(ctx, url, "remotes %s (%s) and %s (%s) overlap: a share must be a directory of "
                                    "its own", o->name, o->u.path, rc->name, p);
        }
        return 0;
}

static int parse_remotes(Ctx *ctx, const config_setting_t *root, Config *c) {
        const config_setting_t *list;
        int r, n;

        r = get_setting(ctx, root, "remotes", CONFIG_TYPE_LIST,
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
                                return fail(ctx, config_setting_get_member(g, "name"),
                                            "remote name \"%s\" is used twice", rc->name);
                if ((r = check_share_overlap(ctx, g, c, rc)) < 0)
                        return r;
        }
        return 0;
}

static int get_alert_min_interval(Ctx *ctx, const config_setting_t *root, usec_t *ret) {
        int r = get_duration(ctx, root, "alert_min_interval", true, ret);

        if (r > 0 && *ret > MAX_ALERT_MIN_INTERVAL_USEC)
                return fail(ctx, config_setting_get_member(root, "alert_min_interval"),
                            "'alert_min_interval' must be at most 1d (a recovery waits for the end of the interval)");
        return r;
}

static int parse_root(Ctx *ctx, const config_setting_t *root, Config *c) {
        const char *v;
        int r;

        c->alert_timeout_usec = DEFAULT_ALERT_TIMEOUT_USEC;
        c->alert_min_interval_usec = DEFAULT_ALERT_MIN_INTERVAL_USEC;
        c->audit_interval_usec = DEFAULT_AUDIT_INTERVAL_USEC;

        if ((r = check_keys(ctx, root, top_keys)) < 0)
                return r;
        r = get_path(ctx, root, "socket", &c->socket_path);
        if (r < 0)
                return r;
        if (r == 0 && !(c->socket_path = strdup(CONFIG_DEFAULT_SOCKET)))
                return -ENOMEM;
        r = get_path(ctx, root, "state_dir", &c->state_dir);
        if (r < 0)
                return r;
        if (r == 0 && !(c->state_dir = strdup(CONFIG_DEFAULT_STATE_DIR)))
                return -ENOMEM;
        r = get_string(ctx, root, "admin_group", "\"root\"", NULL, &v);
        if (r < 0)
                return r;
        if (!(c->admin_group = strdup(r > 0 ? v : "root")))
                return -ENOMEM;
        if ((r = get_alert_command(ctx, root, &c->alert_argv)) < 0 ||
            (r = get_duration(ctx, root, "alert_timeout", false, &c->alert_timeout_usec)) < 0 ||
            (r = get_alert_min_interval(ctx, root, &c->alert_min_interval_usec)) < 0 ||
            (r = get_duration(ctx, root, "audit_interval", true, &c->audit_interval_usec)) < 0 ||
            (r = parse_volumes(ctx, root, c)) < 0 ||
            (r = parse_caches(ctx, root, c)) < 0 ||
            (r = parse_remotes(ctx, root, c)) < 0)
                return r;
        /* The daemon writes there: never into a cache it keeps. */
        for (size_t i = 0; i < c->n_caches; i++)
                if (path_contains(c->caches[i].path, c->state_dir))
                        return fail(ctx, config_setting_get_member(root, "state_dir"),
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
        config_t lc;
        FILE *f;
        int r;

        /* Open it ourselves: libconfig reports every failure to open as a
         * parse error without errno. */
        f = fopen(path, "re");
        if (!f) {
                r = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
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
const char *remote_kind_name(RemoteKind k) {
        return k == REMOTE_FILE ? "file" : "redis";
}

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

int config_parse_threshold(const char *s, bool allow_count, Threshold *ret) {
        size_t n = strlen(s);

        if (n >= CONFIG_SIZE_TEXT_MAX)
                return -EINVAL;   /* no one writes a size or a percentage this long */
        if (n > 1 && s[n - 1] == '%') {
                char *end;
                double p;

                errno = 0;
                p = strtod(s, &end);
                if (errno != 0 || end != s + n - 1 || !isfinite(p) || p <= 0 || p >= 100 ||
                    !isdigit((unsigned char) s[0]))
                        return -EINVAL;
                *ret = (Threshold) { .kind = THRESHOLD_PERCENT, .percent = p };
                return 0;
        }
        if (allow_count && n > 0 && strspn(s, "0123456789") == n) {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(s, &end, 10);
                if (errno != 0 || v == 0)
                        return -EINVAL;
                *ret = (Threshold) { .kind = THRESHOLD_ABSOLUTE, .value = v };
                memcpy(ret->text, s, n + 1);
                return 0;
        }
        uint64_t v;
        if (parse_size(s, &v) < 0)
                return -EINVAL;
        *ret = (Threshold) { .kind = THRESHOLD_ABSOLUTE, .value = v };
        memcpy(ret->text, s, n + 1);
        return 0;
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

const RemoteConfig *config_remote(const Config *c, const char *name) {
        for (size_t i = 0; i < c->n_remotes; i++)
                if (strcmp(c->remotes[i].name, name) == 0)
                        return &c->remotes[i];
        return NULL;
}

const CacheConfig *config_cache(const Config *c, const char *name) {
        for (size_t i = 0; i < c->n_caches; i++)
                if (strcmp(c->caches[i].name, name) == 0)
                        return &c->caches[i];
        return NULL;
}

/* A string as libconfig reads it back: quotes, backslashes and control
 * characters escaped. */
static void dump_quoted(FILE *f, const char *v) {
        fputc('"', f);
        for (; *v; v++)
                if (*v == '"' || *v == '\\')
                        fprintf(f, "\\%c", *v);
                else if ((unsigned char) *v < 0x20 || *v == 0x7f)
                        fprintf(f, "\\x%02x", (unsigned) (unsigned char) *v);
                else
                        fputc(*v, f);
        fputc('"', f);
}

static void dump_string(FILE *f, const char *indent, const char *key, const char *v) {
        fprintf(f, "%s%s = ", indent, key);
        dump_quoted(f, v);
        fputs(";\n", f);
}

static void dump_duration(FILE *f, const char *indent, const char *key, usec_t u) {
        if (u % USEC_PER_SEC == 0)
                fprintf(f, "%s%s = \"%llus\";\n", indent, key, (unsigned long long) (u / USEC_PER_SEC));
        else
                fprintf(f, "%s%s = \"%llums\";\n", indent, key, (unsigned long long) (u / USEC_PER_MSEC));
}

/* v * scale in the fewest significant digits that strtod reads back, divided
 * by scale, as exactly v (how the parsers read fractions and percentages);
 * without an exponent when one of up to 17 digits does. */
static char *format_exact(double v, double scale, char *buf, size_t len) {
        int first = 0;

        for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, len, "%.*g", prec, v * scale);
                if (strtod(buf, NULL) / scale != v)
                        continue;
                if (!strchr(buf, 'e'))
                        return buf;
                if (!first)
                        first = prec;
        }
        snprintf(buf, len, "%.*g", first ? first : 17, v * scale);
        return buf;
}

/* A size as configured, then its count: `max_size = "1.5Ti";  # 1649267441664 bytes`. */
static void dump_size(FILE *f, const char *indent, const char *key, const char *text, uint64_t value,
                      const char *unit) {
        fprintf(f, "%s%s = ", indent, key);
        dump_quoted(f, text);
        fprintf(f, ";  # %llu %s\n", (unsigned long long) value, unit);
}

/* Room for any %g of a double: format_exact's buffers. */
#define EXACT_MAX 320

static void dump_threshold(FILE *f, const char *indent, const char *key, const Threshold *t, const char *unit) {
        char buf[EXACT_MAX];

        if (t->kind == THRESHOLD_PERCENT)
                fprintf(f, "%s%s = \"%s%%\";\n", indent, key, format_exact(t->percent, 1, buf, sizeof(buf)));
        else if (t->kind == THRESHOLD_ABSOLUTE)
                dump_size(f, indent, key, t->text, t->value, unit);
}

static void dump_limits(FILE *f, const char *indent, const VolumeConfig *v) {
        dump_threshold(f, indent, "warn_free", &v->warn_free, "bytes");
        dump_threshold(f, indent, "crit_free", &v->crit_free, "bytes");
        dump_threshold(f, indent, "warn_free_inodes", &v->warn_free_inodes, "inodes");
        dump_threshold(f, indent, "crit_free_inodes", &v->crit_free_inodes, "inodes");
        dump_threshold(f, indent, "min_free", &v->min_free, "bytes");
        dump_threshold(f, indent, "hysteresis", &v->hysteresis, "bytes");
        dump_duration(f, indent, "full_within", v->full_within_usec);
}

static void dump_strv(FILE *f, const char *indent, const char *key, char *const *v) {
        fprintf(f, "%s%s = [ ", indent, key);
        for (char *const *a = v; *a; a++) {
                fputs(a == v ? "" : ", ", f);
                dump_quoted(f, *a);
        }
        fputs(" ];\n", f);
}

static void dump_cache(FILE *f, const CacheConfig *cc) {
        char buf[EXACT_MAX];

        dump_string(f, "    ", "name", cc->name);
        dump_string(f, "    ", "path", cc->path);
        dump_size(f, "    ", "max_size", cc->max_size_text, cc->max_size_bytes, "bytes");
        fprintf(f, "    mode = \"%04o\";\n", (unsigned) cc->mode);
        fprintf(f, "    trim_to = %s;\n", format_exact(cc->trim_to, 1, buf, sizeof(buf)));
        if (cc->require_mount)
                dump_string(f, "    ", "require_mount", cc->require_mount);
        fprintf(f, "    ccache_conf = %s;\n", cc->manage_ccache_conf ? "true" : "false");
        if (cc->ccache_conf_allow && cc->ccache_conf_allow[0])
                dump_strv(f, "    ", "ccache_conf_allow", cc->ccache_conf_allow);
        if (cc->max_watches)
                fprintf(f, "    max_watches = %u;\n", (unsigned) cc->max_watches);
        else
                fputs("    max_watches = \"auto\";\n", f);
        fprintf(f, "    regret_alert = \"%s%%\";\n", format_exact(cc->regret_alert, 100, buf, sizeof(buf)));
        dump_duration(f, "    ", "silent_window", cc->silent_window_usec);
        fprintf(f, "    silent_min_calls = %llu;\n", (unsigned long long) cc->silent_min_calls);
        fprintf(f, "    silent_hit_rate = \"%s%%\";\n", format_exact(cc->silent_hit_rate, 100, buf, sizeof(buf)));
        dump_duration(f, "    ", "idle_after", cc->idle_after_usec);
        dump_duration(f, "    ", "remote_errors_window", cc->remote_errors_window_usec);
}

/* The password_file's path is printed, never what it holds; a URL with a
 * password in it was refused at load. */
static void dump_remotes(const Config *c, FILE *f) {
        char buf[64];

        if (c->n_remotes == 0)
                return;
        fputs("remotes = (\n", f);
        for (size_t i = 0; i < c->n_remotes; i++) {
                const RemoteConfig *rc = &c->remotes[i];

                fputs("  {\n", f);
                dump_string(f, "    ", "name", rc->name);
                dump_string(f, "    ", "url", rc->url);
                if (rc->password_file)
                        dump_string(f, "    ", "password_file", rc->password_file);
                if (rc->u.kind == REMOTE_REDIS) {
                        dump_duration(f, "    ", "poll_interval", rc->poll_interval_usec);
                        dump_duration(f, "    ", "timeout", rc->timeout_usec);
                        dump_duration(f, "    ", "round_timeout", rc->round_timeout_usec);
                        dump_string(f, "    ", "server_user", rc->server_user);
                        dump_threshold(f, "    ", "warn_free", &rc->warn_free, "bytes");
                        dump_threshold(f, "    ", "crit_free", &rc->crit_free, "bytes");
                } else {
                        dump_size(f, "    ", "max_size", rc->cache.max_size_text, rc->cache.max_size_bytes, "bytes");
                        dump_string(f, "    ", "layout", remote_layout_name(rc->cache.layout));
                        fprintf(f, "    trim_to = %s;\n", format_exact(rc->cache.trim_to, 1, buf, sizeof(buf)));
                        dump_string(f, "    ", "clock", cache_clock_name(rc->cache.clock));
                        dump_string(f, "    ", "watch", cache_watch_mode_name(rc->cache.watch_mode));
                        dump_duration(f, "    ", "rescan_interval", rc->cache.rescan_interval_usec);
                        fprintf(f, "    mode = \"%04o\";\n", (unsigned) rc->cache.mode);
                }
                fprintf(f, "  }%s\n", i + 1 < c->n_remotes ? "," : "");
        }
        fputs(");\n", f);
}

void config_dump(const Config *c, FILE *f) {
        fprintf(f, "# %s, normalised: every setting, durations in seconds, sizes as configured\n", c->file);
        dump_string(f, "", "socket", c->socket_path);
        dump_string(f, "", "state_dir", c->state_dir);
        dump_string(f, "", "admin_group", c->admin_group);
        if (c->alert_argv)
                dump_strv(f, "", "alert_command", c->alert_argv);
        dump_duration(f, "", "alert_timeout", c->alert_timeout_usec);
        dump_duration(f, "", "alert_min_interval", c->alert_min_interval_usec);
        dump_duration(f, "", "audit_interval", c->audit_interval_usec);
        fputs("volumes = {\n", f);
        dump_duration(f, "  ", "check_interval", c->check_interval_usec);
        dump_limits(f, "  ", &c->volume_defaults);
        if (c->n_volume_overrides > 0) {
                fputs("  overrides = (\n", f);
                for (size_t i = 0; i < c->n_volume_overrides; i++) {
                        fputs("    {\n", f);
                        dump_string(f, "      ", "mount", c->volume_overrides[i].mount);
                        dump_limits(f, "      ", &c->volume_overrides[i]);
                        fprintf(f, "    }%s\n", i + 1 < c->n_volume_overrides ? "," : "");
                }
                fputs("  );\n", f);
        }
        fputs("};\n", f);
        fputs("caches = (\n", f);
        for (size_t i = 0; i < c->n_caches; i++) {
                fputs("  {\n", f);
                dump_cache(f, &c->caches[i]);
                fprintf(f, "  }%s\n", i + 1 < c->n_caches ? "," : "");
        }
        fputs(");\n", f);
        dump_remotes(c, f);
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
