/* SPDX-License-Identifier: MIT */
/* The config file's typed getters (config-get.h): each setting read with
 * its type checked and its value parsed, and every refusal said with the
 * file, the line and the setting's path. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/human.h"
#include "config/config-get.h"
#include "config/config-hint.h"

int cfg_fail(Ctx *ctx, const config_setting_t *s, const char *fmt, ...) {
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
const char *cfg_setting_path(const config_setting_t *s, char *buf, size_t len) {
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

int cfg_check_keys(Ctx *ctx, const config_setting_t *group, const char *const *allowed) {
        for (int i = 0; i < config_setting_length(group); i++) {
                const config_setting_t *s = config_setting_get_elem(group, (unsigned) i);
                const char *name = config_setting_name(s);
                size_t k;

                for (k = 0; allowed[k]; k++)
                        if (strcmp(name, allowed[k]) == 0)
                                break;
                if (!allowed[k]) {
                        const char *near = closest_word(name, allowed);
                        char where[256];

                        return cfg_fail(ctx, s, "unknown setting '%s'%s%s%s", cfg_setting_path(s, where, sizeof(where)),
                                        near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
                }
        }
        return 0;
}

/* Each getter returns 1 if the key is present and valid, 0 if absent,
 * -EINVAL (message written) if present and wrong. */
int cfg_get_setting(Ctx *ctx, const config_setting_t *group, const char *key, int type,
                       const char *what, const config_setting_t **ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];

        if (!s)
                return 0;
        if (config_setting_type(s) != type &&
            !(type == CONFIG_TYPE_FLOAT && config_setting_is_number(s)))
                return cfg_fail(ctx, s, "'%s' must be %s", cfg_setting_path(s, where, sizeof(where)), what);
        *ret = s;
        return 1;
}

int cfg_get_string(Ctx *ctx, const config_setting_t *group, const char *key, const char *example,
                      const config_setting_t **ret_setting, const char **ret) {
        const config_setting_t *s = NULL;
        char what[128];
        int r;

        snprintf(what, sizeof(what), "a string, e.g. %s", example);
        r = cfg_get_setting(ctx, group, key, CONFIG_TYPE_STRING, what, &s);
        if (r <= 0)
                return r;
        *ret = config_setting_get_string(s);
        if (ret_setting)
                *ret_setting = s;
        return 1;
}

int cfg_require(Ctx *ctx, const config_setting_t *group, const char *key, int r) {
        char where[256];

        if (r != 0)
                return r;
        if (config_setting_is_root(group))
                return cfg_fail(ctx, NULL, "missing required setting '%s'", key);
        return cfg_fail(ctx, group, "%s: missing required setting '%s'",
                    cfg_setting_path(group, where, sizeof(where)), key);
}

/* Absolute, with "//" and a trailing "/" folded; "." and ".." refused so that
 * two spellings of one directory cannot slip past the overlap check. */
int cfg_get_path(Ctx *ctx, const config_setting_t *group, const char *key, char **ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *out, *o;
        int r;

        r = cfg_get_string(ctx, group, key, "\"/var/cache/ccache\"", &s, &v);
        if (r <= 0)
                return r;
        cfg_setting_path(s, where, sizeof(where));
        if (v[0] != '/')
                return cfg_fail(ctx, s, "'%s' must be an absolute path, not \"%s\"", where, v);
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
                        return cfg_fail(ctx, s, "'%s' must not contain '.' or '..' components: \"%s\"", where, v);
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
int cfg_get_size(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret, char *ret_text) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        int r;

        r = cfg_get_string(ctx, group, key, "\"100G\"", &s, &v);
        if (r <= 0)
                return r;
        if (parse_size(v, ret) < 0 || strlen(v) >= CONFIG_SIZE_TEXT_MAX)
                return cfg_fail(ctx, s, "'%s': invalid size \"%s\" (a positive number and a unit: "
                            "k, M, G, T for powers of 1000, Ki, Mi, Gi, Ti for powers of 1024)",
                            cfg_setting_path(s, where, sizeof(where)), v);
        if (ret_text)
                snprintf(ret_text, CONFIG_SIZE_TEXT_MAX, "%s", v);
        return 1;
}

int cfg_get_duration(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_zero,
                        usec_t *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        usec_t u;
        int r;

        r = cfg_get_string(ctx, group, key, "\"10s\"", &s, &v);
        if (r <= 0)
                return r;
        if (parse_duration(v, &u) < 0)
                return cfg_fail(ctx, s, "'%s': invalid duration \"%s\" (a number and a unit: ms, s, m, h, d)",
                            cfg_setting_path(s, where, sizeof(where)), v);
        if (u == 0 && !allow_zero)
                return cfg_fail(ctx, s, "'%s' must be longer than zero", cfg_setting_path(s, where, sizeof(where)));
        *ret = u;
        return 1;
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

int cfg_get_threshold(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_count,
                         Threshold *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256];
        int r;

        r = cfg_get_string(ctx, group, key, allow_count ? "\"10%\" or \"100000\"" : "\"10%\" or \"20G\"", &s, &v);
        if (r <= 0)
                return r;
        if (config_parse_threshold(v, allow_count, ret) < 0)
                return cfg_fail(ctx, s, "'%s': invalid threshold \"%s\" (%s)", cfg_setting_path(s, where, sizeof(where)), v,
                            allow_count ? "a percentage of all inodes such as \"10%\", or a count"
                                        : "a percentage of the volume such as \"10%\", or a size such as \"20G\"");
        return 1;
}

int cfg_get_mode(Ctx *ctx, const config_setting_t *group, const char *key, mode_t *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *end;
        unsigned long m;
        int r;

        r = cfg_get_string(ctx, group, key, "\"1777\"", &s, &v);
        if (r <= 0)
                return r;
        errno = 0;
        m = strtoul(v, &end, 8);
        if (!*v || *end || errno != 0 || m > 07777 || v[strspn(v, "01234567")] != '\0')
                return cfg_fail(ctx, s, "'%s': \"%s\" is not an octal permission mode such as \"1777\"",
                            cfg_setting_path(s, where, sizeof(where)), v);
        *ret = (mode_t) m;
        return 1;
}

int cfg_get_fraction(Ctx *ctx, const config_setting_t *group, const char *key, double *ret) {
        const config_setting_t *s = NULL;
        char where[256];
        double v;
        int r;

        r = cfg_get_setting(ctx, group, key, CONFIG_TYPE_FLOAT, "a number, e.g. 0.9", &s);
        if (r <= 0)
                return r;
        v = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
                                                        : (double) config_setting_get_int64(s);
        if (!(v > 0 && v <= 1))
                return cfg_fail(ctx, s, "'%s' must be greater than 0 and at most 1, not %g",
                            cfg_setting_path(s, where, sizeof(where)), v);
        *ret = v;
        return 1;
}

/* Is s a whole number from 1 to UINT32_MAX? Into *ret if so. */
bool cfg_positive_u32(const config_setting_t *s, uint32_t *ret) {
        long long v;

        if ((config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64) ||
            (v = config_setting_get_int64(s)) < 1 || v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

/* A positive count, or the string "auto" (stored as 0). */
int cfg_get_count_or_auto(Ctx *ctx, const config_setting_t *group, const char *key, uint32_t *ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];

        if (!s)
                return 0;
        if (config_setting_type(s) == CONFIG_TYPE_STRING && strcmp(config_setting_get_string(s), "auto") == 0) {
                *ret = 0;
                return 1;
        }
        if (!cfg_positive_u32(s, ret))
                return cfg_fail(ctx, s, "'%s' must be a positive whole number or \"auto\"",
                            cfg_setting_path(s, where, sizeof(where)));
        return 1;
}

int cfg_get_bool(Ctx *ctx, const config_setting_t *group, const char *key, bool *ret) {
        const config_setting_t *s = NULL;
        int r;

        r = cfg_get_setting(ctx, group, key, CONFIG_TYPE_BOOL, "true or false", &s);
        if (r <= 0)
                return r;
        *ret = config_setting_get_bool(s);
        return 1;
}

/* A duration within [min, max] (the alarms' windows). */
int cfg_get_window(Ctx *ctx, const config_setting_t *group, const char *key, usec_t min, usec_t max,
                      const char *why, usec_t *ret) {
        char where[256], lo[32], hi[32];
        usec_t u;
        int r;

        r = cfg_get_duration(ctx, group, key, true, &u);
        if (r <= 0)
                return r;
        if (u < min || u > max) {
                const config_setting_t *s = config_setting_get_member(group, key);
                return cfg_fail(ctx, s, "'%s' must be between %s and %s (%s)", cfg_setting_path(s, where, sizeof(where)),
                            format_duration(min, lo, sizeof(lo)), format_duration(max, hi, sizeof(hi)), why);
        }
        *ret = u;
        return 1;
}

/* A percentage from 0 to 100 ("5%", "0.5%"), as a fraction. */
int cfg_get_percent(Ctx *ctx, const config_setting_t *group, const char *key, double *ret) {
        const config_setting_t *s = NULL;
        const char *v;
        char where[256], *end;
        double p;
        int r;

        r = cfg_get_string(ctx, group, key, "\"5%\"", &s, &v);
        if (r <= 0)
                return r;
        errno = 0;
        p = strtod(v, &end);
        if (!isdigit((unsigned char) v[0]) || errno != 0 || end == v || strcmp(end, "%") != 0 || !isfinite(p) ||
            p < 0 || p > 100)
                return cfg_fail(ctx, s, "'%s': invalid percentage \"%s\" (from \"0%%\" to \"100%%\", e.g. \"5%%\")",
                            cfg_setting_path(s, where, sizeof(where)), v);
        *ret = p / 100.0;
        return 1;
}

/* A whole number from 1 to UINT32_MAX. */
int cfg_get_positive(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret) {
        const config_setting_t *s = config_setting_get_member(group, key);
        char where[256];
        uint32_t v;

        if (!s)
                return 0;
        if (!cfg_positive_u32(s, &v))
                return cfg_fail(ctx, s, "'%s' must be a whole number from 1 to %u, e.g. 50",
                            cfg_setting_path(s, where, sizeof(where)), UINT32_MAX);
        *ret = v;
        return 1;
}


int cfg_get_choice(Ctx *ctx, const config_setting_t *g, const char *key, const char *const *names, int *ret) {
        const config_setting_t *s = NULL;
        char list[128] = "";
        const char *v;
        int r;

        r = cfg_get_string(ctx, g, key, "\"auto\"", &s, &v);
        if (r <= 0)
                return r;
        for (int i = 0; names[i]; i++) {
                if (strcmp(v, names[i]) == 0) {
                        *ret = i;
                        return 1;
                }
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", i ? ", " : "", names[i]);
        }
        return cfg_fail(ctx, s, "'%s' must be one of %s, not \"%s\"", key, list, v);
}
