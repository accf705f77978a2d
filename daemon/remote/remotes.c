/* SPDX-License-Identifier: MIT */
/* The remotes of one Config, in its order: a RedisRemote watched per redis
 * remote, a Cache (cache.h, in a remote layout) kept per file: remote. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/status-keys.h"
#include "base/util.h"
#include "cache/cache.h"
#include "config/config.h"
#include "remote/remote-redis.h"
#include "remote/remotes.h"

#define REMOTES_CHECK_USEC USEC_PER_SEC   /* mounts, roots, heartbeats, paced rescans */

struct Remotes {
        sd_event *event;
        const Config *config;           /* borrowed */
        RedisRemote **redis;            /* per config remote; NULL for file: ones */
        Cache **shares;                 /* per config remote; NULL for redis ones */
        sd_event_source *check_timer;
};

static int on_check_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Remotes *rs = userdata;
        usec_t now = event_now(rs->event, CLOCK_MONOTONIC);

        for (size_t i = 0; i < rs->config->n_remotes; i++)
                if (rs->shares[i])
                        cache_check(rs->shares[i], now);
        return sd_event_source_set_time_relative(s, REMOTES_CHECK_USEC);
}

int remotes_new(sd_event *e, Watch *w, Alerter *alerter, const Config *c, Remotes **ret) {
        Remotes *rs = calloc(1, sizeof(*rs));
        int r = -ENOMEM;

        if (!rs)
                return -ENOMEM;
        rs->event = sd_event_ref(e);
        rs->config = c;
        rs->redis = calloc(c->n_remotes ?: 1, sizeof(RedisRemote *));
        rs->shares = calloc(c->n_remotes ?: 1, sizeof(Cache *));
        if (!rs->redis || !rs->shares)
                goto fail;
        for (size_t i = 0; i < c->n_remotes; i++) {
                r = c->remotes[i].u.kind == REMOTE_REDIS
                            ? redis_remote_new(e, alerter, &c->remotes[i], &rs->redis[i])
                            : cache_new(e, w, alerter, &c->remotes[i].cache, NULL, NULL, &rs->shares[i]);
                if (r < 0)
                        goto fail;
        }
        r = sd_event_add_time_relative(e, &rs->check_timer, CLOCK_MONOTONIC, REMOTES_CHECK_USEC, 0, on_check_timer, rs);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(rs->check_timer, "remotes-check");
        (void) sd_event_source_set_enabled(rs->check_timer, SD_EVENT_OFF);
        *ret = rs;
        return 0;
fail:
        remotes_free(rs);
        return r;
}

/* The same share, kept the same way: what it knows stays valid. */
static bool same_share(const CacheConfig *a, const CacheConfig *b) {
        return strcmp(a->name, b->name) == 0 && strcmp(a->path, b->path) == 0 && a->layout == b->layout &&
               a->clock == b->clock && a->watch_mode == b->watch_mode;
}

void remotes_adopt(Remotes *rs, Remotes *old) {
        for (size_t i = 0; old && i < rs->config->n_remotes; i++) {
                const CacheConfig *cc = &rs->config->remotes[i].cache;

                for (size_t j = 0; rs->shares[i] && j < old->config->n_remotes; j++) {
                        if (!old->shares[j] || !same_share(cache_config(old->shares[j]), cc))
                                continue;
                        cache_free(rs->shares[i]);   /* never started: holds nothing */
                        rs->shares[i] = TAKE_PTR(old->shares[j]);
                        cache_set_config(rs->shares[i], cc);
                        break;
                }
        }
}

void remotes_retire(Remotes *old, const Remotes *rs) {
        for (size_t j = 0; old && j < old->config->n_remotes; j++) {
                const char *name = old->config->remotes[j].name;
                bool kept = false;

                for (size_t i = 0; rs && i < rs->config->n_remotes && !kept; i++)
                        kept = strcmp(rs->config->remotes[i].name, name) == 0;
                if (kept)
                        continue;   /* still configured: its alerts are its own again */
                if (old->redis && old->redis[j])
                        redis_remote_retire(old->redis[j]);
                if (old->shares && old->shares[j])
                        cache_retire(old->shares[j]);
        }
}

void remotes_start(Remotes *rs) {
        for (size_t i = 0; i < rs->config->n_remotes; i++)
                if (rs->shares[i])
                        cache_start(rs->shares[i]);
        (void) sd_event_source_set_enabled(rs->check_timer, SD_EVENT_ON);
}

void remotes_events_lost(Remotes *rs) {
        for (size_t i = 0; rs && i < rs->config->n_remotes; i++)
                if (rs->shares[i])
                        cache_events_lost(rs->shares[i]);
}

Cache *remotes_share(Remotes *rs, const char *name) {
        for (size_t i = 0; rs && i < rs->config->n_remotes; i++)
                if (rs->shares[i] && strcmp(rs->config->remotes[i].name, name) == 0)
                        return rs->shares[i];
        return NULL;
}

Remotes *remotes_free(Remotes *rs) {
        if (!rs)
                return NULL;
        for (size_t i = 0; i < rs->config->n_remotes; i++) {
                if (rs->redis)
                        redis_remote_free(rs->redis[i]);
                if (rs->shares)
                        cache_free(rs->shares[i]);
        }
        sd_event_source_disable_unref(rs->check_timer);
        sd_event_unref(rs->event);
        free(rs->redis);
        free(rs->shares);
        free(rs);
        return NULL;
}

/* A file: remote: what was configured, and how it is kept. */
static json_object *file_status(const RemoteConfig *rc, Cache *share) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, STATUS_REMOTE_NAME, json_object_new_string(rc->name));
        json_object_object_add(o, STATUS_REMOTE_URL, json_object_new_string(rc->url));
        json_object_object_add(o, STATUS_REMOTE_KIND, json_object_new_string("file"));
        json_object_object_add(o, STATUS_SHARE_LAYOUT, json_object_new_string(remote_layout_name(rc->cache.layout)));
        cache_remote_status(share, o);
        return o;
}

json_object *remotes_status_json(const Remotes *rs, usec_t now) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < rs->config->n_remotes; i++)
                json_object_array_add(a, rs->redis[i] ? redis_remote_status_json(rs->redis[i], now)
                                                      : file_status(&rs->config->remotes[i], rs->shares[i]));
        return a;
}
