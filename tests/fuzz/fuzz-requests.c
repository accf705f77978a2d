/* SPDX-License-Identifier: MIT */
/* libFuzzer: request lines through the real handlers (requests.c) of a real
 * Manager, on a temporary cache of ccache entries and a cache whose mount is
 * missing, from root, an admin by primary group, an admin by supplementary
 * group and nobody. The first byte picks the peer; the rest is the line.
 * Every request must be answered exactly once, within FUZZ_ANSWER_USEC,
 * with valid UTF-8 JSON lines (progress lines, then one reply); nothing may
 * crash, leak or abort. Trims and reloads really run. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/protocol.h"
#include "control/control.h"
#include "manager-internal.h"

#define FUZZ_ENTRIES     48                    /* entries put in cache "a" when it runs low */
#define FUZZ_ENTRY_BYTES 4096
#define FUZZ_ANSWER_USEC (20 * USEC_PER_SEC)   /* a request not answered by then is a finding */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Manager *manager;
static char dir[64];
static unsigned answers;

static void die(const char *what) {
        perror(what);
        abort();
}

/* Writes FUZZ_ENTRIES ccache 4.13 entries (40 hex digits: two levels, then
 * the name) into cache a, mtimes an hour apart in the past. */
static void fill(unsigned round) {
        static const char data[FUZZ_ENTRY_BYTES];
        char path[256];

        for (unsigned i = 0; i < FUZZ_ENTRIES; i++) {
                unsigned k = round * FUZZ_ENTRIES + i;
                struct timespec ts[2] = { { .tv_sec = time(NULL) - 3600 * (time_t) (i + 1) } };
                int fd;

                ts[1] = ts[0];
                snprintf(path, sizeof(path), "%s/a/%x", dir, k % 16);
                (void) mkdir(path, 0777);
                snprintf(path, sizeof(path), "%s/a/%x/%x", dir, k % 16, (k / 16) % 16);
                (void) mkdir(path, 0777);
                snprintf(path, sizeof(path), "%s/a/%x/%x/%030d%08x", dir, k % 16, (k / 16) % 16, 0, k);
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t) sizeof(data) || futimens(fd, ts) < 0)
                        die(path);
                close(fd);
        }
}

/* Every line the request sends: one line of valid UTF-8, a progress line
 * or a reply, and nothing after the reply. */
static void sink(const char *line, void *userdata) {
        char *valid = protocol_utf8_valid(line), err[512];
        ProtocolReply reply;

        if (!valid || strcmp(valid, line) != 0)
                abort();        /* not valid UTF-8 */
        free(valid);
        if (strchr(line, '\n') != line + strlen(line) - 1)
                abort();        /* not one line */
        if (answers > 0)
                abort();        /* a line after the reply */
        if (protocol_decode_reply(line, &reply, err, sizeof(err)) < 0)
                abort();        /* neither progress nor a reply */
        if (reply.kind != PROTOCOL_REPLY_PROGRESS &&
            (reply.kind == PROTOCOL_REPLY_BUSY || reply.version != PROTOCOL_VERSION))
                abort();        /* a handler turns no one away; every reply says its version */
        answers += reply.kind != PROTOCOL_REPLY_PROGRESS;
        json_object_put(reply.value);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

/* The temporary tree goes when the fuzzer exits. */
static void cleanup(void) {
        (void) nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        char conf[128], path[128], err[CONFIG_ERROR_MAX];
        Config *config = NULL;
        FILE *f;

        log_set_max_level(LOG_CRIT);    /* every trim and reload would log */
        strcpy(dir, "/tmp/fuzz-requests-XXXXXX");
        if (!mkdtemp(dir))
                die("mkdtemp");
        atexit(cleanup);
        snprintf(path, sizeof(path), "%s/a", dir);
        if (mkdir(path, 01777) < 0)
                die(path);
        fill(0);
        snprintf(conf, sizeof(conf), "%s/ck.conf", dir);
        f = fopen(conf, "w");
        if (!f)
                die(conf);
        fprintf(f, "socket = \"%s/ck.sock\";\nadmin_group = \"root\";\n"
                   "caches = ( { name = \"a\"; path = \"%s/a\"; max_size = \"100M\"; },\n"
                   "           { name = \"b\"; path = \"%s/b\"; max_size = \"1G\"; require_mount = \"%s/b\"; } );\n",
                dir, dir, dir, dir);
        fclose(f);
        if (config_load(conf, err, sizeof(err), &config) < 0) {
                fprintf(stderr, "%s\n", err);
                abort();
        }
        if (manager_new(conf, NULL, config, &manager) < 0 || manager_start(manager) < 0)
                abort();
        for (usec_t end = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC; !manager->ready;)
                if (now_usec(CLOCK_MONOTONIC) > end || sd_event_run(manager->event, 10 * USEC_PER_MSEC) < 0)
                        abort();
        fprintf(stderr, "fuzz-requests: a Manager on %s, admin_group gid %u\n", dir, (unsigned) manager->admin_gid);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const gid_t with_admin[] = { 4, 0, 24 }, without[] = { 4, 24 };
        static const ControlPeer peers[] = {
                { .pid = 1, .uid = 0, .gid = 0 },
                { .pid = 2, .uid = 1000, .gid = 0 },
                { .pid = 3, .uid = 1000, .gid = 1000, .groups = with_admin, .n_groups = 3 },
                { .pid = 4, .uid = 65534, .gid = 65534, .groups = without, .n_groups = 2 },
        };
        static unsigned rounds = 1;
        char *line, err[256];
        ControlRequest *req;
        const char *cmd;
        json_object *o;
        usec_t end;

        /* As control.c does: a line with a NUL, or one that is no request,
         * never reaches the handler. */
        if (size < 1 || memchr(data + 1, 0, size - 1))
                return 0;
        line = malloc(size);
        if (!line)
                return 0;
        memcpy(line, data + 1, size - 1);
        line[size - 1] = '\0';
        if (protocol_decode_request(line, &o, &cmd, err, sizeof(err)) < 0) {
                free(line);
                return 0;
        }
        answers = 0;
        req = control_request_new_local(&peers[data[0] % 4], sink, NULL);
        if (!req)
                abort();
        manager_on_request(req, cmd, o, manager);
        json_object_put(o);
        free(line);
        end = now_usec(CLOCK_MONOTONIC) + FUZZ_ANSWER_USEC;
        while (answers == 0)
                if (now_usec(CLOCK_MONOTONIC) > end || sd_event_run(manager->event, 10 * USEC_PER_MSEC) < 0)
                        abort();        /* never answered: the client would hang */
        /* Trims empty cache a: give it entries again (seen through inotify). */
        if (manager->n_caches > 0 && cache_totals(manager->caches[0])->files < FUZZ_ENTRIES / 4)
                fill(rounds++);
        return 0;
}
