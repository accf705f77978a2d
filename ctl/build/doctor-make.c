/* SPDX-License-Identifier: MIT */
/* The Makefiles generator's files (doctor-internal.h): each target's
 * build.make, its compile rules; the .d files the compilers wrote. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build/doctor-internal.h"
#include "core/readfile.h"

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

int makefiles_read(Build *b) {
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

/* Each object's .d file: its dependencies counted from its first rule, up
 * to DOCTOR_DEPS_SAMPLE_MAX objects a language. */
void make_read_deps(Build *b) {
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
