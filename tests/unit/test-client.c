/* SPDX-License-Identifier: MIT */
/* cachectl's evictions helper against a daemon stand-in on a real socket:
 * more keys than one request line holds go in several requests, each line
 * within PROTOCOL_REQUEST_MAX, and the answers come back as one result. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/protocol.h"
#include "client.h"

#define KEYS 300

/* The stand-in: on each connection, one request line; an evictions
 * request is answered with each of its keys left "by cap" since the
 * connection's number times 10000 plus the line's length, a line too long
 * refused as the daemon does. Runs until killed. */
static void serve(int lfd) {
        for (uint64_t conn = 1;; conn++) {
                char line[2 * PROTOCOL_REQUEST_MAX], err[256], *reply;
                int fd = accept(lfd, NULL, NULL);
                json_object *o, *result, *keys;
                ProtocolEvictions e;
                const char *cmd;
                size_t len = 0;
                ssize_t n;

                if (fd < 0)
                        _exit(1);
                while (len < sizeof(line) - 1 && (n = read(fd, line + len, sizeof(line) - 1 - len)) > 0 &&
                       !memchr(line, '\n', len + (size_t) n))
                        len += (size_t) n;
                len += n > 0 ? (size_t) n : 0;
                line[len] = '\0';
                if (len > PROTOCOL_REQUEST_MAX)
                        reply = protocol_encode_error("request too long");
                else if (protocol_decode_request(line, &o, &cmd, err, sizeof(err)) < 0 ||
                         protocol_decode_evictions(o, &e, err, sizeof(err)) < 0)
                        reply = protocol_encode_error(err);
                else {
                        result = json_object_new_object();
                        keys = json_object_new_object();
                        json_object_object_add(result, PROTOCOL_EVICTIONS_KEYS, keys);
                        for (size_t i = 0; i < e.n_keys; i++)
                                json_object_object_add(keys, e.keys[i], protocol_eviction(&(ProtocolEviction) {
                                        .since = conn * 10000 + len, .by = PROTOCOL_EVICTED_BY_CAP }));
                        reply = protocol_encode_ok(result);
                        json_object_put(result);
                        json_object_put(o);
                        free(e.keys);
                }
                (void) !write(fd, reply, strlen(reply));
                free(reply);
                close(fd);
        }
}

static void test_fetch_evictions_batches(void **state) {
        static char keys[KEYS][41];
        const char *ptrs[KEYS];
        char dir[] = "/tmp/test-client.XXXXXX", path[64];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        json_object *result = NULL;
        ProtocolEviction got;
        size_t lines = 0, last = 0;
        int lfd;
        pid_t pid;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/ck.sock", dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(lfd >= 0);
        assert_int_equal(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(lfd, 8), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);   /* not outliving a failed test */
                serve(lfd);
        }
        close(lfd);

        for (size_t i = 0; i < KEYS; i++) {
                snprintf(keys[i], sizeof(keys[i]), "%040zx", i);   /* a 4.13 key: 40 hex digits */
                ptrs[i] = keys[i];
        }
        ctl_socket_path = path;
        assert_int_equal(ctl_fetch_evictions("mi210", ptrs, KEYS, &result), 1);
        for (size_t i = 0; i < KEYS; i++) {
                assert_int_equal(protocol_decode_eviction(result, keys[i], &got), 1);
                assert_string_equal(got.by, PROTOCOL_EVICTED_BY_CAP);
                assert_true(got.since % 10000 <= PROTOCOL_REQUEST_MAX);     /* each line fit */
                if (got.since / 10000 != last)
                        lines++, last = got.since / 10000;
        }
        assert_int_equal(lines, 4);                     /* 300 x 43 bytes: 95 keys a line */
        assert_int_equal(json_object_object_length(protocol_field_get(result, PROTOCOL_EVICTIONS_KEYS)), KEYS);
        json_object_put(result);

        /* A refusal (an unknown key spelling) is the call's: 0, no result. */
        result = NULL;
        ptrs[0] = "NOT-A-KEY";
        assert_int_equal(ctl_fetch_evictions("mi210", ptrs, 2, &result), 0);
        assert_null(result);

        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        unlink(path);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fetch_evictions_batches),
        };

        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
