/* SPDX-License-Identifier: MIT */
/* Names shown harmlessly (text.h). Pure: no I/O but the FILE it is given. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/* The length of the valid UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF) and its code point; 0 when
 * s does not start one. */
static size_t utf8_decode(const unsigned char *s, uint32_t *ret_cp) {
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;
        uint32_t cp;

        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4, cp = s[0] & 0x07;
        else
                return 0;
        /* The second byte's range is what rules out the overlong, surrogate
         * and too-large forms. */
        if (s[0] == 0xe0)
                lo = 0xa0;
        else if (s[0] == 0xed)
                hi = 0x9f;
        else if (s[0] == 0xf0)
                lo = 0x90;
        else if (s[0] == 0xf4)
                hi = 0x8f;
        for (size_t i = 1; i < n; i++) {
                if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
                        return 0;       /* also the NUL of a cut sequence */
                cp = cp << 6 | (s[i] & 0x3f);
        }
        *ret_cp = cp;
        return n;
}

/* Code points a terminal acts on or that change how the rest reads. */
static bool cp_unsafe(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The shown form of s's first character into out; returns how many bytes
 * of s it stands for (s not at its end). */
static size_t escape_one(const char *s, char out[TEXT_ESCAPE_MAX + 1]) {
        const unsigned char *u = (const unsigned char *) s;
        uint32_t cp;
        size_t n = utf8_decode(u, &cp);

        if (n == 0) {
                snprintf(out, TEXT_ESCAPE_MAX + 1, "\\x%02x", u[0]);
                return 1;
        }
        if (!cp_unsafe(cp)) {
                memcpy(out, s, n);
                out[n] = '\0';
        } else if (cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x1b)
                snprintf(out, TEXT_ESCAPE_MAX + 1, "\\%c", cp == '\t' ? 't' : cp == '\n' ? 'n' : cp == '\r' ? 'r' : 'e');
        else if (cp < 0x80)
                snprintf(out, TEXT_ESCAPE_MAX + 1, "\\x%02x", (unsigned) cp);
        else
                snprintf(out, TEXT_ESCAPE_MAX + 1, "\\u%04x", (unsigned) (cp & 0xffff));   /* all unsafe ones < U+10000 */
        return n;
}

size_t text_escape(const char *s, char *buf, size_t size) {
        size_t len = 0;
        bool full = false;

        while (*s) {
                char one[TEXT_ESCAPE_MAX + 1];
                size_t k;

                s += escape_one(s, one);
                k = strlen(one);
                if (!full && len + k < size)
                        memcpy(buf + len, one, k);
                else if (!full) {
                        full = true;
                        buf[len] = '\0';       /* len < size: all so far fitted */
                }
                len += k;
        }
        if (!full)
                buf[len] = '\0';
        return len;
}

char *text_escaped(const char *s) {
        char c;
        size_t n = text_escape(s, &c, 1);
        char *buf = malloc(n + 1);

        if (buf)
                text_escape(s, buf, n + 1);
        return buf;
}

void text_put(FILE *f, const char *s) {
        while (*s) {
                char one[TEXT_ESCAPE_MAX + 1];

                s += escape_one(s, one);
                fputs(one, f);
        }
}

void text_put_json(FILE *f, const char *json) {
        const unsigned char *u = (const unsigned char *) json;

        while (*u) {
                uint32_t cp;
                size_t n = utf8_decode(u, &cp);

                if (n == 0) {
                        fputs("\\ufffd", f);   /* a byte JSON cannot hold: the replacement character */
                        n = 1;
                } else if (cp_unsafe(cp) && cp != '\n' && cp != '\t' && cp != '\r')
                        fprintf(f, "\\u%04x", (unsigned) cp);
                else
                        fwrite(u, 1, n, f);
                u += n;
        }
        fputc('\n', f);
}
