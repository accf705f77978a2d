/* SPDX-License-Identifier: MIT */
/* Opening a directory below a cache root the only safe way: relative to the
 * root's fd, never through a symlink or a magic link, never onto another
 * mount. Every deletion and chmod below the root starts here. */
#pragma once

/* Opens directory rel ("b/4", relative to root_fd; "" is the root itself,
 * opened anew) with openat2(2) and
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
 * RESOLVE_NO_MAGICLINKS. Returns the fd (O_CLOEXEC) or -errno: -ELOOP for a
 * symlink on the way, -EXDEV for a mount point, -ENOENT, -ENOTDIR. */
int beneath_open_dir(int root_fd, const char *rel);

/* The same for a file to read (O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
 * O_NOCTTY: a FIFO planted there opens without waiting). The caller checks
 * what it opened is a regular file before it reads. */
int beneath_open_file(int root_fd, const char *rel);
