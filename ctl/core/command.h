/* SPDX-License-Identifier: MIT */
/* cachectl's command table: each command's usage written once, and every
 * place that shows it (the command's --help, the top-level --help, a usage
 * error, and so what tests hold the man page's SYNOPSIS to) drawn from that
 * one text. The table itself is the top's (cachectl.c): it names commands
 * of every layer. */
#pragma once

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

typedef struct Command {
        const char *name;
        int (*run)(int argc, char **argv);
        /* What it takes besides --help (NULL: nothing), as the completion
         * lists them. */
        const struct option *options;
        /* Its forms, one a line, each starting with name, unwrapped:
         * "status [--json] [CACHE]". Shown after "cachectl [-s SOCKET] ",
         * wrapped at 80 columns between bracketed groups or after a '|'. */
        const char *usage;
        /* The top-level help's line or lines about it, each at most 47
         * columns (they start at column 33). */
        const char *summary;
        /* Its own --help after the usage; ends without a newline. */
        const char *help;
} Command;

/* The command found by name among commands[0..n), or NULL. */
const Command *command_find(const Command *commands, size_t n, const char *name);

/* Runs cmd, which becomes the one command_usage_error speaks of. */
int command_run(const Command *cmd, int argc, char **argv);

/* "Usage: cachectl [-s SOCKET] FORM" for each form (the later ones
 * "       cachectl ..."), then cmd's help and "See cachectl(1).", on stdout. */
void command_help(const Command *cmd);

/* The top-level help's list of commands: for each, its forms indented by
 * two, and its summary from column 33 (on the form's line when there is
 * room). On stdout. */
void command_list(const Command *commands, size_t n);

/* The usage error of the command running (command_run): on stderr
 * "cachectl: " why (when not NULL) and a newline, "usage: cachectl
 * [-s SOCKET] FORM" for each form, and the hint to its --help. Returns
 * CTL_EXIT_USAGE. */
int command_usage_error(const char *why);

/* The running command's usage (its forms, one a line), for a message of
 * its own (check's "CACHEKEEPER UNKNOWN - usage: cachectl [-s SOCKET]
 * check"); "" when none runs. */
const char *command_usage(void);
