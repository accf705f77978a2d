/* SPDX-License-Identifier: MIT */
/* What cachekeeperd -t says about a valid configuration that will not do
 * what its author means on this host: an admin_group that is no group, an
 * alert_command that is no executable file, a warning and a critical
 * threshold (one a percentage, the other a size or count) that swap places
 * on a volume, a cache, share or state_dir where the installed service's
 * sandbox will not let it write. Looks at the host (NSS, files, statvfs); changes nothing. */
#pragma once

#include <stdio.h>

#include "config/config.h"

/* Prints one "FILE: warning: ..." line per finding to f. Returns their number. */
unsigned config_check(const Config *c, FILE *f);
