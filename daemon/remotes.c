/* SPDX-License-Identifier: MIT */
/* The remotes of one Config, in its order. */
#include <errno.h>
#include <stdlib.h>

#include "remote-redis.h"
#include "remote.h"
#include "remotes.h"

struct Remotes {
        const Config *config;           /* borrowed */
        RedisRemote **redis;            /* per config remote; NULL for file: ones */
};

int remotes_new(sd_event *e, Alerter *alerter, const Config *c, Remotes **ret) {
        Remotes *rs = calloc(1, sizeof(*rs));
        int r;

        if (!rs)
                return -ENOMEM;
        rs->config = c;
        rs->redis = calloc(c->n_remotes ?: 1, sizeof(RedisRemote *));
        if (!rs->redis) {
                free(rs);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->n_remotes; i++) {
                if (c->remotes[i].u.kind != REMOTE_REDIS)
                        continue;
                r = redis_remote_new(e, alerter, &c->remotes[i], &rs->redis[i]);
                if (r < 0) {
                        remotes_free(rs);
                        return r;
                }
        }
        *ret = rs;
        return 0;
}

Remotes *remotes_free(Remotes *rs) {
        if (!rs)
                return NULL;
        for (size_t i = 0; i < rs->config->n_remotes; i++)
                redis_remote_free(rs->redis[i]);
        free(rs->redis);
        free(rs);
        return NULL;
}

/* A file: remote: what was configured, and plainly that nothing keeps it. */
static json_object *file_status(const RemoteConfig *rc) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "name", json_object_new_string(rc->name));
        json_object_object_add(o, "url", json_object_new_string(rc->url));
        json_object_object_add(o, "kind", json_object_new_string("file"));
        json_object_object_add(o, "state", json_object_new_string("not_kept"));
        json_object_object_add(o, "reason", json_object_new_string("file: remotes are parsed and validated, "
                                                                   "not kept yet by this version"));
        json_object_object_add(o, "layout", json_object_new_string(remote_layout_name(rc->layout)));
        json_object_object_add(o, "max_size_bytes", rc->max_size_bytes ? json_object_new_uint64(rc->max_size_bytes)
                                                                        : NULL);
        json_object_object_add(o, "alerts", json_object_new_array());
        return o;
}

json_object *remotes_status_json(const Remotes *rs, usec_t now) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < rs->config->n_remotes; i++)
                json_object_array_add(a, rs->redis[i] ? redis_remote_status_json(rs->redis[i], now)
                                                      : file_status(&rs->config->remotes[i]));
        return a;
}
