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

#define INDEX_SLOTS (2 * REGRET_KEYS)   /* a power of two: half full at most */

typedef struct Record {
        uint64_t fp;                    /* 0: forgotten (returned, or evicted again) */
        uint32_t at;                    /* unix seconds */
        uint32_t kib;                   /* KiB evicted before it, modulo 2^32 */
} Record;

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
        Record *records;                /* REGRET_KEYS, a ring; NULL before the first eviction */
        uint32_t *index;                /* INDEX_SLOTS: record position + 1, 0 empty */
        size_t head, count;
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
        *ret = r;
        return 0;
}

Regret *regret_free(Regret *r) {
        if (r) {
                free(r->records);
                free(r->index);
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

static size_t home(uint64_t fp) {
        return (size_t) (fp & (INDEX_SLOTS - 1));
}

/* The index slot of fp, or SIZE_MAX. */
static size_t find(const Regret *r, uint64_t fp) {
        if (!r->index)
                return SIZE_MAX;
        for (size_t i = home(fp);; i = (i + 1) & (INDEX_SLOTS - 1)) {
                if (r->index[i] == 0)
                        return SIZE_MAX;
                if (r->records[r->index[i] - 1].fp == fp)
                        return i;
        }
}

/* Empties slot i, moving back the entries of its probe run that belong
 * before it (so that a lookup never stops at a hole before its entry). */
static void unindex(Regret *r, size_t i) {
        size_t j = i;

        for (;;) {
                r->index[i] = 0;
                for (;;) {
                        size_t k;

                        j = (j + 1) & (INDEX_SLOTS - 1);
                        if (r->index[j] == 0)
                                return;
                        k = home(r->records[r->index[j] - 1].fp);
                        /* j's entry may move to i when its home is not in (i, j] (cyclically). */
                        if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
                                break;
                }
                r->index[i] = r->index[j];
                i = j;
        }
}

static void forget(Regret *r, uint64_t fp) {
        size_t i = find(r, fp);

        if (i != SIZE_MAX) {
                r->records[r->index[i] - 1].fp = 0;
                unindex(r, i);
        }
}

int regret_evicted(Regret *r, uint64_t fp, uint64_t bytes, int64_t mtime, uint64_t now) {
        Record *rec;
        size_t i;

        if (mtime > (int64_t) now - 7 * 86400)
                hour_at(r, now)->young += bytes;
        if (!r->records) {
                r->records = calloc(REGRET_KEYS, sizeof(*r->records));
                r->index = calloc(INDEX_SLOTS, sizeof(*r->index));
                if (!r->records || !r->index) {
                        free(r->records);
                        free(r->index);
                        r->records = NULL;
                        r->index = NULL;
                        return -ENOMEM;
                }
        }
        rec = &r->records[r->head];
        if (r->count == REGRET_KEYS && rec->fp)
                forget(r, rec->fp);   /* the oldest makes room */
        forget(r, fp);                /* evicted again, its store unseen: this eviction counts */
        *rec = (Record) { .fp = fp, .at = (uint32_t) now, .kib = (uint32_t) (r->evicted_bytes / 1024) };
        for (i = home(fp); r->index[i]; i = (i + 1) & (INDEX_SLOTS - 1))
                ;
        r->index[i] = (uint32_t) r->head + 1;
        r->head = (r->head + 1) % REGRET_KEYS;
        if (r->count < REGRET_KEYS)
                r->count++;
        r->evicted_bytes += bytes;
        return 0;
}

bool regret_stored(Regret *r, uint64_t fp, uint64_t bytes, uint64_t now) {
        size_t i = find(r, fp);
        Record rec;
        Hour *h;

        if (i == SIZE_MAX)
                return false;
        rec = r->records[r->index[i] - 1];
        r->records[r->index[i] - 1].fp = 0;
        unindex(r, i);
        if (now > rec.at + (uint64_t) REGRET_MAX_AGE)
                return false;
        h = hour_at(r, now);
        h->n++;
        h->bytes += bytes;
        r->returns[r->returns_head] = (Return) {
                .at = (uint32_t) now,
                .kib = (uint32_t) (r->evicted_bytes / 1024) - rec.kib,
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

        *ret = (RegretFigures) { .remembered = r->count };
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
        if (r->count > 0 || r->returns_count > 0)
                return true;
        for (size_t i = 0; i < REGRET_HOURS; i++)
                if (r->hours[i].n || r->hours[i].young)
                        return true;
        return false;
}

void regret_encode(const Regret *r, uint8_t *buf) {
        uint8_t *p = buf;

        p = le_put64(p, r->head);
        p = le_put64(p, r->count);
        p = le_put64(p, r->evicted_bytes);
        p = le_put64(p, r->returns_head);
        p = le_put64(p, r->returns_count);
        for (size_t i = 0; i < REGRET_KEYS; i++) {
                Record rec = r->records ? r->records[i] : (Record) {};

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
        assert((size_t) (p - buf) == REGRET_ENCODED_BYTES);
}

int regret_decode(Regret *r, const uint8_t *buf) {
        _cleanup_free_ Record *records = NULL;
        _cleanup_free_ uint32_t *index = NULL;
        uint64_t head, count, evicted, returns_head, returns_count;
        const uint8_t *p = buf;

        p = le_get64(p, &head);
        p = le_get64(p, &count);
        p = le_get64(p, &evicted);
        p = le_get64(p, &returns_head);
        p = le_get64(p, &returns_count);
        if (head >= REGRET_KEYS || count > REGRET_KEYS || (count < REGRET_KEYS && head != count) ||
            returns_head >= REGRET_RETURNS || returns_count > REGRET_RETURNS)
                return -EBADMSG;
        /* Nothing to remember: nothing allocated, as before a first eviction. */
        if (count > 0) {
                records = calloc(REGRET_KEYS, sizeof(*records));
                index = calloc(INDEX_SLOTS, sizeof(*index));
                if (!records || !index)
                        return -ENOMEM;
        }

        free(r->records);
        free(r->index);
        r->records = TAKE_PTR(records);
        r->index = TAKE_PTR(index);
        r->head = head;
        r->count = count;
        r->evicted_bytes = evicted;
        r->returns_head = returns_head;
        r->returns_count = returns_count;
        for (size_t i = 0; i < REGRET_KEYS; i++) {
                Record scratch, *rec = r->records ? &r->records[i] : &scratch;

                p = le_get64(p, &rec->fp);
                p = le_get32(p, &rec->at);
                p = le_get32(p, &rec->kib);
                /* Only the ring's records count, each key once (the file is
                 * ours, but a key twice must not make two index entries). */
                if (rec->fp && (i >= count || find(r, rec->fp) != SIZE_MAX))
                        rec->fp = 0;
                if (rec->fp) {
                        size_t k = home(rec->fp);

                        while (r->index[k])
                                k = (k + 1) & (INDEX_SLOTS - 1);
                        r->index[k] = (uint32_t) i + 1;
                }
        }
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
        return 0;
}

size_t regret_bytes(const Regret *r) {
        return sizeof(*r) + (r->records ? REGRET_KEYS * sizeof(Record) + INDEX_SLOTS * sizeof(uint32_t) : 0);
}
