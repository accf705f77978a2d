/* SPDX-License-Identifier: MIT */
/* What a Redis server's INFO and CONFIG GET replies say, and what to make
 * of them: the figures status shows, and whether the server will fill up
 * (remote-policy) or is close to it (remote-level). Pure: no I/O, no
 * clock, never logs; any bytes are safe input (fuzzed). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

#define REDIS_POLICY_MAX 32

/* Figures of one poll. A field the server did not send keeps its value. */
typedef struct RedisInfo {
        uint64_t used_memory;           /* INFO memory: used_memory */
        uint64_t maxmemory;             /* INFO memory: maxmemory (0: no limit) */
        char policy[REDIS_POLICY_MAX];  /* CONFIG GET maxmemory-policy, else INFO's
                                         * maxmemory_policy; "" unknown */
        uint64_t evicted_keys;          /* INFO stats */
        uint64_t keyspace_hits, keyspace_misses;
        uint64_t connected_clients;     /* INFO clients */
        uint64_t db_keys;               /* INFO keyspace: keys of the polled db */
        bool have_memory;               /* INFO memory answered with used_memory */
} RedisInfo;

/* Reads the "key:value" lines of an INFO reply (text, n bytes, not
 * necessarily NUL-terminated) into *info: the fields above it knows, db
 * (the database polled) for INFO keyspace's "dbN:keys=...". Unknown and
 * malformed lines are skipped. Returns how many known fields were read. */
int redis_info_parse(const char *text, size_t n, uint32_t db, RedisInfo *info);

/* Takes a policy name (CONFIG GET's answer, n bytes) into info->policy when
 * it is one Redis has; returns 0, or -EINVAL (unchanged). */
int redis_info_set_policy(RedisInfo *info, const char *name, size_t n);

/* Whether the server evicts ccache's keys when full: maxmemory set and an
 * allkeys-* policy. ccache stores keys without a TTL, so the volatile-*
 * policies evict none of them, as noeviction. Returns 1 evicting, 0 not
 * (the server will fill and every store fail), -1 unknown (policy unknown
 * and maxmemory set). */
int redis_info_evicts(const RedisInfo *info);

typedef enum RedisLevel {
        REDIS_LEVEL_OK,
        REDIS_LEVEL_WARNING,
        REDIS_LEVEL_CRITICAL,
} RedisLevel;

/* The memory level of a server that does not evict (redis_info_evicts 0
 * with maxmemory set): free = maxmemory - used_memory against warn and crit
 * (of maxmemory); leaving a level needs 1 % of maxmemory more (hysteresis
 * from the level before, prev). OK for one that evicts, has no maxmemory,
 * or an unknown policy. */
RedisLevel redis_info_level(const RedisInfo *info, const Threshold *warn, const Threshold *crit, RedisLevel prev);
const char *redis_level_name(RedisLevel l);
