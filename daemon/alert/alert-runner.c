/* SPDX-License-Identifier: MIT */
/* alert_command runs, one subject's at a time: posix_spawn with no shell;
 * sd-event watches the child, and a timer kills it when it overstays. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alert/alert-runner.h"
#include "base/log.h"

/* One subject's runs: the one running, and those waiting their turn. */
typedef struct Lane {
        char *subject;   /* mount point or cache name */
        pid_t pid;       /* 0: nothing running */
        AlertJob running;
        sd_event_source *child, *timeout;
        AlertJob queue[ALERT_RUNNER_QUEUE_MAX];
        size_t n_queue;
} Lane;

struct AlertRunner {
        sd_event *event;
        char **argv;     /* borrowed from the Config */
        usec_t timeout_usec;
        Lane *lanes;
        size_t n_lanes;
        uint64_t runs, failures;
};

void alert_runner_job_done(AlertJob *j) {
        for (size_t i = 0; i < ALERT_RUNNER_ENV_MAX && j->env[i]; i++)
                free(j->env[i]);
        free(j->what);
        *j = (AlertJob) { 0 };
}

static void start_next(AlertRunner *r, Lane *l);

/* The command runs in its own session (POSIX_SPAWN_SETSID): what it
 * started goes too. Reaped here: a disabled child source would not. */
static void kill_and_reap(pid_t pid) {
        (void) kill(-pid, SIGKILL);
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

static void finish(AlertRunner *r, Lane *l, const char *failure) {
        if (failure) {
                r->failures++;
                log_warning("alert_command for %s %s.", l->running.what, failure);
        }
        l->child = sd_event_source_disable_unref(l->child);
        l->timeout = sd_event_source_disable_unref(l->timeout);
        l->pid = 0;
        alert_runner_job_done(&l->running);
        start_next(r, l);
}

static int on_child(sd_event_source *src, const siginfo_t *si, void *userdata) {
        AlertRunner *r = userdata;
        char why[64];

        for (size_t i = 0; i < r->n_lanes; i++) {
                Lane *l = &r->lanes[i];
                if (l->child != src)
                        continue;
                if (si->si_code == CLD_EXITED && si->si_status == 0)
                        finish(r, l, NULL);
                else {
                        if (si->si_code == CLD_EXITED)
                                snprintf(why, sizeof(why), "exited with status %d", si->si_status);
                        else
                                snprintf(why, sizeof(why), "was killed by %s", strsignal(si->si_status));
                        finish(r, l, why);
                }
                break;
        }
        return 0;
}

static int on_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        AlertRunner *r = userdata;

        for (size_t i = 0; i < r->n_lanes; i++) {
                Lane *l = &r->lanes[i];
                if (l->timeout != src || l->pid <= 0)
                        continue;
                kill_and_reap(l->pid);
                finish(r, l, "took too long and was killed");
                break;
        }
        return 0;
}

static int spawn(AlertRunner *r, Lane *l) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        pid_t pid;
        int k;

        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        /* Our blocked signals and handlers are not the command's business. */
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addclosefrom_np(&fa, 3);
        k = posix_spawn(&pid, r->argv[0], &fa, &attr, r->argv, l->running.env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        if (k != 0)
                return -k;
        l->pid = pid;
        k = sd_event_add_child(r->event, &l->child, pid, WEXITED, on_child, r);
        if (k >= 0)
                k = sd_event_add_time_relative(r->event, &l->timeout, CLOCK_MONOTONIC, r->timeout_usec, 0,
                                               on_timeout, r);
        if (k < 0) {
                kill_and_reap(pid);
                return k;
        }
        r->runs++;
        return 0;
}

static void start_next(AlertRunner *r, Lane *l) {
        while (l->pid == 0 && l->n_queue > 0) {
                int k;

                l->running = l->queue[0];
                memmove(l->queue, l->queue + 1, --l->n_queue * sizeof(AlertJob));
                if (!r->argv) {
                        alert_runner_job_done(&l->running);
                        continue;
                }
                k = spawn(r, l);
                if (k < 0) {
                        r->failures++;
                        log_warning_errno(k, "Cannot run alert_command %s for %s: %m", r->argv[0], l->running.what);
                        l->pid = 0;
                        alert_runner_job_done(&l->running);
                }
        }
}

static Lane *lane(AlertRunner *r, const char *subject) {
        Lane *n;

        for (size_t i = 0; i < r->n_lanes; i++)
                if (strcmp(r->lanes[i].subject, subject) == 0)
                        return &r->lanes[i];
        n = realloc(r->lanes, (r->n_lanes + 1) * sizeof(Lane));
        if (!n)
                return NULL;
        r->lanes = n;
        n = &r->lanes[r->n_lanes];
        *n = (Lane) { .subject = strdup(subject) };
        if (!n->subject)
                return NULL;
        r->n_lanes++;
        return n;
}

int alert_runner_new(sd_event *e, char **argv, usec_t timeout_usec, AlertRunner **ret) {
        AlertRunner *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(e);
        r->argv = argv;
        r->timeout_usec = timeout_usec;
        *ret = r;
        return 0;
}

void alert_runner_set_command(AlertRunner *r, char **argv, usec_t timeout_usec) {
        r->argv = argv;
        r->timeout_usec = timeout_usec;
}

AlertRunner *alert_runner_free(AlertRunner *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_lanes; i++) {
                Lane *l = &r->lanes[i];
                if (l->pid > 0)
                        kill_and_reap(l->pid);
                sd_event_source_disable_unref(l->child);
                sd_event_source_disable_unref(l->timeout);
                alert_runner_job_done(&l->running);
                for (size_t k = 0; k < l->n_queue; k++)
                        alert_runner_job_done(&l->queue[k]);
                free(l->subject);
        }
        free(r->lanes);
        sd_event_unref(r->event);
        free(r);
        return NULL;
}

bool alert_runner_has_command(const AlertRunner *r) {
        return r->argv != NULL;
}

int alert_runner_queue(AlertRunner *r, const char *subject, AlertJob *job) {
        Lane *l = lane(r, subject);

        if (!l) {
                alert_runner_job_done(job);
                return -ENOMEM;
        }
        if (l->n_queue == ALERT_RUNNER_QUEUE_MAX) {
                log_warning("Too many alerts waiting for %s: dropping %s.", l->subject, l->queue[0].what);
                alert_runner_job_done(&l->queue[0]);
                memmove(l->queue, l->queue + 1, --l->n_queue * sizeof(AlertJob));
        }
        l->queue[l->n_queue++] = *job;
        *job = (AlertJob) { 0 };
        start_next(r, l);
        return 0;
}

uint64_t alert_runner_runs(const AlertRunner *r) {
        return r->runs;
}

uint64_t alert_runner_failures(const AlertRunner *r) {
        return r->failures;
}
