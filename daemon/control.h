/* SPDX-License-Identifier: MIT */
/* The control socket: accepts cachectl connections on the sd-event loop,
 * reads one JSON request per line, hands it to the manager's handler, and
 * writes the reply without ever blocking. Bounds everything a client
 * controls: request size (a longer line is answered with an error, then the
 * connection closed), number of connections (extra clients get an error line
 * and are closed), idle time, unread output (the connection is dropped). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "util.h"

#define CONTROL_CONNECTIONS_MAX 64                    /* beyond this, new clients are refused */
#define CONTROL_IDLE_USEC       (10 * 1000000ULL)     /* a connection silent this long is closed */
#define CONTROL_OUTPUT_MAX      (1u << 20)            /* unread reply bytes before we give up on a client */

typedef struct Control Control;
typedef struct ControlRequest ControlRequest;

typedef struct ControlPeer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
} ControlPeer;

/* Called once per request line. The handler must answer exactly once, now or
 * later, with control_reply_ok/control_reply_error (a handler that starts a
 * long job keeps req and answers when done; it may send progress before). req
 * stays valid until answered, even if the client goes away meanwhile or the
 * Control is freed (answering then writes nothing and just frees req; an
 * unanswered req leaks). While req is pending, nothing more is read from its
 * connection and its idle timer is stopped. cmd and request are borrowed for
 * the duration of the call only. The handler must not call control_free. */
typedef void (*control_handler_t)(ControlRequest *req, const char *cmd, json_object *request,
                                  void *userdata);

/* Listens on listen_fd if >= 0 (inherited through socket activation: must be
 * a listening Unix stream socket, else -ENOTSOCK; made non-blocking and close-on-exec, not
 * re-bound; owned by the Control on success, left to the caller on failure;
 * path is then ignored), else binds path (a stale socket file is replaced, any other file is -EEXIST;
 * the socket is made world-connectable, mode 0666). Takes a reference on e;
 * handler and userdata are borrowed. Returns 0 and stores the Control in *ret,
 * or -errno leaving *ret unchanged (a stale socket file may be gone). */
int control_new(sd_event *e, const char *path, int listen_fd, control_handler_t handler,
                void *userdata, Control **ret);

/* Closes every connection and the listening socket; unlinks the socket file
 * if control_new bound it. Outstanding requests are detached, not freed: the
 * handler still answers each once (writing nothing), which frees it.
 * Accepts NULL; returns NULL. */
Control *control_free(Control *c);

/* Number of open client connections (refused ones never count). */
unsigned control_connections(const Control *c);

/* Tunables, mainly for tests. The idle timeout (default CONTROL_IDLE_USEC, > 0)
 * applies whenever a connection's timer is next armed; the output cap (default
 * CONTROL_OUTPUT_MAX, > 0) to the next reply queued. */
void control_set_idle_timeout(Control *c, usec_t usec);
void control_set_output_max(Control *c, size_t bytes);

/* The peer's credentials, taken with SO_PEERCRED at accept. Borrowed from req;
 * valid until req is answered. */
const ControlPeer *control_request_peer(const ControlRequest *req);

/* The three below never fail from the handler's point of view: a reply that
 * cannot be queued (client gone, out of memory, output cap exceeded) drops
 * the connection instead. Output is written without blocking, starting now.
 * Sends {"ok":true,"result":result} (result borrowed, may be NULL) and ends
 * (frees) req. A result serialising to more than PROTOCOL_REPLY_MAX is
 * replaced by an error reply. */
void control_reply_ok(ControlRequest *req, json_object *result);
/* Sends {"ok":false,"error":message} and ends (frees) req. */
void control_reply_error(ControlRequest *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends {"progress":progress} (borrowed) as a line of its own; req stays open. */
void control_send_progress(ControlRequest *req, json_object *progress);
