/* SPDX-License-Identifier: MIT */
/* A CMake build directory's CMakeCache.txt (doctor-internal.h): the
 * languages, their compilers and launchers, the generator; and the model of
 * the build's compile rules and dependency counts that the Ninja and
 * Makefiles readers fill. Every file through core/readfile.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/doctor-internal.h"
#include "core/path.h"
#include "core/readfile.h"

/* A language's name as CMake spells them: C, CXX, HIP, Fortran. */
static bool lang_name_ok(const char *name, size_t len) {
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", name[i]) || !name[i])
                        return false;
        return true;
}

Lang *lang_get(Build *b, const char *name, size_t len, bool create) {
        if (!lang_name_ok(name, len))
                return NULL;
        for (size_t i = 0; i < b->n_langs; i++)
                if (strlen(b->langs[i].name) == len && strncmp(b->langs[i].name, name, len) == 0)
                        return &b->langs[i];
        if (!create || b->n_langs == ELEMENTSOF(b->langs) || len >= sizeof(b->langs[0].name))
                return NULL;
        memcpy(b->langs[b->n_langs].name, name, len);
        b->langs[b->n_langs].name[len] = '\0';
        return &b->langs[b->n_langs++];
}

void build_done(Build *b) {
        for (size_t i = 0; i < b->n_langs; i++) {
                free(b->langs[i].compiler);
                free(b->langs[i].launcher);
                free(b->langs[i].first_missing);
        }
        for (size_t i = 0; i < b->n_objects; i++)
                free(b->objects[i].path);
        free(b->objects);
        free(b->generator);
        programs_done(&b->programs);
        readfile_budget_done(&b->budget);
}

/* The languages ccache caches (its compiler types and CMake's names; ASM
 * through a compiler driver: ccache caches .s and .S). */
bool lang_cacheable(const char *name) {
        static const char *const names[] = { "C", "CXX", "OBJC", "OBJCXX", "CUDA", "HIP", "ASM" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

/* CMakeCache.txt: "NAME:TYPE=VALUE" lines; the compilers, their launchers,
 * the generator. Returns 0 or -errno. */
int read_cmake_cache(Build *b) {
        ReadFile l;
        char *line;
        int r;

        r = readfile_begin(&l, &b->budget, "CMakeCache.txt", UINT64_MAX);
        if (r < 0)
                return r;
        while ((line = readfile_line(&l, DOCTOR_LINE_MAX, NULL))) {
                char *colon, *eq, *value;
                size_t len;
                Lang *lang;

                if (strncmp(line, "CMAKE_", 6) != 0 || !(colon = strchr(line, ':')) || !(eq = strchr(colon, '=')))
                        continue;
                *colon = '\0';
                value = eq + 1;
                len = strlen(line);
                if (strcmp(line, "CMAKE_GENERATOR") == 0) {
                        free(b->generator);
                        b->generator = strdup(value);
                        continue;
                }
                if (len > 15 && strcmp(line + len - 9, "_LAUNCHER") == 0 &&
                    strncmp(line + len - 18, "_COMPILER", 9) == 0 && len > 6 + 18) {
                        lang = lang_get(b, line + 6, len - 6 - 18, true);
                        if (lang && *value) {
                                free(lang->launcher);
                                lang->launcher = strdup(value);
                        }
                        continue;
                }
                if (len > 15 && strcmp(line + len - 9, "_COMPILER") == 0) {
                        const char *name = line + 6;
                        size_t nlen = len - 6 - 9;

                        if (nlen == 0 || strcspn(name, "_") < nlen)
                                continue;       /* CMAKE_<LANG>_COMPILER only: no "_" in LANG */
                        lang = lang_get(b, name, nlen, true);
                        if (lang && *value && !strstr(value, "-NOTFOUND")) {
                                free(lang->compiler);
                                lang->compiler = strdup(value);
                        }
                }
        }
        readfile_end(&l);
        return 0;
}

/* The launcher's first word (past env and NAME=VALUE: CMake's list
 * separator is ';'), and its CCACHE_* settings as NAME=VALUE strings (into
 * env, at most max - 1, NULL-terminated). Returns the program or NULL. */
char *launcher_parse(const char *launcher, char **env, size_t max) {
        _cleanup_free_ char *copy = strdup(launcher ? launcher : "");
        char *w[64], *program = NULL;
        size_t n = 0, i = 0, k = 0;

        if (!copy)
                return NULL;
        for (char *s = copy, *e; s && n < ELEMENTSOF(w); s = e) {
                e = strchr(s, ';');
                if (e)
                        *e++ = '\0';
                w[n] = s + strspn(s, " ");
                if (*w[n])
                        n++;
        }
        if (i < n && strcmp(path_base_name(w[i]), "env") == 0)
                for (i++; i < n && w[i][0] == '-'; i++)
                        ;
        for (; i < n && strchr(w[i], '='); i++)
                if (env && strncmp(w[i], "CCACHE_", 7) == 0 && k + 1 < max)
                        env[k++] = strdup(w[i]);
        if (env)
                env[k] = NULL;
        if (i < n)
                program = strdup(w[i]);
        return program;
}

static void remember_object(Build *b, const char *path, size_t lang) {
        struct Object *o;

        if (b->n_objects >= DOCTOR_FILES_MAX * 10)
                return;
        o = realloc(b->objects, (b->n_objects + 1) * sizeof(*o));
        if (!o)
                return;
        b->objects = o;
        o[b->n_objects].path = strdup(path);
        o[b->n_objects].lang = lang;
        if (o[b->n_objects].path)
                b->n_objects++;
}

/* Does the command make the compiler write its dependency file (-MD or
 * -MMD, perhaps through -Wp,), as ccache's depend mode needs? */
static bool writes_depfile(const char *command) {
        static const char *const flags[] = { "-MD", "-MMD", "-Wp,-MD,", "-Wp,-MMD," };

        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                for (const char *p = command; (p = strstr(p, flags[i])); p++) {
                        size_t n = strlen(flags[i]);

                        if ((p == command || p[-1] == ' ' || p[-1] == '\t') &&
                            (flags[i][n - 1] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
                                return true;
                }
        return false;
}

void count_rule(Build *b, Lang *lang, const char *command, const char *object) {
        bool through = command_through_ccache(&b->programs, command);

        lang->rules++;
        if (through) {
                lang->rules_through++;
                lang->rules_no_md += !writes_depfile(command);
        }
        else if (!lang->first_missing)
                lang->first_missing = strdup(object);
        if (through)
                remember_object(b, object, (size_t) (lang - b->langs));
}

static int object_cmp(const void *a, const void *b) {
        return strcmp(((const struct Object *) a)->path, ((const struct Object *) b)->path);
}

static struct Object *object_find(Build *b, const char *path) {
        struct Object key = { .path = (char *) path };

        if (b->n_objects == 0)
                return NULL;
        return bsearch(&key, b->objects, b->n_objects, sizeof(key), object_cmp);
}

/* Adds n dependencies of object path to its language's count. */
void count_deps(Build *b, const char *path, uint64_t n) {
        struct Object *o = object_find(b, path);

        if (!o || b->langs[o->lang].deps_objects >= DOCTOR_DEPS_SAMPLE_MAX)
                return;
        b->langs[o->lang].deps_objects++;
        b->langs[o->lang].deps_total += n;
}

void read_deps(Build *b, bool ninja) {
        if (b->n_objects == 0)
                return;         /* nothing of ccache's, or the rules unread: nothing to ask ninja */
        qsort(b->objects, b->n_objects, sizeof(*b->objects), object_cmp);
        if (ninja) {
                ninja_read_deps(b);
                return;
        }
        make_read_deps(b);
}
