/* SPDX-License-Identifier: MIT */
/* The sandbox systemd puts cachekeeperd.service in: ProtectSystem=strict
 * makes the whole file system read-only but for the unit's ReadWritePaths=
 * (and its StateDirectory=). Read from the installed unit and its drop-ins,
 * as systemd finds them; so that -t can say before a start that a cache
 * lies where the service may not write, and a write refused with EROFS can
 * say which setting refused it and the drop-in that fixes it. Reads files
 * only; never asks systemd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SANDBOX_UNIT "cachekeeperd.service"

typedef struct Sandbox {
        bool found;             /* an installed unit */
        bool strict;            /* ProtectSystem=strict */
        char unit[512];         /* the unit file read */
        char **writable;        /* absolute paths, "-" and "+" taken off */
        size_t n_writable;
} Sandbox;

/* Reads the unit and its drop-ins below root ("/" on a host; a test's
 * tree otherwise). Returns 0 (ret->found false when none is installed) or
 * -ENOMEM. */
int sandbox_read(const char *root, Sandbox *ret);

/* Whether path is at or below one of the writable paths (or the sandbox is
 * not strict, or there is no unit). */
bool sandbox_allows(const Sandbox *s, const char *path);

/* The writable paths as the unit would list them ("/var/cache /mnt /var/lib/cachekeeper"). */
char *sandbox_writable_text(const Sandbox *s, char *buf, size_t len);

void sandbox_done(Sandbox *s);

/* For an error err on path: when it is EROFS and we run as a systemd
 * service, "; the service's sandbox (...) lets it write only below ...: a
 * drop-in ... fixes it", else "". Into buf. */
const char *sandbox_hint(int err, const char *path, char *buf, size_t len);
