/* SPDX-License-Identifier: MIT */
/* Alerts: one structured journal record per event (stable MESSAGE_ID per
 * kind, CACHEKEEPER_* fields) and one run of the configured alert_command,
 * without a shell, killed after alert_timeout, at most one at a time per
 * subject (a volume or a cache; later ones wait their turn). A failing
 * command is logged, never fatal. At most one record and run per subject and
 * kind per alert_min_interval: the first of a burst goes out at once, the
 * rest are folded into one record and run at the end of the window, which
 * carries the latest alert and CACHEKEEPER_FOLDED, how many it stands for.
 * An escalation is never folded: an alert of a higher priority than any sent
 * in the window (warning, then critical) goes out at once (alert-gate.h). */
#pragma once

#include <stdint.h>
#include <syslog.h>

#include <systemd/sd-event.h>

#include "base/util.h"

typedef enum AlertKind {
        ALERT_VOLUME_LEVEL,       /* "volume-level": a volume's level changed */
        ALERT_VOLUME_TREND,       /* "volume-trend": full within full_within, or recovered */
        ALERT_VOLUME_PRESSURE,    /* "volume-pressure": eviction for min_free started or could not help */
        ALERT_CACHE_MODE,         /* "cache-mode": a mode was repaired */
        ALERT_CACHE_TRIM_FAILED,  /* "cache-trim-failed": over its cap and could not trim */
        ALERT_CACHE_UNAVAILABLE,  /* "cache-unavailable": mount missing, root unusable */
        ALERT_CACHE_AVAILABLE,    /* "cache-available": back */
        ALERT_CACHE_CONF_UNSAFE,  /* "cache-conf-unsafe": ccache.conf had lines or a form that could run code */
        ALERT_CACHE_CAP_SMALL,    /* "cache-cap-small": the cap evicts what builds need again (level "ok": no more) */
        ALERT_CACHE_VERSION_MIX,  /* "cache-version-mix": writers of two key families store into one cache (level "ok": one again) */
        ALERT_CACHE_SILENT_MISS,  /* "cache-silent-miss": the hit rate dropped (level "warning"), or
                                   * hits are back (level "ok") */
        ALERT_CACHE_IDLE,         /* "cache-idle": no store, hit or call for idle_after ("warning"),
                                   * or in use again ("ok") */
        ALERT_REMOTE_UNREACHABLE, /* "remote-unreachable": a remote stopped answering ("critical"), or answers
                                   * again ("ok") */
        ALERT_REMOTE_POLICY,      /* "remote-policy": a redis remote will fill and refuse stores (no maxmemory,
                                   * or a policy that evicts none of ccache's keys), or evicts again ("ok") */
        ALERT_REMOTE_LEVEL,       /* "remote-level": a non-evicting redis remote's memory level changed */
        ALERT_REMOTE_ERRORS,      /* "remote-errors": a cache's ccache counted remote storage errors or
                                   * timeouts within remote_errors_window ("warning"), or none since ("ok") */
        ALERT_REMOTE_AUTH_REFUSED, /* "remote-auth-refused": the socket a redis remote's password would go to is
                                    * not held by root or server_user ("critical"), or is again ("ok") */
        ALERT_CACHE_CCACHE_CLEANUP, /* "cache-ccache-cleanup": ccache's own cleanup ran in a cache the daemon
                                     * keeps (its cleanups_performed counter moved): what to set */
        _ALERT_KIND_MAX,
} AlertKind;

typedef struct Alert {
        AlertKind kind;
        int priority;             /* LOG_INFO for recoveries, LOG_WARNING, LOG_CRIT ... */
        const char *level;        /* "ok", "warning", "critical", or NULL */
        const char *mount;        /* a volume event's mount point, else NULL */
        const char *cache;        /* a cache event's cache name, else NULL */
        const char *remote;       /* a remote event's remote name, else NULL (remote-errors: the cache's) */
        uint64_t avail_bytes, total_bytes;
        const char *message;      /* one line for a person */
} Alert;

typedef struct Alerter Alerter;

const char *alert_kind_name(AlertKind k);
const char *alert_message_id(AlertKind k);

/* argv (borrowed, NULL-terminated, may be NULL: journal only) is run for
 * each alert; timeout_usec bounds each run; min_interval_usec (0: no
 * folding) spaces the alerts of one subject and kind. Returns 0 or -errno. */
int alerter_new(sd_event *e, char **argv, usec_t timeout_usec, usec_t min_interval_usec, Alerter **ret);
/* Adopts a new command, timeout and interval (after a reload); runs in
 * flight go on, alerts being folded go out at the end of the new interval. */
void alerter_set_command(Alerter *a, char **argv, usec_t timeout_usec, usec_t min_interval_usec);
/* Kills what still runs; alerts still folded get their journal record (no
 * run). Accepts NULL; returns NULL. */
Alerter *alerter_free(Alerter *a);

/* Logs a and queues its command run, or folds it (see above): reads the
 * loop's CLOCK_MONOTONIC now. Copies what it keeps. */
void alert_emit(Alerter *a, const Alert *alert);

/* Commands run and failed so far, and alerts folded (held back for a
 * coalesced run), for status and tests. */
uint64_t alerter_runs(const Alerter *a);
uint64_t alerter_failures(const Alerter *a);
uint64_t alerter_folded(const Alerter *a);
