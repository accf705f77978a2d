/* SPDX-License-Identifier: MIT */
/* The control socket server against real Unix sockets in a temporary
 * directory, driven through its own sd-event loop with a hard deadline. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sockios.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/protocol.h"
#include "base/slice.h"
#include "control/control.h"
#include "fixture.h"

#define DEADLINE_USEC (60 * USEC_PER_SEC)     /* a hung test fails instead of hanging (ASan, loaded: slow) */
#define DEFERRED_MAX  8

typedef struct Client {
        int fd;
        char buf[1 << 16];
        size_t len;
        size_t total;           /* bytes received, including those already consumed */
        bool eof;
} Client;

typedef struct Fixture {
        char dir[64], path[128];
        sd_event *e;
        Control *c;
        unsigned calls;
        ControlPeer peer;
        ControlRequest *deferred[DEFERRED_MAX];
        unsigned n_deferred;
        size_t big_bytes;
        unsigned conns_at_answer;
        usec_t answered_at;             /* the loop's time when answer_later answered */
        Client *chatty;
        unsigned keepalives;
        bool everyone_privileged;       /* else uid 0 only */
        gid_t peer_groups[256];
        size_t n_peer_groups;
        char sunk[4][256];              /* lines a local request sent */
        unsigned n_sunk;
        size_t stream_written;          /* by stream_fill, of all streams */
        unsigned streams_freed;
} Fixture;

#define STREAM_PIECE 10000              /* stream_fill's most per call, less than a slice */

/* A streamed reply: the ok line of a string of f->big_bytes 's', written
 * at most STREAM_PIECE bytes a call. */
typedef struct Stream {
        Fixture *f;
        char *line;
        size_t len, pos;
} Stream;

static int stream_fill(char *buf, size_t size, size_t *ret_len, void *userdata) {
        Stream *st = userdata;
        size_t n = st->len - st->pos;

        assert_true(size >= CONTROL_SLICE_BYTES);
        n = n < STREAM_PIECE ? n : STREAM_PIECE;
        memcpy(buf, st->line + st->pos, n);
        st->pos += n;
        st->f->stream_written += n;
        *ret_len = n;
        return st->pos < st->len;
}

static void stream_free(void *userdata) {
        Stream *st = userdata;

        st->f->streams_freed++;
        free(st->line);
        free(st);
}

/* The line a "stream" request gets, malloc'd. */
static char *stream_line(size_t bytes) {
        char *line = malloc(bytes + 64);
        size_t n = strlen(PROTOCOL_OK_HEAD);

        assert_non_null(line);
        memcpy(line, PROTOCOL_OK_HEAD "\"", n + 1);
        memset(line + n + 1, 's', bytes);
        strcpy(line + n + 1 + bytes, "\"" PROTOCOL_OK_TAIL);
        return line;
}

/* Runs the loop for usec; returns how many times it dispatched an event. */
static unsigned run_for(Fixture *f, usec_t usec) {
        usec_t until = now_usec(CLOCK_MONOTONIC) + usec;
        unsigned n = 0;
        int r;

        while (now_usec(CLOCK_MONOTONIC) < until) {
                r = sd_event_run(f->e, until - now_usec(CLOCK_MONOTONIC));
                assert_true(r >= 0);
                n += r > 0;
        }
        return n;
}

static void handler(ControlRequest *req, const char *cmd, json_object *request, void *userdata) {
        Fixture *f = userdata;
        const ControlPeer *p = control_request_peer(req);

        f->calls++;
        f->peer = *p;
        f->n_peer_groups = p->n_groups < ELEMENTSOF(f->peer_groups) ? p->n_groups : ELEMENTSOF(f->peer_groups);
        if (f->n_peer_groups > 0)
                memcpy(f->peer_groups, p->groups, f->n_peer_groups * sizeof(gid_t));
        f->peer.groups = NULL;          /* borrowed from req, gone once answered */
        if (strcmp(cmd, "status") == 0) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "uid", json_object_new_int64(p->uid));
                json_object_object_add(o, "pid", json_object_new_int64(p->pid));
                control_reply_ok(req, o);
                json_object_put(o);
        } else if (strcmp(cmd, "big") == 0) {
                char *s = malloc(f->big_bytes + 1);
                json_object *o;

                assert_non_null(s);
                memset(s, 'b', f->big_bytes);
                s[f->big_bytes] = 0;
                o = json_object_new_string(s);
                control_reply_ok(req, o);
                json_object_put(o);
                free(s);
        } else if (strcmp(cmd, "stream") == 0) {
                Stream *st = calloc(1, sizeof(*st));

                assert_non_null(st);
                st->f = f;
                st->line = stream_line(f->big_bytes);
                st->len = strlen(st->line);
                control_reply_stream(req, stream_fill, stream_free, st);
        } else if (strcmp(cmd, "defer") == 0 || strcmp(cmd, "progress") == 0) {
                assert_true(f->n_deferred < DEFERRED_MAX);
                f->deferred[f->n_deferred++] = req;
                if (strcmp(cmd, "progress") == 0) {
                        json_object *o = json_object_new_object();

                        json_object_object_add(o, "done", json_object_new_int(1));
                        control_send_progress(req, o);
                        json_object_put(o);
                }
        } else
                control_reply_error(req, "unknown command '%s'", cmd);
}

/* Everyone privileged by default, so that the tests but the one about
 * limits do not depend on who runs them. */
static bool privileged(const ControlPeer *peer, void *userdata) {
        Fixture *f = userdata;

        return f->everyone_privileged || peer->uid == 0;
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        strcpy(f->dir, "/tmp/test-control-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/ck.sock", f->dir);
        assert_int_equal(sd_event_new(&f->e), 0);
        assert_int_equal(control_new(f->e, f->path, -1, handler, f, &f->c), 0);
        f->everyone_privileged = true;
        control_set_privileged(f->c, privileged);
        *state = f;
        return 0;
}

/* The tests' clock for slices: it stands where test_clock_at says. The
 * real one is put back by teardown, also after a failed assertion. */
static usec_t test_clock_at;
static usec_t test_clock(void) {
        return test_clock_at;
}
static usec_t (*real_slice_clock)(void);

static int teardown(void **state) {
        Fixture *f = *state;
        char p[192];

        if (real_slice_clock)
                slice_clock = real_slice_clock;
        f->c = control_free(f->c);
        for (unsigned i = 0; i < f->n_deferred; i++)
                if (f->deferred[i])
                        control_reply_error(f->deferred[i], "teardown");
        sd_event_unref(f->e);
        snprintf(p, sizeof(p), "%s/other.sock", f->dir);
        (void) unlink(p);
        (void) unlink(f->path);
        assert_int_equal(rmdir(f->dir), 0);
        free(f);
        return 0;
}

static void client_connect(Client *cl, const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        memset(cl, 0, sizeof(*cl));
        strcpy(sa.sun_path, path);
        cl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        assert_true(cl->fd >= 0);
        assert_int_equal(connect(cl->fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
}

static void client_close(Client *cl) {
        if (cl->fd >= 0)
                close(cl->fd);
        cl->fd = -1;
}

static void client_send(Client *cl, const char *data, size_t len) {
        assert_int_equal(send(cl->fd, data, len, MSG_NOSIGNAL), (ssize_t) len);
}
#define client_sends(cl, s) client_send((cl), (s), strlen(s))

/* Reads what is there without blocking; keeps the buffer (discards when full
 * if discard is set). Returns true once a whole line is buffered or EOF. */
static bool client_pump(Client *cl, bool discard) {
        for (;;) {
                ssize_t n;

                if (discard && cl->len == sizeof(cl->buf))
                        cl->len = 0;
                n = recv(cl->fd, cl->buf + cl->len, sizeof(cl->buf) - cl->len, MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        break;
                if (n <= 0) {   /* 0, or ECONNRESET after the server closed with our input unread */
                        assert_true(n == 0 || errno == ECONNRESET);
                        cl->eof = true;
                        break;
                }
                cl->len += (size_t) n;
                cl->total += (size_t) n;
        }
        return cl->eof || memchr(cl->buf, '\n', cl->len);
}

/* Waits for the next line (newline stripped); returns false on EOF instead. */
static bool client_line(Fixture *f, Client *cl, char *line, size_t size) {
        char *nl;
        size_t n;

        RUN_UNTIL(f, client_pump(cl, false));
        nl = memchr(cl->buf, '\n', cl->len);
        if (!nl)
                return false;
        n = (size_t) (nl - cl->buf);
        assert_true(n < size);
        memcpy(line, cl->buf, n);
        line[n] = 0;
        memmove(cl->buf, nl + 1, cl->len - n - 1);
        cl->len -= n + 1;
        return true;
}

/* Waits for a reply of kind want in this protocol version; returns its
 * value (caller unrefs) and leaves its message in err. */
static json_object *client_reply(Fixture *f, Client *cl, ProtocolReplyKind want, char *err, size_t errlen) {
        ProtocolReply reply;
        char line[4096];

        assert_true(client_line(f, cl, line, sizeof(line)));
        assert_int_equal(protocol_decode_reply(line, &reply, err, errlen), 0);
        assert_int_equal(reply.kind, want);
        assert_int_equal(reply.version, PROTOCOL_VERSION);
        return reply.value;
}

/* Waits for an ok reply and returns its result (caller unrefs). */
static json_object *client_ok(Fixture *f, Client *cl) {
        char err[256];

        return client_reply(f, cl, PROTOCOL_REPLY_OK, err, sizeof(err));
}

/* Waits for an error reply of the kind want (an error, or turned away) and
 * checks its message starts with prefix. */
static void client_error_kind(Fixture *f, Client *cl, ProtocolReplyKind want, const char *prefix) {
        char err[256];

        assert_null(client_reply(f, cl, want, err, sizeof(err)));
        if (strncmp(err, prefix, strlen(prefix)) != 0)
                fail_msg("error \"%s\", want \"%s...\"", err, prefix);
}
#define client_error(f, cl, prefix) client_error_kind((f), (cl), PROTOCOL_REPLY_ERROR, (prefix))
#define client_busy(f, cl, prefix)  client_error_kind((f), (cl), PROTOCOL_REPLY_BUSY, (prefix))

static void client_expect_eof(Fixture *f, Client *cl) {
        char line[4096];

        assert_false(client_line(f, cl, line, sizeof(line)));
        assert_int_equal(cl->len, 0);
}

static int64_t get_int(json_object *o, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(o, key, &v));
        return json_object_get_int64(v);
}

static void client_status(Fixture *f, Client *cl) {
        json_object *r;

        client_sends(cl, "{\"cmd\":\"status\"}\n");
        r = client_ok(f, cl);
        assert_int_equal(get_int(r, "uid"), getuid());
        json_object_put(r);
}

static void test_status_and_peer(void **state) {
        Fixture *f = *state;
        Client cl;
        json_object *r;

        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":\"status\"}\n");
        r = client_ok(f, &cl);
        assert_int_equal(get_int(r, "uid"), getuid());
        assert_int_equal(get_int(r, "pid"), getpid());
        assert_int_equal(f->peer.gid, getegid());
        json_object_put(r);
        assert_int_equal(control_connections(f->c), 1);

        /* A client that half-closes after its request still gets the answer, then EOF. */
        client_sends(&cl, "{\"cmd\":\"nope\"}");
        assert_int_equal(shutdown(cl.fd, SHUT_WR), 0);
        client_error(f, &cl, "unknown command 'nope'");
        client_expect_eof(f, &cl);
        RUN_UNTIL(f, control_connections(f->c) == 0);
        assert_int_equal(f->calls, 2);
        client_close(&cl);
}

static void test_garbage_then_good(void **state) {
        Fixture *f = *state;
        Client cl;

        client_connect(&cl, f->path);
        client_sends(&cl, "hello\n");
        client_error(f, &cl, "request is not one JSON object");
        client_sends(&cl, "{\"nocmd\":1}\n");
        client_error(f, &cl, "request must be an object with a string \"cmd\"");
        client_send(&cl, "{\"cmd\":\"status\"}\0x\n", 19);
        client_error(f, &cl, "request contains a NUL byte");
        assert_int_equal(f->calls, 0);

        client_sends(&cl, "\n\n");      /* ignored: the next line read is the status reply */
        client_status(f, &cl);
        assert_int_equal(f->calls, 1);
        assert_int_equal(control_connections(f->c), 1);
        client_close(&cl);
}

static void test_request_too_long(void **state) {
        Fixture *f = *state;
        char line[PROTOCOL_REQUEST_MAX + 1000];
        const char *head = "{\"cmd\":\"status\",\"pad\":\"";
        size_t n = strlen(head);
        Client cl;
        json_object *r;

        /* Exactly PROTOCOL_REQUEST_MAX bytes, newline included: accepted. */
        memcpy(line, head, n);
        memset(line + n, 'p', PROTOCOL_REQUEST_MAX - n - 3);
        memcpy(line + PROTOCOL_REQUEST_MAX - 3, "\"}\n", 3);
        client_connect(&cl, f->path);
        client_send(&cl, line, PROTOCOL_REQUEST_MAX);
        r = client_ok(f, &cl);
        json_object_put(r);

        /* One byte more: answered with an error, then closed. */
        memset(line, 'x', sizeof(line));
        line[sizeof(line) - 1] = '\n';
        client_send(&cl, line, sizeof(line));
        client_error(f, &cl, "request too long (max 4096 bytes)");
        client_expect_eof(f, &cl);
        RUN_UNTIL(f, control_connections(f->c) == 0);
        assert_int_equal(f->calls, 1);
        client_close(&cl);
}

static void test_connection_limit(void **state) {
        Fixture *f = *state;
        enum { N = CONTROL_CONNECTIONS_MAX + 20 };
        static Client cl[N];
        Client late;
        unsigned refused = 0;

        for (unsigned i = 0; i < N; i++)
                client_connect(&cl[i], f->path);
        RUN_UNTIL(f, control_connections(f->c) == CONTROL_CONNECTIONS_MAX &&
                             client_pump(&cl[N - 1], false));
        /* The kernel queues connections in order: the last 20 are the extras. */
        for (unsigned i = CONTROL_CONNECTIONS_MAX; i < N; i++) {
                client_busy(f, &cl[i], "too many connections");
                client_expect_eof(f, &cl[i]);
                refused++;
        }
        assert_int_equal(refused, 20);
        client_status(f, &cl[0]);
        client_status(f, &cl[CONTROL_CONNECTIONS_MAX - 1]);
        assert_int_equal(control_connections(f->c), CONTROL_CONNECTIONS_MAX);

        for (unsigned i = 0; i < N; i++)
                client_close(&cl[i]);
        RUN_UNTIL(f, control_connections(f->c) == 0);
        client_connect(&late, f->path);
        client_status(f, &late);
        client_close(&late);
}

/* Connects as effective uid uid: SO_PEERCRED takes the effective uid at
 * connect. Root only; f->dir must be searchable. */
static void client_connect_as(Client *cl, const char *path, uid_t uid) {
        assert_int_equal(seteuid(uid), 0);
        client_connect(cl, path);
        assert_int_equal(seteuid(0), 0);
}

/* Asks for status; the answer says which uid the daemon saw. */
static void client_status_uid(Fixture *f, Client *cl, uid_t uid) {
        json_object *r;

        client_sends(cl, "{\"cmd\":\"status\"}\n");
        r = client_ok(f, cl);
        assert_int_equal(get_int(r, "uid"), uid);
        json_object_put(r);
}

/* One user cannot take more than its share; users together cannot take the
 * slots reserved for the privileged; a newcomer displaces the biggest holder. */
static void test_limits_per_user_and_reserved(void **state) {
        Fixture *f = *state;
        enum { OPEN = CONTROL_CONNECTIONS_MAX - CONTROL_RESERVED, USERS = OPEN / CONTROL_PER_UID_MAX };
        static Client cl[CONTROL_CONNECTIONS_MAX];
        Client extra;
        unsigned n = 0, displaced = 0;
        char line[256];

        if (geteuid() != 0)
                skip();         /* other uids connecting need root */
        assert_int_equal(OPEN % CONTROL_PER_UID_MAX, 0);
        f->everyone_privileged = false;
        assert_int_equal(chmod(f->dir, 0755), 0);

        /* One user: CONTROL_PER_UID_MAX, then refused with its uid named. */
        for (unsigned i = 0; i < CONTROL_PER_UID_MAX; i++)
                client_connect_as(&cl[n++], f->path, 60000);
        RUN_UNTIL(f, control_connections(f->c) == CONTROL_PER_UID_MAX);
        client_connect_as(&extra, f->path, 60000);
        snprintf(line, sizeof(line), "too many connections from uid 60000 (at most %u)", CONTROL_PER_UID_MAX);
        client_busy(f, &extra, line);
        client_expect_eof(f, &extra);
        client_close(&extra);

        /* More users fill every slot that is not reserved. */
        for (unsigned u = 1; u < USERS; u++)
                for (unsigned i = 0; i < CONTROL_PER_UID_MAX; i++)
                        client_connect_as(&cl[n++], f->path, 60000 + u);
        RUN_UNTIL(f, control_connections(f->c) == OPEN);

        /* A newcomer gets in all the same: one connection of a user who
         * holds the most is closed, with a word why. */
        client_connect_as(&extra, f->path, 61000);
        client_status_uid(f, &extra, 61000);
        for (unsigned i = 0; i < n; i++)
                if (client_pump(&cl[i], false)) {
                        client_busy(f, &cl[i], "too many connections: closed to let another user in");
                        client_expect_eof(f, &cl[i]);
                        displaced++;
                }
        assert_int_equal(displaced, 1);
        assert_int_equal(control_connections(f->c), OPEN);

        /* Root has the reserved slots; then the total is reached, for all. */
        for (unsigned i = 0; i < CONTROL_RESERVED; i++)
                client_connect_as(&cl[n++], f->path, 0);
        RUN_UNTIL(f, control_connections(f->c) == CONTROL_CONNECTIONS_MAX);
        client_status_uid(f, &cl[n - 1], 0);
        client_status_uid(f, &cl[1], 60000);
        for (uid_t uid = 0; uid <= 61001; uid += 61001) {
                Client late;

                client_connect_as(&late, f->path, uid);
                client_busy(f, &late, "too many connections");
                client_expect_eof(f, &late);
                client_close(&late);
        }
        assert_int_equal(control_connections(f->c), CONTROL_CONNECTIONS_MAX);
        for (unsigned i = 0; i < n; i++)
                client_close(&cl[i]);
        client_close(&extra);
        RUN_UNTIL(f, control_connections(f->c) == 0);
}

/* The supplementary groups come from the socket, however many. */
static void test_peer_groups(void **state) {
        Fixture *f = *state;
        gid_t saved[256], want[256];
        int n_saved = getgroups((int) ELEMENTSOF(saved), saved), n_want;
        Client cl;

        assert_true(n_saved >= 0);
        if (geteuid() == 0) {
                n_want = 100;   /* more than the daemon reads at once */
                for (int i = 0; i < n_want; i++)
                        want[i] = 70000 + (gid_t) i;
                assert_int_equal(setgroups((size_t) n_want, want), 0);
        } else {
                n_want = n_saved;
                memcpy(want, saved, sizeof(saved));
        }
        client_connect(&cl, f->path);
        if (geteuid() == 0)
                assert_int_equal(setgroups((size_t) n_saved, saved), 0);
        client_status(f, &cl);
        assert_int_equal(f->n_peer_groups, n_want);
        for (int i = 0; i < n_want; i++)
                assert_int_equal(f->peer_groups[i], want[i]);
        client_close(&cl);
}

static void sink(const char *line, void *userdata) {
        Fixture *f = userdata;

        assert_true(f->n_sunk < ELEMENTSOF(f->sunk));
        snprintf(f->sunk[f->n_sunk++], sizeof(f->sunk[0]), "%s", line);
}

/* A request from no connection: the peer is copied, the lines go to the sink. */
static void test_local_request(void **state) {
        Fixture *f = *state;
        gid_t groups[2] = { 5, 7 };
        ControlPeer peer = { .pid = 1, .uid = 4242, .gid = 4243, .groups = groups, .n_groups = 2 };
        ControlRequest *req = control_request_new_local(&peer, sink, f);
        const ControlPeer *p;
        json_object *o;

        assert_non_null(req);
        groups[0] = 99;
        p = control_request_peer(req);
        assert_int_equal(p->uid, 4242);
        assert_int_equal(p->gid, 4243);
        assert_int_equal(p->n_groups, 2);
        assert_int_equal(p->groups[0], 5);
        assert_int_equal(p->groups[1], 7);
        o = json_object_new_object();
        json_object_object_add(o, "n", json_object_new_int(1));
        control_send_progress(req, o);
        json_object_put(o);
        /* What a client sent comes back as valid UTF-8. */
        control_reply_error(req, "no cache named '%s'", "a\xff\xc3\xa9");
        assert_int_equal(f->n_sunk, 2);
        assert_string_equal(f->sunk[0], "{\"progress\":{\"n\":1}}\n");
        assert_string_equal(f->sunk[1], "{\"ok\":false,\"error\":\"no cache named 'a\xef\xbf\xbd\xc3\xa9'\",\"protocol\":1}\n");
}

static int answer_later(sd_event_source *s, uint64_t usec, void *userdata) {
        Fixture *f = userdata;
        json_object *o = json_object_new_string("late");

        f->conns_at_answer = control_connections(f->c);
        f->answered_at = event_now(f->e, CLOCK_MONOTONIC);   /* the idle timer starts no earlier */
        control_reply_ok(f->deferred[0], o);
        f->deferred[0] = NULL;
        json_object_put(o);
        return 0;
}

/* The idle timeout in test_idle_timeout, and how often chatty asks for
 * status: far apart, so that a stall of the whole process (a loaded
 * machine) of up to IDLE - KEEPALIVE cannot close chatty. */
#define IDLE_USEC      (1 * USEC_PER_SEC)
#define KEEPALIVE_USEC (25 * USEC_PER_MSEC)

/* Sends a request every KEEPALIVE_USEC (its answer restarts the idle
 * timer) and throws the answers away. */
static int keepalive(sd_event_source *s, uint64_t usec, void *userdata) {
        Fixture *f = userdata;

        (void) client_pump(f->chatty, true);
        f->chatty->len = 0;
        client_sends(f->chatty, "{\"cmd\":\"status\"}\n");
        f->keepalives++;
        return sd_event_source_set_time_relative(s, KEEPALIVE_USEC);
}

static void test_idle_timeout(void **state) {
        Fixture *f = *state;
        sd_event_source *ka = NULL;
        Client idle, busy, chatty;
        json_object *r;
        usec_t start;

        control_set_idle_timeout(f->c, IDLE_USEC);
        client_connect(&idle, f->path);
        client_connect(&busy, f->path);
        client_connect(&chatty, f->path);
        f->chatty = &chatty;
        assert_int_equal(sd_event_add_time_relative(f->e, &ka, CLOCK_MONOTONIC, KEEPALIVE_USEC,
                                                    1, keepalive, f), 0);
        assert_int_equal(sd_event_source_set_enabled(ka, SD_EVENT_ON), 0);
        client_sends(&busy, "{\"cmd\":\"defer\"}\n");
        start = now_usec(CLOCK_MONOTONIC);
        RUN_UNTIL(f, f->n_deferred == 1);
        assert_int_equal(sd_event_add_time_relative(f->e, NULL, CLOCK_MONOTONIC, 4 * IDLE_USEC,
                                                    1, answer_later, f), 0);

        client_expect_eof(f, &idle);
        assert_true(now_usec(CLOCK_MONOTONIC) - start >= IDLE_USEC);
        RUN_UNTIL(f, f->deferred[0] == NULL);
        /* The pending request outlived four idle timeouts, and its client got
         * the answer; the client asking all along is still there too. */
        assert_int_equal(f->conns_at_answer, 2);
        r = client_ok(f, &busy);
        assert_string_equal(json_object_get_string(r), "late");
        json_object_put(r);
        assert_false(chatty.eof);
        /* Once answered, the idle timer runs again; once quiet, chatty goes too. */
        client_expect_eof(f, &busy);
        /* From the answer, not from when this test saw it: a stall in
         * between (a loaded machine) must not make the timeout look short. */
        assert_true(now_usec(CLOCK_MONOTONIC) - f->answered_at >= IDLE_USEC);
        assert_int_equal(control_connections(f->c), 1);
        ka = sd_event_source_disable_unref(ka);
        RUN_UNTIL(f, client_pump(&chatty, true) && chatty.eof);
        assert_int_equal(control_connections(f->c), 0);
        assert_int_equal(f->calls, 1 + f->keepalives);
        client_close(&idle);
        client_close(&busy);
        client_close(&chatty);
}

/* Sends text on f->chatty every 20 ms. */
static const char *drip_text;
static int drip(sd_event_source *s, uint64_t usec, void *userdata) {
        Fixture *f = userdata;

        if (f->chatty->fd >= 0 && !f->chatty->eof)
                (void) send(f->chatty->fd, drip_text, strlen(drip_text), MSG_NOSIGNAL | MSG_DONTWAIT);
        return sd_event_source_set_time_relative(s, 20 * USEC_PER_MSEC);
}

/* A drip of bytes restarts no clock: a line must be whole within the line
 * timeout of its first byte, and empty lines are not requests. */
static void test_drip_keeps_nothing_open(void **state) {
        Fixture *f = *state;
        sd_event_source *s = NULL;
        usec_t start;
        Client cl;

        /* Bytes of a line that never ends, with a long idle timeout: closed
         * at the line timeout, with a word why. */
        control_set_idle_timeout(f->c, 60 * USEC_PER_SEC);
        control_set_line_timeout(f->c, 300 * USEC_PER_MSEC);
        client_connect(&cl, f->path);
        f->chatty = &cl;
        drip_text = "{";
        assert_int_equal(sd_event_add_time_relative(f->e, &s, CLOCK_MONOTONIC, 0, 1, drip, f), 0);
        assert_int_equal(sd_event_source_set_enabled(s, SD_EVENT_ON), 0);
        start = now_usec(CLOCK_MONOTONIC);
        client_error(f, &cl, "request not complete within 300 ms of its first byte");
        client_expect_eof(f, &cl);
        assert_true(now_usec(CLOCK_MONOTONIC) - start >= 300 * USEC_PER_MSEC);
        client_close(&cl);

        /* Empty lines, with a long line timeout: closed at the idle timeout. */
        control_set_idle_timeout(f->c, 300 * USEC_PER_MSEC);
        control_set_line_timeout(f->c, 60 * USEC_PER_SEC);
        client_connect(&cl, f->path);
        drip_text = "\n";
        start = now_usec(CLOCK_MONOTONIC);
        client_expect_eof(f, &cl);
        assert_true(now_usec(CLOCK_MONOTONIC) - start >= 300 * USEC_PER_MSEC);
        client_close(&cl);
        s = sd_event_source_disable_unref(s);
        RUN_UNTIL(f, control_connections(f->c) == 0);
        assert_int_equal(f->calls, 0);

        /* A line sent in pieces, whole in time, is answered; after the
         * answer, the next line gets its own time. */
        control_set_line_timeout(f->c, 2 * USEC_PER_SEC);
        control_set_idle_timeout(f->c, 2 * USEC_PER_SEC);
        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":");
        (void) run_for(f, 100 * USEC_PER_MSEC);
        client_sends(&cl, "\"status\"}\n{\"cmd\"");
        json_object_put(client_ok(f, &cl));
        (void) run_for(f, 100 * USEC_PER_MSEC);
        client_sends(&cl, ":\"status\"}\n");
        json_object_put(client_ok(f, &cl));
        assert_int_equal(f->calls, 2);
        client_close(&cl);
}

static void test_non_reader_dropped(void **state) {
        Fixture *f = *state;
        enum { REQUESTS = 64 };
        Client slow, other;

        f->big_bytes = 256 << 10;
        control_set_output_max(f->c, 1 << 20);
        client_connect(&slow, f->path);
        for (unsigned i = 0; i < REQUESTS; i++)
                client_sends(&slow, "{\"cmd\":\"big\"}\n");
        RUN_UNTIL(f, f->calls > 0);

        client_connect(&other, f->path);
        client_status(f, &other);
        RUN_UNTIL(f, control_connections(f->c) == 1);  /* slow is gone, other remains */
        assert_true(f->calls < REQUESTS);

        RUN_UNTIL(f, client_pump(&slow, true) && slow.eof);
        assert_true(slow.total < (size_t) REQUESTS * f->big_bytes);
        client_status(f, &other);
        client_close(&slow);
        client_close(&other);
}

/* Reads a pipe's worth without blocking into *buf (grown; *len bytes):
 * returns how many newlines came. */
static unsigned client_take(Client *cl, char **buf, size_t *len) {
        unsigned lines = 0;
        ssize_t n;

        while ((n = recv(cl->fd, cl->buf, sizeof(cl->buf), MSG_DONTWAIT)) > 0) {
                *buf = realloc(*buf, *len + (size_t) n + 1);
                assert_non_null(*buf);
                memcpy(*buf + *len, cl->buf, (size_t) n);
                for (ssize_t i = 0; i < n; i++)
                        lines += cl->buf[i] == '\n';
                *len += (size_t) n;
                (*buf)[*len] = 0;
        }
        assert_true(n < 0 && (errno == EAGAIN || errno == EINTR));   /* never EOF */
        return lines;
}

/* Reads until lines whole lines are in *buf (malloc'd, *len bytes). */
static void client_drain(Fixture *f, Client *cl, char **buf, size_t *len, unsigned lines) {
        unsigned seen = 0;

        *buf = NULL;
        *len = 0;
        RUN_UNTIL(f, (seen += client_take(cl, buf, len)) >= lines);
}

/* A streamed reply: written a slice at a time, only as its client reads,
 * never holding up another client; whole and in order, the next request
 * of the connection answered after it; its userdata freed once, also when
 * the client goes midway. */
static void test_streamed_reply(void **state) {
        Fixture *f = *state;
        _cleanup_free_ char *want = NULL, *got = NULL;
        Client a, b, c;
        size_t len, n;
        json_object *o;

        f->big_bytes = 3 << 20;
        want = stream_line(f->big_bytes);
        /* The stream counts from its answer like any reply: on a loaded
         * machine under ASan, 3 MB can take longer than the default 10 s. */
        control_set_idle_timeout(f->c, 120 * USEC_PER_SEC);
        client_connect(&a, f->path);
        client_sends(&a, "{\"cmd\":\"stream\"}\n{\"cmd\":\"status\"}\n");
        RUN_UNTIL(f, f->stream_written > 0);
        (void) run_for(f, 200 * USEC_PER_MSEC);
        /* a reads nothing: what was written is what its socket holds, and a
         * slice or two, far from the whole */
        print_message("written while nobody read: %zu bytes\n", f->stream_written);
        assert_true(f->stream_written < (1u << 20));
        assert_int_equal(f->calls, 1);

        client_connect(&b, f->path);
        client_status(f, &b);                   /* not held up */

        client_drain(f, &a, &got, &len, 2);
        n = strlen(want);
        assert_true(len > n);
        assert_memory_equal(got, want, n);      /* the whole line, then status */
        o = json_tokener_parse(got + n);
        assert_int_equal(get_int(o, "ok"), 1);
        json_object_put(o);
        assert_int_equal(f->calls, 3);
        assert_int_equal(f->streams_freed, 1);

        /* A client that goes midway: its stream is freed with it. */
        n = f->stream_written;
        client_connect(&c, f->path);
        client_sends(&c, "{\"cmd\":\"stream\"}\n");
        RUN_UNTIL(f, f->stream_written > n + 100000);
        client_close(&c);
        RUN_UNTIL(f, f->streams_freed == 2);
        client_close(&a);
        client_close(&b);
        RUN_UNTIL(f, control_connections(f->c) == 0);
}

static void test_disconnect_while_pending(void **state) {
        Fixture *f = *state;
        json_object *o = json_object_new_int(7);
        Client cl;

        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":\"defer\"}\n");
        RUN_UNTIL(f, f->n_deferred == 1);
        client_close(&cl);
        RUN_UNTIL(f, control_connections(f->c) == 0);
        /* Detached: still valid, answering writes nothing and frees it. */
        assert_int_equal(control_request_peer(f->deferred[0])->uid, getuid());
        control_send_progress(f->deferred[0], o);
        control_reply_ok(f->deferred[0], o);
        f->deferred[0] = NULL;
        json_object_put(o);

        /* Same after control_free, which must also remove the socket file. */
        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":\"defer\"}\n");
        RUN_UNTIL(f, f->n_deferred == 2);
        f->c = control_free(f->c);
        assert_int_equal(access(f->path, F_OK), -1);
        control_reply_error(f->deferred[1], "too late");
        f->deferred[1] = NULL;
        client_expect_eof(f, &cl);
        client_close(&cl);
}

static void test_progress_then_reply(void **state) {
        Fixture *f = *state;
        char line[256];
        json_object *o;
        Client cl;

        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":\"progress\"}\n");
        assert_true(client_line(f, &cl, line, sizeof(line)));
        assert_string_equal(line, "{\"progress\":{\"done\":1}}");

        o = json_object_new_int(2);
        control_send_progress(f->deferred[0], o);
        json_object_put(o);
        assert_true(client_line(f, &cl, line, sizeof(line)));
        assert_string_equal(line, "{\"progress\":2}");

        control_reply_ok(f->deferred[0], NULL);
        f->deferred[0] = NULL;
        assert_true(client_line(f, &cl, line, sizeof(line)));
        assert_string_equal(line, "{\"ok\":true,\"protocol\":1}");
        client_close(&cl);
}

static void answer_first(Fixture *f, unsigned i) {
        json_object *o = json_object_new_string("first");

        control_reply_ok(f->deferred[i], o);
        f->deferred[i] = NULL;
        json_object_put(o);
}

static void test_one_request_at_a_time(void **state) {
        Fixture *f = *state;
        static const char more_line[] = "{\"cmd\":\"xyzzy\"}\n";
        enum { N = sizeof(more_line) - 1, MORE = 2 * PROTOCOL_REQUEST_MAX / N }; /* > the input buffer */
        char more[MORE * N];
        int unread, unread2;
        json_object *o;
        Client cl;

        /* Two requests in one write: the second waits for the first's answer. */
        client_connect(&cl, f->path);
        client_sends(&cl, "{\"cmd\":\"defer\"}\n{\"cmd\":\"status\"}\n");
        RUN_UNTIL(f, f->n_deferred == 1);
        (void) run_for(f, 100 * USEC_PER_MSEC);
        assert_int_equal(f->calls, 1);
        assert_false(client_pump(&cl, false));
        answer_first(f, 0);
        assert_int_equal(f->calls, 1);          /* not dispatched from inside the reply */
        o = client_ok(f, &cl);
        assert_string_equal(json_object_get_string(o), "first");
        json_object_put(o);
        o = client_ok(f, &cl);
        assert_int_equal(get_int(o, "pid"), getpid());
        json_object_put(o);
        assert_int_equal(f->calls, 2);

        /* More than the input buffer arrives while a request is pending: it
         * waits in the kernel, the loop sleeps instead of spinning on EPOLLIN,
         * and afterwards all of it is read and answered in order. */
        for (unsigned i = 0; i < MORE; i++)
                memcpy(more + i * N, more_line, N);
        client_sends(&cl, "{\"cmd\":\"defer\"}\n");
        RUN_UNTIL(f, f->n_deferred == 2);
        for (size_t off = 0; off < sizeof(more); off += 1024)   /* several skbs, so reads show */
                client_send(&cl, more + off, sizeof(more) - off < 1024 ? sizeof(more) - off : 1024);
        assert_int_equal(ioctl(cl.fd, SIOCOUTQ, &unread), 0);
        assert_true(run_for(f, 200 * USEC_PER_MSEC) <= 2);
        assert_int_equal(ioctl(cl.fd, SIOCOUTQ, &unread2), 0);
        assert_int_equal(unread2, unread);      /* nothing was read meanwhile */
        assert_int_equal(f->calls, 3);
        answer_first(f, 1);
        o = client_ok(f, &cl);
        assert_string_equal(json_object_get_string(o), "first");
        json_object_put(o);
        for (unsigned i = 0; i < MORE; i++)
                client_error(f, &cl, "unknown command 'xyzzy'");
        assert_int_equal(f->calls, 3 + MORE);
        client_close(&cl);
}

static void test_inherited_fd(void **state) {
        Fixture *f = *state;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        Control *c = NULL;
        Client cl;
        int fd;

        f->c = control_free(f->c);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/other.sock", f->dir);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 16), 0);
        assert_int_equal(control_new(f->e, NULL, fd, handler, f, &c), 0);
        f->c = c;

        client_connect(&cl, sa.sun_path);
        client_status(f, &cl);
        client_close(&cl);
        f->c = control_free(f->c);
        assert_int_equal(access(sa.sun_path, F_OK), 0);        /* not ours to unlink */
        assert_int_equal(fcntl(fd, F_GETFD), -1);              /* but the fd was ours to close */

        /* A socket that does not listen is refused and stays the caller's. */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(control_new(f->e, NULL, fd, handler, f, &c), -ENOTSOCK);
        assert_int_equal(close(fd), 0);
}

/* A slice of a job ends early once it has run SLICE_MIN_USEC when a client
 * waits to be accepted or a request waits to be read: a status waits for a
 * fraction of the slice, not all of it. Not for a client who sent nothing
 * or one whose request is being answered; not before SLICE_MIN_USEC. */
static void test_slice_ends_for_a_waiting_request(void **state) {
        Fixture *f = *state;
        SliceBudget sb;
        Client cl, quiet;

        real_slice_clock = slice_clock;
        slice_clock = test_clock;
        test_clock_at = 1000000;
        slice_begin(&sb, SLICE_USEC, 1);
        test_clock_at += SLICE_MIN_USEC;
        assert_false(slice_over(&sb));                  /* nobody waits */
        client_connect(&quiet, f->path);                /* a client to accept */
        test_clock_at += SLICE_ASK_USEC;
        assert_true(slice_over(&sb));
        RUN_UNTIL(f, control_connections(f->c) == 1);   /* accepted: it sends nothing */
        slice_begin(&sb, SLICE_USEC, 1);
        test_clock_at += SLICE_MIN_USEC;
        assert_false(slice_over(&sb));
        client_connect(&cl, f->path);
        RUN_UNTIL(f, control_connections(f->c) == 2);
        client_sends(&cl, "{\"cmd\":\"defer\"}\n");       /* a request to read */
        slice_begin(&sb, SLICE_USEC, 1);
        test_clock_at += SLICE_MIN_USEC - 1;
        assert_false(slice_over(&sb));                  /* too early */
        test_clock_at += SLICE_ASK_USEC;
        assert_true(slice_over(&sb));
        RUN_UNTIL(f, f->n_deferred == 1);               /* read; its answer is the handler's */
        slice_begin(&sb, SLICE_USEC, 1);
        test_clock_at += SLICE_USEC - 1;
        assert_false(slice_over(&sb));
        test_clock_at += 1;
        assert_true(slice_over(&sb));                   /* its time is up */
        answer_first(f, 0);
        client_close(&cl);
        client_close(&quiet);
        f->c = control_free(f->c);                      /* gone: nobody is asked */
        assert_null(slice_waiting);
}

static void test_bind_path(void **state) {
        Fixture *f = *state;
        struct stat st;
        Control *c = (Control *) 0x1;
        FILE *fp;

        /* The fixture replaced nothing; now replace a stale socket left by a crash. */
        f->c = control_free(f->c);
        {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int fd = socket(AF_UNIX, SOCK_STREAM, 0);

                strcpy(sa.sun_path, f->path);
                assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
                close(fd);
        }
        assert_int_equal(control_new(f->e, f->path, -1, handler, f, &f->c), 0);
        assert_int_equal(lstat(f->path, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0666);

        /* One that answers is no stale socket: refused, and left alone. */
        {
                struct stat again;
                pid_t owner = 0;

                assert_int_equal(control_socket_owner(f->path, &owner), 1);
                assert_int_equal(owner, getpid());
                assert_int_equal(control_new(f->e, f->path, -1, handler, f, &c), -EADDRINUSE);
                assert_ptr_equal(c, (Control *) 0x1);
                assert_int_equal(lstat(f->path, &again), 0);
                assert_true(again.st_ino == st.st_ino);
        }
        f->c = control_free(f->c);
        assert_int_equal(access(f->path, F_OK), -1);
        {
                pid_t owner = 1;

                assert_int_equal(control_socket_owner(f->path, &owner), 0);
                assert_int_equal(owner, 0);
        }

        /* Anything else at the path is left alone. */
        fp = fopen(f->path, "w");
        assert_non_null(fp);
        fputs("keep", fp);
        fclose(fp);
        assert_int_equal(control_new(f->e, f->path, -1, handler, f, &c), -EEXIST);
        assert_ptr_equal(c, (Control *) 0x1);
        assert_int_equal(lstat(f->path, &st), 0);
        assert_true(S_ISREG(st.st_mode) && st.st_size == 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_status_and_peer, setup, teardown),
                cmocka_unit_test_setup_teardown(test_garbage_then_good, setup, teardown),
                cmocka_unit_test_setup_teardown(test_request_too_long, setup, teardown),
                cmocka_unit_test_setup_teardown(test_connection_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_limits_per_user_and_reserved, setup, teardown),
                cmocka_unit_test_setup_teardown(test_peer_groups, setup, teardown),
                cmocka_unit_test_setup_teardown(test_local_request, setup, teardown),
                cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_drip_keeps_nothing_open, setup, teardown),
                cmocka_unit_test_setup_teardown(test_non_reader_dropped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_streamed_reply, setup, teardown),
                cmocka_unit_test_setup_teardown(test_disconnect_while_pending, setup, teardown),
                cmocka_unit_test_setup_teardown(test_progress_then_reply, setup, teardown),
                cmocka_unit_test_setup_teardown(test_one_request_at_a_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inherited_fd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bind_path, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slice_ends_for_a_waiting_request, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
