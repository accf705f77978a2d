/* SPDX-License-Identifier: MIT */
/* The volumes under real caches: caches on a temporary directory of /tmp's
 * filesystem and of /dev/shm's, on their own sd-event loop with a hard
 * deadline. Levels and their alerts, pressure eviction across the caches of
 * a volume, and a volume coming while pressure eviction starts its trims. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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
#include "cache/cache.h"
#include "config/config.h"
#include "evict/trim.h"
#include "fixture.h"
#include "os/watch.h"
#include "space/space.h"
#include "space/volume.h"

#define DEADLINE_USEC (20 * USEC_PER_SEC)     /* a hung test fails instead of hanging */
#define FILES 20
#define MTIME 1600000000

enum { A1, A2, B, N_CACHES };

typedef struct Fixture {
        char dir_a[64], dir_b[64], mount_a[256], alerts[128];
        sd_event *e;
        Watch *w;
        Alerter *alerter;
        Config *config;
        Space *space;
        Cache *caches[N_CACHES];
        bool no_second_fs;        /* /dev/shm is missing, or on /tmp's filesystem: skip */
        size_t n_known;           /* the caches the owner of the space knows of */
        bool sync_on_change;      /* it syncs the space when one of them changes */
} Fixture;

/* An overflow: the manager rescans every cache; these tests make none. */
static void on_watch_overflow(void *userdata) {
        fail_msg("the inotify queue overflowed");
}

/* As an owner of caches and their space may: a change of a cache is a
 * change of its volume's figures, synced at once. */
static void on_changed(Cache *c, void *userdata) {
        Fixture *f = userdata;

        if (f->sync_on_change)
                space_sync(f->space, f->config, f->caches, f->n_known);
}

/* n entry files of one block or so in <root>/a/b, the first one's mtime
 * MTIME + first, one second apart. */
static void put_entries(const char *root, unsigned first, unsigned n) {
        char path[256];

        snprintf(path, sizeof(path), "%s", root);
        assert_int_equal(mkdir(path, 0777), 0);
        snprintf(path, sizeof(path), "%s/a", root);
        assert_int_equal(mkdir(path, 0777), 0);
        snprintf(path, sizeof(path), "%s/a/b", root);
        assert_int_equal(mkdir(path, 0777), 0);
        for (unsigned i = first; i < first + n; i++) {
                struct timespec ts[2] = { { MTIME + i, 0 }, { MTIME + i, 0 } };
                int fd;

                snprintf(path, sizeof(path), "%s/a/b/%02x%029uR", root, i % 256, i);
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "x", 1), 1);
                assert_int_equal(futimens(fd, ts), 0);
                close(fd);
        }
}

/* The config: caches a1 and a2 on /tmp's volume, b on /dev/shm's; volumes
 * holds the volumes group's settings, override those of a1's volume. */
static void load_config(Fixture *f, const char *volumes, const char *override) {
        char text[2048], err[CONFIG_ERROR_MAX];

        snprintf(text, sizeof(text),
                 "alert_command = [ \"/bin/sh\", \"-c\", \"echo \\\"$CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL "
                 "$CACHEKEEPER_MOUNT\\\" >> %s\" ];\n"
                 "alert_min_interval = \"0s\";\n"
                 "volumes = { %s overrides = ( { mount = \"%s\"; %s } ); };\n"
                 "caches = ( { name = \"a1\"; path = \"%s/a1\"; max_size = \"1G\"; },\n"
                 "           { name = \"a2\"; path = \"%s/a2\"; max_size = \"1G\"; },\n"
                 "           { name = \"b\"; path = \"%s/b\"; max_size = \"1G\"; } );\n",
                 f->alerts, volumes, f->mount_a, override, f->dir_a, f->dir_a, f->dir_b);
        if (config_load_string(text, "test.conf", err, sizeof(err), &f->config) < 0)
                fail_msg("config: %s", err);
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));
        struct stat sa, sb;
        sigset_t mask;

        assert_non_null(f);
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);     /* sd-event watches the alert command's runs */
        assert_int_equal(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
        strcpy(f->dir_a, "/tmp/ck-test-space-XXXXXX");
        assert_non_null(mkdtemp(f->dir_a));
        strcpy(f->dir_b, "/dev/shm/ck-test-space-XXXXXX");
        f->no_second_fs = !mkdtemp(f->dir_b) || stat(f->dir_a, &sa) < 0 || stat(f->dir_b, &sb) < 0 ||
                          sa.st_dev == sb.st_dev;
        assert_int_equal(volume_mount_of(f->dir_a, f->mount_a, sizeof(f->mount_a)), 0);
        snprintf(f->alerts, sizeof(f->alerts), "%s/alerts", f->dir_a);
        assert_int_equal(sd_event_new(&f->e), 0);
        assert_int_equal(watch_new(f->e, on_watch_overflow, f, &f->w), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;

        /* The caches go first, as the manager frees them: their trims end,
         * and the pressure trims' callbacks reach the space. */
        for (size_t i = 0; i < N_CACHES; i++)
                f->caches[i] = cache_free(f->caches[i]);
        f->space = space_free(f->space);
        f->alerter = alerter_free(f->alerter);
        f->w = watch_free(f->w);
        sd_event_unref(f->e);
        config_free(f->config);
        assert_int_equal(rm_rf(f->dir_a), 0);
        assert_int_equal(rm_rf(f->dir_b), 0);
        free(f);
        return 0;
}

/* Caches a1 (the FILES oldest entries), a2 (the next FILES) and b, started
 * and scanned; the space knows of none of them yet. */
static void start_caches(Fixture *f, const char *volumes, const char *override) {
        char root[128];

        if (f->no_second_fs)
                skip();
        load_config(f, volumes, override);
        assert_int_equal(alerter_new(f->e, f->config->alert_argv, f->config->alert_timeout_usec,
                                     f->config->alert_min_interval_usec, &f->alerter), 0);
        assert_int_equal(space_new(f->e, f->alerter, &f->space), 0);
        snprintf(root, sizeof(root), "%s/a1", f->dir_a);
        put_entries(root, 0, FILES);
        snprintf(root, sizeof(root), "%s/a2", f->dir_a);
        put_entries(root, FILES, FILES);
        snprintf(root, sizeof(root), "%s/b", f->dir_b);
        put_entries(root, 2 * FILES, FILES);
        for (size_t i = 0; i < N_CACHES; i++) {
                assert_int_equal(cache_new(f->e, f->w, f->alerter, &f->config->caches[i], on_changed, f,
                                           &f->caches[i]), 0);
                cache_start(f->caches[i]);
        }
        RUN_UNTIL(f, cache_ready(f->caches[A1]) && cache_ready(f->caches[A2]) && cache_ready(f->caches[B]));
}

static uint64_t entry_files(Cache *c) {
        json_object *o = cache_status_json(c), *v;
        uint64_t n;

        assert_true(json_object_object_get_ex(o, "entry_files", &v));
        n = json_object_get_uint64(v);
        json_object_put(o);
        return n;
}

/* The status field key of the volume mounted at mount, as a string. */
static bool volume_field_is(Space *s, const char *mount, const char *key, const char *value) {
        json_object *list = space_status_json(s);
        bool found = false;

        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *o = json_object_array_get_idx(list, i), *m, *v;

                if (json_object_object_get_ex(o, "mount", &m) && strcmp(json_object_get_string(m), mount) == 0 &&
                    json_object_object_get_ex(o, key, &v))
                        found = strcmp(json_object_get_string(v), value) == 0;
        }
        json_object_put(list);
        return found;
}

static bool alerted(Fixture *f, const char *line) {
        char buf[4096];
        FILE *fp = fopen(f->alerts, "r");
        bool found = false;

        if (!fp)
                return false;
        while (!found && fgets(buf, sizeof(buf), fp))
                found = strncmp(buf, line, strlen(line)) == 0;
        fclose(fp);
        return found;
}

/* Levels follow the thresholds, with an alert for each transition. */
static void test_levels(void **state) {
        Fixture *f = *state;
        char line[512];
        Config *old;

        /* Whatever the fill of /tmp's volume: below 99.9 % free is critical. */
        start_caches(f, "", "warn_free = \"99.95%\"; crit_free = \"99.9%\";");
        space_sync(f->space, f->config, f->caches, N_CACHES);
        assert_int_equal(space_volumes(f->space), 2);
        assert_true(volume_field_is(f->space, f->mount_a, "alert", "critical"));
        snprintf(line, sizeof(line), "volume-level critical %s", f->mount_a);
        RUN_UNTIL(f, alerted(f, line));
        /* Back under ordinary thresholds: ok, and said so. */
        old = f->config;
        f->config = NULL;
        load_config(f, "", "warn_free = \"1%\"; crit_free = \"0.5%\";");
        for (size_t i = 0; i < N_CACHES; i++)
                cache_set_config(f->caches[i], &f->config->caches[i]);
        alerter_set_command(f->alerter, f->config->alert_argv, f->config->alert_timeout_usec,
                            f->config->alert_min_interval_usec);
        space_sync(f->space, f->config, f->caches, N_CACHES);
        config_free(old);
        assert_true(volume_field_is(f->space, f->mount_a, "alert", "ok"));
        snprintf(line, sizeof(line), "volume-level ok %s", f->mount_a);
        RUN_UNTIL(f, alerted(f, line));
}

/* Below min_free (more than the volume holds): both caches of the volume
 * are emptied of what may go, the other volume's cache is left alone, and
 * once nothing is left the status says the space is held by something else. */
static void test_pressure_relieved_across_caches(void **state) {
        Fixture *f = *state;
        char line[512];

        start_caches(f, "", "min_free = \"1000T\";");
        f->n_known = N_CACHES;
        f->sync_on_change = true;
        space_sync(f->space, f->config, f->caches, N_CACHES);
        assert_true(volume_field_is(f->space, f->mount_a, "pressure", "true"));
        RUN_UNTIL(f, entry_files(f->caches[A1]) == 0 && entry_files(f->caches[A2]) == 0);
        RUN_UNTIL(f, volume_field_is(f->space, f->mount_a, "pressure_caches_empty", "true"));
        assert_int_equal(entry_files(f->caches[B]), FILES);
        snprintf(line, sizeof(line), "volume-pressure warning %s", f->mount_a);
        assert_true(alerted(f, line));
}

/* A volume comes (cache b, on another filesystem, is now known) while
 * pressure eviction on a1's volume starts its trims: the trims' change
 * callbacks sync the space, which adds b's volume to its array. The
 * eviction must not have kept a pointer into it. */
static void test_volume_added_while_relieving(void **state) {
        Fixture *f = *state;

        start_caches(f, "", "min_free = \"1000T\";");
        f->n_known = N_CACHES;        /* the owner's list, from now on: b too */
        f->sync_on_change = true;
        space_sync(f->space, f->config, f->caches, 2);
        RUN_UNTIL(f, entry_files(f->caches[A1]) == 0 && entry_files(f->caches[A2]) == 0);
        assert_int_equal(space_volumes(f->space), 2);
        assert_int_equal(entry_files(f->caches[B]), FILES);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_levels, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pressure_relieved_across_caches, setup, teardown),
                cmocka_unit_test_setup_teardown(test_volume_added_while_relieving, setup, teardown),
        };
        return cmocka_run_group_tests_name("space", tests, NULL, NULL);
}
