/* SPDX-License-Identifier: MIT */
/* What libconfig's bare "syntax error" most likely means, told from the
 * text of the file around the line it names: a size, duration or word
 * left unquoted, a list that ends with a comma, a comma missing between two
 * elements of a list. Pure: no I/O. */
#pragma once

#include <stddef.h>

/* A hint for a syntax error at line (1-based) of text (len bytes, need not
 * end in '\0'), such as `sizes are strings: max_size = "100G";`, into buf.
 * Returns buf, or NULL (buf untouched) when the line shows no likely
 * cause. */
char *config_syntax_hint(const char *text, size_t len, int line, char *buf, size_t buflen);
