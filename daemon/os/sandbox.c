/* SPDX-License-Identifier: MIT */
/* The service's sandbox, read from its unit (sandbox.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "os/sandbox.h"

/* Where systemd finds a system unit, most important first (systemd.unit(5)). */
static const char *const unit_dirs[] = {
        "/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
        "/lib/systemd/system",
};

static int add_writable(Sandbox *s, const char *path) {
        char **w = realloc(s->writable, (s->n_writable + 1) * sizeof(char *));

        if (!w)
                return -ENOMEM;
        s->writable = w;
        if (!(w[s->n_writable] = strdup(path)))
                return -ENOMEM;
        s->n_writable++;
        return 0;
}

static void clear_writable(Sandbox *s) {
        for (size_t i = 0; i < s->n_writable; i++)
                free(s->writable[i]);
        s->n_writable = 0;
}

/* One "Key=value" of the [Service] section. */
static int take(Sandbox *s, const char *key, char *value) {
        char *save = NULL;

        if (strcmp(key, "ProtectSystem") == 0) {
                s->strict = strcmp(value, "strict") == 0;
                return 0;
        }
        if (strcmp(key, "ReadWritePaths") != 0 && strcmp(key, "StateDirectory") != 0)
                return 0;
        if (!*value && key[0] == 'R') {   /* an empty assignment resets the list */
                clear_writable(s);
                return 0;
        }
        for (char *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                char path[512];
                int r;

                while (*w == '-' || *w == '+')
                        w++;
                if (key[0] == 'S')
                        snprintf(path, sizeof(path), "/var/lib/%s", w);
                else
                        snprintf(path, sizeof(path), "%s", w);
                if (path[0] == '/' && (r = add_writable(s, path)) < 0)
                        return r;
        }
        return 0;
}

static int read_file(Sandbox *s, const char *path) {
        char line[4096];
        bool service = false;
        int r = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return 0;   /* gone meanwhile, or not ours to read: as if absent */
        while (r == 0 && fgets(line, sizeof(line), f)) {
                char *eq, *k = line, *v;

                line[strcspn(line, "\r\n")] = '\0';
                while (*k == ' ' || *k == '\t')
                        k++;
                if (*k == '[') {
                        service = strcmp(k, "[Service]") == 0;
                        continue;
                }
                if (!service || *k == '#' || *k == ';' || !(eq = strchr(k, '=')))
                        continue;
                *eq = '\0';
                v = eq + 1;
                for (char *e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t');)
                        *--e = '\0';
                while (*v == ' ' || *v == '\t')
                        v++;
                r = take(s, k, v);
        }
        fclose(f);
        return r;
}

static int by_name(const void *a, const void *b) {
        const char *x = strrchr(*(char *const *) a, '/'), *y = strrchr(*(char *const *) b, '/');

        return strcmp(x, y);
}

/* The drop-ins (*.conf in UNIT.d of each directory), applied in the order of
 * their names; of two of one name, the more important directory's. */
static int read_dropins(Sandbox *s, const char *root) {
        char **files = NULL;
        size_t n = 0;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(unit_dirs) && r == 0; i++) {
                char dir[512];
                struct dirent *de;
                DIR *d;

                snprintf(dir, sizeof(dir), "%s%s/%s.d", root, unit_dirs[i], SANDBOX_UNIT);
                if (!(d = opendir(dir)))
                        continue;
                while ((de = readdir(d))) {
                        size_t l = strlen(de->d_name);
                        bool shadowed = false;
                        char **f;

                        if (l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
                                continue;
                        for (size_t j = 0; j < n && !shadowed; j++)
                                shadowed = strcmp(strrchr(files[j], '/') + 1, de->d_name) == 0;
                        if (shadowed)
                                continue;
                        if (!(f = realloc(files, (n + 1) * sizeof(char *))) ||
                            asprintf(&f[n], "%s/%s", dir, de->d_name) < 0) {
                                if (f)
                                        files = f;
                                r = -ENOMEM;
                                break;
                        }
                        files = f;
                        n++;
                }
                closedir(d);
        }
        if (r == 0 && n > 0)
                qsort(files, n, sizeof(char *), by_name);
        for (size_t i = 0; i < n; i++) {
                if (r == 0)
                        r = read_file(s, files[i]);
                free(files[i]);
        }
        free(files);
        return r;
}

int sandbox_read(const char *root, Sandbox *ret) {
        Sandbox s = { 0 };
        int r = 0;

        *ret = s;
        for (size_t i = 0; i < ELEMENTSOF(unit_dirs) && !s.found; i++) {
                char path[512];
                FILE *f;

                snprintf(path, sizeof(path), "%s%s/%s", strcmp(root, "/") == 0 ? "" : root, unit_dirs[i], SANDBOX_UNIT);
                if (!(f = fopen(path, "re")))
                        continue;
                fclose(f);
                s.found = true;
                snprintf(s.unit, sizeof(s.unit), "%s", path);
                r = read_file(&s, path);
        }
        if (s.found && r == 0)
                r = read_dropins(&s, strcmp(root, "/") == 0 ? "" : root);
        if (r < 0) {
                sandbox_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

bool sandbox_allows(const Sandbox *s, const char *path) {
        if (!s->found || !s->strict)
                return true;
        for (size_t i = 0; i < s->n_writable; i++) {
                size_t l = strlen(s->writable[i]);

                while (l > 1 && s->writable[i][l - 1] == '/')
                        l--;
                if (strncmp(path, s->writable[i], l) == 0 && (path[l] == '/' || path[l] == '\0' || l == 1))
                        return true;
        }
        return false;
}

char *sandbox_writable_text(const Sandbox *s, char *buf, size_t len) {
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < s->n_writable && used < len; i++)
                used += (size_t) snprintf(buf + used, len - used, "%s%s", i ? " " : "", s->writable[i]);
        return buf;
}

void sandbox_done(Sandbox *s) {
        clear_writable(s);
        free(s->writable);
        *s = (Sandbox) { 0 };
}

const char *sandbox_hint(int err, const char *path, char *buf, size_t len) {
        buf[0] = '\0';
        if ((err == EROFS || err == -EROFS) && getenv("INVOCATION_ID"))
                snprintf(buf, len,
                         "; the service's sandbox (ProtectSystem=strict) writes only below its ReadWritePaths=: "
                         "add a drop-in, systemctl edit " SANDBOX_UNIT " ([Service] ReadWritePaths=%s), then "
                         "restart it", path);
        return buf;
}
