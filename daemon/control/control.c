/* SPDX-License-Identifier: MIT */
/* The control socket server. Owns the listening socket and the connections;
 * never blocks, never trusts a client, never decides what a request means
 * (that is the handler's job). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "base/log.h"
#include "base/protocol.h"
#include "base/slice.h"
#include "control/admission.h"
#include "control/control.h"
#include "os/peer.h"

#define CONTROL_BACKLOG      128                   /* clients the kernel queues before we accept */
#define CONTROL_ACCEPT_BATCH 16                    /* accepts per wakeup: a flood can't starve the loop */
#define CONTROL_RETRY_USEC   (100 * USEC_PER_MSEC) /* pause after EMFILE & co. instead of spinning */
#define CONTROL_PEER_GROUPS  64                    /* supplementary groups read at once; more take a second call */
/* A streamed reply's next slice: after every request line that is read and
 * every reply that is flushed (normal priority), after inotify (watch.h),
 * before the background scans and trims (idle). A status asked for while
 * six clients stream history waits for at most the slice being written. */
#define CONTROL_FILL_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 5)

typedef struct Connection Connection;

struct ControlRequest {
        Connection *connection;         /* borrowed; NULL once the client or the Control is gone */
        ControlPeer peer;               /* peer.groups points to groups */
        gid_t *groups;
        control_sink_t sink;            /* set for a local request: its lines go here */
        void *sink_userdata;
};

struct Connection {
        Control *control;               /* borrowed */
        Connection *prev, *next;
        int fd;
        sd_event_source *io_source, *timer_source, *defer_source;
        sd_event_source *fill_source;   /* the next slice of a streamed reply */
        ControlPeer peer;               /* peer.groups points to groups */
        gid_t *groups;
        bool privileged;                /* may use the reserved slots; no per-uid limit */
        usec_t since;                   /* accepted or last answered: the idle timeout runs from here */
        usec_t line_start;              /* when the first byte of the line in in[] was read */
        ControlRequest *pending;        /* held by the handler until it answers */
        control_fill_t fill;            /* set while a streamed reply is written (control_reply_stream) */
        void (*fill_free)(void *);
        void *fill_userdata;
        size_t fill_bytes;              /* of the streamed line written so far */
        char in[PROTOCOL_REQUEST_MAX];  /* at most one request line, newline included */
        size_t in_len;
        char *out;                      /* unflushed output is out[out_start..out_end) */
        size_t out_start, out_end, out_alloc;
        bool read_eof;                  /* the client shut its sending side */
        bool closing;                   /* read nothing more; close once output is flushed */
        bool drop;                      /* close at the next chance, unflushed output and all */
};

struct Control {
        sd_event *event;
        int listen_fd;
        sd_event_source *listen_source, *retry_source;
        char *path;                     /* set only if we bound it: unlinked on free */
        control_handler_t handler;
        control_privileged_t privileged;
        void *userdata;                 /* borrowed */
        Connection *connections;        /* newest first */
        unsigned n_connections;
        usec_t idle_usec, line_usec;
        size_t output_max;
        /* The host's mount namespaces: the daemon's own and PID 1's. */
        uint64_t host_ns[2];
        size_t n_host_ns;
        /* The daemon's service cgroup ("/system.slice/cachekeeperd.service"),
         * or "": a peer there is the unit's own process (ExecReload's
         * cachectl, which systemd runs in a mount namespace of its own). */
        char unit_cgroup[PEER_CGROUP_MAX];
};

/* The loop's idea of now: the time of its current iteration. */
static usec_t control_now(const Control *c) {
        return event_now(c->event, CLOCK_MONOTONIC);
}

/* Ends the streamed reply, complete or not: its userdata goes. */
static void connection_stream_end(Connection *conn) {
        if (!conn->fill)
                return;
        if (conn->fill_free)
                conn->fill_free(conn->fill_userdata);
        conn->fill = NULL;
        conn->fill_free = NULL;
        conn->fill_userdata = NULL;
}

static void connection_free(Connection *conn) {
        Control *c = conn->control;

        if (conn->prev)
                conn->prev->next = conn->next;
        else
                c->connections = conn->next;
        if (conn->next)
                conn->next->prev = conn->prev;
        c->n_connections--;
        if (conn->pending)
                conn->pending->connection = NULL;
        connection_stream_end(conn);
        /* Sources go before the fd they watch. */
        sd_event_source_disable_unref(conn->io_source);
        sd_event_source_disable_unref(conn->timer_source);
        sd_event_source_disable_unref(conn->defer_source);
        sd_event_source_disable_unref(conn->fill_source);
        close(conn->fd);
        free(conn->out);
        free(conn->groups);
        free(conn);
}

/* Best effort, for a socket we are about to close: a line the client may
 * read, if the socket takes it now. */
static void send_last_words(int fd, char *line) {
        if (line)
                (void) send(fd, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL);
        free(line);
}

/* The error reply line for a message; NULL on ENOMEM. */
static char *error_linev(const char *fmt, va_list ap) {
        char *msg, *line;

        if (vasprintf(&msg, fmt, ap) < 0)
                return NULL;
        line = protocol_encode_error(msg);
        free(msg);
        return line;
}

static char *error_line(const char *fmt, ...) _printf_(1, 2);
static char *error_line(const char *fmt, ...) {
        va_list ap;
        char *line;

        va_start(ap, fmt);
        line = error_linev(fmt, ap);
        va_end(ap);
        return line;
}

/* Room for len more bytes of output: where they go (at out + out_end), or
 * NULL with the client marked to drop (out of memory, or its unread output
 * would pass the cap). */
static char *connection_reserve(Connection *conn, size_t len) {
        size_t queued = conn->out_end - conn->out_start, n;
        char *p;

        if (conn->drop)
                goto drop;
        if (queued + len > conn->control->output_max) {
                log_debug("Control client pid %d does not read its replies, dropping it",
                          (int) conn->peer.pid);
                goto drop;
        }
        if (conn->out_end + len > conn->out_alloc) {
                /* No room at the end: compact, then grow if that is not enough. */
                if (queued > 0)
                        memmove(conn->out, conn->out + conn->out_start, queued);
                conn->out_start = 0;
                conn->out_end = queued;
        }
        if (queued + len > conn->out_alloc) {
                n = queued + len > 2 * conn->out_alloc ? queued + len : 2 * conn->out_alloc;
                n = n < conn->control->output_max ? n : conn->control->output_max;
                p = realloc(conn->out, n);
                if (!p)
                        goto drop;
                conn->out = p;
                conn->out_alloc = n;
        }
        return conn->out + conn->out_end;
drop:
        conn->drop = true;
        return NULL;
}

/* Appends a malloc'd line (taken over; NULL means out of memory). A client
 * whose unread output would pass the cap is dropped instead. */
static void connection_queue(Connection *conn, char *line) {
        _cleanup_free_ char *l = line;
        size_t len;
        char *p;

        if (!l) {
                conn->drop = true;
                return;
        }
        len = strlen(l);
        p = connection_reserve(conn, len);
        if (!p)
                return;
        memcpy(p, l, len);
        conn->out_end += len;
}

/* Writes the next slice of a streamed reply, once the client has taken all
 * but less than a slice of its output: so a big reply is encoded a slice per
 * turn of the loop, between other clients' turns, and never queued whole. */
static void connection_fill(Connection *conn) {
        size_t len = 0;
        char *p;
        int r;

        if (!conn->fill || conn->drop || conn->out_end - conn->out_start >= CONTROL_SLICE_BYTES)
                return;
        p = connection_reserve(conn, CONTROL_SLICE_BYTES);
        if (!p)
                return;
        r = conn->fill(p, CONTROL_SLICE_BYTES, &len, conn->fill_userdata);
        assert(len <= CONTROL_SLICE_BYTES);
        conn->out_end += len;
        conn->fill_bytes += len;
        if (r >= 0 && conn->fill_bytes > PROTOCOL_REPLY_MAX) {
                log_warning("Control reply of more than %u bytes is too large, dropping the client",
                            (unsigned) PROTOCOL_REPLY_MAX);
                r = -EMSGSIZE;
        }
        if (r < 0) {
                log_debug_errno(r, "Control client pid %d: reply failed midway, dropping it: %m",
                                (int) conn->peer.pid);
                conn->drop = true;
        }
        if (r <= 0) {
                connection_stream_end(conn);
                /* Answered in full: the clocks restart, as at any answer. */
                conn->since = conn->line_start = control_now(conn->control);
        }
}

static void connection_queue_error(Connection *conn, const char *fmt, ...) _printf_(2, 3);
static void connection_queue_error(Connection *conn, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        connection_queue(conn, error_linev(fmt, ap));
        va_end(ap);
}

/* Writes what the socket takes. Returns 0 (all written, or the socket is
 * full) or -errno. */
static int connection_flush(Connection *conn) {
        while (conn->out_start < conn->out_end) {
                ssize_t n = send(conn->fd, conn->out + conn->out_start,
                                 conn->out_end - conn->out_start, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
                conn->out_start += (size_t) n;
        }
        /* Done: give back what a big reply took; a streamed one keeps its
         * buffer for the next slice. */
        conn->out_start = conn->out_end = 0;
        if (!conn->fill) {
                free(conn->out);
                conn->out = NULL;
                conn->out_alloc = 0;
        }
        return 0;
}

/* Returns 0 or -errno (the connection is broken). */
static int connection_read(Connection *conn) {
        ssize_t n = read(conn->fd, conn->in + conn->in_len, sizeof(conn->in) - conn->in_len);

        if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
        if (n == 0)
                conn->read_eof = true;
        if (n > 0 && conn->in_len == 0)
                conn->line_start = control_now(conn->control);
        conn->in_len += (size_t) n;
        return 0;
}

/* A copy of peer whose groups the request owns; NULL on ENOMEM. */
static ControlRequest *request_new(const ControlPeer *peer) {
        ControlRequest *req = calloc(1, sizeof(*req));

        if (!req)
                return NULL;
        req->peer = *peer;
        if (peer->n_groups > 0) {
                req->groups = malloc(peer->n_groups * sizeof(gid_t));
                if (!req->groups) {
                        free(req);
                        return NULL;
                }
                memcpy(req->groups, peer->groups, peer->n_groups * sizeof(gid_t));
        }
        req->peer.groups = req->groups;
        return req;
}

static void request_free(ControlRequest *req) {
        free(req->groups);
        free(req);
}

static void connection_dispatch(Connection *conn, const char *line, size_t len) {
        Control *c = conn->control;
        ControlRequest *req;
        json_object *o;
        const char *cmd;
        char err[256];

        if (len == 0)
                return;
        if (memchr(line, 0, len))
                return connection_queue_error(conn, "request contains a NUL byte");
        if (protocol_decode_request(line, &o, &cmd, err, sizeof(err)) < 0)
                return connection_queue_error(conn, "%s", err);
        req = request_new(&conn->peer);
        if (!req) {
                json_object_put(o);
                return connection_queue_error(conn, "out of memory");
        }
        req->connection = conn;
        conn->pending = req;
        c->handler(req, cmd, o, c->userdata);   /* may answer now, or keep req */
        json_object_put(o);
}

/* Hands complete lines to the handler one at a time: stops while a request
 * is pending; connection_run() resumes here once it is answered. */
static void connection_process(Connection *conn) {
        while (!conn->pending && !conn->fill && !conn->closing && !conn->drop) {
                char *nl = memchr(conn->in, '\n', conn->in_len);
                size_t len;

                if (!nl && conn->in_len == sizeof(conn->in)) {
                        connection_queue_error(conn, "request too long (max %u bytes)",
                                               (unsigned) PROTOCOL_REQUEST_MAX);
                        conn->closing = true;
                        return;
                }
                if (!nl && !conn->read_eof)
                        return;                 /* wait for the rest of the line */
                if (!nl && conn->in_len == 0) {
                        conn->closing = true;   /* EOF, and everything is answered */
                        return;
                }
                /* At EOF, a last line without newline counts; it fits, as in_len < sizeof(in). */
                len = nl ? (size_t) (nl - conn->in) : conn->in_len;
                conn->in[len] = 0;
                if (len > 0)    /* an answer is coming: the clocks restart (empty lines do nothing) */
                        conn->since = conn->line_start = control_now(conn->control);
                connection_dispatch(conn, conn->in, len);
                len += nl ? 1 : 0;
                memmove(conn->in, conn->in + len, conn->in_len - len);
                conn->in_len -= len;
        }
}

/* Reads only with no request pending or buffered, so a client cannot make
 * us queue more than one line. */
static bool connection_wants_input(const Connection *conn) {
        return !conn->pending && !conn->fill && !conn->closing && !conn->read_eof &&
                !memchr(conn->in, '\n', conn->in_len);
}

/* When the client has had its chance: with part of a line buffered, the
 * line timeout after its first byte; else, or while a streamed reply is
 * written, the idle timeout after the last answer (or the accept). Bytes
 * that complete no request move neither. */
static usec_t connection_deadline(const Connection *conn) {
        const Control *c = conn->control;

        return conn->in_len > 0 && !conn->fill ? conn->line_start + c->line_usec : conn->since + c->idle_usec;
}

/* Brings the event mask and the timer in line with the state: read only
 * when connection_wants_input(), write only with output; the next slice of
 * a streamed reply on the next turn once the socket took nearly all. The
 * timer stops while a request is pending: a long trim is not idleness. */
static int connection_update(Connection *conn) {
        uint32_t events = 0;
        int r;

        if (conn->fill && conn->out_end - conn->out_start < CONTROL_SLICE_BYTES) {
                r = sd_event_source_set_enabled(conn->fill_source, SD_EVENT_ONESHOT);
                if (r < 0)
                        return r;
        }

        if (connection_wants_input(conn))
                events |= EPOLLIN;
        if (conn->out_start < conn->out_end)
                events |= EPOLLOUT;
        r = sd_event_source_set_io_events(conn->io_source, events);     /* HUP and ERR always come */
        if (r < 0)
                return r;
        if (conn->pending)
                return sd_event_source_set_enabled(conn->timer_source, SD_EVENT_OFF);
        r = sd_event_source_set_time(conn->timer_source, connection_deadline(conn));
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(conn->timer_source, SD_EVENT_ONESHOT);
}

/* One step of a connection's life, after an event or an answer; frees the
 * connection when it is done or broken. */
static void connection_run(Connection *conn, uint32_t revents) {
        int r = 0;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("Control client pid %d hung up", (int) conn->peer.pid);
                return connection_free(conn);
        }
        if ((revents & EPOLLIN) && connection_wants_input(conn))  /* revents may be stale */
                r = connection_read(conn);
        if (r >= 0) {
                bool streaming = conn->fill;

                connection_process(conn);
                connection_fill(conn);
                r = connection_flush(conn);
                /* A streamed line just ended: the next request line, if one
                 * is buffered already, on the next turn. */
                if (r >= 0 && streaming && !conn->fill &&
                    sd_event_source_set_enabled(conn->defer_source, SD_EVENT_ONESHOT) < 0)
                        conn->drop = true;
        }
        if (r >= 0 && (conn->drop || (conn->closing && conn->out_start == conn->out_end)))
                return connection_free(conn);
        if (r >= 0)
                r = connection_update(conn);
        if (r < 0) {
                log_debug_errno(r, "Control client pid %d failed, closing: %m", (int) conn->peer.pid);
                connection_free(conn);
        }
}

static int connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        connection_run(userdata, revents);
        return 0;
}

static int connection_defer(sd_event_source *s, void *userdata) {
        connection_run(userdata, 0);
        return 0;
}

static int connection_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Connection *conn = userdata;

        if (conn->in_len > 0 && !conn->fill) {
                log_debug("Control client pid %d (uid %u) sent no whole request line in time, closing",
                          (int) conn->peer.pid, (unsigned) conn->peer.uid);
                if (conn->out_start == conn->out_end)   /* else it would land inside a reply */
                        send_last_words(conn->fd, error_line("request not complete within %llu ms of its first byte",
                                                             (unsigned long long) (conn->control->line_usec /
                                                                                   USEC_PER_MSEC)));
        } else
                log_debug("Control client pid %d (uid %u) idle too long, closing", (int) conn->peer.pid,
                          (unsigned) conn->peer.uid);
        connection_free(conn);
        return 0;
}

/* After output was queued from outside connection_run(): write now, and let
 * the next loop iteration do the rest. Never runs the handler from here, so
 * an answer cannot re-enter the code that gave it. */
static void connection_kick(Connection *conn) {
        if (connection_flush(conn) < 0)
                conn->drop = true;
        if (sd_event_source_set_enabled(conn->defer_source, SD_EVENT_ONESHOT) < 0 &&
            connection_update(conn) < 0)
                conn->drop = true;      /* ENOMEM only: the next event on it closes it */
}

/* Takes over fd and groups (peer->groups), also on failure. */
static int connection_new(Control *c, int fd, const ControlPeer *peer, gid_t *groups, bool privileged) {
        Connection *conn;
        int r;

        conn = calloc(1, sizeof(*conn));
        if (!conn) {
                close(fd);
                free(groups);
                return -ENOMEM;
        }
        *conn = (Connection) { .control = c, .fd = fd, .next = c->connections, .peer = *peer,
                               .groups = groups, .privileged = privileged, .since = control_now(c) };
        if (conn->next)
                conn->next->prev = conn;
        c->connections = conn;
        c->n_connections++;

        r = sd_event_add_io(c->event, &conn->io_source, fd, EPOLLIN, connection_io, conn);
        if (r >= 0)
                r = sd_event_add_time(c->event, &conn->timer_source, CLOCK_MONOTONIC,
                                      conn->since + c->idle_usec, 0, connection_timeout, conn);
        if (r >= 0)
                r = sd_event_add_defer(c->event, &conn->defer_source, connection_defer, conn);
        if (r >= 0)
                r = sd_event_source_set_enabled(conn->defer_source, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_defer(c->event, &conn->fill_source, connection_defer, conn);
        if (r >= 0)
                r = sd_event_source_set_enabled(conn->fill_source, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_source_set_priority(conn->fill_source, CONTROL_FILL_PRIORITY);
        if (r < 0) {
                connection_free(conn);
                return r;
        }
        (void) sd_event_source_set_description(conn->io_source, "control-connection");
        (void) sd_event_source_set_description(conn->timer_source, "control-deadline");
        (void) sd_event_source_set_description(conn->defer_source, "control-resume");
        (void) sd_event_source_set_description(conn->fill_source, "control-slice");
        return 0;
}

/* Reads who connected from the socket: SO_PEERCRED, and SO_PEERGROUPS for
 * the supplementary groups (Linux 4.13+; older kernels give none, so only
 * the primary group counts there). Stores the peer and its groups
 * (malloc'd, NULL when there are none; ret->groups points to them) and
 * returns 0, or returns -errno. */
static int peer_read(int fd, ControlPeer *ret, gid_t **ret_groups) {
        gid_t buf[CONTROL_PEER_GROUPS], *groups = NULL;
        socklen_t len = sizeof(struct ucred);
        struct ucred cred;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        len = sizeof(buf);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, buf, &len) >= 0) {
                if (len > 0 && !(groups = malloc(len)))
                        return -ENOMEM;
                if (len > 0)
                        memcpy(groups, buf, len);
        } else if (errno == ERANGE) {    /* len now says how much it takes; the peer's groups are fixed */
                groups = malloc(len);
                if (!groups)
                        return -ENOMEM;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
                        free(groups);
                        return -errno;
                }
        } else if (errno == ENOPROTOOPT)
                len = 0;
        else
                return -errno;
        *ret = (ControlPeer) { .pid = cred.pid, .uid = cred.uid, .gid = cred.gid, .groups = groups,
                               .n_groups = len / sizeof(gid_t) };
        *ret_groups = groups;
        return 0;
}

/* Whether the peer on fd is in a container: a mount namespace that is not
 * the host's, unless it is in the daemon's own unit; or one that cannot be
 * read (failing closed: a peer that exited or hid gets the container's
 * rights). */
static bool peer_in_container(const Control *c, int fd, ControlPeer *peer) {
        char cgroup[PEER_CGROUP_MAX];
        uint64_t ns;
        int r;

        r = peer_place(fd, peer->pid, &ns, cgroup);
        if (r < 0) {
                log_debug_errno(r, "Failed to read the mount namespace of control client pid %d (uid %u), "
                                "taking it for a container: %m", (int) peer->pid, (unsigned) peer->uid);
                peer->place_error = r;
                return true;
        }
        for (size_t i = 0; i < c->n_host_ns; i++)
                if (ns == c->host_ns[i])
                        return false;
        return !(c->unit_cgroup[0] && strcmp(cgroup, c->unit_cgroup) == 0);
}

/* The daemon's cgroup when it is a service's, a unit of its own under
 * systemd: only the unit's processes are put there. Else (the root, a
 * shell's scope, cgroup v1 alone) "". */
static void read_unit_cgroup(Control *c) {
        size_t n;

        if (process_cgroup(0, c->unit_cgroup) < 0)
                c->unit_cgroup[0] = '\0';
        n = strlen(c->unit_cgroup);
        if (n < strlen(".service") || strcmp(c->unit_cgroup + n - strlen(".service"), ".service") != 0)
                c->unit_cgroup[0] = '\0';
}

/* Decides on a new connection (admission_decide over the open ones): NULL
 * to let it in (after closing *ret_displace, when set, to make room), else
 * why not (in buf). */
static const char *admission(const Control *c, const ControlPeer *peer, bool privileged,
                             Connection **ret_displace, char *buf, size_t size) {
        static const AdmissionLimits limits = {
                .max = CONTROL_CONNECTIONS_MAX, .reserved = CONTROL_RESERVED, .per_uid = CONTROL_PER_UID_MAX,
        };
        AdmissionSlot slots[CONTROL_CONNECTIONS_MAX];
        Connection *a = c->connections;
        size_t n = 0, victim;
        int r;

        /* Never more than the limit: admission_decide lets none in beyond it. */
        for (; a && n < ELEMENTSOF(slots); a = a->next)
                slots[n++] = (AdmissionSlot) { .uid = a->peer.uid, .privileged = a->privileged,
                                              .busy = a->pending || a->fill };
        r = admission_decide(&limits, slots, n, peer->uid, privileged, &victim, buf, size);
        *ret_displace = NULL;
        if (r < 0)
                return buf;
        if (r > 0) {
                for (a = c->connections; victim > 0; victim--)  /* slots[] is the list, in order */
                        a = a->next;
                *ret_displace = a;
        }
        return NULL;
}

/* Takes over cfd: lets it in, or refuses it with a line saying why. */
static void listener_admit(Control *c, int cfd) {
        _cleanup_free_ gid_t *groups = NULL;
        Connection *displace;
        const char *why;
        ControlPeer peer;
        bool privileged;
        char buf[128];
        int r;

        r = peer_read(cfd, &peer, &groups);
        if (r < 0) {
                log_debug_errno(r, "Failed to read the credentials of a control client, closing it: %m");
                close(cfd);
                return;
        }
        peer.in_container = peer_in_container(c, cfd, &peer);
        privileged = c->privileged ? c->privileged(&peer, c->userdata) : peer.uid == 0 && !peer.in_container;
        why = admission(c, &peer, privileged, &displace, buf, sizeof(buf));
        if (why) {
                /* A new socket's buffer is empty: this neither blocks nor writes short. */
                send_last_words(cfd, protocol_encode_busy(why));
                close(cfd);
                log_debug("Refused a control connection from uid %u (pid %d): %s", (unsigned) peer.uid,
                          (int) peer.pid, why);
                return;
        }
        if (displace) {
                log_debug("Closing control client pid %d (uid %u) to let uid %u in", (int) displace->peer.pid,
                          (unsigned) displace->peer.uid, (unsigned) peer.uid);
                if (displace->out_start == displace->out_end)
                        send_last_words(displace->fd,
                                        protocol_encode_busy("too many connections: closed to let another user in"));
                connection_free(displace);
        }
        r = connection_new(c, cfd, &peer, TAKE_PTR(groups), privileged);
        if (r < 0)
                log_debug_errno(r, "Failed to set up control connection: %m");
}

static int listener_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Control *c = userdata;

        (void) sd_event_source_set_enabled(c->listen_source, SD_EVENT_ON);
        return 0;
}

static int listener_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *c = userdata;

        for (unsigned i = 0; i < CONTROL_ACCEPT_BATCH; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), level;

                if (cfd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                        return 0;
                if (cfd < 0 && (errno == ECONNABORTED || errno == EPROTO))
                        continue;
                if (cfd < 0) {
                        level = errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM ?
                                LOG_DEBUG : LOG_WARNING;
                        log_full_errno(level, errno, "Failed to accept control connection, retrying: %m");
                        /* The client stays queued and a level-triggered listener would
                         * spin: pause it. If the timer cannot be armed, keep going. */
                        if (sd_event_source_set_time_relative(c->retry_source, CONTROL_RETRY_USEC) >= 0 &&
                            sd_event_source_set_enabled(c->retry_source, SD_EVENT_ONESHOT) >= 0)
                                (void) sd_event_source_set_enabled(c->listen_source, SD_EVENT_OFF);
                        return 0;
                }
                listener_admit(c, cfd);
        }
        return 0;
}

static int listen_inherited(int fd) {
        int flags, r;

        r = sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0);
        if (r <= 0)
                return r < 0 ? r : -ENOTSOCK;
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
                return -errno;
        return 0;
}

int control_socket_owner(const char *path, pid_t *ret_pid) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct ucred cred = { 0 };
        socklen_t len = sizeof(cred);
        _cleanup_close_ int fd = -1;
        struct stat st;

        *ret_pid = 0;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return 0;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                if (errno == ECONNREFUSED || errno == ENOENT)
                        return 0;               /* stale, left by a crash, or just gone */
                if (errno == EAGAIN)
                        return 1;               /* listening, its backlog full: who, we cannot tell */
                return -errno;
        }
        /* A Unix stream connection's peer credentials are the listener's. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
                *ret_pid = cred.pid;
        return 1;
}

/* Makes path's directory (0755) when it is missing, as systemd does for a
 * socket unit's ListenStream=: the default socket has a directory of its
 * own under /run, which is empty at boot. Only the last component: a
 * missing grandparent is a mistake in the config, left to bind() to say. */
static void make_parent(const char *path) {
        char dir[sizeof(((struct sockaddr_un *) 0)->sun_path)];
        char *slash;

        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return;
        *slash = '\0';
        if (mkdir(dir, 0755) == 0)
                log_info("Created %s for the control socket.", dir);
}

/* Returns a listening socket bound to path, or -errno (-EADDRINUSE: a
 * server answers there, and its socket is left alone). */
static int listen_path(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;
        pid_t owner;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        if (lstat(path, &st) >= 0) {
                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST;
                r = control_socket_owner(path, &owner);
                if (r != 0)
                        return r > 0 ? -EADDRINUSE : r;
                if (unlink(path) < 0 && errno != ENOENT)        /* stale, left by a crash */
                        return -errno;
        } else if (errno != ENOENT)
                return -errno;
        else
                make_parent(path);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        /* chmod, not fchmod, which does not reach the file. Anyone may ask for status. */
        if (chmod(path, 0666) < 0 || listen(fd, CONTROL_BACKLOG) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        return TAKE_FD(fd);
}

/* Someone still listens: a connection, or a local request's sink. */
static bool request_live(const ControlRequest *req) {
        return req->connection || req->sink;
}

/* Hands a line (taken over; NULL: out of memory) to req's client. */
static void request_send(ControlRequest *req, char *line) {
        if (req->connection) {
                connection_queue(req->connection, line);
                return;
        }
        if (req->sink && line)
                req->sink(line, req->sink_userdata);
        free(line);
}

/* Ends req, answered: its connection reads again (or writes its streamed
 * reply), its clocks restart; frees req. */
static void request_finish(ControlRequest *req) {
        Connection *conn = req->connection;

        if (conn) {
                conn->pending = NULL;
                conn->since = conn->line_start = control_now(conn->control);
                connection_kick(conn);
        }
        request_free(req);
}

/* Sends req's last line (taken over) and frees req. */
static void request_end(ControlRequest *req, char *line) {
        request_send(req, line);
        request_finish(req);
}

/* slice_waiting (slice.h): a client to accept, or a request to read, now:
 * what the loop serves before any job. Connections that wait for their
 * answer, or whose reply is still being written, want nothing read. */
static bool control_waiting(void *userdata) {
        Control *c = userdata;
        struct pollfd fds[1 + CONTROL_CONNECTIONS_MAX];
        int enabled = SD_EVENT_OFF;
        nfds_t n = 0;

        if (sd_event_source_get_enabled(c->listen_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                fds[n++] = (struct pollfd) { .fd = c->listen_fd, .events = POLLIN };
        for (Connection *conn = c->connections; conn && n < ELEMENTSOF(fds); conn = conn->next)
                if (connection_wants_input(conn))
                        fds[n++] = (struct pollfd) { .fd = conn->fd, .events = POLLIN };
        return n > 0 && poll(fds, n, 0) > 0;
}

int control_new(sd_event *e, const char *path, int listen_fd, control_handler_t handler,
                void *userdata, Control **ret) {
        Control *c;
        int r;

        assert(e && handler && ret && (listen_fd >= 0 || path));

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (Control) { .event = sd_event_ref(e), .listen_fd = -1, .handler = handler,
                         .userdata = userdata, .idle_usec = CONTROL_IDLE_USEC,
                         .line_usec = CONTROL_LINE_USEC, .output_max = CONTROL_OUTPUT_MAX };

        if (process_mount_ns(0, &c->host_ns[0]) >= 0)
                c->n_host_ns++;
        /* Needs CAP_SYS_PTRACE when the daemon's capabilities are fewer than PID 1's (the unit's). */
        if (process_mount_ns(1, &c->host_ns[c->n_host_ns]) >= 0)
                c->n_host_ns++;
        read_unit_cgroup(c);
        if (listen_fd >= 0) {
                r = listen_inherited(listen_fd);
                if (r < 0)
                        goto fail;
                c->listen_fd = listen_fd;
        } else {
                r = listen_path(path);
                if (r < 0)
                        goto fail;
                c->listen_fd = r;
                c->path = strdup(path);
                if (!c->path) {
                        (void) unlink(path);
                        r = -ENOMEM;
                        goto fail;
                }
        }
        r = sd_event_add_io(e, &c->listen_source, c->listen_fd, EPOLLIN, listener_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(e, &c->retry_source, CLOCK_MONOTONIC, CONTROL_RETRY_USEC,
                                               0, listener_retry, c);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->retry_source, SD_EVENT_OFF);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(c->listen_source, "control-listen");
        (void) sd_event_source_set_description(c->retry_source, "control-accept-retry");
        slice_waiting = control_waiting;
        slice_waiting_userdata = c;
        *ret = c;
        return 0;
fail:
        if (listen_fd >= 0)
                c->listen_fd = -1;      /* still the caller's */
        control_free(c);
        return r;
}

Control *control_free(Control *c) {
        if (!c)
                return NULL;
        if (slice_waiting_userdata == c) {
                slice_waiting = NULL;
                slice_waiting_userdata = NULL;
        }
        while (c->connections)
                connection_free(c->connections);
        sd_event_source_disable_unref(c->listen_source);
        sd_event_source_disable_unref(c->retry_source);
        if (c->listen_fd >= 0)
                close(c->listen_fd);
        if (c->path)
                (void) unlink(c->path);
        free(c->path);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

void control_set_privileged(Control *c, control_privileged_t privileged) {
        c->privileged = privileged;
}

unsigned control_connections(const Control *c) {
        return c->n_connections;
}

void control_set_idle_timeout(Control *c, usec_t usec) {
        assert(usec > 0);
        c->idle_usec = usec;
}

void control_set_line_timeout(Control *c, usec_t usec) {
        assert(usec > 0);
        c->line_usec = usec;
}

void control_set_output_max(Control *c, size_t bytes) {
        assert(bytes > 0);
        c->output_max = bytes;
}

const ControlPeer *control_request_peer(const ControlRequest *req) {
        return &req->peer;
}

ControlRequest *control_request_new_local(const ControlPeer *peer, control_sink_t sink, void *userdata) {
        ControlRequest *req;

        assert(peer && sink);
        req = request_new(peer);
        if (req) {
                req->sink = sink;
                req->sink_userdata = userdata;
        }
        return req;
}

void control_reply_ok(ControlRequest *req, json_object *result) {
        char *line = NULL;

        assert(req);
        if (request_live(req))
                line = protocol_encode_ok(result);
        if (line && strlen(line) > PROTOCOL_REPLY_MAX) {
                log_warning("Control reply of %zu bytes is too large, sending an error instead",
                            strlen(line));
                free(line);
                line = protocol_encode_error("reply too large");
        }
        request_end(req, line);
}

void control_reply_error(ControlRequest *req, const char *fmt, ...) {
        char *line = NULL;
        va_list ap;

        assert(req);
        if (request_live(req)) {
                va_start(ap, fmt);
                line = error_linev(fmt, ap);
                va_end(ap);
        }
        request_end(req, line);
}

void control_send_progress(ControlRequest *req, json_object *progress) {
        assert(req);
        if (!request_live(req))
                return;
        request_send(req, protocol_encode_progress(progress));
        if (req->connection)
                connection_kick(req->connection);
}

/* The whole streamed line for a local request's sink, or NULL (too large,
 * out of memory, fill failed). */
static char *stream_whole(control_fill_t fill, void *userdata) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, n;
        char *p;
        int r;

        do {
                if (len > PROTOCOL_REPLY_MAX)
                        return NULL;
                p = realloc(buf, len + CONTROL_SLICE_BYTES + 1);
                if (!p)
                        return NULL;
                buf = p;
                n = 0;
                r = fill(buf + len, CONTROL_SLICE_BYTES, &n, userdata);
                assert(n <= CONTROL_SLICE_BYTES);
                len += n;
                buf[len] = 0;
        } while (r > 0);
        return r == 0 && len <= PROTOCOL_REPLY_MAX ? TAKE_PTR(buf) : NULL;
}

void control_reply_stream(ControlRequest *req, control_fill_t fill, void (*free_userdata)(void *), void *userdata) {
        Connection *conn = req->connection;

        assert(req && fill);
        if (conn && !conn->drop) {
                assert(!conn->fill);
                conn->fill = fill;
                conn->fill_free = free_userdata;
                conn->fill_userdata = userdata;
                conn->fill_bytes = 0;
                request_finish(req);    /* the first slice on the connection's next turn */
                return;
        }
        if (!conn && req->sink)
                request_send(req, stream_whole(fill, userdata) ?: protocol_encode_error("reply too large"));
        if (free_userdata)
                free_userdata(userdata);
        request_finish(req);
}
