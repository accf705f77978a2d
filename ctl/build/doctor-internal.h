/* SPDX-License-Identifier: MIT */
/* What the parts of cachectl doctor (build/doctor.h) share, one file by what
 * it reads or does:
 *
 *   doctor.c           the command: its checks collected, printed, as JSON
 *   doctor-dir.c       a CMake build directory's checks, from what the readers below found
 *   doctor-cmake.c     CMakeCache.txt (languages, compilers, launchers, the generator),
 *                      and the model of the build's compile rules the readers fill
 *   doctor-ninja.c     build.ninja and its includes; .ninja_deps
 *   doctor-make.c      a Makefiles generator's build.make files; the compilers' .d files
 *   doctor-shim.c      what a program of a rule is: ccache, a ccache shim, or neither
 *   doctor-cache.c     the cache directory the build uses: ccache's answer, its modes
 *   doctor-compiler.c  doctor --compiler: two compiles through a shim
 *   doctor-run.c       running a program: bounded time and output
 *
 * Every file of the build is read through core/readfile.h within one budget
 * (Build.budget); nothing the build names is run but the compilers and ccache
 * doctor was asked about. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/util.h"
#include "build/doctor.h"
#include "core/readfile.h"

/* A line of a build file longer than this is cut (its rest skipped): the
 * part doctor reads (a rule's command, an edge's rule) comes first. */
#define DOCTOR_LINE_MAX 65536
/* What doctor reads of a build directory in all, every file once
 * (core/readfile.h): a project's generated rules and dependency logs are tens of
 * MiB; a hostile tree (a 1 GiB sparse file included four times) costs a
 * second or so and is said, not read. */
#define DOCTOR_READ_MAX_BYTES (256ULL * 1024 * 1024)
/* At most this many files: build.make files, included .ninja files, .d files. */
#define DOCTOR_FILES_MAX 100000
#define DOCTOR_INCLUDE_DEPTH_MAX 16
/* Objects whose dependency lists are counted for the depend-mode advice. */
#define DOCTOR_DEPS_SAMPLE_MAX 2000
/* A shim script is read this far looking for its exec of ccache. */
#define DOCTOR_SCRIPT_MAX_BYTES 65536
/* How long one program doctor runs may take (a compile through hipcc takes
 * seconds; a shared box under load, many times that). */
#define DOCTOR_RUN_TIMEOUT_USEC (300 * USEC_PER_SEC)
/* What of a program's output is kept for a message. */
#define DOCTOR_OUTPUT_KEEP 4096

typedef enum DoctorLevel {
        DOCTOR_OK,
        DOCTOR_WARN,
        DOCTOR_FAIL,
} DoctorLevel;


typedef struct DoctorCheck {
        char *name, *message, *fix;
        DoctorLevel level;
} DoctorCheck;

typedef struct Doctor {
        DoctorCheck *checks;
        size_t n;
        bool oom;
} Doctor;


/* on_line for doctor_run() (keep_output): keeps the first DOCTOR_OUTPUT_KEEP bytes. */
typedef struct Output {
        char text[DOCTOR_OUTPUT_KEEP];
        size_t len;
} Output;


/* ccache or a ccache shim: does a compile rule whose program is this go
 * through ccache? Remembers its answers (a build names few programs). */
typedef struct Program {
        char *path;
        bool through;
} Program;

typedef struct Programs {
        Program p[64];
        size_t n;
} Programs;


/* One language CMake enabled, from CMakeCache.txt. */
typedef struct Lang {
        char name[32];
        char *compiler, *launcher;
        uint64_t rules, rules_through, deps_objects, deps_total;
        uint64_t rules_no_md;   /* of rules_through: no -MD, so depend mode cannot serve them */
        char *first_missing;   /* the first object whose rule does not go through ccache */
} Lang;

typedef struct Build {
        const char *dir;
        Lang langs[32];
        size_t n_langs;
        char *generator;
        Programs programs;
        /* The compile edges seen (object, language index), for the dependency counts. */
        struct Object {
                char *path;
                size_t lang;
        } *objects;
        size_t n_objects;
        ReadBudget budget;      /* every build file read, once */
} Build;

/* doctor.c */
/* Adds a check; fix may be NULL. Out of memory: d->oom, reported at the end. */
void doctor_add(Doctor *d, const char *name, DoctorLevel level, const char *fix, const char *fmt, ...) _printf_(5, 6);
/* asprintf's result, or NULL. */
char *strdupf(const char *fmt, ...) _printf_(1, 2);

/* doctor-run.c */
/* Runs argv (argv[0] looked up in PATH) in cwd (NULL: here) with the
 * environment plus env ("NAME=VALUE", NULL-terminated, may be NULL), stdin
 * /dev/null, stdout and stderr into a pipe; on_line gets each line of it
 * (cut at DOCTOR_LINE_MAX). Killed (its process group) after
 * DOCTOR_RUN_TIMEOUT_USEC. Returns the wait status, -ETIME on timeout, or
 * -errno. */
int doctor_run(char *const *argv, char *const *env, const char *cwd, void (*on_line)(void *ctx, const char *line),
               void *ctx);
/* on_line for doctor_run(): ctx is an Output. */
void keep_output(void *ctx, const char *line);
/* The first line of o, into buf, for a message. */
const char *first_line(Output *o, char *buf, size_t size);
/* "exit 1", "killed by signal 9", "no answer within 300 s", or the error. */
const char *describe_status(int status, char *buf, size_t size);

/* doctor-shim.c */
/* Is path ccache itself: named so, or a link that resolves to it? */
bool is_ccache(const char *path);
/* Splits a shell-ish line into words in place (quotes dropped, no
 * expansion), at most max; returns how many. */
size_t split_words(char *s, char **words, size_t max);
/* Is the script at path a shim that runs ccache (read through
 * core/readfile.h, at most DOCTOR_SCRIPT_MAX_BYTES)? The compiler it names
 * into *ret_real (may be NULL; the caller frees), its CCACHE_* settings into
 * env (at most max - 1, NULL-terminated). */
bool shim_inspect(const char *path, char **ret_real, char **env, size_t max);
/* Does the compile command go through ccache (past "cd DIR &&", env,
 * NAME=VALUE and CMake's __run_co_compile)? ps remembers each program's answer. */
bool command_through_ccache(Programs *ps, const char *command);
void programs_done(Programs *ps);

/* doctor-cmake.c */
/* The language named name (len bytes) of b, added when create; NULL if
 * none, or no room, or not a name CMake gives a language. */
Lang *lang_get(Build *b, const char *name, size_t len, bool create);
/* Does ccache cache what this language's compiler does? */
bool lang_cacheable(const char *name);
/* CMakeCache.txt: the compilers, their launchers, the generator. 0 or -errno. */
int read_cmake_cache(Build *b);
/* The launcher's program (caller frees) and its CCACHE_* settings into env;
 * NULL if none. */
char *launcher_parse(const char *launcher, char **env, size_t max);
/* One compile rule of lang for object, as a reader found it. */
void count_rule(Build *b, Lang *lang, const char *command, const char *object);
/* n dependencies of the object at path counted for its language. */
void count_deps(Build *b, const char *path, uint64_t n);
/* The dependency lists of the objects counted (from .ninja_deps if ninja, else .d files). */
void read_deps(Build *b, bool ninja);
void build_done(Build *b);

/* doctor-ninja.c */
/* build.ninja and what it includes: its compile rules counted. 0 or -errno. */
int ninja_read(Build *b);
/* .ninja_deps: the dependency counts of b's objects (sorted). */
void ninja_read_deps(Build *b);

/* doctor-make.c */
/* Every CMakeFiles/<target>.dir/build.make: its compile rules counted. 0 or -errno. */
int makefiles_read(Build *b);
/* The .d file of each of b's objects: their dependency counts. */
void make_read_deps(Build *b);

/* doctor-cache.c */
/* `ccache -k KEY` with the environment plus env (caller frees), or NULL. */
char *ccache_get(const char *key, char **env);
/* The cache-dir and cache-writable checks for dir (suffix: "" or "-<LANG>"
 * when languages use different directories), against the daemon's status
 * (NULL: asked is why not). */
void check_cache_dir(Doctor *d, const char *dir, const char *suffix, json_object *status, int asked);

/* doctor-dir.c */
/* Every check of the CMake build directory dir. 0, or -errno when dir is no build directory. */
int doctor_build(Doctor *d, const char *dir);

/* doctor-compiler.c */
/* doctor --compiler: the shim, the real compiler, two compiles of source
 * (NULL: a test source of its own) with args through it. 0 or -errno. */
int doctor_compiler(Doctor *d, const char *compiler_arg, const char *source, char **args, size_t n_args);
