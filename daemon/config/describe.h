/* SPDX-License-Identifier: MIT */
/* cachekeeperd --describe-conf: what the daemon leaves in each cache's
 * ccache.conf, for whoever stops or removes it (make uninstall, a package's
 * purge) to tell the admin. Reads only; never follows a symlink. */
#pragma once

#include <stdio.h>

#include "config/config.h"

/* One line per cache of c to f: the umask and max_size its ccache.conf
 * holds (what ccache goes on doing with the cache), or that there is none.
 * Returns 0. */
int describe_ccache_confs(const Config *c, FILE *f);
