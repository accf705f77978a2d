/* SPDX-License-Identifier: MIT */
/* A Redis remote watched from the event loop: hiredis's async context on
 * sd-event (the adapter below, after hiredis's adapters/libevent.h), a
 * round of read-only commands per poll, the figures and the alerts they
 * raise. Never writes to the server; never holds the password longer than
 * it takes to queue AUTH, and queues it only once the socket it goes to is
 * known to be root's or server_user's (peer.h). What the server sends is
 * bounded (each reply, each round, the round's time): hiredis 0.14's reader
 * has no limit of its own but the 16 kB it reads at a time, so its buffer
 * is measured before each read and its objects counted as they are made. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include "base/human.h"
#include "base/log.h"
#include "base/status-keys.h"
#include "os/peer.h"
#include "os/secret-file.h"
#include "remote/redis-info.h"
#include "remote/remote-redis.h"

#define SCAN_COUNT "1000"               /* keys Redis looks at per SCAN: ~1 ms of its time */
/* SCAN calls in one round at most (200M keys at COUNT 1000): a server whose
 * cursor never comes back to 0 (a broken or hostile one) ends the round
 * with the key count unknown instead of holding it open for ever. */
#define SCAN_CALLS_MAX 200000U
/* One reply at most: an INFO section is a few kB, a SCAN of COUNT 1000
 * some 1000 keys of ~50 bytes. More (a hostile server, or not Redis at
 * all) cuts the connection: the reader holds no more than this (and one
 * 16 kB read), the reply no more objects. */
#define REPLY_BYTES_MAX (4U << 20)
#define REPLY_ELEMENTS_MAX 100000U
/* One round's replies at most, all SCANs together (64M keys: more than a
 * ccache Redis of hundreds of GB holds): past it the key count is unknown. */
#define ROUND_BYTES_MAX (2048ULL << 20)
#define ROUND_ELEMENTS_MAX (64ULL << 20)
#define SAMPLES 1442U                   /* a day of minute samples, and both ends */
#define SAMPLE_USEC (60 * USEC_PER_SEC)
#define UNREACHABLE_AFTER 2U            /* failed rounds in a row: one lost packet pages no one */

typedef struct Sample {
        usec_t at;                      /* realtime */
        uint64_t hits, misses, evicted;
} Sample;

struct RedisRemote {
        sd_event *event;
        Alerter *alerter;               /* borrowed */
        const RemoteConfig *rc;         /* borrowed */
        sd_event_source *poll_timer, *deadline, *round_deadline;
        redisAsyncContext *ac;          /* the round's connection, NULL between rounds */
        redisReplyObjectFunctions *hiredis_fns; /* borrowed: the reader's own, which the bounded ones call */

        /* The round in flight. */
        RedisInfo round;
        uint64_t scan_keys;
        unsigned scan_calls;
        bool scan_failed;
        char round_scan_error[160];     /* why the key count is unknown */
        char policy_reply[REDIS_POLICY_MAX];
        bool await_owner;               /* the password waits for peer_owner's answer */
        bool refused;                   /* ... which said no: the round ends refused */
        bool info_done;                 /* every reply before SCAN's arrived */
        unsigned pending;               /* commands sent, their replies not begun */
        uint64_t reply_bytes, reply_elements, round_bytes, round_elements;
        bool cut_round;                 /* cut: over a round's bound, not a reply's */
        char cut[160];                  /* why the reader refused what the server sent */

        /* What the last rounds found. */
        RedisInfo info;
        bool polled, reachable, ccache_keys_known;
        uint64_t ccache_keys;
        usec_t last_ok;                 /* realtime of the last good round (0: none) */
        char last_error[384];
        char scan_error[160];           /* the last good round's: why ccache_keys is unknown */
        bool last_refused;              /* the last round ended refused */
        uint64_t rounds, failures;
        unsigned failed_in_row;
        Sample samples[SAMPLES];
        size_t n_samples, head;         /* ring: head is the oldest */

        /* Alerts standing. */
        bool unreachable_alert, policy_alert, auth_alert;
        RedisLevel level;
};

/* ---- sd-event adapter for one hiredis connection ---- */

typedef struct Adapter {
        redisAsyncContext *ac;
        sd_event_source *io;
        uint32_t events;
} Adapter;

static bool before_io(redisAsyncContext *ac, uint32_t revents);

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Adapter *a = userdata;
        redisAsyncContext *ac = a->ac;

        /* The round may end there, the context and this adapter with it. */
        if (!before_io(ac, revents))
                return 0;
        /* Either may end in the context's free, and this adapter's with it:
         * one per wakeup (the source is level-triggered: a write still wanted
         * wakes it again). A failed connect reads as an error. */
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
                redisAsyncHandleRead(ac);
        else if (revents & EPOLLOUT)
                redisAsyncHandleWrite(ac);
        return 0;
}

static void adapter_update(Adapter *a, uint32_t events) {
        a->events = events;
        (void) sd_event_source_set_io_events(a->io, events ? events : EPOLLIN);
        (void) sd_event_source_set_enabled(a->io, events ? SD_EVENT_ON : SD_EVENT_OFF);
}

static void add_read(void *p) {
        Adapter *a = p;
        adapter_update(a, a->events | EPOLLIN);
}

static void del_read(void *p) {
        Adapter *a = p;
        adapter_update(a, a->events & ~(uint32_t) EPOLLIN);
}

static void add_write(void *p) {
        Adapter *a = p;
        adapter_update(a, a->events | EPOLLOUT);
}

static void del_write(void *p) {
        Adapter *a = p;
        adapter_update(a, a->events & ~(uint32_t) EPOLLOUT);
}

/* hiredis calls it before it closes the fd. */
static void cleanup(void *p) {
        Adapter *a = p;

        sd_event_source_disable_unref(a->io);
        free(a);
}

static int adapter_attach(redisAsyncContext *ac, sd_event *e) {
        Adapter *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        a->ac = ac;
        r = sd_event_add_io(e, &a->io, ac->c.fd, EPOLLIN, on_io, a);
        if (r < 0) {
                free(a);
                return r;
        }
        (void) sd_event_source_set_description(a->io, "redis-remote");
        (void) sd_event_source_set_enabled(a->io, SD_EVENT_OFF);
        ac->ev.data = a;
        ac->ev.addRead = add_read;
        ac->ev.delRead = del_read;
        ac->ev.addWrite = add_write;
        ac->ev.delWrite = del_write;
        ac->ev.cleanup = cleanup;
        return 0;
}

/* ---- windows of the server's counters ---- */

static void sample(RedisRemote *r, usec_t now) {
        Sample s = { now, r->info.keyspace_hits, r->info.keyspace_misses, r->info.evicted_keys };
        size_t newest = (r->head + r->n_samples + SAMPLES - 1) % SAMPLES;

        /* The first of each minute: a window's baseline is never newer than
         * the minute it starts in (and a young daemon's is its first poll). */
        if (r->n_samples > 0 && r->samples[newest].at / SAMPLE_USEC == now / SAMPLE_USEC)
                return;
        if (r->n_samples == SAMPLES) {
                r->samples[r->head] = s;
                r->head = (r->head + 1) % SAMPLES;
        } else
                r->samples[(r->head + r->n_samples++) % SAMPLES] = s;
}

/* The newest sample taken at or before since, else the oldest. */
static const Sample *baseline(const RedisRemote *r, usec_t since) {
        const Sample *best = &r->samples[r->head];

        for (size_t i = 0; i < r->n_samples; i++) {
                const Sample *s = &r->samples[(r->head + i) % SAMPLES];
                if (s->at > since)
                        break;
                best = s;
        }
        return best;
}

/* A counter's growth; a server restart (it went down) counts from 0. */
static uint64_t growth(uint64_t now, uint64_t then) {
        return now >= then ? now - then : now;
}

/* ---- alerts ---- */

static void alert(RedisRemote *r, AlertKind kind, int priority, const char *level, const char *message) {
        alert_emit(r->alerter, &(Alert) {
                .kind = kind, .priority = priority, .level = level, .remote = r->rc->name,
                .avail_bytes = r->info.maxmemory > r->info.used_memory ? r->info.maxmemory - r->info.used_memory : 0,
                .total_bytes = r->info.maxmemory, .message = message,
        });
}

static void judge_reachable(RedisRemote *r) {
        char msg[512];

        if (!r->reachable && !r->unreachable_alert && r->failed_in_row >= UNREACHABLE_AFTER) {
                r->unreachable_alert = true;
                snprintf(msg, sizeof(msg), "Remote %s (%s) is unreachable: %s", r->rc->name, r->rc->url, r->last_error);
                alert(r, ALERT_REMOTE_UNREACHABLE, LOG_CRIT, "critical", msg);
        } else if (r->reachable && r->unreachable_alert) {
                r->unreachable_alert = false;
                snprintf(msg, sizeof(msg), "Remote %s (%s) answers again.", r->rc->name, r->rc->url);
                alert(r, ALERT_REMOTE_UNREACHABLE, LOG_NOTICE, "ok", msg);
        }
}

/* Raised when a round was refused (why in last_error); recovered as soon
 * as the owner check passes again (owner_checked). */
static void judge_auth(RedisRemote *r) {
        char msg[640];

        if (!r->refused || r->auth_alert)
                return;
        r->auth_alert = true;
        snprintf(msg, sizeof(msg), "Remote %s (%s): %s", r->rc->name, r->rc->url, r->last_error);
        alert(r, ALERT_REMOTE_AUTH_REFUSED, LOG_CRIT, "critical", msg);
}

static void owner_checked(RedisRemote *r) {
        char msg[512];

        if (!r->auth_alert)
                return;
        r->auth_alert = false;
        snprintf(msg, sizeof(msg), "Remote %s (%s): the password goes to the server's user again.", r->rc->name,
                 r->rc->url);
        alert(r, ALERT_REMOTE_AUTH_REFUSED, LOG_NOTICE, "ok", msg);
}

static void judge_policy(RedisRemote *r) {
        int evicts = redis_info_evicts(&r->info);
        char msg[512];

        if (evicts == 0 && !r->policy_alert) {
                r->policy_alert = true;
                if (r->info.maxmemory == 0)
                        snprintf(msg, sizeof(msg), "Remote %s (%s) has no maxmemory: it grows until the host runs out "
                                 "of memory; set maxmemory and maxmemory-policy allkeys-lru", r->rc->name, r->rc->url);
                else
                        snprintf(msg, sizeof(msg), "Remote %s (%s) has maxmemory-policy %s, which evicts none of "
                                 "ccache's keys (they have no TTL): once full, every store fails; use allkeys-lru",
                                 r->rc->name, r->rc->url, r->info.policy);
                alert(r, ALERT_REMOTE_POLICY, LOG_WARNING, "warning", msg);
        } else if (evicts == 1 && r->policy_alert) {
                r->policy_alert = false;
                snprintf(msg, sizeof(msg), "Remote %s (%s) evicts again: maxmemory %llu, maxmemory-policy %s.",
                         r->rc->name, r->rc->url, (unsigned long long) r->info.maxmemory, r->info.policy);
                alert(r, ALERT_REMOTE_POLICY, LOG_NOTICE, "ok", msg);
        }
}

static void judge_level(RedisRemote *r) {
        RedisLevel l = redis_info_level(&r->info, &r->rc->warn_free, &r->rc->crit_free, r->level);
        char msg[512];

        if (l == r->level)
                return;
        r->level = l;
        snprintf(msg, sizeof(msg), "Remote %s (%s) memory %s: %llu of maxmemory %llu bytes used, policy %s",
                 r->rc->name, r->rc->url, redis_level_name(l), (unsigned long long) r->info.used_memory,
                 (unsigned long long) r->info.maxmemory, r->info.policy[0] ? r->info.policy : "unknown");
        alert(r, ALERT_REMOTE_LEVEL, l == REDIS_LEVEL_CRITICAL ? LOG_CRIT : l == REDIS_LEVEL_WARNING ? LOG_WARNING
                                                                                                      : LOG_NOTICE,
              redis_level_name(l), msg);
}

/* ---- one round ---- */

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata);

/* Ends the round: ok, or failed with why (r->last_error). free_ctx is false
 * when hiredis frees the context itself (a failed connect, a lost
 * connection). */
static void round_end(RedisRemote *r, bool ok, bool free_ctx) {
        redisAsyncContext *ac = TAKE_PTR(r->ac);
        usec_t now = event_now(r->event, CLOCK_REALTIME);

        if (ac && free_ctx)
                redisAsyncFree(ac);   /* deferred by hiredis when inside its callback */
        (void) sd_event_source_set_enabled(r->deadline, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(r->round_deadline, SD_EVENT_OFF);
        r->rounds++;
        r->polled = true;
        r->last_refused = r->refused;
        if (ok) {
                if (!r->reachable && r->failures > 0)
                        log_info("Remote %s answers again.", r->rc->name);
                r->info = r->round;
                if (r->policy_reply[0])
                        (void) redis_info_set_policy(&r->info, r->policy_reply, strlen(r->policy_reply));
                if (!r->scan_failed) {
                        r->ccache_keys = r->scan_keys;
                        r->ccache_keys_known = true;
                        r->scan_error[0] = '\0';
                } else {
                        r->ccache_keys_known = false;
                        memcpy(r->scan_error, r->round_scan_error, sizeof(r->scan_error));
                }
                r->reachable = true;
                r->failed_in_row = 0;
                r->last_ok = now;
                r->last_error[0] = '\0';
                sample(r, now);
                judge_policy(r);
                judge_level(r);
        } else if (r->refused) {
                /* remote-auth-refused says it: not counted as unreachable */
                r->reachable = false;
                r->failures++;
        } else {
                if (r->reachable || r->failures == 0)
                        log_warning("Remote %s: %s", r->rc->name, r->last_error);
                r->reachable = false;
                r->failures++;
                r->failed_in_row++;
        }
        judge_auth(r);
        judge_reachable(r);
        (void) sd_event_source_set_time_relative(r->poll_timer, r->rc->poll_interval_usec);
        (void) sd_event_source_set_enabled(r->poll_timer, SD_EVENT_ONESHOT);
}

_printf_(2, 3)
static void round_fail(RedisRemote *r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(r->last_error, sizeof(r->last_error), fmt, ap);
        va_end(ap);
        round_end(r, false, true);
}

/* A reply of this round's connection? Replies of a context being freed
 * come NULL, after r->ac was let go: ignored. A NULL reply on the live
 * context is a lost connection, which hiredis frees itself. */
/* The round's connection is gone (hiredis frees it): cut by the bounded
 * reader (over a round's bound during SCAN: the figures stand, the key
 * count is unknown), or lost. */
static void connection_lost(RedisRemote *r, const redisAsyncContext *ac) {
        if (r->cut[0] && r->cut_round && r->info_done) {
                r->scan_failed = true;
                snprintf(r->round_scan_error, sizeof(r->round_scan_error), "SCAN stopped: %.140s", r->cut);
                round_end(r, true, false);
                return;
        }
        if (r->cut[0])
                snprintf(r->last_error, sizeof(r->last_error), "%s", r->cut);
        else
                snprintf(r->last_error, sizeof(r->last_error), "connection lost: %s",
                         ac->errstr[0] ? ac->errstr : "closed by the server");
        round_end(r, false, false);
}

static bool live_reply(RedisRemote *r, redisAsyncContext *ac, redisReply *reply) {
        if (ac != r->ac)
                return false;
        if (!reply) {
                connection_lost(r, ac);
                return false;
        }
        /* Every reply restarts the read timeout. */
        (void) sd_event_source_set_time_relative(r->deadline, r->rc->timeout_usec);
        return true;
}

static void on_must(redisAsyncContext *ac, void *reply_, void *userdata) {
        RedisRemote *r = userdata;
        redisReply *reply = reply_;

        if (!live_reply(r, ac, reply))
                return;
        if (reply->type == REDIS_REPLY_ERROR)
                round_fail(r, "the server refused: %.*s", (int) (reply->len > 200 ? 200 : reply->len), reply->str);
}

static void on_info(redisAsyncContext *ac, void *reply_, void *userdata) {
        RedisRemote *r = userdata;
        redisReply *reply = reply_;

        if (!live_reply(r, ac, reply))
                return;
        if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS)
                (void) redis_info_parse(reply->str, reply->len, r->rc->u.db, &r->round);
        else
                round_fail(r, "INFO failed: %.*s", reply->type == REDIS_REPLY_ERROR ? (int) (reply->len > 200 ? 200 : reply->len) : 0,
                           reply->type == REDIS_REPLY_ERROR ? reply->str : "");
}

/* A hardened server may refuse CONFIG: the policy is then INFO's, or unknown. */
static void on_policy(redisAsyncContext *ac, void *reply_, void *userdata) {
        RedisRemote *r = userdata;
        redisReply *reply = reply_;

        if (!live_reply(r, ac, reply))
                return;
        r->info_done = true;            /* SCAN's replies come next */
        if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 && reply->element[1]->type == REDIS_REPLY_STRING &&
            reply->element[1]->len < sizeof(r->policy_reply))
                memcpy(r->policy_reply, reply->element[1]->str, reply->element[1]->len + 1);
}

/* Sends a command of this round (hiredis's format: %s, %b ...), counted
 * in pending: a reply nothing asked for cuts the connection (hiredis 0.14
 * asserts, in async.c, that a context with no callback waiting is
 * subscribed; a round ends with its last reply, so none should come). */
static int command(RedisRemote *r, redisCallbackFn *fn, const char *fmt, ...) {
        va_list ap;
        int q;

        va_start(ap, fmt);
        q = redisvAsyncCommand(r->ac, fn, r, fmt, ap);
        va_end(ap);
        if (q == REDIS_OK)
                r->pending++;
        return q;
}

static void on_scan(redisAsyncContext *ac, void *reply_, void *userdata) {
        RedisRemote *r = userdata;
        redisReply *reply = reply_, *cursor, *keys;

        if (!live_reply(r, ac, reply))
                return;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
            (cursor = reply->element[0])->type != REDIS_REPLY_STRING || (keys = reply->element[1])->type != REDIS_REPLY_ARRAY ||
            cursor->len > 20 || ++r->scan_calls >= SCAN_CALLS_MAX) {
                r->scan_failed = true;   /* counted as unknown, not a failed round */
                snprintf(r->round_scan_error, sizeof(r->round_scan_error), r->scan_calls >= SCAN_CALLS_MAX
                         ? "SCAN stopped after %u calls (its cursor never came back to 0)"
                         : "SCAN answered something else than [cursor, keys] (call %u)", r->scan_calls);
                round_end(r, true, true);
                return;
        }
        r->scan_keys += keys->elements;
        if (strcmp(cursor->str, "0") == 0) {
                round_end(r, true, true);
                return;
        }
        if (command(r, on_scan, "SCAN %s MATCH ccache:* COUNT " SCAN_COUNT, cursor->str) != REDIS_OK)
                round_fail(r, "cannot send SCAN: %s", ac->errstr);
}

static void on_connect(const redisAsyncContext *ac, int status) {
        RedisRemote *r = ac->data;

        if (status == REDIS_OK || (const redisAsyncContext *) r->ac != ac)
                return;
        snprintf(r->last_error, sizeof(r->last_error), "cannot connect: %s", ac->errstr);
        round_end(r, false, false);
}

static void on_disconnect(const redisAsyncContext *ac, int status) {
        RedisRemote *r = ac->data;

        if ((const redisAsyncContext *) r->ac != ac)
                return;
        connection_lost(r, ac);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        RedisRemote *r = userdata;
        char t[32];

        if (r->ac)
                round_fail(r, "no answer within %s (timeout)", format_duration(r->rc->timeout_usec, t, sizeof(t)));
        return 0;
}

/* A whole round within round_timeout, however promptly each reply comes:
 * past it during SCAN the figures stand and the key count is unknown;
 * before, the round failed. */
static int on_round_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        RedisRemote *r = userdata;
        char t[32];

        if (!r->ac)
                return 0;
        format_duration(r->rc->round_timeout_usec, t, sizeof(t));
        if (r->info_done) {
                r->scan_failed = true;
                snprintf(r->round_scan_error, sizeof(r->round_scan_error),
                         "SCAN stopped at round_timeout (%s) after %u calls", t, r->scan_calls);
                round_end(r, true, true);
        } else
                round_fail(r, "the round took longer than round_timeout (%s)", t);
        return 0;
}

/* ---- bounded replies: hiredis's reader objects, counted ---- */

_printf_(3, 4)
static void *cut(RedisRemote *r, bool round, const char *fmt, ...) {
        va_list ap;

        if (!r->cut[0]) {
                va_start(ap, fmt);
                vsnprintf(r->cut, sizeof(r->cut), fmt, ap);
                va_end(ap);
                r->cut_round = round;
        }
        return NULL;   /* the reader's error: hiredis drops the connection */
}

/* Counts an object of the reply being read (bytes of a string, elements
 * an array declares: hiredis allocates them at once); false past a bound. */
static bool take(const redisReadTask *t, uint64_t bytes, uint64_t elements) {
        RedisRemote *r = t->privdata;

        if (!t->parent) {               /* a reply begins */
                if (r->pending == 0)
                        return cut(r, false, "the server sent a reply nothing asked for: disconnected");
                r->pending--;
                r->reply_bytes = r->reply_elements = 0;
        }
        r->reply_bytes += bytes;
        r->reply_elements += elements;
        r->round_bytes += bytes;
        r->round_elements += elements;
        if (r->reply_bytes > REPLY_BYTES_MAX || r->reply_elements > REPLY_ELEMENTS_MAX)
                return cut(r, false, "a reply of more than %u bytes or %u elements: disconnected", REPLY_BYTES_MAX,
                           REPLY_ELEMENTS_MAX);
        if (r->round_bytes > ROUND_BYTES_MAX || r->round_elements > ROUND_ELEMENTS_MAX)
                return cut(r, true, "the round's replies passed %llu bytes or %llu elements: disconnected",
                           (unsigned long long) ROUND_BYTES_MAX, (unsigned long long) ROUND_ELEMENTS_MAX);
        return true;
}

static void *bounded_string(const redisReadTask *t, char *str, size_t len) {
        RedisRemote *r = t->privdata;
        return take(t, len, 1) ? r->hiredis_fns->createString(t, str, len) : NULL;
}

static void *bounded_array(const redisReadTask *t, int elements) {
        RedisRemote *r = t->privdata;
        return take(t, 0, 1 + (uint64_t) (elements > 0 ? elements : 0)) ? r->hiredis_fns->createArray(t, elements) : NULL;
}

static void *bounded_integer(const redisReadTask *t, long long v) {
        RedisRemote *r = t->privdata;
        return take(t, 0, 1) ? r->hiredis_fns->createInteger(t, v) : NULL;
}

static void *bounded_nil(const redisReadTask *t) {
        RedisRemote *r = t->privdata;
        return take(t, 0, 1) ? r->hiredis_fns->createNil(t) : NULL;
}

static redisReplyObjectFunctions bounded_fns = {
        .createString = bounded_string,
        .createArray = bounded_array,
        .createInteger = bounded_integer,
        .createNil = bounded_nil,
        .freeObject = freeReplyObject,
};

/* AUTH [user] password, the password read now and wiped at once. */
static int queue_auth(RedisRemote *r) {
        char pw[REMOTE_PASSWORD_MAX], why[200];
        int n, q;

        if (!r->rc->password_file)
                return 0;
        n = secret_file_read(r->rc->password_file, pw, sizeof(pw), why, sizeof(why));
        if (n < 0) {
                snprintf(r->last_error, sizeof(r->last_error), "password_file '%s' refused: %s", r->rc->password_file, why);
                return n;
        }
        if (r->rc->u.user)
                q = command(r, on_must, "AUTH %s %b", r->rc->u.user, pw, (size_t) n);
        else
                q = command(r, on_must, "AUTH %b", pw, (size_t) n);
        explicit_bzero(pw, sizeof(pw));
        if (q != REDIS_OK) {
                snprintf(r->last_error, sizeof(r->last_error), "cannot send AUTH");
                return -EIO;
        }
        return 0;
}

static int queue_round(RedisRemote *r) {
        redisAsyncContext *ac = r->ac;
        int q = REDIS_OK;

        if (queue_auth(r) < 0)
                return -EIO;
        if (r->rc->u.db)
                q |= command(r, on_must, "SELECT %u", (unsigned) r->rc->u.db);
        q |= command(r, on_info, "INFO memory");
        q |= command(r, on_info, "INFO stats");
        q |= command(r, on_info, "INFO keyspace");
        q |= command(r, on_info, "INFO clients");
        q |= command(r, on_policy, "CONFIG GET maxmemory-policy");
        q |= command(r, on_scan, "SCAN 0 MATCH ccache:* COUNT " SCAN_COUNT);
        if (q != REDIS_OK) {
                snprintf(r->last_error, sizeof(r->last_error), "cannot queue commands: %s", ac->errstr);
                return -EIO;
        }
        return 0;
}

static void round_start(RedisRemote *r) {
        const RemoteUrl *u = &r->rc->u;
        int k;

        r->round = (RedisInfo) { 0 };
        r->scan_keys = 0;
        r->scan_calls = 0;
        r->scan_failed = false;
        r->round_scan_error[0] = '\0';
        r->policy_reply[0] = '\0';
        r->await_owner = r->refused = r->info_done = false;
        r->pending = 0;
        r->reply_bytes = r->reply_elements = r->round_bytes = r->round_elements = 0;
        r->cut_round = false;
        r->cut[0] = '\0';
        r->ac = u->path ? redisAsyncConnectUnix(u->path) : redisAsyncConnect(u->host, u->port);
        if (!r->ac) {
                round_fail(r, "cannot connect: out of memory");
                return;
        }
        if (r->ac->err) {
                round_fail(r, "cannot connect: %s", r->ac->errstr);
                return;
        }
        r->ac->data = r;
        r->hiredis_fns = r->ac->c.reader->fn;
        r->ac->c.reader->fn = &bounded_fns;
        r->ac->c.reader->privdata = r;
        k = adapter_attach(r->ac, r->event);
        if (k < 0) {
                round_fail(r, "cannot watch the connection: %s", strerror(-k));
                return;
        }
        (void) redisAsyncSetConnectCallback(r->ac, on_connect);
        (void) redisAsyncSetDisconnectCallback(r->ac, on_disconnect);
        (void) sd_event_source_set_time_relative(r->deadline, r->rc->timeout_usec);
        (void) sd_event_source_set_enabled(r->deadline, SD_EVENT_ONESHOT);
        (void) sd_event_source_set_time_relative(r->round_deadline, r->rc->round_timeout_usec);
        (void) sd_event_source_set_enabled(r->round_deadline, SD_EVENT_ONESHOT);
        /* With a password, nothing is sent before the other end's owner is
         * known: once connected (before_io). */
        if (r->rc->password_file)
                r->await_owner = true;
        else if (queue_round(r) < 0)
                round_end(r, false, true);
}

/* Who holds the other end, before the password is queued: root, or
 * server_user, or (a local socket) no one else. Another host's socket (no
 * local owner, not a loopback address) is not asked about: -t warns that
 * the password crosses the network in the clear. */
static int owner_check(RedisRemote *r) {
        const RemoteConfig *rc = r->rc;
        int fd = r->ac->c.fd, local = peer_is_local(fd), k;
        char where[100], user[32] = "";
        uid_t uid = 0;

        k = peer_owner(fd, &uid);
        if (k == -ENOENT && local == 0)
                return 0;
        if (rc->u.path)
                snprintf(where, sizeof(where), "socket %.80s", rc->u.path);
        else
                snprintf(where, sizeof(where), strchr(rc->u.host, ':') ? "port [%s]:%u" : "port %s:%u", rc->u.host,
                         (unsigned) rc->u.port);
        if (k < 0) {
                snprintf(r->last_error, sizeof(r->last_error), "the password was not sent: cannot tell who holds %s: %s%s",
                         where, strerror(-k), k == -EAFNOSUPPORT || k == -EPERM || k == -EACCES
                                                      ? " (the service must allow AF_NETLINK: RestrictAddressFamilies=)" : "");
                return -EPERM;
        }
        if (uid == 0 || (rc->server_uid_known && uid == rc->server_uid))
                return 0;
        if (rc->server_uid_known)
                snprintf(user, sizeof(user), " (uid %u)", (unsigned) rc->server_uid);
        else
                snprintf(user, sizeof(user), " (no such user here)");
        snprintf(r->last_error, sizeof(r->last_error), "the password was not sent: %s is held by uid %u, not root or "
                 "server_user %.64s%s; another user may have taken it while Redis was down", where, (unsigned) uid,
                 rc->server_user, user);
        return -EPERM;
}

/* Runs before hiredis handles an I/O event of ac: the owner check once
 * connected, the bound on the reader's unparsed bytes before each read.
 * Returns false when the round ended here (ac and its adapter freed). */
static bool before_io(redisAsyncContext *ac, uint32_t revents) {
        RedisRemote *r = ac->data;
        const redisReader *rd = ac->c.reader;

        if (!r || r->ac != ac)
                return true;
        if (r->await_owner && peer_connected(ac->c.fd)) {
                r->await_owner = false;
                if (owner_check(r) < 0) {
                        r->refused = true;
                        round_end(r, false, true);
                        return false;
                }
                owner_checked(r);
                if (queue_round(r) < 0) {
                        round_end(r, false, true);
                        return false;
                }
        }
        if ((revents & EPOLLIN) && rd && rd->len - rd->pos > REPLY_BYTES_MAX) {
                round_fail(r, "a reply of more than %u bytes: disconnected", REPLY_BYTES_MAX);
                return false;
        }
        return true;
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        RedisRemote *r = userdata;

        if (!r->ac)
                round_start(r);
        return 0;
}

int redis_remote_new(sd_event *e, Alerter *alerter, const RemoteConfig *rc, RedisRemote **ret) {
        RedisRemote *r = calloc(1, sizeof(*r));
        int k;

        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(e);
        r->alerter = alerter;
        r->rc = rc;
        k = sd_event_add_time_relative(e, &r->poll_timer, CLOCK_MONOTONIC, 0, 0, on_poll, r);
        if (k >= 0)
                k = sd_event_add_time_relative(e, &r->deadline, CLOCK_MONOTONIC, rc->timeout_usec, 0, on_deadline, r);
        if (k >= 0)
                k = sd_event_add_time_relative(e, &r->round_deadline, CLOCK_MONOTONIC, rc->round_timeout_usec, 0,
                                               on_round_deadline, r);
        if (k < 0) {
                redis_remote_free(r);
                return k;
        }
        (void) sd_event_source_set_enabled(r->deadline, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(r->round_deadline, SD_EVENT_OFF);
        (void) sd_event_source_set_description(r->poll_timer, "redis-remote-poll");
        (void) sd_event_source_set_description(r->deadline, "redis-remote-deadline");
        (void) sd_event_source_set_description(r->round_deadline, "redis-remote-round-deadline");
        *ret = r;
        return 0;
}

RedisRemote *redis_remote_free(RedisRemote *r) {
        if (!r)
                return NULL;
        if (r->ac)
                redisAsyncFree(TAKE_PTR(r->ac));
        sd_event_source_disable_unref(r->poll_timer);
        sd_event_source_disable_unref(r->deadline);
        sd_event_source_disable_unref(r->round_deadline);
        sd_event_unref(r->event);
        free(r);
        return NULL;
}

/* ---- status ---- */

static json_object *u64(uint64_t v) {
        return json_object_new_uint64(v);
}

static json_object *windows(const RedisRemote *r, usec_t now, size_t field) {
        static const struct {
                const char *name;
                usec_t usec;
        } w[] = { { STATUS_WINDOW_1H, 3600 * USEC_PER_SEC }, { STATUS_WINDOW_24H, 86400 * USEC_PER_SEC } };
        json_object *o = json_object_new_object();
        const uint64_t cur[3] = { r->info.keyspace_hits, r->info.keyspace_misses, r->info.evicted_keys };

        for (size_t i = 0; i < ELEMENTSOF(w); i++) {
                const Sample *b = baseline(r, now > w[i].usec ? now - w[i].usec : 0);
                const uint64_t then[3] = { b->hits, b->misses, b->evicted };
                json_object_object_add(o, w[i].name, u64(growth(cur[field], then[field])));
        }
        return o;
}

void redis_remote_retire(RedisRemote *r) {
        const struct {
                bool stands;
                AlertKind kind;
        } alerts[] = {
                { r->unreachable_alert, ALERT_REMOTE_UNREACHABLE },
                { r->policy_alert, ALERT_REMOTE_POLICY },
                { r->level != REDIS_LEVEL_OK, ALERT_REMOTE_LEVEL },
                { r->auth_alert, ALERT_REMOTE_AUTH_REFUSED },
        };
        char msg[512];

        for (size_t i = 0; i < ELEMENTSOF(alerts); i++)
                if (alerts[i].stands) {
                        snprintf(msg, sizeof(msg), "Remote %s (%s) is no longer configured: its %s no longer stands.",
                                 r->rc->name, r->rc->url, alert_kind_name(alerts[i].kind));
                        alert(r, alerts[i].kind, LOG_INFO, "ok", msg);
                }
        r->unreachable_alert = r->policy_alert = r->auth_alert = false;
        r->level = REDIS_LEVEL_OK;
}

static json_object *standing(const RedisRemote *r) {
        json_object *a = json_object_new_array();

        if (r->unreachable_alert)
                json_object_array_add(a, json_object_new_string(alert_kind_name(ALERT_REMOTE_UNREACHABLE)));
        if (r->policy_alert)
                json_object_array_add(a, json_object_new_string(alert_kind_name(ALERT_REMOTE_POLICY)));
        if (r->level != REDIS_LEVEL_OK)
                json_object_array_add(a, json_object_new_string(alert_kind_name(ALERT_REMOTE_LEVEL)));
        if (r->auth_alert)
                json_object_array_add(a, json_object_new_string(alert_kind_name(ALERT_REMOTE_AUTH_REFUSED)));
        return a;
}

json_object *redis_remote_status_json(const RedisRemote *r, usec_t now) {
        json_object *o = json_object_new_object();
        bool figures = r->last_ok > 0;
        int evicts = redis_info_evicts(&r->info);

        json_object_object_add(o, STATUS_REMOTE_NAME, json_object_new_string(r->rc->name));
        json_object_object_add(o, STATUS_REMOTE_URL, json_object_new_string(r->rc->url));
        json_object_object_add(o, STATUS_REMOTE_KIND, json_object_new_string("redis"));
        json_object_object_add(o, STATUS_REMOTE_STATE, json_object_new_string(!r->polled         ? "unknown"
                                                                              : r->reachable    ? "ok"
                                                                              : r->last_refused ? "refused"
                                                                                                : "unreachable"));
        json_object_object_add(o, STATUS_REDIS_REACHABLE, r->polled ? json_object_new_boolean(r->reachable) : NULL);
        json_object_object_add(o, STATUS_REMOTE_LEVEL, json_object_new_string(redis_level_name(r->level)));
        json_object_object_add(o, STATUS_REMOTE_ALERTS, standing(r));
        json_object_object_add(o, STATUS_REMOTE_LAST_ERROR,
                               r->last_error[0] ? json_object_new_string(r->last_error) : NULL);
        json_object_object_add(o, STATUS_REDIS_LAST_OK, figures ? u64(r->last_ok / USEC_PER_SEC) : NULL);
        /* How old the figures below are: a round that hangs shows here. */
        json_object_object_add(o, STATUS_REDIS_FIGURES_AGE_SECONDS,
                               figures ? u64(now > r->last_ok ? (now - r->last_ok) / USEC_PER_SEC : 0) : NULL);
        json_object_object_add(o, STATUS_REDIS_POLL_INTERVAL_SECONDS, u64(r->rc->poll_interval_usec / USEC_PER_SEC));
        json_object_object_add(o, STATUS_REDIS_POLLS_TOTAL, u64(r->rounds));
        json_object_object_add(o, STATUS_REDIS_POLL_FAILURES_TOTAL, u64(r->failures));
        if (!figures)
                return o;
        /* The last good round's figures, also while unreachable (last_ok says when). */
        json_object_object_add(o, STATUS_REDIS_USED_MEMORY_BYTES, u64(r->info.used_memory));
        json_object_object_add(o, STATUS_REDIS_MAXMEMORY_BYTES, u64(r->info.maxmemory));
        json_object_object_add(o, STATUS_REDIS_POLICY,
                               r->info.policy[0] ? json_object_new_string(r->info.policy) : NULL);
        json_object_object_add(o, STATUS_REDIS_EVICTS, evicts < 0 ? NULL : json_object_new_boolean(evicts));
        json_object_object_add(o, STATUS_REDIS_EVICTED_KEYS_TOTAL, u64(r->info.evicted_keys));
        json_object_object_add(o, STATUS_REDIS_KEYSPACE_HITS_TOTAL, u64(r->info.keyspace_hits));
        json_object_object_add(o, STATUS_REDIS_KEYSPACE_MISSES_TOTAL, u64(r->info.keyspace_misses));
        json_object_object_add(o, STATUS_REDIS_EVICTED_KEYS, windows(r, now, 2));
        json_object_object_add(o, STATUS_REDIS_KEYSPACE_HITS, windows(r, now, 0));
        json_object_object_add(o, STATUS_REDIS_KEYSPACE_MISSES, windows(r, now, 1));
        json_object_object_add(o, STATUS_REDIS_CCACHE_KEYS, r->ccache_keys_known ? u64(r->ccache_keys) : NULL);
        json_object_object_add(o, STATUS_REDIS_SCAN_ERROR,
                               r->scan_error[0] ? json_object_new_string(r->scan_error) : NULL);
        json_object_object_add(o, STATUS_REDIS_DB_KEYS, u64(r->info.db_keys));
        json_object_object_add(o, STATUS_REDIS_CONNECTED_CLIENTS, u64(r->info.connected_clients));
        return o;
}
