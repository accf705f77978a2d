/* SPDX-License-Identifier: MIT */
/* Paths as cachectl meets them (path.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "core/path.h"

const char *path_base_name(const char *path) {
        const char *s = strrchr(path, '/');

        return s ? s + 1 : path;
}

bool path_same_dir(const char *a, const char *b) {
        struct stat sa, sb;

        if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
                return S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
        return strcmp(a, b) == 0;
}

bool path_same_parent(const char *a, const char *b) {
        size_t la = (size_t) (path_base_name(a) - a), lb = (size_t) (path_base_name(b) - b);

        return la == lb && strncmp(a, b, la) == 0;
}

int path_write_atomically(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        const char *base = strrchr(path, '/');
        size_t len = strlen(text);
        int fd;

        if (asprintf(&tmp, "%.*s.%s.XXXXXX", base ? (int) (base - path + 1) : 0, path, base ? base + 1 : path) < 0) {
                tmp = NULL;
                fprintf(stderr, "cachectl: out of memory\n");
                return -1;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "cachectl: cannot create a file beside %s: %m\n", path);
                return -1;
        }
        if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t) len || fsync(fd) < 0) {
                fprintf(stderr, "cachectl: cannot write %s: %m\n", tmp);
                close(fd);
                unlink(tmp);
                return -1;
        }
        if (close(fd) < 0 || rename(tmp, path) < 0) {
                fprintf(stderr, "cachectl: cannot replace %s: %m\n", path);
                unlink(tmp);
                return -1;
        }
        return 0;
}
