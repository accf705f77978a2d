/* SPDX-License-Identifier: MIT */
/* What the daemon saw around a build (measure-internal.h): the build's own
 * cache (by CACHE, CCACHE_DIR or ccache's cache_dir, matched by inode), its
 * figures before and after, settled; which keys left a cache, for --explain. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/protocol.h"
#include "base/status-keys.h"
#include "build/explain.h"
#include "build/measure-internal.h"
#include "core/client.h"
#include "core/path.h"

/* The daemon's figures settle when two looks this far apart agree. */
#define SETTLE_STEP_USEC (300 * 1000ULL)
#define SETTLE_MAX_USEC (5 * 1000 * 1000ULL)
/* `ccache -k cache_dir` answers one path: more is not read. */
#define CACHE_DIR_ASK_MAX_BYTES 8192

/* Asks the daemon quietly: no daemon is no error (measure needs none).
 * Returns its status, or NULL. */
json_object *measure_daemon_status(void) {
        json_object *status = NULL;
        int r;

        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        ctl_quiet = false;
        return r > 0 ? status : NULL;
}

/* The counters of the cache named name in status. Returns 0 or -ENOENT. */
static int cache_figures(json_object *status, const char *name, Figures *ret) {
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *n = protocol_field_str(c, STATUS_CACHE_NAME);

                if (n && strcmp(n, name) == 0) {
                        *ret = (Figures) { .hits = protocol_field_u64(c, STATUS_CACHE_HITS),
                                           .misses = protocol_field_u64(c, STATUS_CACHE_MISSES) };
                        return 0;
                }
        }
        return -ENOENT;
}

static int cache_figures_now(const char *name, Figures *ret) {
        json_object *status = measure_daemon_status();
        int r = status ? cache_figures(status, name, ret) : -ECONNREFUSED;

        json_object_put(status);
        return r;
}

/* Looks until two looks SETTLE_STEP_USEC apart agree: the last compiles'
 * counters reach the daemon through inotify, a moment after the build. */
static int cache_figures_settled(const char *name, Figures *ret) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + SETTLE_MAX_USEC;
        Figures prev;

        if (cache_figures_now(name, &prev) < 0)
                return -1;
        for (;;) {
                struct timespec ts = { 0, (long) SETTLE_STEP_USEC * 1000 };

                nanosleep(&ts, NULL);
                if (cache_figures_now(name, ret) < 0)
                        return -1;
                if ((ret->hits == prev.hits && ret->misses == prev.misses) || now_usec(CLOCK_MONOTONIC) >= deadline)
                        return 0;
                prev = *ret;
        }
}

/* ccache's own answer to where the build's cache is: `ccache -k
 * cache_dir` in the build's environment (its config files,
 * CCACHE_CONFIGPATH, XDG_CACHE_HOME, the legacy ~/.ccache all weighed as
 * ccache weighs them). Returns a new string, or NULL when ccache cannot be
 * run here or answers no absolute path. */
static char *ccache_cache_dir(void) {
        char buf[CACHE_DIR_ASK_MAX_BYTES];
        int pipefd[2], status = 0;
        size_t len = 0;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return NULL;
        pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0 ||
                    dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                execlp("ccache", "ccache", "-k", "cache_dir", (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        while (pid > 0 && len < sizeof(buf) - 1) {
                ssize_t n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        close(pipefd[0]);
        if (pid < 0)
                return NULL;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return NULL;
        buf[len] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf[0] == '/' ? strdup(buf) : NULL;
}

/* Which of the daemon's caches (status, NULL when it cannot be asked) the
 * build uses: the CACHE argument; else the one at the build's CCACHE_DIR;
 * else the one at ccache's cache_dir as ccache resolves it. Never all. */
static void build_cache(const Measure *m, json_object *status, BuildCache *ret) {
        const char *env = getenv("CCACHE_DIR");

        *ret = (BuildCache) { 0 };
        if (!m->cache && env && *env) {
                ret->dir = strdup(env);
                ret->from = "the build's CCACHE_DIR";
        } else if (!m->cache) {
                ret->dir = ccache_cache_dir();
                ret->from = "ccache's cache_dir";
        }
        for (size_t i = 0; status && i < protocol_field_count(status, STATUS_CACHES); i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *name = protocol_field_str(c, STATUS_CACHE_NAME);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);

                if (name && (m->cache ? strcmp(name, m->cache) == 0 : ret->dir && path && path_same_dir(ret->dir, path))) {
                        ret->name = strdup(name);
                        return;
                }
        }
}

/* No call of the build reached its log: nothing was compiled, unless the
 * daemon saw the build's cache used meanwhile (the build ran where this
 * environment does not reach; the cache's figures over the run stand in).
 * before: the daemon's status before the run, or NULL. Sets m->source. */
void measure_judge_silent_build(Measure *m, json_object *before) {
        const char *name;
        int r;

        build_cache(m, before, &m->bc);
        name = m->bc.name;
        m->source = m->cache ? SOURCE_UNKNOWN : SOURCE_NOTHING;   /* until the cache is looked at */
        if (!before)
                r = asprintf(&m->unchecked, "cachekeeperd cannot be asked");
        else if (m->cache && !name)
                r = asprintf(&m->unchecked, "cachekeeperd keeps no cache %s", m->cache);
        else if (!name && m->bc.dir)
                r = asprintf(&m->unchecked, "its cache, %s (%s), is none cachekeeperd keeps", m->bc.dir, m->bc.from);
        else if (!name)
                r = asprintf(&m->unchecked, "where its cache is is not known (CCACHE_DIR is unset, and ccache cannot "
                                            "be asked here)");
        else if (cache_figures(before, name, &m->before) < 0 || cache_figures_settled(name, &m->after) < 0)
                r = asprintf(&m->unchecked, "cachekeeperd lost track of cache %s meanwhile", name);
        else if (m->after.hits == m->before.hits && m->after.misses == m->before.misses) {
                m->source = SOURCE_NOTHING;
                return;
        } else if (m->after.hits < m->before.hits || m->after.misses < m->before.misses)
                r = asprintf(&m->unchecked, "the counters of cache %s went down meanwhile (zeroed?)", name);
        else {
                m->source = SOURCE_DAEMON;
                return;
        }
        if (r < 0)
                m->unchecked = NULL;
}

/* The daemon's answer to "which of these keys left cache_dir?"
 * (explain.h's ExplainAsk): its cache whose path is cache_dir, asked in
 * batches that fit a request line. */
#define EVICTIONS_BATCH ((PROTOCOL_REQUEST_MAX - 128) / (PROTOCOL_EVICTIONS_KEY_MAX + 3))
char measure_evictions_unasked[CTL_PROBLEM_MAX];
int measure_ask_evictions(void *userdata, const char *cache_dir, const char *const *keys, size_t n,
                         ExplainEviction *out, char *cache) {
        json_object *status = NULL;
        const char *name = NULL;
        int r;

        ctl_quiet = true;
        r = ctl_fetch_status(&status);
        if (r <= 0) {
                snprintf(measure_evictions_unasked, sizeof(measure_evictions_unasked), "%s", ctl_problem);
                ctl_quiet = false;
                return 0;
        }
        /* By its path, or in a container where the cache is mounted
         * elsewhere (-v /var/cache/x:/ccache) by its root's device and inode. */
        struct stat st;
        char id[48] = "";
        if (stat(cache_dir, &st) == 0)
                snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        for (size_t i = 0; i < protocol_field_count(status, STATUS_CACHES) && !name; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);
                const char *root_id = protocol_field_str(c, STATUS_CACHE_ROOT_ID);

                if ((path && path_same_dir(path, cache_dir)) ||
                    (root_id && id[0] && strcmp(root_id, id) == 0))
                        name = protocol_field_str(c, STATUS_CACHE_NAME);
        }
        if (!name) {
                json_object_put(status);
                ctl_quiet = false;
                return 0;   /* a cache the daemon does not keep */
        }
        snprintf(cache, 64, "%s", name);
        for (size_t i = 0; i < n; i++)
                out[i] = (ExplainEviction) { .since = -1 };
        for (size_t at = 0; at < n && r > 0; at += EVICTIONS_BATCH) {
                size_t m = n - at < EVICTIONS_BATCH ? n - at : EVICTIONS_BATCH;
                ProtocolEvictions req = { .cache = name, .keys = (const char **) keys + at, .n_keys = m };
                json_object *result = NULL, *found;

                r = ctl_ask(protocol_encode_evictions(&req), NULL, &result);
                if (r <= 0 || !json_object_object_get_ex(result, PROTOCOL_EVICTIONS_KEYS, &found)) {
                        json_object_put(result);
                        break;
                }
                for (size_t j = 0; j < m; j++) {
                        json_object *k, *since, *by;

                        if (!json_object_object_get_ex(found, keys[at + j], &k))
                                continue;
                        if (json_object_object_get_ex(k, PROTOCOL_EVICTION_SINCE, &since))
                                out[at + j].since = json_object_get_int64(since);
                        if (json_object_object_get_ex(k, PROTOCOL_EVICTION_BY, &by) && by)
                                snprintf(out[at + j].by, sizeof(out[at + j].by), "%s", json_object_get_string(by));
                }
                json_object_put(result);
        }
        ctl_quiet = false;
        json_object_put(status);
        (void) userdata;
        return r > 0 ? 1 : 0;
}
