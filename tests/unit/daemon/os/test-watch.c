/* SPDX-License-Identifier: MIT */
/* The inotify wrapper on a real loop: events arrive with the owner and dir
 * they were watched for, at most WATCH_DRAIN_MAX per loop iteration, and
 * what waits in the library's buffer is still delivered, after the sources
 * of higher priority (the control socket) had their turn; and a freed
 * watch leaves nothing of it to the next one. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "os/watch.h"

#define FILES 1000

static unsigned events, creates, control_runs, control_saw_partial;
static int owner;
static sd_event_source *control;

static uint32_t moved_from, moved_to;   /* the cookies of the last rename */

static void handler(void *o, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name) {
        assert_ptr_equal(o, &owner);
        assert_int_equal(dir, 7);
        events++;
        creates += (mask & IN_CREATE) != 0;
        if (mask & IN_MOVED_FROM)
                moved_from = cookie;
        else if (mask & IN_MOVED_TO)
                moved_to = cookie;
        else
                assert_int_equal(cookie, 0);
        /* a client asks for the status meanwhile */
        assert_int_equal(sd_event_source_set_enabled(control, SD_EVENT_ONESHOT), 0);
}

/* An overflow: none of these tests makes one. */
static void on_overflow(void *userdata) {
        fail_msg("the inotify queue overflowed");
}

/* Stands in for the control socket: default priority. */
static int on_control(sd_event_source *s, void *userdata) {
        control_runs++;
        control_saw_partial += events > 0 && events < 2 * FILES;
        return 0;
}

/* A loop, its watch and a fresh directory to watch. */
typedef struct Fixture {
        char root[64];
        sd_event *e;
        Watch *w;
        int fd;                   /* the directory's */
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        strcpy(f->root, "/tmp/ck-test-watch-XXXXXX");
        assert_non_null(mkdtemp(f->root));
        assert_int_equal(sd_event_new(&f->e), 0);
        assert_int_equal(watch_new(f->e, on_overflow, &events, &f->w), 0);
        f->fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->fd >= 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;

        control = sd_event_source_disable_unref(control);
        close(f->fd);
        f->w = watch_free(f->w);
        sd_event_unref(f->e);
        assert_int_equal(rm_rf(f->root), 0);
        free(f);
        return 0;
}

static void test_bounded_drain(void **state) {
        Fixture *fx = *state;
        sd_event *e = fx->e;
        Watch *w = fx->w;
        unsigned iterations = 0, prev = 0;
        int fd = fx->fd;

        assert_true(watch_add(w, fd, WATCH_DIR_EVENTS, handler, &owner, 7) > 0);
        assert_int_equal(watch_count(w), 1);
        for (int i = 0; i < FILES; i++) {
                char name[32];
                int f;

                snprintf(name, sizeof(name), "f%d", i);
                f = openat(fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(f >= 0);
                close(f);   /* IN_CREATE, IN_CLOSE_WRITE */
        }
        assert_int_equal(sd_event_add_defer(e, &control, on_control, NULL), 0);
        assert_int_equal(sd_event_source_set_enabled(control, SD_EVENT_OFF), 0);
        while (events < 2 * FILES) {
                assert_true(sd_event_run(e, 1000 * 1000) >= 0);
                assert_true(events - prev <= WATCH_DRAIN_MAX);
                prev = events;
                assert_true(++iterations < 10000);
        }
        assert_int_equal(creates, FILES);
        assert_true(control_saw_partial >= 2);   /* it did not wait for the flood to end */
        /* a rename's two events carry one cookie */
        assert_int_equal(renameat(fd, "f0", fd, "g0"), 0);
        while (moved_to == 0) {
                assert_true(sd_event_run(e, 1000 * 1000) >= 0);
                assert_true(++iterations < 10000);
        }
        assert_int_not_equal(moved_from, 0);
        assert_int_equal(moved_from, moved_to);
}

static unsigned later_events, later_others;

/* The second instance's handler: only what was done in its directory. */
static void later_handler(void *o, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name) {
        later_events++;
        later_others += !name || strcmp(name, "marker") != 0;
}

/* A watch freed with events still in the library's buffer (it reads more
 * than one iteration returns), then a new one, whose first watch gets the
 * same descriptor: it sees only its own directory's events. */
static void test_free_forgets_buffered_events(void **state) {
        Fixture *fx = *state;
        char dir2[64];
        int fd2, f;

        events = 0;
        assert_int_equal(watch_add(fx->w, fx->fd, WATCH_DIR_EVENTS, handler, &owner, 7), 1);
        for (int i = 0; i < FILES; i++) {
                char name[32];

                snprintf(name, sizeof(name), "f%d", i);
                f = openat(fx->fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(f >= 0);
                close(f);
        }
        assert_int_equal(sd_event_add_defer(fx->e, &control, on_control, NULL), 0);
        assert_int_equal(sd_event_source_set_enabled(control, SD_EVENT_OFF), 0);
        while (events == 0)
                assert_true(sd_event_run(fx->e, 1000 * 1000) >= 0);
        assert_true(events < 2 * FILES);   /* the rest waits, much of it in the library's buffer */
        fx->w = watch_free(fx->w);

        strcpy(dir2, "/tmp/ck-test-watch-XXXXXX");
        assert_non_null(mkdtemp(dir2));
        fd2 = open(dir2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd2 >= 0);
        assert_int_equal(watch_new(fx->e, on_overflow, &events, &fx->w), 0);
        assert_int_equal(watch_add(fx->w, fd2, WATCH_DIR_EVENTS, later_handler, &owner, 8), 1);
        f = openat(fd2, "marker", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(f >= 0);
        close(f);   /* IN_CREATE, IN_CLOSE_WRITE */
        while (later_events < 2)
                assert_true(sd_event_run(fx->e, 1000 * 1000) >= 0);
        assert_int_equal(later_others, 0);
        assert_int_equal(later_events, 2);
        close(fd2);
        assert_int_equal(rm_rf(dir2), 0);
}

static unsigned first_events, second_events;
static int first_owner, second_owner;

static void first_handler(void *o, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name) {
        assert_ptr_equal(o, &first_owner);
        assert_int_equal(dir, 1);
        first_events++;
}

static void second_handler(void *o, uint32_t dir, uint32_t mask, uint32_t cookie, const char *name) {
        assert_ptr_equal(o, &second_owner);
        assert_int_equal(dir, 2);
        second_events++;
}

/* Two owners on one Watch (two caches): each watch's events go to the
 * handler it was added with, and to no other. */
static void test_each_watch_its_handler(void **state) {
        Fixture *fx = *state;
        char dir2[64];
        int fd2, f;

        strcpy(dir2, "/tmp/ck-test-watch-XXXXXX");
        assert_non_null(mkdtemp(dir2));
        fd2 = open(dir2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd2 >= 0);
        assert_true(watch_add(fx->w, fx->fd, WATCH_DIR_EVENTS, first_handler, &first_owner, 1) > 0);
        assert_true(watch_add(fx->w, fd2, WATCH_DIR_EVENTS, second_handler, &second_owner, 2) > 0);
        f = openat(fx->fd, "a", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(f >= 0);
        close(f);   /* IN_CREATE, IN_CLOSE_WRITE to the first */
        assert_int_equal(mkdirat(fd2, "b", 0755), 0);   /* IN_CREATE to the second */
        while (first_events < 2 || second_events < 1)
                assert_true(sd_event_run(fx->e, 1000 * 1000) >= 0);
        assert_int_equal(first_events, 2);
        assert_int_equal(second_events, 1);
        close(fd2);
        assert_int_equal(rm_rf(dir2), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_bounded_drain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_free_forgets_buffered_events, setup, teardown),
                cmocka_unit_test_setup_teardown(test_each_watch_its_handler, setup, teardown),
        };
        return cmocka_run_group_tests_name("watch", tests, NULL, NULL);
}
