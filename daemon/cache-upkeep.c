/* SPDX-License-Identifier: MIT */
/* A cache's upkeep: the root's mode, ccache's directories and ccache.conf,
 * checked in full at set-up and after removals, and on each event that
 * touches them. The work itself is upkeep.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache-internal.h"
#include "log.h"
#include "upkeep.h"

void cache_on_repair(const char *what, mode_t was, mode_t now, void *userdata) {
        Cache *c = userdata;

        c->mode_repairs++;
        if (c->repairs_unreported++ == 0)
                snprintf(c->first_repair, sizeof(c->first_repair), "%s%s%s was %04o, now %04o", c->config->path,
                         *what ? "/" : "", what, (unsigned) was, (unsigned) now);
        log_notice("Cache %s: repaired the mode of %s%s%s: was %04o, now %04o%s.", c->config->name,
                   c->config->path, *what ? "/" : "", what, (unsigned) was, (unsigned) now,
                   *what ? " (a writer with a restrictive umask, or root in a container?)" : "");
}

void cache_upkeep_conf(Cache *c, int root) {
        char old[64];
        int r;

        if (!c->config->manage_ccache_conf)
                return;
        ccache_format_size((uint64_t) ((double) c->config->max_size_bytes * CCACHE_CONF_MARGIN),
                           c->ccache_max_size, sizeof(c->ccache_max_size));
        r = upkeep_ccache_conf(root, c->ccache_max_size, old, sizeof(old));
        if (r < 0)
                log_warning_errno(r, "Cache %s: cannot keep %s/ccache.conf: %m", c->config->name, c->config->path);
        else if (r > 0)
                log_notice("Cache %s: wrote umask = 000 and max_size = %s to ccache.conf%s%s%s.", c->config->name,
                           c->ccache_max_size, *old ? " (max_size was " : "", old, *old ? ")" : "");
}

/* Everything that keeps the cache usable by every user, checked in full. */
void cache_upkeep(Cache *c) {
        int root = cache_root_get(c), r;

        if (root < 0)
                return;
        r = upkeep_root(root, c->config->mode, cache_on_repair, c);
        if (r >= 0)
                r = upkeep_all_dirs(root, cache_on_repair, c);
        if (r < 0)
                log_warning_errno(r, "Cache %s: cannot keep ccache's directories usable: %m", c->config->name);
        cache_upkeep_conf(c, root);
}

/* An event on directory d (name NULL) or on its subdirectory name. */
void cache_upkeep_event(Cache *c, DirId d, const char *name) {
        char rel[PATH_MAX];
        size_t n;
        int root = cache_root_get(c);

        if (root < 0)
                return;
        if (d == DIR_ROOT && !name) {
                (void) upkeep_root(root, c->config->mode, cache_on_repair, c);
                return;
        }
        if (account_dir_path(c->account, d, rel, sizeof(rel)) < 0)
                return;
        n = strlen(rel);
        if (name && snprintf(rel + n, sizeof(rel) - n, "%s%s", n ? "/" : "", name) >= (int) (sizeof(rel) - n))
                return;
        if (upkeep_is_kept_dir(rel))
                (void) upkeep_dir(root, rel, cache_on_repair, c);
}

/* Full upkeep once removals have been quiet for a while. */
void cache_upkeep_later(Cache *c) {
        (void) sd_event_source_set_time_relative(c->upkeep_timer, UPKEEP_DEBOUNCE_USEC);
        (void) sd_event_source_set_enabled(c->upkeep_timer, SD_EVENT_ONESHOT);
}

int cache_on_upkeep_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Cache *c = userdata;

        if (c->available)
                cache_upkeep(c);
        return 0;
}
