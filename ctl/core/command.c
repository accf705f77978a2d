/* SPDX-License-Identifier: MIT */
/* The command table's texts (command.h): each form of a usage wrapped the
 * same way wherever it is shown. Prints only; runs nothing but the command. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/human.h"
#include "core/client.h"
#include "core/command.h"

/* Where the top-level help's summaries start. */
#define SUMMARY_COLUMN 33
#define SOCKET_OPTION "cachectl [-s SOCKET] "

static const Command *running;

const Command *command_find(const Command *commands, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        return NULL;
}

int command_run(const Command *cmd, int argc, char **argv) {
        running = cmd;
        return cmd->run(argc, argv);
}

/* The length of form's next piece that a line may not break inside: up to
 * a space outside brackets or after a '|'. */
static size_t piece_length(const char *form, size_t len) {
        int depth = 0;

        for (size_t i = 0; i < len; i++) {
                if (form[i] == '[')
                        depth++;
                else if (form[i] == ']')
                        depth--;
                else if (form[i] == ' ' && i > 0 && (depth <= 0 || form[i - 1] == '|'))
                        return i;
        }
        return len;
}

/* lead, then the form of len bytes, wrapped at HUMAN_WIDTH; lines after
 * the first start below the word after the command's name. */
static void put_form(FILE *f, const char *lead, const char *form, size_t len) {
        size_t name = strcspn(form, " "), indent = strlen(lead) + (name < len ? name + 1 : name);
        size_t col = strlen(lead);

        fputs(lead, f);
        for (size_t at = 0; at < len;) {
                size_t n;

                while (at < len && form[at] == ' ')
                        at++;
                n = piece_length(form + at, len - at);
                if (n == 0)
                        break;
                if (at > 0 && col + 1 + n > HUMAN_WIDTH) {
                        fprintf(f, "\n%*s", (int) indent, "");
                        col = indent;
                } else if (at > 0) {
                        fputc(' ', f);
                        col++;
                }
                fwrite(form + at, 1, n, f);
                col += n;
                at += n;
        }
        fputc('\n', f);
}

/* Each form of usage after first_lead (the first) or later_lead. */
static void put_usage(FILE *f, const char *usage, const char *first_lead, const char *later_lead) {
        for (const char *p = usage; *p;) {
                size_t len = strcspn(p, "\n");

                put_form(f, p == usage ? first_lead : later_lead, p, len);
                p += len;
                if (*p == '\n')
                        p++;
        }
}

void command_help(const Command *cmd) {
        put_usage(stdout, cmd->usage, "Usage: " SOCKET_OPTION, "       " SOCKET_OPTION);
        printf("%s\nSee cachectl(1).\n", cmd->help);
}

/* The summary's lines from column SUMMARY_COLUMN, the first after col
 * columns already written on its line (0: on a line of its own). */
static void put_summary(const char *summary, size_t col) {
        for (const char *p = summary; *p;) {
                size_t len = strcspn(p, "\n");

                printf("%*s%.*s\n", (int) (SUMMARY_COLUMN - col), "", (int) len, p);
                col = 0;
                p += len;
                if (*p == '\n')
                        p++;
        }
}

void command_list(const Command *commands, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const char *usage = commands[i].usage;
                size_t first = strcspn(usage, "\n");

                /* A lone short form: the summary beside it, two spaces apart at least. */
                if (usage[first] == '\0' && 2 + first + 2 <= SUMMARY_COLUMN) {
                        printf("  %s", usage);
                        put_summary(commands[i].summary, 2 + first);
                        continue;
                }
                put_usage(stdout, usage, "  ", "  ");
                put_summary(commands[i].summary, 0);
        }
}

int command_usage_error(const char *why) {
        if (!running) {
                fprintf(stderr, "cachectl: %s\nTry 'cachectl --help'.\n", why ? why : "usage error");
                return CTL_EXIT_USAGE;
        }
        if (why) {
                fprintf(stderr, "cachectl: %s\n", why);
                put_usage(stderr, running->usage, "usage: " SOCKET_OPTION, "       " SOCKET_OPTION);
        } else
                put_usage(stderr, running->usage, "cachectl: usage: " SOCKET_OPTION,
                          "                 " SOCKET_OPTION);
        fprintf(stderr, "Try 'cachectl %s --help'.\n", running->name);
        return CTL_EXIT_USAGE;
}

const char *command_usage(void) {
        return running ? running->usage : "";
}
