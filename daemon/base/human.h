/* SPDX-License-Identifier: MIT */
/* Sizes and durations in human form, as people write and read them. Pure;
 * linked into cachectl too. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"

/* ccache's parse_size (ccache/README.md §3): a number (fractions allowed) and a
 * suffix k|K|M|G|T, binary when the next char is 'i'; anything after that is
 * ignored. Unlike ccache, a bare number is an error (its unit differs between
 * ccache versions), as are zero, negative and out-of-range sizes.
 * Returns 0 or -EINVAL; *ret is untouched on failure. */
int parse_size(const char *s, uint64_t *ret);

/* Durations: one or more integer+unit pairs, units ms s m h d ("500ms",
 * "10s", "1h30m"). Zero is allowed ("0s"). Returns 0 or -EINVAL. */
int parse_duration(const char *s, usec_t *ret);

/* "61.2G", "512M", "4.0k", "100B": decimal units with one decimal, as
 * ccache -s prints. Returns buf. */
char *format_size(uint64_t bytes, char *buf, size_t len);

/* bytes rounded up to two significant digits (118.3G -> 120G, 4.27G ->
 * 4.3G, 950M -> 950M): a size a person would write in a config. */
uint64_t round_size_up(uint64_t bytes);

/* "3h", "2d 4h", "45s": the two largest units. Returns buf. */
char *format_duration(usec_t usec, char *buf, size_t len);

/* Prints text to f as lines of at most width columns, broken at spaces
 * (a word longer than a line stands alone); the lines after the first of
 * each of text's own lines start with indent spaces. Ends with a newline.
 * Every word shown as text_put shows it (base/text.h), so a name in text
 * cannot act on the terminal. For what cachectl prints on a terminal: 80
 * columns. */
#define HUMAN_WIDTH 80
void print_wrapped(FILE *f, const char *text, size_t width, size_t indent);

/* The word of words (NULL-terminated) closest to name, if close enough to
 * be a typo of it (an edit distance of a third of its length, 2 at least,
 * a swap of neighbours counting one); else NULL. For "did you mean". */
const char *closest_word(const char *name, const char *const *words);
