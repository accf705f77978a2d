/* SPDX-License-Identifier: MIT */
/* ccache's file names. Packing must be exact: the daemon deletes by the
 * unpacked name, so pack(unpack(x)) == x is tested. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "ccache/ccache.h"

/* Codes: 0 R, 1 M, 2-11 legacy raw <n>W with n = code-2, 12 4.13 entry
 * (local, or a remote bare key: the same name), 13 4.13 raw _<nn> (nn packed
 * after the key), 14 a remote bare legacy key. 15 is free. */
#define CODE_RESULT        0
#define CODE_MANIFEST      1
#define CODE_RAW0          2
#define CODE_RAW_LAST      11
#define CODE_V413          12
#define CODE_V413_RAW      13
#define CODE_REMOTE_LEGACY 14

/* Up to 4.12 a key is 4 base16 then 29 base32hex chars (33 in all); 4.13
 * uses 40 base16 chars. The directory levels consume the first chars. */
#define LEGACY_KEY_LEN 33
#define LEGACY_HEX_PREFIX 4
#define V413_KEY_LEN 40

static const char base32hex[] = "0123456789abcdefghijklmnopqrstuv";

/* Value + 1 of each base32hex char; 0 for anything else. Hex digits are the
 * first 16. A table: packing runs for every file the scan sees. */
static const uint8_t b32_table[256] = {
        ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
        ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
        ['g'] = 17, ['h'] = 18, ['i'] = 19, ['j'] = 20, ['k'] = 21, ['l'] = 22, ['m'] = 23, ['n'] = 24,
        ['o'] = 25, ['p'] = 26, ['q'] = 27, ['r'] = 28, ['s'] = 29, ['t'] = 30, ['u'] = 31, ['v'] = 32,
};

static inline int b32_value(char c) {
        return (int) b32_table[(unsigned char) c] - 1;
}

static inline int hex_value(char c) {
        int v = b32_value(c);
        return v < 16 ? v : -1;
}

/* Bits into and out of the 20 packed bytes, most significant first. */
typedef struct Bits {
        uint8_t *buf;
        unsigned pos, n;     /* bytes written or read; bits pending in acc */
        uint64_t acc;
} Bits;

static inline void put_bits(Bits *b, unsigned value, unsigned nbits) {
        b->acc = (b->acc << nbits) | value;
        b->n += nbits;
        while (b->n >= 8) {
                b->n -= 8;
                b->buf[b->pos++] = (uint8_t) (b->acc >> b->n);
        }
}

static inline void flush_bits(Bits *b) {
        if (b->n > 0)
                b->buf[b->pos++] = (uint8_t) (b->acc << (8 - b->n));
        b->n = 0;
}

static inline unsigned get_bits(Bits *b, unsigned nbits) {
        while (b->n < nbits) {
                b->acc = (b->acc << 8) | b->buf[b->pos++];
                b->n += 8;
        }
        b->n -= nbits;
        return (unsigned) (b->acc >> b->n) & ((1u << nbits) - 1);
}

static int pack_legacy(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = LEGACY_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        Bits b = { .buf = buf };
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
                put_bits(&b, (unsigned) v, 5);
        }
        flush_bits(&b);
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

static int pack_v413(const char *name, size_t len, unsigned depth, uint8_t *out, uint8_t *ret_code) {
        size_t keylen = V413_KEY_LEN - depth;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        Bits b = { .buf = buf };
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
                put_bits(&b, (unsigned) v, 4);
        }
        if (code == CODE_V413_RAW) {
                put_bits(&b, (unsigned) hex_value(name[keylen + 1]), 4);
                put_bits(&b, (unsigned) hex_value(name[keylen + 2]), 4);
        }
        flush_bits(&b);
        memcpy(out, buf, sizeof(buf));
        *ret_code = code;
        return 0;
}

int ccache_pack_name(const char *name, unsigned depth, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code) {
        size_t len = strlen(name);
        uint8_t code;

        if (depth < CCACHE_DEPTH_MIN || depth > CCACHE_DEPTH_MAX)
                return -EINVAL;
        /* The length says which scheme it could be: 32-33 chars (legacy) or
         * 38/41 (4.13) at depth 2, one less per extra level. */
        if (len + depth <= LEGACY_KEY_LEN + 2 ? pack_legacy(name, len, depth, out, &code) < 0
                                              : pack_v413(name, len, depth, out, &code) < 0)
                return -EINVAL;
        *ret_code = code;
        return ccache_code_kind(code);
}

/* A remote bare legacy key: its base16 chars at 4 bits, then 28 base32hex
 * chars at 5, then the last one at 4: its low bit is padding, 0 in every
 * name ccache writes (the others are refused, so the packing is exact).
 * 160 bits at dir_chars 0, 4 fewer per key char in the directory path. */
static int pack_remote_legacy(const char *name, size_t len, unsigned dir_chars, uint8_t *out, uint8_t *ret_code) {
        size_t hex = LEGACY_HEX_PREFIX - dir_chars;
        uint8_t buf[CCACHE_PACKED_SIZE] = { 0 };
        Bits b = { .buf = buf };

        for (size_t i = 0; i < len; i++) {
                int v = i < hex ? hex_value(name[i]) : b32_value(name[i]);

                if (v < 0 || (i + 1 == len && (v & 1)))
                        return -EINVAL;
                if (i + 1 == len)
                        put_bits(&b, (unsigned) v >> 1, 4);
                else
                        put_bits(&b, (unsigned) v, i < hex ? 4 : 5);
        }
        flush_bits(&b);
        memcpy(out, buf, sizeof(buf));
        *ret_code = CODE_REMOTE_LEGACY;
        return 0;
}

int ccache_pack_remote_name(const char *name, unsigned dir_chars, uint8_t out[CCACHE_PACKED_SIZE], uint8_t *ret_code) {
        size_t len = strlen(name);
        uint8_t code;

        if (dir_chars > CCACHE_REMOTE_DIR_CHARS_MAX)
                return -EINVAL;
        /* The length says which scheme; 4.13's key packs as a local 4.13
         * entry whose directory levels hold dir_chars chars, never raw. */
        if (len + dir_chars == LEGACY_KEY_LEN) {
                if (pack_remote_legacy(name, len, dir_chars, out, &code) < 0)
                        return -EINVAL;
        } else if (len + dir_chars == V413_KEY_LEN) {
                if (pack_v413(name, len, dir_chars, out, &code) < 0)
                        return -EINVAL;
        } else
                return -EINVAL;
        *ret_code = code;
        return ccache_code_kind(code);
}

char *ccache_unpack_name(const uint8_t in[CCACHE_PACKED_SIZE], uint8_t code, unsigned depth, char *buf) {
        Bits b = { .buf = (uint8_t *) in };
        size_t i, keylen;

        if (code == CODE_REMOTE_LEGACY) {
                size_t hex = depth < LEGACY_HEX_PREFIX ? LEGACY_HEX_PREFIX - depth : 0;

                keylen = LEGACY_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[i < hex ? get_bits(&b, 4) : i + 1 < keylen ? get_bits(&b, 5)
                                                                                   : get_bits(&b, 4) << 1];
        } else if (code == CODE_V413 || code == CODE_V413_RAW) {
                keylen = V413_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(&b, 4)];
                if (code == CODE_V413_RAW) {
                        buf[i++] = '_';
                        buf[i++] = base32hex[get_bits(&b, 4)];
                        buf[i++] = base32hex[get_bits(&b, 4)];
                }
        } else {
                keylen = LEGACY_KEY_LEN - depth;
                for (i = 0; i < keylen; i++)
                        buf[i] = base32hex[get_bits(&b, 5)];
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
        case CODE_V413_RAW: return CCACHE_KIND_RAW;
        case CODE_REMOTE_LEGACY: return CCACHE_KIND_ENTRY;
        default: return code <= CODE_RAW_LAST ? CCACHE_KIND_RAW : CCACHE_KIND_OTHER;   /* 15: never made */
        }
}

CcacheKind ccache_classify_other(const char *name, unsigned depth, bool in_tmp_dir) {
        if (in_tmp_dir || strstr(name, ".tmp."))
                return CCACHE_KIND_TMP;
        if ((depth == 1 || depth == 2) && strcmp(name, "stats") == 0)
                return CCACHE_KIND_STATS;
        return CCACHE_KIND_OTHER;
}

CcacheKind ccache_classify_remote_other(const char *name) {
        return strstr(name, ".tmp.") ? CCACHE_KIND_TMP : CCACHE_KIND_OTHER;
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

/* Asked once; the scan's helper thread may ask too, hence atomic. */
uint64_t ccache_clock_tick_nsec(void) {
        static uint64_t cached;
        uint64_t tick = __atomic_load_n(&cached, __ATOMIC_RELAXED);
        struct timespec ts;

        if (tick == 0) {
                tick = clock_getres(CLOCK_REALTIME_COARSE, &ts) == 0 && ts.tv_sec == 0 && ts.tv_nsec > 0
                               ? (uint64_t) ts.tv_nsec
                               : 10 * NSEC_PER_MSEC;
                __atomic_store_n(&cached, tick, __ATOMIC_RELAXED);
        }
        return tick;
}

/* utimensat(NULL) sets atime, mtime and ctime to one instant; on tmpfs
 * shmem_setattr stamps ctime once more after setattr_copy, and a tick
 * between the two moves ctime on (one hit in about 10^5 on Linux 6.18:
 * ctime 4 ms after mtime; two ticks when the clock's update itself came a
 * tick late). A chmod leaves mtime as old as the last write or hit: more
 * than two ticks unless it came right after one. The seconds are compared
 * first, unsigned: either time may be anything its owner set. */
bool ccache_hit_times(const struct statx_timestamp *m, const struct statx_timestamp *c, uint64_t tick_nsec) {
        int64_t gap;

        if (c->tv_sec < m->tv_sec || (uint64_t) c->tv_sec - (uint64_t) m->tv_sec > 1)
                return false;
        gap = (int64_t) ((uint64_t) c->tv_sec - (uint64_t) m->tv_sec) * (int64_t) NSEC_PER_SEC +
              (int64_t) c->tv_nsec - (int64_t) m->tv_nsec;
        return gap >= 0 && (uint64_t) gap <= 2 * tick_nsec;
}

bool ccache_is_level_name(const char *name) {
        return hex_digit(name[0]) >= 0 && name[1] == '\0';
}

bool ccache_level2_of(const char *rel, unsigned *l1, unsigned *l2) {
        if (hex_digit(rel[0]) < 0 || rel[1] != '/' || hex_digit(rel[2]) < 0 || (rel[3] && rel[3] != '/'))
                return false;
        if (l1)
                *l1 = (unsigned) hex_digit(rel[0]);
        if (l2)
                *l2 = (unsigned) hex_digit(rel[2]);
        return true;
}

bool ccache_is_top_dir(const char *rel) {
        return strcmp(rel, CCACHE_TMP_DIR) == 0 || strcmp(rel, CCACHE_LOCK_DIR) == 0 ||
               (hex_digit(rel[0]) >= 0 && (rel[1] == '\0' || (ccache_level2_of(rel, NULL, NULL) && rel[3] == '\0')));
}

bool ccache_is_remote_subdir_name(const char *name) {
        return hex_digit(name[0]) >= 0 && hex_digit(name[1]) >= 0 && name[2] == '\0';
}
