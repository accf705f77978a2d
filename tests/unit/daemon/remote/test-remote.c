/* SPDX-License-Identifier: MIT */
/* Remote storage URLs as ccache writes them (config/remote-url.h), the password
 * file's checks, INFO parsing and the judgements on it (redis-info.h), and
 * the remote-errors alarm on activity buckets (remote-errors.h). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/cache-clock.h"
#include "config/remote-url.h"
#include "fixture.h"
#include "os/secret-file.h"
#include "insight/activity.h"
#include "insight/remote-errors.h"
#include "os/peer.h"
#include "remote/redis-info.h"

static void test_url_good(void **state) {
        static const struct {
                const char *url;
                RemoteKind kind;
                const char *host, *user, *path;
                unsigned port, db;
        } ok[] = {
                { "redis://127.0.0.1:6379", REMOTE_REDIS, "127.0.0.1", NULL, NULL, 6379, 0 },
                { "redis://127.0.0.1", REMOTE_REDIS, "127.0.0.1", NULL, NULL, 6379, 0 },
                { "redis://localhost:7000/3", REMOTE_REDIS, "127.0.0.1", NULL, NULL, 7000, 3 },
                { "redis://ci@10.1.2.3:6380/15", REMOTE_REDIS, "10.1.2.3", "ci", NULL, 6380, 15 },
                { "redis://[::1]:6390", REMOTE_REDIS, "::1", NULL, NULL, 6390, 0 },
                { "redis://[::1]", REMOTE_REDIS, "::1", NULL, NULL, 6379, 0 },
                { "redis://10.0.0.1:6379|connect-timeout=500", REMOTE_REDIS, "10.0.0.1", NULL, NULL, 6379, 0 },
                { "redis+unix:/run/redis/redis.sock", REMOTE_REDIS, NULL, NULL, "/run/redis/redis.sock", 0, 0 },
                { "redis+unix:///run/redis.sock", REMOTE_REDIS, NULL, NULL, "/run/redis.sock", 0, 0 },
                { "file:/srv/ccache-shared", REMOTE_FILE, NULL, NULL, "/srv/ccache-shared", 0, 0 },
                { "file:///srv/ccache-shared|layout=flat", REMOTE_FILE, NULL, NULL, "/srv/ccache-shared", 0, 0 },
        };
        char err[256];

        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
                RemoteUrl u;

                assert_int_equal(remote_url_parse(ok[i].url, &u, err, sizeof(err)), 0);
                assert_int_equal(u.kind, ok[i].kind);
                if (ok[i].host)
                        assert_string_equal(u.host, ok[i].host);
                else
                        assert_null(u.host);
                if (ok[i].user)
                        assert_string_equal(u.user, ok[i].user);
                else
                        assert_null(u.user);
                if (ok[i].path)
                        assert_string_equal(u.path, ok[i].path);
                else
                        assert_null(u.path);
                if (ok[i].host)
                        assert_int_equal(u.port, ok[i].port);
                assert_int_equal(u.db, ok[i].db);
                remote_url_done(&u);
        }
}

static void test_url_bad(void **state) {
        static const struct {
                const char *url, *why;
        } bad[] = {
                { "http://cache.example/ccache", "unknown kind" },
                { "redis:/127.0.0.1", "unknown kind" },
                { "", "unknown kind" },
                { "redis://user:hunter2@127.0.0.1", "a password in the URL is refused" },
                { "redis://:hunter2@127.0.0.1", "a password in the URL is refused" },
                { "redis://127.0.0.1:0", "the port" },
                { "redis://127.0.0.1:65536", "the port" },
                { "redis://127.0.0.1:http", "the port" },
                { "redis://127.0.0.1:", "the port" },
                { "redis://127.0.0.1/x", "the database" },
                { "redis://cache.example:6379", "must be an IP address" },
                { "redis://", "expected redis://" },
                { "redis://@127.0.0.1", "expected redis://" },
                { "redis://[::1", "expected redis://" },
                { "redis+unix:run/redis.sock", "absolute path" },
                { "redis+unix:", "absolute path" },
                { "file:srv/x", "absolute path" },
                { "file:/", "absolute path" },
        };
        char err[256];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                RemoteUrl u = { .port = 42 };

                err[0] = '\0';
                assert_int_equal(remote_url_parse(bad[i].url, &u, err, sizeof(err)), -EINVAL);
                if (!strstr(err, bad[i].why))
                        fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].url, err, bad[i].why);
                assert_null(strstr(err, "hunter2"));
                assert_int_equal(u.port, 42);   /* untouched */
        }
}

static void test_password_file(void **state) {
        const char *dir = *state;
        char path[64], link[80], buf[32], err[256];
        int fd;

        if (geteuid() != 0)
                skip();
        snprintf(path, sizeof(path), "%s/pass", dir);
        snprintf(link, sizeof(link), "%s/link", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "sesame\nsecond line\n", 19), 19);
        close(fd);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), 0);
        assert_int_equal(secret_file_read(path, buf, sizeof(buf), err, sizeof(err)), 6);
        assert_string_equal(buf, "sesame");
        /* Too long for the buffer: refused, wiped. */
        assert_int_equal(secret_file_read(path, buf, 5, err, sizeof(err)), -E2BIG);
        assert_int_equal(buf[0], 0);

        assert_int_equal(chmod(path, 0640), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "must be owned by root and not readable by group or other"));
        assert_non_null(strstr(err, "mode 0640"));
        assert_int_equal(secret_file_read(path, buf, sizeof(buf), err, sizeof(err)), -EPERM);
        assert_int_equal(chmod(path, 0600), 0);
        assert_int_equal(chown(path, 65534, 0), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "owned by uid 65534"));
        assert_int_equal(secret_file_read(path, buf, sizeof(buf), err, sizeof(err)), -EPERM);
        assert_int_equal(chown(path, 0, 0), 0);

        assert_int_equal(symlink(path, link), 0);
        assert_int_equal(secret_file_check(link, err, sizeof(err)), -EPERM);
        assert_string_equal(err, "is not a regular file");
        assert_int_equal(secret_file_read(link, buf, sizeof(buf), err, sizeof(err)), -EPERM);
        assert_string_equal(err, "is not a regular file");
        unlink(link);
        unlink(path);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -ENOENT);
}

/* A FIFO at password_file (no writer: an open without O_NONBLOCK waits for
 * ever) is refused at once, by the check and by the read. The alarm turns a
 * wait into a failure. */
static void test_password_fifo(void **state) {
        const char *dir = *state;
        char path[64], buf[32], err[256];

        if (geteuid() != 0)
                skip();
        snprintf(path, sizeof(path), "%s/pass", dir);
        assert_int_equal(mkfifo(path, 0600), 0);
        alarm(10);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        assert_string_equal(err, "is not a regular file");
        assert_int_equal(secret_file_read(path, buf, sizeof(buf), err, sizeof(err)), -EPERM);
        assert_string_equal(err, "is not a regular file");
        alarm(0);
}

/* A directory on the way that someone else could write: refused, whatever
 * the file's own modes; a sticky one is fine (no one else can replace
 * root's entries in it); a symlink on the way is refused. */
static void test_password_dirs(void **state) {
        const char *top = *state;
        char sub[64], path[80], link[64], via[80], err[256];
        int fd;

        if (geteuid() != 0)
                skip();
        snprintf(sub, sizeof(sub), "%s/sub", top);
        snprintf(path, sizeof(path), "%s/pass", sub);
        snprintf(link, sizeof(link), "%s/link", top);
        snprintf(via, sizeof(via), "%s/pass", link);
        assert_int_equal(mkdir(sub, 0755), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), 0);

        assert_int_equal(chmod(sub, 0777), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        if (!strstr(err, "is in directory '") || !strstr(err, "/sub' (mode 0777), writable by others"))
                fail_msg("%s", err);
        assert_int_equal(chmod(sub, 0775), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        assert_int_equal(chmod(sub, 01777), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), 0);
        assert_int_equal(chmod(sub, 0755), 0);
        assert_int_equal(chown(top, 65534, 65534), 0);
        assert_int_equal(secret_file_check(path, err, sizeof(err)), -EPERM);
        if (!strstr(err, "owned by uid 65534, who could replace the file"))
                fail_msg("%s", err);
        assert_int_equal(chown(top, 0, 0), 0);

        assert_int_equal(symlink(sub, link), 0);
        assert_int_equal(secret_file_check(via, err, sizeof(err)), -EPERM);
        if (!strstr(err, "/link', a symlink or not a directory"))
                fail_msg("%s", err);
}

/* A TCP listener on 127.0.0.1 (any port) opened by uid, in a child that
 * lives until killed; its port through a pipe. */
static pid_t listener_as(uid_t uid, uint16_t *ret_port) {
        int p[2];
        pid_t pid;

        assert_int_equal(pipe(p), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t n = sizeof(a);
                int s;

                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(1);
                s = socket(AF_INET, SOCK_STREAM, 0);
                if (s < 0 || bind(s, (struct sockaddr *) &a, sizeof(a)) < 0 || listen(s, 4) < 0 ||
                    getsockname(s, (struct sockaddr *) &a, &n) < 0 ||
                    write(p[1], &a.sin_port, sizeof(a.sin_port)) != sizeof(a.sin_port))
                        _exit(1);
                pause();        /* never accepts: the connection waits in its queue */
                _exit(0);
        }
        close(p[1]);
        assert_int_equal(read(p[0], ret_port, sizeof(*ret_port)), sizeof(*ret_port));
        close(p[0]);
        return pid;
}

/* The owner of the far end of a loopback TCP connection, as the kernel's
 * sock_diag tells it: the uid that opened the listener, even for a
 * connection still in its accept queue; a Unix socket's by SO_PEERCRED. */
static void test_peer_owner(void **state) {
        static const uid_t uids[] = { 0, 65534 };
        int sv[2];
        uid_t uid;

        if (geteuid() != 0)
                skip();
        for (size_t i = 0; i < sizeof(uids) / sizeof(uids[0]); i++) {
                struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                pid_t pid = listener_as(uids[i], &a.sin_port);
                int c = socket(AF_INET, SOCK_STREAM, 0);

                assert_true(c >= 0);
                assert_false(peer_connected(c));
                assert_int_equal(connect(c, (struct sockaddr *) &a, sizeof(a)), 0);
                assert_true(peer_connected(c));
                assert_int_equal(peer_is_local(c), 1);
                uid = 4242;
                assert_int_equal(peer_owner(c, &uid), 0);
                assert_int_equal(uid, uids[i]);
                close(c);
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        assert_int_equal(peer_owner(sv[0], &uid), 0);
        assert_int_equal(uid, 0);
        assert_int_equal(peer_is_local(sv[0]), 1);
        close(sv[0]);
        close(sv[1]);
}

/* A Redis 7 reply, abridged, with \r\n as the server sends it. */
static const char INFO_MEMORY[] =
        "# Memory\r\nused_memory:8123456\r\nused_memory_human:7.75M\r\nused_memory_rss:12000000\r\n"
        "maxmemory:8388608\r\nmaxmemory_human:8.00M\r\nmaxmemory_policy:noeviction\r\n";
static const char INFO_STATS[] =
        "# Stats\r\ntotal_connections_received:12\r\nevicted_keys:42\r\nkeyspace_hits:1000\r\nkeyspace_misses:250\r\n";
static const char INFO_KEYSPACE[] = "# Keyspace\r\ndb0:keys=120,expires=0,avg_ttl=0\r\ndb2:keys=7,expires=1,avg_ttl=5\r\n";
static const char INFO_CLIENTS[] = "# Clients\r\nconnected_clients:3\r\nblocked_clients:0\r\n";

static void test_info_parse(void **state) {
        RedisInfo info = { 0 };

        assert_int_equal(redis_info_parse(INFO_MEMORY, strlen(INFO_MEMORY), 0, &info), 3);
        assert_int_equal(redis_info_parse(INFO_STATS, strlen(INFO_STATS), 0, &info), 3);
        assert_int_equal(redis_info_parse(INFO_KEYSPACE, strlen(INFO_KEYSPACE), 2, &info), 1);
        assert_int_equal(redis_info_parse(INFO_CLIENTS, strlen(INFO_CLIENTS), 0, &info), 1);
        assert_true(info.have_memory);
        assert_int_equal(info.used_memory, 8123456);
        assert_int_equal(info.maxmemory, 8388608);
        assert_string_equal(info.policy, "noeviction");
        assert_int_equal(info.evicted_keys, 42);
        assert_int_equal(info.keyspace_hits, 1000);
        assert_int_equal(info.keyspace_misses, 250);
        assert_int_equal(info.db_keys, 7);
        assert_int_equal(info.connected_clients, 3);
        /* db0 when the remote is db 0. */
        assert_int_equal(redis_info_parse(INFO_KEYSPACE, strlen(INFO_KEYSPACE), 0, &info), 1);
        assert_int_equal(info.db_keys, 120);
}

static void test_info_hostile(void **state) {
        static const char *const junk[] = {
                "used_memory:-5\r\n", "used_memory:12abc\n", "used_memory:\n", "used_memory:99999999999999999999\n",
                ":\n", "\n\n\n", "used_memory", "db0:keys=\n", "dbx:keys=1\n", "db0:keys=1", "maxmemory_policy:evict-all\n",
                "#used_memory:5\n",
        };
        RedisInfo info = { .used_memory = 7 };

        for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
                redis_info_parse(junk[i], strlen(junk[i]), 0, &info);
        assert_int_equal(info.used_memory, 7);    /* never a half-read number */
        assert_false(info.have_memory);
        assert_string_equal(info.policy, "");
        assert_int_equal(info.db_keys, 1);        /* "db0:keys=1" without a newline is a whole line */
        /* Not NUL-terminated: only n bytes are read. */
        assert_int_equal(redis_info_parse("used_memory:123456", 15, 0, &info), 1);
        assert_int_equal(info.used_memory, 123);
}

static void test_policy_and_level(void **state) {
        const Threshold warn = { .kind = THRESHOLD_PERCENT, .percent = 10 }, crit = { .kind = THRESHOLD_PERCENT, .percent = 5 };
        RedisInfo info = { .maxmemory = 1000000, .used_memory = 100000 };

        assert_int_equal(redis_info_evicts(&info), -1);            /* policy unknown */
        assert_int_equal(redis_info_set_policy(&info, "volatile-lru", 12), 0);
        assert_int_equal(redis_info_evicts(&info), 0);             /* ccache's keys have no TTL */
        assert_int_equal(redis_info_set_policy(&info, "bogus", 5), -EINVAL);
        assert_string_equal(info.policy, "volatile-lru");
        assert_int_equal(redis_info_set_policy(&info, "allkeys-lru", 11), 0);
        assert_int_equal(redis_info_evicts(&info), 1);
        info.maxmemory = 0;
        assert_int_equal(redis_info_evicts(&info), 0);             /* no limit: grows until the host is out */

        /* Levels only under a non-evicting policy with a limit. */
        info = (RedisInfo) { .maxmemory = 1000000, .used_memory = 960000, .policy = "allkeys-lru" };
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_OK), REDIS_LEVEL_OK);
        strcpy(info.policy, "noeviction");
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_OK), REDIS_LEVEL_CRITICAL);  /* 40k free */
        info.used_memory = 930000;
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_OK), REDIS_LEVEL_WARNING);   /* 70k free */
        info.used_memory = 990000;
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_WARNING), REDIS_LEVEL_CRITICAL);
        info.used_memory = 2000000;                                                                  /* over it */
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_OK), REDIS_LEVEL_CRITICAL);
        /* Hysteresis: 1 % of maxmemory above a threshold to leave it. */
        info.used_memory = 945000;                                                                   /* 55k free */
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_CRITICAL), REDIS_LEVEL_CRITICAL);
        info.used_memory = 935000;                                                                   /* 65k free */
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_CRITICAL), REDIS_LEVEL_WARNING);
        info.used_memory = 895000;                                                                   /* 105k free */
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_WARNING), REDIS_LEVEL_WARNING);
        info.used_memory = 880000;                                                                   /* 120k free */
        assert_int_equal(redis_info_level(&info, &warn, &crit, REDIS_LEVEL_WARNING), REDIS_LEVEL_OK);
}

static void test_remote_errors(void **state) {
        const usec_t minute = 60 * USEC_PER_SEC, t0 = 1700000000ULL * USEC_PER_SEC;
        uint64_t totals[ACTIVITY_CCACHE_TOTALS] = { 0 };
        Activity *a = NULL;
        bool standing = false;
        char msg[512] = "";

        assert_int_equal(activity_new(&a), 0);
        assert_int_equal(activity_counters(a, totals, t0), 1);   /* the baseline */
        assert_int_equal(remote_errors_check(&standing, a, 5 * minute, "t", t0, msg, sizeof(msg)), ALARM_NONE);
        totals[39] = 3;                                          /* remote_storage_error */
        totals[40] = 1;                                          /* remote_storage_timeout */
        totals[48] = 10;                                         /* remote_storage_miss */
        activity_counters(a, totals, t0 + minute);
        assert_int_equal(remote_errors_count(a, 5 * minute, t0 + minute, NULL, NULL), 4);
        assert_int_equal(remote_errors_check(&standing, a, 5 * minute, "t", t0 + minute, msg, sizeof(msg)), ALARM_FIRE);
        assert_true(standing);
        assert_string_equal(msg, "Cache t: ccache counted 4 remote storage errors or timeouts in the last 5m "
                                 "(remote hits 0, misses 10): stores and lookups in its remote storage fail; "
                                 "see the remotes in cachectl status");
        /* Still within the window: nothing new. */
        activity_advance(a, t0 + 3 * minute);
        assert_int_equal(remote_errors_check(&standing, a, 5 * minute, "t", t0 + 3 * minute, msg, sizeof(msg)),
                         ALARM_NONE);
        /* A whole window without: recovered, once. */
        activity_advance(a, t0 + 7 * minute);
        assert_int_equal(remote_errors_check(&standing, a, 5 * minute, "t", t0 + 7 * minute, msg, sizeof(msg)),
                         ALARM_RECOVER);
        assert_string_equal(msg, "Cache t: no remote storage error or timeout in the last 5m.");
        assert_int_equal(remote_errors_check(&standing, a, 5 * minute, "t", t0 + 8 * minute, msg, sizeof(msg)),
                         ALARM_NONE);
        activity_free(a);
}

/* "auto": many entries touched, in count and in share, to go by mtime; back
 * to atime once the evidence is gone, with hysteresis; mtime and atime as
 * configured whatever the entries show. */
static void test_clock_decide(void **state) {
        const CacheClock A = CACHE_CLOCK_ATIME, M = CACHE_CLOCK_MTIME, AUTO = CACHE_CLOCK_AUTO;

        assert_int_equal(remote_clock_decide(M, M, 1000, 0), M);
        assert_int_equal(remote_clock_decide(A, A, 1000, 1000), A);
        /* One touch, a few: never, however few the entries. */
        assert_int_equal(remote_clock_decide(AUTO, A, 0, 0), A);
        assert_int_equal(remote_clock_decide(AUTO, A, 1, 1), A);
        assert_int_equal(remote_clock_decide(AUTO, A, 40, 7), A);
        /* Enough in count, and in share: 8 of 40 (20 %), 10 of 1000 (1 %). */
        assert_int_equal(remote_clock_decide(AUTO, A, 40, 8), M);
        assert_int_equal(remote_clock_decide(AUTO, A, 1000, 10), M);
        /* Enough in count, not in share: 99 of 10,000 (0.99 %). */
        assert_int_equal(remote_clock_decide(AUTO, A, 10000, 99), A);
        assert_int_equal(remote_clock_decide(AUTO, A, 10000, 100), M);
        /* A 50M-entry share: half a million touched. */
        assert_int_equal(remote_clock_decide(AUTO, A, 50000000, 499999), A);
        assert_int_equal(remote_clock_decide(AUTO, A, 50000000, 500000), M);
        /* Back: only below half of either (no flapping at the line). */
        assert_int_equal(remote_clock_decide(AUTO, M, 1000, 7), M);
        assert_int_equal(remote_clock_decide(AUTO, M, 1000, 5), M);
        assert_int_equal(remote_clock_decide(AUTO, M, 1000, 4), A);
        assert_int_equal(remote_clock_decide(AUTO, M, 40, 4), M);
        assert_int_equal(remote_clock_decide(AUTO, M, 40, 3), A);
        assert_int_equal(remote_clock_decide(AUTO, M, 40, 0), A);
        assert_int_equal(remote_clock_decide(AUTO, M, 0, 0), A);
        /* Counts at the top of the range do not overflow. */
        assert_int_equal(remote_clock_decide(AUTO, A, UINT64_MAX / 1000, UINT64_MAX / 1000), M);
        assert_int_equal(remote_clock_decide(AUTO, A, 100, 500), M);   /* more touched than entries: all */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_url_good),
                cmocka_unit_test(test_url_bad),
                cmocka_unit_test_setup_teardown(test_password_file, setup_tmpdir, teardown_tmpdir),
                cmocka_unit_test_setup_teardown(test_password_fifo, setup_tmpdir, teardown_tmpdir),
                cmocka_unit_test_setup_teardown(test_password_dirs, setup_tmpdir, teardown_tmpdir),
                cmocka_unit_test(test_peer_owner),
                cmocka_unit_test(test_info_parse),
                cmocka_unit_test(test_info_hostile),
                cmocka_unit_test(test_policy_and_level),
                cmocka_unit_test(test_remote_errors),
                cmocka_unit_test(test_clock_decide),
        };
        return cmocka_run_group_tests_name("remote", tests, NULL, NULL);
}
