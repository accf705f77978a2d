/* SPDX-License-Identifier: MIT */
/* One cache on a temporary directory, driven through its own sd-event loop
 * with a hard deadline: it starts and scans, follows inotify events, trims
 * (by hand and at its cap), and goes unavailable. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "alert/alert.h"
#include "base/slice.h"
#include "cache/cache-internal.h"
#include "cache/cache-writers.h"
#include "cache/cache.h"
#include "config/config.h"
#include "evict/trim.h"
#include "fixture.h"
#include "os/watch.h"
#include "tree/scan-queue.h"

#define DEADLINE_USEC (20 * USEC_PER_SEC)     /* a hung test fails instead of hanging */
#define FILES 40
#define MTIME 1600000000

typedef struct Fixture {
        char dir[64], root[96];
        sd_event *e;
        Watch *w;
        Alerter *alerter;
        Config *config;
        Cache *c;
        unsigned changes;
        unsigned trims_done;
        TrimResult last;          /* the last trim's result, as done got it */
} Fixture;

/* An overflow: the manager rescans every cache; these tests make none. */
static void on_watch_overflow(void *userdata) {
        fail_msg("the inotify queue overflowed");
}

static void on_changed(Cache *c, void *userdata) {
        Fixture *f = userdata;

        f->changes++;
}

static void on_trim_done(Cache *c, const TrimResult *r, void *userdata) {
        Fixture *f = userdata;

        f->trims_done++;
        f->last = *r;
}

/* The path of entry i in rel (a legacy result name, as long as at rel's
 * depth: 2 or 3). */
static void entry_path(Fixture *f, const char *rel, unsigned i, char *buf, size_t len) {
        if (strlen(rel) == 3)
                snprintf(buf, len, "%s/%s/%02x%029uR", f->root, rel, i % 256, i);
        else
                snprintf(buf, len, "%s/%s/%01x%029uR", f->root, rel, i % 16, i);
}

/* Entry i in rel, one block or so, its mtime MTIME + i: older files have
 * smaller i. */
static void put_entry(Fixture *f, const char *rel, unsigned i) {
        char path[256];
        struct timespec ts[2] = { { MTIME + i, 0 }, { MTIME + i, 0 } };
        int fd;

        entry_path(f, rel, i, path, sizeof(path));
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x", 1), 1);
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
}

static void make_dir(Fixture *f, const char *rel) {
        char path[256];

        snprintf(path, sizeof(path), "%s/%s", f->root, rel);
        assert_int_equal(mkdir(path, 0777), 0);
}

/* Loads a config with one cache "t" at f->root; extra goes into its group. */
static void load_config(Fixture *f, const char *extra) {
        char text[1024], err[CONFIG_ERROR_MAX];

        snprintf(text, sizeof(text), "caches = ( { name = \"t\"; path = \"%s\"; %s } );\n", f->root, extra);
        config_free(f->config);
        f->config = NULL;
        if (config_load_string(text, "test.conf", err, sizeof(err), &f->config) < 0)
                fail_msg("config: %s", err);
}

static void new_cache(Fixture *f, const char *extra) {
        load_config(f, extra);
        assert_int_equal(cache_new(f->e, f->w, f->alerter, &f->config->caches[0], on_changed, f, &f->c), 0);
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        strcpy(f->dir, "/tmp/ck-test-cache-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->root, sizeof(f->root), "%s/cache", f->dir);
        assert_int_equal(sd_event_new(&f->e), 0);
        assert_int_equal(watch_new(f->e, on_watch_overflow, f, &f->w), 0);
        assert_int_equal(alerter_new(f->e, NULL, 0, 0, &f->alerter), 0);
        *state = f;
        return 0;
}

static usec_t (*real_clock)(void);

static int teardown(void **state) {
        Fixture *f = *state;

        if (real_clock)
                slice_clock = real_clock;   /* a test that failed with its own clock on */
        f->c = cache_free(f->c);
        f->alerter = alerter_free(f->alerter);
        f->w = watch_free(f->w);
        sd_event_unref(f->e);
        config_free(f->config);
        assert_int_equal(rm_rf(f->dir), 0);
        free(f);
        return 0;
}

/* A cache root with FILES entries in a/b, scanned. */
static void start_scanned(Fixture *f, const char *extra) {
        make_dir(f, "");
        make_dir(f, "a");
        make_dir(f, "a/b");
        for (unsigned i = 0; i < FILES; i++)
                put_entry(f, "a/b", i);
        new_cache(f, extra);
        cache_start(f->c);
        RUN_UNTIL(f, cache_ready(f->c));
}

/* A figure of the status object, or of its object (NULL: the top). */
static uint64_t figure(Cache *c, const char *object, const char *key) {
        json_object *o = cache_status_json(c), *in = o, *v;
        uint64_t n;

        if (object)
                assert_true(json_object_object_get_ex(o, object, &in));
        assert_true(json_object_object_get_ex(in, key, &v));
        n = json_object_get_uint64(v);
        json_object_put(o);
        return n;
}

static uint64_t status_u64(Cache *c, const char *key) {
        return figure(c, NULL, key);
}

static const char *state_of(Cache *c) {
        return cache_state_name(cache_state(c));
}

static void test_start_scans(void **state) {
        Fixture *f = *state;

        start_scanned(f, "max_size = \"1G\";");
        assert_string_equal(state_of(f->c), "ok");
        assert_true(f->changes >= 2);      /* available, then scanned */
        assert_int_equal(status_u64(f->c, "entry_files"), FILES);
        assert_true(cache_dev(f->c) != 0);
        /* ccache.conf written, the root's mode kept */
        char path[160];
        struct stat st;
        snprintf(path, sizeof(path), "%s/ccache.conf", f->root);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(stat(f->root, &st), 0);
        assert_int_equal(st.st_mode & 07777, 01777);
}

static void test_events_follow_files(void **state) {
        Fixture *f = *state;
        char path[256];

        start_scanned(f, "max_size = \"1G\";");
        put_entry(f, "a/b", 1000);
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES + 1);
        entry_path(f, "a/b", 0, path, sizeof(path));
        assert_int_equal(unlink(path), 0);
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES);
        /* a new directory (level 3: the levels 1 and 2 are all there): its
         * subtree is scanned, and watched */
        make_dir(f, "c/d/e");
        put_entry(f, "c/d/e", 2000);
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES + 1);
        put_entry(f, "c/d/e", 2001);
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES + 2);
        snprintf(path, sizeof(path), "%s/c/d/e", f->root);
        assert_int_equal(rm_rf(path), 0);
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES);
}

/* What the events showed of ccache's activity, since ever. */
static ActivityCounts seen(Fixture *f) {
        ActivityCounts n;

        (void) cache_activity_sum(f->c, 0, UINT64_MAX, &n);
        return n;
}

static uint64_t blocks_bytes(const char *path) {
        struct stat st;

        assert_int_equal(stat(path, &st), 0);
        return (uint64_t) st.st_blocks * 512;
}

/* A store (ccache's temporary renamed into place), a hit (utimensat), a
 * removal by someone else: counted once each, with their bytes; what is
 * none of these (a chmod, a rename within the cache, the daemon's own
 * trim) is not. */
static void test_activity_from_events(void **state) {
        Fixture *f = *state;
        char path[256], tmp[300], hex[300], out[300];
        uint64_t entry_bytes, removed_bytes;
        ActivityCounts n;
        int fd;

        start_scanned(f, "max_size = \"1G\";");
        n = seen(f);
        assert_int_equal(n.n[ACTIVITY_STORE] + n.n[ACTIVITY_HIT] + n.n[ACTIVITY_REMOVAL], 0);   /* the scan is none */

        /* a store, as ccache's AtomicFile does it */
        entry_path(f, "a/b", 1000, path, sizeof(path));
        snprintf(tmp, sizeof(tmp), "%s.tmp.Ab12Cd.tmp", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "result", 6), 6);
        close(fd);
        assert_int_equal(rename(tmp, path), 0);
        RUN_UNTIL(f, seen(f).n[ACTIVITY_STORE] == 1);
        entry_bytes = blocks_bytes(path);
        assert_int_equal(seen(f).bytes[ACTIVITY_STORE], entry_bytes);

        /* a hit: ccache's utimensat(NULL) on a known entry */
        entry_path(f, "a/b", 1, path, sizeof(path));
        assert_int_equal(utimensat(AT_FDCWD, path, NULL, 0), 0);
        RUN_UNTIL(f, seen(f).n[ACTIVITY_HIT] == 1);
        assert_int_equal(seen(f).bytes[ACTIVITY_HIT], blocks_bytes(path));

        /* a chmod (the daemon's own repairs are chmods) is no hit; a removal
         * by someone else is counted, with the bytes the entry had */
        entry_path(f, "a/b", 2, path, sizeof(path));
        assert_int_equal(chmod(path, 0600), 0);
        entry_path(f, "a/b", 3, path, sizeof(path));
        removed_bytes = blocks_bytes(path);
        assert_int_equal(unlink(path), 0);
        RUN_UNTIL(f, seen(f).n[ACTIVITY_REMOVAL] == 1);
        n = seen(f);
        assert_int_equal(n.n[ACTIVITY_HIT], 1);
        assert_int_equal(n.bytes[ACTIVITY_REMOVAL], removed_bytes);

        /* ccache 4.13 renaming a legacy entry on a hit: neither a removal
         * nor a store; an entry moved out of the cache: a removal */
        entry_path(f, "a/b", 4, path, sizeof(path));
        snprintf(hex, sizeof(hex), "%s/a/b/0123456789abcdef0123456789abcdef012345", f->root);
        assert_int_equal(rename(path, hex), 0);
        entry_path(f, "a/b", 5, path, sizeof(path));
        snprintf(out, sizeof(out), "%s/moved-out", f->dir);
        assert_int_equal(rename(path, out), 0);
        RUN_UNTIL(f, seen(f).n[ACTIVITY_REMOVAL] == 2);
        n = seen(f);
        assert_int_equal(n.n[ACTIVITY_STORE], 1);
        assert_int_equal(n.n[ACTIVITY_HIT], 1);

        /* the daemon's trim is no removal by someone else */
        assert_int_equal(cache_trim(f->c, cache_totals(f->c)->bytes / 2, false, TRIM_REASON_MANUAL, on_trim_done, f), 0);
        RUN_UNTIL(f, f->trims_done == 1);
        assert_true(f->last.files > 0);
        entry_path(f, "a/b", FILES - 1, path, sizeof(path));
        assert_int_equal(unlink(path), 0);   /* one more, after the trim's echoes */
        RUN_UNTIL(f, seen(f).n[ACTIVITY_REMOVAL] >= 3);
        n = seen(f);
        assert_int_equal(n.n[ACTIVITY_REMOVAL], 3);
        assert_int_equal(n.n[ACTIVITY_STORE], 1);
}

static void test_manual_trim(void **state) {
        Fixture *f = *state;
        const AccountTotals *t;
        uint64_t target;
        json_object *o, *last, *v;

        start_scanned(f, "max_size = \"1G\";");
        t = cache_totals(f->c);
        target = t->bytes - t->bytes / 4;
        assert_int_equal(cache_trim(f->c, target, false, TRIM_REASON_MANUAL, on_trim_done, f), 0);
        RUN_UNTIL(f, f->trims_done == 1);
        assert_false(f->last.dry_run);
        assert_true(f->last.files > 0);
        assert_int_equal(f->last.errors, 0);
        assert_true(cache_totals(f->c)->bytes <= target);
        assert_string_equal(state_of(f->c), "ok");
        o = cache_status_json(f->c);
        assert_true(json_object_object_get_ex(o, "last_trim", &last));
        assert_true(json_object_object_get_ex(last, "reason", &v));
        assert_string_equal(json_object_get_string(v), "manual");
        assert_true(json_object_object_get_ex(last, "over_cap_after", &v));
        assert_false(json_object_get_boolean(v));
        assert_true(json_object_object_get_ex(o, "evicted_files_total", &v));
        assert_int_equal(json_object_get_uint64(v), f->last.files);
        json_object_put(o);
        /* the oldest went: the newest entry is still there */
        char path[256];
        entry_path(f, "a/b", FILES - 1, path, sizeof(path));
        assert_int_equal(access(path, F_OK), 0);
        entry_path(f, "a/b", 0, path, sizeof(path));
        assert_int_equal(access(path, F_OK), -1);
}

/* A dry run only plans; status keeps the last real trim. */
static void test_dry_run(void **state) {
        Fixture *f = *state;
        json_object *o, *v;

        start_scanned(f, "max_size = \"1G\";");
        assert_int_equal(cache_trim(f->c, 1, true, TRIM_REASON_DRY_RUN, on_trim_done, f), 0);
        RUN_UNTIL(f, f->trims_done == 1);
        assert_true(f->last.dry_run);
        assert_int_equal(f->last.files, FILES);
        assert_int_equal(status_u64(f->c, "entry_files"), FILES);
        o = cache_status_json(f->c);
        assert_false(json_object_object_get_ex(o, "last_trim", &v));
        json_object_put(o);
}

/* Over its cap after the scan: the cache trims itself down to trim_to. */
static void test_cap_trim(void **state) {
        Fixture *f = *state;
        uint64_t cap;
        json_object *o, *last, *v;

        start_scanned(f, "max_size = \"100k\"; trim_to = 0.5;");
        cap = f->config->caches[0].max_size_bytes;
        RUN_UNTIL(f, cache_state(f->c) == CACHE_OK);
        assert_true(cache_totals(f->c)->bytes <= cap / 2);
        o = cache_status_json(f->c);
        assert_true(json_object_object_get_ex(o, "last_trim", &last));
        assert_true(json_object_object_get_ex(last, "reason", &v));
        assert_string_equal(json_object_get_string(v), "cap");
        json_object_put(o);
}

/* require_mount not a mount point: unavailable, with the reason, and ready
 * (nothing to wait for); trims are refused. */
static void test_unavailable(void **state) {
        Fixture *f = *state;
        char extra[256];
        json_object *o, *v;

        make_dir(f, "");
        snprintf(extra, sizeof(extra), "max_size = \"1G\"; require_mount = \"%s\";", f->root);
        new_cache(f, extra);
        cache_start(f->c);
        assert_string_equal(state_of(f->c), "unavailable");
        assert_true(cache_ready(f->c));
        assert_int_equal(cache_dev(f->c), 0);
        assert_int_equal(cache_trim(f->c, 0, false, TRIM_REASON_MANUAL, on_trim_done, f), -ENODEV);
        o = cache_status_json(f->c);
        assert_true(json_object_object_get_ex(o, "reason", &v));
        assert_non_null(strstr(json_object_get_string(v), "is not a mount point"));
        json_object_put(o);
}

/* The root deleted under a scanned cache: set up again, empty. */
static void test_root_deleted(void **state) {
        Fixture *f = *state;

        start_scanned(f, "max_size = \"1G\";");
        f->changes = 0;
        assert_int_equal(rm_rf(f->root), 0);
        RUN_UNTIL(f, cache_state(f->c) == CACHE_UNAVAILABLE);
        RUN_UNTIL(f, cache_state(f->c) == CACHE_OK);
        assert_int_equal(status_u64(f->c, "entry_files"), 0);
        assert_true(f->changes >= 3);      /* lost, available, scanned */
}

/* Runs the loop for usec. */
static void run_for(Fixture *f, usec_t usec) {
        usec_t until = now_usec(CLOCK_MONOTONIC) + usec;

        while (now_usec(CLOCK_MONOTONIC) < until)
                assert_true(sd_event_run(f->e, until - now_usec(CLOCK_MONOTONIC)) >= 0);
}

static bool scan_running(Cache *c) {
        json_object *o = cache_status_json(c), *scan, *v;
        bool running;

        assert_true(json_object_object_get_ex(o, "scan", &scan));
        assert_true(json_object_object_get_ex(scan, "running", &v));
        running = json_object_get_boolean(v);
        json_object_put(o);
        return running;
}

static uint64_t rescans(Cache *c) {
        json_object *o = cache_status_json(c), *scan, *v;
        uint64_t n;

        assert_true(json_object_object_get_ex(o, "scan", &scan));
        assert_true(json_object_object_get_ex(scan, "rescans", &v));
        n = json_object_get_uint64(v);
        json_object_put(o);
        return n;
}

/* Whether the scan running is a full one for reason. */
static bool full_scan_running(Cache *c, const char *reason) {
        json_object *o = cache_status_json(c), *scan, *v;
        bool yes;

        assert_true(json_object_object_get_ex(o, "scan", &scan));
        yes = json_object_object_get_ex(scan, "reason", &v) && strcmp(json_object_get_string(v), reason) == 0;
        json_object_put(o);
        return yes;
}

/* A rescan asked for while a full one runs (an inotify overflow in the
 * middle of one, under busy writers) runs again after it: the events lost
 * may concern directories the running one has listed already. Without a
 * watch on a/b (max_watches = 1), only rescans see an entry put there. */
static void test_rescan_asked_during_one_follows_it(void **state) {
        Fixture *f = *state;

        start_scanned(f, "max_size = \"1G\"; max_watches = 1;");
        assert_int_equal(rescans(f->c), 0);
        cache_rescan(f->c, "overflow 1");
        RUN_UNTIL(f, full_scan_running(f->c, "overflow 1"));
        cache_rescan(f->c, "overflow 2");   /* events lost while it runs */
        put_entry(f, "a/b", 1000);
        RUN_UNTIL(f, rescans(f->c) == 2 && !scan_running(f->c));
        assert_int_equal(status_u64(f->c, "entry_files"), FILES + 1);
        run_for(f, 200 * USEC_PER_MSEC);
        assert_int_equal(rescans(f->c), 2);   /* and no more: two asked, two done */
}

/* Directories without a watch (max_watches = 1: the root's only) are seen
 * by paced rescans: a round when cache_check finds one due, then none until
 * UNWATCHED_ROUND_MIN_USEC (at least) after it ended, in the loop's time
 * (which only moves when the loop runs: no sleeping, no race). */
static void test_unwatched_rescanned_in_paced_rounds(void **state) {
        Fixture *f = *state;

        start_scanned(f, "max_size = \"1G\"; max_watches = 1;");
        put_entry(f, "a/b", 1000);
        run_for(f, 200 * USEC_PER_MSEC);
        assert_int_equal(status_u64(f->c, "entry_files"), FILES);     /* no watch: unseen */
        /* Checked until the round can start: on a loaded machine the scan of
         * the new directories put_entry made may still be queued. */
        RUN_UNTIL(f, (cache_check(f->c, event_now(f->e, CLOCK_MONOTONIC)),
                      status_u64(f->c, "entry_files") == FILES + 1));
        RUN_UNTIL(f, !scan_running(f->c));                            /* the round is over */
        put_entry(f, "a/b", 1001);
        cache_check(f->c, event_now(f->e, CLOCK_MONOTONIC));
        run_for(f, 200 * USEC_PER_MSEC);
        assert_int_equal(status_u64(f->c, "entry_files"), FILES + 1);  /* not due yet */
        RUN_UNTIL(f, (cache_check(f->c, event_now(f->e, CLOCK_MONOTONIC) + 3600 * USEC_PER_SEC),
                      status_u64(f->c, "entry_files") == FILES + 2));
}

/* The root lost while a trim runs and another waits: the running one ends,
 * the waiting one fails at once (nothing starts on a cache being set up
 * again), and nothing is left running. */
static void test_root_lost_ends_the_trims(void **state) {
        Fixture *f = *state;

        start_scanned(f, "max_size = \"1G\";");
        assert_int_equal(cache_trim(f->c, 1, false, TRIM_REASON_MANUAL, on_trim_done, f), 0);
        assert_non_null(cache_running_trim(f->c, f));
        assert_int_equal(cache_trim(f->c, 1, true, TRIM_REASON_DRY_RUN, on_trim_done, f), 0);
        assert_int_equal(rm_rf(f->root), 0);
        RUN_UNTIL(f, cache_state(f->c) == CACHE_UNAVAILABLE);
        assert_int_equal(f->trims_done, 2);
        assert_true(f->last.dry_run);
        assert_int_equal(f->last.errors, 1);
        assert_null(cache_running_trim(f->c, f));
}

/* Events lost (no watch on a/b here: max_watches = 1; an inotify overflow
 * does the same): the oldest entries the account knows were hit since, the
 * account does not know it. The cap trim that chose only those evicts
 * nothing, but puts the account right: that is progress, not a failure.
 * The next trim follows at once and takes the cache under its cap, instead
 * of backing off for a minute with cache-trim-failed. */
static void test_cap_trim_on_a_stale_account(void **state) {
        Fixture *f = *state;
        Config *old;
        json_object *o, *last, *v;
        char path[256];

        start_scanned(f, "max_size = \"1G\"; max_watches = 1;");
        for (unsigned i = 0; i < 30; i++) {   /* more than the trim below needs */
                struct timespec ts[2] = { { MTIME + 1000 + i, 0 }, { MTIME + 1000 + i, 0 } };

                entry_path(f, "a/b", i, path, sizeof(path));
                assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
        }
        old = f->config;
        f->config = NULL;
        load_config(f, "max_size = \"100k\"; trim_to = 0.5; max_watches = 1;");
        cache_set_config(f->c, &f->config->caches[0]);
        config_free(old);
        RUN_UNTIL(f, cache_totals(f->c)->bytes <= f->config->caches[0].max_size_bytes);
        o = cache_status_json(f->c);
        assert_true(json_object_object_get_ex(o, "last_trim", &last));
        assert_true(json_object_object_get_ex(last, "over_cap_after", &v));
        assert_false(json_object_get_boolean(v));
        json_object_put(o);
        /* the entries really oldest went first: the hit ones stay */
        entry_path(f, "a/b", 30, path, sizeof(path));
        assert_int_equal(access(path, F_OK), -1);
        entry_path(f, "a/b", 29, path, sizeof(path));
        assert_int_equal(access(path, F_OK), 0);
}

/* A figure of the status's "scan" object. */
static uint64_t scan_u64(Cache *c, const char *key) {
        return figure(c, "scan", key);
}

/* A job that always has work (a cap trim outpaced by writers): a slice,
 * then behind its equals, as the daemon's jobs do (slice_requeue). */
typedef struct Busy {
        sd_event_source *s;
        unsigned turns;
} Busy;

static int on_busy(sd_event_source *s, void *userdata) {
        Busy *b = userdata;

        b->turns++;
        assert_int_equal(slice_requeue(&b->s, on_busy, b), 0);   /* its slices are SLICE_TURN_USEC long */
        return 0;
}

/* What a rescan finds is in the size as soon as it is in the account, so
 * the figure of what was found is too, while the rescan still runs: a
 * reader comparing the size with the growth it was told of (the soak's cap
 * oracle) must never see the size ahead of it. */
static void test_found_counted_while_the_rescan_runs(void **state) {
        Fixture *f = *state;
        unsigned mid = 0;

        start_scanned(f, "max_size = \"1G\"; max_watches = 1;");
        for (unsigned i = FILES; i < FILES + 12000; i++)
                put_entry(f, "a/b", i);   /* unwatched: only the rescan sees them */
        cache_rescan(f->c, "inotify queue overflow");
        for (;;) {
                uint64_t files = status_u64(f->c, "entry_files");
                bool running = scan_running(f->c);

                assert_int_equal(scan_u64(f->c, "found_files_total"), files - FILES);
                mid += running && files > FILES;
                if (!running && files == FILES + 12000)
                        break;
                assert_true(sd_event_run(f->e, 10 * USEC_PER_MSEC) >= 0);
        }
        assert_true(mid > 0);   /* seen in the middle of the rescan */
}

/* The mtime the account holds for entry i in rel. */
static int64_t entry_mtime(Fixture *f, const char *rel, unsigned i) {
        char path[256];
        FileInfo fi;
        FileId id;
        DirId d = DIR_ROOT;

        entry_path(f, rel, i, path, sizeof(path));
        for (const char *p = path + strlen(f->root) + 1, *slash; (slash = strchr(p, '/')); p = slash + 1) {
                char part[64];

                snprintf(part, sizeof(part), "%.*s", (int) (slash - p), p);
                assert_true((d = account_dir_find(f->c->account, d, part)) != DIR_NONE);
        }
        id = account_file_find(f->c->account, d, strrchr(path, '/') + 1);
        assert_true(id != FILE_NONE);
        assert_int_equal(account_file_info(f->c->account, id, &fi), 0);
        return fi.mtime;
}

/* A status costs no pass over the files while the last count is younger
 * than CACHE_WS_USEC: its working set, the advice on the cap and the
 * writers read the same count (the advice used to count again at every
 * request: a pass over a million files in each reply). Once older, the next
 * status counts again, and a change shows. */
static void test_status_counts_once_per_window(void **state) {
        Fixture *f = *state;
        usec_t counted, now;
        char path[256];
        struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };

        start_scanned(f, "max_size = \"1G\";");
        assert_int_equal(figure(f->c, "working_set_files", "30d"), 0);   /* MTIME is long ago */
        counted = f->c->ws_at;
        assert_true(counted > 0);
        entry_path(f, "a/b", 7, path, sizeof(path));
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);           /* a hit: used now */
        do {   /* a later loop iteration, as the next request comes in */
                assert_true(sd_event_run(f->e, USEC_PER_MSEC) >= 0);
                assert_int_equal(sd_event_now(f->e, CLOCK_MONOTONIC, &now), 0);
        } while (now == counted);
        RUN_UNTIL(f, entry_mtime(f, "a/b", 7) > MTIME + 7);                /* the event is in */
        assert_int_equal(figure(f->c, "working_set_files", "1h"), 0);   /* as counted, ... */
        assert_int_equal(f->c->ws_at, counted);                          /* ... not counted again */
        f->c->ws_at = now - CACHE_WS_USEC - 1;                          /* the count ages */
        assert_int_equal(figure(f->c, "working_set_files", "1h"), 1);
        assert_true(f->c->ws_at > counted);
}

/* Nor for the oldest and newest entries' mtimes when the oldest goes (what
 * every trim does, entry after entry): status shows them as of the moment
 * before until the next count, at most CACHE_WS_USEC later. */
static void test_status_span_without_a_pass(void **state) {
        Fixture *f = *state;
        char path[256];
        uint64_t passes;

        start_scanned(f, "max_size = \"1G\";");
        assert_int_equal(status_u64(f->c, "oldest_entry_mtime"), MTIME);
        passes = account_passes(f->c->account);
        entry_path(f, "a/b", 0, path, sizeof(path));
        assert_int_equal(unlink(path), 0);                                /* the oldest goes */
        RUN_UNTIL(f, status_u64(f->c, "entry_files") == FILES - 1);
        assert_int_equal(status_u64(f->c, "oldest_entry_mtime"), MTIME);   /* as of the moment before */
        assert_int_equal(status_u64(f->c, "newest_entry_mtime"), MTIME + FILES - 1);
        assert_int_equal(account_passes(f->c->account), passes);          /* no pass for it */
        f->c->ws_at -= CACHE_WS_USEC + 1;                                  /* the count ages */
        assert_int_equal(status_u64(f->c, "oldest_entry_mtime"), MTIME + 1);
        assert_int_equal(account_passes(f->c->account), passes + 1);
}

/* A count taken while the first scan runs holds part of the cache: once the
 * scan is over, the next status counts again, whatever the count's age. */
static void test_counts_whole_after_the_scan(void **state) {
        Fixture *f = *state;
        struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
        char path[256];

        make_dir(f, "");
        make_dir(f, "a");
        make_dir(f, "a/b");
        for (unsigned i = 0; i < FILES; i++) {
                put_entry(f, "a/b", i);
                entry_path(f, "a/b", i, path, sizeof(path));
                assert_int_equal(utimensat(AT_FDCWD, path, now, 0), 0);   /* used now */
        }
        new_cache(f, "max_size = \"1G\";");
        cache_start(f->c);
        assert_int_equal(figure(f->c, "working_set_files", "1h"), 0);    /* counted before the scan */
        RUN_UNTIL(f, cache_ready(f->c));
        assert_int_equal(figure(f->c, "working_set_files", "1h"), FILES);
}

/* The header pass hands out the writers' tags after the count status
 * shows: once it is over, the next status counts again (writers_pending 0,
 * not the entries still unread when the count was taken). */
static void test_counts_whole_after_the_header_pass(void **state) {
        Fixture *f = *state;
        int enabled = SD_EVENT_ON;

        start_scanned(f, "max_size = \"1G\";");
        assert_true(status_u64(f->c, "writers_pending") > 0);   /* counted before the pass */
        while (sd_event_source_get_enabled(f->c->writers_pass, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                assert_true(sd_event_run(f->e, 10 * USEC_PER_MSEC) >= 0);
        assert_int_equal(status_u64(f->c, "writers_pending"), 0);
}

/* A writer flood keeps the inotify sources and the cap trim pending every
 * loop iteration (here: a job at their priority, always busy). A rescan
 * asked for then (an overflow) still runs, taking turns with them: the
 * events it stands for are not lost a second time. */
static void test_rescan_not_starved_by_a_flood(void **state) {
        Fixture *f = *state;
        Busy busy = { 0 };
        unsigned *turns = &busy.turns;
        char path[256];
        struct stat st;

        start_scanned(f, "max_size = \"1G\"; max_watches = 1;");
        assert_int_equal(sd_event_add_defer(f->e, &busy.s, on_busy, &busy), 0);
        assert_int_equal(sd_event_source_set_priority(busy.s, WATCH_PRIORITY), 0);
        assert_int_equal(sd_event_source_set_enabled(busy.s, SD_EVENT_ON), 0);
        RUN_UNTIL(f, *turns > 3);     /* the flood is on */
        assert_int_equal(scan_u64(f->c, "found_files_total"), 0);   /* the first scan's are no finds */
        put_entry(f, "a/b", 1000);   /* no watch on a/b: only a rescan sees it */
        cache_rescan(f->c, "inotify queue overflow");
        /* over (in slices: the one that finds the file need not be the last) */
        RUN_UNTIL(f, scan_u64(f->c, "rescans") == 1);
        assert_int_equal(status_u64(f->c, "entry_files"), FILES + 1);
        /* a store the events did not show: counted as found, with its size */
        assert_int_equal(scan_u64(f->c, "found_files_total"), 1);
        entry_path(f, "a/b", 1000, path, sizeof(path));
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(scan_u64(f->c, "found_bytes_total"), (uint64_t) st.st_blocks * 512);
        sd_event_source_disable_unref(busy.s);
}

/* The tests' clock for slices: at each read, a whole slice on. */
static usec_t slow_now;
static usec_t slow_clock(void) {
        return slow_now += SLICE_USEC;
}

#define MANY 12000

/* Events that keep coming (a pipe never empty): a byte per turn. */
static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char c;

        assert_int_equal(read(fd, &c, 1), 1);
        (*(unsigned *) userdata)++;
        return 0;
}

/* Every slice of a long job ends on time, whatever its items cost (a cold
 * inode, a loaded box): on a clock that says a slice is over at its first
 * look, the first scan lists one step's entries per loop iteration (at most
 * SCAN_STEP and the directory buffer they came in: not MANY), and the
 * header pass reads CACHE_WRITERS_SLICE_EVERY headers per iteration (it
 * looks past the few files that are no entries); both get to their end.
 * Events at the scan's priority that keep coming get their turns: the scan
 * goes behind them after SLICE_TURN_USEC of its slices (a defer source left
 * on would run before them for as long as it has work). */
static void test_slices_end_on_time(void **state) {
        Fixture *f = *state;
        uint64_t most = 0;
        FileId most_looked = 0;
        int enabled = SD_EVENT_ON, pipefd[2];
        unsigned events = 0, slices = 0;
        sd_event_source *io;
        char bytes[4096] = { 0 };

        make_dir(f, "");
        make_dir(f, "a");
        make_dir(f, "a/b");
        for (unsigned i = 0; i < MANY; i++)
                put_entry(f, "a/b", i);
        new_cache(f, "max_size = \"1G\";");
        assert_int_equal(pipe2(pipefd, O_CLOEXEC | O_NONBLOCK), 0);
        assert_int_equal(write(pipefd[1], bytes, sizeof(bytes)), sizeof(bytes));
        assert_int_equal(sd_event_add_io(f->e, &io, pipefd[0], EPOLLIN, on_events, &events), 0);
        assert_int_equal(sd_event_source_set_priority(io, WATCH_PRIORITY), 0);
        real_clock = slice_clock;
        slice_clock = slow_clock;
        cache_start(f->c);
        for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + DEADLINE_USEC; !cache_ready(f->c);) {
                const ScanProgress *p = scan_queue_current(f->c->scans, NULL, NULL);
                uint64_t before = p ? p->files : 0;

                assert_true(now_usec(CLOCK_MONOTONIC) < deadline);
                assert_true(sd_event_run(f->e, 10 * USEC_PER_MSEC) >= 0);
                if ((p = scan_queue_current(f->c->scans, NULL, NULL)) && p->files != before) {
                        slices++;
                        most = p->files - before > most ? p->files - before : most;
                }
        }
        sd_event_source_disable_unref(io);
        close(pipefd[0]);
        close(pipefd[1]);
        assert_int_equal(status_u64(f->c, "entry_files"), MANY);
        assert_true(most > 0);
        assert_true(most <= SCAN_STEP + 32768 / 24);   /* scan.c: DENTS_BUFFER, a dirent's least size */
        assert_true(slices > SLICE_TURN_USEC / SLICE_USEC);   /* more than a turn (each reads the clock twice or more) */
        assert_true(events >= 1);
        while (sd_event_source_get_enabled(f->c->writers_pass, &enabled) >= 0 && enabled != SD_EVENT_OFF) {
                FileId before = f->c->writers_next;

                assert_true(sd_event_run(f->e, 10 * USEC_PER_MSEC) >= 0);
                if (f->c->writers_next > before && f->c->writers_next - before > most_looked)
                        most_looked = f->c->writers_next - before;
        }
        slice_clock = real_clock;
        assert_true(most_looked > 0);
        assert_true(most_looked <= CACHE_WRITERS_SLICE_EVERY + 4);   /* stats, ccache.conf, CACHEDIR.TAG ... */
        for (FileId id = 0; id < account_file_limit(f->c->account); id++) {
                FileInfo fi;

                if (account_file_info(f->c->account, id, &fi) == 0 && ccache_kind_is_entry(fi.kind))
                        assert_int_not_equal(account_file_tag(f->c->account, id), CACHE_WRITER_UNREAD);
        }
}

/* A level-1 directory moved out of the cache: the status that follows is
 * exact with no pass over the files (the old account purged the forgotten
 * files when the totals were read), and the cache's purge forgets them in
 * the loop on its own, then goes off. */
static void test_dir_moved_out_status_without_a_pass(void **state) {
        Fixture *f = *state;
        char from[256], to[256];
        uint64_t passes, files;
        int enabled = SD_EVENT_ON;

        make_dir(f, "");
        make_dir(f, "a");
        make_dir(f, "a/b");
        make_dir(f, "c");
        make_dir(f, "c/d");
        for (unsigned i = 0; i < FILES; i++)
                put_entry(f, "a/b", i);
        for (unsigned i = 10; i < 30; i++)   /* inside the span of a/b's: it stays exact */
                put_entry(f, "c/d", i);
        new_cache(f, "max_size = \"1G\";");
        cache_start(f->c);
        RUN_UNTIL(f, cache_ready(f->c));
        files = status_u64(f->c, "files");   /* (ccache.conf too) */
        passes = account_passes(f->c->account);
        snprintf(from, sizeof(from), "%s/c", f->root);
        snprintf(to, sizeof(to), "%s/out", f->dir);
        assert_int_equal(rename(from, to), 0);
        RUN_UNTIL(f, status_u64(f->c, "files") != files);
        assert_int_equal(status_u64(f->c, "files"), files - 20);
        assert_int_equal(status_u64(f->c, "entry_files"), FILES);
        assert_int_equal(account_passes(f->c->account), passes);
        RUN_UNTIL(f, sd_event_source_get_enabled(f->c->purge, &enabled) >= 0 && enabled == SD_EVENT_OFF);
        assert_int_equal(account_purge_step(f->c->account, 0), 0);   /* nothing left to forget */
        assert_int_equal(account_passes(f->c->account), passes);
        assert_int_equal(rm_rf(to), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_start_scans, setup, teardown),
                cmocka_unit_test_setup_teardown(test_events_follow_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_activity_from_events, setup, teardown),
                cmocka_unit_test_setup_teardown(test_manual_trim, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cap_trim, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cap_trim_on_a_stale_account, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rescan_not_starved_by_a_flood, setup, teardown),
                cmocka_unit_test_setup_teardown(test_slices_end_on_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unavailable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_deleted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_root_lost_ends_the_trims, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rescan_asked_during_one_follows_it, setup, teardown),
                cmocka_unit_test_setup_teardown(test_found_counted_while_the_rescan_runs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unwatched_rescanned_in_paced_rounds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_counts_once_per_window, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_span_without_a_pass, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dir_moved_out_status_without_a_pass, setup, teardown),
                cmocka_unit_test_setup_teardown(test_counts_whole_after_the_scan, setup, teardown),
                cmocka_unit_test_setup_teardown(test_counts_whole_after_the_header_pass, setup, teardown),
        };
        return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
