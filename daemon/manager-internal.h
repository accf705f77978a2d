/* SPDX-License-Identifier: MIT */
/* The Manager's insides, shared by manager.c and requests.c only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "cache/cache.h"
#include "config/config.h"
#include "control/control.h"
#include "manager.h"
#include "os/watch.h"
#include "remote/remotes.h"
#include "space/space.h"

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
        Remotes *remotes;         /* the config's remotes; rebuilt on reload */
        Cache **caches;
        size_t n_caches;
        sd_event_source *check_timer, *audit_timer, *mountinfo, *admin_timer;
        sd_event_source *sync;    /* armed (one-shot) when a cache changed: on_sync */
        int mountinfo_fd;
        int state_fd;             /* the config's state_dir at start; -1: history is not kept */
        char *state_dir;          /* its path, for messages */
        sd_event_source *history_timer;
        gid_t admin_gid;          /* admin_group's gid, looked up at load, reload and on admin_timer */
        bool admin_gid_known;     /* false: no such group (only root is admin) */
        bool ready;
        DryRunUse dry_runs[DRY_RUN_UIDS];
        struct Merge *merge;      /* the running merge, or the last one (merge.h); NULL: none yet */
};

const char *manager_socket_path(const Manager *m);

/* The kept cache named name (and at path, unless NULL), or NULL: the one
 * find-by-name of requests and the merge. */
Cache *manager_find_cache(const Manager *m, const char *name, const char *path);

/* requests.c: what a control client asked (status, trim, reload). */
void manager_on_request(ControlRequest *req, const char *cmd, json_object *request, void *userdata);

/* requests.c: whether peer is root or a member of admin_group (primary
 * group, or a supplementary group as the socket gave them), from the gid
 * the manager holds: no lookup. userdata is the Manager. */
bool manager_peer_is_admin(const ControlPeer *peer, void *userdata);
