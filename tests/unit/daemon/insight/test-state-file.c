/* SPDX-License-Identifier: MIT */
/* The activity state file: round trip, atomic replace, and every kind of bad
 * file (truncated at every length, garbage, wrong version, bad checksum,
 * huge, a symlink or a directory at the name, another owner) giving its
 * reason, set aside, history starting empty. */
#include <dirent.h>
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

#include "activity-v1.h"
#include "fixture.h"
#include "insight/state-file.h"

#define MIN  (60 * USEC_PER_SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
#define T0 ((usec_t) 1795996800ULL * USEC_PER_SEC)
#define NAME "history-mi210"

static char tmpdir[] = "/tmp/test-history-file-XXXXXX";

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        return rm_rf(tmpdir);
}

/* Fills a with a few days of varied events, moved to T0 + 3 days. */
static void fill_busy(Activity *a) {
        srand(7);
        for (usec_t t = T0; t < T0 + 3 * DAY; t += (usec_t) (1 + rand() % 600) * USEC_PER_SEC) {
                activity_add(a, (ActivityKind) (rand() % _ACTIVITY_KIND_MAX), 1 + (uint64_t) (rand() % 9),
                             (uint64_t) rand(), t);
                if (rand() % 50 == 0)
                        activity_set_size(a, (uint64_t) rand() * 1000, t);
        }
        activity_advance(a, T0 + 3 * DAY);
}

static void encode(const Activity *a, uint8_t *buf) {
        activity_encode(a, buf);
}

/* A fresh directory in tmpdir for each use. */
static int new_dir(void) {
        static unsigned n;
        char name[32];

        snprintf(name, sizeof(name), "d%u", n++);
        return fresh_dir(tmpdir, name);
}

/* What a test works on: a fresh directory of its own in tmpdir, two empty
 * activity records, and (setup_regrets) two empty regret stores. */
typedef struct Fixture {
        int dfd;
        Activity *a, *b;
        Regret *r, *d;
} Fixture;

static int setup_test(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->dfd = new_dir();
        assert_int_equal(activity_new(&f->a), 0);
        assert_int_equal(activity_new(&f->b), 0);
        *state = f;
        return 0;
}

static int setup_regrets(void **state) {
        Fixture *f;

        setup_test(state);
        f = *state;
        assert_int_equal(regret_new(&f->r), 0);
        assert_int_equal(regret_new(&f->d), 0);
        return 0;
}

static int teardown_test(void **state) {
        Fixture *f = *state;

        regret_free(f->r);
        regret_free(f->d);
        activity_free(f->a);
        activity_free(f->b);
        close(f->dfd);
        free(f);
        return 0;
}

/* The bytes activity_file_save writes for a. */
static uint8_t *file_image(const Activity *a) {
        uint8_t *buf = malloc(ACTIVITY_FILE_BYTES + 1);
        int dfd = new_dir(), fd;

        assert_non_null(buf);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        fd = openat(dfd, NAME, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(read(fd, buf, ACTIVITY_FILE_BYTES + 1), ACTIVITY_FILE_BYTES);
        close(fd);
        close(dfd);
        return buf;
}

static void write_file(int dfd, const char *name, const void *buf, size_t n) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, n), (ssize_t) n);
        close(fd);
}

static unsigned entries(int dfd) {
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY);
        DIR *d = fdopendir(fd);
        struct dirent *de;
        unsigned n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

/* Loads dfd/NAME, expecting status bad: a left as it was, the file renamed
 * to NAME.corrupt-<sec> (suffix: "" or ".1"...), a message naming it. */
static void expect_bad(int dfd, StateFileStatus bad, const char *suffix, const char *says) {
        static uint8_t before[ACTIVITY_ENCODED_BYTES], after[ACTIVITY_ENCODED_BYTES];
        char msg[512], aside[128];
        Activity *a = NULL;
        struct stat st;

        assert_int_equal(activity_new(&a), 0);
        activity_add(a, ACTIVITY_HIT, 1, 0, T0 + 4 * DAY);
        encode(a, before);
        assert_int_equal(activity_file_load(dfd, NAME, a, T0 + 4 * DAY, msg, sizeof(msg)), (int) bad);
        encode(a, after);
        assert_memory_equal(before, after, sizeof(before));

        snprintf(aside, sizeof(aside), NAME ".corrupt-%ju%s", (uintmax_t) ((T0 + 4 * DAY) / USEC_PER_SEC), suffix);
        assert_int_equal(fstatat(dfd, NAME, &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
        assert_int_equal(fstatat(dfd, aside, &st, AT_SYMLINK_NOFOLLOW), 0);
        if (!strstr(msg, aside) || !strstr(msg, says) || !strstr(msg, "history starts empty"))
                fail_msg("message '%s' lacks '%s' or '%s'", msg, aside, says);
        activity_free(a);
}

static void test_crc32_is_zlibs(void **state) {
        assert_int_equal(state_file_crc32("123456789", 9), 0xcbf43926U);
        assert_int_equal(state_file_crc32("", 0), 0);
}

static void test_round_trip(void **state) {
        static uint8_t want[ACTIVITY_ENCODED_BYTES], got[ACTIVITY_ENCODED_BYTES];
        Fixture *f = *state;
        int dfd = f->dfd;
        Activity *a = f->a, *b = f->b;
        char msg[256] = "x";
        struct stat st;

        fill_busy(a);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        assert_int_equal(fstatat(dfd, NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(st.st_uid, geteuid());
        assert_int_equal(st.st_size, ACTIVITY_FILE_BYTES);
        assert_int_equal(entries(dfd), 1);      /* no temporary left */

        assert_int_equal(activity_file_load(dfd, NAME, b, T0 + 3 * DAY, msg, sizeof(msg)), STATE_FILE_OK);
        assert_string_equal(msg, "");
        encode(a, want);
        encode(b, got);
        assert_memory_equal(want, got, sizeof(want));

        /* Saved again over it: replaced, still one file. */
        activity_add(a, ACTIVITY_STORE, 5, 50, T0 + 3 * DAY + HOUR);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        assert_int_equal(entries(dfd), 1);
        assert_int_equal(activity_file_load(dfd, NAME, b, T0 + 3 * DAY + HOUR, msg, sizeof(msg)), STATE_FILE_OK);
        encode(a, want);
        encode(b, got);
        assert_memory_equal(want, got, sizeof(want));
}

/* The sum of the events of kind k in a's buckets of seconds from since to
 * until; *ret_last the start of the last such bucket with any. */
static uint64_t sum_kind(const Activity *a, ActivityKind k, unsigned seconds, usec_t since, usec_t until,
                         uint64_t *ret_last) {
        ActivityIter it;
        ActivityRow r;
        uint64_t n = 0;

        *ret_last = 0;
        assert_int_equal(activity_iter_init(&it, a, since, until, seconds), (int) seconds);
        while (activity_iter_next(&it, &r)) {
                n += r.c.n[k];
                if (r.c.n[k])
                        *ret_last = r.start_sec;
        }
        return n;
}

/* A file dated after now (a clock that was ahead, or a forged file): its
 * buckets after now are dropped, the rest loaded, and the message says what
 * went: how many buckets held figures, the span they covered. */
static void test_future_file(void **state) {
        Fixture *f = *state;
        int dfd = f->dfd;
        Activity *a = f->a, *b = f->b;
        usec_t now = T0 + 90 * MIN;
        uint64_t last;
        char msg[512] = "x";

        /* One store a minute from 00:00 to 03:00 (181 minutes), moved to 03:10. */
        for (usec_t k = 0; k <= 180; k++)
                activity_add(a, ACTIVITY_STORE, 1, 10, T0 + k * MIN);
        activity_advance(a, T0 + 190 * MIN);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);

        /* Read 100 minutes before it was written: at 01:30. */
        assert_int_equal(activity_file_load(dfd, NAME, b, now, msg, sizeof(msg)), STATE_FILE_OK);
        assert_string_equal(msg, "History file '" NAME "' is dated 100 min in the future (its newest minute "
                                 "2026-11-30 03:10 UTC): dropped the 90 minute and 2 hour buckets with figures "
                                 "from then, spanning 2026-11-30 01:31 to 2026-11-30 04:00 UTC; the rest is loaded");
        /* Every minute up to now kept (00:00 to 01:30), none after. */
        assert_int_equal(sum_kind(b, ACTIVITY_STORE, 60, T0, T0 + DAY, &last), 91);
        assert_int_equal(last, (T0 + 90 * MIN) / USEC_PER_SEC);
        /* Hours 00 and 01 (its minutes up to 01:30), none after. */
        assert_int_equal(sum_kind(b, ACTIVITY_STORE, 3600, T0, T0 + DAY, &last), 91);
        assert_int_equal(last, (T0 + HOUR) / USEC_PER_SEC);

        /* 5 minutes ahead, nothing counted in them: said, nothing dropped. */
        assert_int_equal(activity_file_load(dfd, NAME, b, T0 + 185 * MIN, msg, sizeof(msg)), STATE_FILE_OK);
        assert_string_equal(msg, "History file '" NAME "' is dated 5 min in the future (its newest minute "
                                 "2026-11-30 03:10 UTC): no bucket after now held figures, the rest is loaded");
        assert_int_equal(sum_kind(b, ACTIVITY_STORE, 60, T0, T0 + DAY, &last), 181);

        /* At its own time, or after: nothing to say. */
        assert_int_equal(activity_file_load(dfd, NAME, b, T0 + 190 * MIN, msg, sizeof(msg)), STATE_FILE_OK);
        assert_string_equal(msg, "");
}

static void test_crash_leftovers_swept(void **state) {
        Fixture *f = *state;
        Activity *a = f->a;
        int dfd = f->dfd;
        char msg[256];

        fill_busy(a);
        /* What a save killed before its rename leaves, and what is not it. */
        write_file(dfd, NAME ".tmp.Ab12Cd.tmp", "partial", 7);
        assert_int_equal(symlinkat("/etc/passwd", dfd, NAME ".tmp.zzzzzz.tmp"), 0);
        write_file(dfd, "other.tmp.Ab12Cd.tmp", "x", 1);
        write_file(dfd, NAME ".tmp.Ab12Cd.tmpx", "x", 1);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        assert_int_equal(entries(dfd), 5);
        assert_int_equal(activity_file_load(dfd, NAME, a, T0 + 3 * DAY, msg, sizeof(msg)), STATE_FILE_OK);
        assert_int_equal(entries(dfd), 3);
        assert_int_equal(faccessat(dfd, "other.tmp.Ab12Cd.tmp", F_OK, 0), 0);
        assert_int_equal(faccessat(dfd, NAME ".tmp.Ab12Cd.tmpx", F_OK, 0), 0);
        assert_int_equal(faccessat(AT_FDCWD, "/etc/passwd", F_OK, 0), 0);
}

static void test_missing(void **state) {
        static uint8_t before[ACTIVITY_ENCODED_BYTES], after[ACTIVITY_ENCODED_BYTES];
        Fixture *f = *state;
        int dfd = f->dfd;
        Activity *a = f->a;
        char msg[256] = "x";

        fill_busy(a);
        encode(a, before);
        assert_int_equal(activity_file_load(dfd, NAME, a, T0 + 3 * DAY, msg, sizeof(msg)), STATE_FILE_MISSING);
        assert_string_equal(msg, "");
        encode(a, after);
        assert_memory_equal(before, after, sizeof(before));
        assert_int_equal(entries(dfd), 0);
        assert_int_equal(activity_file_load(dfd, "a/b", a, T0, msg, sizeof(msg)), -EINVAL);
        assert_int_equal(activity_file_save(dfd, "a/b", a), -EINVAL);
}

static void test_truncated_at_every_length(void **state) {
        Fixture *f = *state;
        Activity *a = f->a;
        uint8_t *img;
        int dfd = f->dfd;
        char detail[160];

        fill_busy(a);
        img = file_image(a);
        assert_int_equal(state_file_check(img, ACTIVITY_FILE_BYTES, detail, sizeof(detail)), STATE_FILE_OK);
        for (size_t n = 0; n < ACTIVITY_FILE_BYTES; n++)
                if (state_file_check(img, n, detail, sizeof(detail)) != STATE_FILE_TRUNCATED)
                        fail_msg("length %zu: %s", n, detail);
        /* Through the file, some lengths: the header's, a stride, the last ones. */
        for (size_t n = 0; n < ACTIVITY_FILE_BYTES; n = n < 40 ? n + 1 : n + 49999) {
                write_file(dfd, NAME, img, n);
                expect_bad(dfd, STATE_FILE_TRUNCATED, "", "is truncated");
                close(dfd);
                dfd = f->dfd = new_dir();
        }
        write_file(dfd, NAME, img, ACTIVITY_FILE_BYTES - 1);
        expect_bad(dfd, STATE_FILE_TRUNCATED, "", "is truncated");
        free(img);
}

static void test_garbage_version_checksum(void **state) {
        Fixture *f = *state;
        Activity *a = f->a;
        uint8_t *img, *junk;
        int dfd = f->dfd;
        unsigned aside = 5;             /* the suffix of the next one set aside */
        char suffix[16];
        uint32_t v;

        fill_busy(a);
        img = file_image(a);
        junk = malloc(ACTIVITY_FILE_BYTES + 10);
        assert_non_null(junk);
        for (size_t i = 0; i < ACTIVITY_FILE_BYTES + 10; i++)
                junk[i] = (uint8_t) rand();
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        expect_bad(dfd, STATE_FILE_GARBAGE, "", "not a history file");
        /* A second one in the same second goes beside the first. */
        write_file(dfd, NAME, "hello\n", 6);
        expect_bad(dfd, STATE_FILE_GARBAGE, ".1", "not a history file");
        /* A good file with more after it. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES + 10);
        expect_bad(dfd, STATE_FILE_GARBAGE, ".2", "after its end");

        /* Version 4, its checksum right. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[8] = 4;
        v = state_file_crc32(junk, ACTIVITY_FILE_BYTES - 4);
        memcpy(junk + ACTIVITY_FILE_BYTES - 4, &v, 4);          /* little-endian host */
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        expect_bad(dfd, STATE_FILE_WRONG_VERSION, ".3", "version 4");

        /* Another minute count. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[16] = 0x41;
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        expect_bad(dfd, STATE_FILE_BAD_LAYOUT, ".4", "layout");

        /* One bit flipped anywhere in the payload or the checksum itself. */
        for (size_t at = STATE_FILE_HEADER_BYTES; at < ACTIVITY_FILE_BYTES; at += 30011) {
                memcpy(junk, img, ACTIVITY_FILE_BYTES);
                junk[at] ^= 0x10;
                write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
                snprintf(suffix, sizeof(suffix), ".%u", aside++);
                expect_bad(dfd, STATE_FILE_BAD_CHECKSUM, suffix, "checksum");
        }
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[ACTIVITY_FILE_BYTES - 1] ^= 0x80;
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        snprintf(suffix, sizeof(suffix), ".%u", aside++);
        expect_bad(dfd, STATE_FILE_BAD_CHECKSUM, suffix, "checksum");

        /* A payload the checksum vouches for but activity cannot hold. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[STATE_FILE_HEADER_BYTES + 16] = 7;               /* the "started" flag */
        v = state_file_crc32(junk, ACTIVITY_FILE_BYTES - 4);
        memcpy(junk + ACTIVITY_FILE_BYTES - 4, &v, 4);
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        snprintf(suffix, sizeof(suffix), ".%u", aside++);
        expect_bad(dfd, STATE_FILE_BAD_LAYOUT, suffix, "cannot read");
        /* Version 1 with this version's layout: version 1 never wrote it. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[8] = 1;
        v = state_file_crc32(junk, ACTIVITY_FILE_BYTES - 4);
        memcpy(junk + ACTIVITY_FILE_BYTES - 4, &v, 4);
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        snprintf(suffix, sizeof(suffix), ".%u", aside++);
        expect_bad(dfd, STATE_FILE_BAD_LAYOUT, suffix, "layout");
        /* Version 2 with this version's layout: neither did version 2. */
        memcpy(junk, img, ACTIVITY_FILE_BYTES);
        junk[8] = 2;
        v = state_file_crc32(junk, ACTIVITY_FILE_BYTES - 4);
        memcpy(junk + ACTIVITY_FILE_BYTES - 4, &v, 4);
        write_file(dfd, NAME, junk, ACTIVITY_FILE_BYTES);
        snprintf(suffix, sizeof(suffix), ".%u", aside++);
        expect_bad(dfd, STATE_FILE_BAD_LAYOUT, suffix, "layout");
        free(img);
        free(junk);
}

/* A file of an older version, whose buckets held the first events daemon
 * kinds, as that build wrote it (want_n bytes): read with every count where
 * it was and the kinds it lacked 0; the next save is the current version,
 * and reads back the same. */
static void older_read(Fixture *f, uint32_t version, unsigned events, size_t want_n) {
        static uint8_t enc[ACTIVITY_ENCODED_BYTES], again[ACTIVITY_ENCODED_BYTES];
        const uint32_t header[8] = { 0, 0, version, STATE_FILE_HEADER_BYTES, ACTIVITY_MINUTES, ACTIVITY_HOURS,
                                     ACTIVITY_BUCKET_BYTES_OF(events), ACTIVITY_ENCODED_BYTES_OF(events) };
        const size_t n = STATE_FILE_HEADER_BYTES + ACTIVITY_ENCODED_BYTES_OF(events) + 4;
        uint8_t *img = malloc(n);
        Activity *a = f->a, *b = f->b;
        ActivityCounts ca, cb;
        char message[256];
        int dfd = f->dfd;
        uint32_t v;

        assert_non_null(img);
        fill_busy(a);
        activity_encode(a, enc);
        memcpy(img, header, sizeof(header));                    /* little-endian host */
        memcpy(img, "\x89" "CKHIST\n", 8);
        activity_encoding_older(enc, img + STATE_FILE_HEADER_BYTES, events);
        v = state_file_crc32(img, n - 4);
        memcpy(img + n - 4, &v, 4);
        assert_int_equal(n, want_n);                            /* what that version wrote */
        write_file(dfd, NAME, img, n);

        assert_int_equal(activity_file_load(dfd, NAME, b, T0 + 3 * DAY, message, sizeof(message)), STATE_FILE_OK);
        activity_sum(a, 0, UINT64_MAX, &ca);
        activity_sum(b, 0, UINT64_MAX, &cb);
        for (unsigned k = events; k < _ACTIVITY_EVENT_MAX; k++) {
                assert_true(ca.n[k] > 0);                       /* fill_busy counted some */
                assert_int_equal(cb.n[k], 0);
                assert_int_equal(cb.bytes[k], 0);
                ca.n[k] = ca.bytes[k] = 0;
        }
        assert_memory_equal(&ca, &cb, sizeof(ca));

        /* Saved again: the current version, and what it read. */
        assert_int_equal(activity_file_save(dfd, NAME, b), 0);
        free(img);
        img = file_image(b);
        assert_int_equal(img[8], ACTIVITY_FILE_VERSION);
        activity_encode(b, enc);
        assert_int_equal(activity_file_load(dfd, NAME, a, T0 + 3 * DAY, message, sizeof(message)), STATE_FILE_OK);
        activity_encode(a, again);
        assert_memory_equal(enc, again, sizeof(enc));
        free(img);
}

/* Version 1: before regret was counted. */
static void test_version1_read(void **state) {
        older_read(*state, 1, ACTIVITY_V1_EVENTS, 302460);
}

/* Version 2: before the rest of a size change (other, adjusted) was. */
static void test_version2_read(void **state) {
        older_read(*state, 2, ACTIVITY_V2_EVENTS, 345660);
}

/* The regret file: the same envelope, its own magic. Saved and loaded, the
 * same regret; a history file at its name, or a flipped bit, set aside. */
static void test_regret_file(void **state) {
        static uint8_t want[REGRET_ENCODED_BYTES], got[REGRET_ENCODED_BYTES];
        Fixture *f = *state;
        Regret *r = f->r, *d = f->d;
        Activity *a = f->a;
        char message[256];
        int dfd = f->dfd, fd;
        struct stat st;
        uint8_t byte;

        fill_busy(a);
        for (uint64_t i = 1; i <= 1000; i++)
                assert_int_equal(regret_evicted(r, i * 77, i, 0, T0 / USEC_PER_SEC, REGRET_BY_CAP), 0);
        assert_true(regret_stored(r, 77, 1, T0 / USEC_PER_SEC + 5));
        assert_int_equal(regret_file_load(dfd, "t.regret", d, T0, message, sizeof(message)), STATE_FILE_MISSING);
        assert_int_equal(regret_file_save(dfd, "t.regret", r), 0);
        assert_int_equal(fstatat(dfd, "t.regret", &st, 0), 0);
        assert_int_equal(st.st_size, STATE_FILE_HEADER_BYTES + REGRET_ENCODED_BYTES + 4);
        assert_int_equal(regret_file_load(dfd, "t.regret", d, T0, message, sizeof(message)), STATE_FILE_OK);
        regret_encode(r, want);
        regret_encode(d, got);
        assert_memory_equal(want, got, sizeof(want));
        assert_true(regret_stored(d, 500 * 77, 1, T0 / USEC_PER_SEC + 10));

        /* A history file is not a regret file. */
        assert_int_equal(activity_file_save(dfd, "t.regret", a), 0);
        assert_int_equal(regret_file_load(dfd, "t.regret", d, T0, message, sizeof(message)), STATE_FILE_GARBAGE);
        assert_non_null(strstr(message, "not a regret file"));
        assert_non_null(strstr(message, "eviction regret starts empty"));
        /* One bit flipped. */
        assert_int_equal(regret_file_save(dfd, "t.regret", r), 0);
        fd = openat(dfd, "t.regret", O_RDWR);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &byte, 1, 4096), 1);
        byte ^= 4;
        assert_int_equal(pwrite(fd, &byte, 1, 4096), 1);
        close(fd);
        assert_int_equal(regret_file_load(dfd, "t.regret", d, T0, message, sizeof(message)),
                         STATE_FILE_BAD_CHECKSUM);
        assert_int_equal(fstatat(dfd, "t.regret", &st, 0), -1);          /* set aside */
        regret_encode(d, got);                                          /* d as it was */
        assert_false(regret_stored(d, 500 * 77, 1, T0 / USEC_PER_SEC + 11));
}

/* A regret file of version 1 (before the reasons and the other
 * departures), as that build wrote it: loaded, every eviction and figure
 * where it was, their reasons unknown; the next save is version 2. */
static void test_regret_version1_read(void **state) {
        static uint8_t enc[REGRET_ENCODED_BYTES], again[REGRET_ENCODED_BYTES];
        const uint32_t header[8] = { 0, 0, 1, STATE_FILE_HEADER_BYTES, REGRET_KEYS, REGRET_HOURS, REGRET_RETURNS,
                                     REGRET_ENCODED_BYTES_V1 };
        const size_t n = STATE_FILE_HEADER_BYTES + REGRET_ENCODED_BYTES_V1 + 4;
        uint8_t *img = malloc(n);
        Fixture *f = *state;
        Regret *r = f->r, *d = f->d;
        RegretFigures fr, fd;
        char message[256];
        int dfd = f->dfd;
        struct stat st;
        RegretBy by;
        uint32_t v, at;

        assert_non_null(img);
        for (uint64_t i = 1; i <= 1000; i++)
                assert_int_equal(regret_evicted(r, i * 77, i, 0, T0 / USEC_PER_SEC, REGRET_BY_PRESSURE), 0);
        assert_true(regret_stored(r, 77, 1, T0 / USEC_PER_SEC + 5));
        regret_encode(r, enc);
        memcpy(img, header, sizeof(header));                    /* little-endian host */
        memcpy(img, "\x89" "CKRGRT\n", 8);
        memcpy(img + STATE_FILE_HEADER_BYTES, enc, REGRET_ENCODED_BYTES_V1);
        v = state_file_crc32(img, n - 4);
        memcpy(img + n - 4, &v, 4);
        assert_int_equal(n, 2117644);                           /* what version 1 wrote */
        write_file(dfd, "t.regret", img, n);

        assert_int_equal(regret_file_load(dfd, "t.regret", d, T0, message, sizeof(message)), STATE_FILE_OK);
        assert_string_equal(message, "");
        regret_figures(r, T0 / USEC_PER_SEC + 10, &fr);
        regret_figures(d, T0 / USEC_PER_SEC + 10, &fd);
        assert_memory_equal(&fr, &fd, sizeof(fr));
        assert_true(regret_left_at(d, 500 * 77, T0 / USEC_PER_SEC + 10, &at, &by));
        assert_int_equal(at, T0 / USEC_PER_SEC);
        assert_int_equal(by, REGRET_BY_UNKNOWN);
        assert_true(regret_stored(d, 500 * 77, 1, T0 / USEC_PER_SEC + 10));

        /* Saved again: version 2, read back the same. */
        assert_int_equal(regret_file_save(dfd, "t.regret", d), 0);
        assert_int_equal(fstatat(dfd, "t.regret", &st, 0), 0);
        assert_int_equal(st.st_size, 2773020);
        assert_int_equal(regret_file_load(dfd, "t.regret", r, T0, message, sizeof(message)), STATE_FILE_OK);
        regret_encode(d, enc);
        regret_encode(r, again);
        assert_memory_equal(enc, again, sizeof(enc));
        free(img);
}

static void test_huge_is_not_read(void **state) {
        Fixture *f = *state;
        int dfd = f->dfd, fd;
        struct timespec t0, t1;

        /* 64 GiB, sparse: reading it would take many seconds. */
        fd = openat(dfd, NAME, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "\x89" "CKHIST\n", 8), 8);
        assert_int_equal(ftruncate(fd, (off_t) 64 << 30), 0);
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        expect_bad(dfd, STATE_FILE_TOO_BIG, "", "too big");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_true(t1.tv_sec - t0.tv_sec < 5);

        /* Just above the bound. */
        fd = openat(dfd, NAME, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, STATE_FILE_MAX_BYTES + 1), 0);
        close(fd);
        expect_bad(dfd, STATE_FILE_TOO_BIG, ".1", "too big");
}

static void test_not_regular_not_followed(void **state) {
        Fixture *f = *state;
        Activity *a = f->a;
        uint8_t *img;
        int dfd = f->dfd;
        char target[64] = "";
        struct stat st;
        char aside[128];

        fill_busy(a);
        img = file_image(a);
        /* A symlink to a perfectly good history file: not followed. */
        write_file(dfd, "elsewhere", img, ACTIVITY_FILE_BYTES);
        assert_int_equal(symlinkat("elsewhere", dfd, NAME), 0);
        expect_bad(dfd, STATE_FILE_NOT_REGULAR, "", "symlink");
        snprintf(aside, sizeof(aside), NAME ".corrupt-%ju", (uintmax_t) ((T0 + 4 * DAY) / USEC_PER_SEC));
        assert_int_equal(readlinkat(dfd, aside, target, sizeof(target) - 1), 9);
        assert_string_equal(target, "elsewhere");              /* the link itself moved */
        assert_int_equal(fstatat(dfd, "elsewhere", &st, 0), 0);
        assert_int_equal(st.st_size, ACTIVITY_FILE_BYTES);

        /* A dangling one, a directory, a fifo (no hang). */
        assert_int_equal(symlinkat("/nonexistent", dfd, NAME), 0);
        expect_bad(dfd, STATE_FILE_NOT_REGULAR, ".1", "symlink");
        assert_int_equal(mkdirat(dfd, NAME, 0755), 0);
        expect_bad(dfd, STATE_FILE_NOT_REGULAR, ".2", "directory");
        assert_int_equal(mkfifoat(dfd, NAME, 0644), 0);
        expect_bad(dfd, STATE_FILE_NOT_REGULAR, ".3", "special file");

        /* Saving over a symlink replaces the link, never writes its target. */
        assert_int_equal(symlinkat("elsewhere", dfd, NAME), 0);
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        assert_int_equal(fstatat(dfd, NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(fstatat(dfd, "elsewhere", &st, 0), 0);
        assert_int_equal(st.st_nlink, 1);
        free(img);
}

static void test_foreign_owner(void **state) {
        Fixture *f = *state;
        Activity *a = f->a;
        int dfd = f->dfd;

        fill_busy(a);
        if (geteuid() != 0)
                skip();
        assert_int_equal(activity_file_save(dfd, NAME, a), 0);
        assert_int_equal(fchownat(dfd, NAME, 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
        expect_bad(dfd, STATE_FILE_FOREIGN_OWNER, "", "owned by uid 65534");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_crc32_is_zlibs),
                cmocka_unit_test_setup_teardown(test_round_trip, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_future_file, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_missing, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_crash_leftovers_swept, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_truncated_at_every_length, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_garbage_version_checksum, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_version1_read, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_version2_read, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_regret_file, setup_regrets, teardown_test),
                cmocka_unit_test_setup_teardown(test_regret_version1_read, setup_regrets, teardown_test),
                cmocka_unit_test_setup_teardown(test_huge_is_not_read, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_not_regular_not_followed, setup_test, teardown_test),
                cmocka_unit_test_setup_teardown(test_foreign_owner, setup_test, teardown_test),
        };

        return cmocka_run_group_tests_name("history-file", tests, setup, teardown);
}
