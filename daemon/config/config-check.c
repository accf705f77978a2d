/* SPDX-License-Identifier: MIT */
/* cachekeeperd -t's warnings (config-check.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/human.h"
#include "config/config-check.h"
#include "config/config.h"
#include "os/mounts.h"
#include "os/sandbox.h"
#include "os/users.h"

#define CHECK_VOLUMES_MAX 64            /* volumes looked at; caches share them */

typedef struct Checked {
        char mount[PATH_MAX];
        VolumeUsage usage;
        const char *cache;              /* a cache on it, for the message */
} Checked;

typedef struct Check {
        const Config *config;
        FILE *f;
        unsigned n;
        Checked volumes[CHECK_VOLUMES_MAX];
        size_t n_volumes;
} Check;

_printf_(2, 3)
static void warn(Check *k, const char *fmt, ...) {
        va_list ap;

        fprintf(k->f, "%s: warning: ", k->config->file);
        va_start(ap, fmt);
        vfprintf(k->f, fmt, ap);
        va_end(ap);
        fputc('\n', k->f);
        k->n++;
}

static void check_admin_group(Check *k) {
        const char *name = k->config->admin_group;
        gid_t gid;
        int r = group_gid(name, &gid);

        if (r == 0)
                warn(k, "admin_group '%s' is no group on this host: only root may trim and reload", name);
        else if (r < 0)
                warn(k, "admin_group '%s' cannot be looked up: %s", name, strerror(-r));
}

static void check_alert_command(Check *k) {
        const char *cmd = k->config->alert_argv ? k->config->alert_argv[0] : NULL;
        struct stat st;

        if (!cmd)
                return;
        if (stat(cmd, &st) < 0)
                warn(k, "alert_command '%s' cannot be run (%s): alerts go to the journal only", cmd, strerror(errno));
        else if (!S_ISREG(st.st_mode))
                warn(k, "alert_command '%s' is not a regular file: alerts go to the journal only", cmd);
        else if (access(cmd, X_OK) < 0 || !(st.st_mode & 0111))
                warn(k, "alert_command '%s' is not executable: alerts go to the journal only", cmd);
}

/* The volume holding path (or its nearest existing parent: a cache the
 * daemon will create), once per mount. */
static void examine(Check *k, const char *path, const char *cache) {
        char dir[PATH_MAX], mount[PATH_MAX];
        VolumeUsage u;
        struct stat st;

        snprintf(dir, sizeof(dir), "%s", path);
        while (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                char *slash = strrchr(dir, '/');
                if (!slash || slash == dir)
                        return;   /* nothing above it but / itself, which must exist */
                *slash = '\0';
        }
        if (volume_mount_of(dir, mount, sizeof(mount)) < 0 || volume_usage(-1, dir, &u) < 0 || u.total_bytes == 0)
                return;
        for (size_t i = 0; i < k->n_volumes; i++)
                if (strcmp(k->volumes[i].mount, mount) == 0)
                        return;
        if (k->n_volumes == CHECK_VOLUMES_MAX)
                return;
        Checked *v = &k->volumes[k->n_volumes++];
        snprintf(v->mount, sizeof(v->mount), "%s", mount);
        v->usage = u;
        v->cache = cache;
}

/* A threshold in words: "10%" or "20G". */
static const char *threshold_words(const Threshold *t, char *buf, size_t len) {
        if (t->kind == THRESHOLD_PERCENT)
                snprintf(buf, len, "%g%%", t->percent);
        else
                snprintf(buf, len, "%s", t->text);
        return buf;
}

/* warn and crit of one kind (bytes or inodes), one a percentage and the
 * other not, for the volumes vc applies to: critical must stay below
 * warning on each, or the volume goes critical before it warns. */
static void check_pair(Check *k, const char *where, const VolumeConfig *vc, const char *wkey, const Threshold *w,
                       const char *ckey, const Threshold *c, bool inodes) {
        const Threshold *pct = w->kind == THRESHOLD_PERCENT ? w : c, *fixed = pct == w ? c : w;
        char ws[80], cs[80], a[32], b[32], edge[32];
        bool seen = false;
        double boundary;

        if (w->kind == THRESHOLD_UNSET || c->kind == THRESHOLD_UNSET || w->kind == c->kind)
                return;
        for (size_t i = 0; i < k->n_volumes; i++) {
                const Checked *v = &k->volumes[i];
                uint64_t total = inodes ? v->usage.total_inodes : v->usage.total_bytes;
                uint64_t wv = threshold_resolve(w, total), cv = threshold_resolve(c, total);

                if (config_volume(k->config, v->mount) != vc || total == 0)
                        continue;
                seen = true;
                if (cv < wv)
                        continue;
                if (inodes)
                        snprintf(a, sizeof(a), "%llu", (unsigned long long) cv), snprintf(b, sizeof(b), "%llu",
                                                                                        (unsigned long long) wv);
                else
                        format_size(cv, a, sizeof(a)), format_size(wv, b, sizeof(b));
                warn(k, "%s%s \"%s\" and %s \"%s\" cannot both hold on %s (cache %s): critical is %s%s free, "
                     "warning %s%s, so the volume goes critical before it warns", where, ckey,
                     threshold_words(c, cs, sizeof(cs)), wkey, threshold_words(w, ws, sizeof(ws)), v->mount,
                     v->cache, a, inodes ? " inodes" : "", b, inodes ? " inodes" : "");
        }
        if (seen)
                return;
        /* No such volume here: where the two cross. */
        boundary = (double) fixed->value * 100.0 / pct->percent;
        if (inodes)
                snprintf(edge, sizeof(edge), "%.0f inodes", boundary);
        else
                format_size(boundary >= 1.8e19 ? UINT64_MAX : (uint64_t) boundary, edge, sizeof(edge));
        warn(k, "%s%s \"%s\" and %s \"%s\" cannot both hold on a volume of %s or %s: it would go critical before "
             "it warns", where, ckey, threshold_words(c, cs, sizeof(cs)), wkey, threshold_words(w, ws, sizeof(ws)),
             edge, pct == w ? "less" : "more");
}

static void check_limits(Check *k, const char *where, const VolumeConfig *vc) {
        check_pair(k, where, vc, "warn_free", &vc->warn_free, "crit_free", &vc->crit_free, false);
        check_pair(k, where, vc, "warn_free_inodes", &vc->warn_free_inodes, "crit_free_inodes",
                   &vc->crit_free_inodes, true);
}

static bool loopback_host(const char *host) {
        struct in6_addr a6;
        struct in_addr a4;

        if (inet_pton(AF_INET, host, &a4) == 1)
                return (ntohl(a4.s_addr) >> 24) == 127;
        return inet_pton(AF_INET6, host, &a6) == 1 &&
               (IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127));
}

/* A password sent where it can be read: over the network in the clear
 * (hiredis 0.14 has no TLS), or to a local port when the server's user,
 * who alone may hold it, is unknown here. */
static void check_remotes(Check *k) {
        for (size_t i = 0; i < k->config->n_remotes; i++) {
                const RemoteConfig *rc = &k->config->remotes[i];

                if (rc->u.kind != REMOTE_REDIS || !rc->password_file)
                        continue;
                if (rc->u.host && !loopback_host(rc->u.host))
                        warn(k, "remote %s: the password goes to %s over TCP without TLS: anyone on the way can read "
                             "it; prefer redis+unix: with the socket in a directory only root and the server's user "
                             "can write", rc->name, rc->u.host);
                if (!rc->server_uid_known)
                        warn(k, "remote %s: server_user \"%s\" is no user here: the password goes only to a server "
                             "running as root", rc->name, rc->server_user);
        }
}

/* A path the installed service may not write: said before a start finds
 * it read-only. */
static void sandbox_path(Check *k, const Sandbox *sb, const char *what, const char *name, const char *path) {
        char writable[1024];

        if (sandbox_allows(sb, path))
                return;
        warn(k, "%s%s%s %s lies outside what %s may write (ProtectSystem=strict; ReadWritePaths= and "
             "StateDirectory= allow %s): the service will find it read-only; add it with a drop-in, "
             "systemctl edit " SANDBOX_UNIT " ([Service] ReadWritePaths=%s), then restart it",
             what, name ? " " : "", name ? name : "", path, sb->unit, sandbox_writable_text(sb, writable, sizeof(writable)),
             path);
}

static void check_sandbox(Check *k) {
        const Config *c = k->config;
        Sandbox sb;

        if (sandbox_read("/", &sb) < 0 || !sb.found) {
                sandbox_done(&sb);
                return;   /* not installed as a service: no sandbox to say anything of */
        }
        for (size_t i = 0; i < c->n_caches; i++)
                sandbox_path(k, &sb, "cache", c->caches[i].name, c->caches[i].path);
        for (size_t i = 0; i < c->n_remotes; i++)
                if (c->remotes[i].u.kind == REMOTE_FILE)
                        sandbox_path(k, &sb, "share", c->remotes[i].cache.name, c->remotes[i].cache.path);
        sandbox_path(k, &sb, "state_dir", NULL, c->state_dir);
        sandbox_done(&sb);
}

unsigned config_check(const Config *c, FILE *f) {
        Check k = { .config = c, .f = f };
        char where[PATH_MAX + 64];

        check_admin_group(&k);
        check_alert_command(&k);
        check_remotes(&k);
        check_sandbox(&k);
        for (size_t i = 0; i < c->n_caches; i++)
                /* Not mounted yet: what is there now is not its volume. */
                if (!c->caches[i].require_mount || volume_is_mount_point(c->caches[i].require_mount) > 0)
                        examine(&k, c->caches[i].path, c->caches[i].name);
        check_limits(&k, "volumes.", &c->volume_defaults);
        for (size_t i = 0; i < c->n_volume_overrides; i++) {
                snprintf(where, sizeof(where), "the override for %s: ", c->volume_overrides[i].mount);
                check_limits(&k, where, &c->volume_overrides[i]);
        }
        return k.n;
}
