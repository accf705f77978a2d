/* SPDX-License-Identifier: MIT */
/* The alert rate limit: the gate's decisions with now passed in (pure), then
 * the Alerter on a real sd-event loop running a real command, checking what
 * a folded burst delivers: the latest state, with the count; and the runner
 * of the command on its own: one run at a time per subject, a full queue,
 * a run that overstays. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <systemd/sd-event.h>

#include "alert/alert-gate.h"
#include "alert/alert-runner.h"
#include "alert/alert.h"
#include "fixture.h"

#define S USEC_PER_SEC
#define MS USEC_PER_MSEC

/* --------------------------------------------------------------- the gate */

static void test_gate_burst(void **state) {
        /* interval 60 s: what each alert of a burst gets, and what flushes do */
        static const struct {
                char op;              /* 'o': offer, 'f': flush */
                usec_t now;
                uint64_t want;        /* offer: 1 goes out, 0 folded; flush: the count */
        } steps[] = {
                { 'o', 1000 * S, 1 },     /* the first goes out at once */
                { 'o', 1000 * S, 0 },     /* the same instant: folded */
                { 'o', 1030 * S, 0 },
                { 'f', 1059 * S, 0 },     /* the window is not over: nothing yet */
                { 'o', 1059 * S, 0 },
                { 'f', 1060 * S, 3 },     /* its end: one run for the three folded */
                { 'o', 1061 * S, 0 },     /* a new window began with that run */
                { 'o', 1119 * S, 0 },
                { 'o', 1120 * S, 0 },     /* due but not flushed yet: still folded, never overtakes */
                { 'f', 1125 * S, 3 },     /* (a late timer: the window restarts when it fires) */
                { 'f', 1300 * S, 0 },     /* nothing folded: no run */
                { 'o', 1300 * S, 1 },     /* quiet for longer than the interval: at once again */
                { 'o', 1360 * S, 1 },     /* exactly one interval later: at once */
                { 'o', 1360 * S + 1, 0 },
                { 'f', 1420 * S, 1 },
        };
        AlertGate g = { 0 };

        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                uint64_t got = steps[i].op == 'o' ? alert_gate_offer(&g, steps[i].now, 60 * S, 0, NULL)
                                                  : alert_gate_flush(&g, steps[i].now, 60 * S, 0);
                if (got != steps[i].want)
                        fail_msg("step %zu (%c at %llu): got %llu, want %llu", i, steps[i].op,
                                 (unsigned long long) steps[i].now, (unsigned long long) got,
                                 (unsigned long long) steps[i].want);
        }
}

static void test_gate_due(void **state) {
        AlertGate g = { 0 };

        assert_true(alert_gate_offer(&g, 0, 60 * S, 0, NULL));          /* now 0 is a time like any other */
        assert_false(alert_gate_offer(&g, 59 * S, 60 * S, 0, NULL));
        assert_int_equal(alert_gate_due(&g, 60 * S), 60 * S);
        assert_int_equal(alert_gate_flush(&g, 60 * S, 60 * S, 0), 1);
        assert_int_equal(alert_gate_due(&g, 60 * S), 120 * S);
        /* saturates instead of wrapping to the past */
        g = (AlertGate) { .sent = true, .last_usec = UINT64_MAX - 10, .folded = 1 };
        assert_int_equal(alert_gate_due(&g, 60 * S), UINT64_MAX);
        assert_int_equal(alert_gate_flush(&g, UINT64_MAX - 5, 60 * S, 0), 0);
}

static void test_gate_escalation(void **state) {
        /* ranks: 1 ok, 3 warning, 5 critical; interval 60 s */
        AlertGate g = { 0 };
        uint64_t superseded = 99;

        assert_true(alert_gate_offer(&g, 1000 * S, 60 * S, 3, &superseded));    /* warning: at once */
        assert_int_equal(superseded, 0);
        assert_true(alert_gate_offer(&g, 1005 * S, 60 * S, 5, &superseded));    /* critical 5 s later: at once */
        assert_int_equal(superseded, 0);
        assert_int_equal(g.folded, 0);
        /* the window restarted with the critical run: a repeat and a recovery fold */
        assert_false(alert_gate_offer(&g, 1010 * S, 60 * S, 5, NULL));
        assert_false(alert_gate_offer(&g, 1020 * S, 60 * S, 1, NULL));
        assert_false(alert_gate_offer(&g, 1030 * S, 60 * S, 3, NULL));          /* warning again: not above critical */
        assert_int_equal(g.folded, 3);
        assert_int_equal(alert_gate_flush(&g, 1064 * S, 60 * S, 3), 0);          /* not due before 1065 */
        assert_int_equal(alert_gate_flush(&g, 1065 * S, 60 * S, 3), 3);
        /* the flushed warning set the window's rank: critical goes out at
         * once, and stands for what was folded after the flush */
        assert_false(alert_gate_offer(&g, 1070 * S, 60 * S, 1, NULL));
        assert_false(alert_gate_offer(&g, 1071 * S, 60 * S, 3, NULL));
        assert_true(alert_gate_offer(&g, 1072 * S, 60 * S, 5, &superseded));
        assert_int_equal(superseded, 2);
        assert_int_equal(g.folded, 0);
        assert_int_equal(alert_gate_due(&g, 60 * S), 1132 * S);
        assert_int_equal(alert_gate_flush(&g, 1132 * S, 60 * S, 5), 0);          /* nothing left to flush */
}

static void test_gate_zero_interval(void **state) {
        AlertGate g = { 0 };

        for (int i = 0; i < 100; i++)
                assert_true(alert_gate_offer(&g, 5 * S, 0, 0, NULL));
        assert_int_equal(g.folded, 0);
        assert_int_equal(alert_gate_flush(&g, 5 * S, 0, 0), 0);
}

static void test_gate_interval_changed(void **state) {
        AlertGate g = { 0 };

        /* folded under 1 h, then the interval becomes 1 s (a reload): due at once */
        assert_true(alert_gate_offer(&g, 10 * S, 3600 * S, 0, NULL));
        assert_false(alert_gate_offer(&g, 11 * S, 3600 * S, 0, NULL));
        assert_int_equal(alert_gate_flush(&g, 12 * S, 3600 * S, 0), 0);
        assert_int_equal(alert_gate_due(&g, S), 11 * S);
        assert_int_equal(alert_gate_flush(&g, 12 * S, S, 0), 1);
}

/* --------------------------------------------------------------- the Alerter */

typedef struct Fixture {
        char dir[64], out[96];
        char *argv[5];
        sd_event *event;
        Alerter *alerter;
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));
        sigset_t mask;

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/ck-test-alert-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->out, sizeof(f->out), "%s/runs", f->dir);
        /* One line per run: what the daemon passed. */
        f->argv[0] = "/bin/sh";
        f->argv[1] = "-c";
        f->argv[2] = "echo \"$CACHEKEEPER_EVENT ${CACHEKEEPER_LEVEL:--} ${CACHEKEEPER_MOUNT:-$CACHEKEEPER_CACHE} "
                     "$CACHEKEEPER_FOLDED $CACHEKEEPER_MESSAGE\" >> \"$0\"";
        f->argv[3] = f->out;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);     /* sd-event watches the runs */
        assert_int_equal(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
        assert_int_equal(sd_event_new(&f->event), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;

        alerter_free(f->alerter);
        sd_event_unref(f->event);
        assert_int_equal(rm_rf(f->dir), 0);
        free(f);
        return 0;
}

/* The runs so far, one line each, field 5 (the message) cut off. */
static char *runs(Fixture *f, size_t *ret_n) {
        static char buf[4096];
        char line[1024];
        size_t n = 0;
        FILE *in = fopen(f->out, "r");

        buf[0] = '\0';
        while (in && fgets(line, sizeof(line), in)) {
                char *p = line;
                for (int field = 0; field < 4 && p; field++)
                        p = strchr(p + 1, ' ');
                if (p)
                        *p = '\0';
                strncat(buf, line, sizeof(buf) - strlen(buf) - 2);
                strcat(buf, "\n");
                n++;
        }
        if (in)
                fclose(in);
        *ret_n = n;
        return buf;
}

/* Runs the loop until n runs have finished (or 10 s). */
static void run_until(Fixture *f, size_t n) {
        for (int i = 0; i < 1000; i++) {
                size_t got;

                (void) runs(f, &got);
                if (got >= n && alerter_runs(f->alerter) >= n)
                        break;
                assert_true(sd_event_run(f->event, 10 * MS) >= 0);
        }
        /* let the last child be reaped */
        for (int i = 0; i < 20; i++)
                assert_true(sd_event_run(f->event, 10 * MS) >= 0);
}

static void emit_level(Alerter *a, const char *level, int priority) {
        alert_emit(a, &(Alert) {
                .kind = ALERT_VOLUME_LEVEL, .priority = priority, .level = level, .mount = "/v",
                .avail_bytes = 1, .total_bytes = 2, .message = level,
        });
}

static void emit_cache(Alerter *a, AlertKind kind, const char *message) {
        alert_emit(a, &(Alert) { .kind = kind, .priority = 4, .cache = "c", .message = message });
}

static void test_burst_ends_with_latest_state(void **state) {
        Fixture *f = *state;
        size_t n;

        assert_int_equal(alerter_new(f->event, f->argv, 5 * S, 300 * MS, &f->alerter), 0);
        /* warning goes out; critical within the window is an escalation: at
         * once; back to ok within the window: folded, one more run carrying
         * ok and the count */
        emit_level(f->alerter, "warning", 4);
        emit_level(f->alerter, "critical", 2);
        emit_level(f->alerter, "ok", 5);
        /* another kind, another subject: their own windows, at once */
        emit_cache(f->alerter, ALERT_CACHE_MODE, "mode1");
        for (int i = 2; i <= 50; i++)
                emit_cache(f->alerter, ALERT_CACHE_MODE, i == 50 ? "mode50" : "modeN");
        assert_int_equal(alerter_folded(f->alerter), 1 + 49);
        run_until(f, 5);
        runs(f, &n);
        assert_int_equal(n, 5);
        assert_int_equal(alerter_runs(f->alerter), 5);
        assert_int_equal(alerter_failures(f->alerter), 0);
        /* order across subjects is the loop's; within each it is the events' */
        assert_non_null(strstr(runs(f, &n), "volume-level warning /v 0\n"));
        assert_non_null(strstr(runs(f, &n), "volume-level critical /v 0\n"));
        assert_non_null(strstr(runs(f, &n), "volume-level ok /v 1\n"));
        assert_non_null(strstr(runs(f, &n), "cache-mode - c 0\n"));
        assert_non_null(strstr(runs(f, &n), "cache-mode - c 49\n"));
        assert_true(strstr(runs(f, &n), "warning /v 0") < strstr(runs(f, &n), "critical /v 0"));
        assert_true(strstr(runs(f, &n), "critical /v 0") < strstr(runs(f, &n), "ok /v 1"));
}

static void test_message_says_how_many(void **state) {
        Fixture *f = *state;
        char line[1024] = "";
        FILE *in;

        assert_int_equal(alerter_new(f->event, f->argv, 5 * S, 200 * MS, &f->alerter), 0);
        emit_cache(f->alerter, ALERT_CACHE_MODE, "first");
        emit_cache(f->alerter, ALERT_CACHE_MODE, "second");
        emit_cache(f->alerter, ALERT_CACHE_MODE, "third");
        run_until(f, 2);
        in = fopen(f->out, "r");
        assert_non_null(in);
        assert_non_null(fgets(line, sizeof(line), in));
        assert_string_equal(line, "cache-mode - c 0 first\n");
        assert_non_null(fgets(line, sizeof(line), in));
        fclose(in);
        assert_non_null(strstr(line, "cache-mode - c 2 third [2 alerts since the last run, folded into this one"));
}

static void test_recovery_is_never_swallowed(void **state) {
        Fixture *f = *state;
        size_t n;

        assert_int_equal(alerter_new(f->event, f->argv, 5 * S, 300 * MS, &f->alerter), 0);
        /* unavailable and available share a window: the last word is available */
        emit_cache(f->alerter, ALERT_CACHE_UNAVAILABLE, "gone");
        emit_cache(f->alerter, ALERT_CACHE_AVAILABLE, "back");
        emit_cache(f->alerter, ALERT_CACHE_UNAVAILABLE, "gone");
        emit_cache(f->alerter, ALERT_CACHE_AVAILABLE, "back");
        run_until(f, 2);
        assert_string_equal(runs(f, &n), "cache-unavailable - c 0\ncache-available - c 3\n");
}

static void test_zero_interval_runs_each(void **state) {
        Fixture *f = *state;
        size_t n;

        assert_int_equal(alerter_new(f->event, f->argv, 5 * S, 0, &f->alerter), 0);
        emit_level(f->alerter, "warning", 4);
        emit_level(f->alerter, "critical", 2);
        emit_level(f->alerter, "ok", 5);
        run_until(f, 3);
        assert_string_equal(runs(f, &n), "volume-level warning /v 0\nvolume-level critical /v 0\nvolume-level ok /v 0\n");
        assert_int_equal(alerter_folded(f->alerter), 0);
}

static void test_reload_shortens_the_window(void **state) {
        Fixture *f = *state;
        size_t n;

        assert_int_equal(alerter_new(f->event, f->argv, 5 * S, 3600 * S, &f->alerter), 0);
        emit_level(f->alerter, "warning", 4);
        emit_level(f->alerter, "ok", 5);
        run_until(f, 1);
        assert_string_equal(runs(f, &n), "volume-level warning /v 0\n");
        alerter_set_command(f->alerter, f->argv, 5 * S, 100 * MS);
        run_until(f, 2);
        assert_string_equal(runs(f, &n), "volume-level warning /v 0\nvolume-level ok /v 1\n");
}

static void test_free_with_alerts_folded(void **state) {
        Fixture *f = *state;
        size_t n;

        /* no command: the journal alone, folded just the same; freed while
         * folded (ASan checks nothing leaks) */
        assert_int_equal(alerter_new(f->event, NULL, 5 * S, 3600 * S, &f->alerter), 0);
        emit_level(f->alerter, "warning", 4);
        emit_level(f->alerter, "warning", 4);
        assert_int_equal(alerter_folded(f->alerter), 1);
        f->alerter = alerter_free(f->alerter);
        runs(f, &n);
        assert_int_equal(n, 0);
}

/* --------------------------------------------------------------- the runner */

/* A job that appends $N to the runs file; "slow" then hangs. */
static void queue_job(AlertRunner *r, const char *subject, const char *n) {
        AlertJob j = { 0 };

        assert_true(asprintf(&j.env[0], "N=%s", n) > 0);
        assert_true(asprintf(&j.what, "job %s", n) > 0);
        assert_int_equal(alert_runner_queue(r, subject, &j), 0);
        assert_null(j.what);                  /* taken */
}

static size_t lines_in(const char *path) {
        char line[256];
        size_t n = 0;
        FILE *in = fopen(path, "r");

        while (in && fgets(line, sizeof(line), in))
                n++;
        if (in)
                fclose(in);
        return n;
}

static void test_runner_one_at_a_time_queue_and_timeout(void **state) {
        Fixture *f = *state;
        char *argv[] = { "/bin/sh", "-c", "echo \"$N\" >> \"$0\"; [ \"$N\" != slow ] || exec sleep 1000", f->out, NULL };
        char want[512] = "slow\n", got[512] = "", line[64], n[16];
        AlertRunner *r;
        int b1 = 0;
        FILE *in;

        assert_int_equal(alert_runner_new(f->event, argv, 2 * S, &r), 0);
        assert_true(alert_runner_has_command(r));
        /* "slow" holds subject a: 1-33 wait their turn, and the queue keeps
         * the newest ALERT_RUNNER_QUEUE_MAX (1 is dropped); b's runs at once */
        queue_job(r, "a", "slow");
        for (int i = 1; i <= ALERT_RUNNER_QUEUE_MAX + 1; i++) {
                snprintf(n, sizeof(n), "%d", i);
                queue_job(r, "a", n);
        }
        queue_job(r, "b", "b1");
        assert_int_equal(alert_runner_runs(r), 2);
        /* slow is killed after 2 s, then 2-33 run one after the other */
        for (int i = 0; i < 1500 && (lines_in(f->out) < 2 + ALERT_RUNNER_QUEUE_MAX ||
                                      alert_runner_runs(r) < 2 + ALERT_RUNNER_QUEUE_MAX); i++)
                assert_true(sd_event_run(f->event, 10 * MS) >= 0);
        for (int i = 0; i < 20; i++)
                assert_true(sd_event_run(f->event, 10 * MS) >= 0);
        assert_int_equal(alert_runner_runs(r), 2 + ALERT_RUNNER_QUEUE_MAX);
        assert_int_equal(alert_runner_failures(r), 1);
        /* a's runs in the order queued; b1 beside slow, whenever the loop let it */
        in = fopen(f->out, "r");
        assert_non_null(in);
        while (fgets(line, sizeof(line), in))
                if (strcmp(line, "b1\n") == 0)
                        b1++;
                else
                        strncat(got, line, sizeof(got) - strlen(got) - 1);
        fclose(in);
        assert_int_equal(b1, 1);
        for (int i = 2; i <= ALERT_RUNNER_QUEUE_MAX + 1; i++) {
                snprintf(n, sizeof(n), "%d\n", i);
                strcat(want, n);
        }
        assert_string_equal(got, want);
        alert_runner_free(r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gate_burst),
                cmocka_unit_test(test_gate_due),
                cmocka_unit_test(test_gate_escalation),
                cmocka_unit_test(test_gate_zero_interval),
                cmocka_unit_test(test_gate_interval_changed),
                cmocka_unit_test_setup_teardown(test_burst_ends_with_latest_state, setup, teardown),
                cmocka_unit_test_setup_teardown(test_message_says_how_many, setup, teardown),
                cmocka_unit_test_setup_teardown(test_recovery_is_never_swallowed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_zero_interval_runs_each, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_shortens_the_window, setup, teardown),
                cmocka_unit_test_setup_teardown(test_free_with_alerts_folded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_runner_one_at_a_time_queue_and_timeout, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
