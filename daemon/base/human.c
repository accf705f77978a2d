/* SPDX-License-Identifier: MIT */
/* Sizes and durations in human form. Pure: no I/O, no globals. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/human.h"
#include "base/text.h"

int parse_size(const char *s, uint64_t *ret) {
        char *p;
        double v;
        unsigned mult;

        if (!s || !*s)
                return -EINVAL;
        errno = 0;
        v = strtod(s, &p);
        if (errno != 0 || p == s || !isfinite(v) || v <= 0)
                return -EINVAL;
        /* ccache uses strtod, so "1.5T", "1e3G" and " 2G" work; we refuse
         * what strtod also reads but no one means as a size: hex floats. */
        for (const char *q = s; q < p; q++)
                if (*q == 'x' || *q == 'X')
                        return -EINVAL;
        while (isspace((unsigned char) *p))
                p++;
        if (*p == '\0')
                return -EINVAL; /* bare number: 4.7 reads G, 4.8+ reads Gi */

        mult = p[1] == 'i' ? 1024 : 1000;
        switch (*p) {
        case 'T':
                v *= mult;
                /* fall through */
        case 'G':
                v *= mult;
                /* fall through */
        case 'M':
                v *= mult;
                /* fall through */
        case 'K':
        case 'k':
                v *= mult;
                break;
        default:
                return -EINVAL;
        }
        if (v < 1 || v >= 18446744073709551616.0)
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int parse_duration(const char *s, usec_t *ret) {
        static const struct {
                const char *suffix;
                usec_t usec;
        } units[] = {
                /* longest first, so "ms" is not read as "m" then "s" */
                { "ms", USEC_PER_MSEC },
                { "s", USEC_PER_SEC },
                { "m", 60 * USEC_PER_SEC },
                { "h", 3600 * USEC_PER_SEC },
                { "d", 86400 * USEC_PER_SEC },
        };
        usec_t total = 0;
        const char *p = s;

        if (!s || !*s)
                return -EINVAL;
        while (*p) {
                unsigned long long n;
                char *end;
                size_t i;

                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                errno = 0;
                n = strtoull(p, &end, 10);
                if (errno != 0)
                        return -EINVAL;
                for (i = 0; i < ELEMENTSOF(units); i++)
                        if (strncmp(end, units[i].suffix, strlen(units[i].suffix)) == 0)
                                break;
                if (i == ELEMENTSOF(units))
                        return -EINVAL; /* a unit is required: "10" could mean anything */
                if (n > (UINT64_MAX - total) / units[i].usec)
                        return -EINVAL;
                total += n * units[i].usec;
                p = end + strlen(units[i].suffix);
        }
        *ret = total;
        return 0;
}

uint64_t round_size_up(uint64_t bytes) {
        uint64_t step = 1;

        while (bytes / step >= 100)
                step *= 10;
        return bytes % step == 0 ? bytes : (bytes / step + 1) * step;
}

char *format_size(uint64_t bytes, char *buf, size_t len) {
        static const char suffix[] = "kMGTPE";
        double v = (double) bytes;
        int i = -1;

        if (bytes < 1000) {
                snprintf(buf, len, "%lluB", (unsigned long long) bytes);
                return buf;
        }
        while (v >= 999.95 && i < (int) sizeof(suffix) - 2) {
                v /= 1000;
                i++;
        }
        snprintf(buf, len, "%.1f%c", v, suffix[i]);
        return buf;
}

char *format_duration(usec_t usec, char *buf, size_t len) {
        static const struct {
                const char *suffix;
                usec_t usec;
        } units[] = {
                { "d", 86400 * USEC_PER_SEC },
                { "h", 3600 * USEC_PER_SEC },
                { "m", 60 * USEC_PER_SEC },
                { "s", USEC_PER_SEC },
        };
        size_t used = 0, shown = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(units) && shown < 2; i++) {
                usec_t n = usec / units[i].usec;

                if (n == 0 && shown == 0)
                        continue;
                if (n > 0 && used < len)
                        used += (size_t) snprintf(buf + used, len - used, "%s%llu%s",
                                                  shown ? " " : "", (unsigned long long) n,
                                                  units[i].suffix);
                usec -= n * units[i].usec;
                shown++;
        }
        if (shown == 0)
                snprintf(buf, len, "%llums", (unsigned long long) (usec / USEC_PER_MSEC));
        return buf;
}

/* The n bytes at w as text_put shows them: a wrapped line often holds a
 * name from elsewhere (a path, a remote's error). */
static void put_word(FILE *f, const char *w, size_t n) {
        char buf[512];
        char *word = n < sizeof(buf) ? buf : malloc(n + 1);

        if (!word)
                return;
        memcpy(word, w, n);
        word[n] = '\0';
        text_put(f, word);
        if (word != buf)
                free(word);
}

void print_wrapped(FILE *f, const char *text, size_t width, size_t indent) {
        const char *p = text;

        for (;;) {
                const char *end = strchr(p, '\n') ?: p + strlen(p);
                size_t col = 0;

                /* One of text's lines, word by word. */
                while (p < end) {
                        const char *w = p;
                        size_t n, spaces = 0;

                        while (w < end && *w == ' ')
                                w++, spaces++;
                        for (n = 0; w + n < end && w[n] != ' '; n++)
                                ;
                        if (n == 0)
                                break;   /* trailing spaces */
                        /* a line's leading spaces stay; a break takes the spaces before the word */
                        if (col > 0 && col + spaces + n > width) {
                                fprintf(f, "\n%*s", (int) indent, "");
                                col = indent;
                                spaces = 0;
                        }
                        fprintf(f, "%*s", (int) spaces, "");
                        put_word(f, w, n);
                        col += spaces + n;
                        p = w + n;
                }
                fputc('\n', f);
                if (*end == '\0')
                        return;
                p = end + 1;
        }
}

/* Edit distance (insertions, deletions, substitutions, and a swap of two
 * neighbours counted as one) between a and b, at most 32 characters each;
 * longer: SIZE_MAX. */
static size_t distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), d[33][33];

        if (la > 32 || lb > 32)
                return SIZE_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

                        best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
                        best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

const char *closest_word(const char *name, const char *const *allowed) {
        size_t limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2, best = SIZE_MAX;
        const char *found = NULL;

        for (size_t k = 0; allowed[k]; k++) {
                size_t d = distance(name, allowed[k]);

                if (d <= limit && d < best) {
                        best = d;
                        found = allowed[k];
                }
        }
        return found;
}
