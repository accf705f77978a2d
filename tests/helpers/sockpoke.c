/* SPDX-License-Identifier: MIT */
/* sockpoke: misbehaving clients for the control socket tests.
 *   sockpoke SOCKET send TEXT        send TEXT as is, print what comes back until EOF (5 s max)
 *   sockpoke SOCKET big N            send one line of N bytes, print the reply
 *   sockpoke SOCKET hold N SECONDS   open N connections at once, keep them silent, close
 *   sockpoke SOCKET noread N         send N status requests and never read the replies
 * Prints "eof" when the daemon closed the connection, "timeout" otherwise. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                perror("connect");
                exit(3);
        }
        return fd;
}

static void write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        printf("write: %s\n", strerror(errno));
                        return;
                }
                p += k;
                n -= (size_t) k;
        }
}

/* Prints what arrives until EOF or 5 s of silence. */
static void drain(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char buf[65536];

        for (;;) {
                ssize_t n;

                if (poll(&p, 1, 5000) <= 0) {
                        printf("timeout\n");
                        return;
                }
                n = read(fd, buf, sizeof(buf));
                if (n <= 0) {
                        printf("eof\n");
                        return;
                }
                fwrite(buf, 1, (size_t) n, stdout);
                fflush(stdout);
        }
}

int main(int argc, char **argv) {
        int fd;

        if (argc < 4) {
                fprintf(stderr, "usage: sockpoke SOCKET send TEXT | big N | hold N SECONDS | noread N\n");
                return 2;
        }
        if (strcmp(argv[2], "send") == 0) {
                fd = connect_to(argv[1]);
                write_all(fd, argv[3], strlen(argv[3]));
                shutdown(fd, SHUT_WR);
                drain(fd);
        } else if (strcmp(argv[2], "big") == 0) {
                size_t n = strtoul(argv[3], NULL, 10);
                char *line = malloc(n + 1);

                memset(line, 'x', n);
                line[n] = '\n';
                fd = connect_to(argv[1]);
                write_all(fd, line, n + 1);
                drain(fd);
                free(line);
        } else if (strcmp(argv[2], "hold") == 0 && argc == 5) {
                int n = atoi(argv[3]), *fds = calloc((size_t) n, sizeof(int));

                for (int i = 0; i < n; i++)
                        fds[i] = connect_to(argv[1]);
                printf("holding %d\n", n);
                fflush(stdout);
                sleep((unsigned) atoi(argv[4]));
                for (int i = 0; i < n; i++)
                        close(fds[i]);
                free(fds);
                return 0;
        } else if (strcmp(argv[2], "noread") == 0) {
                int n = atoi(argv[3]);
                static const char req[] = "{\"cmd\":\"status\"}\n";
                struct pollfd p;

                fd = connect_to(argv[1]);
                p = (struct pollfd) { .fd = fd, .events = POLLOUT };
                for (int i = 0; i < n; i++) {
                        if (poll(&p, 1, 2000) <= 0 || (p.revents & (POLLERR | POLLHUP))) {
                                printf("stopped after %d: the daemon stopped taking requests\n", i);
                                break;
                        }
                        if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN) {
                                printf("stopped after %d: %s\n", i, strerror(errno));
                                break;
                        }
                }
                fflush(stdout);
        } else {
                fprintf(stderr, "sockpoke: unknown mode '%s'\n", argv[2]);
                return 2;
        }
        close(fd);
        return 0;
}
