/* SPDX-License-Identifier: MIT */
/* cachectl doctor (doctor.h): reads a CMake build directory's cache and
 * generated rules, or compiles through a compiler shim, and says per check
 * ok, warn or fail with the one line that fixes it. Every file it reads is
 * the build's, so every read is bounded (line length, file size, file
 * count) and opened without blocking on a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/human.h"
#include "base/protocol.h"
#include "base/status-keys.h"
#include "base/text.h"
#include "build/doctor.h"
#include "build/statslog.h"
#include "core/client.h"
#include "core/readfile.h"

/* A line of a build file longer than this is cut (its rest skipped): the
 * part doctor reads (a rule's command, an edge's rule) comes first. */
#define DOCTOR_LINE_MAX 65536
/* What doctor reads of a build directory in all, every file once
 * (readfile.h): a project's generated rules and dependency logs are tens of
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

static const char *const level_names[] = { "ok", "warn", "fail" };

typedef struct DoctorCheck {
        char *name, *message, *fix;
        DoctorLevel level;
} DoctorCheck;

typedef struct Doctor {
        DoctorCheck *checks;
        size_t n;
        bool oom;
} Doctor;

/* Adds a check; fix may be NULL. Out of memory: d->oom, reported at the end. */
_printf_(5, 6)
static void add(Doctor *d, const char *name, DoctorLevel level, const char *fix, const char *fmt, ...) {
        DoctorCheck *c;
        va_list ap;
        char *msg;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        c = realloc(d->checks, (d->n + 1) * sizeof(*c));
        if (r < 0 || !c) {
                if (r >= 0)
                        free(msg);
                d->oom = true;
                return;
        }
        d->checks = c;
        c[d->n] = (DoctorCheck) { .name = strdup(name), .message = msg, .fix = fix ? strdup(fix) : NULL, .level = level };
        if (!c[d->n].name || (fix && !c[d->n].fix))
                d->oom = true;
        d->n++;
}

static void doctor_done(Doctor *d) {
        for (size_t i = 0; i < d->n; i++) {
                free(d->checks[i].name);
                free(d->checks[i].message);
                free(d->checks[i].fix);
        }
        free(d->checks);
        *d = (Doctor) { 0 };
}

static char *strdupf(const char *fmt, ...) _printf_(1, 2);
static char *strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

static const char *base_name(const char *path) {
        const char *s = strrchr(path, '/');

        return s ? s + 1 : path;
}

/* Runs argv (argv[0] looked up in PATH) in cwd (NULL: here) with the
 * environment plus env ("NAME=VALUE", NULL-terminated, may be NULL), stdin
 * /dev/null, stdout and stderr into a pipe; on_line gets each line of it
 * (cut at DOCTOR_LINE_MAX). Killed (its process group) after
 * DOCTOR_RUN_TIMEOUT_USEC. Returns the wait status, -ETIME on timeout, or
 * -errno. */
static int run(char *const *argv, char *const *env, const char *cwd, void (*on_line)(void *ctx, const char *line),
               void *ctx) {
        _cleanup_free_ char *buf = malloc(DOCTOR_LINE_MAX);
        struct timespec ts;
        usec_t deadline;
        size_t len = 0;
        bool cut = false, timed_out = false;
        int p[2], status;
        pid_t pid;

        if (!buf)
                return -ENOMEM;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                setpgid(0, 0);
                signal(SIGPIPE, SIG_DFL);       /* cachectl ignores it; the program should not */
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(p[1], STDOUT_FILENO) < 0 ||
                    dup2(p[1], STDERR_FILENO) < 0)
                        _exit(127);
                for (size_t i = 0; env && env[i]; i++)
                        if (putenv(env[i]) != 0)
                                _exit(127);
                if (cwd && chdir(cwd) < 0) {
                        fprintf(stderr, "cannot enter %s: %m\n", cwd);
                        _exit(127);
                }
                execvp(argv[0], argv);
                fprintf(stderr, "cannot run %s: %m\n", argv[0]);
                _exit(127);
        }
        setpgid(pid, pid);
        close(p[1]);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        deadline = (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / 1000 + DOCTOR_RUN_TIMEOUT_USEC;
        for (;;) {
                struct pollfd pfd = { .fd = p[0], .events = POLLIN };
                char chunk[4096];
                ssize_t n;
                usec_t now;
                int r;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                now = (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / 1000;
                if (now >= deadline) {
                        timed_out = true;
                        kill(-pid, SIGKILL);
                        break;
                }
                r = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r == 0)
                        continue;
                n = read(p[0], chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                for (ssize_t i = 0; i < n; i++) {
                        if (chunk[i] == '\n') {
                                buf[len] = '\0';
                                if (on_line)
                                        on_line(ctx, buf);
                                len = 0;
                                cut = false;
                        } else if (len < DOCTOR_LINE_MAX - 1)
                                buf[len++] = chunk[i];
                        else
                                cut = true;
                }
        }
        (void) cut;
        if (len > 0 && on_line && !timed_out) {
                buf[len] = '\0';
                on_line(ctx, buf);
        }
        close(p[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return timed_out ? -ETIME : status;
}

/* on_line for run(): keeps the first DOCTOR_OUTPUT_KEEP bytes. */
typedef struct Output {
        char text[DOCTOR_OUTPUT_KEEP];
        size_t len;
} Output;

static void keep_output(void *ctx, const char *line) {
        Output *o = ctx;
        int n = snprintf(o->text + o->len, sizeof(o->text) - o->len, "%s\n", line);

        if (n > 0)
                o->len = o->len + (size_t) n < sizeof(o->text) ? o->len + (size_t) n : sizeof(o->text) - 1;
}

/* The first line of o, for a message. */
static const char *first_line(Output *o, char *buf, size_t size) {
        size_t n = strcspn(o->text, "\n");

        snprintf(buf, size, "%.*s", (int) n, o->text);
        return buf;
}

/* "exit 1", "killed by signal 9", "no answer within 300 s", or the error. */
static const char *describe_status(int status, char *buf, size_t size) {
        if (status == -ETIME)
                snprintf(buf, size, "no answer within %llu s", (unsigned long long) (DOCTOR_RUN_TIMEOUT_USEC / USEC_PER_SEC));
        else if (status < 0)
                snprintf(buf, size, "%s", strerror(-status));
        else if (WIFEXITED(status))
                snprintf(buf, size, "exit %d", WEXITSTATUS(status));
        else
                snprintf(buf, size, "killed by signal %d", WTERMSIG(status));
        return buf;
}

/* Is path ccache itself: named so, or a link that resolves to it? */
static bool is_ccache(const char *path) {
        _cleanup_free_ char *real = NULL;

        if (strcmp(base_name(path), "ccache") == 0)
                return true;
        if (!strchr(path, '/'))
                return false;
        real = realpath(path, NULL);
        return real && strcmp(base_name(real), "ccache") == 0;
}

/* Splits a shell-ish line into words (quotes dropped, no expansion) in
 * place; at most max. Returns how many. */
static size_t split_words(char *s, char **words, size_t max) {
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
                if (pass == 0 && i < n && strcmp(base_name(w[i]), "env") == 0)
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
static bool shim_inspect(const char *path, char **ret_real, char **env, size_t max) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        if (ret_real)
                *ret_real = NULL;
        if (is_ccache(path))
                return strcmp(base_name(path), "ccache") != 0;
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
                if (i >= nw || strcmp(base_name(w[i]), "ccache") != 0)
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

static void programs_done(Programs *ps) {
        for (size_t i = 0; i < ps->n; i++)
                free(ps->p[i].path);
        ps->n = 0;
}

/* Does the compile command go through ccache? Past "cd DIR &&", env and
 * NAME=VALUE words, CMake's "cmake -E __run_co_compile" (its --launcher=,
 * else what follows "--"), the program is ccache or a ccache shim. */
static bool command_through_ccache(Programs *ps, const char *command) {
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

/* A language's name as CMake spells them: C, CXX, HIP, Fortran. */
static bool lang_name_ok(const char *name, size_t len) {
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", name[i]) || !name[i])
                        return false;
        return true;
}

static Lang *lang_get(Build *b, const char *name, size_t len, bool create) {
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

static void build_done(Build *b) {
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
static bool lang_cacheable(const char *name) {
        static const char *const names[] = { "C", "CXX", "OBJC", "OBJCXX", "CUDA", "HIP", "ASM" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

/* CMakeCache.txt: "NAME:TYPE=VALUE" lines; the compilers, their launchers,
 * the generator. Returns 0 or -errno. */
static int read_cmake_cache(Build *b) {
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
static char *launcher_parse(const char *launcher, char **env, size_t max) {
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
        if (i < n && strcmp(base_name(w[i]), "env") == 0)
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

static void count_rule(Build *b, Lang *lang, const char *command, const char *object) {
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

/* build.ninja: the compile rules ("rule <LANG>_COMPILER__<target>_<config>")
 * and the edges that use them; "include" and "subninja" followed. */
typedef struct NinjaRule {
        char *name, *command;
        size_t lang;
} NinjaRule;

typedef struct Ninja {
        NinjaRule *rules;
        size_t n_rules;
} Ninja;

/* Substitutes $LAUNCHER and $CODE_CHECK (set per edge by newer CMake). */
static char *ninja_command(const char *command, const char *launcher, const char *code_check) {
        size_t n = strlen(command) + strlen(launcher) + strlen(code_check) + 1;
        char *s = malloc(n), *o = s;

        if (!s)
                return NULL;
        for (const char *p = command; *p;) {
                if (strncmp(p, "$LAUNCHER", 9) == 0) {
                        o = stpcpy(o, launcher);
                        p += 9;
                } else if (strncmp(p, "$CODE_CHECK", 11) == 0) {
                        o = stpcpy(o, code_check);
                        p += 11;
                } else
                        *o++ = *p++;
        }
        *o = '\0';
        return s;
}

static void ninja_edge_done(Build *b, Ninja *nj, char **edge_obj, NinjaRule **edge_rule, char **launcher,
                            char **code_check) {
        if (*edge_obj && *edge_rule) {
                _cleanup_free_ char *cmd = ninja_command((*edge_rule)->command, *launcher ? *launcher : "",
                                                         *code_check ? *code_check : "");

                if (cmd)
                        count_rule(b, &b->langs[(*edge_rule)->lang], cmd, *edge_obj);
        }
        (void) nj;
        free(*edge_obj);
        free(*launcher);
        free(*code_check);
        *edge_obj = *launcher = *code_check = NULL;
        *edge_rule = NULL;
}

static int ninja_read(Build *b, Ninja *nj, const char *path, unsigned depth) {
        _cleanup_free_ char *edge_obj = NULL, *launcher = NULL, *code_check = NULL;
        NinjaRule *edge_rule = NULL, *rule = NULL;
        ReadFile l;
        char *line;
        int r;

        if (depth > DOCTOR_INCLUDE_DEPTH_MAX)
                return 0;
        r = readfile_begin(&l, &b->budget, path, UINT64_MAX);
        if (r == -EALREADY)
                return 0;       /* included again: its rules are known */
        if (r < 0)
                return r;
        while ((line = readfile_line(&l, DOCTOR_LINE_MAX, NULL))) {
                if (line[0] == ' ') {
                        char *s = line + strspn(line, " ");

                        if (rule && strncmp(s, "command = ", 10) == 0 && !rule->command)
                                rule->command = strdup(s + 10);
                        else if (edge_obj && strncmp(s, "LAUNCHER = ", 11) == 0 && !launcher)
                                launcher = strdup(s + 11);
                        else if (edge_obj && strncmp(s, "CODE_CHECK = ", 13) == 0 && !code_check)
                                code_check = strdup(s + 13);
                        continue;
                }
                ninja_edge_done(b, nj, &edge_obj, &edge_rule, &launcher, &code_check);
                rule = NULL;
                if (strncmp(line, "rule ", 5) == 0) {
                        const char *name = line + 5, *c = strstr(name, "_COMPILER__");
                        NinjaRule *rs;
                        Lang *lang;

                        if (!c || !(lang = lang_get(b, name, (size_t) (c - name), false)))
                                continue;
                        rs = realloc(nj->rules, (nj->n_rules + 1) * sizeof(*rs));
                        if (!rs)
                                continue;
                        nj->rules = rs;
                        rs[nj->n_rules] = (NinjaRule) { .name = strdup(name), .lang = (size_t) (lang - b->langs) };
                        if (!rs[nj->n_rules].name)
                                continue;
                        rule = &rs[nj->n_rules++];
                } else if (strncmp(line, "build ", 6) == 0) {
                        char *colon = strstr(line + 6, ": "), *rname, *end;

                        if (!colon)
                                continue;
                        rname = colon + 2;
                        end = rname + strcspn(rname, " ");
                        *end = '\0';
                        *colon = '\0';
                        if (!strstr(rname, "_COMPILER__"))
                                continue;
                        for (size_t i = nj->n_rules; i > 0; i--)
                                if (strcmp(nj->rules[i - 1].name, rname) == 0 && nj->rules[i - 1].command) {
                                        edge_rule = &nj->rules[i - 1];
                                        break;
                                }
                        if (edge_rule) {
                                char *obj = line + 6;

                                obj[strcspn(obj, " |")] = '\0';
                                edge_obj = strdup(obj);
                        }
                } else if (strncmp(line, "include ", 8) == 0 || strncmp(line, "subninja ", 9) == 0) {
                        _cleanup_free_ char *inc = strdup(line + (line[0] == 'i' ? 8 : 9));

                        if (inc && !strchr(inc, '$'))
                                ninja_read(b, nj, inc, depth + 1);
                }
        }
        ninja_edge_done(b, nj, &edge_obj, &edge_rule, &launcher, &code_check);
        readfile_end(&l);
        return 0;
}

/* A Makefiles generator's CMakeFiles/<target>.dir/build.make: after the
 * line echoing "Building <LANG> object <object>", the compile command. */
static void make_read(Build *b, const char *path) {
        _cleanup_free_ char *object = NULL;
        Lang *lang = NULL;
        ReadFile l;
        char *line;

        if (readfile_begin(&l, &b->budget, path, UINT64_MAX) < 0)
                return;
        while ((line = readfile_line(&l, DOCTOR_LINE_MAX, NULL))) {
                const char *s = strstr(line, "\"Building "), *o;

                if (line[0] != '\t')
                        continue;
                if (s && (o = strstr(s + 10, " object "))) {
                        size_t n = strcspn(o + 8, "\"");

                        lang = lang_get(b, s + 10, (size_t) (o - s - 10), false);
                        free(object);
                        object = strndup(o + 8, n);
                        continue;
                }
                if (lang && object && line[1] != '@') {
                        count_rule(b, lang, line + 1, object);
                        lang = NULL;
                }
        }
        readfile_end(&l);
}

static int makefiles_read(Build *b) {
        ReadFile l;
        char *line;
        int r;

        r = readfile_begin(&l, &b->budget, "CMakeFiles/TargetDirectories.txt", UINT64_MAX);
        if (r < 0)
                return r;
        while ((line = readfile_line(&l, DOCTOR_LINE_MAX, NULL))) {
                _cleanup_free_ char *p = strdupf("%s/build.make", line);

                if (p && line[0])
                        make_read(b, p);
        }
        readfile_end(&l);
        return 0;
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
static void count_deps(Build *b, const char *path, uint64_t n) {
        struct Object *o = object_find(b, path);

        if (!o || b->langs[o->lang].deps_objects >= DOCTOR_DEPS_SAMPLE_MAX)
                return;
        b->langs[o->lang].deps_objects++;
        b->langs[o->lang].deps_total += n;
}

/* ninja's log of the compilers' dependency lists, .ninja_deps (ninja's
 * src/deps_log.cc, versions 3 and 4): "# ninjadeps\n", a version, then
 * records of a 32-bit size whose top bit says deps: a path record is the
 * path, NUL-padded, and its id's complement (ids count up from 0); a deps
 * record the output's id, its mtime (4 bytes in version 3, 8 in 4) and one
 * id per dependency. A later record of an output replaces the earlier. Read
 * without running ninja: the build directory's ninja is not ours to run. */
static void read_ninja_deps(Build *b) {
        static const char signature[] = "# ninjadeps\n";
        _cleanup_free_ char *data = NULL;
        _cleanup_free_ uint32_t *counts = NULL;
        _cleanup_free_ const char **paths = NULL;
        size_t len = 0, n_ids = 0, cap = 0, mtime_size;
        uint32_t version;

        if (readfile_all(&b->budget, ".ninja_deps", UINT64_MAX, &data, &len) < 0)
                return;
        if (len < sizeof(signature) - 1 + 4 || memcmp(data, signature, sizeof(signature) - 1) != 0)
                return;
        memcpy(&version, data + sizeof(signature) - 1, 4);
        if (version != 3 && version != 4)
                return;
        mtime_size = version == 4 ? 8 : 4;
        for (size_t p = sizeof(signature) - 1 + 4; p + 4 <= len;) {
                uint32_t size;
                bool deps;

                memcpy(&size, data + p, 4);
                deps = size >> 31;
                size &= 0x7fffffff;
                p += 4;
                if (size > len - p || size % 4 != 0)
                        break;          /* cut short, or not ninja's */
                if (deps && size >= 4 + mtime_size) {
                        int32_t out;

                        memcpy(&out, data + p, 4);
                        if (out >= 0 && (size_t) out < n_ids)
                                counts[out] = (size - 4 - (uint32_t) mtime_size) / 4;
                } else if (!deps && size >= 4) {
                        size_t plen = size - 4;

                        if (n_ids == cap) {
                                size_t ncap = cap ? cap * 2 : 1024;
                                const char **np = realloc(paths, ncap * sizeof(*np));
                                uint32_t *nc;

                                if (!np)
                                        break;
                                paths = np;
                                nc = realloc(counts, ncap * sizeof(*nc));
                                if (!nc)
                                        break;
                                counts = nc;
                                cap = ncap;
                        }
                        while (plen > 0 && data[p + plen - 1] == '\0')
                                plen--;
                        data[p + plen] = '\0';         /* over the padding or the checksum's first byte */
                        paths[n_ids] = data + p;
                        counts[n_ids++] = UINT32_MAX;   /* no deps record yet */
                }
                p += size;
        }
        for (size_t i = 0; i < n_ids; i++)
                if (counts[i] != UINT32_MAX)
                        count_deps(b, paths[i], counts[i]);
}

static void read_deps(Build *b, bool ninja) {
        if (b->n_objects == 0)
                return;         /* nothing of ccache's, or the rules unread: nothing to ask ninja */
        qsort(b->objects, b->n_objects, sizeof(*b->objects), object_cmp);
        if (ninja) {
                read_ninja_deps(b);
                return;
        }
        for (size_t i = 0; i < b->n_objects; i++) {
                Lang *lang = &b->langs[b->objects[i].lang];
                _cleanup_free_ char *p = strdupf("%s.d", b->objects[i].path);
                uint64_t deps = 0;
                bool first = true, more = true;
                ReadFile l;
                char *line;

                if (lang->deps_objects >= DOCTOR_DEPS_SAMPLE_MAX || !p || readfile_begin(&l, &b->budget, p, UINT64_MAX) < 0)
                        continue;
                /* The first rule: "OBJECT: DEP DEP \" and its continuation lines. */
                while (more && (line = readfile_line(&l, DOCTOR_LINE_MAX, NULL))) {
                        char *s = line, *w[1024];
                        size_t n;

                        if (first) {
                                s = strstr(line, ": ");
                                if (!s)
                                        break;
                                s += 2;
                                first = false;
                        }
                        n = strlen(s);
                        more = n > 0 && s[n - 1] == '\\';
                        n = split_words(s, w, ELEMENTSOF(w));
                        for (size_t k = 0; k < n; k++)
                                deps += strcmp(w[k], "\\") != 0;
                }
                readfile_end(&l);
                if (!first) {
                        lang->deps_objects++;
                        lang->deps_total += deps;
                }
        }
}

/* `ccache -k KEY` with the environment plus env: what ccache will use. */
static char *ccache_get(const char *key, char **env) {
        char *argv[] = { (char *) "ccache", (char *) "-k", (char *) key, NULL };
        Output out = { 0 };
        int status = run(argv, env, NULL, keep_output, &out);

        if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return NULL;
        out.text[strcspn(out.text, "\n")] = '\0';
        return strdup(out.text);
}

/* Counts, of dir and the ccache directories in it that exist (tmp, lock,
 * the 16 L1 and 256 L2 ones), those this user cannot write. */
static unsigned unwritable(const char *dir, unsigned *ret_checked, char *first, size_t size) {
        static const char hex[] = "0123456789abcdef";
        unsigned bad = 0, checked = 0;
        char p[PATH_MAX];

        first[0] = '\0';
        for (int i = -3; i < 16; i++)
                for (int j = -1; j < (i >= 0 ? 16 : 0); j++) {
                        struct stat st;

                        if (i == -3)
                                snprintf(p, sizeof(p), "%s", dir);
                        else if (i < 0)
                                snprintf(p, sizeof(p), "%s/%s", dir, i == -2 ? "tmp" : "lock");
                        else if (j < 0)
                                snprintf(p, sizeof(p), "%s/%c", dir, hex[i]);
                        else
                                snprintf(p, sizeof(p), "%s/%c/%c", dir, hex[i], hex[j]);
                        if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
                                continue;
                        checked++;
                        if (access(p, W_OK | X_OK) == 0)
                                continue;
                        if (bad++ == 0)
                                snprintf(first, size, "%s", p);
                }
        *ret_checked = checked;
        return bad;
}

/* The cache-dir and cache-writable checks for dir (name_suffix: "" or
 * "-<LANG>" when languages use different directories). */
static void check_cache_dir(Doctor *d, const char *dir, const char *suffix, json_object *status, int asked) {
        _cleanup_free_ char *real = realpath(dir, NULL);
        char name[64], first[PATH_MAX];
        unsigned bad, checked;
        const char *kept_name = NULL, *kept_mode = NULL;
        size_t n = protocol_field_count(status, STATUS_CACHES);

        snprintf(name, sizeof(name), "cache-dir%s", suffix);
        for (size_t i = 0; asked > 0 && i < n; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);
                _cleanup_free_ char *rp = path ? realpath(path, NULL) : NULL;

                if (path && (strcmp(path, dir) == 0 || (real && rp && strcmp(real, rp) == 0))) {
                        kept_name = protocol_field_str(c, STATUS_CACHE_NAME);
                        kept_mode = protocol_field_str(c, STATUS_CACHE_MODE);
                        break;
                }
        }
        if (asked <= 0)
                add(d, name, DOCTOR_WARN, NULL, "CCACHE_DIR %s: could not ask cachekeeperd whether it keeps it (%s)",
                    dir, ctl_problem[0] ? ctl_problem : "no answer");
        else if (kept_name)
                add(d, name, DOCTOR_OK, NULL, "CCACHE_DIR %s is cache '%s' of cachekeeperd (mode %s)", dir, kept_name,
                    kept_mode ? kept_mode : "?");
        else if (n == 0)
                add(d, name, DOCTOR_FAIL, NULL, "CCACHE_DIR %s is not kept by cachekeeperd (it keeps no cache)", dir);
        else {
                char list[1024] = "";
                size_t len = 0;
                _cleanup_free_ char *fix = NULL;

                for (size_t i = 0; i < n && len < sizeof(list); i++) {
                        const char *p = protocol_field_str(protocol_field_item(status, STATUS_CACHES, i),
                                                           STATUS_CACHE_PATH);
                        int k = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", p ? p : "?");

                        if (k > 0)
                                len += (size_t) k;
                }
                fix = strdupf("export CCACHE_DIR=%s", protocol_field_str(protocol_field_item(status, STATUS_CACHES, 0),
                                                                         STATUS_CACHE_PATH) ?: "?");
                add(d, name, DOCTOR_FAIL, fix, "CCACHE_DIR %s is not a cache cachekeeperd keeps (it keeps %s)", dir,
                    list);
        }

        snprintf(name, sizeof(name), "cache-writable%s", suffix);
        if (!real) {
                _cleanup_free_ char *fix = strdupf("mkdir -p %s", dir);

                add(d, name, DOCTOR_FAIL, fix, "CCACHE_DIR %s does not exist (%s)", dir, strerror(errno));
                return;
        }
        bad = unwritable(real, &checked, first, sizeof(first));
        if (bad == 0)
                add(d, name, DOCTOR_OK, NULL, "you can write %s (%u of its directories checked)", real, checked);
        else {
                _cleanup_free_ char *fix = kept_name ? strdupf("ask root to restore the modes: sudo chmod -R a+rwX %s "
                                                               "(cachekeeperd keeps %s at mode %s)",
                                                               real, real, kept_mode ? kept_mode : "?")
                                                     : strdupf("sudo chmod -R a+rwX %s", real);

                add(d, name, DOCTOR_FAIL, fix, "you cannot write %u of %u directories of %s (first: %s): "
                    "every miss fails or stores nothing", bad, checked, real, first);
        }
}

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
        add(d, name, depend_on ? DOCTOR_WARN : DOCTOR_OK, fix, "%s%" PRIu64 " of %" PRIu64 " %s rules compile without "
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
                add(d, "rules-ASM", DOCTOR_OK, NULL, "no ASM compile rule in the generated rules");
        else if (lang->rules == lang->rules_through)
                add(d, "rules-ASM", DOCTOR_OK, NULL, "%" PRIu64 " of %" PRIu64 " ASM compile rules go through ccache",
                    lang->rules_through, lang->rules);
        else {
                /* ccache skips a second ccache: the rules of languages that
                 * have a launcher too stay as they are */
                fix = strdupf("echo 'set_property(GLOBAL PROPERTY RULE_LAUNCH_COMPILE ccache)' > %s/ccache-launch.cmake && "
                              "cmake -DCMAKE_PROJECT_INCLUDE=%s/ccache-launch.cmake %s", b->dir, b->dir, b->dir);
                add(d, "rules-ASM", DOCTOR_WARN, fix, "%" PRIu64 " of %" PRIu64 " ASM rules have no launcher: CMake has "
                    "no CMAKE_ASM_COMPILER_LAUNCHER (launchers are for C, CXX, CUDA, HIP, OBJC, OBJCXX, Fortran, "
                    "ISPC), so they compile without ccache (first: %s)", lang->rules - lang->rules_through, lang->rules,
                    lang->first_missing ? lang->first_missing : "?");
        }
}

/* What of the build directory was not read: files that are no regular
 * file (never opened), and what the budget left. */
static void check_build_files(Doctor *d, const ReadBudget *rb) {
        if (rb->not_regular > 0)
                add(d, "build-files", DOCTOR_WARN, NULL, "%" PRIu64 " file%s the build names %s not a regular file, "
                    "not opened (first: %s)", rb->not_regular, rb->not_regular == 1 ? "" : "s",
                    rb->not_regular == 1 ? "is" : "are", rb->first_not_regular ?: "?");
        if (readfile_budget_reached(rb))
                add(d, "read-budget", DOCTOR_WARN, NULL, "the read budget was reached (%llu MiB, %d files in all): "
                    "%" PRIu64 " file%s not read or read in part (first: %s); the checks above count what was read",
                    DOCTOR_READ_MAX_BYTES >> 20, DOCTOR_FILES_MAX, rb->files_unread, rb->files_unread == 1 ? "" : "s",
                    rb->first_unread ?: "?");
}

static int doctor_build(Doctor *d, const char *dir) {
        _cleanup_free_ char *abs = NULL;
        json_object *status = NULL;
        Build b = { .dir = dir };
        Ninja nj = { 0 };
        bool ninja, any_through = false;
        int r, asked;
        struct {
                char *dir;
                char *env[16];
                bool set;
        } cd[ELEMENTSOF(b.langs)] = {};
        size_t n_cacheable = 0;

        readfile_budget_init(&b.budget, DOCTOR_READ_MAX_BYTES, DOCTOR_FILES_MAX, true);
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
        abs = getcwd(NULL, 0);
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
        if (ninja)
                r = ninja_read(&b, &nj, "build.ninja", 0);
        else
                r = makefiles_read(&b);
        for (size_t i = 0; i < nj.n_rules; i++) {
                free(nj.rules[i].name);
                free(nj.rules[i].command);
        }
        free(nj.rules);

        for (size_t i = 0; i < b.n_langs; i++) {
                Lang *lang = &b.langs[i];
                _cleanup_free_ char *launcher = NULL, *fix = NULL, *real = NULL;
                char name[64];
                bool shim;

                if (!lang->compiler)
                        continue;
                snprintf(name, sizeof(name), "rules-%s", lang->name);
                if (!lang_cacheable(lang->name)) {
                        if (lang->rules > 0)    /* counted too, to account for every rule */
                                add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " %s compile rules: ccache does not cache %s",
                                    lang->rules, lang->name, lang->name);
                        continue;
                }
                n_cacheable++;
                if (strcmp(lang->name, "ASM") == 0 && r >= 0) {
                        check_asm_rules(d, &b, lang);
                        any_through |= lang->rules_through > 0;
                        continue;
                }
                launcher = launcher_parse(lang->launcher, NULL, 0);
                shim = shim_inspect(lang->compiler, &real, NULL, 0);
                fix = strdupf("cmake -DCMAKE_%s_COMPILER_LAUNCHER=ccache %s", lang->name, b.dir);
                snprintf(name, sizeof(name), "launcher-%s", lang->name);
                if (launcher && is_ccache(launcher))
                        add(d, name, DOCTOR_OK, NULL, "CMAKE_%s_COMPILER_LAUNCHER is ccache (%s)", lang->name,
                            lang->launcher);
                else if (shim)
                        add(d, name, DOCTOR_OK, NULL, "CMAKE_%s_COMPILER %s is a ccache shim", lang->name,
                            lang->compiler);
                else if (launcher)
                        add(d, name, DOCTOR_FAIL, fix, "CMAKE_%s_COMPILER_LAUNCHER is %s, not ccache", lang->name,
                            lang->launcher);
                else if (lang->rules > 0 && lang->rules == lang->rules_through)
                        add(d, name, DOCTOR_OK, NULL, "no CMAKE_%s_COMPILER_LAUNCHER in the cache, but the project "
                            "sets one: every %s rule goes through ccache", lang->name, lang->name);
                else
                        add(d, name, DOCTOR_FAIL, fix, "%s (CMAKE_%s_COMPILER %s) has no ccache launcher and its "
                            "compiler is not a ccache shim", lang->name, lang->name, lang->compiler);

                snprintf(name, sizeof(name), "rules-%s", lang->name);   /* the launcher check had it */
                if (r < 0)
                        add(d, name, DOCTOR_WARN, NULL, "could not read the generated rules (%s, generator %s): %s",
                            ninja ? "build.ninja" : "CMakeFiles/TargetDirectories.txt",
                            b.generator ? b.generator : "unknown", readfile_strerror(r));
                else if (lang->rules == 0)
                        add(d, name, DOCTOR_OK, NULL, "no %s compile rule in the generated %s", lang->name,
                            ninja ? "build.ninja" : "Makefiles");
                else if (lang->rules == lang->rules_through)
                        add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " of %" PRIu64 " %s compile rules go through ccache",
                            lang->rules_through, lang->rules, lang->name);
                else
                        add(d, name, DOCTOR_FAIL, fix, "%" PRIu64 " of %" PRIu64 " %s compile rules do not go through "
                            "ccache (first: %s)", lang->rules - lang->rules_through, lang->rules, lang->name,
                            lang->first_missing ? lang->first_missing : "?");
                any_through |= lang->rules_through > 0 || (launcher && is_ccache(launcher)) || shim;
        }
        if (n_cacheable == 0)
                add(d, "languages", DOCTOR_WARN, NULL, "CMakeCache.txt enables no language ccache caches "
                    "(C, CXX, OBJC, OBJCXX, CUDA, HIP, ASM)");

        /* Where the rules' ccache will put things: the launcher's CCACHE_DIR=,
         * else the environment's, else ccache's configuration. */
        ctl_quiet = true;   /* an unreachable daemon is the cache-dir check's to say, once */
        asked = any_through ? ctl_fetch_status(&status) : 0;
        ctl_quiet = false;
        for (size_t i = 0; i < b.n_langs; i++) {
                Lang *lang = &b.langs[i];
                _cleanup_free_ char *program = NULL;

                if (!lang->compiler || !lang_cacheable(lang->name) ||
                    !(lang->rules_through > 0 || (lang->launcher && (program = launcher_parse(lang->launcher, NULL, 0)) &&
                                                  is_ccache(program)) || shim_inspect(lang->compiler, NULL, NULL, 0)))
                        continue;
                free(launcher_parse(lang->launcher, cd[i].env, ELEMENTSOF(cd[i].env)));
                cd[i].dir = ccache_get("cache_dir", cd[i].env);
                cd[i].set = true;
        }
        {
                bool same = true;
                const char *dir0 = NULL;

                for (size_t i = 0; i < b.n_langs; i++)
                        if (cd[i].set) {
                                if (!dir0)
                                        dir0 = cd[i].dir ? cd[i].dir : "";
                                else if (strcmp(dir0, cd[i].dir ? cd[i].dir : "") != 0)
                                        same = false;
                        }
                for (size_t i = 0; i < b.n_langs; i++) {
                        char suffix[40] = "";

                        if (!cd[i].set)
                                continue;
                        if (!same)
                                snprintf(suffix, sizeof(suffix), "-%s", b.langs[i].name);
                        if (!cd[i].dir)
                                add(d, same ? "cache-dir" : suffix + 1, DOCTOR_WARN, NULL,
                                    "could not ask ccache for its cache_dir (ccache -k cache_dir failed)");
                        else
                                check_cache_dir(d, cd[i].dir, suffix, status, asked);
                        if (same)
                                break;
                }
        }

        /* Depend mode: pays where a miss is mostly the preprocessor reading
         * headers. Counted on the objects already built. */
        read_deps(&b, ninja);
        {
                bool any = false;

                for (size_t i = 0; i < b.n_langs; i++) {
                        Lang *lang = &b.langs[i];
                        _cleanup_free_ char *mode = NULL, *fix = NULL;
                        uint64_t mean;
                        char name[64];

                        if (!cd[i].set || (lang->deps_objects == 0 && lang->rules_no_md == 0))
                                continue;
                        any = true;
                        mode = ccache_get("depend_mode", cd[i].env);
                        if (lang->rules_no_md > 0) {
                                check_no_depfile(d, &b, lang, mode && strcmp(mode, "true") == 0, ninja);
                                continue;
                        }
                        mean = lang->deps_total / lang->deps_objects;
                        snprintf(name, sizeof(name), "depend-%s", lang->name);
                        if (mode && strcmp(mode, "true") == 0)
                                add(d, name, DOCTOR_OK, NULL, "depend mode is on (%" PRIu64 " files per %s object)",
                                    mean, lang->name);
                        else if (mean < DOCTOR_HEAVY_DEPS)
                                add(d, name, DOCTOR_OK, NULL, "%" PRIu64 " files per %s object (of %" PRIu64 " built): "
                                    "light headers, depend mode would not pay", mean, lang->name, lang->deps_objects);
                        else {
                                /* The launcher with CCACHE_DEPEND=true after its env (kept). */
                                const char *l = lang->launcher, *rest = l && strncmp(l, "env;", 4) == 0 ? l + 4 : l;

                                if (l && *l)
                                        fix = strdupf("cmake -DCMAKE_%s_COMPILER_LAUNCHER=\"env;CCACHE_DEPEND=true;%s\" %s",
                                                      lang->name, rest, b.dir);
                                else
                                        fix = strdupf("export CCACHE_DEPEND=true (in the environment of the build)");
                                add(d, name, DOCTOR_WARN, fix, "%" PRIu64 " files per %s object (of %" PRIu64 " built, "
                                    "%d or more is heavy): depend mode would skip the preprocessor on every miss",
                                    mean, lang->name, lang->deps_objects, DOCTOR_HEAVY_DEPS);
                        }
                }
                if (!any && any_through)
                        add(d, "depend-mode", DOCTOR_OK, NULL, "no dependency information: nothing built yet"
                            "; build once, then ask again whether depend mode would pay");
        }

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

/* One compile of src into obj through the compiler (with "-x hip" before
 * the source when xhip), its statistics log in log. Returns the wait status
 * or -errno; the outcome in *ret_log. */
static int compile_once(const char *compiler, char **args, size_t n_args, bool xhip, const char *dir, const char *src,
                        const char *obj, const char *log, Output *out, StatsLog *ret_log) {
        _cleanup_free_ char *env_log = strdupf("CCACHE_STATSLOG=%s", log);
        _cleanup_free_ char **argv = calloc(n_args + 8, sizeof(char *));
        char *env[] = { env_log, NULL };
        size_t k = 0;
        int status;

        *ret_log = (StatsLog) { 0 };
        if (!env_log || !argv)
                return -ENOMEM;
        argv[k++] = (char *) compiler;
        for (size_t i = 0; i < n_args; i++)
                argv[k++] = args[i];
        if (xhip) {
                argv[k++] = (char *) "-x";
                argv[k++] = (char *) "hip";
        }
        argv[k++] = (char *) "-c";
        argv[k++] = (char *) src;
        argv[k++] = (char *) "-o";
        argv[k++] = (char *) obj;
        status = run(argv, env, dir, keep_output, out);
        statslog_read(log, ret_log);
        return status;
}

/* Where the real compiler behind a link to ccache is: the first of that
 * name in PATH that is not ccache, as ccache finds it. */
static char *masquerade_real(const char *shim) {
        const char *path = getenv("PATH"), *name = base_name(shim);
        _cleanup_free_ char *copy = strdup(path ? path : "/usr/bin:/bin");

        for (char *s = copy, *e; s; s = e) {
                _cleanup_free_ char *p = NULL;

                e = strchr(s, ':');
                if (e)
                        *e++ = '\0';
                p = strdupf("%s/%s", *s ? s : ".", name);
                if (p && access(p, X_OK) == 0 && !is_ccache(p))
                        return TAKE_PTR(p);
        }
        return NULL;
}

static bool same_dir(const char *a, const char *b) {
        size_t la = (size_t) (base_name(a) - a), lb = (size_t) (base_name(b) - b);

        return la == lb && strncmp(a, b, la) == 0;
}

/* compiler as an absolute path whose directory is resolved (its own name
 * kept: a shim may be a link): a name is looked up in PATH, a relative path
 * taken from here (the compiles run in a private directory). NULL when a
 * name is not in PATH, or out of memory. */
static char *absolute_compiler(const char *compiler) {
        _cleanup_free_ char *cwd = NULL, *copy = NULL, *dir = NULL, *real_dir = NULL;
        const char *path, *base;

        if (!strchr(compiler, '/')) {
                path = getenv("PATH");
                copy = strdup(path ? path : "/usr/bin:/bin");
                for (char *s = copy, *e; s; s = e) {
                        _cleanup_free_ char *p = NULL;

                        e = strchr(s, ':');
                        if (e)
                                *e++ = '\0';
                        p = *s == '/' ? strdupf("%s/%s", s, compiler) : NULL;
                        if (p && access(p, X_OK) == 0)
                                return absolute_compiler(p);
                }
                return NULL;
        }
        if (compiler[0] != '/') {
                cwd = getcwd(NULL, 0);
                return cwd && (copy = strdupf("%s/%s", cwd, compiler)) ? absolute_compiler(copy) : NULL;
        }
        base = base_name(compiler);
        dir = strndup(compiler, (size_t) (base - compiler));
        real_dir = dir ? realpath(dir, NULL) : NULL;
        if (!real_dir)
                return strdup(compiler);
        return strdupf("%s%s%s", real_dir, strcmp(real_dir, "/") == 0 ? "" : "/", base);
}

/* A GPU compiler: HIP or CUDA, by its name or its arguments. */
typedef enum Gpu {
        GPU_NONE,
        GPU_HIP,
        GPU_CUDA,
} Gpu;

/* The value of an argument "FLAG=VALUE" or "FLAG VALUE" at args[i], or NULL. */
static const char *arg_value(char **args, size_t n, size_t i, const char *flag) {
        size_t len = strlen(flag);

        if (strncmp(args[i], flag, len) != 0)
                return NULL;
        if (args[i][len] == '=')
                return args[i] + len + 1;
        return args[i][len] == '\0' && i + 1 < n ? args[i + 1] : NULL;
}

/* The GPU architecture the arguments name (--offload-arch=gfx90a, nvcc's
 * -arch=sm_80 ...), or NULL. */
static const char *gpu_arch(char **args, size_t n) {
        static const char *const flags[] = { "--offload-arch", "--amdgpu-target", "--cuda-gpu-arch", "-arch",
                                             "--gpu-architecture" };

        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < ELEMENTSOF(flags); k++) {
                        const char *v = arg_value(args, n, i, flags[k]);

                        if (v && *v)
                                return v;
                }
        return NULL;
}

/* From the arguments; else from what the real compiler's --version said
 * (said: GPU_NONE too; -1: not run); else from the names. */
static Gpu gpu_kind(const char *compiler, const char *real, char **args, size_t n, int said) {
        const char *arch = gpu_arch(args, n);

        for (size_t i = 0; i < n; i++) {
                const char *x = strcmp(args[i], "-x") == 0 && i + 1 < n ? args[i + 1] :
                                strncmp(args[i], "-x", 2) == 0 ? args[i] + 2 : NULL;

                if (x && strcmp(x, "hip") == 0)
                        return GPU_HIP;
                if (x && (strcmp(x, "cuda") == 0 || strcmp(x, "cu") == 0))
                        return GPU_CUDA;
        }
        if (arch)
                return strncmp(arch, "sm_", 3) == 0 || strncmp(arch, "compute_", 8) == 0 ? GPU_CUDA : GPU_HIP;
        if (said >= 0)
                return (Gpu) said;
        for (int i = 0; i < 2; i++) {
                const char *name = i == 0 ? compiler : real;
                const char *slash = name ? strrchr(name, '/') : NULL;

                name = slash ? slash + 1 : name;
                if (name && strstr(name, "hipcc"))
                        return GPU_HIP;
                if (name && strstr(name, "nvcc"))
                        return GPU_CUDA;
        }
        return GPU_NONE;
}

/* The line of a compiler's --version output that names its version: past
 * a Python traceback some print first (hipcc asks rocm_agent_enumerator,
 * which fails without /sys/class/kfd), the first line that says "version",
 * else the first line left. */
static const char *version_line(const Output *o, char *buf, size_t size) {
        const char *first = NULL, *p = o->text;
        bool traceback = false;

        buf[0] = '\0';
        for (const char *e; *p; p = *e ? e + 1 : e) {
                size_t n;

                e = p + strcspn(p, "\n");
                n = (size_t) (e - p);
                if (strncmp(p, "Traceback (most recent call last):", 34) == 0) {
                        traceback = true;
                        continue;
                }
                if (traceback) {
                        traceback = *p == ' ' || *p == '\t';    /* its frames; then the error, skipped too */
                        continue;
                }
                if (n == 0)
                        continue;
                if (!first)
                        first = p;
                /* not a status key: a word of the compiler's output */
                if (memmem(p, n, "version", 7) || memmem(p, n, "Version", 7)) {
                        first = p;
                        break;
                }
        }
        if (first)
                snprintf(buf, size, "%.*s", (int) strcspn(first, "\n"), first);
        return buf;
}

/* The interpreter of a script ("perl" for "#!/usr/bin/perl -w", "env
 * perl" read as "perl") into buf; false when path is no script. */
static bool script_interpreter(const char *path, char *buf, size_t size) {
        _cleanup_free_ char *head = NULL;
        char *w[4];
        size_t n, nw;

        if (readfile_all(NULL, path, 255, &head, &n) < 0)
                return false;
        if (n < 2 || head[0] != '#' || head[1] != '!')
                return false;
        head[strcspn(head, "\n")] = '\0';
        nw = split_words(head + 2, w, ELEMENTSOF(w));
        snprintf(buf, size, "%s", nw == 0 ? "?" : nw > 1 && strcmp(base_name(w[0]), "env") == 0 ? base_name(w[1])
                                                                                                  : base_name(w[0]));
        return true;
}

/* Does the file at path hold needle (an object's device code)? Read up to
 * DOCTOR_SCRIPT_MAX_BYTES * 1024. */
static bool file_holds(const char *path, const char *needle) {
        _cleanup_free_ char *data = NULL;
        size_t len = 0;

        return readfile_all(NULL, path, DOCTOR_SCRIPT_MAX_BYTES * 1024, &data, &len) >= 0 &&
               memmem(data, len, needle, strlen(needle));
}

/* What ccache knows the compiler by, when ccache runs a script: with
 * compiler_check = mtime (the default) the script's mtime and size, not
 * the compiler the script runs (hipcc execs hipcc.pl, which runs clang). */
static void check_compiler_script(Doctor *d, const char *seen, char **env, usec_t version_usec) {
        _cleanup_free_ char *check = NULL, *fix = NULL;
        char interp[64], took[32];

        if (!seen || !script_interpreter(seen, interp, sizeof(interp)))
                return;
        check = ccache_get("compiler_check", env);
        if (check && strcmp(check, "mtime") != 0) {
                add(d, "compiler-check", DOCTOR_OK, NULL, "%s is a %s script; ccache identifies it by compiler_check "
                    "= %s%s", seen, interp, check, strcmp(check, "content") == 0 ? " (the script's own text only)" : "");
                return;
        }
        fix = strdupf("in the shim, before ccache: CCACHE_COMPILERCHECK=string:VERSION (changed at each upgrade), or "
                      "a command whose output names the compiler behind it (ccache runs it on every call: %s --version "
                      "took %s); CCACHE_COMPILERCHECK=content covers the script's own text only",
                      seen, format_duration(version_usec, took, sizeof(took)));
        add(d, "compiler-check", DOCTOR_WARN, fix, "%s is a %s script and compiler_check is %s: ccache knows the "
            "compiler only by the script's mtime, not by what it runs; a new compiler behind an unchanged script keeps "
            "getting the old one's objects", seen, interp, check ? check : "mtime (could not ask ccache)");
}

/* The shim, the real compiler behind it, its version, how ccache knows it;
 * *ret_rollback is the fix when a later check fails, *ret_runs false when
 * the real compiler does not run, *ret_said what its --version says it is
 * (a Gpu; untouched when it did not run). Returns the real compiler (free
 * it) or NULL when not known. */
static char *check_shim(Doctor *d, const char *compiler, char **ret_rollback, bool *ret_runs, int *ret_said) {
        _cleanup_free_ char *beside = strdupf("%s.real", compiler);
        char *real = NULL, *env[16] = { NULL }, why[256], line[512];
        bool link = is_ccache(compiler), shim, ok = true;
        usec_t version_usec = 0;

        shim = shim_inspect(compiler, &real, env, ELEMENTSOF(env));
        if (link && !real)
                real = masquerade_real(compiler);
        if (real) {
                /* As the shim's exec finds it: a name in PATH (kept when not there). */
                char *as_named = real;

                real = absolute_compiler(as_named) ?: as_named;
                if (real != as_named)
                        free(as_named);
        }
        if (!shim)
                add(d, "shim", DOCTOR_WARN, NULL, "%s is neither a link to ccache nor a script that execs ccache; "
                    "trying it anyway", compiler);
        else if (real)
                add(d, "shim", DOCTOR_OK, NULL, "%s %s ccache with the real compiler %s", compiler,
                    link ? "is a link to" : "execs", real);
        else
                add(d, "shim", DOCTOR_OK, NULL, "%s %s ccache", compiler, link ? "is a link to" : "execs");
        /* The rollback: the real compiler moved aside beside the shim goes
         * back; never rm what is not a shim (it may be the compiler). */
        if (beside && access(beside, F_OK) == 0)
                *ret_rollback = strdupf("mv %s %s", beside, compiler);
        else if (real && !link && same_dir(real, compiler) && access(real, F_OK) == 0)
                *ret_rollback = strdupf("mv %s %s", real, compiler);
        else if (shim)
                *ret_rollback = link ? strdupf("rm %s (the link to ccache)", compiler)
                                     : strdupf("rm %s (the shim; then reinstall or restore the compiler it replaced)",
                                               compiler);

        if (real) {
                char *argv[] = { real, (char *) "--version", NULL };
                Output vout = { 0 };
                usec_t start = now_usec(CLOCK_MONOTONIC);
                int status = access(real, X_OK) < 0 ? -errno : run(argv, NULL, NULL, keep_output, &vout);

                version_usec = now_usec(CLOCK_MONOTONIC) - start;
                *ret_said = status != 0 ? -1 : strstr(vout.text, "HIP version") ? GPU_HIP
                            : strstr(vout.text, "Cuda compilation tools") ? GPU_CUDA : GPU_NONE;
                if (status == 0)
                        add(d, "real-compiler", DOCTOR_OK, NULL, "%s runs: %s", real,
                            version_line(&vout, line, sizeof(line)));
                else {
                        add(d, "real-compiler", DOCTOR_FAIL, *ret_rollback, "the real compiler %s does not run (%s)%s%s",
                            real, describe_status(status, why, sizeof(why)), vout.len ? ": " : "",
                            first_line(&vout, line, sizeof(line)));
                        ok = false;
                }
        }
        if (ok)
                check_compiler_script(d, real ? real : shim ? NULL : compiler, env, version_usec);
        for (size_t i = 0; env[i]; i++)
                free(env[i]);
        *ret_runs = ok;
        return real;
}

/* Writes the test source into dir: unique text, so that the first compile
 * cannot be a hit; for a GPU compiler a kernel. Returns its path or NULL. */
static char *write_test_source(const char *dir, Gpu gpu, bool cxx) {
        static const char *const ext[] = { [GPU_NONE] = "c", [GPU_HIP] = "hip", [GPU_CUDA] = "cu" };
        _cleanup_free_ char *src = NULL;
        char suffix[7];
        FILE *f;

        if (random_suffix(suffix) < 0 ||
            !(src = strdupf("%s/doctor-%s.%s", dir, suffix, gpu == GPU_NONE && cxx ? "cpp" : ext[gpu])) ||
            !(f = fopen(src, "we")))
                return NULL;
        fprintf(f, "/* cachectl doctor --compiler, pid %d, %lld */\n", (int) getpid(), (long long) time(NULL));
        if (gpu == GPU_HIP)
                fprintf(f, "#include <hip/hip_runtime.h>\n");
        if (gpu != GPU_NONE)
                fprintf(f, "__global__ void cachectl_doctor_%s(float *x) { x[threadIdx.x] *= %d; }\n", suffix,
                        (int) getpid() % 1000 + 2);
        else
                fprintf(f, "int cachectl_doctor_%s(void) { return %d; }\n", suffix, (int) getpid() % 1000);
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(src);
}

static void check_objects(Doctor *d, const char *obj1, const char *obj2, Gpu gpu, const char *arch,
                          const char *rollback) {
        const char *section = gpu == GPU_HIP ? ".hip_fatbin" : ".nv_fatbin";
        struct stat st1, st2;

        /* Sizes, not bytes: some compilers stamp their objects. */
        if (stat(obj1, &st1) < 0 || stat(obj2, &st2) < 0 || st1.st_size == 0)
                add(d, "objects", DOCTOR_FAIL, rollback, "the compiles left no object (%s)", obj1);
        else if (st1.st_size != st2.st_size)
                add(d, "objects", DOCTOR_FAIL, rollback, "the cached object is %lld bytes, the compiled one %lld",
                    (long long) st2.st_size, (long long) st1.st_size);
        else if (gpu == GPU_NONE)
                add(d, "objects", DOCTOR_OK, NULL, "both objects are %lld bytes", (long long) st1.st_size);
        else if (!file_holds(obj2, section) || (arch && !file_holds(obj2, arch)))
                add(d, "objects", DOCTOR_WARN, NULL, "both objects are %lld bytes, but the cached one holds no %s "
                    "device code (no %s%s%s)", (long long) st1.st_size, arch ? arch : "", section,
                    arch ? " or no " : "", arch ? arch : "");
        else
                add(d, "objects", DOCTOR_OK, NULL, "both objects are %lld bytes, with %s%sdevice code (%s)",
                    (long long) st1.st_size, arch ? arch : "", arch ? " " : "", section);
}

static int doctor_compiler(Doctor *d, const char *compiler_arg, const char *source, char **args, size_t n_args) {
        _cleanup_free_ char *compiler = absolute_compiler(compiler_arg);
        _cleanup_free_ char *real = NULL, *rollback = NULL, *dir = NULL, *src = NULL, *obj1 = NULL, *obj2 = NULL,
                            *log1 = NULL, *log2 = NULL;
        const char *name = base_name(compiler_arg), *tmp = getenv("TMPDIR"), *arch = gpu_arch(args, n_args);
        bool cxx = strstr(name, "++") || strstr(name, "xx"), failed, xhip = false;
        char why[256], line[512];
        StatsLog l1 = { 0 }, l2 = { 0 };
        Output out = { 0 };
        Gpu gpu;
        int status;

        if (!compiler || access(compiler, X_OK) < 0) {
                add(d, "shim", DOCTOR_FAIL, NULL, "%s: %s", compiler_arg, compiler ? strerror(errno) : "not found in PATH");
                return 0;
        }
        bool runs;
        int said = -1;

        real = check_shim(d, compiler, &rollback, &runs, &said);
        failed = !runs;
        gpu = gpu_kind(compiler, real, args, n_args, said);
        for (size_t i = 0; gpu == GPU_HIP && i < n_args && !xhip; i++)
                xhip = strncmp(args[i], "-x", 2) == 0;
        xhip = gpu == GPU_HIP && !xhip;         /* as the build compiles a .hip or .cu: as HIP */
        if (gpu != GPU_NONE && !arch && !source)
                add(d, "gpu-arch", DOCTOR_WARN, NULL, "no GPU architecture among the arguments: the kernel is built "
                    "for the compiler's default target, perhaps not the build's; add its --offload-arch=... (HIP) or "
                    "-arch=... (CUDA) after '--'");

        if (!(dir = strdupf("%s/cachectl-doctor.XXXXXX", tmp && *tmp ? tmp : "/tmp")) || !mkdtemp(dir)) {
                fprintf(stderr, "cachectl: cannot make a private temporary directory: %m\n");
                return -1;
        }
        src = source ? realpath(source, NULL) : write_test_source(dir, gpu, cxx);
        obj1 = strdupf("%s/first.o", dir);
        obj2 = strdupf("%s/second.o", dir);
        log1 = strdupf("%s/first.log", dir);
        log2 = strdupf("%s/second.log", dir);
        if (!src || !obj1 || !obj2 || !log1 || !log2) {
                if (source)
                        fprintf(stderr, "cachectl: %s: %m\n", source);
                else
                        fprintf(stderr, "cachectl: cannot write the test source in %s: %m\n", dir);
                statslog_dir_remove(dir);
                return -1;
        }

        status = compile_once(compiler, args, n_args, xhip, dir, src, obj1, log1, &out, &l1);
        if (status != 0) {
                add(d, "first-call", DOCTOR_FAIL, rollback, "compiling through %s failed (%s)%s%s", compiler,
                    describe_status(status, why, sizeof(why)), out.len ? ": " : "", first_line(&out, line, sizeof(line)));
                failed = true;
        } else if (l1.n == 0)
                add(d, "first-call", DOCTOR_FAIL, rollback, "the compile did not go through ccache: nothing in its "
                    "statistics log (CCACHE_STATSLOG; the shim runs the compiler directly, or clears the environment)"),
                        failed = true;
        else if (l1.calls[l1.n - 1].outcome == STATS_UNCACHEABLE)
                add(d, "first-call", DOCTOR_FAIL, rollback, "ccache did not cache the compile: %s",
                    l1.calls[l1.n - 1].reason ? l1.calls[l1.n - 1].reason : "unknown"), failed = true;
        else if (l1.calls[l1.n - 1].outcome == STATS_RECACHE)
                add(d, "first-call", DOCTOR_FAIL, "unset CCACHE_RECACHE (or recache = true in ccache.conf)",
                    "ccache recached the compile: the cache was not asked, so nothing here can be checked"),
                        failed = true;
        else if (l1.calls[l1.n - 1].outcome != STATS_MISS)
                add(d, "first-call", source ? DOCTOR_OK : DOCTOR_WARN, NULL, "the first compile of %s was a hit (%s "
                    /* not a status key */
                    "remote)%s", source ? source : "a new source", l1.calls[l1.n - 1].remote ? "from" : "not from",
                    source ? ": cached before" : "");
        else
                add(d, "first-call", DOCTOR_OK, NULL, "the first compile%s%s%s went through ccache: a miss, stored",
                    gpu == GPU_NONE ? "" : " of a ", gpu == GPU_NONE ? "" : arch ? arch : "default-target",
                    gpu == GPU_NONE ? "" : gpu == GPU_HIP ? " HIP kernel" : " CUDA kernel");

        if (!failed) {
                out = (Output) { 0 };
                status = compile_once(compiler, args, n_args, xhip, dir, src, obj2, log2, &out, &l2);
                if (status != 0)
                        add(d, "second-call", DOCTOR_FAIL, rollback, "the second compile failed (%s)%s%s",
                            describe_status(status, why, sizeof(why)), out.len ? ": " : "",
                            first_line(&out, line, sizeof(line))), failed = true;
                else if (l2.n == 0 || (l2.calls[l2.n - 1].outcome != STATS_HIT_DIRECT &&
                                       l2.calls[l2.n - 1].outcome != STATS_HIT_PREPROCESSED))
                        add(d, "second-call", DOCTOR_FAIL, rollback, "the second compile of the same source was %s: "
                            "ccache stored nothing, or what it hashes changes from call to call",
                            l2.n == 0                                        ? "not seen by ccache"
                            : l2.calls[l2.n - 1].outcome == STATS_MISS       ? "a miss"
                            : l2.calls[l2.n - 1].outcome == STATS_RECACHE    ? "a recache"
                                                                               : "uncacheable"),
                                failed = true;
                else
                        add(d, "second-call", DOCTOR_OK, NULL, "the second compile was a %s hit",
                            l2.calls[l2.n - 1].outcome == STATS_HIT_DIRECT ? "direct" : "preprocessed");
        }
        if (!failed)
                check_objects(d, obj1, obj2, gpu, arch, rollback);
        statslog_done(&l1);
        statslog_done(&l2);
        statslog_dir_remove(dir);
        return 0;
}

static const char *upper(DoctorLevel level) {
        return level == DOCTOR_OK ? "ok" : level == DOCTOR_WARN ? "WARN" : "FAIL";
}

const struct option doctor_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "compiler", required_argument, NULL, 'c' },
        { "source", required_argument, NULL, 'S' },
        {},
};

int cmd_doctor(int argc, char **argv) {
        const char *compiler = NULL, *source = NULL, *dir = ".";
        Doctor d = { 0 };
        DoctorLevel level = DOCTOR_OK;
        bool json = false;
        int dashdash = argc, c, r;
        size_t n[3] = { 0 };

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--") == 0) {
                        dashdash = i;
                        break;
                }
        while ((c = getopt_long(dashdash, argv, "", doctor_options, NULL)) >= 0)
                switch (c) {
                case 'j': json = true; break;
                case 'c': compiler = optarg; break;
                case 'S': source = optarg; break;
                default: return ctl_usage_error("usage: cachectl doctor [BUILD_DIR] [--json] | --compiler PATH [--source FILE] [--json] [-- ARGS...]");
                }
        if (source && !compiler)
                return ctl_usage_error("--source FILE is for --compiler PATH");
        if (compiler && optind < dashdash)
                return ctl_usage_error("doctor --compiler takes no BUILD_DIR (the compiler's arguments follow '--')");
        if (!compiler && dashdash < argc)
                return ctl_usage_error("arguments after '--' are the compiler's: they need --compiler PATH");
        if (dashdash - optind > 1)
                return ctl_usage_error("doctor takes at most one BUILD_DIR");
        if (optind < dashdash)
                dir = argv[optind];

        r = compiler ? doctor_compiler(&d, compiler, source, argv + dashdash + (dashdash < argc),
                                       (size_t) (argc - dashdash - (dashdash < argc)))
                     : doctor_build(&d, dir);
        if (r < 0 || d.oom) {
                if (d.oom)
                        fprintf(stderr, "cachectl: out of memory\n");
                doctor_done(&d);
                return CTL_EXIT_UNREACHABLE;    /* 3: could not check */
        }
        for (size_t i = 0; i < d.n; i++) {
                n[d.checks[i].level]++;
                if (d.checks[i].level > level)
                        level = d.checks[i].level;
        }
        if (json) {
                json_object *o = json_object_new_object(), *a = json_object_new_array();

                for (size_t i = 0; i < d.n; i++) {
                        json_object *e = json_object_new_object();

                        /* not a status key: doctor's own JSON (cachectl.1) */
                        json_object_object_add(e, "name", json_object_new_string(d.checks[i].name));
                        json_object_object_add(e, "level",     /* not a status key */
                                               json_object_new_string(level_names[d.checks[i].level]));
                        json_object_object_add(e, "message", json_object_new_string(d.checks[i].message));
                        json_object_object_add(e, "fix", d.checks[i].fix ? json_object_new_string(d.checks[i].fix) : NULL);
                        json_object_array_add(a, e);
                }
                json_object_object_add(o, "checks", a);
                json_object_object_add(o, "level", json_object_new_string(level_names[level]));  /* not a status key */
                text_put_json(stdout, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else {
                for (size_t i = 0; i < d.n; i++) {
                        printf("%-4s  %-16s ", upper(d.checks[i].level), d.checks[i].name);
                        text_put(stdout, d.checks[i].message);   /* a build file's or a compiler's bytes */
                        putchar('\n');
                        if (d.checks[i].fix && d.checks[i].level != DOCTOR_OK) {
                                printf("      %-16s fix: ", "");
                                text_put(stdout, d.checks[i].fix);
                                putchar('\n');
                        }
                }
                printf("%s: %zu ok, %zu warning%s, %zu failed\n", upper(level), n[DOCTOR_OK], n[DOCTOR_WARN],
                       n[DOCTOR_WARN] == 1 ? "" : "s", n[DOCTOR_FAIL]);
        }
        doctor_done(&d);
        return (int) level;
}
