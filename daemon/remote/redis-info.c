/* SPDX-License-Identifier: MIT */
/* INFO's "key:value" lines and CONFIG GET's policy, read without trusting
 * a byte of them; and the two judgements the alerts rest on. Pure. */
#include <errno.h>
#include <string.h>

#include "remote/redis-info.h"

static const char *const policies[] = {
        "noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
        "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
};

/* A whole decimal number: exactly the n bytes at s. */
static bool number(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0 || n > 19)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        *ret = v;
        return true;
}

static bool key_is(const char *k, size_t n, const char *name) {
        return strlen(name) == n && memcmp(k, name, n) == 0;
}

/* "keys=12,expires=0,avg_ttl=0" of db's line: its keys. */
static bool db_keys(const char *v, size_t n, uint64_t *ret) {
        const char *end = v + n;

        if (n < 5 || memcmp(v, "keys=", 5) != 0)
                return false;
        v += 5;
        const char *comma = memchr(v, ',', (size_t) (end - v));
        return number(v, (size_t) ((comma ? comma : end) - v), ret);
}

/* One line k:v; 1 if it was a known field, else 0. */
static int line(const char *k, size_t kn, const char *v, size_t vn, uint32_t db, RedisInfo *info) {
        struct {
                const char *name;
                uint64_t *field;
        } fields[] = {
                { "used_memory", &info->used_memory },
                { "maxmemory", &info->maxmemory },
                { "evicted_keys", &info->evicted_keys },
                { "keyspace_hits", &info->keyspace_hits },
                { "keyspace_misses", &info->keyspace_misses },
                { "connected_clients", &info->connected_clients },
        };
        uint64_t x;

        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
                if (key_is(k, kn, fields[i].name)) {
                        if (!number(v, vn, &x))
                                return 0;
                        *fields[i].field = x;
                        if (fields[i].field == &info->used_memory)
                                info->have_memory = true;
                        return 1;
                }
        if (key_is(k, kn, "maxmemory_policy"))
                return redis_info_set_policy(info, v, vn) == 0;
        if (kn > 2 && memcmp(k, "db", 2) == 0 && number(k + 2, kn - 2, &x) && x == db && db_keys(v, vn, &x)) {
                info->db_keys = x;
                return 1;
        }
        return 0;
}

int redis_info_parse(const char *text, size_t n, uint32_t db, RedisInfo *info) {
        const char *p = text, *end = text + n;
        int found = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *e = nl ? nl : end, *colon;
                size_t len = (size_t) (e - p);

                if (len > 0 && p[len - 1] == '\r')
                        len--;
                colon = memchr(p, ':', len);
                if (p[0] != '#' && colon)
                        found += line(p, (size_t) (colon - p), colon + 1, len - (size_t) (colon - p) - 1, db, info);
                p = nl ? nl + 1 : end;
        }
        return found;
}

int redis_info_set_policy(RedisInfo *info, const char *name, size_t n) {
        for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
                if (key_is(name, n, policies[i])) {
                        memcpy(info->policy, policies[i], n + 1);
                        return 0;
                }
        return -EINVAL;
}

int redis_info_evicts(const RedisInfo *info) {
        if (info->maxmemory == 0)
                return 0;
        if (!info->policy[0])
                return -1;
        return strncmp(info->policy, "allkeys-", 8) == 0;
}

static uint64_t margin(const Threshold *t, uint64_t total) {
        return threshold_resolve(t, total);
}

RedisLevel redis_info_level(const RedisInfo *info, const Threshold *warn, const Threshold *crit, RedisLevel prev) {
        uint64_t max = info->maxmemory, used = info->used_memory, free_bytes, hyst;
        RedisLevel l;

        if (max == 0 || redis_info_evicts(info) != 0)
                return REDIS_LEVEL_OK;
        free_bytes = used >= max ? 0 : max - used;
        hyst = max / 100;
        /* Entering a level needs free below its threshold; leaving it, above
         * the threshold by the margin. */
        if (free_bytes < margin(crit, max) || (prev >= REDIS_LEVEL_CRITICAL && free_bytes < margin(crit, max) + hyst))
                l = REDIS_LEVEL_CRITICAL;
        else if (free_bytes < margin(warn, max) || (prev >= REDIS_LEVEL_WARNING && free_bytes < margin(warn, max) + hyst))
                l = REDIS_LEVEL_WARNING;
        else
                l = REDIS_LEVEL_OK;
        return l;
}

const char *redis_level_name(RedisLevel l) {
        return l == REDIS_LEVEL_CRITICAL ? "critical" : l == REDIS_LEVEL_WARNING ? "warning" : "ok";
}
