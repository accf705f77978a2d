/* SPDX-License-Identifier: MIT */
/* doctor --compiler (doctor-internal.h): the shim, the real compiler behind
 * it, how ccache knows it, and two compiles of a unique source through it:
 * a store, then a hit. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/human.h"
#include "build/doctor-internal.h"
#include "build/statslog.h"
#include "core/client.h"
#include "core/path.h"
#include "core/readfile.h"

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
        status = doctor_run(argv, env, dir, keep_output, out);
        statslog_read(log, ret_log);
        return status;
}

/* Where the real compiler behind a link to ccache is: the first of that
 * name in PATH that is not ccache, as ccache finds it. */
static char *masquerade_real(const char *shim) {
        const char *path = getenv("PATH"), *name = path_base_name(shim);
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
        base = path_base_name(compiler);
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
        snprintf(buf, size, "%s", nw == 0 ? "?" : nw > 1 && strcmp(path_base_name(w[0]), "env") == 0 ? path_base_name(w[1])
                                                                                                  : path_base_name(w[0]));
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
                doctor_add(d, "compiler-check", DOCTOR_OK, NULL, "%s is a %s script; ccache identifies it by compiler_check "
                    "= %s%s", seen, interp, check, strcmp(check, "content") == 0 ? " (the script's own text only)" : "");
                return;
        }
        fix = strdupf("in the shim, before ccache: CCACHE_COMPILERCHECK=string:VERSION (changed at each upgrade), or "
                      "a command whose output names the compiler behind it (ccache runs it on every call: %s --version "
                      "took %s); CCACHE_COMPILERCHECK=content covers the script's own text only",
                      seen, format_duration(version_usec, took, sizeof(took)));
        doctor_add(d, "compiler-check", DOCTOR_WARN, fix, "%s is a %s script and compiler_check is %s: ccache knows the "
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
                doctor_add(d, "shim", DOCTOR_WARN, NULL, "%s is neither a link to ccache nor a script that execs ccache; "
                    "trying it anyway", compiler);
        else if (real)
                doctor_add(d, "shim", DOCTOR_OK, NULL, "%s %s ccache with the real compiler %s", compiler,
                    link ? "is a link to" : "execs", real);
        else
                doctor_add(d, "shim", DOCTOR_OK, NULL, "%s %s ccache", compiler, link ? "is a link to" : "execs");
        /* The rollback: the real compiler moved aside beside the shim goes
         * back; never rm what is not a shim (it may be the compiler). */
        if (beside && access(beside, F_OK) == 0)
                *ret_rollback = strdupf("mv %s %s", beside, compiler);
        else if (real && !link && path_same_parent(real, compiler) && access(real, F_OK) == 0)
                *ret_rollback = strdupf("mv %s %s", real, compiler);
        else if (shim)
                *ret_rollback = link ? strdupf("rm %s (the link to ccache)", compiler)
                                     : strdupf("rm %s (the shim; then reinstall or restore the compiler it replaced)",
                                               compiler);

        if (real) {
                char *argv[] = { real, (char *) "--version", NULL };
                Output vout = { 0 };
                usec_t start = now_usec(CLOCK_MONOTONIC);
                int status = access(real, X_OK) < 0 ? -errno : doctor_run(argv, NULL, NULL, keep_output, &vout);

                version_usec = now_usec(CLOCK_MONOTONIC) - start;
                *ret_said = status != 0 ? -1 : strstr(vout.text, "HIP version") ? GPU_HIP
                            : strstr(vout.text, "Cuda compilation tools") ? GPU_CUDA : GPU_NONE;
                if (status == 0)
                        doctor_add(d, "real-compiler", DOCTOR_OK, NULL, "%s runs: %s", real,
                            version_line(&vout, line, sizeof(line)));
                else {
                        doctor_add(d, "real-compiler", DOCTOR_FAIL, *ret_rollback, "the real compiler %s does not run (%s)%s%s",
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
                doctor_add(d, "objects", DOCTOR_FAIL, rollback, "the compiles left no object (%s)", obj1);
        else if (st1.st_size != st2.st_size)
                doctor_add(d, "objects", DOCTOR_FAIL, rollback, "the cached object is %lld bytes, the compiled one %lld",
                    (long long) st2.st_size, (long long) st1.st_size);
        else if (gpu == GPU_NONE)
                doctor_add(d, "objects", DOCTOR_OK, NULL, "both objects are %lld bytes", (long long) st1.st_size);
        else if (!file_holds(obj2, section) || (arch && !file_holds(obj2, arch)))
                doctor_add(d, "objects", DOCTOR_WARN, NULL, "both objects are %lld bytes, but the cached one holds no %s "
                    "device code (no %s%s%s)", (long long) st1.st_size, arch ? arch : "", section,
                    arch ? " or no " : "", arch ? arch : "");
        else
                doctor_add(d, "objects", DOCTOR_OK, NULL, "both objects are %lld bytes, with %s%sdevice code (%s)",
                    (long long) st1.st_size, arch ? arch : "", arch ? " " : "", section);
}

/* The first-call check: status and out of the first compile, l its
 * statistics log. Returns whether it failed. */
static bool check_first_call(Doctor *d, int status, Output *out, const StatsLog *l, const char *compiler,
                             const char *rollback, const char *source, Gpu gpu, const char *arch) {
        char why[256], line[512];

        if (status != 0)
                doctor_add(d, "first-call", DOCTOR_FAIL, rollback, "compiling through %s failed (%s)%s%s", compiler,
                    describe_status(status, why, sizeof(why)), out->len ? ": " : "", first_line(out, line, sizeof(line)));
        else if (l->n == 0)
                doctor_add(d, "first-call", DOCTOR_FAIL, rollback, "the compile did not go through ccache: nothing in its "
                    "statistics log (CCACHE_STATSLOG; the shim runs the compiler directly, or clears the environment)");
        else if (l->calls[l->n - 1].outcome == STATS_UNCACHEABLE)
                doctor_add(d, "first-call", DOCTOR_FAIL, rollback, "ccache did not cache the compile: %s",
                    l->calls[l->n - 1].reason ? l->calls[l->n - 1].reason : "unknown");
        else if (l->calls[l->n - 1].outcome == STATS_RECACHE)
                doctor_add(d, "first-call", DOCTOR_FAIL, "unset CCACHE_RECACHE (or recache = true in ccache.conf)",
                    "ccache recached the compile: the cache was not asked, so nothing here can be checked");
        else if (l->calls[l->n - 1].outcome != STATS_MISS) {
                doctor_add(d, "first-call", source ? DOCTOR_OK : DOCTOR_WARN, NULL, "the first compile of %s was a hit (%s "
                    /* not a status key */
                    "remote)%s", source ? source : "a new source", l->calls[l->n - 1].remote ? "from" : "not from",
                    source ? ": cached before" : "");
                return false;
        } else {
                doctor_add(d, "first-call", DOCTOR_OK, NULL, "the first compile%s%s%s went through ccache: a miss, stored",
                    gpu == GPU_NONE ? "" : " of a ", gpu == GPU_NONE ? "" : arch ? arch : "default-target",
                    gpu == GPU_NONE ? "" : gpu == GPU_HIP ? " HIP kernel" : " CUDA kernel");
                return false;
        }
        return true;
}

/* The second-call check: the same source again must be a hit. Returns
 * whether it failed. */
static bool check_second_call(Doctor *d, int status, Output *out, const StatsLog *l, const char *rollback) {
        char why[256], line[512];

        if (status != 0)
                doctor_add(d, "second-call", DOCTOR_FAIL, rollback, "the second compile failed (%s)%s%s",
                    describe_status(status, why, sizeof(why)), out->len ? ": " : "",
                    first_line(out, line, sizeof(line)));
        else if (l->n == 0 || (l->calls[l->n - 1].outcome != STATS_HIT_DIRECT &&
                               l->calls[l->n - 1].outcome != STATS_HIT_PREPROCESSED))
                doctor_add(d, "second-call", DOCTOR_FAIL, rollback, "the second compile of the same source was %s: "
                    "ccache stored nothing, or what it hashes changes from call to call",
                    l->n == 0                                        ? "not seen by ccache"
                    : l->calls[l->n - 1].outcome == STATS_MISS       ? "a miss"
                    : l->calls[l->n - 1].outcome == STATS_RECACHE    ? "a recache"
                                                                     : "uncacheable");
        else {
                doctor_add(d, "second-call", DOCTOR_OK, NULL, "the second compile was a %s hit",
                    l->calls[l->n - 1].outcome == STATS_HIT_DIRECT ? "direct" : "preprocessed");
                return false;
        }
        return true;
}

int doctor_compiler(Doctor *d, const char *compiler_arg, const char *source, char **args, size_t n_args) {
        _cleanup_free_ char *compiler = absolute_compiler(compiler_arg);
        _cleanup_free_ char *real = NULL, *rollback = NULL, *dir = NULL, *src = NULL, *obj1 = NULL, *obj2 = NULL,
                            *log1 = NULL, *log2 = NULL;
        const char *name = path_base_name(compiler_arg), *tmp = getenv("TMPDIR"), *arch = gpu_arch(args, n_args);
        bool cxx = strstr(name, "++") || strstr(name, "xx"), failed, xhip = false;
        StatsLog l1 = { 0 }, l2 = { 0 };
        Output out = { 0 };
        Gpu gpu;
        int status;

        if (!compiler || access(compiler, X_OK) < 0) {
                doctor_add(d, "shim", DOCTOR_FAIL, NULL, "%s: %s", compiler_arg, compiler ? strerror(errno) : "not found in PATH");
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
                doctor_add(d, "gpu-arch", DOCTOR_WARN, NULL, "no GPU architecture among the arguments: the kernel is built "
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
        failed |= check_first_call(d, status, &out, &l1, compiler, rollback, source, gpu, arch);
        if (!failed) {
                out = (Output) { 0 };
                status = compile_once(compiler, args, n_args, xhip, dir, src, obj2, log2, &out, &l2);
                failed |= check_second_call(d, status, &out, &l2, rollback);
        }
        if (!failed)
                check_objects(d, obj1, obj2, gpu, arch, rollback);
        statslog_done(&l1);
        statslog_done(&l2);
        statslog_dir_remove(dir);
        return 0;
}
