/* SPDX-License-Identifier: MIT */
/* Per-cache activity in two fixed rings of time buckets (minutes, hours).
 * Pure: no I/O, no clock reads, nothing allocated after activity_new. */
#include <assert.h>
#include <endian.h>
#include <string.h>

#include "insight/activity.h"

#define USEC_PER_MINUTE ((usec_t) ACTIVITY_MINUTE_SEC * USEC_PER_SEC)

/* ccache's counters (its Statistic enum, the same index in 4.7 through 4.13;
 * ccache/README.md §2) and which of our kinds each one feeds. Errors and
 * uncacheable calls are the ones ccache's own -s counts as such
 * (FLAG_ERROR, FLAG_UNCACHEABLE in its statistics.cpp). */
#define CCACHE_IDX_STATS_ZEROED_TIMESTAMP 31  /* set by ccache -z; the newest over the files */

static const struct {
        uint8_t index;
        uint8_t kind;
} counter_kinds[] = {
        { 22, ACTIVITY_CCACHE_HITS },           /* direct_cache_hit */
        { 8, ACTIVITY_CCACHE_HITS },            /* preprocessed_cache_hit */
        { 4, ACTIVITY_CCACHE_MISSES },          /* cache_miss */
        { 1, ACTIVITY_CCACHE_UNCACHEABLE },     /* compiler_produced_stdout */
        { 2, ACTIVITY_CCACHE_UNCACHEABLE },     /* compile_failed */
        { 5, ACTIVITY_CCACHE_UNCACHEABLE },     /* preprocessor_error */
        { 9, ACTIVITY_CCACHE_UNCACHEABLE },     /* bad_compiler_arguments */
        { 10, ACTIVITY_CCACHE_UNCACHEABLE },    /* called_for_link */
        { 15, ACTIVITY_CCACHE_UNCACHEABLE },    /* unsupported_source_language */
        { 17, ACTIVITY_CCACHE_UNCACHEABLE },    /* no_input_file */
        { 18, ACTIVITY_CCACHE_UNCACHEABLE },    /* multiple_source_files */
        { 19, ACTIVITY_CCACHE_UNCACHEABLE },    /* autoconf_test */
        { 20, ACTIVITY_CCACHE_UNCACHEABLE },    /* unsupported_compiler_option */
        { 21, ACTIVITY_CCACHE_UNCACHEABLE },    /* output_to_stdout */
        { 23, ACTIVITY_CCACHE_UNCACHEABLE },    /* compiler_produced_no_output */
        { 24, ACTIVITY_CCACHE_UNCACHEABLE },    /* compiler_produced_empty_output */
        { 27, ACTIVITY_CCACHE_UNCACHEABLE },    /* could_not_use_precompiled_header */
        { 28, ACTIVITY_CCACHE_UNCACHEABLE },    /* called_for_preprocessing */
        { 30, ACTIVITY_CCACHE_UNCACHEABLE },    /* unsupported_code_directive */
        { 32, ACTIVITY_CCACHE_UNCACHEABLE },    /* could_not_use_modules */
        { 41, ACTIVITY_CCACHE_UNCACHEABLE },    /* recache */
        { 42, ACTIVITY_CCACHE_UNCACHEABLE },    /* unsupported_environment_variable */
        { 81, ACTIVITY_CCACHE_UNCACHEABLE },    /* disabled (4.8+) */
        { 84, ACTIVITY_CCACHE_UNCACHEABLE },    /* unsupported_source_encoding (4.12+) */
        { 3, ACTIVITY_CCACHE_ERRORS },          /* internal_error */
        { 6, ACTIVITY_CCACHE_ERRORS },          /* could_not_find_compiler */
        { 7, ACTIVITY_CCACHE_ERRORS },          /* missing_cache_file */
        { 16, ACTIVITY_CCACHE_ERRORS },         /* bad_output_file */
        { 25, ACTIVITY_CCACHE_ERRORS },         /* error_hashing_extra_file */
        { 26, ACTIVITY_CCACHE_ERRORS },         /* compiler_check_failed */
        { 82, ACTIVITY_CCACHE_ERRORS },         /* bad_input_file (4.8+) */
        { 83, ACTIVITY_CCACHE_ERRORS },         /* modified_input_file (4.8+) */
        { 47, ACTIVITY_CCACHE_REMOTE_HITS },    /* remote_storage_hit */
        { 48, ACTIVITY_CCACHE_REMOTE_MISSES },  /* remote_storage_miss */
        { 39, ACTIVITY_CCACHE_REMOTE_ERRORS },  /* remote_storage_error */
        { 40, ACTIVITY_CCACHE_REMOTE_ERRORS },  /* remote_storage_timeout */
};

typedef struct Bucket {
        uint64_t size_bytes;
        uint64_t bytes[_ACTIVITY_EVENT_MAX];
        uint32_t n[_ACTIVITY_KIND_MAX];
} Bucket;

struct Activity {
        bool started;                   /* head and origin are set */
        bool have_baseline;             /* last[] holds a sample of ccache's totals */
        uint64_t head;                  /* newest minute (unix seconds / 60) */
        uint64_t origin;                /* first minute counted */
        uint64_t size_bytes;            /* the size now, new buckets start with it */
        uint64_t last[ACTIVITY_CCACHE_TOTALS];
        Bucket minutes[ACTIVITY_MINUTES];       /* minute m at m % ACTIVITY_MINUTES */
        Bucket hours[ACTIVITY_HOURS];           /* hour h at h % ACTIVITY_HOURS */
};

static Bucket *minute_slot(const Activity *a, uint64_t m) {
        return (Bucket *) &a->minutes[m % ACTIVITY_MINUTES];
}

static Bucket *hour_slot(const Activity *a, uint64_t h) {
        return (Bucket *) &a->hours[h % ACTIVITY_HOURS];
}

static void bucket_clear(Bucket *b, uint64_t size_bytes) {
        memset(b, 0, sizeof(*b));
        b->size_bytes = size_bytes;
}

static uint32_t add_sat32(uint32_t x, uint64_t n) {
        return n >= (uint64_t) (UINT32_MAX - x) ? UINT32_MAX : x + (uint32_t) n;
}

static uint64_t add_sat64(uint64_t x, uint64_t n) {
        return n >= UINT64_MAX - x ? UINT64_MAX : x + n;
}

/* Takes what minute bucket m added to its hour back out of it. */
static void bucket_subtract(Bucket *hour, const Bucket *m) {
        for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                hour->n[k] -= hour->n[k] < m->n[k] ? hour->n[k] : m->n[k];
        for (size_t k = 0; k < _ACTIVITY_EVENT_MAX; k++)
                hour->bytes[k] -= hour->bytes[k] < m->bytes[k] ? hour->bytes[k] : m->bytes[k];
}

/* Empties the buckets numbered lo..hi of a ring (all of it if that is more). */
static void ring_clear(Bucket *ring, size_t ring_len, uint64_t lo, uint64_t hi, uint64_t size_bytes) {
        if (hi < lo)
                return;
        if (hi - lo >= ring_len)
                lo = hi - ring_len + 1;
        for (uint64_t p = lo; p <= hi && p >= lo; p++)
                bucket_clear(&ring[p % ring_len], size_bytes);
}

static void rings_clear(Activity *a) {
        ring_clear(a->minutes, ACTIVITY_MINUTES, 0, ACTIVITY_MINUTES - 1, ACTIVITY_SIZE_UNKNOWN);
        ring_clear(a->hours, ACTIVITY_HOURS, 0, ACTIVITY_HOURS - 1, ACTIVITY_SIZE_UNKNOWN);
}

int activity_new(Activity **ret) {
        Activity *a;

        assert(ret);
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->size_bytes = ACTIVITY_SIZE_UNKNOWN;
        rings_clear(a);
        *ret = a;
        return 0;
}

Activity *activity_free(Activity *a) {
        free(a);
        return NULL;
}

/* The clock went back from minute head to m: the buckets after m go. */
static void step_back(Activity *a, uint64_t m) {
        uint64_t old = a->head, mh = m / 60, oldh = old / 60;

        if (old - m >= ACTIVITY_MINUTES) {
                /* Every minute held is after m, and so are some of hour mh's,
                 * which its bucket cannot tell apart: all of them go. */
                ring_clear(a->minutes, ACTIVITY_MINUTES, m + 1, old, a->size_bytes);
                ring_clear(a->hours, ACTIVITY_HOURS, mh, oldh, a->size_bytes);
        } else {
                for (uint64_t p = m + 1; p <= old; p++) {
                        if (p / 60 == mh)
                                bucket_subtract(hour_slot(a, mh), minute_slot(a, p));
                        bucket_clear(minute_slot(a, p), a->size_bytes);
                }
                ring_clear(a->hours, ACTIVITY_HOURS, mh + 1, oldh, a->size_bytes);
                hour_slot(a, mh)->size_bytes = minute_slot(a, m)->size_bytes;
        }
        a->head = m;
        if (a->origin > m)
                a->origin = m;
}

void activity_advance(Activity *a, usec_t now) {
        uint64_t m = now / USEC_PER_MINUTE;

        assert(a);
        if (!a->started) {
                a->started = true;
                a->head = a->origin = m;
        } else if (m > a->head) {
                ring_clear(a->minutes, ACTIVITY_MINUTES, a->head + 1, m, a->size_bytes);
                ring_clear(a->hours, ACTIVITY_HOURS, a->head / 60 + 1, m / 60, a->size_bytes);
                a->head = m;
        } else if (m < a->head)
                step_back(a, m);
}

/* Counts into the current minute and its hour (activity_advance first). */
static void count(Activity *a, ActivityKind kind, uint64_t n, uint64_t bytes) {
        Bucket *bm = minute_slot(a, a->head), *bh = hour_slot(a, a->head / 60);

        bm->n[kind] = add_sat32(bm->n[kind], n);
        bh->n[kind] = add_sat32(bh->n[kind], n);
        if (kind < _ACTIVITY_EVENT_MAX) {
                bm->bytes[kind] = add_sat64(bm->bytes[kind], bytes);
                bh->bytes[kind] = add_sat64(bh->bytes[kind], bytes);
        }
}

int activity_add(Activity *a, ActivityKind kind, uint64_t n, uint64_t bytes, usec_t now) {
        assert(a);
        if ((unsigned) kind >= _ACTIVITY_KIND_MAX)
                return -EINVAL;
        activity_advance(a, now);
        count(a, kind, n, bytes);
        return 0;
}

int activity_counters(Activity *a, const uint64_t totals[ACTIVITY_CCACHE_TOTALS], usec_t now) {
        uint64_t delta[_ACTIVITY_KIND_MAX] = { 0 };
        bool zeroed;

        assert(a && totals);
        activity_advance(a, now);
        if (!a->have_baseline) {
                memcpy(a->last, totals, sizeof(a->last));
                a->have_baseline = true;
                return 1;
        }
        zeroed = totals[CCACHE_IDX_STATS_ZEROED_TIMESTAMP] > a->last[CCACHE_IDX_STATS_ZEROED_TIMESTAMP];
        for (size_t i = 0; i < ELEMENTSOF(counter_kinds); i++) {
                uint64_t now_total = totals[counter_kinds[i].index], was = a->last[counter_kinds[i].index];
                uint64_t d = zeroed ? now_total : now_total >= was ? now_total - was : 0;

                delta[counter_kinds[i].kind] = add_sat64(delta[counter_kinds[i].kind], d);
        }
        memcpy(a->last, totals, sizeof(a->last));
        for (size_t k = _ACTIVITY_EVENT_MAX; k < _ACTIVITY_KIND_MAX; k++)
                if (delta[k])
                        count(a, (ActivityKind) k, delta[k], 0);
        return 0;
}

void activity_counters_rebase(Activity *a) {
        assert(a);
        a->have_baseline = false;
}

void activity_set_size(Activity *a, uint64_t size_bytes, usec_t now) {
        assert(a);
        activity_advance(a, now);
        a->size_bytes = size_bytes;
        minute_slot(a, a->head)->size_bytes = size_bytes;
        hour_slot(a, a->head / 60)->size_bytes = size_bytes;
}

static uint64_t div_up(uint64_t x, uint64_t d) {
        return x / d + (x % d != 0);
}

unsigned activity_granularity(const Activity *a, usec_t since) {
        uint64_t first = div_up(since, USEC_PER_MINUTE);

        assert(a);
        /* Held: minutes head-1439..head. */
        return !a->started || first + ACTIVITY_MINUTES > a->head ? ACTIVITY_MINUTE_SEC : ACTIVITY_HOUR_SEC;
}

int activity_iter_init(ActivityIter *it, const Activity *a, usec_t since, usec_t until, unsigned seconds) {
        uint64_t unit, head, ring, oldest, origin;

        assert(it && a);
        if (seconds == 0)
                seconds = activity_granularity(a, since);
        if (seconds != ACTIVITY_MINUTE_SEC && seconds != ACTIVITY_HOUR_SEC)
                return -EINVAL;
        unit = seconds * USEC_PER_SEC;
        head = seconds == ACTIVITY_MINUTE_SEC ? a->head : a->head / 60;
        origin = seconds == ACTIVITY_MINUTE_SEC ? a->origin : a->origin / 60;
        ring = seconds == ACTIVITY_MINUTE_SEC ? ACTIVITY_MINUTES : ACTIVITY_HOURS;
        oldest = head + 1 >= ring ? head + 1 - ring : 0;

        *it = (ActivityIter) { .a = a, .seconds = seconds, .next = div_up(since, unit), .end = div_up(until, unit) };
        if (!a->started) {
                it->end = it->next;
                return (int) seconds;
        }
        if (it->next < oldest)
                it->next = oldest;
        if (it->next < origin)
                it->next = origin;
        if (it->end > head + 1)
                it->end = head + 1;
        return (int) seconds;
}

bool activity_iter_next(ActivityIter *it, ActivityRow *ret) {
        const Bucket *b;

        assert(it && ret);
        if (it->next >= it->end)
                return false;
        b = it->seconds == ACTIVITY_MINUTE_SEC ? minute_slot(it->a, it->next) : hour_slot(it->a, it->next);
        *ret = (ActivityRow) { .start_sec = it->next * it->seconds, .seconds = it->seconds };
        for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                ret->c.n[k] = b->n[k];
        memcpy(ret->c.bytes, b->bytes, sizeof(ret->c.bytes));
        ret->c.size_bytes = b->size_bytes;
        it->next++;
        return true;
}

unsigned activity_sum(const Activity *a, usec_t since, usec_t until, ActivityCounts *ret) {
        ActivityIter it;
        ActivityRow row;
        unsigned g;

        assert(a && ret);
        g = (unsigned) activity_iter_init(&it, a, since, until, 0);
        *ret = (ActivityCounts) { .size_bytes = ACTIVITY_SIZE_UNKNOWN };
        while (activity_iter_next(&it, &row)) {
                for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                        ret->n[k] += row.c.n[k];
                for (size_t k = 0; k < _ACTIVITY_EVENT_MAX; k++)
                        ret->bytes[k] = add_sat64(ret->bytes[k], row.c.bytes[k]);
                if (row.c.size_bytes != ACTIVITY_SIZE_UNKNOWN)
                        ret->size_bytes = row.c.size_bytes;
        }
        return g;
}

bool activity_hit_rate(const Activity *a, usec_t window, usec_t now, double *ret) {
        ActivityCounts c;
        uint64_t calls;

        assert(a && ret);
        activity_sum(a, window > now ? 0 : now - window + 1, now + 1, &c);
        calls = c.n[ACTIVITY_CCACHE_HITS] + c.n[ACTIVITY_CCACHE_MISSES];
        if (calls == 0)
                return false;
        *ret = (double) c.n[ACTIVITY_CCACHE_HITS] / (double) calls;
        return true;
}

static uint8_t *bucket_encode(uint8_t *p, const Bucket *b) {
        p = le_put64(p, b->size_bytes);
        for (size_t k = 0; k < _ACTIVITY_EVENT_MAX; k++)
                p = le_put64(p, b->bytes[k]);
        for (size_t k = 0; k < _ACTIVITY_KIND_MAX; k++)
                p = le_put32(p, b->n[k]);
        return p;
}

/* A bucket of an encoding with events daemon kinds: those this build has
 * beyond them are 0, the ccache kinds follow them. */
static const uint8_t *bucket_decode(const uint8_t *p, unsigned events, Bucket *b) {
        *b = (Bucket) {};
        p = le_get64(p, &b->size_bytes);
        for (size_t k = 0; k < events; k++)
                p = le_get64(p, &b->bytes[k]);
        for (size_t k = 0; k < events; k++)
                p = le_get32(p, &b->n[k]);
        for (size_t k = _ACTIVITY_EVENT_MAX; k < _ACTIVITY_KIND_MAX; k++)
                p = le_get32(p, &b->n[k]);
        return p;
}

void activity_encode(const Activity *a, uint8_t *buf) {
        uint8_t *p = buf;

        assert(a && buf);
        p = le_put64(p, a->head);
        p = le_put64(p, a->origin);
        p = le_put64(p, a->started ? 1 : 0);
        /* Oldest first: head+1 is the slot of head-1439, and so on. */
        for (uint64_t i = 0; i < ACTIVITY_MINUTES; i++)
                p = bucket_encode(p, minute_slot(a, a->head + 1 + i));
        for (uint64_t i = 0; i < ACTIVITY_HOURS; i++)
                p = bucket_encode(p, hour_slot(a, a->head / 60 + 1 + i));
        assert((size_t) (p - buf) == ACTIVITY_ENCODED_BYTES);
}

int activity_decode(Activity *a, const uint8_t *buf, unsigned events, usec_t now) {
        uint64_t head, origin, started;
        const uint8_t *p = buf;

        assert(a && buf);
        if (events == 0 || events > _ACTIVITY_EVENT_MAX)
                return -EBADMSG;
        p = le_get64(p, &head);
        p = le_get64(p, &origin);
        p = le_get64(p, &started);
        if (started > 1 || (started && origin > head) || head > UINT64_MAX / USEC_PER_MINUTE)
                return -EBADMSG;

        a->started = started;
        a->head = head;
        a->origin = origin;
        a->have_baseline = false;
        a->size_bytes = ACTIVITY_SIZE_UNKNOWN;
        for (uint64_t i = 0; i < ACTIVITY_MINUTES; i++)
                p = bucket_decode(p, events, minute_slot(a, head + 1 + i));
        for (uint64_t i = 0; i < ACTIVITY_HOURS; i++)
                p = bucket_decode(p, events, hour_slot(a, head / 60 + 1 + i));
        if (!started)
                rings_clear(a);         /* nothing was ever counted */
        activity_advance(a, now);
        return 0;
}

usec_t activity_origin(const Activity *a) {
        return a->started ? a->origin * USEC_PER_MINUTE : 0;
}

size_t activity_bytes(void) {
        return sizeof(Activity);
}
