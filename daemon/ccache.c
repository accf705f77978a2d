/* SPDX-License-Identifier: MIT */
/* ccache's file names and stats files. Name packing must be exact: the
 * daemon deletes by the unpacked name, so pack(unpack(x)) == x is tested. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccache.h"
#include "util.h"

/* Codes: 0 R, 1 M, 2-11 legacy raw <n>W with n = code-2, 12 4.13 entry,
 * 13 4.13 raw _<nn> (nn packed after the key). */
#define CODE_RESULT   0
#define CODE_MANIFEST 1
#define CODE_RAW0     2
#define CODE_V413     12
#define CODE_V413_RAW 13

/* Up to 4.12 a key is 4 base16 then 29 base32hex chars (33 in all); 4.13
 * uses 40 base16 chars. The directory levels consume the first chars. */
#define LEGACY_KEY_LEN 33
#define LEGACY_HEX_PREFIX 4
#define V413_KEY_LEN 40

static const char base32hex[] = "0123456789abcdefghijklmnopqrstuv";

static int b32_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'v')
                return c - 'a' + 10;
        return -1;
}

static int hex_value(char c) {
        int v = b32_value(c);
        return v >= 0 && v < 16 ? v : -1;
}

/* A tiny bit writer/reader over the 20 packed bytes, most significant first. */
static void put_bits(uint8_t *buf, unsigned *pos, unsigned value, unsigned nbits) {
        for (unsigned i = nbits; i-- > 0; (*pos)++)
                if (value & (1u << i))
                        buf[*pos / 8] |= (uint8_t) (0x80u >> (*pos % 8));
}

static unsigned get_bits(const uint8_t *buf, unsigned *pos, unsigned nbits) {
        unsigned v = 0;

        for (unsigned i = 0; i < nbits; i++, (*pos)++)
                v = (v << 1) | ((buf[*pos / 8] >> (7 - *pos % 8)) & 1u);
        return v;
}

static int pack_legacy(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = LEGACY_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        unsigned pos = 0;
        uint8_t code;

        if (len == keylen + 1 && name[keylen] == 'R')
                code = CODE_RESULT;
        else if (len == keylen + 1 && name[keylen] == 'M')
                code = CODE_MANIFEST;
        else if (len == keylen + 2 && name[keylen + 1] == 'W' && name[keylen] >= '0' && name[keylen] <= '9')
                code = (uint8_t) (CODE_RAW0 + (name[keylen] - '0'));
        else
                return -EINVAL;
        for (size_t i = 0; i < keylen; i++) {
                /* The first 4 key chars are base16, so those left after the
                 * directory levels must be too. */
                int v = i + depth < LEGACY_HEX_PREFIX ? hex_value(name[i]) : b32_value(name[i]);
                if (v < 0)
                        return -EINVAL;
                put_bits(buf, &pos, (unsigned) v, 5);
        }
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

static int pack_v413(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = V413_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        unsigned pos = 0;
        uint8_t code;

        if (len == keylen)
                code = CODE_V413;
        else if (len == keylen + 3 && name[keylen] == '_' && hex_value(name[keylen + 1]) >= 0 &&
                 hex_value(name[keylen + 2]) >= 0)
                code = CODE_V413_RAW;
        else
                return -EINVAL;
        for (size_t i = 0; i < keylen; i++) {
                int v = hex_value(name[i]);
                if (v < 0)
                        return -EINVAL;
                put_bits(buf, &pos, (unsigned) v, 4);
        }
        if (code == CODE_V413_RAW) {
                put_bits(buf, &pos, (unsigned) hex_value(name[keylen + 1]), 4);
                put_bits(buf, &pos, (unsigned) hex_value(name[keylen + 2]), 4);
        }
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

int ccache_pack_name(const char *name, unsigned depth, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code) {
        size_t len = strlen(name);
        uint8_t code;

        if (depth < CCACHE_DEPTH_MIN || depth > CCACHE_DEPTH_MAX)
                return -EINVAL;
        if (pack_legacy(name, len, depth, out, &code) < 0 && pack_v413(name, len, depth, out, &code) < 0)
                return -EINVAL;
        *ret_code = code;
        return ccache_code_kind(code);
}

char *ccache_unpack_name(const uint8_t in[CCACHE_PACKED_SIZE], uint8_t code, unsigned depth, char *buf) {
        unsigned pos = 0;
        size_t i, keylen;

        if (code >= CODE_V413) {
                keylen = V413_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(in, &pos, 4)];
                if (code == CODE_V413_RAW) {
                        buf[i++] = '_';
                        buf[i++] = base32hex[get_bits(in, &pos, 4)];
                        buf[i++] = base32hex[get_bits(in, &pos, 4)];
                }
        } else {
                keylen = LEGACY_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(in, &pos, 5)];
                if (code == CODE_RESULT)
                        buf[i++] = 'R';
                else if (code == CODE_MANIFEST)
                        buf[i++] = 'M';
                else {
                        buf[i++] = (char) ('0' + code - CODE_RAW0);
                        buf[i++] = 'W';
                }
        }
        buf[i] = '\0';
        return buf;
}

CcacheKind ccache_code_kind(uint8_t code) {
        switch (code) {
        case CODE_RESULT: return CCACHE_KIND_RESULT;
        case CODE_MANIFEST: return CCACHE_KIND_MANIFEST;
        case CODE_V413: return CCACHE_KIND_ENTRY;
        default: return CCACHE_KIND_RAW;
        }
}

CcacheKind ccache_classify_other(const char *name, unsigned depth, bool in_tmp_dir) {
        if (in_tmp_dir || strstr(name, ".tmp."))
                return CCACHE_KIND_TMP;
        if ((depth == 1 || depth == 2) && strcmp(name, "stats") == 0)
                return CCACHE_KIND_STATS;
        return CCACHE_KIND_OTHER;
}

const char *ccache_kind_name(CcacheKind k) {
        static const char *const names[_CCACHE_KIND_MAX] = {
                [CCACHE_KIND_RESULT] = "result",
                [CCACHE_KIND_MANIFEST] = "manifest",
                [CCACHE_KIND_RAW] = "raw",
                [CCACHE_KIND_ENTRY] = "entry",
                [CCACHE_KIND_TMP] = "tmp",
                [CCACHE_KIND_STATS] = "stats",
                [CCACHE_KIND_OTHER] = "other",
        };
        return (unsigned) k < _CCACHE_KIND_MAX ? names[k] : "?";
}

void ccache_stats_parse(const char *text, size_t len, CcacheStats *ret) {
        const char *p = text, *end = text + len;

        memset(ret, 0, sizeof(*ret));
        while (p < end && ret->n < CCACHE_STATS_MAX) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                uint64_t v = 0;

                if (!nl)
                        nl = end;
                for (const char *q = p; q < nl && *q >= '0' && *q <= '9'; q++)
                        v = v * 10 + (uint64_t) (*q - '0');
                ret->counters[ret->n++] = v;
                p = nl + 1;
        }
}

int ccache_stats_read(int dirfd, const char *name, CcacheStats *ret) {
        char buf[4096];
        size_t len = 0;
        int fd;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ENOENT) {
                        memset(ret, 0, sizeof(*ret));
                        return 0;
                }
                return -errno;
        }
        /* A FIFO or device planted as "stats" must not be read (or block us). */
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EBADF;
        }
        for (;;) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                if (n == 0 || (len += (size_t) n) == sizeof(buf) - 1)
                        break;
        }
        close(fd);
        ccache_stats_parse(buf, len, ret);
        return 0;
}
