/* SPDX-License-Identifier: MIT */
/* A file that holds a secret (a Redis password_file), checked as only
 * root's, and read without ever blocking or following a link. Reads only
 * that file; non-logging. */
#pragma once

#include <stddef.h>

/* Whether the file at path may hold a secret: every directory from / down
 * to it a real directory (no symlink on the way) owned by root and
 * writable by no one else (or sticky: in a sticky root directory no one
 * else can replace root's entries), the file itself a regular file (not a
 * symlink, a FIFO, a device: stat'ed before it is opened, opened
 * O_NONBLOCK|O_NOFOLLOW|O_NOCTTY, checked again on the fd), owned by root,
 * with no permission for group or other. Never blocks. Returns 0, or -errno
 * (cannot stat: -ENOENT ...) with why in err, -EPERM for a refusal. */
int secret_file_check(const char *path, char *err, size_t len);

/* Reads the first line of the file at path, after the checks above (made
 * again at each call), into buf (len bytes, NUL-terminated, no newline).
 * Returns its length, or -errno with why in err (errlen bytes; -EPERM:
 * refused, -E2BIG: longer than len - 1). buf is wiped on failure. */
int secret_file_read(const char *path, char *buf, size_t len, char *err, size_t errlen);
