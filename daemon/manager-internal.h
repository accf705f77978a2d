/* SPDX-License-Identifier: MIT */
/* The Manager's insides, shared by manager.c and requests.c only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-event.h>

#include "alert.h"
#include "cache.h"
#include "config.h"
#include "control.h"
#include "manager.h"
#include "space.h"
#include "watch.h"

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
};

const char *manager_socket_path(const Manager *m);

/* requests.c: what a control client asked (status, trim, reload). */
void manager_on_request(ControlRequest *req, const char *cmd, json_object *request, void *userdata);
