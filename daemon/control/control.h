/* SPDX-License-Identifier: MIT */
/* The control socket: accepts cachectl connections on the sd-event loop,
 * reads one JSON request per line, hands it to the manager's handler, and
 * writes the reply without ever blocking. Bounds everything a client
 * controls, so that no local user can lock out root or another user:
 * request size (a longer line is answered with an error, then the
 * connection closed); connections, in total, per unprivileged uid, and with
 * slots only privileged peers (root, admin_group) may take; the time a
 * request line may take from its first byte to its newline; idle time, which
 * only an answered request restarts (a drip of bytes does not); unread
 * output (the connection is dropped). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "base/util.h"

#define CONTROL_CONNECTIONS_MAX 64                    /* beyond this, new clients are refused */
#define CONTROL_RESERVED        16                    /* of those, for privileged peers only */
#define CONTROL_PER_UID_MAX     8                     /* connections one unprivileged uid may hold */
#define CONTROL_IDLE_USEC       (10 * USEC_PER_SEC)   /* no request for this long after the last answer */
#define CONTROL_LINE_USEC       (2 * USEC_PER_SEC)    /* from a request's first byte to its newline */
#define CONTROL_OUTPUT_MAX      (4u << 20)            /* unread reply bytes before we give up on a client (one whole reply: PROTOCOL_REPLY_MAX) */
#define CONTROL_SLICE_BYTES     (64u << 10)           /* a streamed reply is written this much at a time (control_reply_stream) */

typedef struct Control Control;
typedef struct ControlRequest ControlRequest;

/* Who is at the other end, as the kernel says (SO_PEERCRED, SO_PEERGROUPS):
 * the credentials of the process that connected, at connect time. */
typedef struct ControlPeer {
        pid_t pid;
        uid_t uid;
        gid_t gid;
        const gid_t *groups;            /* supplementary groups; owned by whoever hands out the peer */
        size_t n_groups;
        /* In a mount namespace other than the daemon's and PID 1's (a
         * container), or one the daemon could not read (os/peer.h:
         * peer_place): the requests it may make are container_rights. */
        bool in_container;
        int place_error;                /* why it could not be read (-errno), counted a container; else 0 */
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

/* Says whether peer is privileged: may take the reserved connection slots
 * and has no per-uid limit. Called at each accept, on the loop: must answer
 * from what it holds (no NSS lookup, no I/O). */
typedef bool (*control_privileged_t)(const ControlPeer *peer, void *userdata);

/* Listens on listen_fd if >= 0 (inherited through socket activation: must be
 * a listening Unix stream socket, else -ENOTSOCK; made non-blocking and close-on-exec, not
 * re-bound; owned by the Control on success, left to the caller on failure;
 * path is then ignored), else binds path (a stale socket file, one nobody listens on, is replaced;
 * one where a server answers is -EADDRINUSE and left alone; any other file is -EEXIST;
 * the socket is made world-connectable, mode 0666). Takes a reference on e;
 * handler and userdata are borrowed. Returns 0 and stores the Control in *ret,
 * or -errno leaving *ret unchanged (a stale socket file may be gone). */
int control_new(sd_event *e, const char *path, int listen_fd, control_handler_t handler,
                void *userdata, Control **ret);

/* Whether a server answers on the Unix stream socket at path: connects
 * without blocking (the server sees a connection that closes at once) and
 * takes the listener's pid from SO_PEERCRED. Returns 1 (one answers; *ret_pid
 * its pid, or 0 when its backlog is full and it cannot be asked), 0 (nothing
 * there, not a socket, or a stale socket nobody listens on: ECONNREFUSED),
 * or -errno (it cannot be asked: -EACCES, say). */
int control_socket_owner(const char *path, pid_t *ret_pid);

/* Closes every connection and the listening socket; unlinks the socket file
 * if control_new bound it. Outstanding requests are detached, not freed: the
 * handler still answers each once (writing nothing), which frees it.
 * Accepts NULL; returns NULL. */
Control *control_free(Control *c);

/* Sets who is privileged (called with the handler's userdata); NULL, the
 * default, means uid 0 only. Applies to connections accepted from now on. */
void control_set_privileged(Control *c, control_privileged_t privileged);

/* Number of open client connections (refused ones never count). */
unsigned control_connections(const Control *c);

/* Tunables, mainly for tests; each > 0. The idle timeout (default
 * CONTROL_IDLE_USEC) and the line timeout (default CONTROL_LINE_USEC) apply
 * whenever a connection's timer is next armed; the output cap (default
 * CONTROL_OUTPUT_MAX) to the next reply queued. */
void control_set_idle_timeout(Control *c, usec_t usec);
void control_set_line_timeout(Control *c, usec_t usec);
void control_set_output_max(Control *c, size_t bytes);

/* The peer's credentials and supplementary groups, taken from the socket at
 * accept. Borrowed from req; valid until req is answered. */
const ControlPeer *control_request_peer(const ControlRequest *req);

/* Receives each line (newline included) a local request would send. */
typedef void (*control_sink_t)(const char *line, void *userdata);

/* A request that belongs to no connection, from peer (copied, groups and
 * all): for tests and fuzzing, to drive a handler without a socket. It is
 * answered like any other (exactly once, which frees it); each line it
 * would send goes to sink instead. Returns NULL on ENOMEM. */
ControlRequest *control_request_new_local(const ControlPeer *peer, control_sink_t sink, void *userdata);

/* The three below never fail from the handler's point of view: a reply that
 * cannot be queued (client gone, out of memory, output cap exceeded) drops
 * the connection instead. Output is written without blocking, starting now.
 * Sends the ok reply (protocol_encode_ok) with result (borrowed, may be
 * NULL) and ends (frees) req. A result serialising to more than
 * PROTOCOL_REPLY_MAX is replaced by an error reply. */
void control_reply_ok(ControlRequest *req, json_object *result);
/* Sends the error reply (protocol_encode_error) and ends (frees) req. */
void control_reply_error(ControlRequest *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends a progress line (protocol_encode_progress; progress borrowed); req stays open. */
void control_send_progress(ControlRequest *req, json_object *progress);

/* Writes the next piece of a streamed reply line into buf (size bytes, at
 * least CONTROL_SLICE_BYTES), no more than that, and stores its length in
 * *ret_len. Returns 1 while more is to come, 0 when the piece ends the line
 * (its newline included), or -errno: the client is then dropped, never sent
 * a line cut short. */
typedef int (*control_fill_t)(char *buf, size_t size, size_t *ret_len, void *userdata);

/* Answers req (and ends it) with a reply too big to write at once without
 * holding up everyone else (a history of thousands of rows): fill writes
 * it a slice at a time, on the loop, one slice per turn of the connection,
 * and only once the client has taken all but less than a slice of what it
 * was sent. Between two slices the loop serves the other clients: a big
 * reply costs them one slice's encoding, never the whole; and each such
 * client holds one or two slices of output, never the whole line. fill
 * must encode from what userdata holds (a copy of the figures), never
 * from state that may go meanwhile. No other request of the connection
 * is read until the line is complete. The idle timeout runs from the
 * answer, as for any reply: a client that does not take the line within
 * it is closed. userdata is handed to free_userdata exactly once: when the
 * line is complete, the client is gone or dropped (a line of more than
 * PROTOCOL_REPLY_MAX is dropped too), or at once for a request with no
 * client left. A local request (control_request_new_local) gets the whole
 * line at once. */
void control_reply_stream(ControlRequest *req, control_fill_t fill, void (*free_userdata)(void *), void *userdata);
