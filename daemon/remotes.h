/* SPDX-License-Identifier: MIT */
/* Every remote of a Config: a RedisRemote per redis remote; file: remotes
 * are parsed and validated but not kept yet (status says so). Rebuilt
 * whole on reload. */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "alert.h"
#include "config.h"

typedef struct Remotes Remotes;

/* Starts watching c's remotes (c and alerter borrowed: both outlive the
 * object). Returns 0 or -errno (nothing left running). */
int remotes_new(sd_event *e, Alerter *alerter, const Config *c, Remotes **ret);
/* Stops every watch. Accepts NULL; returns NULL. */
Remotes *remotes_free(Remotes *rs);

/* Status "remotes": one object per remote, in config order, at realtime
 * now. A new array, the caller's. */
json_object *remotes_status_json(const Remotes *rs, usec_t now);
