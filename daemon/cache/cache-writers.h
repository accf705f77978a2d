/* SPDX-License-Identifier: MIT */
/* Who wrote a cache's entries: each entry's header (its ccache version
 * and namespace) read once and kept as a tag byte in the account; a purge by
 * writer; the key families the stores show (cache-version-mix). */
#pragma once

#include <stdint.h>
#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "base/slice.h"
#include "cache/cache.h"
#include "ccache/ccache.h"
#include "evict/evict.h"
#include "tree/account.h"

/* Who wrote an entry: the tag byte the account keeps for each file. */
#define CACHE_WRITER_UNREAD  0            /* header not read yet */
#define CACHE_WRITER_UNKNOWN 1            /* no header that parses (raw files too) */
#define CACHE_WRITER_OTHER   2            /* a writer beyond the table's CACHE_WRITERS_MAX */
#define CACHE_WRITER_FIRST   3            /* (version, namespace) number tag - CACHE_WRITER_FIRST */
#define CACHE_WRITERS_MAX    32           /* distinct writers kept apart: a user's planted headers cannot grow it */
#define CACHE_WRITER_TAGS    (CACHE_WRITER_FIRST + CACHE_WRITERS_MAX)
/* The header pass over existing entries: a slice's time, headers read
 * between two looks at the clock, and files looked at (their tag byte) at
 * most. */
#define CACHE_WRITERS_SLICE_USEC  SLICE_USEC
#define CACHE_WRITERS_SLICE_EVERY 4
#define CACHE_WRITERS_LOOK        65536
/* The pass runs after every other job (trims, merges at idle priority):
 * who wrote what can wait, a trim someone asked for cannot. */
#define CACHE_WRITERS_PRIORITY    (SD_EVENT_PRIORITY_IDLE + 1)
/* A full table gives the slots of writers whose entries are all gone to new
 * ones, after a count of the entries by tag (a pass over the account): at
 * most this often when a header finds the table full; at every purge. */
#define CACHE_WRITERS_RECLAIM_USEC (60 * USEC_PER_SEC)

/* The headers of new entries are read as they are stored (dirfd: their
 * directory), of hit ones not read yet at their hit, and of those the
 * scans found by a pass below the trims (CACHE_WRITERS_PRIORITY), started (again) by
 * cache_writers_rescan after the first scan and after each later one that
 * found files new to the account (a directory renamed in). The pass's
 * source calls pass (the cache's), which gives cache_writers_pass the
 * iteration's root. */
int cache_writers_init(Cache *c, sd_event_handler_t pass);
void cache_writers_done(Cache *c);
void cache_writers_stored(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd);
void cache_writers_hit(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd);
void cache_writers_rescan(Cache *c);
/* An entry new to the account that was no store (renamed within the
 * cache): its header read now, unless the pass will (before the first
 * scan is over). */
void cache_writers_moved(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd);
/* The entries whose writer is not known yet: not read, and those beyond
 * the table while the pass reads them again (writers_pending). */
uint64_t cache_writers_unread(const Cache *c);
/* One slice of the pass, beneath root (-errno: the cache is gone; the
 * pass stops). Returns what the source's handler returns. */
int cache_writers_pass(Cache *c, int root);
/* The plan of a purge by writer: every entry whose header names version
 * (NULL: any) and namespace (NULL: any). Returns 0, -EBUSY while some
 * entries' headers are not read yet, -ENOMEM. */
int cache_writers_plan(Cache *c, const char *version, const char *ns, EvictPlan *ret);
/* The writers part of the status (counted by the working set's pass). */
json_object *cache_writers_json(Cache *c);
/* Stores of two key families within 24 h: cache-version-mix and its
 * recovery (on each feed); the families part of the status. */
void cache_writers_check(Cache *c, usec_t now);
json_object *cache_families_json(Cache *c, usec_t now);
