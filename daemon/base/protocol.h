/* SPDX-License-Identifier: MIT */
/* The wire format between cachectl and cachekeeperd: one JSON object per
 * line each way. Each message has its one encoder and its one decoder here,
 * and every name on the wire is spelled once, below (the keys of the status
 * and trim results: status-keys.h); neither end builds or picks apart a
 * line by hand. Every line the daemon sends is valid UTF-8, whatever bytes
 * it echoes. Pure, no I/O; linked into both. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* In every reply. Raised only by a change an older client would misread:
 * new fields, new commands and new values of a field do not raise it. A
 * daemon older than the field sends none, which reads as 0: the same
 * format, version 1 less the field. */
#define PROTOCOL_VERSION 1

/* Where the daemon listens unless told: in a directory of its own, so that
 * a container that bind-mounts the directory keeps reaching every socket
 * made there after it (a bind mount of the socket file pins one inode). */
#define PROTOCOL_SOCKET_DEFAULT  "/run/cachekeeper/cachekeeper.sock"
/* Where it listened up to 0.1.0: the socket unit keeps a symlink there
 * (Symlinks=), and cachectl tries it when the default does not exist. */
#define PROTOCOL_SOCKET_LEGACY   "/run/cachekeeper.sock"
#define PROTOCOL_REQUEST_MAX     4096          /* bytes in one request line, newline included */
#define PROTOCOL_REPLY_MAX       (4u << 20)    /* bytes in one reply line (history: 2 x 2160 rows) */
#define PROTOCOL_TRIM_CACHES_MAX 64            /* cache names in one trim request */

/* Commands, the value of "cmd". */
#define PROTOCOL_CMD_STATUS "status"
#define PROTOCOL_CMD_TRIM   "trim"
#define PROTOCOL_CMD_RELOAD "reload"
#define PROTOCOL_CMD_HISTORY "history"
#define PROTOCOL_CMD_MERGE  "merge"
#define PROTOCOL_CMD_EVICTIONS "evictions"

/* Request fields: {"cmd":"status","cache":"a"},
 * {"cmd":"trim","caches":["a"],"to_bytes":N,"dry_run":true}, {"cmd":"reload"},
 * {"cmd":"history","cache":"a","seconds":3600,"count":24},
 * {"cmd":"merge","from":"a","into":"b","dry_run":false,"allow_mixed":false},
 * {"cmd":"evictions","cache":"a","keys":["<ccache key>",...]}. */
#define PROTOCOL_FIELD_CMD      "cmd"           /* string, every request */
#define PROTOCOL_FIELD_CACHE    "cache"         /* status: only this cache */
#define PROTOCOL_FIELD_CACHES   "caches"        /* trim: names; absent or [] for every cache */
#define PROTOCOL_FIELD_TO_BYTES "to_bytes"      /* trim: down to this size, > 0 */
#define PROTOCOL_FIELD_DRY_RUN  "dry_run"       /* trim: plan only, delete nothing */
#define PROTOCOL_FIELD_WRITTEN_BY "written_by"  /* trim: the entries this ccache version wrote */
#define PROTOCOL_FIELD_NAMESPACE  "namespace"   /* trim: the entries written in this namespace */
#define PROTOCOL_FIELD_FROM     "from"          /* merge: the cache emptied */
#define PROTOCOL_FIELD_INTO     "into"          /* merge: the cache that takes its entries */
#define PROTOCOL_FIELD_ALLOW_MIXED "allow_mixed" /* merge: even across key families */
#define PROTOCOL_FIELD_SECONDS  "seconds"       /* history: 60, 3600 or 86400 per row */
#define PROTOCOL_FIELD_COUNT    "count"         /* history: the last this many rows, >= 1 */
#define PROTOCOL_FIELD_KEYS     "keys"          /* evictions: the ccache keys asked about */

/* Evictions: when and why entries left a cache (`cachectl measure
 * --explain`'s evicted verdict). At most this many keys a request (and a
 * request line is at most PROTOCOL_REQUEST_MAX bytes: about 100 keys of 33
 * or 40 characters; more go in several requests, one after the other on a
 * connection), each 2 to PROTOCOL_EVICTIONS_KEY_MAX characters of ccache's
 * key alphabet, base32hex [0-9a-v] (its hex keys are of it too), as ccache's
 * debug log prints them ("Manifest key: ...", "Result key: ..."). */
#define PROTOCOL_EVICTIONS_KEYS_MAX 4096U
#define PROTOCOL_EVICTIONS_KEY_MAX  64U
/* The evictions result: {"keys":{KEY:{"since":N,"by":BY,"kind":KIND},...}},
 * only the keys the daemon saw leave the cache within its regret horizon
 * (30 days; the last 131,072 evictions and 32,768 other departures), each
 * the last time it left: since in unix seconds; by one of
 * PROTOCOL_EVICTED_BY_* or null (evicted before the daemon recorded why);
 * kind which of the key's entries left last, absent when its name does not
 * tell (ccache 4.13+). */
#define PROTOCOL_EVICTIONS_KEYS     "keys"
#define PROTOCOL_EVICTION_SINCE     "since"
#define PROTOCOL_EVICTION_BY        "by"
#define PROTOCOL_EVICTION_KIND      "kind"
#define PROTOCOL_EVICTED_BY_CAP      "cap"       /* a trim down to a size: the cap's, or cachectl trim */
#define PROTOCOL_EVICTED_BY_PRESSURE "pressure"  /* its volume below min_free */
#define PROTOCOL_EVICTED_BY_PURGE    "purge"     /* cachectl trim --written-by / --namespace */
#define PROTOCOL_EVICTED_BY_MERGE    "merge"     /* room made for a merge */
#define PROTOCOL_EVICTED_BY_OTHER    "other"     /* not the daemon: ccache's own cleanup, rm */
#define PROTOCOL_EVICTION_RESULT     "result"    /* kind: <key>R */
#define PROTOCOL_EVICTION_MANIFEST   "manifest"  /* kind: <key>M */

/* History: rows of 1 minute (at most 24 h of them), 1 hour (90 days) or 1
 * day (90, UTC days, each the sum of its hours). */
#define PROTOCOL_HISTORY_MINUTE 60U
#define PROTOCOL_HISTORY_HOUR   3600U
#define PROTOCOL_HISTORY_DAY    86400U
#define PROTOCOL_HISTORY_MINUTES_MAX 1440U
#define PROTOCOL_HISTORY_HOURS_MAX   2160U
#define PROTOCOL_HISTORY_DAYS_MAX    90U
/* Rows in one reply, over every cache it holds: a request for more (count
 * times the caches asked for) is refused. Two caches' 90 days of hours;
 * a row is at most 803 bytes on the wire, so a reply stays well under
 * PROTOCOL_REPLY_MAX. */
#define PROTOCOL_HISTORY_ROWS_MAX (2U * PROTOCOL_HISTORY_HOURS_MAX)

/* The history result: {"cache":"a","buckets":[ROW,...]} for one cache,
 * {"caches":[{"cache":...,"buckets":[...]},...]} for all; a ROW has every
 * field below, oldest row first. */
#define PROTOCOL_HISTORY_CACHE   "cache"
#define PROTOCOL_HISTORY_CACHES  "caches"
#define PROTOCOL_HISTORY_BUCKETS "buckets"
#define PROTOCOL_ROW_START         "start"          /* unix seconds */
#define PROTOCOL_ROW_SECONDS       "seconds"        /* 60, 3600 or 86400 */
#define PROTOCOL_ROW_STORES        "stores"         /* new entries seen */
#define PROTOCOL_ROW_HITS          "hits"           /* ccache's counters: direct + preprocessed hits */
#define PROTOCOL_ROW_MISSES        "misses"         /* ccache's counters */
#define PROTOCOL_ROW_HIT_RATE      "hit_rate"       /* hits / (hits + misses), null without calls */
#define PROTOCOL_ROW_REFRESHED     "refreshed"      /* entries whose timestamps a hit refreshed */
#define PROTOCOL_ROW_EVICTIONS     "evictions"      /* removed by the daemon */
#define PROTOCOL_ROW_REMOVALS      "removals"       /* removed by others */
#define PROTOCOL_ROW_SIZE_BYTES    "size_bytes"     /* at the end of the row, null when unknown */
#define PROTOCOL_ROW_STORED_BYTES  "stored_bytes"
#define PROTOCOL_ROW_EVICTED_BYTES "evicted_bytes"
#define PROTOCOL_ROW_REMOVED_BYTES "removed_bytes"
#define PROTOCOL_ROW_REGRETTED     "regretted"      /* stores of entries the daemon had evicted */
#define PROTOCOL_ROW_REGRETTED_BYTES "regretted_bytes"
#define PROTOCOL_ROW_UNCACHEABLE   "uncacheable"
#define PROTOCOL_ROW_ERRORS        "errors"
#define PROTOCOL_ROW_REMOTE_HITS   "remote_hits"
#define PROTOCOL_ROW_REMOTE_MISSES "remote_misses"
#define PROTOCOL_ROW_REMOTE_ERRORS "remote_errors"
/* The rest of a change of size (activity.h): files that are no entries
 * (ccache's temporaries, stats files, locks) come or grown, gone or shrunk;
 * entries that came, went or changed size with no store, eviction or
 * removal seen (a manifest rewritten, a merge's moves, a rescan's finds). */
#define PROTOCOL_ROW_OTHER_ADDED_BYTES   "other_added_bytes"
#define PROTOCOL_ROW_OTHER_REMOVED_BYTES "other_removed_bytes"
#define PROTOCOL_ROW_ADJUSTED_UP_BYTES    "adjusted_up_bytes"
#define PROTOCOL_ROW_ADJUSTED_DOWN_BYTES  "adjusted_down_bytes"

/* Lines the daemon sends: {"ok":true,"result":R,"protocol":1},
 * {"ok":false,"error":"...","protocol":1}, with "busy":true before
 * "protocol" when the connection was turned away (too many); before the
 * reply, a long request may send {"progress":P} lines (no version: they are
 * for display, read as tolerantly as a result). */
#define PROTOCOL_FIELD_OK       "ok"
#define PROTOCOL_FIELD_RESULT   "result"
#define PROTOCOL_FIELD_ERROR    "error"
#define PROTOCOL_FIELD_BUSY     "busy"
#define PROTOCOL_FIELD_PROTOCOL "protocol"
#define PROTOCOL_FIELD_PROGRESS "progress"

/* A status request. */
typedef struct ProtocolStatus {
        const char *cache;              /* only this cache, or NULL for all; borrowed */
} ProtocolStatus;

/* A trim request. */
typedef struct ProtocolTrim {
        const char *caches[PROTOCOL_TRIM_CACHES_MAX];   /* borrowed */
        size_t n_caches;                /* 0: every cache that can be trimmed now */
        uint64_t to_bytes;              /* 0: each cache down to its own target */
        bool dry_run;
        /* Either or both: instead of a size, exactly the entries whose header
         * names this version and/or namespace (borrowed; NULL: any). */
        const char *written_by, *ns;
} ProtocolTrim;

/* A merge request: every entry of cache from into cache into. */
typedef struct ProtocolMerge {
        const char *from, *into;        /* borrowed */
        bool dry_run;                   /* say what would happen, move nothing */
        bool allow_mixed;               /* even when their key families differ */
} ProtocolMerge;

/* A history request. */
typedef struct ProtocolHistory {
        const char *cache;              /* only this cache, or NULL for all; borrowed */
        unsigned seconds;               /* PROTOCOL_HISTORY_MINUTE, _HOUR or _DAY */
        unsigned count;                 /* 1..protocol_history_max(seconds) */
} ProtocolHistory;

/* An evictions request. */
typedef struct ProtocolEvictions {
        const char *cache;              /* borrowed */
        const char **keys;              /* n_keys; encode: borrowed; decode: malloc'd array, strings borrowed */
        size_t n_keys;
} ProtocolEvictions;

/* What the daemon says of one key it saw leave. */
typedef struct ProtocolEviction {
        uint64_t since;                 /* unix seconds */
        const char *by;                 /* PROTOCOL_EVICTED_BY_*, or NULL: not recorded (null) */
        const char *kind;               /* PROTOCOL_EVICTION_RESULT, _MANIFEST, or NULL: not told */
} ProtocolEviction;

/* One history row, as the daemon counted it. */
typedef struct ProtocolHistoryRow {
        uint64_t start, seconds;
        uint64_t stores, hits, misses, refreshed, evictions, removals;
        uint64_t stored_bytes, evicted_bytes, removed_bytes;
        uint64_t regretted, regretted_bytes;
        uint64_t uncacheable, errors, remote_hits, remote_misses, remote_errors;
        /* The rest of the row's change of size (activity.h): stored_bytes +
         * adjusted_up_bytes + other_added_bytes - evicted_bytes -
         * removed_bytes - adjusted_down_bytes - other_removed_bytes is
         * size_bytes less the size at the end of the row before. */
        uint64_t other_added_bytes, other_removed_bytes, adjusted_up_bytes, adjusted_down_bytes;
        bool size_known;
        uint64_t size_bytes;
} ProtocolHistoryRow;

/* What protocol_decode_reply found. */
typedef enum ProtocolReplyKind {
        PROTOCOL_REPLY_OK,              /* the request succeeded; value: the result, or NULL */
        PROTOCOL_REPLY_ERROR,           /* refused or failed; the message in err */
        PROTOCOL_REPLY_BUSY,            /* the connection was turned away (too many); message in err */
        PROTOCOL_REPLY_PROGRESS,        /* not the reply yet; value: the progress */
} ProtocolReplyKind;

typedef struct ProtocolReply {
        ProtocolReplyKind kind;
        unsigned version;               /* its "protocol"; 0 when absent (older daemon, progress) */
        json_object *value;             /* owned by the caller (json_object_put), may be NULL */
} ProtocolReply;

/* Requests, the client's side. Each returns the line to send, newline
 * included, malloc'd; NULL on ENOMEM. Arguments are borrowed. Strings that
 * are not UTF-8 go out with U+FFFD in place of each bad byte. */
char *protocol_encode_status(const ProtocolStatus *s);
char *protocol_encode_trim(const ProtocolTrim *t);
char *protocol_encode_reload(void);
char *protocol_encode_history(const ProtocolHistory *h);
char *protocol_encode_merge(const ProtocolMerge *m);
/* At most PROTOCOL_EVICTIONS_KEYS_MAX keys (the caller splits more). */
char *protocol_encode_evictions(const ProtocolEvictions *e);

/* Requests, the daemon's side. Parses one request line (without its
 * newline): an object with a string "cmd". On success stores the object
 * (caller unrefs) and its command (borrowed from it) and returns 0; on
 * failure returns -EINVAL (-ENOMEM) with a message for the client in err,
 * leaving the outputs unchanged. Fields the command does not know are
 * ignored. */
int protocol_decode_request(const char *line, json_object **ret, const char **ret_cmd,
                            char *err, size_t errlen);

/* The fields of a request protocol_decode_request returned, for its
 * command. Every field is checked before any is used, so that a request
 * that says something else than it means gets an error, not a guess: 0 and
 * *ret set (strings borrowed from request), or -EINVAL with the message for
 * the client in err and *ret unchanged. A trim names at most
 * PROTOCOL_TRIM_CACHES_MAX caches. Reload has no fields. */
int protocol_decode_status(json_object *request, ProtocolStatus *ret, char *err, size_t errlen);
int protocol_decode_trim(json_object *request, ProtocolTrim *ret, char *err, size_t errlen);
/* A history request's seconds must be one of the three and its count
 * within protocol_history_max. */
int protocol_decode_history(json_object *request, ProtocolHistory *ret, char *err, size_t errlen);
/* A merge names two different caches (strings of 1 to 255 bytes); its
 * flags are true or false. */
int protocol_decode_merge(json_object *request, ProtocolMerge *ret, char *err, size_t errlen);
/* An evictions request names a cache (as a merge does) and 1 to
 * PROTOCOL_EVICTIONS_KEYS_MAX keys, each a string of 2 to
 * PROTOCOL_EVICTIONS_KEY_MAX characters of [0-9a-v]. ret->keys is malloc'd
 * (the caller frees it); -ENOMEM possible. */
int protocol_decode_evictions(json_object *request, ProtocolEvictions *ret, char *err, size_t errlen);
/* The object of one key of the evictions result (e->since, by, kind); new
 * reference, NULL on ENOMEM. */
json_object *protocol_eviction(const ProtocolEviction *e);
/* What an evictions result says of key: 1 and *ret (strings borrowed from
 * result) when it lists key, 0 when not (or not as an object). Tolerant, as
 * the protocol_field_* readers: a by or kind that is no string reads as
 * NULL. */
int protocol_decode_eviction(json_object *result, const char *key, ProtocolEviction *ret);
/* The most rows a history request of seconds per row may ask for; 0 when
 * seconds is none of PROTOCOL_HISTORY_MINUTE, _HOUR, _DAY. */
unsigned protocol_history_max(unsigned seconds);
/* The object of one history row (every PROTOCOL_ROW_* field); new
 * reference, NULL on ENOMEM. */
json_object *protocol_history_row(const ProtocolHistoryRow *r);
/* The same row as text, byte for byte what protocol_history_row's object
 * serialises to, written to buf (PROTOCOL_HISTORY_ROW_TEXT_MAX bytes) with
 * its NUL; returns its length. No allocation: for replies of thousands of
 * rows, written a slice at a time (control_reply_stream). */
#define PROTOCOL_HISTORY_ROW_TEXT_MAX 896U      /* a row of every figure at its widest is 803 bytes */
size_t protocol_history_row_text(const ProtocolHistoryRow *r, char *buf);

/* An ok reply written in pieces: PROTOCOL_OK_HEAD, the result's JSON, then
 * PROTOCOL_OK_TAIL make the line protocol_encode_ok writes. */
#define PROTOCOL_STR_(x) #x
#define PROTOCOL_STR(x) PROTOCOL_STR_(x)
#define PROTOCOL_OK_HEAD "{\"" PROTOCOL_FIELD_OK "\":true,\"" PROTOCOL_FIELD_RESULT "\":"
#define PROTOCOL_OK_TAIL ",\"" PROTOCOL_FIELD_PROTOCOL "\":" PROTOCOL_STR(PROTOCOL_VERSION) "}\n"

/* s as a JSON string, quotes and all, valid UTF-8 (as protocol_utf8_valid);
 * malloc'd, NULL on ENOMEM. */
char *protocol_json_string(const char *s);

/* Lines the daemon sends, each with its newline, malloc'd; NULL on ENOMEM.
 * Replies carry "protocol": PROTOCOL_VERSION. Any byte sequence that is not
 * UTF-8 in a string (a name a client sent, a path) goes out as U+FFFD, one
 * per bad byte; the rest is kept. result and progress are borrowed
 * (result: NULL means none). */
char *protocol_encode_ok(json_object *result);
char *protocol_encode_error(const char *message);
char *protocol_encode_busy(const char *message);        /* a connection turned away */
char *protocol_encode_progress(json_object *progress);

/* Parses a line the daemon sent (without its newline), once, whatever its
 * kind. Returns 0 with *ret set (the message of an error or busy reply in
 * err), or -EINVAL when the line is none of them (err says why; *ret
 * unchanged). A "protocol" that is there must be a number >= 0. */
int protocol_decode_reply(const char *line, ProtocolReply *ret, char *err, size_t errlen);

/* Whether this side can read r: false only for an ok reply with a result in
 * a protocol newer than PROTOCOL_VERSION, whose result may mean what this
 * side cannot know. The rest of a line (ok, error, busy, progress, protocol)
 * means the same in every version. */
bool protocol_reply_understood(const ProtocolReply *r);

/* Copies s, each byte that does not belong to a valid UTF-8 sequence
 * replaced by U+FFFD. NULL on ENOMEM. */
char *protocol_utf8_valid(const char *s);

/* Tolerant readers of a result's fields, for what the other side sent: a
 * missing or mistyped field reads as NULL, 0, "", false or an empty array,
 * never as a crash (json-c asserts on an array call on a non-array). o and
 * what they return are borrowed. */
json_object *protocol_field_get(json_object *o, const char *key);
uint64_t protocol_field_u64(json_object *o, const char *key);
const char *protocol_field_str(json_object *o, const char *key);
bool protocol_field_flag(json_object *o, const char *key);
bool protocol_field_false(json_object *o, const char *key);     /* present, and the boolean false */
size_t protocol_field_count(json_object *o, const char *key);   /* array length */
json_object *protocol_field_item(json_object *o, const char *key, size_t i);
