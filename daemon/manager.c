/* SPDX-License-Identifier: MIT */
/* Owns the loop, the config and every object; wires signals, timers, inotify
 * and the control socket to the caches; swaps configs on reload. The only
 * module that talks to systemd's notify socket. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "alert.h"
#include "cache.h"
#include "control.h"
#include "log.h"
#include "manager.h"
#include "space.h"
#include "trim.h"
#include "units.h"
#include "volume.h"
#include "watch.h"

#define TRIM_PROGRESS_USEC (250 * USEC_PER_MSEC)

/* One `cachectl trim` request, waiting for the trims it started. */
typedef struct TrimCall {
        Manager *manager;
        ControlRequest *req;
        json_object *results;        /* name → result */
        size_t pending;
        sd_event_source *progress;
} TrimCall;

/* What events cannot tell (a mount appearing without a mountinfo change we
 * saw, a root replaced by rename) is re-checked this often. */
#define CHECK_USEC (1 * USEC_PER_SEC)

struct Manager {
        sd_event *event;
        Config *config;
        char *config_path;        /* NULL: built-in */
        char *socket_override;    /* from -s, survives reloads */
        Watch *watch;
        Control *control;
        Alerter *alerter;
        Space *space;
        Cache **caches;
        size_t n_caches;
        sd_event_source *check_timer, *audit_timer, *mountinfo;
        int mountinfo_fd;
        bool ready;
};

static usec_t now(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

static const char *socket_path(const Manager *m) {
        return m->socket_override ?: m->config->socket_path;
}

/* "STATUS=2 caches: mi210 61.2G/100.0G, aiter unavailable; / 41.0% free" */
static void notify_status(Manager *m) {
        char line[1024];
        size_t n;

        n = (size_t) snprintf(line, sizeof(line), "STATUS=%zu cache%s:", m->n_caches, m->n_caches == 1 ? "" : "s");
        for (size_t i = 0; i < m->n_caches && n < sizeof(line); i++) {
                const Cache *c = m->caches[i];
                char size[32], cap[32];

                if (cache_state(c) == CACHE_UNAVAILABLE)
                        n += (size_t) snprintf(line + n, sizeof(line) - n, "%s %s unavailable", i ? "," : "",
                                               cache_config(c)->name);
                else
                        n += (size_t) snprintf(line + n, sizeof(line) - n, "%s %s %s/%s%s", i ? "," : "",
                                               cache_config(c)->name,
                                               format_size(cache_totals(c)->bytes, size, sizeof(size)),
                                               format_size(cache_config(c)->max_size_bytes, cap, sizeof(cap)),
                                               cache_state(c) == CACHE_OK ? "" : cache_state(c) == CACHE_SCANNING
                                                       ? " (scanning)" : cache_state(c) == CACHE_TRIMMING
                                                       ? " (trimming)" : " (over cap)");
        }
        for (size_t i = 0; m->space && i < space_volumes(m->space) && n < sizeof(line); i++) {
                const Volume *v = space_volume(m->space, i);
                n += (size_t) snprintf(line + n, sizeof(line) - n, "%s %s %.1f%% free%s", i ? "," : ";", v->mount,
                                       v->usage.total_bytes ? 100.0 * (double) v->usage.avail_bytes /
                                                                      (double) v->usage.total_bytes : 0.0,
                                       v->level == VOLUME_OK ? "" : v->level == VOLUME_WARNING ? " (warning)"
                                                                                              : " (critical)");
        }
        (void) sd_notify(false, line);
}

static void check_ready(Manager *m) {
        if (m->ready)
                return;
        for (size_t i = 0; i < m->n_caches; i++)
                if (!cache_ready(m->caches[i]))
                        return;
        m->ready = true;
        log_info("Ready: every available cache is scanned.");
        (void) sd_notify(false, "READY=1");
        notify_status(m);
}

static void on_cache_changed(Cache *c, void *userdata) {
        Manager *m = userdata;

        /* A cache came or went, scanned, or trimmed: its volume's figures too. */
        if (m->space)
                space_sync(m->space, m->config, m->caches, m->n_caches);
        check_ready(m);
        if (m->ready)
                notify_status(m);
}

static void on_watch_event(void *owner, uint32_t dir, uint32_t mask, const char *name, void *userdata) {
        Manager *m = userdata;

        if (mask & IN_Q_OVERFLOW) {
                log_warning("inotify queue overflowed: events were lost; rescanning every cache.");
                for (size_t i = 0; i < m->n_caches; i++)
                        cache_events_lost(m->caches[i]);
                return;
        }
        cache_handle_event(owner, dir, mask, name);
}

static void check_caches(Manager *m) {
        for (size_t i = 0; i < m->n_caches; i++)
                cache_check(m->caches[i]);
}

static int on_check_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        check_caches(userdata);
        return sd_event_source_set_time_relative(s, CHECK_USEC);
}

static int on_audit_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        for (size_t i = 0; i < m->n_caches; i++)
                cache_rescan(m->caches[i], "audit");
        return sd_event_source_set_time_relative(s, m->config->audit_interval_usec);
}

/* /proc/self/mountinfo signals POLLPRI whenever the mount table changes. */
static int on_mountinfo(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[4096];

        (void) lseek(fd, 0, SEEK_SET);
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        check_caches(userdata);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, exiting.", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

/* For the watchdog test only: with CACHEKEEPER_TEST_HANG=1 in the
 * environment at start, SIGUSR2 wedges the loop so systemd's watchdog must
 * kill us. Otherwise SIGUSR2 is logged and ignored. */
static int on_hang_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        const char *e = getenv("CACHEKEEPER_TEST_HANG");

        if (!e || strcmp(e, "1") != 0) {
                log_notice("Received SIGUSR2, ignoring.");
                return 0;
        }
        log_warning("Received SIGUSR2 with CACHEKEEPER_TEST_HANG=1: wedging the event loop.");
        for (;;)
                pause();
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL, 0);
        return 0;
}

/* uid 0, or a member (primary or supplementary) of admin_group. */
static bool peer_is_admin(const Manager *m, const ControlPeer *peer) {
        const struct group *gr;
        const struct passwd *pw;
        gid_t groups[256];
        int n = (int) ELEMENTSOF(groups);

        if (peer->uid == 0)
                return true;
        gr = getgrnam(m->config->admin_group);
        if (!gr)
                return false;
        if (peer->gid == gr->gr_gid)
                return true;
        pw = getpwuid(peer->uid);
        if (!pw || getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
                return false;
        for (int i = 0; i < n; i++)
                if (groups[i] == gr->gr_gid)
                        return true;
        return false;
}

static void handle_status(Manager *m, ControlRequest *req, json_object *request) {
        json_object *result, *caches, *v;
        const char *only = NULL;

        if (json_object_object_get_ex(request, "cache", &v)) {
                if (!json_object_is_type(v, json_type_string)) {
                        control_reply_error(req, "\"cache\" must be a string");
                        return;
                }
                only = json_object_get_string(v);
        }
        caches = json_object_new_array();
        for (size_t i = 0; i < m->n_caches; i++)
                if (!only || strcmp(cache_config(m->caches[i])->name, only) == 0)
                        json_object_array_add(caches, cache_status_json(m->caches[i]));
        if (only && json_object_array_length(caches) == 0) {
                json_object_put(caches);
                control_reply_error(req, "no cache named '%s'", only);
                return;
        }
        result = json_object_new_object();
        json_object_object_add(result, "caches", caches);
        json_object_object_add(result, "volumes", space_status_json(m->space));
        json_object_object_add(result, "ready", json_object_new_boolean(m->ready));
        json_object_object_add(result, "version", json_object_new_string(CACHEKEEPER_VERSION));
        control_reply_ok(req, result);
        json_object_put(result);
}

static void handle_reload(Manager *m, ControlRequest *req) {
        const ControlPeer *peer = control_request_peer(req);
        char err[CONFIG_ERROR_MAX];

        if (!peer_is_admin(m, peer)) {
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

static Cache *find_cache(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_caches; i++)
                if (strcmp(cache_config(m->caches[i])->name, name) == 0)
                        return m->caches[i];
        return NULL;
}

static void trim_call_free(TrimCall *t) {
        sd_event_source_disable_unref(t->progress);
        json_object_put(t->results);
        free(t);
}

static void on_trim_done(Cache *c, const TrimResult *r, void *userdata) {
        TrimCall *t = userdata;
        json_object *o = cache_trim_json(r);

        json_object_object_add(o, "size_bytes", json_object_new_uint64(cache_totals(c)->bytes));
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

/* {"cmd":"trim", "caches":["a"], "to_bytes":N, "dry_run":true}: every named
 * cache (all available ones by default) down to N or its own target. */
static void handle_trim(Manager *m, ControlRequest *req, json_object *request) {
        const ControlPeer *peer = control_request_peer(req);
        json_object *names = NULL, *v;
        Cache *targets[64];
        size_t n = 0;
        uint64_t to = 0;
        bool dry_run = false;
        TrimCall *t;

        if (json_object_object_get_ex(request, "dry_run", &v))
                dry_run = json_object_get_boolean(v);
        if (!dry_run && !peer_is_admin(m, peer)) {
                control_reply_error(req, "permission denied: trim is for root and members of '%s'",
                                    m->config->admin_group);
                return;
        }
        if (json_object_object_get_ex(request, "to_bytes", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0) {
                        control_reply_error(req, "\"to_bytes\" must be a positive number");
                        return;
                }
                to = (uint64_t) json_object_get_int64(v);
        }
        if (json_object_object_get_ex(request, "caches", &names) && json_object_array_length(names) > 0) {
                for (size_t i = 0; i < json_object_array_length(names) && n < ELEMENTSOF(targets); i++) {
                        const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                        Cache *c = name ? find_cache(m, name) : NULL;
                        if (!c) {
                                control_reply_error(req, "no cache named '%s'", name ? name : "?");
                                return;
                        }
                        if (cache_state(c) == CACHE_UNAVAILABLE || cache_state(c) == CACHE_SCANNING) {
                                control_reply_error(req, "cache %s is %s: cannot trim it now", name,
                                                    cache_state_name(cache_state(c)));
                                return;
                        }
                        targets[n++] = c;
                }
        } else
                for (size_t i = 0; i < m->n_caches && n < ELEMENTSOF(targets); i++)
                        if (cache_state(m->caches[i]) != CACHE_UNAVAILABLE && cache_state(m->caches[i]) != CACHE_SCANNING)
                                targets[n++] = m->caches[i];
        if (n == 0) {
                control_reply_error(req, "no cache can be trimmed now (unavailable or still scanning)");
                return;
        }
        t = calloc(1, sizeof(*t));
        if (!t || !(t->results = json_object_new_object())) {
                free(t);
                control_reply_error(req, "out of memory");
                return;
        }
        t->manager = m;
        t->req = req;
        t->pending = n;
        if (!dry_run) {
                log_info("Trim requested by uid %u (pid %u).", (unsigned) peer->uid, (unsigned) peer->pid);
                (void) sd_event_add_time_relative(m->event, &t->progress, CLOCK_MONOTONIC, TRIM_PROGRESS_USEC, 0,
                                                  on_trim_progress, t);
        }
        for (size_t i = 0; i < n; i++)
                if (cache_trim(targets[i], to, dry_run, dry_run ? "dry-run" : "manual", on_trim_done, t) < 0) {
                        TrimResult failed = { .target_bytes = to, .dry_run = dry_run, .errors = 1 };
                        on_trim_done(targets[i], &failed, t);
                }
}

static void on_request(ControlRequest *req, const char *cmd, json_object *request, void *userdata) {
        Manager *m = userdata;

        if (strcmp(cmd, "status") == 0)
                handle_status(m, req, request);
        else if (strcmp(cmd, "reload") == 0)
                handle_reload(m, req);
        else if (strcmp(cmd, "trim") == 0)
                handle_trim(m, req, request);
        else
                control_reply_error(req, "unknown command '%s'", cmd);
}

/* Builds the cache list for config. A cache with the same name and path as
 * a running one is moved over (keeping its figures) and its slot in
 * m->caches is set to NULL; on failure everything moved is put back. */
static int caches_build(Manager *m, const Config *config, Cache ***ret, size_t *ret_n) {
        _cleanup_free_ size_t *from = NULL;
        Cache **caches;
        int r = 0;

        caches = calloc(config->n_caches, sizeof(Cache *));
        from = calloc(config->n_caches, sizeof(size_t));
        if (!caches || !from) {
                free(caches);
                return -ENOMEM;
        }
        for (size_t i = 0; i < config->n_caches && r >= 0; i++) {
                const CacheConfig *cc = &config->caches[i];

                from[i] = SIZE_MAX;
                for (size_t k = 0; k < m->n_caches; k++)
                        if (m->caches[k] && strcmp(cache_config(m->caches[k])->name, cc->name) == 0 &&
                            strcmp(cache_config(m->caches[k])->path, cc->path) == 0) {
                                caches[i] = TAKE_PTR(m->caches[k]);
                                from[i] = k;
                                break;
                        }
                if (!caches[i])
                        r = cache_new(m->event, m->watch, m->alerter, cc, on_cache_changed, m, &caches[i]);
        }
        if (r < 0) {
                for (size_t i = 0; i < config->n_caches; i++)
                        if (from[i] != SIZE_MAX)
                                m->caches[from[i]] = caches[i];
                        else
                                cache_free(caches[i]);
                free(caches);
                return r;
        }
        for (size_t i = 0; i < config->n_caches; i++)
                cache_set_config(caches[i], &config->caches[i]);
        *ret = caches;
        *ret_n = config->n_caches;
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
        m->mountinfo_fd = -1;
        if ((config_path && !(m->config_path = strdup(config_path))) ||
            (socket_override && !(m->socket_override = strdup(socket_override))))
                return -ENOMEM;
        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        /* First, while fds are low: libinotifytools select()s on its fd. */
        r = watch_new(m->event, on_watch_event, m, &m->watch);
        if (r < 0)
                return log_error_errno(r, "Failed to set up inotify: %m");
        r = alerter_new(m->event, m->config->alert_argv, m->config->alert_timeout_usec, &m->alerter);
        if (r >= 0)
                r = space_new(m->event, m->alerter, &m->space);
        if (r < 0)
                return log_error_errno(r, "Failed to set up alerts: %m");
        r = caches_build(m, m->config, &m->caches, &m->n_caches);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the caches: %m");
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
        (void) sd_event_source_set_floating(s, true);
        sd_event_source_unref(s);
        return 0;
}

static int start_control(Manager *m) {
        int n, fd = -1, r;

        n = sd_listen_fds(true);
        if (n > 1)
                return log_error_errno(EINVAL, "Got %d sockets from systemd, expected one.", n);
        if (n == 1)
                fd = SD_LISTEN_FDS_START;
        r = control_new(m->event, fd >= 0 ? NULL : socket_path(m), fd, on_request, m, &m->control);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", fd >= 0 ? "the inherited socket" : socket_path(m));
        if (fd < 0) {
                log_info("Listening on %s.", socket_path(m));
                return 0;
        }
        /* The unit's socket wins over the config's: say so when they differ. */
        struct sockaddr_un sa = { 0 };
        socklen_t len = sizeof(sa);
        if (getsockname(fd, (struct sockaddr *) &sa, &len) == 0 && sa.sun_family == AF_UNIX &&
            strcmp(sa.sun_path, socket_path(m)) != 0)
                log_notice("Listening on %s, the socket systemd passed; '%s' from the configuration is not used.",
                           sa.sun_path[0] ? sa.sun_path : "an unnamed socket", socket_path(m));
        else
                log_info("Listening on the socket systemd passed.");
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
        sigaddset(&mask, SIGUSR2);
        sigaddset(&mask, SIGCHLD);   /* sd-event watches alert_command runs */
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        if ((r = add_signal(m, SIGTERM, on_exit_signal, "sigterm")) < 0 ||
            (r = add_signal(m, SIGINT, on_exit_signal, "sigint")) < 0 ||
            (r = add_signal(m, SIGHUP, on_reload_signal, "sighup")) < 0 ||
            (r = add_signal(m, SIGUSR2, on_hang_signal, "sigusr2")) < 0)
                return r;
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Failed to enable the watchdog: %m");
        r = start_control(m);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(m->event, &m->check_timer, CLOCK_MONOTONIC, CHECK_USEC, 0, on_check_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->check_timer, SD_EVENT_ON);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->audit_timer, CLOCK_MONOTONIC,
                                               m->config->audit_interval_usec, 0, on_audit_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->audit_timer, m->config->audit_interval_usec > 0 ? SD_EVENT_ON
                                                                                                   : SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Failed to set up timers: %m");
        m->mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (m->mountinfo_fd < 0 ||
            sd_event_add_io(m->event, &m->mountinfo, m->mountinfo_fd, EPOLLPRI, on_mountinfo, m) < 0)
                log_warning("Cannot watch /proc/self/mountinfo; mounts are checked every second instead.");

        log_info("cachekeeperd %s started with %s: %zu cache%s.", CACHEKEEPER_VERSION,
                 m->config->file, m->config->n_caches, m->config->n_caches == 1 ? "" : "s");
        for (size_t i = 0; i < m->n_caches; i++)
                cache_start(m->caches[i]);
        space_sync(m->space, m->config, m->caches, m->n_caches);
        check_ready(m);
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
        Config *c = NULL, *old;
        Cache **caches, **old_caches;
        size_t n, old_n;
        int r;

        /* MONOTONIC_USEC: what systemd 253+ wants with RELOADING=1; older ones ignore it. */
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long) now(CLOCK_MONOTONIC));
        /* Started on the built-in config: the installed file, once it exists. */
        if (!m->config_path && access(CONFIG_DEFAULT_FILE, F_OK) == 0 && !(m->config_path = strdup(CONFIG_DEFAULT_FILE)))
                return log_oom();
        if (m->config_path)
                r = config_load(m->config_path, buf, sizeof(buf), &c);
        else
                r = config_load_builtin(buf, sizeof(buf), &c);
        if (r >= 0) {
                r = caches_build(m, c, &caches, &n);
                if (r < 0)
                        snprintf(buf, sizeof(buf), "%s: cannot set up the caches: %s", c->file, strerror(-r));
        }
        if (r < 0) {
                log_error("Reload refused, keeping the running configuration: %s", buf);
                if (err)
                        snprintf(err, errlen, "%s", buf);
                config_free(c);
                (void) sd_notify(false, "READY=1");
                return -EINVAL;
        }
        /* caches_build took what it kept out of m->caches; the rest go. */
        if (!m->socket_override && strcmp(c->socket_path, m->config->socket_path) != 0)
                log_notice("The socket changes to %s at the next start; %s stays until then.", c->socket_path,
                           m->config->socket_path);
        old = m->config;
        old_caches = m->caches;
        old_n = m->n_caches;
        m->config = c;
        m->caches = caches;
        m->n_caches = n;
        for (size_t i = 0; i < old_n; i++)
                if (old_caches[i]) {
                        log_info("Cache %s is no longer configured; leaving it as it is.",
                                 cache_config(old_caches[i])->name);
                        cache_free(old_caches[i]);
                }
        free(old_caches);
        alerter_set_command(m->alerter, c->alert_argv, c->alert_timeout_usec);
        space_sync(m->space, c, m->caches, m->n_caches);
        config_free(old);
        if (c->audit_interval_usec > 0)
                (void) sd_event_source_set_time_relative(m->audit_timer, c->audit_interval_usec);
        (void) sd_event_source_set_enabled(m->audit_timer, c->audit_interval_usec > 0 ? SD_EVENT_ON : SD_EVENT_OFF);
        log_info("Reloaded %s: %zu cache%s.", c->file, c->n_caches, c->n_caches == 1 ? "" : "s");
        for (size_t i = 0; i < m->n_caches; i++)
                cache_start(m->caches[i]);
        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return 0;
}

const Config *manager_config(const Manager *m) {
        return m->config;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        m->control = control_free(m->control);
        for (size_t i = 0; i < m->n_caches; i++)
                cache_free(m->caches[i]);
        free(m->caches);
        m->space = space_free(m->space);
        m->alerter = alerter_free(m->alerter);
        sd_event_source_disable_unref(m->check_timer);
        sd_event_source_disable_unref(m->audit_timer);
        sd_event_source_disable_unref(m->mountinfo);
        if (m->mountinfo_fd >= 0)
                close(m->mountinfo_fd);
        m->watch = watch_free(m->watch);
        sd_event_unref(m->event);
        config_free(m->config);
        free(m->config_path);
        free(m->socket_override);
        free(m);
        return NULL;
}
