/* SPDX-License-Identifier: MIT */
/* Owns the loop, the config and every object; handles signals and reload.
 * The only module that talks to systemd's notify socket. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "manager.h"

struct Manager {
        sd_event *event;
        Config *config;
        char *config_path;        /* NULL: built-in */
        char *socket_override;    /* from -s, survives reloads */
};

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, exiting.", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL, 0);
        return 0;
}

int manager_new(const char *config_path, const char *socket_override, Config *config, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m) {
                config_free(config);
                return -ENOMEM;
        }
        m->config = config;
        if ((config_path && !(m->config_path = strdup(config_path))) ||
            (socket_override && !(m->socket_override = strdup(socket_override))))
                return -ENOMEM;
        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int add_signal(Manager *m, int sig, sd_event_signal_handler_t handler, const char *description) {
        sd_event_source *s;
        int r;

        r = sd_event_add_signal(m->event, &s, sig, handler, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch signal %s: %m", description);
        (void) sd_event_source_set_description(s, description);
        sd_event_source_set_floating(s, true);
        sd_event_source_unref(s);
        return 0;
}

int manager_start(Manager *m) {
        sigset_t mask;
        int r;

        /* sd-event's signalfd only sees blocked signals. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        if ((r = add_signal(m, SIGTERM, on_exit_signal, "sigterm")) < 0 ||
            (r = add_signal(m, SIGINT, on_exit_signal, "sigint")) < 0 ||
            (r = add_signal(m, SIGHUP, on_reload_signal, "sighup")) < 0)
                return r;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Failed to enable the watchdog: %m");

        log_info("cachekeeperd %s started with %s: %zu cache%s.", CACHEKEEPER_VERSION,
                 m->config->file, m->config->n_caches, m->config->n_caches == 1 ? "" : "s");
        (void) sd_notifyf(false, "READY=1\nSTATUS=Keeping %zu cache%s", m->config->n_caches,
                          m->config->n_caches == 1 ? "" : "s");
        return 0;
}

int manager_run(Manager *m) {
        int r = sd_event_loop(m->event);

        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int manager_reload(Manager *m, char *err, size_t errlen) {
        char buf[CONFIG_ERROR_MAX];
        Config *c = NULL;
        int r;

        (void) sd_notify(false, "RELOADING=1");
        if (m->config_path)
                r = config_load(m->config_path, buf, sizeof(buf), &c);
        else
                r = config_load_builtin(buf, sizeof(buf), &c);
        if (r < 0) {
                log_error("Reload refused, keeping the running configuration: %s", buf);
                if (err)
                        snprintf(err, errlen, "%s", buf);
        } else {
                config_free(m->config);
                m->config = c;
                log_info("Reloaded %s: %zu cache%s.", c->file, c->n_caches, c->n_caches == 1 ? "" : "s");
        }
        (void) sd_notify(false, "READY=1");
        return r < 0 ? -EINVAL : 0;
}

const Config *manager_config(const Manager *m) {
        return m->config;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        sd_event_unref(m->event);
        config_free(m->config);
        free(m->config_path);
        free(m->socket_override);
        free(m);
        return NULL;
}
