/* SPDX-License-Identifier: MIT */
/* cachectl measure: what one build did with the cache, from ccache's own
 * per-build statistics log (and, with --explain, its debug records), or,
 * where the build's environment does not reach ccache (docker exec), from
 * the daemon's figures of the cache over the command's run. Never zeroes
 * or rewrites anyone's counters. */
#pragma once

#include <getopt.h>

/* The exit status when the hit rate is below --min-hit-rate. */
#define MEASURE_EXIT_BELOW 4

/* Its options, for the completion. */
extern const struct option measure_options[];

int cmd_measure(int argc, char **argv);
