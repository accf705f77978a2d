/* SPDX-License-Identifier: MIT */
/* What the program of a compile rule is (doctor-internal.h): ccache, a
 * ccache shim script (read through core/readfile.h, bounded), or neither;
 * the words of a command past cd, env and NAME=VALUE. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "build/doctor-internal.h"
#include "core/path.h"
#include "core/readfile.h"

/* Is path ccache itself: named so, or a link that resolves to it? */
bool is_ccache(const char *path) {
        _cleanup_free_ char *real = NULL;

        if (strcmp(path_base_name(path), "ccache") == 0)
                return true;
        if (!strchr(path, '/'))
                return false;
        real = realpath(path, NULL);
        return real && strcmp(path_base_name(real), "ccache") == 0;
}

/* Splits a shell-ish line into words (quotes dropped, no expansion) in
 * place; at most max. Returns how many. */
size_t split_words(char *s, char **words, size_t max) {
        size_t n = 0;

        while (*s && n < max) {
                char *w, *o;
                char quote = 0;

                s += strspn(s, " \t");
                if (!*s)
                        break;
                w = o = s;
                for (; *s && (quote || (*s != ' ' && *s != '\t')); s++) {
                        if (!quote && (*s == '"' || *s == '\''))
                                quote = *s;
                        else if (quote && *s == quote)
                                quote = 0;
                        else
                                *o++ = *s;
                }
                if (*s)
                        s++;
                *o = '\0';
                words[n++] = w;
        }
        return n;
}

static bool is_assignment(const char *w) {
        return w[0] != '-' && w[0] != '=' && strchr(w, '=');
}

/* Skips NAME=VALUE words, "env" with its options (-u NAME and -C DIR take
 * one) and NAME=VALUE words again: what runs a command in a changed
 * environment. Each NAME=VALUE of CCACHE_* goes into env (at most max - 1,
 * strdup'ed, NULL-terminated; env may be NULL). */
static size_t skip_env_collect(char **w, size_t n, size_t i, char **env, size_t max) {
        size_t k = 0;

        while (env && k < max && env[k])
                k++;
        for (int pass = 0; pass < 2; pass++) {
                for (; i < n && is_assignment(w[i]); i++)
                        if (env && strncmp(w[i], "CCACHE_", 7) == 0 && k + 1 < max && (env[k] = strdup(w[i])))
                                env[++k] = NULL;
                if (pass == 0 && i < n && strcmp(path_base_name(w[i]), "env") == 0)
                        for (i++; i < n && w[i][0] == '-' && strcmp(w[i], "--") != 0; i++)
                                if ((strcmp(w[i], "-u") == 0 || strcmp(w[i], "-C") == 0) && i + 1 < n)
                                        i++;
                if (pass == 0 && i < n && strcmp(w[i], "--") == 0)
                        i++;
        }
        return i;
}

static size_t skip_env(char **w, size_t n, size_t i) {
        return skip_env_collect(w, n, i, NULL, 0);
}

/* What a shim script at path is: whether one of its lines runs ccache
 * ("exec ccache REAL "$@"", after NAME=VALUE words or through env, as in
 * "CCACHE_DEPEND=1 exec ccache REAL" or "exec env CCACHE_X=y ccache REAL"),
 * and then the real compiler it names (*ret_real, NULL when a variable
 * names it) and the CCACHE_* settings it makes on that line or alone on
 * earlier ones ("export CCACHE_X=y"; into env as skip_env_collect, may be
 * NULL). Returns true for a ccache shim: that, or a link to ccache. */
bool shim_inspect(const char *path, char **ret_real, char **env, size_t max) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        if (ret_real)
                *ret_real = NULL;
        if (is_ccache(path))
                return strcmp(path_base_name(path), "ccache") != 0;
        if (readfile_all(NULL, path, DOCTOR_SCRIPT_MAX_BYTES, &text, &n) < 0)
                return false;
        if (!text || n < 2 || text[0] != '#' || text[1] != '!')
                return false;
        text[n] = '\0';
        for (char *line = text, *next; line; line = next) {
                char *w[64];
                size_t nw, i = 0;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (line[strspn(line, " \t")] == '#')
                        continue;
                nw = split_words(line, w, ELEMENTSOF(w));
                if (nw > 0 && strcmp(w[0], "export") == 0)
                        i++;
                if (i < nw && skip_env(w, nw, i) == nw) {
                        skip_env_collect(w, nw, i, env, max);   /* settings alone on a line */
                        continue;
                }
                i = skip_env(w, nw, 0);
                if (i < nw && strcmp(w[i], "exec") == 0)
                        i++;
                i = skip_env(w, nw, i);
                if (i >= nw || strcmp(path_base_name(w[i]), "ccache") != 0)
                        continue;
                i = skip_env_collect(w, nw, 0, env, max);
                if (strcmp(w[i], "exec") == 0)
                        i = skip_env_collect(w, nw, i + 1, env, max);
                if (ret_real && i + 1 < nw && w[i + 1][0] != '$' && w[i + 1][0] != '-')
                        *ret_real = strdup(w[i + 1]);
                return true;
        }
        return false;
}

static bool through_ccache(Programs *ps, const char *path) {
        bool t;

        for (size_t i = 0; i < ps->n; i++)
                if (strcmp(ps->p[i].path, path) == 0)
                        return ps->p[i].through;
        t = is_ccache(path) || shim_inspect(path, NULL, NULL, 0);
        if (ps->n < ELEMENTSOF(ps->p) && (ps->p[ps->n].path = strdup(path)))
                ps->p[ps->n++].through = t;
        return t;
}

void programs_done(Programs *ps) {
        for (size_t i = 0; i < ps->n; i++)
                free(ps->p[i].path);
        ps->n = 0;
}

/* Does the compile command go through ccache? Past "cd DIR &&", env and
 * NAME=VALUE words, CMake's "cmake -E __run_co_compile" (its --launcher=,
 * else what follows "--"), the program is ccache or a ccache shim. */
bool command_through_ccache(Programs *ps, const char *command) {
        _cleanup_free_ char *copy = NULL;
        const char *s = command + strspn(command, " \t");
        char *w[256];
        size_t n, i;

        if (strncmp(s, "cd ", 3) == 0 && strstr(s, "&&"))
                s = strstr(s, "&&") + 2;
        copy = strdup(s);
        if (!copy)
                return false;
        n = split_words(copy, w, ELEMENTSOF(w));
        i = skip_env(w, n, 0);
        if (i + 1 < n && strcmp(w[i + 1], "-E") == 0 && i + 2 < n && strcmp(w[i + 2], "__run_co_compile") == 0) {
                size_t j;

                for (j = i + 3; j < n && strcmp(w[j], "--") != 0; j++)
                        if (strncmp(w[j], "--launcher=", 11) == 0)
                                return through_ccache(ps, w[j] + 11);
                i = skip_env(w, n, j + 1);
        }
        return i < n && through_ccache(ps, w[i]);
}
