/* SPDX-License-Identifier: MIT */
/* stop-on-event: stops a process (SIGSTOP) the moment something is created
 * or moved into a directory, for tests that must act while a job of the
 * daemon is halfway through that directory, not before or after it: a
 * script woken by inotifywait reacts milliseconds later, by which time the
 * job may have finished. Prints "READY" once the watch is set, then, after
 * the stop, "STOPPED <name>" (the name that came), and exits 0; the caller
 * does what it must and sends SIGCONT.
 *
 * Usage: stop-on-event DIR PID [TIMEOUT_SECONDS] (default 60; exit 1 when
 * nothing came by then). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv) {
        char buf[sizeof(struct inotify_event) + NAME_MAX + 1] __attribute__((aligned(__alignof__(struct inotify_event))));
        const struct inotify_event *ev = (const struct inotify_event *) buf;
        int fd, timeout;
        pid_t pid;
        struct pollfd p;

        if (argc < 3) {
                fprintf(stderr, "usage: stop-on-event DIR PID [TIMEOUT_SECONDS]\n");
                return 2;
        }
        pid = (pid_t) atoi(argv[2]);
        timeout = argc > 3 ? atoi(argv[3]) : 60;
        fd = inotify_init1(IN_CLOEXEC);
        if (fd < 0 || inotify_add_watch(fd, argv[1], IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
                fprintf(stderr, "stop-on-event: %s: %s\n", argv[1], strerror(errno));
                return 1;
        }
        printf("READY\n");
        fflush(stdout);
        p = (struct pollfd) { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, timeout * 1000) <= 0) {
                fprintf(stderr, "stop-on-event: nothing came into %s within %d s\n", argv[1], timeout);
                return 1;
        }
        /* First the stop: the read and the print may wait. */
        if (kill(pid, SIGSTOP) < 0) {
                fprintf(stderr, "stop-on-event: kill %d: %s\n", (int) pid, strerror(errno));
                return 1;
        }
        if (read(fd, buf, sizeof(buf)) < (ssize_t) sizeof(*ev))
                return 1;
        printf("STOPPED %s\n", ev->len ? ev->name : "?");
        return 0;
}
