/* SPDX-License-Identifier: MIT */
/* Eviction regret (regret.h): a ring of the last evictions, indexed by key
 * fingerprint (open addressing, linear probing, backward-shift deletion),
 * hourly figures of the regretted stores and the distances of the last
 * returns. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "insight/regret.h"

/* A reason byte: the RegretBy, and this once the key came back. */
#define RETURNED 0x80U

typedef struct Record {
        uint64_t fp;                    /* 0: forgotten (ring dropped it, or evicted again) */
        uint32_t at;                    /* unix seconds */
        uint32_t kib;                   /* KiB evicted before it, modulo 2^32 (departures: 0) */
} Record;

/* A ring of the last cap records, indexed by fingerprint in 2 x cap slots
 * (a power of two: half full at most). */
typedef struct Ring {
        Record *records;                /* cap of them; NULL before the first */
        uint8_t *why;                   /* each record's reason byte */
        uint32_t *index;                /* record position + 1, 0 empty */
        size_t head, count, cap;
} Ring;

typedef struct Hour {
        uint32_t hour;                  /* unix hours */
        uint32_t n;                     /* regretted stores */
        uint64_t bytes;                 /* and their bytes */
        uint64_t young;                 /* bytes evicted used within 7 days */
} Hour;


typedef struct Return {
        uint32_t at;
        uint32_t kib;                   /* KiB evicted from its eviction to its return */
} Return;

struct Regret {
        Ring evicted;                   /* REGRET_KEYS of the daemon's evictions regret counts */
        Ring left;                      /* REGRET_LEFT_KEYS other departures, never regret */
        uint64_t evicted_bytes;         /* every eviction's, since the start */
        Hour hours[REGRET_HOURS];
        Return returns[REGRET_RETURNS];
        size_t returns_head, returns_count;
};

/* The figures of the hour of now, emptied when it is a new hour. */
static Hour *hour_at(Regret *r, uint64_t now) {
        Hour *h = &r->hours[(now / 3600) % REGRET_HOURS];

        if (h->hour != now / 3600)
                *h = (Hour) { .hour = (uint32_t) (now / 3600) };
        return h;
}

int regret_new(Regret **ret) {
        Regret *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->evicted.cap = REGRET_KEYS;
        r->left.cap = REGRET_LEFT_KEYS;
        *ret = r;
        return 0;
}

static void ring_release(Ring *g) {
        free(g->records);
        free(g->why);
        free(g->index);
        g->records = NULL;
        g->why = NULL;
        g->index = NULL;
}

Regret *regret_free(Regret *r) {
        if (r) {
                ring_release(&r->evicted);
                ring_release(&r->left);
                free(r);
        }
        return NULL;
}

uint64_t regret_key(const char *dir_digits, const char *name) {
        uint64_t h = 0xcbf29ce484222325ULL;   /* FNV-1a, then mixed */

        for (const char *s = dir_digits; *s; s++)
                if (*s != '/')
                        h = (h ^ (uint8_t) *s) * 0x100000001b3ULL;
        for (const char *s = name; *s; s++)
                h = (h ^ (uint8_t) *s) * 0x100000001b3ULL;
        h = hash_mix(h);
        return h ? h : 1;   /* 0 marks a forgotten record */
}

static size_t slots(const Ring *g) {
        return 2 * g->cap;
}

static size_t home(const Ring *g, uint64_t fp) {
        return (size_t) (fp & (slots(g) - 1));
}

/* The index slot of fp in g, or SIZE_MAX. */
static size_t find(const Ring *g, uint64_t fp) {
        if (!g->index)
                return SIZE_MAX;
        for (size_t i = home(g, fp);; i = (i + 1) & (slots(g) - 1)) {
                if (g->index[i] == 0)
                        return SIZE_MAX;
                if (g->records[g->index[i] - 1].fp == fp)
                        return i;
        }
}

/* Empties slot i, moving back the entries of its probe run that belong
 * before it (so that a lookup never stops at a hole before its entry). */
static void unindex(Ring *g, size_t i) {
        size_t j = i;

        for (;;) {
                g->index[i] = 0;
                for (;;) {
                        size_t k;

                        j = (j + 1) & (slots(g) - 1);
                        if (g->index[j] == 0)
                                return;
                        k = home(g, g->records[g->index[j] - 1].fp);
                        /* j's entry may move to i when its home is not in (i, j] (cyclically). */
                        if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
                                break;
                }
                g->index[i] = g->index[j];
                i = j;
        }
}

static void forget(Ring *g, uint64_t fp) {
        size_t i = find(g, fp);

        if (i != SIZE_MAX) {
                g->records[g->index[i] - 1].fp = 0;
                unindex(g, i);
        }
}

static void index_add(Ring *g, uint64_t fp, size_t pos) {
        size_t i;

        for (i = home(g, fp); g->index[i]; i = (i + 1) & (slots(g) - 1))
                ;
        g->index[i] = (uint32_t) pos + 1;
}

/* g's arrays, allocated at its first record. Returns 0 or -ENOMEM (none). */
static int ring_alloc(Ring *g) {
        if (g->records)
                return 0;
        g->records = calloc(g->cap, sizeof(*g->records));
        g->why = calloc(g->cap, sizeof(*g->why));
        g->index = calloc(slots(g), sizeof(*g->index));
        if (!g->records || !g->why || !g->index) {
                ring_release(g);
                return -ENOMEM;
        }
        return 0;
}

/* Remembers fp at now, why, kib, in place of the oldest when full: any
 * older record of fp goes. Returns 0 or -ENOMEM. */
static int ring_add(Ring *g, uint64_t fp, uint32_t now, uint8_t why, uint32_t kib) {
        Record *rec;

        if (ring_alloc(g) < 0)
                return -ENOMEM;
        rec = &g->records[g->head];
        if (g->count == g->cap && rec->fp)
                forget(g, rec->fp);   /* the oldest makes room */
        forget(g, fp);
        *rec = (Record) { .fp = fp, .at = now, .kib = kib };
        g->why[g->head] = why;
        index_add(g, fp, g->head);
        g->head = (g->head + 1) % g->cap;
        if (g->count < g->cap)
                g->count++;
        return 0;
}

/* The record of fp in g, or NULL. */
static Record *ring_get(const Ring *g, uint64_t fp, uint8_t **ret_why) {
        size_t i = find(g, fp);

        if (i == SIZE_MAX)
                return NULL;
        *ret_why = &g->why[g->index[i] - 1];
        return &g->records[g->index[i] - 1];
}

int regret_evicted(Regret *r, uint64_t fp, uint64_t bytes, int64_t mtime, uint64_t now, RegretBy by) {
        int k;

        assert(by == REGRET_BY_CAP || by == REGRET_BY_PRESSURE || by == REGRET_BY_MERGE);
        if (mtime > (int64_t) now - 7 * 86400)
                hour_at(r, now)->young += bytes;
        /* Evicted again, its store unseen: this eviction counts. */
        k = ring_add(&r->evicted, fp, (uint32_t) now, (uint8_t) by, (uint32_t) (r->evicted_bytes / 1024));
        if (k < 0)
                return k;
        r->evicted_bytes += bytes;
        return 0;
}

int regret_left(Regret *r, uint64_t fp, uint64_t now, RegretBy by) {
        assert(by == REGRET_BY_PURGE || by == REGRET_BY_OTHER);
        return ring_add(&r->left, fp, (uint32_t) now, (uint8_t) by, 0);
}

bool regret_left_at(const Regret *r, uint64_t fp, uint64_t now, uint32_t *ret_at, RegretBy *ret_by) {
        const Ring *rings[] = { &r->evicted, &r->left };
        const Record *best = NULL;
        uint8_t best_why = 0;

        for (size_t i = 0; i < ELEMENTSOF(rings); i++) {
                uint8_t *why;
                const Record *rec = ring_get(rings[i], fp, &why);

                if (rec && rec->at <= now && now - rec->at <= REGRET_MAX_AGE && (!best || rec->at >= best->at)) {
                        best = rec;
                        best_why = *why & ~RETURNED;
                }
        }
        if (!best)
                return false;
        *ret_at = best->at;
        *ret_by = (RegretBy) best_why;
        return true;
}

bool regret_stored(Regret *r, uint64_t fp, uint64_t bytes, uint64_t now) {
        uint8_t *why;
        Record *rec = ring_get(&r->evicted, fp, &why);
        Hour *h;

        if (!rec || (*why & RETURNED))
                return false;
        /* Kept, to tell when it left; its next store is no regret. */
        *why |= RETURNED;
        if (now > rec->at + (uint64_t) REGRET_MAX_AGE)
                return false;
        h = hour_at(r, now);
        h->n++;
        h->bytes += bytes;
        r->returns[r->returns_head] = (Return) {
                .at = (uint32_t) now,
                .kib = (uint32_t) (r->evicted_bytes / 1024) - rec->kib,
        };
        r->returns_head = (r->returns_head + 1) % REGRET_RETURNS;
        if (r->returns_count < REGRET_RETURNS)
                r->returns_count++;
        return true;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return x < y ? -1 : x > y;
}

void regret_figures(const Regret *r, uint64_t now, RegretFigures *ret) {
        uint64_t hour = now / 3600;
        uint32_t kib[REGRET_RETURNS];
        size_t n = 0;

        *ret = (RegretFigures) { .remembered = r->evicted.count };
        for (size_t i = 0; i < REGRET_HOURS; i++) {
                const Hour *h = &r->hours[i];

                if (h->hour > hour || h->hour + REGRET_HOURS <= hour)
                        continue;
                ret->young_evicted_7d += h->young;
                ret->stores_7d += h->n;
                ret->bytes_7d += h->bytes;
                if (h->hour + 24 > hour) {
                        ret->stores_24h += h->n;
                        ret->bytes_24h += h->bytes;
                }
        }
        for (size_t i = 0; i < r->returns_count; i++)
                if (r->returns[i].at <= now && r->returns[i].at + 7 * 86400ULL > now)
                        kib[n++] = r->returns[i].kib;
        if (n > 0) {
                qsort(kib, n, sizeof(*kib), cmp_u32);
                ret->extra_bytes_p90 = (uint64_t) kib[(n * 9 + 9) / 10 - 1] * 1024;
        }
}

bool regret_any(const Regret *r) {
        if (r->evicted.count > 0 || r->left.count > 0 || r->returns_count > 0)
                return true;
        for (size_t i = 0; i < REGRET_HOURS; i++)
                if (r->hours[i].n || r->hours[i].young)
                        return true;
        return false;
}

void regret_encode(const Regret *r, uint8_t *buf) {
        const Ring *g = &r->evicted, *l = &r->left;
        uint8_t *p = buf;

        p = le_put64(p, g->head);
        p = le_put64(p, g->count);
        p = le_put64(p, r->evicted_bytes);
        p = le_put64(p, r->returns_head);
        p = le_put64(p, r->returns_count);
        for (size_t i = 0; i < REGRET_KEYS; i++) {
                Record rec = g->records ? g->records[i] : (Record) {};

                p = le_put64(p, rec.fp);
                p = le_put32(p, rec.at);
                p = le_put32(p, rec.kib);
        }
        for (size_t i = 0; i < REGRET_HOURS; i++) {
                p = le_put32(p, r->hours[i].hour);
                p = le_put32(p, r->hours[i].n);
                p = le_put64(p, r->hours[i].bytes);
                p = le_put64(p, r->hours[i].young);
        }
        for (size_t i = 0; i < REGRET_RETURNS; i++) {
                p = le_put32(p, r->returns[i].at);
                p = le_put32(p, r->returns[i].kib);
        }
        assert((size_t) (p - buf) == REGRET_ENCODED_BYTES_V1);
        for (size_t i = 0; i < REGRET_KEYS; i++)
                *p++ = g->why ? g->why[i] : 0;
        p = le_put64(p, l->head);
        p = le_put64(p, l->count);
        for (size_t i = 0; i < REGRET_LEFT_KEYS; i++) {
                Record rec = l->records ? l->records[i] : (Record) {};

                p = le_put64(p, rec.fp);
                p = le_put32(p, rec.at);
                p = le_put32(p, l->why ? l->why[i] : 0);
        }
        assert((size_t) (p - buf) == REGRET_ENCODED_BYTES);
}

/* Whether a ring's head and count can be: a full ring's head anywhere, a
 * filling one's at its count. */
static bool ring_shape_ok(uint64_t head, uint64_t count, size_t cap) {
        return head < cap && count <= cap && (count == cap || head == count);
}

/* A new ring of cap for head and count, its arrays allocated when count
 * says it holds anything. Returns 0 or -ENOMEM. */
static int ring_prepare(Ring *g, size_t cap, uint64_t head, uint64_t count) {
        *g = (Ring) { .cap = cap, .head = head, .count = count };
        return count > 0 ? ring_alloc(g) : 0;
}

/* Whether why can be the reason byte of a record of the evictions (left:
 * of the other departures). */
static bool why_ok(uint32_t why, bool left) {
        RegretBy by = (RegretBy) (why & ~RETURNED);

        if (left)
                return why == REGRET_BY_PURGE || why == REGRET_BY_OTHER;
        return why <= 0xff && (by == REGRET_BY_CAP || by == REGRET_BY_PRESSURE || by == REGRET_BY_MERGE ||
                               by == REGRET_BY_UNKNOWN);
}

/* Record i of g read, with its reason byte: indexed if it is one of the
 * ring's records and its key's first (the file is ours, but a key twice
 * must not make two index entries); otherwise forgotten. g without arrays
 * (empty) only skips. Returns false for a record of the ring whose reason
 * cannot be (left: g holds the other departures). */
static bool ring_load(Ring *g, size_t i, Record rec, uint32_t why, bool left) {
        if (!g->records)
                return true;
        if (rec.fp && (i >= g->count || find(g, rec.fp) != SIZE_MAX))
                rec.fp = 0;
        if (rec.fp && !why_ok(why, left))
                return false;
        g->records[i] = rec;
        g->why[i] = rec.fp ? (uint8_t) why : 0;
        if (rec.fp)
                index_add(g, rec.fp, i);
        return true;
}

/* Reads g->cap records (key u64, time u32, and kib u32 or, left, the
 * reason u32) from p into g; whys: the evictions' reason bytes (NULL:
 * unknown, a version 1 encoding). Returns what follows them, or NULL for a
 * bad reason. */
static const uint8_t *ring_read(Ring *g, const uint8_t *p, const uint8_t *whys, bool left) {
        for (size_t i = 0; i < g->cap; i++) {
                Record rec = {};
                uint32_t x;

                p = le_get64(p, &rec.fp);
                p = le_get32(p, &rec.at);
                p = le_get32(p, &x);
                if (!left)
                        rec.kib = x;
                /* Version 1 kept no reason, and forgot a key once it came back. */
                if (!ring_load(g, i, rec, left ? x : whys ? whys[i] : REGRET_BY_UNKNOWN, left))
                        return NULL;
        }
        return p;
}

int regret_decode(Regret *r, const uint8_t *buf, unsigned version) {
        _cleanup_(ring_release) Ring g = {}, l = {};
        uint64_t head, count, evicted, returns_head, returns_count, left_head = 0, left_count = 0;
        const uint8_t *p = buf, *v2 = buf + REGRET_ENCODED_BYTES_V1;

        if (version != 1 && version != 2)
                return -EBADMSG;
        p = le_get64(p, &head);
        p = le_get64(p, &count);
        p = le_get64(p, &evicted);
        p = le_get64(p, &returns_head);
        p = le_get64(p, &returns_count);
        if (version == 2) {
                (void) le_get64(v2 + REGRET_KEYS, &left_head);
                (void) le_get64(v2 + REGRET_KEYS + 8, &left_count);
        }
        if (!ring_shape_ok(head, count, REGRET_KEYS) || !ring_shape_ok(left_head, left_count, REGRET_LEFT_KEYS) ||
            returns_head >= REGRET_RETURNS || returns_count > REGRET_RETURNS)
                return -EBADMSG;
        /* Nothing to remember: nothing allocated, as before a first eviction. */
        if (ring_prepare(&g, REGRET_KEYS, head, count) < 0 ||
            ring_prepare(&l, REGRET_LEFT_KEYS, left_head, left_count) < 0)
                return -ENOMEM;
        p = ring_read(&g, p, version == 2 ? v2 : NULL, false);
        if (!p || (version == 2 && !ring_read(&l, v2 + REGRET_KEYS + 16, NULL, true)))
                return -EBADMSG;

        for (size_t i = 0; i < REGRET_HOURS; i++) {
                p = le_get32(p, &r->hours[i].hour);
                p = le_get32(p, &r->hours[i].n);
                p = le_get64(p, &r->hours[i].bytes);
                p = le_get64(p, &r->hours[i].young);
        }
        for (size_t i = 0; i < REGRET_RETURNS; i++) {
                p = le_get32(p, &r->returns[i].at);
                p = le_get32(p, &r->returns[i].kib);
        }
        ring_release(&r->evicted);
        ring_release(&r->left);
        r->evicted = g;
        r->left = l;
        g = (Ring) {};
        l = (Ring) {};
        r->evicted_bytes = evicted;
        r->returns_head = returns_head;
        r->returns_count = returns_count;
        return 0;
}

static size_t ring_bytes(const Ring *g) {
        return g->records ? g->cap * (sizeof(Record) + sizeof(uint8_t)) + slots(g) * sizeof(uint32_t) : 0;
}

size_t regret_bytes(const Regret *r) {
        return sizeof(*r) + ring_bytes(&r->evicted) + ring_bytes(&r->left);
}
