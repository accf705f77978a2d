/* SPDX-License-Identifier: MIT */
/* doctor DIR (doctor-internal.h): the checks of a CMake build directory,
 * from what doctor-cmake.c, doctor-ninja.c and doctor-make.c read of it:
 * every language's rules through ccache, the cache directory, depend mode,
 * what was not read. */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/text.h"
#include "build/doctor-internal.h"
#include "core/client.h"
#include "core/readfile.h"

/* Rules that go through ccache without -MD: depend mode needs the
 * compiler's dependency file, so ccache turns it off for them ("Disabling
 * depend mode" in its log) and preprocesses each of their misses. CMake's
 * Makefile generator gives HIP (and ASM) none: it scans their dependencies
 * itself unless told to use the compiler's. */
static void check_no_depfile(Doctor *d, Build *b, Lang *lang, bool depend_on, bool ninja) {
        _cleanup_free_ char *fix = NULL;
        char name[64];

        snprintf(name, sizeof(name), "depend-%s", lang->name);
        if (!ninja)
                fix = strdupf("cmake -DCMAKE_%s_DEPENDS_USE_COMPILER=TRUE -DCMAKE_%s_DEPFILE_FORMAT=gcc %s (the "
                              "compiler writes the dependency file, -MD, as for C and C++), or the Ninja generator",
                              lang->name, lang->name, b->dir);
        doctor_add(d, name, depend_on ? DOCTOR_WARN : DOCTOR_OK, fix, "%s%" PRIu64 " of %" PRIu64 " %s rules compile without "
            "-MD%s: depend mode %s them (ccache says \"Disabling depend mode\" and runs the preprocessor on each "
            "miss)", depend_on ? "depend mode is on, but " : "", lang->rules_no_md, lang->rules_through, lang->name,
            ninja ? "" : " (CMake's Makefile generator passes none)", depend_on ? "cannot serve" : "could not serve");
}

/* ASM: CMake gives it no launcher (<LANG>_COMPILER_LAUNCHER is for C, CXX,
 * CUDA, HIP, OBJC, OBJCXX, Fortran and ISPC only, CMake 3.4 to 3.28 and
 * on), so only RULE_LAUNCH_COMPILE, a launcher for every compile rule, or
 * an ASM compiler that is a ccache link puts ccache before it. */
static void check_asm_rules(Doctor *d, Build *b, Lang *lang) {
        _cleanup_free_ char *fix = NULL;

        if (lang->rules == 0)
                doctor_add(d, "rules-ASM", DOCTOR_OK, NULL, "no ASM compile rule in the generated rules");
        else if (lang->rules == lang->rules_through)
                doctor_add(d, "rules-ASM", DOCTOR_OK, NULL, "%" PRIu64 " of %" PRIu64 " ASM compile rules go through ccache",
                    lang->rules_through, lang->rules);
        else {
                /* ccache skips a second ccache: the rules of languages that
                 * have a launcher too stay as they are */
                fix = strdupf("echo 'set_property(GLOBAL PROPERTY RULE_LAUNCH_COMPILE ccache)' > %s/ccache-launch.cmake && "
                              "cmake -DCMAKE_PROJECT_INCLUDE=%s/ccache-launch.cmake %s", b->dir, b->dir, b->dir);
                doctor_add(d, "rules-ASM", DOCTOR_WARN, fix, "%" PRIu64 " of %" PRIu64 " ASM rules have no launcher: CMake has "
                    "no CMAKE_ASM_COMPILER_LAUNCHER (launchers are for C, CXX, CUDA, HIP, OBJC, OBJCXX, Fortran, "
                    "ISPC), so they compile without ccache (first: %s)", lang->rules - lang->rules_through, lang->rules,
                    lang->first_missing ? lang->first_missing : "?");
        }
}

/* What of the build directory was not read: files that are no regular
 * file (never opened), and what the budget left. */
static void check_build_files(Doctor *d, const ReadBudget *rb) {
        if (rb->not_regular > 0)
                doctor_add(d, "build-files", DOCTOR_WARN, NULL, "%" PRIu64 " file%s the build names %s not a regular file, "
                    "not opened (first: %s)", rb->not_regular, rb->not_regular == 1 ? "" : "s",
                    rb->not_regular == 1 ? "is" : "are", rb->first_not_regular ?: "?");
        if (readfile_budget_reached(rb))
                doctor_add(d, "read-budget", DOCTOR_WARN, NULL, "the read budget was reached (%llu MiB, %d files in all): "
                    "%" PRIu64 " file%s not read or read in part (first: %s); the checks above count what was read",
                    DOCTOR_READ_MAX_BYTES >> 20, DOCTOR_FILES_MAX, rb->files_unread, rb->files_unread == 1 ? "" : "s",
                    rb->first_unread ?: "?");
}

/* Where a language's rules put the cache: its launcher's CCACHE_DIR=, else
 * the environment's, else ccache's configuration (set: the language goes
 * through ccache, so it was asked). */
typedef struct LangCache {
        char *dir;
        char *env[16];
        bool set;
} LangCache;

/* Into the build directory dir (its absolute name, malloc'd, in *ret_abs;
 * NULL when unknown), keeping a relative -s where it was. Returns 0, or -1
 * after saying why. */
static int enter_build_dir(const char *dir, char **ret_abs) {
        /* The daemon is asked from inside dir: a relative -s stays where it was. */
        if (ctl_socket_path[0] != '/') {
                static char socket_abs[PATH_MAX];
                _cleanup_free_ char *cwd = getcwd(NULL, 0);

                if (cwd && snprintf(socket_abs, sizeof(socket_abs), "%s/%s", cwd, ctl_socket_path) < (int) sizeof(socket_abs))
                        ctl_socket_path = socket_abs;
        }
        if (chdir(dir) < 0) {
                _cleanup_free_ char *shown = text_escaped(dir);

                fprintf(stderr, "cachectl: %s: %m\n", shown ?: "?");
                return -1;
        }
        *ret_abs = getcwd(NULL, 0);
        return 0;
}

/* The launcher and rules checks of a language ccache caches (not ASM): r
 * is what reading the generated rules returned. Returns whether the
 * language goes through ccache. */
static bool check_lang(Doctor *d, Build *b, Lang *lang, int r, bool ninja) {
        _cleanup_free_ char *launcher = NULL, *fix = NULL, *real = NULL;
        char name[64];
        bool shim;

        launcher = launcher_parse(lang->launcher, NULL, 0);
        shim = shim_inspect(lang->compiler, &real, NULL, 0);
        fix = strdupf("cmake -DCMAKE_%s_COMPILER_LAUNCHER=ccache %s", lang->name, b->dir);
        snprintf(name, sizeof(name), "launcher-%s", lang->name);
        if (launcher && is_ccache(launcher))
                doctor_add(d, name, DOCTOR_OK, NULL, "CMAKE_%s_COMPILER_LAUNCHER is ccache (%s)", lang->name,
                    lang->launcher);
        else if (shim)
                doctor_add(d, name, DOCTOR_OK, NULL, "CMAKE_%s_COMPILER %s is a ccache shim", lang->name,
                    lang->compiler);
        else if (launcher)
                doctor_add(d, name, DOCTOR_FAIL, fix, "CMAKE_%s_COMPILER_LAUNCHER is %s, not ccache", lang->name,
                    lang->launcher);
        else if (lang->rules > 0 && lang->rules == lang->rules_through)
                doctor_add(d, name, DOCTOR_OK, NULL, "no CMAKE_%s_COMPILER_LAUNCHER in the cache, but the project "
                    "sets one: every %s rule goes through ccache", lang->name, lang->name);
        else
                doctor_add(d, name, DOCTOR_FAIL, fix, "%s (CMAKE_%s_COMPILER %s) has no ccache launcher and its "
                    "compiler is not a ccache shim", lang->name, lang->name, lang->compiler);

        snprintf(name, sizeof(name), "rules-%s", lang->name);   /* the launcher check had it */
        if (r < 0)
                doctor_add(d, name, DOCTOR_WARN, NULL, "could not read the generated rules (%s, generator %s): %s",
                    ninja ? "build.ninja" : "CMakeFiles/TargetDirectories.txt",
                    b->generator ? b->generator : "unknown", readfile_strerror(r));
        else if (lang->rules == 0)
                doctor_add(d, name, DOCTOR_OK, NULL, "no %s compile rule in the generated %s", lang->name,
                    ninja ? "build.ninja" : "Makefiles");
        else if (lang->rules == lang->rules_through)
                doctor_add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " of %" PRIu64 " %s compile rules go through ccache",
                    lang->rules_through, lang->rules, lang->name);
        else
                doctor_add(d, name, DOCTOR_FAIL, fix, "%" PRIu64 " of %" PRIu64 " %s compile rules do not go through "
                    "ccache (first: %s)", lang->rules - lang->rules_through, lang->rules, lang->name,
                    lang->first_missing ? lang->first_missing : "?");
        return lang->rules_through > 0 || (launcher && is_ccache(launcher)) || shim;
}

/* Every language's checks; returns whether any goes through ccache. */
static bool check_langs(Doctor *d, Build *b, int r, bool ninja) {
        bool any_through = false;
        size_t n_cacheable = 0;

        for (size_t i = 0; i < b->n_langs; i++) {
                Lang *lang = &b->langs[i];
                char name[64];

                if (!lang->compiler)
                        continue;
                if (!lang_cacheable(lang->name)) {
                        snprintf(name, sizeof(name), "rules-%s", lang->name);
                        if (lang->rules > 0)    /* counted too, to account for every rule */
                                doctor_add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " %s compile rules: ccache does not cache %s",
                                    lang->rules, lang->name, lang->name);
                        continue;
                }
                n_cacheable++;
                if (strcmp(lang->name, "ASM") == 0 && r >= 0) {
                        check_asm_rules(d, b, lang);
                        any_through |= lang->rules_through > 0;
                        continue;
                }
                any_through |= check_lang(d, b, lang, r, ninja);
        }
        if (n_cacheable == 0)
                doctor_add(d, "languages", DOCTOR_WARN, NULL, "CMakeCache.txt enables no language ccache caches "
                    "(C, CXX, OBJC, OBJCXX, CUDA, HIP, ASM)");
        return any_through;
}

/* Asks ccache, for each language that goes through it, where its cache is
 * (into cd[], one per b->langs[]). */
static void find_cache_dirs(Build *b, LangCache *cd) {
        for (size_t i = 0; i < b->n_langs; i++) {
                Lang *lang = &b->langs[i];
                _cleanup_free_ char *program = NULL;

                if (!lang->compiler || !lang_cacheable(lang->name) ||
                    !(lang->rules_through > 0 || (lang->launcher && (program = launcher_parse(lang->launcher, NULL, 0)) &&
                                                  is_ccache(program)) || shim_inspect(lang->compiler, NULL, NULL, 0)))
                        continue;
                free(launcher_parse(lang->launcher, cd[i].env, ELEMENTSOF(cd[i].env)));
                cd[i].dir = ccache_get("cache_dir", cd[i].env);
                cd[i].set = true;
        }
}

/* The cache-dir checks: one when every language uses the same directory,
 * else one per language ("cache-dir-<LANG>"). */
static void check_cache_dirs(Doctor *d, Build *b, const LangCache *cd, json_object *status, int asked) {
        bool same = true;
        const char *dir0 = NULL;

        for (size_t i = 0; i < b->n_langs; i++)
                if (cd[i].set) {
                        if (!dir0)
                                dir0 = cd[i].dir ? cd[i].dir : "";
                        else if (strcmp(dir0, cd[i].dir ? cd[i].dir : "") != 0)
                                same = false;
                }
        for (size_t i = 0; i < b->n_langs; i++) {
                char suffix[40] = "";

                if (!cd[i].set)
                        continue;
                if (!same)
                        snprintf(suffix, sizeof(suffix), "-%s", b->langs[i].name);
                if (!cd[i].dir)
                        doctor_add(d, same ? "cache-dir" : suffix + 1, DOCTOR_WARN, NULL,
                            "could not ask ccache for its cache_dir (ccache -k cache_dir failed)");
                else
                        check_cache_dir(d, cd[i].dir, suffix, status, asked);
                if (same)
                        break;
        }
}

/* The depend-mode check of a language with objects built and -MD on its
 * rules; depend_on: its ccache has depend_mode. */
static void check_depend_mode(Doctor *d, Build *b, Lang *lang, bool depend_on) {
        _cleanup_free_ char *fix = NULL;
        uint64_t mean = lang->deps_total / lang->deps_objects;
        char name[64];

        snprintf(name, sizeof(name), "depend-%s", lang->name);
        if (depend_on)
                doctor_add(d, name, DOCTOR_OK, NULL, "depend mode is on (%" PRIu64 " files per %s object)",
                    mean, lang->name);
        else if (mean < DOCTOR_HEAVY_DEPS)
                doctor_add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " files per %s object (of %" PRIu64 " built): "
                    "light headers, depend mode would not pay", mean, lang->name, lang->deps_objects);
        else {
                /* The launcher with CCACHE_DEPEND=true after its env (kept). */
                const char *l = lang->launcher, *rest = l && strncmp(l, "env;", 4) == 0 ? l + 4 : l;

                if (l && *l)
                        fix = strdupf("cmake -DCMAKE_%s_COMPILER_LAUNCHER=\"env;CCACHE_DEPEND=true;%s\" %s",
                                      lang->name, rest, b->dir);
                else
                        fix = strdupf("export CCACHE_DEPEND=true (in the environment of the build)");
                doctor_add(d, name, DOCTOR_WARN, fix, "%" PRIu64 " files per %s object (of %" PRIu64 " built, "
                    "%d or more is heavy): depend mode would skip the preprocessor on every miss",
                    mean, lang->name, lang->deps_objects, DOCTOR_HEAVY_DEPS);
        }
}

/* Depend mode: pays where a miss is mostly the preprocessor reading
 * headers. Counted on the objects already built. */
static void check_depend_modes(Doctor *d, Build *b, LangCache *cd, bool ninja, bool any_through) {
        bool any = false;

        read_deps(b, ninja);
        for (size_t i = 0; i < b->n_langs; i++) {
                Lang *lang = &b->langs[i];
                _cleanup_free_ char *mode = NULL;
                bool depend_on;

                if (!cd[i].set || (lang->deps_objects == 0 && lang->rules_no_md == 0))
                        continue;
                any = true;
                mode = ccache_get("depend_mode", cd[i].env);
                depend_on = mode && strcmp(mode, "true") == 0;
                if (lang->rules_no_md > 0)
                        check_no_depfile(d, b, lang, depend_on, ninja);
                else
                        check_depend_mode(d, b, lang, depend_on);
        }
        if (!any && any_through)
                doctor_add(d, "depend-mode", DOCTOR_OK, NULL, "no dependency information: nothing built yet"
                    "; build once, then ask again whether depend mode would pay");
}

int doctor_build(Doctor *d, const char *dir) {
        _cleanup_free_ char *abs = NULL;
        json_object *status = NULL;
        Build b = { .dir = dir };
        LangCache cd[ELEMENTSOF(b.langs)] = {};
        bool ninja, any_through;
        int r, asked;

        readfile_budget_init(&b.budget, DOCTOR_READ_MAX_BYTES, DOCTOR_FILES_MAX, true);
        if (enter_build_dir(dir, &abs) < 0)
                return -1;
        b.dir = abs ? abs : dir;
        r = read_cmake_cache(&b);
        if (r < 0) {
                _cleanup_free_ char *shown = text_escaped(b.dir);

                fprintf(stderr, "cachectl: %s/CMakeCache.txt: %s (not a CMake build directory?)\n", shown ?: "?",
                        readfile_strerror(r));
                build_done(&b);
                return -1;
        }

        ninja = b.generator && strstr(b.generator, "Ninja");
        r = ninja ? ninja_read(&b) : makefiles_read(&b);
        any_through = check_langs(d, &b, r, ninja);

        ctl_quiet = true;   /* an unreachable daemon is the cache-dir check's to say, once */
        asked = any_through ? ctl_fetch_status(&status) : 0;
        ctl_quiet = false;
        find_cache_dirs(&b, cd);
        check_cache_dirs(d, &b, cd, status, asked);
        check_depend_modes(d, &b, cd, ninja, any_through);

        for (size_t i = 0; i < ELEMENTSOF(cd); i++) {
                free(cd[i].dir);
                for (size_t k = 0; cd[i].env[k]; k++)
                        free(cd[i].env[k]);
        }
        json_object_put(status);
        check_build_files(d, &b.budget);
        build_done(&b);
        return 0;
}
