/* SPDX-License-Identifier: MIT */
/* Keeps a cache usable by every user: the root at its configured mode,
 * ccache's own directories (tmp/, lock/, the 16 level-1 and 256 level-2
 * directories) present and 0777 (never sticky: CCACHE.md §6), and umask and
 * max_size in the cache's ccache.conf. Modes change only through fds opened
 * with O_NOFOLLOW, beneath the root. Logs each repair once, with what was
 * wrong. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define UPKEEP_DIR_MODE 0777

/* Reports one repair: what (relative path, "" for the root), the mode it had
 * and the mode it has now. */
typedef void (*upkeep_report_t)(const char *what, mode_t was, mode_t now, void *userdata);

/* Sets root_fd's mode to mode if it differs. Returns 1 repaired, 0 fine, -errno. */
int upkeep_root(int root_fd, mode_t mode, upkeep_report_t report, void *userdata);

/* Makes sure ccache's directory rel ("tmp", "lock", "b", "b/4") exists below
 * root_fd with mode 0777. Returns 1 created or repaired, 0 fine, -errno
 * (-ELOOP: a symlink sits there; it is left alone). */
int upkeep_dir(int root_fd, const char *rel, upkeep_report_t report, void *userdata);

/* Gives the directory open as fd (ccache's directory rel) mode 0777 if it
 * has another. Returns 1 repaired, 0 fine, -errno. */
int upkeep_dir_fd(int fd, const char *rel, upkeep_report_t report, void *userdata);

/* upkeep_dir for tmp/, lock/ and every level-1 and level-2 directory.
 * Returns the number of repairs, or -errno of the first failure. */
int upkeep_all_dirs(int root_fd, upkeep_report_t report, void *userdata);

/* Is rel (relative to the root) one of the directories upkeep_all_dirs keeps? */
bool upkeep_is_kept_dir(const char *rel);

/* Rewrites root_fd/ccache.conf atomically if its umask or max_size lines are
 * not "umask = 000" and "max_size = MAX_SIZE". Returns 1 rewritten, 0 fine,
 * -errno. *ret_old_max gets the max_size it had, if any (may be NULL). */
int upkeep_ccache_conf(int root_fd, const char *max_size, char *ret_old_max, size_t old_max_len);
