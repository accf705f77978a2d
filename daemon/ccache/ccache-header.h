/* SPDX-License-Identifier: MIT */
/* The header every ccache entry (result or manifest) starts with since 4.5
 * (ccache/README.md §9): who wrote it (ccache version, namespace), when, and what
 * it is. Parsing is pure; reading takes one bounded pread of a file opened
 * without following a symlink and checked to be a regular file. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Enough bytes for any header: 16 fixed, 255 + 1 + 255 variable, 8 size. */
#define CCACHE_HEADER_MAX 535

typedef struct CcacheHeader {
        uint8_t type;                   /* 0 result, 1 manifest */
        uint8_t compression;            /* 0 none, 1 zstd */
        int8_t level;
        uint64_t created;               /* unix seconds */
        char version[256];              /* "4.7.5", printable ASCII only */
        char ns[256];                   /* the namespace, "" by default; printable ASCII only */
        uint64_t entry_size;
} CcacheHeader;

/* Parses the header at the start of buf (len bytes of the file, fewer than
 * CCACHE_HEADER_MAX when the file is shorter). Returns 0, or -EBADMSG when
 * it is not one: wrong magic or format version, cut short, or a version or
 * namespace with bytes outside printable ASCII (ret undefined). */
int ccache_header_parse(const uint8_t *buf, size_t len, CcacheHeader *ret);

/* Reads and parses the header of the regular file open as fd. Returns 0,
 * -EBADMSG (not a header), -EINVAL (not a regular file), or -errno. */
int ccache_header_read(int fd, CcacheHeader *ret);
