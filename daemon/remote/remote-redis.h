/* SPDX-License-Identifier: MIT */
/* One Redis remote, watched and never written: every poll_interval a fresh
 * non-blocking connection on the sd-event loop (hiredis's async API through
 * a small adapter) sends AUTH (with a password_file, once the socket at the
 * other end is known to be root's or server_user's, else the round is
 * refused), SELECT (db), INFO memory, stats, keyspace, clients, CONFIG GET
 * maxmemory-policy and a SCAN pass over ccache:* (COUNT 1000, one call in
 * flight); connect and each reply must come within timeout, the whole round
 * within round_timeout, each reply and the round's replies within fixed
 * bounds of bytes and elements, or the round fails (past round_timeout or
 * a round's bounds during SCAN: the key count is unknown). Raises and
 * recovers remote-unreachable (two failed rounds in a row),
 * remote-auth-refused, remote-policy and remote-level through the alert
 * path. Logs its transitions. */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "config/config.h"

typedef struct RedisRemote RedisRemote;

/* Starts watching rc (borrowed: it outlives the object) on e, its first
 * round at once; alerts go to alerter (borrowed). Returns 0 or -errno. */
int redis_remote_new(sd_event *e, Alerter *alerter, const RemoteConfig *rc, RedisRemote **ret);

/* Closes a round in flight, stops the timers. Accepts NULL; returns NULL. */
RedisRemote *redis_remote_free(RedisRemote *r);
/* A remote a reload no longer configures, before it is freed: each alert
 * that stands for it gets its recovery, saying why. */
void redis_remote_retire(RedisRemote *r);

/* The remote's entry of status "remotes" (see cachectl.1), at realtime now.
 * Never holds a secret. A new object, the caller's. */
json_object *redis_remote_status_json(const RedisRemote *r, usec_t now);
