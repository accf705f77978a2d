/* SPDX-License-Identifier: MIT */
/* cachekeeperd --describe-conf (describe.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccache/ccache-conf.h"
#include "ccache/upkeep.h"
#include "config/describe.h"

/* Up to UPKEEP_CONF_MAX bytes of dir/ccache.conf, a regular file opened
 * without following a symlink, into buf. Returns the length or -errno. */
static ssize_t read_conf(const char *dir, char *buf, size_t len) {
        char path[PATH_MAX];
        struct stat st;
        ssize_t n, total = 0;
        int fd;

        if (snprintf(path, sizeof(path), "%s/ccache.conf", dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;
        }
        while ((size_t) total < len && (n = read(fd, buf + total, len - (size_t) total)) > 0)
                total += n;
        close(fd);
        return total;
}

int describe_ccache_confs(const Config *c, FILE *f) {
        static char buf[UPKEEP_CONF_MAX];

        for (size_t i = 0; i < c->n_caches; i++) {
                const CacheConfig *cc = &c->caches[i];
                char umask[16], max[64];
                ssize_t n = read_conf(cc->path, buf, sizeof(buf));
                bool has_umask, has_max;

                if (n < 0) {
                        fprintf(f, "%s: %s/ccache.conf: %s; ccache's defaults apply\n", cc->name, cc->path,
                                n == -ENOENT ? "none" : n == -EINVAL ? "not a regular file" : strerror((int) -n));
                        continue;
                }
                has_umask = ccache_conf_get(buf, (size_t) n, "umask", umask, sizeof(umask));
                has_max = ccache_conf_get(buf, (size_t) n, "max_size", max, sizeof(max));
                fprintf(f, "%s: %s/ccache.conf keeps umask = %s%s and max_size = %s%s; ccache goes on using the "
                        "cache with them\n", cc->name, cc->path, has_umask ? umask : "(unset)",
                        has_umask && strcmp(umask, "000") == 0 ? " (what ccache writes stays writable by every user)"
                                                               : "",
                        has_max ? max : "(unset)", has_max ? " (ccache's own cleanup trims the cache there)" : "");
        }
        return 0;
}
