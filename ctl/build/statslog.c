/* SPDX-License-Identifier: MIT */
/* ccache's statistics log, read (statslog.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/statslog.h"

/* The ids that say how a lookup went, not what the call was: counted by
 * the outcome ids, or not at all (ccache's core/statistics.cpp). */
static bool is_lookup_detail(const char *id) {
        return strncmp(id, "local_storage_", 14) == 0 ||
               (strncmp(id, "remote_storage_", 15) == 0 && strcmp(id, "remote_storage_hit") != 0) ||
               strcmp(id, "direct_cache_miss") == 0 || strcmp(id, "preprocessed_cache_miss") == 0;
}

/* Takes one id of the call c. */
static int take_id(StatsCall *c, const char *id) {
        if (strcmp(id, "direct_cache_hit") == 0)
                c->outcome = STATS_HIT_DIRECT;
        else if (strcmp(id, "preprocessed_cache_hit") == 0)
                c->outcome = STATS_HIT_PREPROCESSED;
        else if (strcmp(id, "cache_miss") == 0)
                c->outcome = STATS_MISS;
        else if (strcmp(id, "recache") == 0)
                c->outcome = STATS_RECACHE;
        else if (strcmp(id, "remote_storage_hit") == 0)
                c->remote = true;
        else if (!is_lookup_detail(id) && !c->reason && !(c->reason = strdup(id)))
                return -ENOMEM;
        return 0;
}

/* The ids that decide a call's outcome (ccache counts one of them per
 * call that got that far; a recache writes "recache" where a lookup would
 * have written a hit or a miss). */
static bool is_outcome(const char *id) {
        return strcmp(id, "direct_cache_hit") == 0 || strcmp(id, "preprocessed_cache_hit") == 0 ||
               strcmp(id, "cache_miss") == 0 || strcmp(id, "recache") == 0;
}

/* A call whose ids named no outcome is uncacheable; a hit, a miss or a
 * recache keeps no reason. */
static void finish(StatsCall *c, bool *outcome_seen) {
        if (!*outcome_seen) {
                c->outcome = STATS_UNCACHEABLE;
                if (!c->reason)
                        c->reason = strdup("unknown");
        } else {
                free(c->reason);
                c->reason = NULL;
        }
        *outcome_seen = false;
}

int statslog_parse(const char *text, size_t len, StatsLog *ret) {
        StatsLog l = { 0 };
        size_t cap = 0;
        bool seen = false;

        for (const char *p = text, *end = text + len; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = (size_t) ((nl ? nl : end) - p);
                char line[512];

                if (n >= sizeof(line))
                        n = sizeof(line) - 1;   /* no id is that long; a path is cut */
                memcpy(line, p, n);
                line[n] = '\0';
                p = nl ? nl + 1 : end;
                if (line[0] == '#') {
                        if (l.n > 0)
                                finish(&l.calls[l.n - 1], &seen);
                        if (l.n == cap) {
                                StatsCall *c = realloc(l.calls, (cap = cap ? cap * 2 : 256) * sizeof(*c));

                                if (!c)
                                        goto oom;
                                l.calls = c;
                        }
                        l.calls[l.n] = (StatsCall) { .input = strdup(line[1] == ' ' ? line + 2 : line + 1) };
                        if (!l.calls[l.n++].input)
                                goto oom;
                        continue;
                }
                if (line[0] == '\0' || l.n == 0)
                        continue;
                if (is_outcome(line))
                        seen = true;
                if (take_id(&l.calls[l.n - 1], line) < 0)
                        goto oom;
        }
        if (l.n > 0)
                finish(&l.calls[l.n - 1], &seen);
        *ret = l;
        return 0;
oom:
        statslog_done(&l);
        return -ENOMEM;
}

int statslog_read(const char *path, StatsLog *ret) {
        struct stat st;
        char *text;
        size_t len = 0;
        int fd, r = 0;

        *ret = (StatsLog) { 0 };
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                r = errno;
                close(fd);
                return r > 0 && !S_ISREG(st.st_mode) ? -EINVAL : -r;
        }
        if ((unsigned long long) st.st_size > STATSLOG_MAX_BYTES) {
                close(fd);
                return -EFBIG;
        }
        text = malloc((size_t) st.st_size + 1);
        if (!text) {
                close(fd);
                return -ENOMEM;
        }
        while (len < (size_t) st.st_size) {
                ssize_t n = read(fd, text + len, (size_t) st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        close(fd);
        if (r == 0)
                r = statslog_parse(text, len, ret);
        free(text);
        return r;
}

void statslog_summarize(const StatsLog *l, StatsSummary *ret) {
        *ret = (StatsSummary) { 0 };
        for (size_t i = 0; i < l->n; i++) {
                const StatsCall *c = &l->calls[i];

                switch (c->outcome) {
                case STATS_HIT_DIRECT: ret->direct_hits++; break;
                case STATS_HIT_PREPROCESSED: ret->preprocessed_hits++; break;
                case STATS_MISS: ret->misses++; break;
                case STATS_UNCACHEABLE: ret->uncacheable++; break;
                case STATS_RECACHE: ret->recache++; break;
                }
                if (c->remote && (c->outcome == STATS_HIT_DIRECT || c->outcome == STATS_HIT_PREPROCESSED))
                        ret->remote_hits++;
        }
        ret->hits = ret->direct_hits + ret->preprocessed_hits;
        ret->cacheable = ret->hits + ret->misses;
}

void statslog_done(StatsLog *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->calls[i].input);
                free(l->calls[i].reason);
        }
        free(l->calls);
        *l = (StatsLog) { 0 };
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

void statslog_dir_remove(const char *dir) {
        (void) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
