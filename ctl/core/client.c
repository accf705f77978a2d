/* SPDX-License-Identifier: MIT */
/* cachectl's side of the socket (client.h): connect without blocking past
 * the timeout, send, read the reply line by line, say why there is none. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/human.h"
#include "base/protocol.h"
#include "core/client.h"

static const char socket_default[] = PROTOCOL_SOCKET_DEFAULT;
const char *ctl_socket_path = socket_default;
usec_t ctl_timeout_usec = CTL_TIMEOUT_DEFAULT_USEC;
const char *ctl_waiting_for = "a reply";
char ctl_problem[CTL_PROBLEM_MAX];
bool ctl_quiet;

int ctl_usage_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "cachectl: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'cachectl --help'.\n");
        return CTL_EXIT_USAGE;
}

/* Says on stderr why there is no answer ("cachekeeperd at SOCKET ..."),
 * keeps it for check, and returns -1. */
__attribute__((format(printf, 1, 2)))
static int broken(const char *fmt, ...) {
        va_list ap;
        int n;

        n = snprintf(ctl_problem, sizeof(ctl_problem), "cachekeeperd at %s ", ctl_socket_path);
        va_start(ap, fmt);
        vsnprintf(ctl_problem + n, sizeof(ctl_problem) - (size_t) n, fmt, ap);
        va_end(ap);
        if (!ctl_quiet)
                fprintf(stderr, "cachectl: %s\n", ctl_problem);
        return -1;
}

static int timed_out(void) {
        char t[32];

        format_duration(ctl_timeout_usec, t, sizeof(t));
        return broken("did not answer within %s (waiting for %s; -t sets how long to wait)", t, ctl_waiting_for);
}

/* Waits until fd is ready for events or deadline (monotonic) passes.
 * Returns 1 ready, 0 timed out. */
static int wait_fd(int fd, short events, usec_t deadline) {
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd p = { .fd = fd, .events = events };
                int r;

                if (now >= deadline)
                        return 0;
                r = poll(&p, 1, (int) ((deadline - now + 999) / 1000));
                if (r > 0)
                        return 1;
                if (r < 0 && errno != EINTR)
                        return 1;   /* let the read or write say what is wrong */
        }
}

/* Connects without blocking past the timeout: a daemon that is stopped
 * with its listen queue full would otherwise hold connect() forever. */
static int connect_timed(int fd, const struct sockaddr_un *sa) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ctl_timeout_usec;

        for (;;) {
                if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0)
                        return 0;
                if (errno == EINTR)
                        continue;
                if (errno == EINPROGRESS) {
                        int e = 0;
                        socklen_t l = sizeof(e);

                        if (!wait_fd(fd, POLLOUT, deadline)) {
                                errno = ETIMEDOUT;
                                return -1;
                        }
                        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e != 0) {
                                errno = e ? e : errno;
                                return -1;
                        }
                        return 0;
                }
                if (errno != EAGAIN)
                        return -1;
                /* The listen queue is full: try again until the deadline. */
                if (now_usec(CLOCK_MONOTONIC) >= deadline) {
                        errno = ETIMEDOUT;
                        return -1;
                }
                (void) poll(NULL, 0, 20);
        }
}

/* A connected socket to path, or -1 with errno set. */
static int connect_path(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        strcpy(sa.sun_path, path);   /* the caller checked its length */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || connect_timed(fd, &sa) == 0)
                return fd;
        int e = errno;
        close(fd);
        errno = e;
        return -1;
}

/* Where the default socket does not exist (a daemon older than its
 * directory, or a container that mounted the old socket file), the old
 * path: only when neither -s nor $CACHEKEEPER_SOCKET chose one. Returns
 * the socket or -1, errno still the default path's. */
static int connect_legacy(void) {
        int fd;

        if (ctl_socket_path != socket_default || errno != ENOENT)
                return -1;
        fd = connect_path(PROTOCOL_SOCKET_LEGACY);
        if (fd >= 0)
                ctl_socket_path = PROTOCOL_SOCKET_LEGACY;   /* what later messages name */
        errno = ENOENT;
        return fd;
}

static int connect_daemon(void) {
        struct sockaddr_un sa;
        int fd, e = 0;

        if (strlen(ctl_socket_path) >= sizeof(sa.sun_path))
                return broken("cannot be reached: the socket path is too long");
        fd = connect_path(ctl_socket_path);
        if (fd < 0)
                fd = connect_legacy();
        if (fd < 0)
                e = errno;
        if (e == ETIMEDOUT) {
                ctl_waiting_for = "the connection to be accepted";
                return timed_out();
        }
        if (e != 0) {
                snprintf(ctl_problem, sizeof(ctl_problem), "cachekeeperd at %s cannot be reached: %s", ctl_socket_path,
                         strerror(e));
                if (!ctl_quiet)
                        fprintf(stderr, "cachectl: cannot reach cachekeeperd at %s: %s\n", ctl_socket_path,
                                strerror(e));
                return -1;
        }
        return fd;
}

/* Sends all of line, never raising SIGPIPE, waiting at most the timeout.
 * Returns 0 or -errno (-ETIMEDOUT; else the daemon closed the connection:
 * it may have said why first). */
static int send_all(int fd, const char *line, size_t len) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ctl_timeout_usec;

        while (len > 0) {
                ssize_t n = send(fd, line, len, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        if (!wait_fd(fd, POLLOUT, deadline))
                                return -ETIMEDOUT;
                        continue;
                }
                if (n < 0)
                        return -errno;
                line += n;
                len -= (size_t) n;
        }
        return 0;
}


/* What the line of the daemon's says, for call(): 1 ok (*ret_result set,
 * may be NULL), 0 refused (message printed), -1 unusable (printed, and kept
 * in ctl_problem), or 2 for a progress line (passed to on_progress), after which
 * the reply is still to come. */
static int take_line(const char *line, ctl_progress_t on_progress, json_object **ret_result) {
        ProtocolReply reply;
        char err[1024];

        if (protocol_decode_reply(line, &reply, err, sizeof(err)) < 0)
                return broken("sent a malformed reply");
        switch (reply.kind) {
        case PROTOCOL_REPLY_PROGRESS:
                if (on_progress)
                        on_progress(reply.value);
                json_object_put(reply.value);
                return 2;
        case PROTOCOL_REPLY_BUSY:
                return broken("turned the connection away: %s", err);
        case PROTOCOL_REPLY_ERROR:
                snprintf(ctl_problem, sizeof(ctl_problem), "%s", err);
                if (!ctl_quiet)
                        fprintf(stderr, "cachectl: %s\n", err);
                return 0;
        case PROTOCOL_REPLY_OK:
                break;
        }
        if (!protocol_reply_understood(&reply)) {
                json_object_put(reply.value);
                return broken("answered in protocol %u, newer than this cachectl's %u: "
                              "use the cachectl that came with the daemon", reply.version, PROTOCOL_VERSION);
        }
        *ret_result = reply.value;
        return 1;
}

/* Sends request (a line, newline included; NULL: out of memory) and reads
 * reply lines until the final one; progress lines before it go to
 * on_progress. Returns 1 ok (*ret_result set, may be NULL), 0 refused
 * (message printed), -1 unreachable, turned away, broken or not understood
 * (printed, and kept in ctl_problem). */
static int call(const char *request, ctl_progress_t on_progress, json_object **ret_result) {
        char *buf = NULL;
        size_t len = 0, cap = 0, start = 0;
        usec_t deadline;
        int fd, r = -1;

        if (!request)
                return broken("cannot be asked: out of memory");
        fd = connect_daemon();
        if (fd < 0)
                return -1;
        /* If this fails, the daemon closed the connection; it may have said
         * why (turned away, request too long): what it said is the answer. */
        if (send_all(fd, request, strlen(request)) == -ETIMEDOUT) {
                r = timed_out();
                goto out;
        }
        deadline = now_usec(CLOCK_MONOTONIC) + ctl_timeout_usec;
        for (;;) {
                char *nl;
                ssize_t n;

                /* Consume complete lines; stop at the first that is not progress. */
                while (buf && (nl = memchr(buf + start, '\n', len - start))) {
                        *nl = '\0';
                        r = take_line(buf + start, on_progress, ret_result);
                        start = (size_t) (nl - buf) + 1;
                        if (r != 2)
                                goto out;
                }
                if (!wait_fd(fd, POLLIN, deadline)) {
                        r = timed_out();
                        goto out;
                }
                if (len - start > PROTOCOL_REPLY_MAX) {
                        r = broken("sent a reply too long");
                        goto out;
                }
                if (len + 4096 >= cap) {
                        char *p = realloc(buf, cap = cap ? cap * 2 : 65536);
                        if (!p) {
                                r = broken("cannot be heard: out of memory");
                                goto out;
                        }
                        buf = p;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n > 0) {
                        len += (size_t) n;
                        deadline = now_usec(CLOCK_MONOTONIC) + ctl_timeout_usec;   /* it is answering: progress, or a long reply */
                        continue;
                }
                /* EOF, or ECONNRESET: it closed with our request unread. */
                if (n < 0 && errno != ECONNRESET)
                        r = broken("broke the connection: %s", strerror(errno));
                else if (len > start)
                        r = broken("closed the connection in the middle of its reply");
                else
                        r = broken("closed the connection without a reply");
                goto out;
        }
out:
        free(buf);
        close(fd);
        return r;
}

int ctl_exit_status(int r) {
        return r > 0 ? EXIT_SUCCESS : r == 0 ? CTL_EXIT_REFUSED : CTL_EXIT_UNREACHABLE;
}

int ctl_ask(char *request, ctl_progress_t on_progress, json_object **ret_result) {
        int r = call(request, on_progress, ret_result);

        free(request);
        return r;
}

bool ctl_want_color(int fd) {
        const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

        return isatty(fd) && !(no && *no) && !(term && strcmp(term, "dumb") == 0);
}

int ctl_fetch_status(json_object **ret) {
        return ctl_ask(protocol_encode_status(&(ProtocolStatus) {}), NULL, ret);
}
