/* SPDX-License-Identifier: MIT */
/* cachectl: asks cachekeeperd over its Unix socket and prints the answer.
 * Exit status: 0 ok, 1 refused or failed, 2 usage, 3 daemon unreachable. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol.h"
#include "units.h"

#define DEFAULT_SOCKET "/run/cachekeeper.sock"
#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define EXIT_UNREACHABLE 3

static const char *socket_path = DEFAULT_SOCKET;

static void help(void) {
        printf("Usage: cachectl [-s SOCKET] COMMAND [ARGS]\n"
               "Ask cachekeeperd about the ccache directories it keeps.\n\n"
               "Commands:\n"
               "  status [--json] [CACHE]              sizes, caps, files, hit rates, free space\n"
               "  trim [CACHE...] [--to SIZE] [--dry-run]\n"
               "                                       evict least recently used entries now\n"
               "  reload                               re-read the configuration\n"
               "  check                                one line for monitoring; exit 0 ok,\n"
               "                                       1 warning, 2 critical, 3 unknown\n"
               "  metrics                              Prometheus text exposition\n\n"
               "Options:\n"
               "  -s, --socket PATH   the daemon's socket (default $CACHEKEEPER_SOCKET, else %s)\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "Exit status: 0 success, 1 the daemon refused or failed, 2 usage error,\n"
               "3 the daemon cannot be reached. See cachectl(1).\n",
               DEFAULT_SOCKET);
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "cachectl: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'cachectl --help'.\n");
        return EXIT_USAGE;
}

static int connect_daemon(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(socket_path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "cachectl: socket path too long: %s\n", socket_path);
                return -1;
        }
        strcpy(sa.sun_path, socket_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "cachectl: cannot reach cachekeeperd at %s: %s\n", socket_path, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

/* Sends request and reads one reply line. Returns 1 ok (*ret_result set), 0 refused
 * (message printed), -1 unreachable or broken connection (message printed). */
static int call(json_object *request, json_object **ret_result) {
        const char *s = json_object_to_json_string_ext(request, JSON_C_TO_STRING_PLAIN);
        char err[1024], *buf = NULL;
        size_t len = 0, cap = 0;
        int fd, r = -1;

        fd = connect_daemon();
        if (fd < 0)
                return -1;
        if (dprintf(fd, "%s\n", s) < 0) {
                fprintf(stderr, "cachectl: cannot send to cachekeeperd at %s: %s\n", socket_path, strerror(errno));
                goto out;
        }
        for (;;) {
                ssize_t n;

                if (len + 4096 > cap) {
                        char *p = realloc(buf, cap = cap ? cap * 2 : 65536);
                        if (!p)
                                goto out;
                        buf = p;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
                if (memchr(buf + len - n, '\n', (size_t) n) || len > PROTOCOL_REPLY_MAX)
                        break;
        }
        if (!buf || len == 0 || !memchr(buf, '\n', len)) {
                fprintf(stderr, "cachectl: cachekeeperd at %s closed the connection without a reply\n", socket_path);
                goto out;
        }
        buf[len] = '\0';
        r = protocol_parse_reply(buf, ret_result, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "cachectl: cachekeeperd at %s sent a malformed reply\n", socket_path);
        else if (r == 0)
                fprintf(stderr, "cachectl: %s\n", err);
out:
        free(buf);
        close(fd);
        return r;
}

static json_object *request_new(const char *cmd) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "cmd", json_object_new_string(cmd));
        return o;
}

static int simple_command(const char *cmd, int argc, char **argv) {
        json_object *req, *result = NULL;
        int r;

        if (argc > 1)
                return usage_error("'%s' takes no arguments", cmd);
        req = request_new(cmd);
        r = call(req, &result);
        json_object_put(req);
        if (r > 0 && result) {
                if (json_object_is_type(result, json_type_string))
                        fputs(json_object_get_string(result), stdout);
                else
                        printf("%s\n", json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY));
        }
        json_object_put(result);
        return r > 0 ? EXIT_SUCCESS : r == 0 ? EXIT_REFUSED : EXIT_UNREACHABLE;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *env = getenv("CACHEKEEPER_SOCKET");
        int c;

        if (env && *env)
                socket_path = env;
        /* "+": stop at the command, whose own options follow it. */
        while ((c = getopt_long(argc, argv, "+s:h", options, NULL)) >= 0)
                switch (c) {
                case 's': socket_path = optarg; break;
                case 'h': help(); return EXIT_SUCCESS;
                case 'V': printf("cachectl %s\n", CACHEKEEPER_VERSION); return EXIT_SUCCESS;
                default: fprintf(stderr, "Try 'cachectl --help'.\n"); return EXIT_USAGE;
                }
        if (optind >= argc)
                return usage_error("%s", "a command is required: status, trim, reload, check or metrics");
        argc -= optind;
        argv += optind;
        optind = 0;

        if (strcmp(argv[0], "reload") == 0)
                return simple_command("reload", argc, argv);
        return usage_error("unknown command '%s'", argv[0]);
}
