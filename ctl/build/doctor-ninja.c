/* SPDX-License-Identifier: MIT */
/* The Ninja generator's files (doctor-internal.h): build.ninja and what it
 * includes (depth at most DOCTOR_INCLUDE_DEPTH_MAX), its compile rules and
 * edges; .ninja_deps, ninja's binary log of the compilers' dependency lists,
 * every record's size and ids checked. Read, never run. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build/doctor-internal.h"
#include "core/readfile.h"

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

static int ninja_read_file(Build *b, Ninja *nj, const char *path, unsigned depth) {
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
                                ninja_read_file(b, nj, inc, depth + 1);
                }
        }
        ninja_edge_done(b, nj, &edge_obj, &edge_rule, &launcher, &code_check);
        readfile_end(&l);
        return 0;
}

int ninja_read(Build *b) {
        Ninja nj = { 0 };
        int r = ninja_read_file(b, &nj, "build.ninja", 0);

        for (size_t i = 0; i < nj.n_rules; i++) {
                free(nj.rules[i].name);
                free(nj.rules[i].command);
        }
        free(nj.rules);
        return r;
}

/* ninja's log of the compilers' dependency lists, .ninja_deps (ninja's
 * src/deps_log.cc, versions 3 and 4): "# ninjadeps\n", a version, then
 * records of a 32-bit size whose top bit says deps: a path record is the
 * path, NUL-padded, and its id's complement (ids count up from 0); a deps
 * record the output's id, its mtime (4 bytes in version 3, 8 in 4) and one
 * id per dependency. A later record of an output replaces the earlier. Read
 * without running ninja: the build directory's ninja is not ours to run. */
void ninja_read_deps(Build *b) {
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
