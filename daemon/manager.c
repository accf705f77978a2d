/* SPDX-License-Identifier: MIT */
/* Owns the loop, the config and every object; wires signals, timers, inotify
 * and the control socket to the caches; swaps configs on reload. The only
 * module that talks to systemd's notify socket. What clients ask is answered
 * in requests.c. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "alert/alert.h"
#include "base/human.h"
#include "base/log.h"
#include "cache/cache.h"
#include "control/control.h"
#include "manager-internal.h"
#include "merge.h"
#include "os/root-lock.h"
#include "os/users.h"
#include "os/watch.h"
#include "space/space.h"
#include "space/volume.h"

/* What events cannot tell (a mount appearing without a mountinfo change we
 * saw, a root replaced by rename) is re-checked this often. */
#define CHECK_USEC (1 * USEC_PER_SEC)
/* admin_group is looked up (NSS: files, LDAP, ...) only at load, at reload
 * and this often, in case /etc/group changed: never per request or per
 * connection, so a slow NSS stalls no client. */
#define ADMIN_REFRESH_USEC (60 * USEC_PER_SEC)
/* Each cache's history is written at most this often (when it changed),
 * and at shutdown. */
#define HISTORY_SAVE_USEC (60 * USEC_PER_SEC)

const char *manager_socket_path(const Manager *m) {
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

/* Looks admin_group up into m->admin_gid. Says so when what it finds
 * changes, or always with loud. A lookup that fails (not "no such group")
 * keeps what was known. */
static void resolve_admin_group(Manager *m, bool loud) {
        const char *name = m->config->admin_group;
        gid_t gid = 0;
        int r = group_gid(name, &gid);

        if (r < 0) {
                log_warning_errno(r, "Failed to look up admin_group '%s', keeping what was known: %m", name);
                return;
        }
        if (r == 0) {
                if (loud || m->admin_gid_known)
                        log_warning("No group named '%s' (admin_group): only root may trim and reload.", name);
                m->admin_gid_known = false;
                return;
        }
        if (loud || !m->admin_gid_known || m->admin_gid != gid)
                log_info("admin_group '%s' is gid %u: its members may trim and reload.", name, (unsigned) gid);
        m->admin_gid = gid;
        m->admin_gid_known = true;
}

static int on_admin_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        resolve_admin_group(userdata, false);
        return sd_event_source_set_time_relative(s, ADMIN_REFRESH_USEC);
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

/* Brings what depends on the caches up to date: the volumes, readiness and
 * the status line. */
static void sync_caches(Manager *m) {
        (void) sd_event_source_set_enabled(m->sync, SD_EVENT_OFF);
        space_sync(m->space, m->config, m->caches, m->n_caches);
        check_ready(m);
        if (m->ready)
                notify_status(m);
}

static int on_sync(sd_event_source *s, void *userdata) {
        sync_caches(userdata);
        return 0;
}

/* A cache came or went, scanned, or a trim began or ended: its volume's
 * figures change too. Only marked here: sync_caches runs from the loop, once
 * per iteration however many changes came in, and never from inside the
 * change (which may be a trim the space itself is starting). */
static void on_cache_changed(Cache *c, void *userdata) {
        Manager *m = userdata;

        (void) sd_event_source_set_enabled(m->sync, SD_EVENT_ONESHOT);
}

/* The one inotify event that is no single cache's (each cache's own come
 * to it straight). */
static void on_watch_overflow(void *userdata) {
        Manager *m = userdata;

        log_warning("inotify queue overflowed: events were lost; rescanning every cache.");
        for (size_t i = 0; i < m->n_caches; i++)
                cache_events_lost(m->caches[i]);
        remotes_events_lost(m->remotes);
}

static void check_caches(Manager *m) {
        usec_t now = event_now(m->event, CLOCK_MONOTONIC);

        for (size_t i = 0; i < m->n_caches; i++)
                cache_check(m->caches[i], now);
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
                if (!caches[i]) {
                        r = cache_new(m->event, m->watch, m->alerter, cc, on_cache_changed, m, &caches[i]);
                        if (r >= 0) {
                                cache_set_state_dir(caches[i], m->state_fd);
                                cache_history_load(caches[i], m->state_fd, m->state_dir,
                                                   now_usec(CLOCK_REALTIME));
                        }
                }
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

/* Opens state_dir, creating it (0755) if it is missing. A directory that
 * cannot be used costs the history, never the start: logged, -1. */
static int state_dir_open(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 && errno == ENOENT) {
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return log_warning_errno(errno, "Cannot create state_dir %s, history is not kept: %m", path),
                               -1;
                log_info("Created state_dir %s.", path);
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (fd < 0)
                return log_warning_errno(errno, "Cannot open state_dir %s, history is not kept: %m", path), -1;
        return fd;
}

/* Writes each cache's history that changed. */
static void save_history(Manager *m) {
        usec_t now = now_usec(CLOCK_REALTIME);

        for (size_t i = 0; i < m->n_caches; i++)
                (void) cache_history_save(m->caches[i], m->state_fd, m->state_dir, now);
}

static int on_history_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        save_history(userdata);
        return sd_event_source_set_time_relative(s, HISTORY_SAVE_USEC);
}

/* A second daemon on a socket where one answers would take the socket from
 * it and keep the same caches: refused, before anything is touched. Not
 * asked when systemd passes the socket (it holds it for one service). */
static int check_socket_free(Manager *m) {
        const char *path = manager_socket_path(m);
        char comm[64] = "", proc[64];
        pid_t pid;
        int r;

        if (sd_listen_fds(false) > 0)
                return 0;
        r = control_socket_owner(path, &pid);
        if (r <= 0)
                return 0;   /* nothing there, stale, or not to be asked: binding says what is wrong */
        if (pid > 0) {
                FILE *f;

                snprintf(proc, sizeof(proc), "/proc/%d/comm", (int) pid);
                if ((f = fopen(proc, "re"))) {
                        if (fgets(comm, sizeof(comm), f))
                                comm[strcspn(comm, "\n")] = '\0';
                        fclose(f);
                }
                return log_error_errno(EADDRINUSE, "%s (pid %d) already answers on %s: not starting, and its "
                                       "socket is left alone. Stop it first, or give this daemon a socket "
                                       "(-s) and caches of its own.", *comm ? comm : "Another process",
                                       (int) pid, path);
        }
        return log_error_errno(EADDRINUSE, "Another process already answers on %s (its queue is full, it "
                               "could not say which): not starting, and its socket is left alone.", path);
}

/* One daemon per cache root: at start, a root another daemon keeps is
 * refused (after a reload, such a new cache is only unavailable). */
static int lock_caches(Manager *m) {
        char lock[ROOT_LOCK_NAME_MAX];
        pid_t holder;
        int r;

        if (m->state_fd < 0) {
                log_warning("Without state_dir, no cache root is locked: nothing stops a second daemon keeping "
                            "the same caches.");
                return 0;
        }
        for (size_t i = 0; i < m->n_caches; i++) {
                const CacheConfig *cc = cache_config(m->caches[i]);

                r = cache_lock(m->caches[i], &holder);
                if (r == -EBUSY) {
                        char pid[32] = "";

                        if (holder > 0)
                                snprintf(pid, sizeof(pid), " (pid %d)", (int) holder);
                        return log_error_errno(EBUSY, "Cache %s: another cachekeeperd%s keeps %s (it holds %s/%s): "
                                               "not starting. One daemon per cache root.", cc->name, pid,
                                               cc->path, m->state_dir, root_lock_name(cc->path, lock, sizeof(lock)));
                }
                /* Any other failure: cache_start says so, and tries again. */
        }
        return 0;
}

/* The lock files of roots no longer kept (a reload removed the cache, or
 * an earlier config named it) go from the state directory; those another
 * daemon holds stay (root_lock_sweep). */
static void sweep_locks(Manager *m) {
        _cleanup_free_ char (*keep)[ROOT_LOCK_NAME_MAX] = NULL;
        int r;

        if (m->state_fd < 0)
                return;
        keep = calloc(m->n_caches ? m->n_caches : 1, sizeof(*keep));
        if (!keep)
                return;
        for (size_t i = 0; i < m->n_caches; i++)
                root_lock_name(cache_config(m->caches[i])->path, keep[i], sizeof(keep[i]));
        r = root_lock_sweep(m->state_fd, keep, m->n_caches);
        if (r < 0)
                log_warning_errno(r, "Cannot list the state directory %s for lock files of roots no longer kept: %m",
                                  m->state_dir);
        else if (r > 0)
                log_info("Removed %d lock file%s of cache roots no longer kept from %s.", r, r == 1 ? "" : "s",
                         m->state_dir);
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
        m->state_fd = -1;
        if ((config_path && !(m->config_path = strdup(config_path))) ||
            (socket_override && !(m->socket_override = strdup(socket_override))) ||
            !(m->state_dir = strdup(config->state_dir)))
                return -ENOMEM;
        r = check_socket_free(m);
        if (r < 0)
                return r;
        m->state_fd = state_dir_open(m->state_dir);
        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        r = sd_event_add_defer(m->event, &m->sync, on_sync, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(m->sync, "caches-changed");
        (void) sd_event_source_set_enabled(m->sync, SD_EVENT_OFF);
        /* First, while fds are low: libinotifytools select()s on its fd. */
        r = watch_new(m->event, on_watch_overflow, m, &m->watch);
        if (r < 0)
                return log_error_errno(r, "Failed to set up inotify: %m");
        r = alerter_new(m->event, m->config->alert_argv, m->config->alert_timeout_usec,
                        m->config->alert_min_interval_usec, &m->alerter);
        if (r >= 0)
                r = space_new(m->event, m->alerter, &m->space);
        if (r < 0)
                return log_error_errno(r, "Failed to set up alerts: %m");
        r = caches_build(m, m->config, &m->caches, &m->n_caches);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the caches: %m");
        r = lock_caches(m);
        if (r < 0)
                return r;
        sweep_locks(m);
        resolve_admin_group(m, true);
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
        r = control_new(m->event, fd >= 0 ? NULL : manager_socket_path(m), fd, manager_on_request, m, &m->control);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", fd >= 0 ? "the inherited socket" : manager_socket_path(m));
        /* Root and admin_group keep slots no one else can take. */
        control_set_privileged(m->control, manager_peer_is_admin);
        if (fd < 0) {
                log_info("Listening on %s.", manager_socket_path(m));
                return 0;
        }
        /* The unit's socket wins over the config's: say so when they differ. */
        struct sockaddr_un sa = { 0 };
        socklen_t len = sizeof(sa);
        if (getsockname(fd, (struct sockaddr *) &sa, &len) == 0 && sa.sun_family == AF_UNIX &&
            strcmp(sa.sun_path, manager_socket_path(m)) != 0)
                log_notice("Listening on %s, the socket systemd passed; '%s' from the configuration is not used.",
                           sa.sun_path[0] ? sa.sun_path : "an unnamed socket", manager_socket_path(m));
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
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->admin_timer, CLOCK_MONOTONIC, ADMIN_REFRESH_USEC, 0,
                                               on_admin_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->admin_timer, SD_EVENT_ON);
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->history_timer, CLOCK_MONOTONIC, HISTORY_SAVE_USEC, 0,
                                               on_history_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->history_timer, m->state_fd >= 0 ? SD_EVENT_ON : SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Failed to set up timers: %m");
        (void) sd_event_source_set_priority(m->history_timer, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(m->history_timer, "history-save");
        (void) sd_event_source_set_description(m->admin_timer, "admin-group-refresh");
        m->mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (m->mountinfo_fd < 0 ||
            sd_event_add_io(m->event, &m->mountinfo, m->mountinfo_fd, EPOLLPRI, on_mountinfo, m) < 0)
                log_warning("Cannot watch /proc/self/mountinfo; mounts are checked every second instead.");

        log_info("cachekeeperd %s started with %s: %zu cache%s.", CACHEKEEPER_VERSION,
                 m->config->file, m->config->n_caches, m->config->n_caches == 1 ? "" : "s");
        for (size_t i = 0; i < m->n_caches; i++)
                cache_start(m->caches[i]);
        sync_caches(m);
        r = remotes_new(m->event, m->watch, m->alerter, m->config, &m->remotes);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the remotes: %m");
        remotes_start(m->remotes);
        return 0;
}

int manager_run(Manager *m) {
        int r = sd_event_loop(m->event);

        save_history(m);   /* SIGTERM or not: what was counted survives */
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int manager_reload(Manager *m, char *err, size_t errlen) {
        char buf[CONFIG_ERROR_MAX];
        Config *c = NULL, *old;
        Cache **caches, **old_caches;
        Remotes *remotes = NULL;
        size_t n, old_n;
        int r;

        /* MONOTONIC_USEC: what systemd 253+ wants with RELOADING=1; older ones ignore it. */
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long) now_usec(CLOCK_MONOTONIC));
        /* Started on the built-in config: the installed file, once it exists. */
        if (!m->config_path && access(CONFIG_DEFAULT_FILE, F_OK) == 0 && !(m->config_path = strdup(CONFIG_DEFAULT_FILE)))
                return log_oom();
        if (m->config_path)
                r = config_load(m->config_path, buf, sizeof(buf), &c);
        else
                r = config_load_builtin(buf, sizeof(buf), &c);
        if (r >= 0) {
                /* New watches on the new config: the old ones go with the old
                 * config they borrow from (standing alerts are raised afresh). */
                r = remotes_new(m->event, m->watch, m->alerter, c, &remotes);
                if (r < 0)
                        snprintf(buf, sizeof(buf), "%s: cannot set up the remotes: %s", c->file, strerror(-r));
        }
        if (r >= 0) {
                r = caches_build(m, c, &caches, &n);
                if (r < 0) {
                        snprintf(buf, sizeof(buf), "%s: cannot set up the caches: %s", c->file, strerror(-r));
                        remotes = remotes_free(remotes);
                }
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
        if (strcmp(c->state_dir, m->state_dir) != 0)
                log_notice("state_dir changes to %s at the next start; %s stays until then.", c->state_dir,
                           m->state_dir);
        old = m->config;
        remotes_adopt(remotes, m->remotes);   /* shares kept the same way: no rescan */
        remotes_retire(m->remotes, remotes);
        remotes_free(m->remotes);
        m->remotes = remotes;
        remotes_start(m->remotes);   /* the old ones let go of the other shares' locks */
        old_caches = m->caches;
        old_n = m->n_caches;
        m->config = c;
        m->caches = caches;
        m->n_caches = n;
        for (size_t i = 0; i < old_n; i++)
                if (old_caches[i]) {
                        log_info("Cache %s is no longer configured; leaving it as it is.",
                                 cache_config(old_caches[i])->name);
                        (void) cache_history_save(old_caches[i], m->state_fd, m->state_dir,
                                                  now_usec(CLOCK_REALTIME));
                        cache_retire(old_caches[i]);
                        cache_free(old_caches[i]);
                }
        free(old_caches);
        sweep_locks(m);   /* after the old caches let go of theirs */
        alerter_set_command(m->alerter, c->alert_argv, c->alert_timeout_usec, c->alert_min_interval_usec);
        space_sync(m->space, c, m->caches, m->n_caches);
        resolve_admin_group(m, strcmp(c->admin_group, old->admin_group) != 0);
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

Cache *manager_find_cache(const Manager *m, const char *name, const char *path) {
        for (size_t i = 0; i < m->n_caches; i++) {
                const CacheConfig *cc = cache_config(m->caches[i]);

                if (strcmp(cc->name, name) == 0 && (!path || strcmp(cc->path, path) == 0))
                        return m->caches[i];
        }
        return NULL;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* Before the connections, so that its cachectl hears why it stopped;
         * before its caches: it forgets its trims in them. */
        m->merge = merge_free(m->merge);
        m->control = control_free(m->control);
        m->remotes = remotes_free(m->remotes);
        for (size_t i = 0; i < m->n_caches; i++)
                cache_free(m->caches[i]);
        free(m->caches);
        m->space = space_free(m->space);
        m->alerter = alerter_free(m->alerter);
        sd_event_source_disable_unref(m->sync);
        sd_event_source_disable_unref(m->check_timer);
        sd_event_source_disable_unref(m->audit_timer);
        sd_event_source_disable_unref(m->admin_timer);
        sd_event_source_disable_unref(m->history_timer);
        if (m->state_fd >= 0)
                close(m->state_fd);
        free(m->state_dir);
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
