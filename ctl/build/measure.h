/* SPDX-License-Identifier: MIT */
/* cachectl measure: what one build did with the cache, from ccache's own
 * per-build statistics log (and, with --explain, its debug records), or,
 * where the build's environment does not reach ccache (docker exec) and the
 * daemon saw the build's own cache used meanwhile, from the daemon's
 * figures of that cache (never of every cache) over the command's run.
 * A build that compiled nothing has no hit rate and passes the gate.
 * Never zeroes or rewrites anyone's counters. */
#pragma once

#include <getopt.h>

/* The exit status when the hit rate is below --min-hit-rate. */
#define MEASURE_EXIT_BELOW 4

/* Its options, for the completion. */
extern const struct option measure_options[];

int cmd_measure(int argc, char **argv);
