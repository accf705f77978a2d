/* SPDX-License-Identifier: MIT */
/* cachectl merge FROM --into TO [--dry-run] [--allow-mixed]: asks the daemon
 * to move every entry of cache FROM into cache TO, shows its progress on a
 * terminal as trim does, and says what it did and what to change after. */
#pragma once

#include <getopt.h>

extern const struct option merge_options[];
int cmd_merge(int argc, char **argv);
