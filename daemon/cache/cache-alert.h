/* SPDX-License-Identifier: MIT */
/* A cache's alerts: the one way its parts send an event to the journal
 * and alert_command, named by the cache (or remote) and with its volume's
 * figures while it is available. */
#pragma once

#include "alert/alert.h"
#include "base/util.h"
#include "cache/cache.h"

/* A cache event for the journal and alert_command. */
void cache_alert(Cache *c, AlertKind kind, int priority, const char *fmt, ...) _printf_(4, 5);
/* The same with a level ("warning", "ok" for the recovery...). */
void cache_alert_level(Cache *c, AlertKind kind, int priority, const char *level, const char *fmt, ...) _printf_(5, 6);
