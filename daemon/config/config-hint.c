/* SPDX-License-Identifier: MIT */
/* Hints for libconfig's syntax errors (config-hint.h). The text is first
 * masked: the inside of strings and all comments become blanks, so that
 * what is left is the file's structure, at the same offsets. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "config/config-hint.h"

#define HINT_VALUE_MAX 64   /* a value longer than this is no size anyone typed */

/* A copy of text with string contents and comments blanked (newlines
 * kept); '\0'-terminated. NULL on ENOMEM. */
static char *mask(const char *text, size_t len) {
        char *m = malloc(len + 1);

        if (!m)
                return NULL;
        for (size_t i = 0; i < len;) {
                if (text[i] == '"') {
                        m[i++] = '"';
                        while (i < len && text[i] != '"' && text[i] != '\n') {
                                bool esc = text[i] == '\\' && i + 1 < len && text[i + 1] != '\n';
                                m[i++] = ' ';
                                if (esc)
                                        m[i++] = ' ';
                        }
                        if (i < len && text[i] == '"')
                                m[i++] = '"';
                } else if (text[i] == '#' || (text[i] == '/' && i + 1 < len && text[i + 1] == '/')) {
                        while (i < len && text[i] != '\n')
                                m[i++] = ' ';
                } else if (text[i] == '/' && i + 1 < len && text[i + 1] == '*') {
                        while (i < len && !(text[i] == '*' && i + 1 < len && text[i + 1] == '/'))
                                m[i] = text[i] == '\n' ? '\n' : ' ', i++;
                        for (int k = 0; k < 2 && i < len; k++)
                                m[i++] = ' ';
                } else {
                        m[i] = text[i] == '\0' ? ' ' : text[i];
                        i++;
                }
        }
        m[len] = '\0';
        return m;
}

/* Offset of the start of line (1-based) in m, or -1. */
static long line_offset(const char *m, int line) {
        const char *p = m;

        for (int l = 1; l < line; l++) {
                p = strchr(p, '\n');
                if (!p)
                        return -1;
                p++;
        }
        return p - m;
}

static int line_of(const char *m, size_t off) {
        int line = 1;

        for (size_t i = 0; i < off; i++)
                line += m[i] == '\n';
        return line;
}

/* The last character before off that is not blank, and its offset; -1 if none. */
static long previous_significant(const char *m, long off) {
        while (--off >= 0)
                if (!isspace((unsigned char) m[off]))
                        return off;
        return -1;
}

/* The innermost bracket open at off: '(', '[', '{', or 0 at the top level. */
static char context_at(const char *m, long off) {
        char stack[64];
        size_t n = 0;

        for (long i = 0; i < off; i++) {
                if (strchr("([{", m[i]) && n < sizeof(stack))
                        stack[n++] = m[i];
                else if (strchr(")]}", m[i]) && n > 0)
                        n--;
        }
        return n > 0 ? stack[n - 1] : 0;
}

/* What a key takes, as config.c reads it; what a hint may suggest for it. */
typedef enum { KIND_OTHER, KIND_SIZE, KIND_DURATION, KIND_PERCENT, KIND_THRESHOLD, KIND_FRACTION } KeyKind;

static KeyKind key_kind(const char *key) {
        static const struct {
                const char *key;
                KeyKind kind;
        } keys[] = {
                { "max_size", KIND_SIZE },
                { "trim_to", KIND_FRACTION },
                { "regret_alert", KIND_PERCENT },
                { "silent_hit_rate", KIND_PERCENT },
                { "warn_free", KIND_THRESHOLD },
                { "crit_free", KIND_THRESHOLD },
                { "warn_free_inodes", KIND_THRESHOLD },
                { "crit_free_inodes", KIND_THRESHOLD },
                { "hysteresis", KIND_THRESHOLD },
                { "min_free", KIND_THRESHOLD },
                { "check_interval", KIND_DURATION },
                { "full_within", KIND_DURATION },
                { "alert_timeout", KIND_DURATION },
                { "alert_min_interval", KIND_DURATION },
                { "audit_interval", KIND_DURATION },
                { "poll_interval", KIND_DURATION },
                { "round_timeout", KIND_DURATION },
                { "timeout", KIND_DURATION },
                { "silent_window", KIND_DURATION },
                { "idle_after", KIND_DURATION },
                { "rescan_interval", KIND_DURATION },
                { "remote_errors_window", KIND_DURATION },
        };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strcmp(key, keys[i].key) == 0)
                        return keys[i].kind;
        return KIND_OTHER;
}

/* The hint for `key = value;` with value a number and a suffix: a line that
 * loads when the key takes that form, else what the key takes. */
static void hint_number(const char *key, const char *value, size_t vlen, char *buf, size_t len) {
        KeyKind kind = key_kind(key);

        if (value[vlen - 1] != '%') {
                snprintf(buf, len, "%s are strings: %s = \"%s\";", kind == KIND_DURATION ? "durations" : "sizes",
                         key, value);
                return;
        }
        switch (kind) {
        case KIND_FRACTION:
                /* trim_to = 90% means the fraction 0.9 */
                snprintf(buf, len, "%s is a fraction, not a percentage: %s = %g;", key, key, strtod(value, NULL) / 100);
                break;
        case KIND_SIZE:
                snprintf(buf, len, "%s is a size such as \"100G\", not a percentage", key);
                break;
        case KIND_DURATION:
                snprintf(buf, len, "%s is a duration such as \"10m\", not a percentage", key);
                break;
        default:
                snprintf(buf, len, "percentages are strings: %s = \"%s\";", key, value);
        }
}

/* `key = 100G;` at off: an unquoted value that is no number, boolean or
 * bracket. */
static bool hint_unquoted_at(const char *text, const char *m, long off, char *buf, size_t len) {
        const char *p = m + off, *k, *v;
        char key[65], value[HINT_VALUE_MAX + 1];
        size_t klen, vlen;

        while (*p == ' ' || *p == '\t' || *p == '{')
                p++;
        k = p;
        if (!isalpha((unsigned char) *p) && *p != '_')
                return false;
        while (isalnum((unsigned char) *p) || *p == '_' || *p == '-')
                p++;
        klen = (size_t) (p - k);
        p += strspn(p, " \t");
        if (*p != '=' && *p != ':')
                return false;
        p++;
        p += strspn(p, " \t");
        v = p;
        vlen = strcspn(v, ";,})]\n");
        while (vlen > 0 && isspace((unsigned char) v[vlen - 1]))
                vlen--;
        if (vlen == 0 || vlen > HINT_VALUE_MAX || klen >= sizeof(key) || strchr("\"[({", *v) || memchr(v, '=', vlen))
                return false;
        memcpy(key, text + (k - m), klen);
        key[klen] = '\0';
        memcpy(value, text + (v - m), vlen);
        value[vlen] = '\0';
        if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)
                return false;
        if (isdigit((unsigned char) value[0]) || value[0] == '.') {
                size_t num = strspn(value, "0123456789.");

                if (num == vlen)
                        return false;   /* a plain number: libconfig reads it; the error is elsewhere */
                hint_number(key, value, vlen, buf, len);
                return true;
        }
        if (!isalpha((unsigned char) value[0]) && value[0] != '/')
                return false;
        snprintf(buf, len, "strings are quoted: %s = \"%s\";", key, value);
        return true;
}

/* hint_unquoted_at for each setting that begins on the line starting at
 * off: at its start, and after each '{', '(', ';' or ',' on it (strings and
 * comments are blanked in m), so that a one-line group `{ a = "x"; b = 1G; }`,
 * the layout the shipped comments use, gets its hint too. */
static bool hint_unquoted(const char *text, const char *m, long off, char *buf, size_t len) {
        for (long p = off; m[p] && m[p] != '\n'; p++)
                if ((p == off || strchr("{(;,", m[p - 1])) && hint_unquoted_at(text, m, p, buf, len))
                        return true;
        return false;
}

/* `[ "a", ]` or `( {...}, )`: the first closing bracket on the line starting
 * at off comes right after a comma. */
static bool hint_trailing_comma(const char *m, long off, char *buf, size_t len) {
        long close = off + (long) strcspn(m + off, ")]\n"), prev;

        if (m[close] != ')' && m[close] != ']')
                return false;
        prev = previous_significant(m, close);
        if (prev < 0 || m[prev] != ',')
                return false;
        snprintf(buf, len, "%s must not end with a comma: remove the ',' after its last element (line %d)",
                 m[close] == ']' ? "an array" : "a list", line_of(m, (size_t) prev));
        return true;
}

/* An element of a list or array starting on the line at off, with no
 * separator at the end of the previous one. */
static bool hint_missing_separator(const char *m, long off, char *buf, size_t len) {
        long first = off + (long) strspn(m + off, " \t"), prev;
        char ctx;

        if (!m[first] || m[first] == '\n')
                return false;
        prev = previous_significant(m, first);
        if (prev < 0 || strchr(";,{([", m[prev]))
                return false;
        ctx = context_at(m, first);
        if ((ctx == '(' || ctx == '[') && (strchr("{\"([-.", m[first]) || isdigit((unsigned char) m[first]))) {
                snprintf(buf, len, "missing ',' at the end of line %d (elements of a %s are separated by commas)",
                         line_of(m, (size_t) prev), ctx == '(' ? "list" : "array");
                return true;
        }
        if ((ctx == '{' || ctx == 0) && (isalpha((unsigned char) m[first]) || m[first] == '_')) {
                snprintf(buf, len, "missing ';' at the end of line %d", line_of(m, (size_t) prev));
                return true;
        }
        return false;
}

char *config_syntax_hint(const char *text, size_t len, int line, char *buf, size_t buflen) {
        _cleanup_free_ char *m = NULL;
        char hint[256];
        long off;
        bool found;

        if (!text || line < 1 || buflen == 0 || !(m = mask(text, len)))
                return NULL;
        off = line_offset(m, line);
        if (off < 0)
                return NULL;
        found = hint_trailing_comma(m, off, hint, sizeof(hint)) || hint_unquoted(text, m, off, hint, sizeof(hint)) ||
                hint_missing_separator(m, off, hint, sizeof(hint));
        if (!found)
                return NULL;
        snprintf(buf, buflen, "%s", hint);
        return buf;
}
