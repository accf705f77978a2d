/* SPDX-License-Identifier: MIT */
/* A manifest read through `ccache --inspect` (explain-internal.h,
 * Manifest), for depend mode's digests: the manifest opened here as a
 * regular file and given to ccache as its standard input; no shell, its
 * errors to /dev/null, at most INSPECT_MAX_BYTES of its output read. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build/explain-internal.h"
#include "core/readfile.h"

#define INSPECT_MAX_BYTES (16U << 20)

void manifest_done(Manifest *m) {
        strv_free(m->paths, m->n_paths);
        strv_free(m->info_hash, m->n_infos);
        free(m->info_path);
        *m = (Manifest) { 0 };
}

static int manifest_line(Manifest *m, int *section, const char *line) {
        const char *p = line;
        char *end;

        if (strncmp(line, "File paths (", 12) == 0)
                *section = 1;
        else if (strncmp(line, "File infos (", 12) == 0)
                *section = 2;
        else if (line[0] != ' ')
                *section = 0;
        else if (*section == 1) {
                while (*p == ' ')
                        p++;
                strtoul(p, &end, 10);
                if (end != p && end[0] == ':' && end[1] == ' ')
                        return strv_add(&m->paths, &m->n_paths, end + 2, strlen(end + 2));
        } else if (*section == 2) {
                while (*p == ' ')
                        p++;
                if (strncmp(p, "Path index: ", 12) == 0) {
                        size_t *ip = realloc(m->info_path, (m->n_infos + 1) * sizeof(size_t));
                        char **ih = realloc(m->info_hash, (m->n_infos + 1) * sizeof(char *));

                        if (ip)
                                m->info_path = ip;
                        if (ih)
                                m->info_hash = ih;
                        if (!ip || !ih)
                                return -ENOMEM;
                        m->info_path[m->n_infos] = strtoul(p + 12, NULL, 10);
                        m->info_hash[m->n_infos++] = NULL;
                } else if ((strncmp(p, "Hash: ", 6) == 0 || strncmp(p, "Digest: ", 8) == 0) && m->n_infos > 0 &&
                           !m->info_hash[m->n_infos - 1]) {
                        const char *h = strchr(p, ' ') + 1;

                        if (!(m->info_hash[m->n_infos - 1] = strdup(h)))
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Runs `ccache --inspect`, its output read into m. The manifest is
 * anyone's in a shared cache: ccache is given it as its standard input
 * ("/dev/stdin"), opened here as a regular file (readfile_open), so that a
 * FIFO or a device put at its name cannot block or act. Returns 0 (m may
 * be empty: it could not be read) or -ENOMEM. */
int manifest_read(const char *ccache, const char *path, Manifest *m) {
        char *argv[] = { (char *) ccache, (char *) "--inspect", (char *) "/dev/stdin", NULL };
        posix_spawn_file_actions_t fa;
        int pipefd[2], status, section = 0, r = 0, mfd;
        char *line = NULL;
        size_t cap = 0, total = 0;
        ssize_t n;
        pid_t pid;
        FILE *fp;

        if ((mfd = readfile_open(path, NULL)) < 0)
                return 0;
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                close(mfd);
                return 0;
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, mfd, STDIN_FILENO);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        if (posix_spawnp(&pid, ccache, &fa, NULL, argv, environ) != 0)
                pid = -1;
        posix_spawn_file_actions_destroy(&fa);
        close(mfd);
        close(pipefd[1]);
        if (pid < 0 || !(fp = fdopen(pipefd[0], "r"))) {
                close(pipefd[0]);
                if (pid > 0)
                        waitpid(pid, &status, 0);
                return 0;
        }
        while (r == 0 && (n = getline(&line, &cap, fp)) >= 0 && (total += (size_t) n) <= INSPECT_MAX_BYTES) {
                if (n > 0 && line[n - 1] == '\n')
                        line[n - 1] = '\0';
                r = manifest_line(m, &section, line);
        }
        free(line);
        fclose(fp);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return r;
}
