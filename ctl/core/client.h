/* SPDX-License-Identifier: MIT */
/* cachectl's connection to cachekeeperd, and what every command of it
 * shares: the exit codes, the usage error, colour. One request per
 * connection; a reply is progress lines, then one final line
 * (daemon/base/protocol.h). Never dies of SIGPIPE. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

#include "base/util.h"

#define CTL_EXIT_REFUSED 1
#define CTL_EXIT_USAGE 2
#define CTL_EXIT_UNREACHABLE 3

/* How long to wait for the daemon: to connect, and for each line of its
 * reply (a trim's progress lines each restart it). */
#define CTL_TIMEOUT_DEFAULT_USEC (10 * USEC_PER_SEC)
#define CTL_PROBLEM_MAX 1024

extern const char *ctl_socket_path;       /* -s, $CACHEKEEPER_SOCKET, or the default */
extern usec_t ctl_timeout_usec;           /* -t */
extern const char *ctl_waiting_for;       /* what the timeout message says we waited for */
/* Why the last request got no answer, or the daemon's error: for check's line. */
extern char ctl_problem[CTL_PROBLEM_MAX];
/* Keep ctl_problem, print nothing: for a command that asks the daemon only
 * in case it needs it (measure's fallback). */
extern bool ctl_quiet;

typedef void (*ctl_progress_t)(json_object *progress);

/* "cachectl: <message>" and the --help hint on stderr; returns CTL_EXIT_USAGE. */
__attribute__((format(printf, 1, 2)))
int ctl_usage_error(const char *fmt, ...);

/* Sends request (a line, newline included, taken over; NULL: out of
 * memory) and reads the reply; progress lines go to on_progress. Returns 1
 * ok (*ret_result set, may be NULL), 0 refused (the daemon's message
 * printed), -1 unreachable, turned away, broken or not understood (printed,
 * and kept in ctl_problem). */
int ctl_ask(char *request, ctl_progress_t on_progress, json_object **ret_result);

/* ctl_ask for the whole status. */
int ctl_fetch_status(json_object **ret);

/* The exit status for what ctl_ask returned: 0, CTL_EXIT_REFUSED or
 * CTL_EXIT_UNREACHABLE. */
int ctl_exit_status(int r);

/* Colour on fd: a terminal, and neither NO_COLOR (https://no-color.org) nor
 * TERM=dumb. */
bool ctl_want_color(int fd);
