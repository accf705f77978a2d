/* SPDX-License-Identifier: MIT */
/* Encoding and decoding of every control message, requests and replies.
 * No I/O, no logging: errors come back as -errno and a message. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/protocol.h"
#include "base/util.h"

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 if none starts there. */
static size_t utf8_sequence(const unsigned char *p) {
        unsigned char c = p[0];
        size_t n;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
        else
                return 0;       /* a continuation byte, an overlong lead (c0, c1) or f5..ff */
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;       /* also stops at the terminating NUL */
        if ((c == 0xe0 && p[1] < 0xa0) ||       /* overlong */
            (c == 0xed && p[1] >= 0xa0) ||      /* UTF-16 surrogates */
            (c == 0xf0 && p[1] < 0x90) ||       /* overlong */
            (c == 0xf4 && p[1] >= 0x90))        /* above U+10FFFF */
                return 0;
        return n;
}

char *protocol_utf8_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t bad = 0, n;
        char *out, *q;

        for (size_t i = 0; p[i]; i += n ? n : 1)
                bad += (n = utf8_sequence(p + i)) == 0;
        out = malloc(strlen(s) + 2 * bad + 1);  /* each bad byte: 3 bytes of U+FFFD */
        if (!out)
                return NULL;
        q = out;
        for (size_t i = 0; p[i]; i += n ? n : 1) {
                n = utf8_sequence(p + i);
                if (n) {
                        memcpy(q, p + i, n);
                        q += n;
                } else {
                        memcpy(q, "\xef\xbf\xbd", 3);
                        q += 3;
                }
        }
        *q = '\0';
        return out;
}

/* One line for o (taken over). json-c escapes what JSON needs but copies
 * bytes >= 0x80 as they are; those are made valid UTF-8 on the way out
 * (outside strings, JSON is ASCII, so only strings are touched). */
static char *serialize(json_object *o) {
        const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
        _cleanup_free_ char *valid = s ? protocol_utf8_valid(s) : NULL;
        char *line = NULL;

        if (valid && asprintf(&line, "%s\n", valid) < 0)
                line = NULL;
        json_object_put(o);
        return line;
}

/* Adds key: v to o, taking v over (also on failure, which is ENOMEM: the
 * line then misses a field, and the next allocation fails anyway). */
static void put(json_object *o, const char *key, json_object *v) {
        if (json_object_object_add(o, key, v) < 0)
                json_object_put(v);
}

static json_object *request_object(const char *cmd) {
        json_object *o = json_object_new_object();

        if (o)
                put(o, PROTOCOL_FIELD_CMD, json_object_new_string(cmd));
        return o;
}

char *protocol_encode_status(const ProtocolStatus *s) {
        json_object *o = request_object(PROTOCOL_CMD_STATUS);

        assert(s);
        if (o && s->cache)
                put(o, PROTOCOL_FIELD_CACHE, json_object_new_string(s->cache));
        return serialize(o);
}

char *protocol_encode_trim(const ProtocolTrim *t) {
        json_object *o = request_object(PROTOCOL_CMD_TRIM), *names;

        assert(t && t->n_caches <= PROTOCOL_TRIM_CACHES_MAX);
        if (!o)
                return NULL;
        names = json_object_new_array();
        for (size_t i = 0; names && i < t->n_caches; i++)
                json_object_array_add(names, json_object_new_string(t->caches[i]));
        put(o, PROTOCOL_FIELD_CACHES, names);
        if (t->to_bytes > 0)
                put(o, PROTOCOL_FIELD_TO_BYTES, json_object_new_int64((int64_t) t->to_bytes));
        put(o, PROTOCOL_FIELD_DRY_RUN, json_object_new_boolean(t->dry_run));
        if (t->written_by)
                put(o, PROTOCOL_FIELD_WRITTEN_BY, json_object_new_string(t->written_by));
        if (t->ns)
                put(o, PROTOCOL_FIELD_NAMESPACE, json_object_new_string(t->ns));
        return serialize(o);
}

char *protocol_encode_reload(void) {
        return serialize(request_object(PROTOCOL_CMD_RELOAD));
}

char *protocol_encode_history(const ProtocolHistory *h) {
        json_object *o = request_object(PROTOCOL_CMD_HISTORY);

        assert(h);
        if (!o)
                return NULL;
        if (h->cache)
                put(o, PROTOCOL_FIELD_CACHE, json_object_new_string(h->cache));
        put(o, PROTOCOL_FIELD_SECONDS, json_object_new_int64(h->seconds));
        put(o, PROTOCOL_FIELD_COUNT, json_object_new_int64(h->count));
        return serialize(o);
}

char *protocol_encode_merge(const ProtocolMerge *m) {
        json_object *o = request_object(PROTOCOL_CMD_MERGE);

        assert(m && m->from && m->into);
        if (!o)
                return NULL;
        put(o, PROTOCOL_FIELD_FROM, json_object_new_string(m->from));
        put(o, PROTOCOL_FIELD_INTO, json_object_new_string(m->into));
        put(o, PROTOCOL_FIELD_DRY_RUN, json_object_new_boolean(m->dry_run));
        put(o, PROTOCOL_FIELD_ALLOW_MIXED, json_object_new_boolean(m->allow_mixed));
        return serialize(o);
}

char *protocol_encode_evictions(const ProtocolEvictions *e) {
        json_object *o = request_object(PROTOCOL_CMD_EVICTIONS), *keys;

        assert(e && e->cache && e->n_keys <= PROTOCOL_EVICTIONS_KEYS_MAX);
        if (!o)
                return NULL;
        put(o, PROTOCOL_FIELD_CACHE, json_object_new_string(e->cache));
        keys = json_object_new_array();
        for (size_t i = 0; keys && i < e->n_keys; i++)
                json_object_array_add(keys, json_object_new_string(e->keys[i]));
        put(o, PROTOCOL_FIELD_KEYS, keys);
        return serialize(o);
}

int protocol_decode_request(const char *line, json_object **ret, const char **ret_cmd,
                            char *err, size_t errlen) {
        json_tokener *tok;
        json_object *o, *cmd;

        tok = json_tokener_new();
        if (!tok) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        o = json_tokener_parse_ex(tok, line, (int) strlen(line));
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            tok->char_offset != (int) strlen(line)) {
                snprintf(err, errlen, "request is not one JSON object: %s",
                         json_tokener_error_desc(json_tokener_get_error(tok)));
                json_object_put(o);
                json_tokener_free(tok);
                return -EINVAL;
        }
        json_tokener_free(tok);
        cmd = protocol_field_get(o, PROTOCOL_FIELD_CMD);
        if (!json_object_is_type(cmd, json_type_string)) {
                snprintf(err, errlen, "request must be an object with a string \"" PROTOCOL_FIELD_CMD "\"");
                json_object_put(o);
                return -EINVAL;
        }
        *ret_cmd = json_object_get_string(cmd);
        *ret = o;
        return 0;
}

int protocol_decode_status(json_object *request, ProtocolStatus *ret, char *err, size_t errlen) {
        json_object *v = protocol_field_get(request, PROTOCOL_FIELD_CACHE);

        if (v && !json_object_is_type(v, json_type_string)) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_CACHE "\" must be a string");
                return -EINVAL;
        }
        *ret = (ProtocolStatus) { .cache = v ? json_object_get_string(v) : NULL };
        return 0;
}

/* The names of a trim into t; 0 or -EINVAL with the message in err. */
static int decode_trim_caches(json_object *names, ProtocolTrim *t, char *err, size_t errlen) {
        size_t n = json_object_array_length(names);

        if (n > PROTOCOL_TRIM_CACHES_MAX) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_CACHES "\" may name at most %u caches",
                         (unsigned) PROTOCOL_TRIM_CACHES_MAX);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(names, i);

                if (!json_object_is_type(e, json_type_string)) {
                        snprintf(err, errlen, "\"" PROTOCOL_FIELD_CACHES "\" must be an array of cache names");
                        return -EINVAL;
                }
                t->caches[i] = json_object_get_string(e);
        }
        t->n_caches = n;
        return 0;
}

/* A version or namespace as entry headers hold them: at most 255
 * printable ASCII characters (the namespace may be empty). */
static int decode_writer_field(json_object *request, const char *key, const char **ret, char *err, size_t errlen) {
        json_object *v = protocol_field_get(request, key);
        const char *s;

        *ret = NULL;
        if (!v)
                return 0;
        s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        if (!s || strlen(s) > 255 || s[strspn(s, " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~")] != '\0' ||
            (strcmp(key, PROTOCOL_FIELD_WRITTEN_BY) == 0 && !*s)) {
                snprintf(err, errlen, "\"%s\" must be %s of at most 255 printable characters", key,
                         strcmp(key, PROTOCOL_FIELD_WRITTEN_BY) == 0 ? "a ccache version" : "a namespace");
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

int protocol_decode_trim(json_object *request, ProtocolTrim *ret, char *err, size_t errlen) {
        json_object *dry = protocol_field_get(request, PROTOCOL_FIELD_DRY_RUN);
        json_object *names = protocol_field_get(request, PROTOCOL_FIELD_CACHES);
        json_object *to = protocol_field_get(request, PROTOCOL_FIELD_TO_BYTES);
        ProtocolTrim t = {};

        if (dry && !json_object_is_type(dry, json_type_boolean)) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_DRY_RUN "\" must be true or false");
                return -EINVAL;
        }
        if (names && !json_object_is_type(names, json_type_array)) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_CACHES "\" must be an array of cache names");
                return -EINVAL;
        }
        if (to && (!json_object_is_type(to, json_type_int) || json_object_get_int64(to) <= 0)) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_TO_BYTES "\" must be a positive number");
                return -EINVAL;
        }
        if (names && decode_trim_caches(names, &t, err, errlen) < 0)
                return -EINVAL;
        if (decode_writer_field(request, PROTOCOL_FIELD_WRITTEN_BY, &t.written_by, err, errlen) < 0 ||
            decode_writer_field(request, PROTOCOL_FIELD_NAMESPACE, &t.ns, err, errlen) < 0)
                return -EINVAL;
        if ((t.written_by || t.ns) && to) {
                snprintf(err, errlen, "a trim by writer removes what that writer wrote: it takes no \"" PROTOCOL_FIELD_TO_BYTES "\"");
                return -EINVAL;
        }
        t.dry_run = dry && json_object_get_boolean(dry);
        t.to_bytes = to ? (uint64_t) json_object_get_int64(to) : 0;
        *ret = t;
        return 0;
}

unsigned protocol_history_max(unsigned seconds) {
        switch (seconds) {
        case PROTOCOL_HISTORY_MINUTE: return PROTOCOL_HISTORY_MINUTES_MAX;
        case PROTOCOL_HISTORY_HOUR: return PROTOCOL_HISTORY_HOURS_MAX;
        case PROTOCOL_HISTORY_DAY: return PROTOCOL_HISTORY_DAYS_MAX;
        default: return 0;
        }
}

/* An integer field of a request: 0 and *ret, or -EINVAL (absent, not an
 * integer, out of [0, UINT_MAX]). */
static int request_uint(json_object *request, const char *key, unsigned *ret) {
        json_object *v = protocol_field_get(request, key);
        int64_t n;

        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        n = json_object_get_int64(v);
        if (n < 0 || n > UINT_MAX)
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

int protocol_decode_history(json_object *request, ProtocolHistory *ret, char *err, size_t errlen) {
        json_object *cache = protocol_field_get(request, PROTOCOL_FIELD_CACHE);
        ProtocolHistory h = {};
        unsigned max;

        if (cache && !json_object_is_type(cache, json_type_string)) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_CACHE "\" must be a string");
                return -EINVAL;
        }
        if (request_uint(request, PROTOCOL_FIELD_SECONDS, &h.seconds) < 0 ||
            (max = protocol_history_max(h.seconds)) == 0) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_SECONDS "\" must be %u, %u or %u",
                         PROTOCOL_HISTORY_MINUTE, PROTOCOL_HISTORY_HOUR, PROTOCOL_HISTORY_DAY);
                return -EINVAL;
        }
        if (request_uint(request, PROTOCOL_FIELD_COUNT, &h.count) < 0 || h.count == 0 || h.count > max) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_COUNT "\" must be a number of rows from 1 to %u "
                         "(for rows of %u seconds)", max, h.seconds);
                return -EINVAL;
        }
        h.cache = cache ? json_object_get_string(cache) : NULL;
        *ret = h;
        return 0;
}

/* A merge's cache name: a string of 1 to 255 bytes. */
static int decode_merge_name(json_object *request, const char *key, const char **ret, char *err, size_t errlen) {
        json_object *v = protocol_field_get(request, key);
        const char *s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

        if (!s || !*s || strlen(s) > 255) {
                snprintf(err, errlen, "\"%s\" must name a cache", key);
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

int protocol_decode_merge(json_object *request, ProtocolMerge *ret, char *err, size_t errlen) {
        const char *flags[] = { PROTOCOL_FIELD_DRY_RUN, PROTOCOL_FIELD_ALLOW_MIXED };
        bool values[2] = { false, false };
        ProtocolMerge m = {};

        for (size_t i = 0; i < 2; i++) {
                json_object *f = protocol_field_get(request, flags[i]);

                if (f && !json_object_is_type(f, json_type_boolean)) {
                        snprintf(err, errlen, "\"%s\" must be true or false", flags[i]);
                        return -EINVAL;
                }
                values[i] = f && json_object_get_boolean(f);
        }
        if (decode_merge_name(request, PROTOCOL_FIELD_FROM, &m.from, err, errlen) < 0 ||
            decode_merge_name(request, PROTOCOL_FIELD_INTO, &m.into, err, errlen) < 0)
                return -EINVAL;
        if (strcmp(m.from, m.into) == 0) {
                snprintf(err, errlen, "a cache cannot be merged into itself");
                return -EINVAL;
        }
        m.dry_run = values[0];
        m.allow_mixed = values[1];
        *ret = m;
        return 0;
}

/* A key as ccache prints it: 2 to PROTOCOL_EVICTIONS_KEY_MAX characters of
 * base32hex, which its hex keys are of too. */
static bool eviction_key_ok(json_object *v) {
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        size_t n = s ? strlen(s) : 0;

        return n >= 2 && n <= PROTOCOL_EVICTIONS_KEY_MAX && s[strspn(s, "0123456789abcdefghijklmnopqrstuv")] == '\0';
}

int protocol_decode_evictions(json_object *request, ProtocolEvictions *ret, char *err, size_t errlen) {
        json_object *keys = protocol_field_get(request, PROTOCOL_FIELD_KEYS);
        ProtocolEvictions e = {};
        size_t n;

        if (decode_merge_name(request, PROTOCOL_FIELD_CACHE, &e.cache, err, errlen) < 0)
                return -EINVAL;
        n = json_object_is_type(keys, json_type_array) ? json_object_array_length(keys) : 0;
        if (n == 0 || n > PROTOCOL_EVICTIONS_KEYS_MAX) {
                snprintf(err, errlen, "\"" PROTOCOL_FIELD_KEYS "\" must be an array of 1 to %u ccache keys",
                         PROTOCOL_EVICTIONS_KEYS_MAX);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++)
                if (!eviction_key_ok(json_object_array_get_idx(keys, i))) {
                        snprintf(err, errlen, "\"" PROTOCOL_FIELD_KEYS "\"[%zu] is not a ccache key (2 to %u "
                                 "characters of 0-9 and a-v)", i, PROTOCOL_EVICTIONS_KEY_MAX);
                        return -EINVAL;
                }
        e.keys = calloc(n, sizeof(*e.keys));
        if (!e.keys) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                e.keys[i] = json_object_get_string(json_object_array_get_idx(keys, i));
        e.n_keys = n;
        *ret = e;
        return 0;
}

json_object *protocol_eviction(const ProtocolEviction *e) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        put(o, PROTOCOL_EVICTION_SINCE, json_object_new_int64((int64_t) e->since));
        /* json-c adds a NULL value as null */
        put(o, PROTOCOL_EVICTION_BY, e->by ? json_object_new_string(e->by) : NULL);
        if (e->kind)
                put(o, PROTOCOL_EVICTION_KIND, json_object_new_string(e->kind));
        return o;
}

int protocol_decode_eviction(json_object *result, const char *key, ProtocolEviction *ret) {
        json_object *e = protocol_field_get(protocol_field_get(result, PROTOCOL_EVICTIONS_KEYS), key);
        const char *by, *kind;

        if (!json_object_is_type(e, json_type_object))
                return 0;
        by = protocol_field_str(e, PROTOCOL_EVICTION_BY);
        kind = protocol_field_str(e, PROTOCOL_EVICTION_KIND);
        *ret = (ProtocolEviction) {
                .since = protocol_field_u64(e, PROTOCOL_EVICTION_SINCE),
                .by = by && *by ? by : NULL,
                .kind = kind && *kind ? kind : NULL,
        };
        return 1;
}

/* hits / (hits + misses) in s, as it goes on the wire; false without calls
 * (the rate is null). */
static bool hit_rate_text(uint64_t hits, uint64_t misses, double *ret, char s[static 32]) {
        if (hits + misses == 0)
                return false;
        *ret = (double) hits / (double) (hits + misses);
        snprintf(s, 32, "%.6g", *ret);  /* 0.9, not 0.90000000000000002 */
        return true;
}

/* hits / (hits + misses), or null without calls. */
static json_object *hit_rate(uint64_t hits, uint64_t misses) {
        double rate;
        char s[32];

        if (!hit_rate_text(hits, misses, &rate, s))
                return NULL;
        return json_object_new_double_s(rate, s);
}

json_object *protocol_history_row(const ProtocolHistoryRow *r) {
        const struct {
                const char *key;
                uint64_t value;
        } counts[] = {
                { PROTOCOL_ROW_REFRESHED, r->refreshed },
                { PROTOCOL_ROW_EVICTIONS, r->evictions },
                { PROTOCOL_ROW_REMOVALS, r->removals },
                { PROTOCOL_ROW_STORED_BYTES, r->stored_bytes },
                { PROTOCOL_ROW_EVICTED_BYTES, r->evicted_bytes },
                { PROTOCOL_ROW_REMOVED_BYTES, r->removed_bytes },
                { PROTOCOL_ROW_REGRETTED, r->regretted },
                { PROTOCOL_ROW_REGRETTED_BYTES, r->regretted_bytes },
                { PROTOCOL_ROW_UNCACHEABLE, r->uncacheable },
                { PROTOCOL_ROW_ERRORS, r->errors },
                { PROTOCOL_ROW_REMOTE_HITS, r->remote_hits },
                { PROTOCOL_ROW_REMOTE_MISSES, r->remote_misses },
                { PROTOCOL_ROW_REMOTE_ERRORS, r->remote_errors },
                { PROTOCOL_ROW_OTHER_ADDED_BYTES, r->other_added_bytes },
                { PROTOCOL_ROW_OTHER_REMOVED_BYTES, r->other_removed_bytes },
                { PROTOCOL_ROW_ADJUSTED_UP_BYTES, r->adjusted_up_bytes },
                { PROTOCOL_ROW_ADJUSTED_DOWN_BYTES, r->adjusted_down_bytes },
        };
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        put(o, PROTOCOL_ROW_START, json_object_new_uint64(r->start));
        put(o, PROTOCOL_ROW_SECONDS, json_object_new_uint64(r->seconds));
        put(o, PROTOCOL_ROW_STORES, json_object_new_uint64(r->stores));
        put(o, PROTOCOL_ROW_HITS, json_object_new_uint64(r->hits));
        put(o, PROTOCOL_ROW_MISSES, json_object_new_uint64(r->misses));
        put(o, PROTOCOL_ROW_HIT_RATE, hit_rate(r->hits, r->misses));
        put(o, PROTOCOL_ROW_SIZE_BYTES, r->size_known ? json_object_new_uint64(r->size_bytes) : NULL);
        for (size_t i = 0; i < ELEMENTSOF(counts); i++)
                put(o, counts[i].key, json_object_new_uint64(counts[i].value));
        return o;
}

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v) {
        char digits[20];
        size_t n = 0;

        do
                digits[n++] = (char) ('0' + v % 10);
        while ((v /= 10) > 0);
        while (n > 0)
                *p++ = digits[--n];
        return p;
}

/* Writes string literal s (without its NUL) at p; returns the end. */
#define PUT_LITERAL(p, s) ((char *) memcpy((p), (s), sizeof(s) - 1) + sizeof(s) - 1)
#define ROW_KEY(key) ",\"" key "\":"

size_t protocol_history_row_text(const ProtocolHistoryRow *r, char *buf) {
        const uint64_t counts[] = {
                r->refreshed, r->evictions, r->removals, r->stored_bytes, r->evicted_bytes, r->removed_bytes,
                r->regretted, r->regretted_bytes, r->uncacheable, r->errors, r->remote_hits, r->remote_misses,
                r->remote_errors, r->other_added_bytes, r->other_removed_bytes, r->adjusted_up_bytes,
                r->adjusted_down_bytes,
        };
        /* protocol_history_row's keys of counts[], in its order. */
        static const char *const keys[] = {
                ROW_KEY(PROTOCOL_ROW_REFRESHED), ROW_KEY(PROTOCOL_ROW_EVICTIONS), ROW_KEY(PROTOCOL_ROW_REMOVALS),
                ROW_KEY(PROTOCOL_ROW_STORED_BYTES), ROW_KEY(PROTOCOL_ROW_EVICTED_BYTES),
                ROW_KEY(PROTOCOL_ROW_REMOVED_BYTES), ROW_KEY(PROTOCOL_ROW_REGRETTED),
                ROW_KEY(PROTOCOL_ROW_REGRETTED_BYTES), ROW_KEY(PROTOCOL_ROW_UNCACHEABLE),
                ROW_KEY(PROTOCOL_ROW_ERRORS), ROW_KEY(PROTOCOL_ROW_REMOTE_HITS), ROW_KEY(PROTOCOL_ROW_REMOTE_MISSES),
                ROW_KEY(PROTOCOL_ROW_REMOTE_ERRORS), ROW_KEY(PROTOCOL_ROW_OTHER_ADDED_BYTES),
                ROW_KEY(PROTOCOL_ROW_OTHER_REMOVED_BYTES), ROW_KEY(PROTOCOL_ROW_ADJUSTED_UP_BYTES),
                ROW_KEY(PROTOCOL_ROW_ADJUSTED_DOWN_BYTES),
        };
        char rate[32], *p = buf;
        double unused;

        static_assert(ELEMENTSOF(keys) == ELEMENTSOF(counts), "a key for each count");
        /* The keys and their order of protocol_history_row, as json-c writes
         * it; by hand, not snprintf: a reply has thousands of rows. */
        p = PUT_LITERAL(p, "{\"" PROTOCOL_ROW_START "\":");
        p = put_u64(p, r->start);
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_SECONDS));
        p = put_u64(p, r->seconds);
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_STORES));
        p = put_u64(p, r->stores);
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_HITS));
        p = put_u64(p, r->hits);
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_MISSES));
        p = put_u64(p, r->misses);
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_HIT_RATE));
        if (hit_rate_text(r->hits, r->misses, &unused, rate)) {
                size_t n = strlen(rate);

                memcpy(p, rate, n);
                p += n;
        } else
                p = PUT_LITERAL(p, "null");
        p = PUT_LITERAL(p, ROW_KEY(PROTOCOL_ROW_SIZE_BYTES));
        if (r->size_known)
                p = put_u64(p, r->size_bytes);
        else
                p = PUT_LITERAL(p, "null");
        for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
                size_t n = strlen(keys[i]);

                memcpy(p, keys[i], n);
                p = put_u64(p + n, counts[i]);
        }
        *p++ = '}';
        *p = '\0';
        assert((size_t) (p - buf) < PROTOCOL_HISTORY_ROW_TEXT_MAX);
        return (size_t) (p - buf);
}

char *protocol_json_string(const char *s) {
        json_object *o = json_object_new_string(s);
        const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
        char *valid = text ? protocol_utf8_valid(text) : NULL;

        json_object_put(o);
        return valid;
}

/* {"ok":ok; the caller adds the rest, then calls reply_end. NULL on ENOMEM. */
static json_object *reply_new(bool ok) {
        json_object *o = json_object_new_object();

        if (o)
                put(o, PROTOCOL_FIELD_OK, json_object_new_boolean(ok));
        return o;
}

/* ..., "protocol":PROTOCOL_VERSION}: serialises o (taken over, may be NULL). */
static char *reply_end(json_object *o) {
        if (o)
                put(o, PROTOCOL_FIELD_PROTOCOL, json_object_new_int(PROTOCOL_VERSION));
        return serialize(o);
}

char *protocol_encode_ok(json_object *result) {
        json_object *o = reply_new(true);

        if (o && result)
                put(o, PROTOCOL_FIELD_RESULT, json_object_get(result));
        return reply_end(o);
}

static char *error_reply(const char *message, bool busy) {
        json_object *o = reply_new(false);

        if (o) {
                put(o, PROTOCOL_FIELD_ERROR, json_object_new_string(message));
                if (busy)
                        put(o, PROTOCOL_FIELD_BUSY, json_object_new_boolean(true));
        }
        return reply_end(o);
}

char *protocol_encode_error(const char *message) {
        return error_reply(message, false);
}

char *protocol_encode_busy(const char *message) {
        return error_reply(message, true);
}

char *protocol_encode_progress(json_object *progress) {
        json_object *o = json_object_new_object();

        if (o)
                put(o, PROTOCOL_FIELD_PROGRESS, json_object_get(progress));
        return serialize(o);
}

/* The "protocol" of o: 0 when absent. Returns 0, or -EINVAL when it is
 * there but not a number >= 0. */
static int reply_version(json_object *o, unsigned *ret) {
        json_object *v = protocol_field_get(o, PROTOCOL_FIELD_PROTOCOL);
        int64_t n;

        if (!v) {
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        n = json_object_get_int64(v);
        if (n < 0)
                return -EINVAL;
        *ret = n > UINT_MAX ? UINT_MAX : (unsigned) n;
        return 0;
}

int protocol_decode_reply(const char *line, ProtocolReply *ret, char *err, size_t errlen) {
        json_object *o = json_tokener_parse(line), *ok, *v;
        ProtocolReply r = {};

        if (!json_object_is_type(o, json_type_object)) {
                snprintf(err, errlen, "not a JSON object");
                goto invalid;
        }
        if (json_object_object_get_ex(o, PROTOCOL_FIELD_PROGRESS, &v)) {     /* even null */
                r = (ProtocolReply) { .kind = PROTOCOL_REPLY_PROGRESS, .value = json_object_get(v) };
                goto done;
        }
        ok = protocol_field_get(o, PROTOCOL_FIELD_OK);
        if (!json_object_is_type(ok, json_type_boolean)) {
                snprintf(err, errlen, "no \"" PROTOCOL_FIELD_OK "\" of true or false");
                goto invalid;
        }
        if (reply_version(o, &r.version) < 0) {
                snprintf(err, errlen, "a \"" PROTOCOL_FIELD_PROTOCOL "\" that is not a version");
                goto invalid;
        }
        if (json_object_get_boolean(ok)) {
                r.kind = PROTOCOL_REPLY_OK;
                r.value = json_object_get(protocol_field_get(o, PROTOCOL_FIELD_RESULT));
        } else {
                v = protocol_field_get(o, PROTOCOL_FIELD_ERROR);
                snprintf(err, errlen, "%s", v ? json_object_get_string(v) : "unknown error");
                r.kind = protocol_field_flag(o, PROTOCOL_FIELD_BUSY) ? PROTOCOL_REPLY_BUSY : PROTOCOL_REPLY_ERROR;
        }
done:
        json_object_put(o);
        *ret = r;
        return 0;
invalid:
        json_object_put(o);
        return -EINVAL;
}

bool protocol_reply_understood(const ProtocolReply *r) {
        return !(r->kind == PROTOCOL_REPLY_OK && r->value && r->version > PROTOCOL_VERSION);
}

json_object *protocol_field_get(json_object *o, const char *key) {
        json_object *v = NULL;

        return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

uint64_t protocol_field_u64(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

const char *protocol_field_str(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

bool protocol_field_flag(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

bool protocol_field_false(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v);
}

size_t protocol_field_count(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

json_object *protocol_field_item(json_object *o, const char *key, size_t i) {
        return i < protocol_field_count(o, key) ? json_object_array_get_idx(protocol_field_get(o, key), i) : NULL;
}
