/* SPDX-License-Identifier: MIT */
/* A cache's alarms (alarm.h decides): cache-silent-miss, cache-idle,
 * remote-errors. */
#pragma once

#include "base/util.h"
#include "cache/cache.h"

/* Evaluates the cache's alarms at realtime now (after a
 * feed of its activity, when it is available and scanned) and sends what
 * fires or recovers through the alert path. */
void cache_alarms_check(Cache *c, usec_t now);
