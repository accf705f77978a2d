/* SPDX-License-Identifier: MIT */
/* Remote storage URLs as ccache writes them (redis://, redis+unix:,
 * file:), taken apart and checked, never printed. Pure, non-logging. */
#pragma once

#include <stddef.h>

#include "config/config.h"

/* Parses url into *ret (overwritten; free with remote_url_done). Returns 0,
 * or -EINVAL with a reason in err (len bytes): unknown scheme, a password
 * in the URL (secrets come from password_file), a bad port or db, a
 * relative path. Never echoes a secret into err. */
int remote_url_parse(const char *url, RemoteUrl *ret, char *err, size_t len);
void remote_url_done(RemoteUrl *u);
