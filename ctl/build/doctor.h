/* SPDX-License-Identifier: MIT */
/* cachectl doctor: is this build using the cache? Checks a CMake build
 * directory (a ccache launcher or shim for every language CMake enabled,
 * the generated compile rules, the CCACHE_DIR they use against the caches
 * cachekeeperd keeps and this user's right to write it, depend mode where
 * the headers are heavy), or a compiler shim (two compiles of a unique
 * source through it: a store, then a hit). Reads build files and runs
 * compilers as the caller; never executes a program the build directory
 * names (only `ccache` from PATH), never zeroes or rewrites
 * ccache's counters. Exit status: 0 ok, 1 warn, 2 fail, 3 could not check. */
#pragma once

#include <getopt.h>

/* The mean number of files a translation unit depends on (its compiler's
 * dependency list: the source and every header) from which the preprocessor
 * dominates a miss and depend mode pays. <iostream> alone is about 150 with
 * libstdc++ 12; hip_runtime.h several hundred. */
#define DOCTOR_HEAVY_DEPS 200

/* doctor's options, for the completion. */
extern const struct option doctor_options[];

int cmd_doctor(int argc, char **argv);
