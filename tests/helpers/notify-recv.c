/* SPDX-License-Identifier: MIT */
/* notify-recv: stands in for systemd's end of sd_notify in tests and the
 * benchmark. Binds an AF_UNIX datagram socket and prints every datagram as
 * "<CLOCK_MONOTONIC µs> <payload, newlines as ' | '>", flushing each line.
 * The first line, once the socket is bound, is "<µs> LISTENING". */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* sd_notify payloads are small; FDSTORE may attach descriptors. */
#define PAYLOAD_MAX_BYTES 65536
#define RCVBUF_BYTES (1 << 20)
#define MAX_FDS 64

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
        stop_signal = sig;
}

static int64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void usage(FILE *out) {
        fprintf(out,
                "Usage: notify-recv SOCKETPATH [--until LINE] [--timeout SECONDS]\n"
                "       notify-recv --now\n\n"
                "Binds an AF_UNIX SOCK_DGRAM socket at SOCKETPATH ('@NAME' = abstract), prints\n"
                "\"<usec> LISTENING\" once bound, then each datagram as \"<usec> <payload>\" with\n"
                "newlines shown as ' | '. <usec> is CLOCK_MONOTONIC in microseconds.\n"
                "  --until LINE       exit 0 after a datagram holding LINE as a whole line\n"
                "                     (e.g. READY=1)\n"
                "  --timeout SECONDS  give up after this long: exit 1 if --until was given\n"
                "                     (and not seen), 0 otherwise. Default: wait forever.\n"
                "  --now              print the current CLOCK_MONOTONIC time in usec and exit\n"
                "SIGTERM/SIGINT end it like a timeout. The socket file is removed on exit.\n");
}

static bool has_line(const char *payload, const char *line) {
        size_t len = strlen(line);
        for (const char *p = payload; p; p = strchr(p, '\n')) {
                if (*p == '\n')
                        p++;
                if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == 0))
                        return true;
        }
        return false;
}

static void print_datagram(int64_t usec, const char *payload, size_t len) {
        while (len > 0 && payload[len - 1] == '\n')
                len--;
        printf("%lld ", (long long)usec);
        for (size_t i = 0; i < len; i++) {
                if (payload[i] == '\n')
                        fputs(" | ", stdout);
                else
                        putchar(payload[i]);
        }
        putchar('\n');
        fflush(stdout);
}

/* Descriptors passed with FDSTORE=1 would otherwise pile up. */
static void close_passed_fds(struct msghdr *mh) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int fds[MAX_FDS];
                if (n > MAX_FDS)
                        n = MAX_FDS;
                memcpy(fds, CMSG_DATA(c), n * sizeof(int));
                for (size_t i = 0; i < n; i++)
                        close(fds[i]);
        }
}

int main(int argc, char **argv) {
        const char *path = NULL, *until = NULL;
        double timeout_sec = -1;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--now") == 0) {
                        printf("%lld\n", (long long)now_usec());
                        return 0;
                } else if (strcmp(argv[i], "--until") == 0 && i + 1 < argc) {
                        until = argv[++i];
                } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
                        char *end;
                        timeout_sec = strtod(argv[++i], &end);
                        if (*end || timeout_sec < 0) {
                                usage(stderr);
                                return 2;
                        }
                } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else if (!path && argv[i][0] != '-') {
                        path = argv[i];
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        if (!path) {
                usage(stderr);
                return 2;
        }

        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t plen = strlen(path);
        if (plen >= sizeof sa.sun_path) {
                fprintf(stderr, "notify-recv: socket path too long: %s\n", path);
                return 2;
        }
        memcpy(sa.sun_path, path, plen);
        bool abstract = path[0] == '@';
        if (abstract)
                sa.sun_path[0] = 0;
        socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + (abstract ? 0 : 1));

        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                perror("notify-recv: socket");
                return 2;
        }
        int rcvbuf = RCVBUF_BYTES;
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        struct stat st;
        if (!abstract && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                unlink(path); /* a stale socket from an earlier run */
        if (bind(fd, (struct sockaddr *)&sa, salen) < 0) {
                fprintf(stderr, "notify-recv: cannot bind %s: %s\n", path, strerror(errno));
                return 2;
        }

        struct sigaction act = { .sa_handler = on_signal }; /* no SA_RESTART: poll returns EINTR */
        sigemptyset(&act.sa_mask);
        sigaction(SIGTERM, &act, NULL);
        sigaction(SIGINT, &act, NULL);
        sigaction(SIGHUP, &act, NULL);

        printf("%lld LISTENING\n", (long long)now_usec());
        fflush(stdout);

        int64_t deadline = timeout_sec >= 0 ? now_usec() + (int64_t)(timeout_sec * 1e6) : -1;
        static char payload[PAYLOAD_MAX_BYTES + 1];
        int rc = until ? 1 : 0;
        while (!stop_signal) {
                int wait_ms = -1;
                if (deadline >= 0) {
                        int64_t left = deadline - now_usec();
                        if (left <= 0) {
                                if (until)
                                        fprintf(stderr, "notify-recv: timed out after %g s waiting for %s\n",
                                                timeout_sec, until);
                                break;
                        }
                        wait_ms = (int)((left + 999) / 1000);
                }
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                int r = poll(&pfd, 1, wait_ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("notify-recv: poll");
                        rc = 2;
                        break;
                }
                if (r == 0)
                        continue;
                union {
                        struct cmsghdr align;
                        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS) + CMSG_SPACE(sizeof(struct ucred))];
                } control;
                struct iovec iov = { .iov_base = payload, .iov_len = PAYLOAD_MAX_BYTES };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                                     .msg_control = control.buf, .msg_controllen = sizeof control.buf };
                ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        perror("notify-recv: recvmsg");
                        rc = 2;
                        break;
                }
                int64_t t = now_usec();
                close_passed_fds(&mh);
                payload[n] = 0;
                print_datagram(t, payload, (size_t)n);
                if (until && has_line(payload, until)) {
                        rc = 0;
                        break;
                }
        }
        if (!abstract)
                unlink(path);
        return rc;
}
