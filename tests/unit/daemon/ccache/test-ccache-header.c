/* SPDX-License-Identifier: MIT */
/* ccache's entry header: the bytes ccache 4.7.5 wrote, headers of other
 * versions and namespaces built to the layout, and what is not one (cut
 * short, wrong magic or format, unprintable names, a FIFO, a directory). */
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
#include <unistd.h>

#include <cmocka.h>

#include "ccache/ccache-header.h"
#include "fixture.h"

/* The first 32 bytes of a result written by Debian's ccache 4.7.5. */
static const uint8_t real_475[] = {
        0xcc, 0xac, 0x01, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6b, 0x0d, 0xb9, 0xbc, 0x05,
        0x34, 0x2e, 0x37, 0x2e, 0x35, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x82, 0x28, 0xb5,
};

/* A header as CacheEntry.cpp lays it out; returns its length. */
static size_t build(uint8_t *buf, uint8_t type, const char *version, const char *ns) {
        size_t pos = 0, lv = strlen(version), ln = strlen(ns);

        buf[pos++] = 0xcc, buf[pos++] = 0xac, buf[pos++] = 1, buf[pos++] = type;
        buf[pos++] = 1, buf[pos++] = 1, buf[pos++] = 0;
        for (int i = 7; i >= 0; i--)
                buf[pos++] = (uint8_t) (1800000000ULL >> (8 * i));
        buf[pos++] = (uint8_t) lv;
        memcpy(buf + pos, version, lv), pos += lv;
        buf[pos++] = (uint8_t) ln;
        memcpy(buf + pos, ns, ln), pos += ln;
        for (int i = 7; i >= 0; i--)
                buf[pos++] = (uint8_t) (4242ULL >> (8 * i));
        return pos;
}

static void test_real_and_built(void **state) {
        uint8_t buf[CCACHE_HEADER_MAX];
        CcacheHeader h;
        size_t n;

        assert_int_equal(ccache_header_parse(real_475, sizeof(real_475), &h), 0);
        assert_string_equal(h.version, "4.7.5");
        assert_string_equal(h.ns, "");
        assert_int_equal(h.type, 0);
        assert_int_equal(h.created, 0x6b0db9bcULL);
        assert_int_equal(h.entry_size, 0x482);

        n = build(buf, 1, "4.13.6", "team-a");
        assert_int_equal(ccache_header_parse(buf, n, &h), 0);
        assert_string_equal(h.version, "4.13.6");
        assert_string_equal(h.ns, "team-a");
        assert_int_equal(h.type, 1);
        assert_int_equal(h.created, 1800000000ULL);
        assert_int_equal(h.entry_size, 4242);
        /* the longest names there can be */
        char v[256], ns[256];
        memset(v, 'v', 255), v[255] = '\0';
        memset(ns, 'n', 255), ns[255] = '\0';
        n = build(buf, 0, v, ns);
        assert_int_equal(n, CCACHE_HEADER_MAX);
        assert_int_equal(ccache_header_parse(buf, n, &h), 0);
        assert_string_equal(h.ns, ns);
}

static void test_not_a_header(void **state) {
        uint8_t buf[CCACHE_HEADER_MAX];
        CcacheHeader h;
        size_t n = build(buf, 0, "4.9.1", "");

        for (size_t cut = 0; cut < n; cut++)          /* cut short anywhere */
                assert_int_equal(ccache_header_parse(buf, cut, &h), -EBADMSG);
        assert_int_equal(ccache_header_parse(buf, n, &h), 0);
        buf[0] = 0xcd;
        assert_int_equal(ccache_header_parse(buf, n, &h), -EBADMSG);
        n = build(buf, 0, "4.9.1", "");
        buf[2] = 2;                                     /* another entry format */
        assert_int_equal(ccache_header_parse(buf, n, &h), -EBADMSG);
        n = build(buf, 0, "4.9\n1", "");
        assert_int_equal(ccache_header_parse(buf, n, &h), -EBADMSG);
        n = build(buf, 0, "4.9.1", "\x1b[31mred");
        assert_int_equal(ccache_header_parse(buf, n, &h), -EBADMSG);
}

static void test_read_regular_files_only(void **state) {
        const char *dir = *state;
        char path[96];
        uint8_t buf[CCACHE_HEADER_MAX];
        CcacheHeader h;
        size_t n = build(buf, 0, "4.12.3", "x");
        int fd;

        snprintf(path, sizeof(path), "%s/entry", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, n), (ssize_t) n);
        close(fd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_int_equal(ccache_header_read(fd, &h), 0);
        assert_string_equal(h.version, "4.12.3");
        close(fd);

        snprintf(path, sizeof(path), "%s/fifo", dir);
        assert_int_equal(mkfifo(path, 0666), 0);
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ccache_header_read(fd, &h), -EINVAL);   /* never read: no wait for a writer */
        close(fd);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(ccache_header_read(fd, &h), -EINVAL);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_real_and_built),
                cmocka_unit_test(test_not_a_header),
                cmocka_unit_test_setup_teardown(test_read_regular_files_only, setup_tmpdir, teardown_tmpdir),
        };
        return cmocka_run_group_tests_name("ccache-header", tests, NULL, NULL);
}
