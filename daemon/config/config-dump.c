/* SPDX-License-Identifier: MIT */
/* cachekeeperd -t: a loaded config printed in normalised form
 * (config_dump in config.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/human.h"
#include "config/config.h"

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

/* A duration as people write it and parse_duration reads it back: its
 * largest units, each a whole number ("7d", "1h30m", "1s500ms", "0s"). */
static void dump_duration(FILE *f, const char *indent, const char *key, usec_t u) {
        static const struct {
                const char *unit;
                usec_t usec;
        } units[] = {
                { "d", 24 * 3600 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC }, { "m", 60 * USEC_PER_SEC },
                { "s", USEC_PER_SEC },             { "ms", USEC_PER_MSEC },
        };
        usec_t left = u / USEC_PER_MSEC * USEC_PER_MSEC;   /* what the config can say: whole ms */

        fprintf(f, "%s%s = \"", indent, key);
        if (left == 0)
                fputs("0s", f);
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (left >= units[i].usec) {
                        fprintf(f, "%llu%s", (unsigned long long) (left / units[i].usec), units[i].unit);
                        left %= units[i].usec;
                }
        fputs("\";\n", f);
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
        fprintf(f, "# %s, normalised: every setting, durations in their largest units, sizes as configured\n", c->file);
        dump_string(f, "", "socket", c->socket_path);
        dump_string(f, "", "state_dir", c->state_dir);
        dump_string(f, "", "admin_group", c->admin_group);
        if (c->alert_argv)
                dump_strv(f, "", "alert_command", c->alert_argv);
        dump_duration(f, "", "alert_timeout", c->alert_timeout_usec);
        dump_duration(f, "", "alert_min_interval", c->alert_min_interval_usec);
        dump_duration(f, "", "audit_interval", c->audit_interval_usec);
        fputs("container_rights = [", f);
        for (unsigned k = 0, n = 0; config_right_names[k]; k++)
                if (c->container_rights & (1u << k))
                        fprintf(f, "%s\"%s\"", n++ ? ", " : " ", config_right_names[k]);
        fputs(" ];\n", f);
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
