/* SPDX-License-Identifier: MIT */
/* Journal records, and what alert_command is run with (alert-runner.c runs
 * it). Bursts are folded per subject and kind (alert-gate.c decides): the
 * latest folded alert goes out, with the count, when its window ends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>

#include "alert/alert-gate.h"
#include "alert/alert-runner.h"
#include "alert/alert.h"
#include "base/human.h"
#include "base/log.h"

#define MESSAGE_MAX 640  /* a caller's message and what the coalescing adds to it */

/* The latest alert folded in a window, owned (an Alert borrows its strings). */
typedef struct Held {
        AlertKind kind;
        int priority;
        char *level, *mount, *cache, *remote, *message;
        uint64_t avail_bytes, total_bytes;
} Held;

/* One subject's rate limit for one kind (see window_kind). */
typedef struct Window {
        AlertGate gate;
        Held held;       /* valid while gate.folded > 0 */
        sd_event_source *timer;
} Window;

typedef struct Subject {
        char *name;      /* mount point or cache name */
        Window windows[_ALERT_KIND_MAX];
} Subject;

struct Alerter {
        sd_event *event;
        AlertRunner *runner;
        usec_t min_interval_usec;
        Subject *subjects;
        size_t n_subjects;
        uint64_t folded;
};

static const struct {
        const char *name, *message_id;
} kinds[_ALERT_KIND_MAX] = {
        [ALERT_VOLUME_LEVEL] = { "volume-level", "5f0a32c5b0e94166ac1014bc7f38b801" },
        [ALERT_VOLUME_TREND] = { "volume-trend", "5ff7165c472c453da48e26495df2e86e" },
        [ALERT_VOLUME_PRESSURE] = { "volume-pressure", "dec41b6bcabc434dad6dbcab3593122b" },
        [ALERT_CACHE_MODE] = { "cache-mode", "e1b268cb327c4cfdaa91e7588ab0bcd6" },
        [ALERT_CACHE_TRIM_FAILED] = { "cache-trim-failed", "8da04351fa7240e481cea7f2658f4842" },
        [ALERT_CACHE_UNAVAILABLE] = { "cache-unavailable", "9a397b0029db4f4c933d493bff41ed11" },
        [ALERT_CACHE_AVAILABLE] = { "cache-available", "a0eaef29c3a1448b978a9f44b913b6b8" },
        [ALERT_CACHE_CONF_UNSAFE] = { "cache-conf-unsafe", "27659afb25fa490a98306da21960456d" },
        [ALERT_CACHE_CAP_SMALL] = { "cache-cap-small", "ac19a42f930040f7b54899d79a8bfe58" },
        [ALERT_CACHE_VERSION_MIX] = { "cache-version-mix", "b4fd8ee94e7a4bbaa24a818aff689532" },
        [ALERT_CACHE_SILENT_MISS] = { "cache-silent-miss", "39a656c1fded447986aa9fcaa1cf2c36" },
        [ALERT_CACHE_IDLE] = { "cache-idle", "e8501b05758d479b95fe687bb85b1e89" },
        [ALERT_REMOTE_UNREACHABLE] = { "remote-unreachable", "0b6f8a7f5d2e4c0e9a4b3f1d2c6e7a81" },
        [ALERT_REMOTE_POLICY] = { "remote-policy", "5c3e1a9b7d2f4e608b1a4c9d3e7f2a64" },
        [ALERT_REMOTE_LEVEL] = { "remote-level", "9e2d4c6a8b1f4a37b5c0d2e4f6a8c1e3" },
        [ALERT_REMOTE_ERRORS] = { "remote-errors", "3a7c9e1b5d4f4b2a8c6e0f2a4b6d8e19" },
        [ALERT_REMOTE_AUTH_REFUSED] = { "remote-auth-refused", "c804c9c38f824661b90070e6fab07f70" },
        [ALERT_CACHE_CCACHE_CLEANUP] = { "cache-ccache-cleanup", "7b3e0c5a1f9d4e28a6c4b2d8e0f1a357" },
};

const char *alert_kind_name(AlertKind k) {
        return (unsigned) k < _ALERT_KIND_MAX ? kinds[k].name : "?";
}

const char *alert_message_id(AlertKind k) {
        return (unsigned) k < _ALERT_KIND_MAX ? kinds[k].message_id : "";
}

static Subject *subject(Alerter *a, const char *name) {
        Subject *n;

        for (size_t i = 0; i < a->n_subjects; i++)
                if (strcmp(a->subjects[i].name, name) == 0)
                        return &a->subjects[i];
        n = realloc(a->subjects, (a->n_subjects + 1) * sizeof(Subject));
        if (!n)
                return NULL;
        a->subjects = n;
        n = &a->subjects[a->n_subjects];
        *n = (Subject) { .name = strdup(name) };
        if (!n->name)
                return NULL;
        a->n_subjects++;
        return n;
}

static void journal(const Alert *al, const char *message, uint64_t folded) {
        char avail[48], total[48], n[48];

        snprintf(avail, sizeof(avail), "CACHEKEEPER_AVAIL_BYTES=%llu", (unsigned long long) al->avail_bytes);
        snprintf(total, sizeof(total), "CACHEKEEPER_TOTAL_BYTES=%llu", (unsigned long long) al->total_bytes);
        snprintf(n, sizeof(n), "CACHEKEEPER_FOLDED=%llu", (unsigned long long) folded);
        sd_journal_send("MESSAGE=%s", message, "MESSAGE_ID=%s", alert_message_id(al->kind),
                        "PRIORITY=%i", al->priority, "SYSLOG_IDENTIFIER=%s", program_invocation_short_name,
                        "CACHEKEEPER_EVENT=%s", alert_kind_name(al->kind),
                        "CACHEKEEPER_LEVEL=%s", al->level ? al->level : "",
                        "CACHEKEEPER_MOUNT=%s", al->mount ? al->mount : "",
                        "CACHEKEEPER_CACHE=%s", al->cache ? al->cache : "",
                        "CACHEKEEPER_REMOTE=%s", al->remote ? al->remote : "",
                        "%s", avail, "%s", total, "%s", n, NULL);
}

/* Queues a run of the command for al, standing for folded alerts (0: al alone). */
static void queue_run(Alerter *a, Subject *s, const Alert *al, const char *message, uint64_t folded) {
        const char *who = s->name;
        AlertJob j = { 0 };
        int n = 0;

        if (asprintf(&j.what, "%s on %s", alert_kind_name(al->kind), who) < 0) {
                log_error("Out of memory queueing an alert.");
                return;
        }
        if (asprintf(&j.env[n++], "CACHEKEEPER_EVENT=%s", alert_kind_name(al->kind)) < 0 ||
            asprintf(&j.env[n++], "CACHEKEEPER_LEVEL=%s", al->level ? al->level : "") < 0 ||
            asprintf(&j.env[n++], al->mount ? "CACHEKEEPER_MOUNT=%s" : al->cache ? "CACHEKEEPER_CACHE=%s"
                                                                               : "CACHEKEEPER_REMOTE=%s", who) < 0 ||
            asprintf(&j.env[n++], "CACHEKEEPER_AVAIL_BYTES=%llu", (unsigned long long) al->avail_bytes) < 0 ||
            asprintf(&j.env[n++], "CACHEKEEPER_TOTAL_BYTES=%llu", (unsigned long long) al->total_bytes) < 0 ||
            asprintf(&j.env[n++], "CACHEKEEPER_MESSAGE=%s", message) < 0 ||
            asprintf(&j.env[n++], "CACHEKEEPER_FOLDED=%llu", (unsigned long long) folded) < 0 ||
            asprintf(&j.env[n++], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") < 0) {
                j.env[n - 1] = NULL;
                alert_runner_job_done(&j);
                log_error("Out of memory queueing an alert.");
                return;
        }
        if (alert_runner_queue(a->runner, who, &j) < 0)
                log_error("Out of memory queueing an alert.");
}

/* The journal record and the command run for al; folded > 0 for the one
 * run that stands for that many alerts of a window, al the latest. s is
 * NULL when out of memory, and at the end (alerter_free): the journal still
 * gets the record. */
static void deliver(Alerter *a, Subject *s, const Alert *al, uint64_t folded) {
        char message[MESSAGE_MAX], every[32];

        if (folded > 0)
                snprintf(message, sizeof(message), "%s [%llu alert%s since the last run, folded into this one: "
                         "alert_min_interval is %s]", al->message, (unsigned long long) folded,
                         folded == 1 ? "" : "s", format_duration(a->min_interval_usec, every, sizeof(every)));
        else
                snprintf(message, sizeof(message), "%s", al->message);
        journal(al, message, folded);
        /* On a terminal (not under systemd) the journal may be far: say it here too. */
        if (log_get_target() == LOG_TARGET_STDERR)
                log_full(al->priority, "Alert %s: %s", alert_kind_name(al->kind), message);
        if (s && alert_runner_has_command(a->runner))
                queue_run(a, s, al, message, folded);
}

static void held_done(Held *h) {
        free(h->level);
        free(h->mount);
        free(h->cache);
        free(h->remote);
        free(h->message);
        *h = (Held) { 0 };
}

static int held_set(Held *h, const Alert *al) {
        Held n = {
                .kind = al->kind, .priority = al->priority,
                .avail_bytes = al->avail_bytes, .total_bytes = al->total_bytes,
        };

        if ((al->level && !(n.level = strdup(al->level))) || (al->mount && !(n.mount = strdup(al->mount))) ||
            (al->cache && !(n.cache = strdup(al->cache))) || (al->remote && !(n.remote = strdup(al->remote))) ||
            !(n.message = strdup(al->message))) {
                held_done(&n);
                return -ENOMEM;
        }
        held_done(h);
        *h = n;
        return 0;
}

static Alert held_alert(const Held *h) {
        return (Alert) {
                .kind = h->kind, .priority = h->priority, .level = h->level, .mount = h->mount, .cache = h->cache,
                .remote = h->remote,
                .avail_bytes = h->avail_bytes, .total_bytes = h->total_bytes, .message = h->message,
        };
}

/* How severe an alert is, for the gate: the higher, the more (LOG_CRIT
 * above LOG_WARNING above a recovery at LOG_NOTICE or LOG_INFO). */
static int alert_rank(int priority) {
        return LOG_DEBUG - (priority < LOG_EMERG ? LOG_EMERG : priority > LOG_DEBUG ? LOG_DEBUG : priority);
}

/* The window an alert kind counts in. cache-unavailable and cache-available
 * are one state seen from both sides: they share a window, so that a folded
 * "unavailable" can never be delivered after the "available" that ended it. */
static AlertKind window_kind(AlertKind k) {
        return k == ALERT_CACHE_AVAILABLE ? ALERT_CACHE_UNAVAILABLE : k;
}

/* Sends what w folded, as one run (none if s is NULL): the latest alert
 * with the count. */
static void window_flush(Alerter *a, Subject *s, Window *w, uint64_t folded) {
        Alert al = held_alert(&w->held);

        deliver(a, s, &al, folded);
        held_done(&w->held);
}

/* For when the window cannot wait for its end: its count, now. */
static uint64_t window_take(Window *w) {
        uint64_t n = w->gate.folded;

        w->gate.folded = 0;
        return n;
}

static int on_window_end(sd_event_source *src, uint64_t usec, void *userdata);

/* Sets w's timer to the end of its window. Returns 0 or -errno. */
static int window_arm(Alerter *a, Window *w) {
        usec_t due = alert_gate_due(&w->gate, a->min_interval_usec);
        int r;

        if (!w->timer)
                return sd_event_add_time(a->event, &w->timer, CLOCK_MONOTONIC, due, 0, on_window_end, a);
        r = sd_event_source_set_time(w->timer, due);
        if (r >= 0)
                r = sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
        return r;
}

static int on_window_end(sd_event_source *src, uint64_t usec, void *userdata) {
        Alerter *a = userdata;
        usec_t now;

        now = event_now(a->event, CLOCK_MONOTONIC);
        for (size_t i = 0; i < a->n_subjects; i++)
                for (size_t k = 0; k < _ALERT_KIND_MAX; k++) {
                        Subject *s = &a->subjects[i];
                        Window *w = &s->windows[k];
                        uint64_t n;

                        if (w->timer != src)
                                continue;
                        n = alert_gate_flush(&w->gate, now, a->min_interval_usec, alert_rank(w->held.priority));
                        if (n > 0)
                                window_flush(a, s, w, n);
                        else if (w->gate.folded > 0 && window_arm(a, w) < 0)
                                window_flush(a, s, w, window_take(w));
                        return 0;
                }
        return 0;
}

/* Keeps al as w's latest folded alert until the window ends. If that cannot
 * be arranged, it goes out now with the count: never lost. */
static void window_fold(Alerter *a, Subject *s, Window *w, const Alert *al) {
        int r = held_set(&w->held, al);

        if (r >= 0 && w->gate.folded == 1)
                r = window_arm(a, w);
        if (r < 0) {
                log_warning_errno(r, "Cannot fold %s alerts on %s, sending this one now: %m",
                                  alert_kind_name(al->kind), s->name);
                held_done(&w->held);
                deliver(a, s, al, window_take(w));
        }
}

/* At the end: what w still holds gets its journal record, not a run. */
static void window_done(Alerter *a, Window *w) {
        if (w->gate.folded > 0)
                window_flush(a, NULL, w, window_take(w));
        held_done(&w->held);
        w->timer = sd_event_source_disable_unref(w->timer);
}

void alert_emit(Alerter *a, const Alert *al) {
        const char *who = al->mount ? al->mount : al->cache ? al->cache : al->remote ? al->remote : "";
        Subject *s = subject(a, who);
        Window *w;
        uint64_t superseded = 0;
        usec_t now;

        if (!s) {
                log_error("Out of memory queueing an alert.");
                deliver(a, NULL, al, 0);
                return;
        }
        now = event_now(a->event, CLOCK_MONOTONIC);
        w = &s->windows[window_kind(al->kind)];
        if (alert_gate_offer(&w->gate, now, a->min_interval_usec, alert_rank(al->priority), &superseded)) {
                /* An escalation over folded alerts: it is the newer state,
                 * and stands for them (the window's timer finds none left). */
                if (superseded > 0)
                        held_done(&w->held);
                deliver(a, s, al, superseded);
        } else {
                a->folded++;
                window_fold(a, s, w, al);
        }
}

int alerter_new(sd_event *e, char **argv, usec_t timeout_usec, usec_t min_interval_usec, Alerter **ret) {
        Alerter *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        r = alert_runner_new(e, argv, timeout_usec, &a->runner);
        if (r < 0) {
                free(a);
                return r;
        }
        a->event = sd_event_ref(e);
        a->min_interval_usec = min_interval_usec;
        *ret = a;
        return 0;
}

void alerter_set_command(Alerter *a, char **argv, usec_t timeout_usec, usec_t min_interval_usec) {
        alert_runner_set_command(a->runner, argv, timeout_usec);
        a->min_interval_usec = min_interval_usec;
        /* Windows in progress end by the new interval. */
        for (size_t i = 0; i < a->n_subjects; i++)
                for (size_t k = 0; k < _ALERT_KIND_MAX; k++) {
                        Subject *s = &a->subjects[i];
                        Window *w = &s->windows[k];
                        int r;

                        if (w->gate.folded == 0)
                                continue;
                        r = window_arm(a, w);
                        if (r < 0) {
                                log_warning_errno(r, "Cannot re-arm the %s alert window on %s, sending now: %m",
                                                  alert_kind_name(w->held.kind), s->name);
                                window_flush(a, s, w, window_take(w));
                        }
                }
}

Alerter *alerter_free(Alerter *a) {
        if (!a)
                return NULL;
        /* Runs first (what still runs is killed), then the windows: what they
         * still hold gets its journal record, no run. */
        a->runner = alert_runner_free(a->runner);
        for (size_t i = 0; i < a->n_subjects; i++) {
                Subject *s = &a->subjects[i];
                for (size_t k = 0; k < _ALERT_KIND_MAX; k++)
                        window_done(a, &s->windows[k]);
                free(s->name);
        }
        free(a->subjects);
        sd_event_unref(a->event);
        free(a);
        return NULL;
}

uint64_t alerter_runs(const Alerter *a) {
        return alert_runner_runs(a->runner);
}

uint64_t alerter_failures(const Alerter *a) {
        return alert_runner_failures(a->runner);
}

uint64_t alerter_folded(const Alerter *a) {
        return a->folded;
}
