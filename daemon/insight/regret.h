/* SPDX-License-Identifier: MIT */
/* Eviction regret: what the daemon evicted (a 64-bit fingerprint of each
 * entry's key, when, why, and how many bytes had been evicted until then)
 * and every later store of such a key: a miss the cap caused. From how
 * many bytes went between an entry's eviction and its return comes the cap
 * that would have kept it. Beside them, apart, the entries that left
 * otherwise (a purge by writer, removals by others: ccache's own cleanup,
 * rm), which are never regret. Both answer "when and why did this key
 * leave?" (regret_left_at) for `cachectl measure --explain`. Pure: no I/O,
 * no clock reads (now is unix seconds, passed in), never logs.
 *
 * Memory: the last REGRET_KEYS evictions, 25 bytes each (a 16-byte record,
 * 1 byte of reason and 8 bytes of index), allocated at the first eviction:
 * 3.1 MiB a cache that trims, nothing for one that never does; the last
 * REGRET_LEFT_KEYS departures of the other kind, 25 bytes each likewise,
 * allocated at the first: 800 KiB; plus 19 kB of figures (regret_bytes).
 * Older evictions are forgotten, as are those of more than 30 days ago:
 * their return is no longer counted, nor their departure told. An eviction
 * whose key came back is kept (marked returned) until the ring drops it:
 * it still tells when the key left, but a second store of it is no regret. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REGRET_KEYS    131072U          /* evictions remembered */
#define REGRET_RETURNS 2048U            /* returns kept for the cap estimate */
#define REGRET_HOURS   168U             /* hourly figures: 7 days */
#define REGRET_MAX_AGE (30U * 86400U)   /* an eviction older than this is forgotten */
#define REGRET_LEFT_KEYS 32768U         /* departures not regretted (purges, removals by others) remembered */

/* Why an entry left the cache. The first four are the daemon's trims (a
 * manual `cachectl trim` counts as the cap's: the same LRU down to a size);
 * REGRET_BY_UNKNOWN is an eviction remembered from a state file of version
 * 1, which did not record why. */
typedef enum RegretBy {
        REGRET_BY_CAP,
        REGRET_BY_PRESSURE,
        REGRET_BY_MERGE,
        REGRET_BY_PURGE,                /* cachectl trim --written-by: never regret */
        REGRET_BY_OTHER,                /* not the daemon: ccache's own cleanup, rm; never regret */
        REGRET_BY_UNKNOWN,
        _REGRET_BY_MAX,
} RegretBy;

typedef struct Regret Regret;

/* A new, empty Regret. Returns 0 or -ENOMEM; *ret is the caller's. */
int regret_new(Regret **ret);
/* Frees r; NULL is fine. Returns NULL. */
Regret *regret_free(Regret *r);

/* The fingerprint of an entry's key: the hex digits of its directories
 * below the root followed by its file name ("ab" and "cdef...R" for
 * a/b/cdef...R), so that an entry moved to another depth keeps its key. */
uint64_t regret_key(const char *dir_digits, const char *name);

/* The daemon evicted the entry of key fp, of bytes, last used at mtime, at
 * now, by (REGRET_BY_CAP, _PRESSURE or _MERGE: a trim whose later misses
 * are regret). Returns 0, or -ENOMEM (nothing remembered, but counted among
 * the young evictions; the next call tries again). */
int regret_evicted(Regret *r, uint64_t fp, uint64_t bytes, int64_t mtime, uint64_t now, RegretBy by);

/* The entry of key fp left at now otherwise than by a trim that regret
 * counts: by REGRET_BY_PURGE or REGRET_BY_OTHER. Remembered only to be
 * told (regret_left_at): no figure changes, and a later store of fp is no
 * regretted one. Returns 0 or -ENOMEM (nothing remembered). */
int regret_left(Regret *r, uint64_t fp, uint64_t now, RegretBy by);

/* When (unix seconds, *ret_at) and why (*ret_by) the entry of key fp last
 * left the cache, of what is remembered: an eviction (whether or not the
 * key came back since) or another departure, the later of the two, if
 * within REGRET_MAX_AGE before now. Returns false, the outputs untouched,
 * when none is. */
bool regret_left_at(const Regret *r, uint64_t fp, uint64_t now, uint32_t *ret_at, RegretBy *ret_by);

/* An entry of key fp, of bytes, was stored at now. If the daemon evicted
 * that key within REGRET_MAX_AGE (and still remembers it, not returned
 * yet), this store is a regretted one: counted, the eviction marked
 * returned (a second store of it is none), and true returned. */
bool regret_stored(Regret *r, uint64_t fp, uint64_t bytes, uint64_t now);

typedef struct RegretFigures {
        uint64_t stores_24h, stores_7d;         /* regretted stores */
        uint64_t bytes_24h, bytes_7d;           /* and their bytes */
        /* The bytes evicted between a regretted entry's eviction and its
         * return that 90 % of the returns of the last 7 days stayed within:
         * a cap this much larger would have kept them. 0 without returns. */
        uint64_t extra_bytes_p90;
        /* Bytes evicted over 7 days that had been used within the 7 days
         * before their eviction: part of the 7-day working set the cap
         * could not hold. */
        uint64_t young_evicted_7d;
        size_t remembered;                      /* evictions remembered now */
} RegretFigures;

/* The figures at now. */
void regret_figures(const Regret *r, uint64_t now, RegretFigures *ret);

/* Bytes r holds (its figures, its remembered evictions once any, and its
 * other departures once any). */
size_t regret_bytes(const Regret *r);

/* Encoding for the state file (state-file.c adds the envelope), all
 * little-endian: the ring's head and count, the bytes evicted so far, the
 * returns' head and count (u64 each), then REGRET_KEYS records (key u64,
 * time u32, KiB u32), REGRET_HOURS hours (hour u32, stores u32, bytes u64,
 * young bytes u64) and REGRET_RETURNS returns (time u32, KiB u32): version
 * 1, REGRET_ENCODED_BYTES_V1. Version 2 goes on: REGRET_KEYS reasons (u8:
 * the RegretBy, 0x80 added once returned), then the other departures' head
 * and count (u64 each) and REGRET_LEFT_KEYS of them (key u64, time u32,
 * RegretBy u32). The indexes are not in it: decoding rebuilds them. */
#define REGRET_ENCODED_BYTES_V1 (5U * 8U + REGRET_KEYS * 16U + REGRET_HOURS * 24U + REGRET_RETURNS * 8U)
#define REGRET_ENCODED_BYTES (REGRET_ENCODED_BYTES_V1 + REGRET_KEYS + 2U * 8U + REGRET_LEFT_KEYS * 16U)
/* Whether r remembers anything worth writing (an eviction or a figure). */
bool regret_any(const Regret *r);
/* Writes r into buf (REGRET_ENCODED_BYTES). */
void regret_encode(const Regret *r, uint8_t *buf);
/* Replaces what r remembers with what buf holds, an encoding of version
 * (1: REGRET_ENCODED_BYTES_V1, its evictions' reasons REGRET_BY_UNKNOWN and
 * no other departures; 2: REGRET_ENCODED_BYTES). Returns 0, -EBADMSG when
 * buf cannot be an encoding (a head, a count or a reason out of range, an
 * unknown version; r unchanged), or -ENOMEM (r unchanged). */
int regret_decode(Regret *r, const uint8_t *buf, unsigned version);
