/* SPDX-License-Identifier: MIT */
/* Runs of alert_command: spawned directly (posix_spawn, no shell) with a
 * clean signal mask and only the environment given, in a session of its
 * own; killed with what it started after the timeout. At most one run at a
 * time per subject (a volume or a cache): later ones wait their turn. A
 * failing command is logged, never fatal. Knows nothing of alerts: alert.c
 * decides what runs, and with what environment. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "base/util.h"

#define ALERT_RUNNER_ENV_MAX 10      /* variables a run is given */
#define ALERT_RUNNER_QUEUE_MAX 32    /* runs waiting per subject; beyond, the oldest is dropped */

/* One run of the command. */
typedef struct AlertJob {
        char *env[ALERT_RUNNER_ENV_MAX + 1];  /* NULL-terminated; owned */
        char *what;                           /* "volume-level on /mnt/x", for messages; owned */
} AlertJob;

/* Frees what j owns and zeroes it. */
void alert_runner_job_done(AlertJob *j);

typedef struct AlertRunner AlertRunner;

/* argv (borrowed, NULL-terminated, may be NULL: nothing is run) is the
 * command; timeout_usec bounds each run. Returns 0 or -ENOMEM. */
int alert_runner_new(sd_event *e, char **argv, usec_t timeout_usec, AlertRunner **ret);
/* Adopts a new command and timeout (after a reload): runs in flight go on,
 * runs still waiting run the new command (none if argv is NULL). */
void alert_runner_set_command(AlertRunner *r, char **argv, usec_t timeout_usec);
/* Kills what still runs (and what it started), drops what waits. Accepts
 * NULL; returns NULL. */
AlertRunner *alert_runner_free(AlertRunner *r);

/* Is there a command to run? */
bool alert_runner_has_command(const AlertRunner *r);

/* Queues job for subject (copied), and starts it if nothing of subject's is
 * running. Takes what job owns, and zeroes *job, on failure too. Returns 0,
 * or -ENOMEM (the job is dropped). */
int alert_runner_queue(AlertRunner *r, const char *subject, AlertJob *job);

/* Runs started and runs failed so far (could not start, failed, or were
 * killed), for status and tests. */
uint64_t alert_runner_runs(const AlertRunner *r);
uint64_t alert_runner_failures(const AlertRunner *r);
