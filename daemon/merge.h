/* SPDX-License-Identifier: MIT */
/* cachectl merge FROM --into TO: every ccache entry of one kept cache moved
 * into another, by the daemon, while both are in use. First the cap: the
 * coldest entries of both caches together are planned away (evict.h,
 * evict_plan_multi) until what stays fits below TO's trim target, TO's
 * carried out by TO's trim queue and FROM's by FROM's; then the entries, in
 * slices of the loop (daemon/README.md §6), one directory at a time, each
 * one re-checked and moved by evict/move.h; before each, TO's figure plus
 * the entry must stay within TO's cap, else the coldest of both go again
 * first. Copies go at most MERGE_SLICE_BYTES a slice (a big entry over
 * several), and sparse names are never copied (move.h). After each slice's
 * writes TO's directory is opened again from TO's root and must be the one
 * written into: only then do the sources go and the moves count; else
 * what was put there is taken back (a user renamed it away). Both accounts
 * learn of every move as it happens (the inotify
 * events that follow find them already right: nothing counts twice), and
 * ccache's counters of every level-2 directory touched are recounted in
 * both caches. Entries written to FROM meanwhile are taken in further
 * rounds. Caches are found by name at every slice: a reload that keeps them
 * keeps the merge going. One merge at a time. Logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <systemd/sd-event.h>

#include "base/protocol.h"
#include "cache/cache.h"
#include "config/config.h"

typedef struct Merge Merge;

/* What the merge borrows from its owner (the manager), as TrimQueueEnv
 * lends a cache to its trims: nothing else of the owner's is reached. */
typedef struct MergeEnv {
        sd_event *event;
        int state_fd;   /* the state directory, for MERGE_MARK; -1: none */
        /* The kept cache named name (and at path, unless NULL), or NULL:
         * asked again at every slice, so that a reload that keeps both
         * caches keeps the merge going. */
        Cache *(*find)(void *userdata, const char *name, const char *path);
        /* The limits for the volume mounted at mount (config_volume). */
        const VolumeConfig *(*volume)(void *userdata, const char *mount);
        void *userdata;
} MergeEnv;

/* The merge is over (done, failed or stopped); merge_json says how. The
 * merge stays its owner's until the owner frees it (the manager keeps the
 * last one for status until the next starts): the callee never frees it. */
typedef void (*merge_done_t)(Merge *j, void *userdata);

/* Checks and plans the merge req asks for (both caches kept, local,
 * scanned; one key family unless allow_mixed; TO's volume can take what
 * stays; running: the owner's merge now, which must be over). A dry run:
 * *ret_result is what would happen, nothing is started. Otherwise the
 * merge starts (*ret, the caller's) and done is called when it is over.
 * Returns 0, or -errno with a message for the client in err. */
int merge_start(const MergeEnv *env, const Merge *running, const ProtocolMerge *req, merge_done_t done,
                void *userdata, Merge **ret, json_object **ret_result, char *err, size_t errlen);
/* Is j running (not yet over)? NULL: no. */
bool merge_running(const Merge *j);
/* The merge's figures: the status's "merge" object (status_only), or the
 * whole result (STATUS_MERGE_*). New reference. */
json_object *merge_json(const Merge *j, bool status_only);
/* Is cache name FROM or TO of j, and j still running? */
bool merge_involves(const Merge *j, const char *name);
/* Stops j if it runs (its done callback is called first), frees it. */
Merge *merge_free(Merge *j);
