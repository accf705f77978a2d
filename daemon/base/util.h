/* SPDX-License-Identifier: MIT */
/* Tiny shared helpers: cleanup attributes, ownership transfer, time units.
 * Header-only on purpose; anything bigger belongs in its own module. */
#pragma once

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

typedef uint64_t usec_t;

#define USEC_PER_SEC  ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_SEC  ((uint64_t) 1000000000ULL)
#define NSEC_PER_MSEC ((uint64_t) 1000000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Hands a pointer over to a new owner and leaves NULL behind. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

/* Six random letters and digits and a NUL into s, for a name nobody can
 * guess ahead. Returns 0 or -errno. */
static inline int random_suffix(char s[7]) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        unsigned char rnd[6];

        if (getentropy(rnd, sizeof(rnd)) < 0)
                return -errno;
        for (size_t i = 0; i < sizeof(rnd); i++)
                s[i] = chars[rnd[i] % (sizeof(chars) - 1)];
        s[6] = '\0';
        return 0;
}

/* MurmurHash3's 64-bit finaliser: every input bit reaches every output bit. */
static inline uint64_t hash_mix(uint64_t h) {
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        return h ^ (h >> 33);
}

/* Little-endian fields of the state files: each writes or reads one at p
 * and returns the position after it. */
static inline uint8_t *le_put64(uint8_t *p, uint64_t v) {
        v = htole64(v);
        memcpy(p, &v, 8);
        return p + 8;
}

static inline uint8_t *le_put32(uint8_t *p, uint32_t v) {
        v = htole32(v);
        memcpy(p, &v, 4);
        return p + 4;
}

static inline const uint8_t *le_get64(const uint8_t *p, uint64_t *v) {
        memcpy(v, p, 8);
        *v = le64toh(*v);
        return p + 8;
}

static inline const uint8_t *le_get32(const uint8_t *p, uint32_t *v) {
        memcpy(v, p, 4);
        *v = le32toh(*v);
        return p + 4;
}


static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* The clock now. A decision takes `now` from its caller instead: see event_now. */
static inline usec_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* The loop's time of this iteration on clock (sd_event_now): what a handler
 * reads once and passes down. CLOCK_MONOTONIC for intervals, CLOCK_REALTIME
 * to compare with file times. The clock itself before the loop's first
 * iteration, or without a loop (e NULL). */
static inline usec_t event_now(sd_event *e, clockid_t clock) {
        uint64_t t;

        if (e && sd_event_now(e, clock, &t) >= 0)
                return t;
        return now_usec(clock);
}

/* One lowercase hex digit's value, or -1: how ccache names its levels. */
static inline int hex_digit(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static inline int negative_errno(int e) {
        return e > 0 ? -e : -EIO;
}
