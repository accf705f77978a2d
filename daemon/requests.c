/* SPDX-License-Identifier: MIT */
/* The control requests: status, history and evictions for anyone; trim
 * (dry runs for anyone) and reload for root and admin_group, decided from
 * the peer's credentials; a peer in a container (another mount namespace)
 * only what container_rights lists besides. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "evict/trim.h"
#include "manager-internal.h"
#include "merge.h"

/* A trim's or a merge's progress line: every TRIM_PROGRESS_USEC, within
 * PROGRESS_ACCURACY_USEC of its time (sd-event's default accuracy, 250 ms,
 * would let each line slip by as much again). cachectl counts its timeout
 * from the last line it read. */
#define TRIM_PROGRESS_USEC (250 * USEC_PER_MSEC)
#define PROGRESS_ACCURACY_USEC (1 * USEC_PER_MSEC)
/* Dry runs are for anyone, and each plans over the whole cache: per uid,
 * one at a time and this many a minute (root and admin_group: no limit). */
#define DRY_RUNS_PER_MINUTE 10
#define DRY_RUN_WINDOW_USEC (60 * USEC_PER_SEC)

/* One `cachectl trim` request, waiting for the trims it started. */
typedef struct TrimCall {
        Manager *manager;
        ControlRequest *req;
        json_object *results;        /* name → result */
        size_t pending;
        sd_event_source *progress;
        DryRunUse *dry_run;          /* its uid's use, released when done */
} TrimCall;

/* uid 0, or a member of admin_group: its gid is the peer's primary group
 * or one of the supplementary groups the socket gave at accept (as for file
 * access, a user added to the group must log in again). No NSS lookup: the
 * manager resolved the group at load, reload or on its timer. */
static bool uid_is_admin(const Manager *m, const ControlPeer *peer) {
        if (peer->uid == 0)
                return true;
        if (!m->admin_gid_known)
                return false;
        if (peer->gid == m->admin_gid)
                return true;
        for (size_t i = 0; i < peer->n_groups; i++)
                if (peer->groups[i] == m->admin_gid)
                        return true;
        return false;
}

/* An admin on the host. A container's root is not one, whatever its uid:
 * it takes no reserved slot and has no dry-run exemption, and what it may
 * change is container_rights' (peer_may). */
static bool peer_is_admin(const Manager *m, const ControlPeer *peer) {
        return !peer->in_container && uid_is_admin(m, peer);
}

bool manager_peer_is_admin(const ControlPeer *peer, void *userdata) {
        return peer_is_admin(userdata, peer);
}

/* Whether peer may make a request that needs right (ConfigRight): anyone
 * on the host as far as right goes (the handlers check admin_group), a
 * container peer only what container_rights lists; else refuses req. */
static bool container_allows(Manager *m, ControlRequest *req, unsigned right) {
        const ControlPeer *peer = control_request_peer(req);
        unsigned k = 0;

        if (!peer->in_container || (m->config->container_rights & right))
                return true;
        while (config_right_names[k + 1] && (1u << k) != right)
                k++;
        if (peer->place_error)
                control_reply_error(req, "permission denied: %s is not allowed from a container (the mount namespace "
                                    "of pid %d could not be read: %s; such a peer counts as one; container_rights "
                                    "lists what is)", config_right_names[k], (int) peer->pid,
                                    strerror(-peer->place_error));
        else
                control_reply_error(req, "permission denied: %s is not allowed from a container (pid %d is in another "
                                    "mount namespace; container_rights lists what is)", config_right_names[k],
                                    (int) peer->pid);
        return false;
}

/* root or admin_group, allowed right from where it is (a container). */
static bool peer_may_change(Manager *m, const ControlPeer *peer, unsigned right) {
        return uid_is_admin(m, peer) && (!peer->in_container || (m->config->container_rights & right));
}

static Cache *find_cache(Manager *m, const char *name) {
        return manager_find_cache(m, name, NULL);
}

/* Trimming needs a scanned, available cache. */
static bool trimmable(Cache *c) {
        return cache_state(c) != CACHE_UNAVAILABLE && cache_state(c) != CACHE_SCANNING;
}

static void handle_status(Manager *m, ControlRequest *req, json_object *request) {
        json_object *result, *caches;
        Cache *only = NULL;
        ProtocolStatus s;
        char err[256];

        if (protocol_decode_status(request, &s, err, sizeof(err)) < 0) {
                control_reply_error(req, "%s", err);
                return;
        }
        if (s.cache) {
                only = find_cache(m, s.cache);
                if (!only) {
                        control_reply_error(req, "no cache named '%s'", s.cache);
                        return;
                }
        }
        caches = json_object_new_array();
        for (size_t i = 0; i < m->n_caches; i++)
                if (!only || m->caches[i] == only) {
                        json_object *o = cache_status_json(m->caches[i]);

                        if (merge_involves(m->merge, cache_config(m->caches[i])->name))
                                json_object_object_add(o, STATUS_CACHE_MERGE, merge_json(m->merge, true));
                        json_object_array_add(caches, o);
                }
        result = json_object_new_object();
        json_object_object_add(result, STATUS_CACHES, caches);
        json_object_object_add(result, STATUS_VOLUMES, space_status_json(m->space));
        json_object_object_add(result, STATUS_REMOTES,
                               m->remotes ? remotes_status_json(m->remotes, event_now(m->event, CLOCK_REALTIME))
                                          : json_object_new_array());
        json_object_object_add(result, STATUS_READY, json_object_new_boolean(m->ready));
        json_object_object_add(result, STATUS_VERSION, json_object_new_string(CACHEKEEPER_VERSION));
        control_reply_ok(req, result);
        json_object_put(result);
}

/* A history reply, its figures copied at the request, written a slice at
 * a time (control_reply_stream): [head of cache 0][rows][tail of cache 0]
 * ... then the end of the line. A copy: a reload may free a cache before
 * the last slice is written, and the rows stay those of one moment. */
typedef struct HistoryReply {
        bool all;                       /* {"caches":[...]}, not one cache's object */
        size_t n_caches, cache;         /* caches; the one being written */
        struct {
                char *name;             /* a JSON string */
                size_t first, n;        /* its rows in rows[] */
        } *caches;
        ProtocolHistoryRow *rows;
        size_t n_rows, alloc_rows;
        size_t row;                     /* the next row to write: rows[cache.first + row] */
        bool head_done;                 /* the line's head, or this cache's, is written */
        bool failed;                    /* ENOMEM while copying */
} HistoryReply;

static void history_reply_free(void *userdata) {
        HistoryReply *h = userdata;

        if (!h)
                return;
        for (size_t i = 0; i < h->n_caches; i++)
                free(h->caches[i].name);
        free(h->caches);
        free(h->rows);
        free(h);
}

static void history_add_row(const ProtocolHistoryRow *row, void *userdata) {
        HistoryReply *h = userdata;

        if (h->n_rows < h->alloc_rows)  /* never more than asked for: room made for them all */
                h->rows[h->n_rows++] = *row;
}

/* Copies the rows of cache c, the next in h->caches. */
static void history_copy(HistoryReply *h, Cache *c, const ProtocolHistory *req, usec_t now) {
        size_t i = h->n_caches++;

        h->caches[i].first = h->n_rows;
        h->caches[i].name = protocol_json_string(cache_config(c)->name);
        if (!h->caches[i].name)
                h->failed = true;
        (void) cache_history(c, req->seconds, req->count, now, history_add_row, h);
        h->caches[i].n = h->n_rows - h->caches[i].first;
}

/* Appends s to buf (room checked by the caller). */
static size_t put_text(char *buf, size_t len, const char *s) {
        size_t n = strlen(s);

        memcpy(buf + len, s, n);
        return len + n;
}

/* control_fill_t of a HistoryReply: whole rows while a row's worst case
 * still fits; the short text around them (cache names are at most
 * CONFIG_NAME_MAX bytes, 6 each once escaped) always does. */
static int history_fill(char *buf, size_t size, size_t *ret_len, void *userdata) {
        const size_t frame = 64 + 6 * CONFIG_NAME_MAX;
        HistoryReply *h = userdata;
        size_t len = 0;

        assert(size >= frame + PROTOCOL_HISTORY_ROW_TEXT_MAX);
        if (h->cache == 0 && !h->head_done && h->row == 0)
                len = put_text(buf, len, h->all ? PROTOCOL_OK_HEAD "{\"" PROTOCOL_HISTORY_CACHES "\":[" :
                                                   PROTOCOL_OK_HEAD);
        while (h->cache < h->n_caches && len + frame + PROTOCOL_HISTORY_ROW_TEXT_MAX <= size) {
                typeof(*h->caches) *c = &h->caches[h->cache];

                if (!h->head_done) {
                        len = put_text(buf, len, h->cache > 0 ? ",{\"" PROTOCOL_HISTORY_CACHE "\":" :
                                                                "{\"" PROTOCOL_HISTORY_CACHE "\":");
                        len = put_text(buf, len, c->name);
                        len = put_text(buf, len, ",\"" PROTOCOL_HISTORY_BUCKETS "\":[");
                        h->head_done = true;
                }
                while (h->row < c->n && len + 1 + PROTOCOL_HISTORY_ROW_TEXT_MAX + frame <= size) {
                        if (h->row > 0)
                                buf[len++] = ',';
                        len += protocol_history_row_text(&h->rows[c->first + h->row], buf + len);
                        h->row++;
                }
                if (h->row < c->n)
                        break;
                len = put_text(buf, len, "]}");
                h->cache++;
                h->row = 0;
                h->head_done = false;
        }
        *ret_len = len;
        if (h->cache < h->n_caches)
                return 1;
        if (len + frame > size)         /* the end on the next call */
                return 1;
        len = put_text(buf, len, h->all ? "]}" PROTOCOL_OK_TAIL : PROTOCOL_OK_TAIL);
        *ret_len = len;
        h->cache++;                     /* past the end: a call now would write nothing */
        return 0;
}

/* A history request (protocol_decode_history): one cache's rows, or every
 * cache's; at most PROTOCOL_HISTORY_ROWS_MAX rows in all. Thousands of rows
 * make a reply of megabytes: their figures are copied now (cheap), their
 * text written a slice at a time (history_fill), so that status and every
 * other client are served between two slices. */
static void handle_history(Manager *m, ControlRequest *req, json_object *request) {
        usec_t now = event_now(m->event, CLOCK_REALTIME);
        ProtocolHistory q;
        Cache *only = NULL;
        HistoryReply *h;
        char err[256];

        if (protocol_decode_history(request, &q, err, sizeof(err)) < 0) {
                control_reply_error(req, "%s", err);
                return;
        }
        if (q.cache && !(only = find_cache(m, q.cache))) {
                control_reply_error(req, "no cache named '%s'", q.cache);
                return;
        }
        if (!only && (uint64_t) q.count * m->n_caches > PROTOCOL_HISTORY_ROWS_MAX) {
                control_reply_error(req, "%u rows of each of %zu caches is more than one reply holds (%u rows): "
                                    "name a cache, or ask for fewer rows", q.count, m->n_caches,
                                    PROTOCOL_HISTORY_ROWS_MAX);
                return;
        }
        h = calloc(1, sizeof(*h));
        if (h) {
                h->caches = calloc(only ? 1 : m->n_caches ?: 1, sizeof(*h->caches));
                h->alloc_rows = (size_t) q.count * (only ? 1 : m->n_caches);
                h->rows = reallocarray(NULL, h->alloc_rows ?: 1, sizeof(*h->rows));
        }
        if (!h || !h->caches || !h->rows) {
                history_reply_free(h);
                control_reply_error(req, "out of memory");
                return;
        }
        h->all = !only;
        if (only)
                history_copy(h, only, &q, now);
        else
                for (size_t i = 0; i < m->n_caches; i++)
                        history_copy(h, m->caches[i], &q, now);
        if (h->failed) {
                history_reply_free(h);
                control_reply_error(req, "out of memory");
                return;
        }
        control_reply_stream(req, history_fill, history_reply_free, h);
}

/* The wire name of why an entry left; NULL (null) when not recorded. */
static const char *left_by_name(RegretBy by) {
        switch (by) {
        case REGRET_BY_CAP:
                return PROTOCOL_EVICTED_BY_CAP;
        case REGRET_BY_PRESSURE:
                return PROTOCOL_EVICTED_BY_PRESSURE;
        case REGRET_BY_PURGE:
                return PROTOCOL_EVICTED_BY_PURGE;
        case REGRET_BY_MERGE:
                return PROTOCOL_EVICTED_BY_MERGE;
        case REGRET_BY_OTHER:
                return PROTOCOL_EVICTED_BY_OTHER;
        default:
                return NULL;
        }
}

/* An evictions request (protocol_decode_evictions): of the keys asked,
 * those the cache saw leave, when and why. Read only, from what the daemon
 * keeps anyway (regret.h): a few hash lookups a key, at most
 * PROTOCOL_EVICTIONS_KEYS_MAX keys. */
static void handle_evictions(Manager *m, ControlRequest *req, json_object *request) {
        usec_t now = event_now(m->event, CLOCK_REALTIME);
        json_object *result = NULL, *keys;
        ProtocolEvictions q;
        Cache *c;
        char err[256];

        if (protocol_decode_evictions(request, &q, err, sizeof(err)) < 0) {
                control_reply_error(req, "%s", err);
                return;
        }
        c = find_cache(m, q.cache);
        if (!c) {
                control_reply_error(req, "no cache named '%s'", q.cache);
                goto done;
        }
        keys = json_object_new_object();
        result = json_object_new_object();
        if (!keys || !result || json_object_object_add(result, PROTOCOL_EVICTIONS_KEYS, keys) < 0) {
                json_object_put(keys);
                control_reply_error(req, "out of memory");
                goto done;
        }
        for (size_t i = 0; i < q.n_keys; i++) {
                CacheLeft l;

                if (cache_left(c, q.keys[i], now, &l))
                        json_object_object_add(keys, q.keys[i], protocol_eviction(&(ProtocolEviction) {
                                .since = l.at, .by = left_by_name(l.by),
                                .kind = l.kind == CACHE_LEFT_RESULT     ? PROTOCOL_EVICTION_RESULT
                                        : l.kind == CACHE_LEFT_MANIFEST ? PROTOCOL_EVICTION_MANIFEST : NULL,
                        }));
        }
        control_reply_ok(req, result);
done:
        json_object_put(result);
        free(q.keys);
}

static void handle_reload(Manager *m, ControlRequest *req) {
        const ControlPeer *peer = control_request_peer(req);
        char err[CONFIG_ERROR_MAX];

        if (!container_allows(m, req, CONFIG_RIGHT_RELOAD))
                return;
        if (!peer_may_change(m, peer, CONFIG_RIGHT_RELOAD)) {
                control_reply_error(req, "permission denied: reload is for root and members of '%s'",
                                    m->config->admin_group);
                return;
        }
        log_info("Reload requested by uid %u (pid %u).", (unsigned) peer->uid, (unsigned) peer->pid);
        if (manager_reload(m, err, sizeof(err)) < 0)
                control_reply_error(req, "reload refused, the running configuration stays: %s", err);
        else
                control_reply_ok(req, NULL);
}

/* Admits a dry run by uid at now (monotonic), or replies why not. Returns
 * the uid's use (marked busy), or NULL after replying. */
static DryRunUse *dry_run_admit(Manager *m, ControlRequest *req, uid_t uid, usec_t now) {
        DryRunUse *u = NULL, *free_slot = NULL;

        for (size_t i = 0; i < DRY_RUN_UIDS; i++) {
                DryRunUse *s = &m->dry_runs[i];
                bool in_use = s->busy || (s->used > 0 && now - s->window_start < DRY_RUN_WINDOW_USEC);

                if (in_use && s->uid == uid)
                        u = s;
                else if (!in_use && !free_slot)
                        free_slot = s;
        }
        if (!u && !free_slot) {
                control_reply_error(req, "too many users are running dry runs; try again in a minute");
                return NULL;
        }
        if (!u) {
                u = free_slot;
                *u = (DryRunUse) { .uid = uid, .window_start = now };
        }
        if (u->busy) {
                control_reply_error(req, "a dry run of uid %u is still running: one at a time", (unsigned) uid);
                return NULL;
        }
        if (now - u->window_start >= DRY_RUN_WINDOW_USEC)
                *u = (DryRunUse) { .uid = uid, .window_start = now };
        if (u->used >= DRY_RUNS_PER_MINUTE) {
                control_reply_error(req, "dry runs are limited to %d a minute per user: uid %u may ask again in %llu s",
                                    DRY_RUNS_PER_MINUTE, (unsigned) uid,
                                    (unsigned long long) ((u->window_start + DRY_RUN_WINDOW_USEC - now + USEC_PER_SEC - 1) /
                                                          USEC_PER_SEC));
                return NULL;
        }
        u->used++;
        u->busy = true;
        return u;
}

static void trim_call_free(TrimCall *t) {
        if (t->dry_run)
                t->dry_run->busy = false;
        sd_event_source_disable_unref(t->progress);
        json_object_put(t->results);
        free(t);
}

static void on_trim_done(Cache *c, const TrimResult *r, void *userdata) {
        TrimCall *t = userdata;
        json_object *o = cache_trim_json(r);

        json_object_object_add(o, STATUS_TRIM_SIZE_BYTES, json_object_new_uint64(cache_totals(c)->bytes));
        json_object_object_add(t->results, cache_config(c)->name, o);
        if (--t->pending > 0)
                return;
        control_reply_ok(t->req, t->results);
        trim_call_free(t);
}

static int on_trim_progress(sd_event_source *s, uint64_t usec, void *userdata) {
        TrimCall *t = userdata;
        json_object *p = json_object_new_object();

        for (size_t i = 0; i < t->manager->n_caches; i++) {
                const TrimResult *r = cache_running_trim(t->manager->caches[i], t);
                if (r && !r->dry_run)
                        json_object_object_add(p, cache_config(t->manager->caches[i])->name, cache_trim_json(r));
        }
        if (json_object_object_length(p) > 0)
                control_send_progress(t->req, p);
        json_object_put(p);
        return sd_event_source_set_time_relative(s, TRIM_PROGRESS_USEC);
}

/* Starts *ret, the progress timer of a trim or a merge: handler now, then
 * every TRIM_PROGRESS_USEC as it sets its next time. On for good, not the
 * ONESHOT sd_event_add_time gives: that one sent the first line and no
 * other, and cachectl gave up on a trim longer than its timeout. Timers
 * are of normal priority, above the slices of trims and merges: a line is
 * late by the slice that runs, and by a filesystem call that blocks in it
 * (an unlink on ext4 waiting for the journal: up to some 250 ms, seen with
 * strace; lines 250-640 ms apart at worst on 500k entries, make bench).
 * Returns 0 or -errno (no progress then: the request still gets its
 * result). */
static int progress_timer(Manager *m, sd_event_source **ret, sd_event_time_handler_t handler, void *userdata) {
        int r = sd_event_add_time_relative(m->event, ret, CLOCK_MONOTONIC, 0, PROGRESS_ACCURACY_USEC, handler,
                                           userdata);

        if (r >= 0 && (r = sd_event_source_set_enabled(*ret, SD_EVENT_ON)) < 0)
                *ret = sd_event_source_disable_unref(*ret);
        return r;
}

/* A purge by writer that names no writer the caches hold (a version
 * mistyped, a namespace never used) evicts nothing: refused instead, with
 * the writers they do hold. Returns whether one is held (else replied). */
static bool writer_held(ControlRequest *req, Cache **targets, size_t n, const char *version, const char *ns) {
        char held[2048] = "";
        size_t used = 0;
        bool found = false;

        for (size_t i = 0; i < n && !found; i++) {
                json_object *st = cache_status_json(targets[i]), *ws;

                if (st && json_object_object_get_ex(st, STATUS_CACHE_WRITERS, &ws))
                        for (size_t j = 0; j < json_object_array_length(ws); j++) {
                                json_object *w = json_object_array_get_idx(ws, j), *v, *s, *e;
                                const char *vs = json_object_object_get_ex(w, STATUS_WRITER_CCACHE_VERSION, &v) && v
                                                         ? json_object_get_string(v) : NULL;
                                const char *ss = json_object_object_get_ex(w, STATUS_WRITER_NAMESPACE, &s) && s
                                                         ? json_object_get_string(s) : "";

                                if (!vs) {
                                        json_object *h;

                                        /* Entries of writers beyond the table may be the one asked
                                         * for (the purge says it may miss them); unreadable ones not. */
                                        found |= json_object_object_get_ex(w, STATUS_WRITER_HEADER, &h) && h &&
                                                 strcmp(json_object_get_string(h), "beyond the table") == 0;
                                        continue;
                                }
                                found |= (!version || strcmp(vs, version) == 0) && (!ns || strcmp(ss, ns) == 0);
                                if (used < sizeof(held))
                                        used += (size_t) snprintf(held + used, sizeof(held) - used,
                                                                  "%s%s: %s%s%s (%llu entries)", used ? ", " : "",
                                                                  cache_config(targets[i])->name, vs,
                                                                  *ss ? " namespace " : "", ss,
                                                                  json_object_object_get_ex(w, STATUS_WRITER_ENTRIES, &e)
                                                                          ? (unsigned long long) json_object_get_uint64(e)
                                                                          : 0ULL);
                        }
                json_object_put(st);
        }
        if (!found)
                control_reply_error(req, "no entries written by %s%s%s%s in the caches asked: %s%s",
                                    version ? "ccache " : "", version ?: "", ns ? (version ? " in namespace " : "namespace ") : "",
                                    ns ?: "", *held ? "they hold " : "they hold no entry whose writer is known",
                                    held);
        return found;
}

/* A trim request (protocol_decode_trim): every named cache (all available
 * ones by default) down to to_bytes or its own target. */
static void handle_trim(Manager *m, ControlRequest *req, json_object *request) {
        const ControlPeer *peer = control_request_peer(req);
        Cache *targets[PROTOCOL_TRIM_CACHES_MAX];
        size_t n = 0;
        uint64_t to;
        bool dry_run;
        DryRunUse *use = NULL;
        ProtocolTrim asked;
        char err[256];
        TrimCall *t;

        /* The fields first, all of them; then who asks; then the names. */
        if (protocol_decode_trim(request, &asked, err, sizeof(err)) < 0) {
                control_reply_error(req, "%s", err);
                return;
        }
        to = asked.to_bytes;
        dry_run = asked.dry_run;
        if (!container_allows(m, req, dry_run ? CONFIG_RIGHT_DRY_RUN : CONFIG_RIGHT_TRIM))
                return;
        if (!dry_run && !peer_may_change(m, peer, CONFIG_RIGHT_TRIM)) {
                control_reply_error(req, "permission denied: trim is for root and members of '%s'",
                                    m->config->admin_group);
                return;
        }
        if (asked.n_caches > 0) {
                for (size_t i = 0; i < asked.n_caches; i++) {
                        const char *name = asked.caches[i];
                        Cache *c;

                        /* A share (a file: remote) is trimmed by its name too. */
                        c = find_cache(m, name) ?: remotes_share(m->remotes, name);
                        if (!c) {
                                control_reply_error(req, "no cache named '%s'", name);
                                return;
                        }
                        if ((asked.written_by || asked.ns) && !find_cache(m, name)) {
                                control_reply_error(req, "remote %s: --written-by and --namespace need the entries' "
                                                    "headers, which are not read on a share (reading moves atimes)",
                                                    name);
                                return;
                        }
                        if (!trimmable(c)) {
                                control_reply_error(req, "cache %s is %s: cannot trim it now", name,
                                                    cache_state_name(cache_state(c)));
                                return;
                        }
                        targets[n++] = c;
                }
        } else
                for (size_t i = 0; i < m->n_caches && n < ELEMENTSOF(targets); i++)
                        if (trimmable(m->caches[i]))
                                targets[n++] = m->caches[i];
        if (n == 0) {
                control_reply_error(req, "no cache can be trimmed now (unavailable or still scanning)");
                return;
        }
        /* Admitted first: what follows builds each cache's status, a cost a
         * user's dry runs must not be able to ask for past their limit. */
        if (dry_run && !peer_is_admin(m, peer) &&
            !(use = dry_run_admit(m, req, peer->uid, now_usec(CLOCK_MONOTONIC))))
                return;
        for (size_t i = 0; (asked.written_by || asked.ns) && i < n; i++) {
                uint64_t pending = cache_writers_pending(targets[i]);

                if (pending > 0) {
                        control_reply_error(req, "cache %s: who wrote %llu entries is not known yet (their headers "
                                            "are being read); try again in a moment", cache_config(targets[i])->name,
                                            (unsigned long long) pending);
                        goto refused;
                }
        }
        if ((asked.written_by || asked.ns) && !writer_held(req, targets, n, asked.written_by, asked.ns))
                goto refused;
        t = calloc(1, sizeof(*t));
        if (!t || !(t->results = json_object_new_object())) {
                free(t);
                if (use)
                        use->busy = false;
                control_reply_error(req, "out of memory");
                return;
        }
        t->dry_run = use;
        t->manager = m;
        t->req = req;
        t->pending = n;
        if (!dry_run) {
                log_info("Trim requested by uid %u (pid %u).", (unsigned) peer->uid, (unsigned) peer->pid);
                /* The first at once (what is planned), then every TRIM_PROGRESS_USEC. */
                (void) progress_timer(m, &t->progress, on_trim_progress, t);
        }
        for (size_t i = 0; i < n; i++)
                if ((asked.written_by || asked.ns ? cache_trim_writer(targets[i], asked.written_by, asked.ns, dry_run,
                                                                      on_trim_done, t)
                                                  : cache_trim(targets[i], to, dry_run,
                                                               dry_run ? TRIM_REASON_DRY_RUN : TRIM_REASON_MANUAL,
                                                               on_trim_done, t)) < 0) {
                        TrimResult failed = { .target_bytes = to, .dry_run = dry_run, .errors = 1 };
                        on_trim_done(targets[i], &failed, t);
                }
        return;
refused:
        if (use)
                use->busy = false;   /* it counts among the user's dry runs, and ran */
}

/* One `cachectl merge` request, waiting for the merge. */
typedef struct MergeCall {
        ControlRequest *req;
        Merge *merge;
        sd_event_source *progress;
} MergeCall;

static int on_merge_progress(sd_event_source *s, uint64_t usec, void *userdata) {
        MergeCall *c = userdata;
        json_object *p = merge_json(c->merge, true);

        control_send_progress(c->req, p);
        json_object_put(p);
        return sd_event_source_set_time_relative(s, TRIM_PROGRESS_USEC);
}

static void on_merge_done(Merge *j, void *userdata) {
        MergeCall *c = userdata;
        json_object *r = merge_json(j, false);

        control_reply_ok(c->req, r);
        json_object_put(r);
        sd_event_source_disable_unref(c->progress);
        free(c);
}

/* What a merge borrows from the manager (MergeEnv). */
static Cache *merge_find(void *userdata, const char *name, const char *path) {
        return manager_find_cache(userdata, name, path);
}

static const VolumeConfig *merge_volume(void *userdata, const char *mount) {
        Manager *m = userdata;

        return config_volume(m->config, mount);
}

/* A merge request (protocol_decode_merge): root and admin_group; a dry run
 * for anyone, rate-limited as every dry run. */
static void handle_merge(Manager *m, ControlRequest *req, json_object *request) {
        const ControlPeer *peer = control_request_peer(req);
        json_object *result = NULL;
        DryRunUse *use = NULL;
        ProtocolMerge asked;
        MergeCall *c;
        char err[1024];

        if (protocol_decode_merge(request, &asked, err, sizeof(err)) < 0) {
                control_reply_error(req, "%s", err);
                return;
        }
        if (!container_allows(m, req, asked.dry_run ? CONFIG_RIGHT_DRY_RUN : CONFIG_RIGHT_MERGE))
                return;
        if (!asked.dry_run && !peer_may_change(m, peer, CONFIG_RIGHT_MERGE)) {
                control_reply_error(req, "permission denied: merge is for root and members of '%s' (--dry-run is "
                                    "for anyone)", m->config->admin_group);
                return;
        }
        if (asked.dry_run && !peer_is_admin(m, peer) &&
            !(use = dry_run_admit(m, req, peer->uid, now_usec(CLOCK_MONOTONIC))))
                return;
        /* A dry run plans at once: not busy past this request. */
        if (use)
                use->busy = false;
        c = calloc(1, sizeof(*c));
        if (!c) {
                control_reply_error(req, "out of memory");
                return;
        }
        c->req = req;
        if (merge_start(&(MergeEnv) { .event = m->event, .state_fd = m->state_fd, .find = merge_find,
                                      .volume = merge_volume, .userdata = m },
                        m->merge, &asked, on_merge_done, c, &c->merge, &result, err, sizeof(err)) < 0) {
                free(c);
                control_reply_error(req, "merge refused: %s", err);
                return;
        }
        if (asked.dry_run) {
                free(c);
                control_reply_ok(req, result);
                json_object_put(result);
                return;
        }
        merge_free(m->merge);   /* the last one, over: its figures give way */
        m->merge = c->merge;
        log_info("Merge of %s into %s requested by uid %u (pid %u).", asked.from, asked.into, (unsigned) peer->uid,
                 (unsigned) peer->pid);
        (void) progress_timer(m, &c->progress, on_merge_progress, c);
}

void manager_on_request(ControlRequest *req, const char *cmd, json_object *request, void *userdata) {
        Manager *m = userdata;

        if (strcmp(cmd, PROTOCOL_CMD_STATUS) == 0) {
                if (container_allows(m, req, CONFIG_RIGHT_STATUS))
                        handle_status(m, req, request);
        }
        else if (strcmp(cmd, PROTOCOL_CMD_RELOAD) == 0)
                handle_reload(m, req);
        else if (strcmp(cmd, PROTOCOL_CMD_TRIM) == 0)
                handle_trim(m, req, request);
        else if (strcmp(cmd, PROTOCOL_CMD_HISTORY) == 0) {
                if (container_allows(m, req, CONFIG_RIGHT_HISTORY))
                        handle_history(m, req, request);
        }
        else if (strcmp(cmd, PROTOCOL_CMD_MERGE) == 0)
                handle_merge(m, req, request);
        else if (strcmp(cmd, PROTOCOL_CMD_EVICTIONS) == 0) {
                if (container_allows(m, req, CONFIG_RIGHT_EVICTIONS))
                        handle_evictions(m, req, request);
        }
        else
                control_reply_error(req, "unknown command '%s'", cmd);
}
