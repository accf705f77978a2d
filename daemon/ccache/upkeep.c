/* SPDX-License-Identifier: MIT */
/* Mode and ccache.conf upkeep of one cache root. Non-logging: what was found
 * and done is reported through the caller's callback. Whatever a user may
 * plant is never followed and never made more useful to them: a directory
 * with a bit ccache never sets is left as it is, a symlink is replaced. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "ccache/ccache-lock.h"
#include "ccache/ccache.h"
#include "ccache/upkeep.h"
#include "os/beneath.h"

#define CONF_NAME "ccache.conf"

static void report_event(upkeep_report_t report, void *userdata, UpkeepEvent ev, const char *what,
                         const struct stat *st, mode_t now, int error) {
        if (report)
                report(&(UpkeepReport) { .event = ev, .what = what, .was = st ? st->st_mode : 0, .now = now,
                                         .owner = st ? st->st_uid : 0, .error = error },
                       userdata);
}

/* Renames dirfd/name to a fresh "<name>.moved.XXXXXX". Returns 0 or -errno. */
static int move_aside(int dirfd, const char *name) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        char aside[NAME_MAX + 1];

        for (int attempt = 0; attempt < 100; attempt++) {
                unsigned char rnd[6];
                char suffix[7];

                if (getentropy(rnd, sizeof(rnd)) < 0)
                        return -errno;
                for (size_t i = 0; i < sizeof(rnd); i++)
                        suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
                suffix[6] = '\0';
                snprintf(aside, sizeof(aside), "%s.moved.%s", name, suffix);
                if (renameat2(dirfd, name, dirfd, aside, RENAME_NOREPLACE) == 0)
                        return 0;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

int upkeep_root(int root_fd, mode_t mode, upkeep_report_t report, void *userdata) {
        struct stat st;

        if (fstat(root_fd, &st) < 0)
                return -errno;
        if ((st.st_mode & 07777) == mode)
                return 0;
        if (fchmod(root_fd, mode) < 0)
                return -errno;
        report_event(report, userdata, UPKEEP_REPAIRED, "", &st, mode, 0);
        return 1;
}

/* S_ISGID if directory fd's parent has it: mkdir passes it down, so below a
 * setgid root ccache's directories have it without ccache asking. */
static mode_t parent_setgid(int fd) {
        struct stat pst;
        int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        mode_t m = 0;

        if (pfd >= 0 && fstat(pfd, &pst) == 0)
                m = pst.st_mode & S_ISGID;
        if (pfd >= 0)
                close(pfd);
        return m;
}

int upkeep_dir_fd(int fd, const char *rel, upkeep_report_t report, void *userdata) {
        struct stat st;
        mode_t inherited, want;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return 0;
        inherited = parent_setgid(fd);
        /* ccache never makes a directory sticky, setuid or setgid: one that
         * is was put here by someone, maybe moved in from elsewhere to have
         * the bit stripped and moved back. Its files are not ours to expose. */
        if (st.st_mode & (S_ISVTX | S_ISUID | S_ISGID) & ~inherited) {
                report_event(report, userdata, UPKEEP_LEFT_ALONE, rel, &st, st.st_mode, 0);
                return 0;
        }
        want = UPKEEP_DIR_MODE | (st.st_mode & inherited);
        if ((st.st_mode & 07777) == want)
                return 0;
        if (fchmod(fd, want) < 0)
                return -errno;
        report_event(report, userdata, UPKEEP_REPAIRED, rel, &st, want, 0);
        return 1;
}

/* Makes name (in pfd, the directory rel's parent) a directory: a symlink
 * there is removed (it holds nothing; root may unlink it even in the sticky
 * root), anything else that is not a directory is moved aside. */
static int make_dir(int pfd, const char *name, const char *rel, upkeep_report_t report, void *userdata) {
        struct stat st;
        int r;

        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
                r = S_ISLNK(st.st_mode) ? (unlinkat(pfd, name, 0) < 0 ? -errno : 0) : move_aside(pfd, name);
                if (r < 0 && r != -ENOENT)
                        return r;
                report_event(report, userdata, UPKEEP_REPLACED, rel, &st, S_IFDIR | UPKEEP_DIR_MODE, 0);
        }
        if (mkdirat(pfd, name, UPKEEP_DIR_MODE) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

static int keep_dir(int root_fd, const char *rel, upkeep_report_t report, void *userdata) {
        bool created = false;
        int fd, r;

        fd = beneath_open_dir(root_fd, rel);
        if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR) {
                /* Work relative to the parent, itself opened beneath the
                 * root: mkdirat on "b/4" from the root would follow a "b"
                 * swapped for a symlink since the open above. */
                const char *slash = strrchr(rel, '/');
                char parent[8];
                int pfd = root_fd;

                if (slash) {
                        if ((size_t) (slash - rel) >= sizeof(parent))
                                return -ENAMETOOLONG;
                        memcpy(parent, rel, (size_t) (slash - rel));
                        parent[slash - rel] = '\0';
                        pfd = beneath_open_dir(root_fd, parent);
                        if (pfd < 0)
                                return pfd;
                }
                r = make_dir(pfd, slash ? slash + 1 : rel, rel, report, userdata);
                if (pfd != root_fd)
                        close(pfd);
                if (r < 0)
                        return r;
                created = true;
                fd = beneath_open_dir(root_fd, rel);
        }
        if (fd < 0)
                return fd;
        r = upkeep_dir_fd(fd, rel, created ? NULL : report, userdata);
        close(fd);
        return r < 0 ? r : (created || r > 0);
}

int upkeep_dir(int root_fd, const char *rel, upkeep_report_t report, void *userdata) {
        int r = keep_dir(root_fd, rel, report, userdata);

        if (r < 0)
                report_event(report, userdata, UPKEEP_FAILED, rel, NULL, 0, r);
        return r;
}

int upkeep_all_dirs(int root_fd, upkeep_report_t report, void *userdata) {
        static const char hex[] = "0123456789abcdef";
        int n = 0, first = 0;

        for (int i = -2; i < 16 * 17; i++) {
                char rel[8];
                int r;

                /* tmp, lock, then each level-1 directory before its 16 level-2 ones */
                if (i < 0)
                        snprintf(rel, sizeof(rel), "%s", i == -2 ? CCACHE_TMP_DIR : CCACHE_LOCK_DIR);
                else if (i % 17 == 0)
                        snprintf(rel, sizeof(rel), "%c", hex[i / 17]);
                else
                        snprintf(rel, sizeof(rel), "%c/%c", hex[i / 17], hex[i % 17 - 1]);
                r = upkeep_dir(root_fd, rel, report, userdata);
                if (r < 0 && first == 0)
                        first = r;
                else if (r > 0)
                        n += r;
        }
        return first < 0 ? first : n;
}

static const char *const found_names[_UPKEEP_CONF_FOUND_MAX] = {
        [UPKEEP_CONF_MISSING] = "missing",
        [UPKEEP_CONF_OURS] = "a file root wrote",
        [UPKEEP_CONF_FOREIGN] = "a file another user owns",
        [UPKEEP_CONF_HARDLINK] = "a hard link",
        [UPKEEP_CONF_SYMLINK] = "a symlink",
        [UPKEEP_CONF_DIRECTORY] = "a directory",
        [UPKEEP_CONF_SPECIAL] = "not a regular file",
        [UPKEEP_CONF_TOO_BIG] = "too big",
        [UPKEEP_CONF_UNREADABLE] = "unreadable",
};

const char *upkeep_conf_found_name(UpkeepConfFound f) {
        return (unsigned) f < _UPKEEP_CONF_FOUND_MAX ? found_names[f] : "?";
}

/* Reads the regular file st describes (not following a symlink) into a new
 * buffer; a file that grew past the limit meanwhile is too big. */
static UpkeepConfFound read_conf(int root_fd, const struct stat *st, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        struct stat fst;
        char *buf;
        size_t n = 0;

        if (st->st_size >= UPKEEP_CONF_MAX)
                return UPKEEP_CONF_TOO_BIG;
        fd = openat(root_fd, CONF_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &fst) < 0 || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino)
                return UPKEEP_CONF_UNREADABLE;
        buf = malloc(UPKEEP_CONF_MAX);
        if (!buf)
                return UPKEEP_CONF_UNREADABLE;
        for (ssize_t k; n < UPKEEP_CONF_MAX && (k = read(fd, buf + n, UPKEEP_CONF_MAX - n)) != 0; n += (size_t) k)
                if (k < 0) {
                        free(buf);
                        return UPKEEP_CONF_UNREADABLE;
                }
        if (n >= UPKEEP_CONF_MAX) {
                free(buf);
                return UPKEEP_CONF_TOO_BIG;
        }
        *ret = buf;
        *ret_len = n;
        return st->st_uid != geteuid() ? UPKEEP_CONF_FOREIGN : st->st_nlink != 1 ? UPKEEP_CONF_HARDLINK
                                                                               : UPKEEP_CONF_OURS;
}

/* Whether the file at name is a mount of its own (a bind mount over
 * ccache.conf), by mount id where the kernel gives one (5.8+). Not by st_dev:
 * on overlayfs a directory reports the overlay's device and a regular file
 * that of the layer holding it, so every file would look like a mount. */
static bool on_other_mount(int root_fd, const char *name, const struct stat *st, const struct stat *rst) {
        struct statx rx, fx;

        if (statx(root_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &rx) == 0 &&
            statx(root_fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, STATX_MNT_ID, &fx) == 0 &&
            (rx.stx_mask & fx.stx_mask & STATX_MNT_ID))
                return rx.stx_mnt_id != fx.stx_mnt_id;
        return st->st_dev != rst->st_dev;
}

/* What stands at ccache.conf; the text of a regular file that is read. */
static int examine_conf(int root_fd, UpkeepConfResult *res, char **ret_text, size_t *ret_len) {
        struct stat st, rst;

        if (fstat(root_fd, &rst) < 0)
                return -errno;
        if (fstatat(root_fd, CONF_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return -errno;
                res->found = UPKEEP_CONF_MISSING;
                return 0;
        }
        res->owner = st.st_uid;
        res->mode = st.st_mode;
        if (S_ISLNK(st.st_mode))
                res->found = UPKEEP_CONF_SYMLINK;
        else if (S_ISDIR(st.st_mode))
                res->found = UPKEEP_CONF_DIRECTORY;
        else if (!S_ISREG(st.st_mode) || on_other_mount(root_fd, CONF_NAME, &st, &rst))
                res->found = UPKEEP_CONF_SPECIAL;   /* a mount (FUSE?) might never answer a read */
        else
                res->found = read_conf(root_fd, &st, ret_text, ret_len);
        return 0;
}

typedef struct DropCtx {
        UpkeepConfResult *res;
        ccache_conf_drop_t drop;
        void *userdata;
} DropCtx;

static void on_drop(const char *key, const char *why, void *userdata) {
        DropCtx *d = userdata;
        size_t used = strlen(d->res->dropped);

        if (d->res->n_dropped++ == 0 || used + strlen(key) + 2 < sizeof(d->res->dropped) - 4)
                snprintf(d->res->dropped + used, sizeof(d->res->dropped) - used, "%s%s", used ? ", " : "", key);
        else if (!strstr(d->res->dropped, "..."))
                snprintf(d->res->dropped + used, sizeof(d->res->dropped) - used, ", ...");
        if (d->drop)
                d->drop(key, why, d->userdata);
}

/* Writes text as a new 0644 file and renames it over ccache.conf. */
static int write_conf(int root_fd, const char *text) {
        size_t len = strlen(text);
        char tmp[64];
        int fd, r = 0;

        fd = ccache_tmpfile(root_fd, CONF_NAME, 0644, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        if (write(fd, text, len) != (ssize_t) len || fchmod(fd, 0644) < 0 || fsync(fd) < 0)
                r = errno > 0 ? -errno : -EIO;
        close(fd);
        if (r == 0 && renameat(root_fd, tmp, root_fd, CONF_NAME) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(root_fd, tmp, 0);
        return r;
}

int upkeep_ccache_conf(int root_fd, const CcacheConfPolicy *policy, ccache_conf_drop_t drop, void *userdata,
                       UpkeepConfResult *ret) {
        _cleanup_free_ char *old = NULL, *new = NULL;
        CcacheConfPolicy p = *policy;
        DropCtx d = { .res = ret, .drop = drop, .userdata = userdata };
        size_t len = 0;
        int r;

        *ret = (UpkeepConfResult) { 0 };
        r = examine_conf(root_fd, ret, &old, &len);
        if (r < 0)
                return r;
        p.trusted = ret->found == UPKEEP_CONF_OURS;
        (void) ccache_conf_get(old, len, "umask", ret->old_umask, sizeof(ret->old_umask));
        new = ccache_conf_update(old, len, &p, on_drop, &d, ret->old_max, sizeof(ret->old_max));
        if (!new)
                return -ENOMEM;
        (void) ccache_conf_settings(new, ret->settings, sizeof(ret->settings));
        if (ret->found == UPKEEP_CONF_OURS && (ret->mode & 07777) == 0644 && len == strlen(new) &&
            memcmp(old, new, len) == 0)
                return 0;
        /* A directory cannot be renamed over: it goes aside first. */
        r = ret->found == UPKEEP_CONF_DIRECTORY ? move_aside(root_fd, CONF_NAME) : 0;
        if (r == 0)
                r = write_conf(root_fd, new);
        if (r == 0)
                return 1;
        /* No room for the replacement (a full volume, say): a file that
         * could carry code goes rather than stay. */
        if (ret->found != UPKEEP_CONF_MISSING && ret->found != UPKEEP_CONF_DIRECTORY &&
            (ret->found != UPKEEP_CONF_OURS || ret->n_dropped > 0))
                ret->removed = unlinkat(root_fd, CONF_NAME, 0) == 0;
        return r;
}
