/* SPDX-License-Identifier: MIT */
/* The Manager's insides, shared by manager.c and requests.c only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "alert.h"
#include "cache.h"
#include "config.h"
#include "control.h"
#include "manager.h"
#include "space.h"
#include "watch.h"

/* requests.c: what one uid's dry runs have used of their limits. */
#define DRY_RUN_UIDS 64                    /* distinct uids tracked at once */
typedef struct DryRunUse {
        uid_t uid;
        bool busy;                         /* one queued or running */
        unsigned used;                     /* in the minute since window_start */
        usec_t window_start;               /* monotonic */
} DryRunUse;

struct Manager {
        sd_event *event;
        Config *config;
        char *config_path;        /* NULL: built-in */
        char *socket_override;    /* from -s, survives reloads */
        Watch *watch;
        Control *control;
        Alerter *alerter;
        Space *space;
        Cache **caches;
        size_t n_caches;
        sd_event_source *check_timer, *audit_timer, *mountinfo;
        int mountinfo_fd;
        bool ready;
        DryRunUse dry_runs[DRY_RUN_UIDS];
};

const char *manager_socket_path(const Manager *m);

/* requests.c: what a control client asked (status, trim, reload). */
void manager_on_request(ControlRequest *req, const char *cmd, json_object *request, void *userdata);
