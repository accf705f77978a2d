/* SPDX-License-Identifier: MIT */
/* Running one program for doctor (doctor-internal.h): its output kept in
 * bounded lines, its time bounded, its process group killed after. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build/doctor-internal.h"

/* In the child: its own process group, stdin /dev/null, stdout and stderr
 * into out, env added, in cwd, then argv. Never returns. */
static _Noreturn void exec_child(char *const *argv, char *const *env, const char *cwd, int out) {
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);       /* cachectl ignores it; the program should not */
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
                _exit(127);
        for (size_t i = 0; env && env[i]; i++)
                if (putenv(env[i]) != 0)
                        _exit(127);
        if (cwd && chdir(cwd) < 0) {
                fprintf(stderr, "cannot enter %s: %m\n", cwd);
                _exit(127);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %m\n", argv[0]);
        _exit(127);
}

/* Reads fd to its end, each line (cut at DOCTOR_LINE_MAX, buf that long)
 * to on_line, until DOCTOR_RUN_TIMEOUT_USEC have passed: then kills the
 * process group pid. Returns whether it did. */
static bool read_lines(int fd, pid_t pid, char *buf, void (*on_line)(void *ctx, const char *line), void *ctx) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + DOCTOR_RUN_TIMEOUT_USEC;
        size_t len = 0;

        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                char chunk[4096];
                ssize_t n;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                if (now >= deadline) {
                        kill(-pid, SIGKILL);
                        return true;
                }
                r = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r == 0)
                        continue;
                n = read(fd, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                for (ssize_t i = 0; i < n; i++) {
                        if (chunk[i] == '\n') {
                                buf[len] = '\0';
                                if (on_line)
                                        on_line(ctx, buf);
                                len = 0;
                        } else if (len < DOCTOR_LINE_MAX - 1)
                                buf[len++] = chunk[i];
                }
        }
        if (len > 0 && on_line) {
                buf[len] = '\0';
                on_line(ctx, buf);
        }
        return false;
}

/* Runs argv (argv[0] looked up in PATH) in cwd (NULL: here) with the
 * environment plus env ("NAME=VALUE", NULL-terminated, may be NULL), stdin
 * /dev/null, stdout and stderr into a pipe; on_line gets each line of it
 * (cut at DOCTOR_LINE_MAX). Killed (its process group) after
 * DOCTOR_RUN_TIMEOUT_USEC. Returns the wait status, -ETIME on timeout, or
 * -errno. */
int doctor_run(char *const *argv, char *const *env, const char *cwd, void (*on_line)(void *ctx, const char *line),
               void *ctx) {
        _cleanup_free_ char *buf = malloc(DOCTOR_LINE_MAX);
        bool timed_out;
        int p[2], status;
        pid_t pid;

        if (!buf)
                return -ENOMEM;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0)
                exec_child(argv, env, cwd, p[1]);
        setpgid(pid, pid);
        close(p[1]);
        timed_out = read_lines(p[0], pid, buf, on_line, ctx);
        close(p[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return timed_out ? -ETIME : status;
}

void keep_output(void *ctx, const char *line) {
        Output *o = ctx;
        int n = snprintf(o->text + o->len, sizeof(o->text) - o->len, "%s\n", line);

        if (n > 0)
                o->len = o->len + (size_t) n < sizeof(o->text) ? o->len + (size_t) n : sizeof(o->text) - 1;
}

/* The first line of o, for a message. */
const char *first_line(Output *o, char *buf, size_t size) {
        size_t n = strcspn(o->text, "\n");

        snprintf(buf, size, "%.*s", (int) n, o->text);
        return buf;
}

/* "exit 1", "killed by signal 9", "no answer within 300 s", or the error. */
const char *describe_status(int status, char *buf, size_t size) {
        if (status == -ETIME)
                snprintf(buf, size, "no answer within %llu s", (unsigned long long) (DOCTOR_RUN_TIMEOUT_USEC / USEC_PER_SEC));
        else if (status < 0)
                snprintf(buf, size, "%s", strerror(-status));
        else if (WIFEXITED(status))
                snprintf(buf, size, "exit %d", WEXITSTATUS(status));
        else
                snprintf(buf, size, "killed by signal %d", WTERMSIG(status));
        return buf;
}
