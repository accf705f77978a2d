/* SPDX-License-Identifier: MIT */
/* cachectl doctor (doctor.h): runs the checks of a CMake build directory
 * (doctor-dir.c) or of a compiler shim (doctor-compiler.c) and says per
 * check ok, warn or fail with the one line that fixes it, as text or JSON.
 * The parts, one by what each reads: build/doctor-internal.h. */
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/text.h"
#include "build/doctor-internal.h"
#include "build/doctor.h"
#include "core/client.h"
#include "core/command.h"

static const char *const level_names[] = { "ok", "warn", "fail" };

/* Adds a check; fix may be NULL. Out of memory: d->oom, reported at the end. */
_printf_(5, 6)
void doctor_add(Doctor *d, const char *name, DoctorLevel level, const char *fix, const char *fmt, ...) {
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

char *strdupf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
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

/* The checks as JSON: {"checks": [{"name", "level", "message", "fix"}],
 * "level"}, level the worst. */
static void print_json(const Doctor *d, DoctorLevel level) {
        json_object *o = json_object_new_object(), *a = json_object_new_array();

        for (size_t i = 0; i < d->n; i++) {
                json_object *e = json_object_new_object();

                /* not a status key: doctor's own JSON (cachectl.1) */
                json_object_object_add(e, "name", json_object_new_string(d->checks[i].name));
                json_object_object_add(e, "level",     /* not a status key */
                                       json_object_new_string(level_names[d->checks[i].level]));
                json_object_object_add(e, "message", json_object_new_string(d->checks[i].message));
                json_object_object_add(e, "fix", d->checks[i].fix ? json_object_new_string(d->checks[i].fix) : NULL);
                json_object_array_add(a, e);
        }
        json_object_object_add(o, "checks", a);
        json_object_object_add(o, "level", json_object_new_string(level_names[level]));  /* not a status key */
        text_put_json(stdout, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}

/* The checks a line each (a fix below what is not ok), then the verdict
 * and the count of each level, level the worst. */
static void print_text(const Doctor *d, DoctorLevel level) {
        size_t n[3] = { 0 };

        for (size_t i = 0; i < d->n; i++) {
                n[d->checks[i].level]++;
                printf("%-4s  %-16s ", upper(d->checks[i].level), d->checks[i].name);
                text_put(stdout, d->checks[i].message);   /* a build file's or a compiler's bytes */
                putchar('\n');
                if (d->checks[i].fix && d->checks[i].level != DOCTOR_OK) {
                        printf("      %-16s fix: ", "");
                        text_put(stdout, d->checks[i].fix);
                        putchar('\n');
                }
        }
        printf("%s: %zu ok, %zu warning%s, %zu failed\n", upper(level), n[DOCTOR_OK], n[DOCTOR_WARN],
               n[DOCTOR_WARN] == 1 ? "" : "s", n[DOCTOR_FAIL]);
}

int cmd_doctor(int argc, char **argv) {
        const char *compiler = NULL, *source = NULL, *dir = ".";
        Doctor d = { 0 };
        DoctorLevel level = DOCTOR_OK;
        bool json = false;
        int dashdash = argc, c, r;

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
                default: return command_usage_error(NULL);
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
        for (size_t i = 0; i < d.n; i++)
                if (d.checks[i].level > level)
                        level = d.checks[i].level;
        if (json)
                print_json(&d, level);
        else
                print_text(&d, level);
        doctor_done(&d);
        return (int) level;
}
