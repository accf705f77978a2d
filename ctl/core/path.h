/* SPDX-License-Identifier: MIT */
/* Paths as cachectl meets them, in one place: a name's last component,
 * whether two spellings are one directory (a cache reached by a symlink or
 * a bind mount is that cache), whether two names sit in one directory, and
 * a file replaced whole (never seen half-written). */
#pragma once

#include <stdbool.h>

/* What follows the last '/' of path (path itself without one). */
const char *path_base_name(const char *path);

/* Whether a and b name the same directory: the same device and inode, so
 * that a symlinked or bind-mounted spelling of a cache is that cache;
 * where either cannot be looked at, the same spelling. */
bool path_same_dir(const char *a, const char *b);

/* Whether a and b are spelled in the same directory: their text up to the
 * last '/' alike. Lexical: looks nothing up. */
bool path_same_parent(const char *a, const char *b);

/* Writes text to path atomically: a temporary file beside it (a dot name,
 * which node_exporter's textfile collector ignores), mode 0644, synced,
 * renamed over it. Returns 0, or -1 after saying why on stderr
 * ("cachectl: ..."). */
int path_write_atomically(const char *path, const char *text);
