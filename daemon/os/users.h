/* SPDX-License-Identifier: MIT */
/* Users and groups by name, through NSS (getpwnam_r, getgrnam_r): which
 * may ask a directory server, so never on the event loop's hot path (at
 * start, at a reload, at -t). */
#pragma once

#include <sys/types.h>

/* The gid of group name into *ret. Returns 1, 0 when there is no such
 * group, -errno when the lookup failed (NSS down, out of memory). */
int group_gid(const char *name, gid_t *ret);

/* The same for user name's uid. */
int user_uid(const char *name, uid_t *ret);
