/* SPDX-License-Identifier: MIT */
/* Tiny shared helpers: cleanup attributes, ownership transfer, time units.
 * Header-only on purpose; anything bigger belongs in its own module. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef uint64_t usec_t;

#define USEC_PER_SEC  ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Hands a pointer over to a new owner and leaves NULL behind. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

static inline int negative_errno(int e) {
        return e > 0 ? -e : -EIO;
}
