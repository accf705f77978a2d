/* SPDX-License-Identifier: MIT */
/* Eviction regret: what the daemon evicted (a 64-bit fingerprint of each
 * entry's key, when, and how many bytes had been evicted until then) and
 * every later store of such a key: a miss the cap caused. From how many
 * bytes went between an entry's eviction and its return comes the cap that
 * would have kept it. Pure: no I/O, no clock reads (now is unix seconds,
 * passed in), never logs.
 *
 * Memory: the last REGRET_KEYS evictions, 24 bytes each (a 16-byte record
 * and 8 bytes of index), allocated at the first eviction: 3 MiB a cache
 * that trims, nothing for one that never does; plus 19 kB of figures
 * (regret_bytes). Older evictions are forgotten, as are those of more than
 * 30 days ago: their return is no longer counted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REGRET_KEYS    131072U          /* evictions remembered */
#define REGRET_RETURNS 2048U            /* returns kept for the cap estimate */
#define REGRET_HOURS   168U             /* hourly figures: 7 days */
#define REGRET_MAX_AGE (30U * 86400U)   /* an eviction older than this is forgotten */

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
 * now. Returns 0, or -ENOMEM (nothing remembered, but counted among the
 * young evictions; the next call tries again). */
int regret_evicted(Regret *r, uint64_t fp, uint64_t bytes, int64_t mtime, uint64_t now);

/* An entry of key fp, of bytes, was stored at now. If the daemon evicted
 * that key within REGRET_MAX_AGE (and still remembers it), this store is a
 * regretted one: counted, the eviction forgotten (a second store of it is
 * none), and true returned. */
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

/* Bytes r holds (its figures, and its remembered evictions once any). */
size_t regret_bytes(const Regret *r);

/* Encoding for the state file (state-file.c adds the envelope), all
 * little-endian: the ring's head and count, the bytes evicted so far, the
 * returns' head and count (u64 each), then REGRET_KEYS records (key u64,
 * time u32, KiB u32), REGRET_HOURS hours (hour u32, stores u32, bytes u64,
 * young bytes u64) and REGRET_RETURNS returns (time u32, KiB u32). The
 * index is not in it: decoding rebuilds it. */
#define REGRET_ENCODED_BYTES (5U * 8U + REGRET_KEYS * 16U + REGRET_HOURS * 24U + REGRET_RETURNS * 8U)
/* Whether r remembers anything worth writing (an eviction or a figure). */
bool regret_any(const Regret *r);
/* Writes r into buf (REGRET_ENCODED_BYTES). */
void regret_encode(const Regret *r, uint8_t *buf);
/* Replaces what r remembers with what buf (REGRET_ENCODED_BYTES) holds.
 * Returns 0, -EBADMSG when buf cannot be an encoding (a head or a count out
 * of range; r unchanged), or -ENOMEM (r unchanged). */
int regret_decode(Regret *r, const uint8_t *buf);
