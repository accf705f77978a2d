/* SPDX-License-Identifier: MIT */
/* A cache's upkeep: the root's mode, ccache's directories and ccache.conf,
 * checked in full at set-up, after removals, after lost events and on
 * reload, and on each event that touches them. The work itself is
 * upkeep.c's; this file logs and alerts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "cache/cache-alert.h"
#include "cache/cache-internal.h"
#include "cache/cache-upkeep.h"
#include "ccache/ccache.h"
#include "ccache/upkeep.h"
#include "os/sandbox.h"

static const char *special_bits(mode_t m) {
        return m & S_ISVTX ? "sticky" : m & S_ISUID ? "setuid" : "setgid";
}

void cache_on_repair(const UpkeepReport *r, void *userdata) {
        Cache *c = userdata;
        const char *name = c->config->name, *path = c->config->path, *sep = *r->what ? "/" : "";

        switch (r->event) {
        case UPKEEP_REPAIRED:
                /* Adopting a cache may repair hundreds: one line sums them
                 * up after the loop iteration (cache_repairs_report). */
                c->mode_repairs++;
                if (c->repairs_unreported == 0) {
                        c->repair_was = r->was;
                        c->repair_now = r->now;
                }
                if (c->repairs_unreported < CACHE_REPAIR_EXAMPLES)
                        snprintf(c->repair_examples[c->repairs_unreported], sizeof(c->repair_examples[0]), "%s",
                                 r->what);
                c->repairs_unreported++;
                log_debug("Cache %s: repaired the mode of %s%s%s: was %04o, now %04o.", name, path, sep, r->what,
                          (unsigned) (r->was & 07777), (unsigned) (r->now & 07777));
                break;
        case UPKEEP_LEFT_ALONE:
                cache_alert(c, ALERT_CACHE_MODE, LOG_WARNING,
                            "Cache %s: %s%s%s is %s (mode %04o, owner uid %u): ccache never makes such a directory, "
                            "so someone put it there; left alone", name, path, sep, r->what, special_bits(r->was),
                            (unsigned) (r->was & 07777), (unsigned) r->owner);
                break;
        case UPKEEP_REPLACED:
                cache_alert(c, ALERT_CACHE_MODE, LOG_WARNING,
                            "Cache %s: %s%s%s was %s (owner uid %u), not a directory; %s and the directory made",
                            name, path, sep, r->what, S_ISLNK(r->was) ? "a symlink" : "a file", (unsigned) r->owner,
                            S_ISLNK(r->was) ? "removed" : "moved aside");
                break;
        case UPKEEP_FAILED:
                if (c->upkeep_pass) {   /* summed up at the pass's end (cache_upkeep) */
                        if (c->upkeep_failing.n++ == 0) {
                                c->upkeep_failing.error = r->error;
                                snprintf(c->upkeep_failing.what, sizeof(c->upkeep_failing.what), "%s", r->what);
                        }
                } else if (c->upkeep_failed.n == 0) {
                        log_warning_errno(r->error, "Cache %s: cannot keep %s%s%s usable: %m", name, path, sep,
                                          r->what);
                        c->upkeep_failed = (struct UpkeepFailures) { .n = 1, .error = r->error };
                        snprintf(c->upkeep_failed.what, sizeof(c->upkeep_failed.what), "%s", r->what);
                } else
                        log_debug("Cache %s: still cannot keep %s%s%s usable (said already).", name, path, sep,
                                  r->what);
                break;
        }
}

/* n with thousands separated: "1,204". */
static char *format_count(uint64_t n, char *buf, size_t len) {
        char digits[32];
        size_t d, o = 0;

        d = (size_t) snprintf(digits, sizeof(digits), "%llu", (unsigned long long) n);
        for (size_t i = 0; i < d && o + 2 < len; i++) {
                if (i > 0 && (d - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = digits[i];
        }
        buf[o] = '\0';
        return buf;
}

void cache_repairs_report(Cache *c) {
        const char *name = c->config->name, *path = c->config->path, *first = c->repair_examples[0];
        unsigned n = c->repairs_unreported, shown = n < CACHE_REPAIR_EXAMPLES ? n : CACHE_REPAIR_EXAMPLES;
        char examples[128] = "", count[32], more[64] = "";
        size_t used = 0;

        if (n == 0)
                return;
        c->repairs_unreported = 0;
        if (n == 1) {
                cache_alert(c, ALERT_CACHE_MODE, LOG_WARNING,
                            "%s %s: repaired the mode of %s%s%s: was %04o, now %04o%s",
                            cache_config_what(c->config), name, path, *first ? "/" : "", first,
                            (unsigned) (c->repair_was & 07777), (unsigned) (c->repair_now & 07777),
                            *first ? " (a writer with a restrictive umask, or root in a container?)" : "");
                return;
        }
        for (unsigned i = 0; i < shown && used < sizeof(examples); i++)
                used += (size_t) snprintf(examples + used, sizeof(examples) - used, "%s%s", i ? ", " : "",
                                          *c->repair_examples[i] ? c->repair_examples[i] : "the root itself");
        if (n > shown)
                snprintf(more, sizeof(more), " and %s more", format_count(n - shown, count, sizeof(count)));
        cache_alert(c, ALERT_CACHE_MODE, LOG_WARNING,
                    "Cache %s: repaired the modes of %s directories in %s (%s%s; %s was %04o, now %04o): a writer "
                    "with a restrictive umask, or root in a container?", name, format_count(n, count, sizeof(count)),
                    path, examples, more, *first ? first : "the root", (unsigned) (c->repair_was & 07777),
                    (unsigned) (c->repair_now & 07777));
}

typedef struct ConfDrop {
        Cache *c;
        const UpkeepConfResult *res;
} ConfDrop;

static void on_conf_drop(const char *key, const char *why, void *userdata) {
        ConfDrop *d = userdata;

        log_warning("Cache %s: dropped '%s' from %s/ccache.conf (%s, owner uid %u): %s.", d->c->config->name, key,
                    d->c->config->path, upkeep_conf_found_name(d->res->found), (unsigned) d->res->owner, why);
}

/* The alert for a ccache.conf that was not safe as it stood. */
static void conf_alert(Cache *c, const UpkeepConfResult *res) {
        char dropped[sizeof(res->dropped) + 64] = "";

        if (res->n_dropped > 0)
                snprintf(dropped, sizeof(dropped), "; dropped %u setting%s: %s", res->n_dropped,
                         res->n_dropped == 1 ? "" : "s", res->dropped);
        cache_alert(c, ALERT_CACHE_CONF_UNSAFE, LOG_WARNING, "Cache %s: %s/ccache.conf was %s (owner uid %u)%s; %s",
                    c->config->name, c->config->path, upkeep_conf_found_name(res->found), (unsigned) res->owner,
                    dropped, res->removed ? "removed, as it could not be rewritten" : "rewritten");
}

/* ccache.conf's settings as they now are (the daemon writes only umask and
 * max_size, and drops what is unsafe): a change is someone else's, and
 * changes every key if it is the namespace, say. When and how, for the
 * silent-miss alarm; the first look is the baseline. */
static void conf_settings_seen(Cache *c, const char *settings) {
        if (c->conf_settings_known && strcmp(c->conf_settings, settings) != 0) {
                c->conf_changed_at = event_now(c->event, CLOCK_REALTIME);
                ccache_conf_change(c->conf_settings, settings, c->conf_change, sizeof(c->conf_change));
                log_notice("Cache %s: the settings of %s/ccache.conf changed: %s.", c->config->name,
                           c->config->path, *c->conf_change ? c->conf_change : "their order");
        }
        snprintf(c->conf_settings, sizeof(c->conf_settings), "%s", settings);
        c->conf_settings_known = true;
}

void cache_upkeep_conf(Cache *c, int root) {
        const CacheConfig *cc = c->config;
        UpkeepConfResult res;
        ConfDrop d = { .c = c, .res = &res };
        CcacheConfPolicy p = { .allow = (const char *const *) cc->ccache_conf_allow };
        int r;

        c->ccache_max_size[0] = '\0';
        if (cc->manage_ccache_conf) {
                p.max_size = ccache_conf_max_size(cc->max_size_bytes, c->ccache_max_size, sizeof(c->ccache_max_size));
                p.umask = true;
        }
        r = upkeep_ccache_conf(root, &p, on_conf_drop, &d, &res);
        if (res.n_dropped > 0 || (res.found != UPKEEP_CONF_MISSING && res.found != UPKEEP_CONF_OURS))
                conf_alert(c, &res);
        if (r < 0) {
                /* A full volume, say: tried again until it works, logged once. */
                if (r != c->conf_error)
                        log_warning_errno(r, "Cache %s: cannot write %s/ccache.conf%s: %m; retrying.", cc->name,
                                          cc->path, res.removed ? " (the unsafe one is removed)" : "");
                c->conf_error = r;
                cache_upkeep_later(c);
                return;
        }
        if (c->conf_error < 0)
                log_notice("Cache %s: %s/ccache.conf is written again.", cc->name, cc->path);
        c->conf_error = 0;
        conf_settings_seen(c, res.settings);
        if (r > 0 && cc->manage_ccache_conf && res.found == UPKEEP_CONF_MISSING)
                log_notice("Cache %s: wrote %s/ccache.conf, there was none: umask = 000, max_size = %s.", cc->name,
                           cc->path, c->ccache_max_size);
        else if (r > 0 && cc->manage_ccache_conf && strcmp(res.old_umask, "000") != 0)
                /* Taking the cache over: what was there, so it can be put back. */
                log_notice("Cache %s: took over %s/ccache.conf: umask = 000 (was %s), max_size = %s (was %s); "
                           "its other safe settings are kept.", cc->name, cc->path,
                           *res.old_umask ? res.old_umask : "unset", c->ccache_max_size,
                           *res.old_max ? res.old_max : "unset");
        else if (r > 0 && cc->manage_ccache_conf)
                log_notice("Cache %s: wrote umask = 000 and max_size = %s to ccache.conf%s%s%s.", cc->name,
                           c->ccache_max_size, *res.old_max ? " (max_size was " : "", res.old_max,
                           *res.old_max ? ")" : "");
        else if (r > 0)
                log_notice("Cache %s: rewrote ccache.conf (it was %s, mode %04o).", cc->name,
                           upkeep_conf_found_name(res.found), (unsigned) (res.mode & 07777));
}

/* The root's configured mode, through its fd (opened without following
 * anything: cache_root_get). A share's failure (root squashed on NFS, say)
 * is logged once until it works again. */
void cache_upkeep_root(Cache *c, int root) {
        int r = upkeep_root(root, c->config->mode, cache_on_repair, c);

        if (r < 0 && (!c->remote || r != c->root_mode_error))
                log_warning_errno(r, "%s %s: cannot keep the mode of %s at %04o: %m", cache_config_what(c->config),
                                  c->config->name, c->config->path, (unsigned) c->config->mode);
        c->root_mode_error = r < 0 ? r : 0;
}

/* The directories a full pass could not keep usable, said when they are not
 * what was said last (a volume out of inodes fails the same way at every
 * retry: once, not every few seconds), and their recovery. */
static void upkeep_failures_said(Cache *c) {
        const struct UpkeepFailures *f = &c->upkeep_failing, *said = &c->upkeep_failed;
        const char *name = c->config->name, *path = c->config->path;
        char more[64] = "", hint[1024];

        if (f->n == 0) {
                if (said->n > 0)
                        log_notice("Cache %s: its directories in %s are usable again.", name, path);
                c->upkeep_failed = *f;
                return;
        }
        if (f->n == said->n && f->error == said->error && strcmp(f->what, said->what) == 0) {
                log_debug("Cache %s: still cannot keep %u director%s of %s usable (said already).", name, f->n,
                          f->n == 1 ? "y" : "ies", path);
                return;
        }
        if (f->n > 1)
                snprintf(more, sizeof(more), " (and %u more director%s)", f->n - 1, f->n == 2 ? "y" : "ies");
        log_warning_errno(f->error, "Cache %s: cannot keep %s%s%s usable: %m%s%s; said again when that changes.",
                          name, path, *f->what ? "/" : "", f->what, more,
                          sandbox_hint(f->error, path, hint, sizeof(hint)));
        c->upkeep_failed = *f;
}

/* Everything that keeps the cache usable by every user, checked in full. */
void cache_upkeep(Cache *c, int root) {
        /* A share's root keeps its mode (the sticky bit keeps users from
         * replacing each other's files and the share lock); the rest of a
         * share is its writers'. */
        cache_upkeep_root(c, root);
        if (c->remote)
                return;
        c->upkeep_pass = true;
        c->upkeep_failing = (struct UpkeepFailures) { 0 };
        (void) upkeep_all_dirs(root, cache_on_repair, c);   /* each failure is reported */
        c->upkeep_pass = false;
        upkeep_failures_said(c);
        cache_upkeep_conf(c, root);
}

/* Relative path of name in directory d ("" and NULL: the root). */
static int event_path(Cache *c, DirId d, const char *name, char *rel, size_t len) {
        size_t n;

        if (account_dir_path(c->account, d, rel, len) < 0)
                return -ENOENT;
        n = strlen(rel);
        if (name && snprintf(rel + n, len - n, "%s%s", n ? "/" : "", name) >= (int) (len - n))
                return -ENAMETOOLONG;
        return 0;
}

/* An event on directory d (name NULL) or on its subdirectory name. */
void cache_upkeep_event(Cache *c, int root, DirId d, const char *name) {
        char rel[PATH_MAX];

        if (c->remote && (d != DIR_ROOT || name))
                return;
        if (d == DIR_ROOT && !name) {
                cache_upkeep_root(c, root);
                return;
        }
        if (d == DIR_ROOT && strcmp(name, "ccache.conf") == 0) {
                cache_upkeep_conf(c, root);   /* a directory planted there */
                return;
        }
        if (event_path(c, d, name, rel, sizeof(rel)) == 0 && ccache_is_top_dir(rel))
                (void) upkeep_dir(root, rel, cache_on_repair, c);
}

/* An event on name, not a directory, in directory d: ccache.conf changed
 * in any way, or something that is not a directory where one of ccache's
 * belongs. Both are put right at once: root's next compile may be under way. */
void cache_upkeep_file_event(Cache *c, int root, DirId d, const char *name, uint32_t mask) {
        bool conf = d == DIR_ROOT && strcmp(name, "ccache.conf") == 0;
        const Dir *dir = account_dir(c->account, d);
        char rel[PATH_MAX];

        /* Most events are entries being stored: out quickly. Kept
         * directories sit in the root and in level-1 directories only. */
        if (c->remote || (!conf && (!(mask & (IN_CREATE | IN_MOVED_TO)) || strlen(name) > 4 || !dir || dir->depth > 1)))
                return;
        if (conf)
                cache_upkeep_conf(c, root);
        else if (event_path(c, d, name, rel, sizeof(rel)) == 0 && ccache_is_top_dir(rel))
                (void) upkeep_dir(root, rel, cache_on_repair, c);
}

/* The configuration changed (a reload): the root's mode and ccache.conf
 * follow at once. */
void cache_upkeep_reconfigured(Cache *c, int root) {
        cache_upkeep_root(c, root);
        if (!c->remote)
                cache_upkeep_conf(c, root);
}

/* Full upkeep once removals have been quiet for a while. */
void cache_upkeep_later(Cache *c) {
        (void) sd_event_source_set_time_relative(c->upkeep_timer, UPKEEP_DEBOUNCE_USEC);
        (void) sd_event_source_set_enabled(c->upkeep_timer, SD_EVENT_ONESHOT);
}
