/* SPDX-License-Identifier: MIT */
/* openat2 beneath a root. glibc 2.36 has no wrapper: the raw syscall. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/beneath.h"

static int open_beneath(int root_fd, const char *rel, uint64_t flags) {
        struct open_how how = {
                .flags = flags,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int) syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));

        return fd < 0 ? -errno : fd;
}

int beneath_open_dir(int root_fd, const char *rel) {
        /* "": the root itself (a share's flat layout keeps its entries there) */
        return open_beneath(root_fd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int beneath_open_file(int root_fd, const char *rel) {
        return open_beneath(root_fd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}
