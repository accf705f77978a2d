/* SPDX-License-Identifier: MIT */
/* Keeps a cache usable by every user and safe for root to compile in: the
 * root at its configured mode, ccache's own directories (tmp/, lock/, the 16
 * level-1 and 256 level-2 directories) present and 0777, and the cache's
 * ccache.conf a root-owned 0644 file holding only settings that cannot run
 * or write anything (ccache-conf.h). Modes change only through fds opened
 * with O_NOFOLLOW, beneath the root. Non-logging: what it finds and does is
 * reported through the caller's callback or result. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ccache/ccache-conf.h"

#define UPKEEP_DIR_MODE 0777
#define UPKEEP_CONF_MAX 65536   /* a bigger ccache.conf is not read but replaced */
#define UPKEEP_CONF_SETTINGS_MAX 1024   /* UpkeepConfResult.settings, whole lines up to this */

typedef enum UpkeepEvent {
        UPKEEP_REPAIRED,    /* the mode was changed from was to now */
        UPKEEP_LEFT_ALONE,  /* a sticky, setuid or setgid bit that ccache never sets (a setgid
                             * parent's excepted): someone put the directory there; not touched */
        UPKEEP_REPLACED,    /* a symlink (or another non-directory, was holds its type) stood
                             * there: removed (a symlink) or moved aside, and a directory made */
        UPKEEP_FAILED,      /* could not be made right: error */
} UpkeepEvent;

typedef struct UpkeepReport {
        UpkeepEvent event;
        const char *what;   /* relative to the root, "" for the root itself */
        mode_t was, now;    /* st_mode bits before and after */
        uid_t owner;        /* of what was found */
        int error;          /* UPKEEP_FAILED: -errno */
} UpkeepReport;

typedef void (*upkeep_report_t)(const UpkeepReport *r, void *userdata);

/* Sets root_fd's mode to mode if it differs. Returns 1 repaired, 0 fine, -errno. */
int upkeep_root(int root_fd, mode_t mode, upkeep_report_t report, void *userdata);

/* Makes sure ccache's directory rel ("tmp", "lock", "b", "b/4") exists below
 * root_fd with mode 0777 (02777 below a setgid directory). A symlink there
 * is removed and a non-directory moved aside ("<name>.moved.XXXXXX"), then
 * the directory is created. Returns 1 created, repaired or replaced, 0 fine
 * or left alone (UPKEEP_LEFT_ALONE reported), -errno (UPKEEP_FAILED
 * reported). */
int upkeep_dir(int root_fd, const char *rel, upkeep_report_t report, void *userdata);

/* Gives the directory open as fd (ccache's directory rel) its mode, unless
 * it has a bit ccache never sets (reported, left alone). Returns 1
 * repaired, 0 fine or left alone, -errno. */
int upkeep_dir_fd(int fd, const char *rel, upkeep_report_t report, void *userdata);

/* upkeep_dir for tmp/, lock/ and every level-1 and level-2 directory; a
 * failure does not stop the others. Returns the number of repairs, or the
 * -errno of the first failure once all were tried. */
int upkeep_all_dirs(int root_fd, upkeep_report_t report, void *userdata);

/* What stood at ccache.conf. */
typedef enum UpkeepConfFound {
        UPKEEP_CONF_MISSING,
        UPKEEP_CONF_OURS,          /* a regular file of the daemon's user, one link: trusted */
        UPKEEP_CONF_FOREIGN,       /* a regular file another user owns */
        UPKEEP_CONF_HARDLINK,      /* a regular file with more than one link */
        UPKEEP_CONF_SYMLINK,
        UPKEEP_CONF_DIRECTORY,     /* moved aside to ccache.conf.moved.XXXXXX */
        UPKEEP_CONF_SPECIAL,       /* fifo, socket, device */
        UPKEEP_CONF_TOO_BIG,       /* UPKEEP_CONF_MAX bytes or more */
        UPKEEP_CONF_UNREADABLE,
        _UPKEEP_CONF_FOUND_MAX,
} UpkeepConfFound;

const char *upkeep_conf_found_name(UpkeepConfFound f);

typedef struct UpkeepConfResult {
        UpkeepConfFound found;
        uid_t owner;
        mode_t mode;              /* st_mode of what was found */
        unsigned n_dropped;       /* settings dropped */
        char dropped[192];        /* their keys, ", "-separated (cut short with "...") */
        char old_max[64];         /* the max_size the file had, "" if none */
        char old_umask[16];       /* the umask the file had, "" if none */
        bool removed;             /* could not be rewritten, so the unsafe file was removed */
        char settings[UPKEEP_CONF_SETTINGS_MAX];  /* on success: the settings in effect but umask and
                                                   * max_size (ccache_conf_settings) */
} UpkeepConfResult;

/* Makes root_fd/ccache.conf a regular 0644 file of the daemon's user (root)
 * holding what ccache_conf_update keeps of it under policy, written to a
 * temporary file and renamed over it. Whatever is not that (missing, a
 * symlink, another owner, more than one link, another mode, not a regular
 * file, too big, unreadable, a dropped line) is replaced at once; only the
 * daemon's own file may keep policy->allow keys (policy->trusted is
 * ignored). Nothing is followed or read but a regular file. If the
 * replacement cannot be written, an unsafe file is removed rather than left.
 * drop (may be NULL) hears of each setting dropped. Fills *ret; returns 1
 * rewritten, 0 it was right, -errno. */
int upkeep_ccache_conf(int root_fd, const CcacheConfPolicy *policy, ccache_conf_drop_t drop, void *userdata,
                       UpkeepConfResult *ret);
