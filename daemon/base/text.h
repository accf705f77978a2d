/* SPDX-License-Identifier: MIT */
/* Names from elsewhere (a build's paths, a compiler's output) shown on a
 * terminal harmlessly: whatever a terminal would act on is printed as a
 * visible escape instead. Pure; linked into cachectl too. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* The longest escape of one character ("\u202e"). */
#define TEXT_ESCAPE_MAX 6

/* s as it may be shown: plain UTF-8 (backslashes too) unchanged; escaped:
 *   - C0 controls and DEL: \t \n \r as such, ESC as \e, the rest \xNN;
 *   - C1 controls written as UTF-8 (U+0080-U+009F, CSI among them), the
 *     line and paragraph separators and the bidirectional overrides and
 *     isolates (U+200E U+200F U+2028-U+202E U+2066-U+2069, which reorder
 *     what is read): \uNNNN;
 *   - each byte of invalid UTF-8 (a lone 0x9b, an overlong form, a
 *     surrogate, a cut sequence): \xNN.
 * For reading, not parsing back: a name holding a backslash looks like an
 * escape. Writes at most size - 1 bytes and a NUL into buf (size > 0),
 * never half an escape; returns the length the whole needs, as snprintf. */
size_t text_escape(const char *s, char *buf, size_t size);

/* text_escape into a new string (free it), or NULL out of memory. */
char *text_escaped(const char *s);

/* Writes s to f as text_escape shows it. */
void text_put(FILE *f, const char *s);

/* Writes json, a document json-c made, and a newline to f, with what its escaping leaves
 * raw escaped too: DEL, C1 controls and the bidirectional overrides and
 * separators as \uNNNN (the same characters, for a reader of JSON), a byte
 * of invalid UTF-8 as \ufffd (JSON holds no such byte). json-c escapes C0
 * in strings; the newlines, tabs and spaces of its layout are kept. */
void text_put_json(FILE *f, const char *json);
