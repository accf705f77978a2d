/* SPDX-License-Identifier: MIT */
/* ccache's entry header (ccache-header.h), big-endian as CacheEntry.cpp
 * writes it. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccache/ccache-header.h"

#define MAGIC 0xccacU
#define FORMAT_VERSION 1

static uint64_t be(const uint8_t *p, size_t n) {
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++)
                v = v << 8 | p[i];
        return v;
}

/* A length-prefixed string at *pos into out (256 bytes), printable ASCII. */
static int string_at(const uint8_t *buf, size_t len, size_t *pos, char *out) {
        size_t n;

        if (*pos >= len)
                return -EBADMSG;
        n = buf[(*pos)++];
        if (n > len - *pos)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                if (buf[*pos + i] < 0x20 || buf[*pos + i] > 0x7e)
                        return -EBADMSG;
        memcpy(out, buf + *pos, n);
        out[n] = '\0';
        *pos += n;
        return 0;
}

int ccache_header_parse(const uint8_t *buf, size_t len, CcacheHeader *ret) {
        size_t pos = 15;

        if (len < 16 || be(buf, 2) != MAGIC || buf[2] != FORMAT_VERSION)
                return -EBADMSG;
        ret->type = buf[3];
        ret->compression = buf[4];
        ret->level = (int8_t) buf[5];
        ret->created = be(buf + 7, 8);
        if (string_at(buf, len, &pos, ret->version) < 0 || string_at(buf, len, &pos, ret->ns) < 0 ||
            len - pos < 8)
                return -EBADMSG;
        ret->entry_size = be(buf + pos, 8);
        return 0;
}

int ccache_header_read(int fd, CcacheHeader *ret) {
        uint8_t buf[CCACHE_HEADER_MAX];
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        n = pread(fd, buf, sizeof(buf), 0);
        if (n < 0)
                return -errno;
        return ccache_header_parse(buf, (size_t) n, ret);
}
