/* SPDX-License-Identifier: MIT */
/* The volumes that hold the caches: sampled every volumes.check_interval
 * and after every trim, alerted on when their level or fill trend changes,
 * and relieved by eviction (oldest first across all their caches) when
 * available space falls below volumes.min_free. */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "cache/cache.h"
#include "config/config.h"
#include "space/volume.h"

typedef struct Space Space;

int space_new(sd_event *e, Alerter *alerter, Space **ret);
Space *space_free(Space *s);
static inline void space_freep(Space **s) {
        space_free(*s);
}

/* Adopts config and the caches (both borrowed until the next call): one
 * volume per device of an available cache; a volume no cache is on any
 * more is dropped, one that stays keeps its state. Then samples. Starting a
 * pressure trim calls into a cache (cache_trim_plan), whose changed callback
 * may call this again: the space holds no Volume across such a call. */
void space_sync(Space *s, const Config *config, Cache **caches, size_t n_caches);

/* Samples every volume now and acts on what changed. */
void space_sample(Space *s);

size_t space_volumes(const Space *s);
const Volume *space_volume(const Space *s, size_t i);

/* The "volumes" array of the status object. New reference. */
json_object *space_status_json(Space *s);
