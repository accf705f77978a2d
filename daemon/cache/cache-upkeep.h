/* SPDX-License-Identifier: MIT */
/* A cache kept usable by every user: its modes and its ccache.conf
 * (upkeep.h does the work), and the alerts when they needed repair. */
#pragma once

#include <stdint.h>

#include "cache/cache.h"
#include "ccache/upkeep.h"
#include "tree/account.h"

/* Modes and ccache.conf (ccache.conf's max_size is 20 x the cap,
 * ccache_conf_max_size: ccache 4.7 trims a level-1 directory only past
 * max_size/16, 4.8+ the cache only past max_size, so while the daemon keeps
 * the cache under the cap ccache's own cleanup never competes, however the
 * cache is spread; if the daemon stops, ccache still bounds the cache) */
void cache_on_repair(const UpkeepReport *r, void *userdata);
/* The mode repairs since the last call, in one alert (a count and the
 * first few directories): called after each loop iteration. */
void cache_repairs_report(Cache *c);
/* Each beneath root, the iteration's (cache.c: cache_root_get). In full;
 * the root's mode; ccache.conf; an event on directory d (name NULL) or on
 * its subdirectory name; an event on name, not a directory, in d; after a
 * reload. */
void cache_upkeep(Cache *c, int root);
void cache_upkeep_root(Cache *c, int root);
void cache_upkeep_conf(Cache *c, int root);
void cache_upkeep_event(Cache *c, int root, DirId d, const char *name);
void cache_upkeep_file_event(Cache *c, int root, DirId d, const char *name, uint32_t mask);
void cache_upkeep_reconfigured(Cache *c, int root);
/* Full upkeep once removals have been quiet for a while (the cache's
 * upkeep_timer). */
void cache_upkeep_later(Cache *c);
