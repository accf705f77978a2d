/* SPDX-License-Identifier: MIT */
/* The Manager owns the event loop and every object of the daemon, wires
 * events to actions, and swaps in a new Config on reload. It logs. */
#pragma once

#include <systemd/sd-event.h>

#include "config/config.h"

typedef struct Manager Manager;

/* Builds a manager on a new event loop. config_path is what SIGHUP re-reads
 * (NULL: the built-in config); socket_override replaces the config's socket
 * (NULL: none). Takes ownership of config, also on failure. */
int manager_new(const char *config_path, const char *socket_override, Config *config, Manager **ret);

/* Registers signals, the watchdog and every source, then tells systemd
 * READY=1. Logs its own errors; returns 0 or -errno. */
int manager_start(Manager *m);

/* Runs the loop until SIGTERM/SIGINT. Returns 0 or -errno. */
int manager_run(Manager *m);

/* Re-reads the config file. A bad file is logged and the old config stays.
 * Returns 0 (swapped in), -EINVAL (refused; message in err if err != NULL). */
int manager_reload(Manager *m, char *err, size_t errlen);

Manager *manager_free(Manager *m);
static inline void manager_freep(Manager **m) {
        manager_free(*m);
}
