/* SPDX-License-Identifier: MIT */
/* Every remote of a Config: a RedisRemote watched per redis remote, a
 * Cache in a remote layout kept per file: remote (a share: cache.h).
 * Rebuilt whole on reload. */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "config/config.h"
#include "os/watch.h"

typedef struct Remotes Remotes;

/* Before old is freed for rs after a reload: the alerts standing for each
 * remote of old that rs no longer names get their recovery. */
void remotes_retire(Remotes *old, const Remotes *rs);

/* Starts watching c's redis remotes (c, w and alerter borrowed: all outlive
 * the object) and sets up its shares, which remotes_start starts (after
 * the remotes this replaces let go of the shares' locks). Returns 0 or
 * -errno (nothing left running). */
int remotes_new(sd_event *e, Watch *w, Alerter *alerter, const Config *c, Remotes **ret);
void remotes_start(Remotes *rs);
/* Before old is freed (a reload): each share of rs that old keeps under the
 * same name and path, layout, clock and watch is taken over from old with
 * all it knows (no rescan), on rs's config from now on. Accepts old NULL. */
void remotes_adopt(Remotes *rs, Remotes *old);
/* inotify lost events: every share is rescanned. Accepts NULL. */
void remotes_events_lost(Remotes *rs);
/* The share (a file: remote's Cache) named name, or NULL. Borrowed. */
typedef struct Cache Cache;
Cache *remotes_share(Remotes *rs, const char *name);
/* Stops every watch. Accepts NULL; returns NULL. */
Remotes *remotes_free(Remotes *rs);

/* Status "remotes": one object per remote, in config order, at realtime
 * now. A new array, the caller's. */
json_object *remotes_status_json(const Remotes *rs, usec_t now);
