/* SPDX-License-Identifier: MIT */
/* Key families (families.h). The legacy key is Digest::to_string of
 * ccache <= 4.12: the digest's first 2 bytes in base16, the other 18 in
 * base32hex (lowercase, no padding: 29 characters); 4.13's is all 20 bytes
 * in base16. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccache/families.h"

#define DIGEST_BYTES 20

static const char b32hex[] = "0123456789abcdefghijklmnopqrstuv";

const char *family_name(Family f) {
        static const char *const names[_FAMILY_MAX] = { "<= 4.12", "4.13", ">= 4.14" };

        return f < _FAMILY_MAX ? names[f] : "?";
}

KeyScheme key_scheme_of(CcacheKind kind, const char *name) {
        return kind == CCACHE_KIND_ENTRY || (kind == CCACHE_KIND_RAW && strchr(name, '_')) ? KEY_SCHEME_HEX
                                                                                          : KEY_SCHEME_LEGACY;
}

const char *key_scheme_name(KeyScheme s) {
        static const char *const names[_KEY_SCHEME_MAX] = {
                "ccache 4.12 or older (names with R/M/W suffixes)",
                "4.13+ names",
        };

        return s < _KEY_SCHEME_MAX ? names[s] : "?";
}

Family family_of(const char *version, KeyScheme scheme) {
        unsigned major, minor;
        char dot;

        if (version && sscanf(version, "%u.%u%c", &major, &minor, &dot) >= 2) {
                if (major < 4 || (major == 4 && minor <= 12))
                        return FAMILY_LEGACY;
                return major == 4 && minor == 13 ? FAMILY_413 : FAMILY_414;
        }
        return scheme == KEY_SCHEME_HEX ? FAMILY_413 : FAMILY_LEGACY;
}

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int b32val(char c) {
        const char *p = c ? strchr(b32hex, c) : NULL;

        return p ? (int) (p - b32hex) : -1;
}

/* key (len 40 hex, or 33 legacy) into the digest; false if it is neither. */
static bool key_digest(const char *key, size_t len, uint8_t d[DIGEST_BYTES]) {
        size_t n = len == 40 ? DIGEST_BYTES : 2;
        unsigned acc = 0, bits = 0, out = 2;

        if (len != 40 && len != 33)
                return false;
        for (size_t i = 0; i < n; i++) {
                int hi = hexval(key[2 * i]), lo = hexval(key[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return false;
                d[i] = (uint8_t) (hi << 4 | lo);
        }
        if (len == 40)
                return true;
        for (size_t i = 4; i < 33; i++) {
                int v = b32val(key[i]);

                if (v < 0)
                        return false;
                acc = acc << 5 | (unsigned) v;
                bits += 5;
                if (bits >= 8 && out < DIGEST_BYTES) {
                        d[out++] = (uint8_t) (acc >> (bits - 8));
                        bits -= 8;
                        acc &= (1u << bits) - 1;
                }
        }
        return out == DIGEST_BYTES && acc == 0;   /* the last character's spare bit is 0 */
}

static void digest_legacy(const uint8_t d[DIGEST_BYTES], char out[34]) {
        unsigned acc = 0, bits = 0;
        size_t n = 4;

        snprintf(out, 5, "%02x%02x", d[0], d[1]);
        for (size_t i = 2; i < DIGEST_BYTES; i++) {
                acc = acc << 8 | d[i];
                bits += 8;
                while (bits >= 5) {
                        out[n++] = b32hex[(acc >> (bits - 5)) & 31];
                        bits -= 5;
                }
                acc &= (1u << bits) - 1;
        }
        if (bits > 0)
                out[n++] = b32hex[(acc << (5 - bits)) & 31];
        out[n] = '\0';
}

bool family_twin_name(const char *dir_digits, const char *name, bool manifest, char *out) {
        char key[48];
        uint8_t d[DIGEST_BYTES];
        size_t depth = 0, len, n = strlen(name);

        for (const char *s = dir_digits; *s; s++)
                if (*s != '/') {
                        if (depth >= 8)
                                return false;
                        key[depth++] = *s;
                }
        if (n > 0 && (name[n - 1] == 'R' || name[n - 1] == 'M'))
                n--;   /* the legacy suffix */
        if (depth + n >= sizeof(key))
                return false;
        memcpy(key + depth, name, n);
        len = depth + n;
        key[len] = '\0';
        if (!key_digest(key, len, d))
                return false;
        if (len == 33) {
                for (size_t i = 0; i < DIGEST_BYTES; i++)
                        snprintf(key + 2 * i, 3, "%02x", d[i]);
                snprintf(out, CCACHE_NAME_MAX, "%s", key + depth);
        } else {
                char legacy[34];

                digest_legacy(d, legacy);
                snprintf(out, CCACHE_NAME_MAX, "%s%c", legacy + depth, manifest ? 'M' : 'R');
        }
        return true;
}

void family_stores_add(FamilyStores *s, Family f, bool twin, uint64_t now) {
        uint32_t hour = (uint32_t) (now / 3600);
        typeof(s->hours[0]) *h = &s->hours[hour % 24];

        if (f >= _FAMILY_MAX)
                return;
        if (h->hour != hour)
                *h = (typeof(*h)) { .hour = hour };
        h->stores[f]++;
        h->twins += twin;
}

bool family_mix(const uint64_t *stores, bool was_mixed) {
        uint64_t total = 0, min = was_mixed ? FAMILY_MIX_MIN_STORES / 2 : FAMILY_MIX_MIN_STORES;
        uint64_t permille = was_mixed ? FAMILY_MIX_PERMILLE / 2 : FAMILY_MIX_PERMILLE;
        unsigned n = 0;

        for (size_t f = 0; f < _FAMILY_MAX; f++)
                total += stores[f];
        for (size_t f = 0; f < _FAMILY_MAX; f++)
                n += stores[f] >= min && stores[f] * 1000 >= total * permille;
        return n > 1;
}

unsigned family_stores_24h(const FamilyStores *s, uint64_t now, uint64_t *ret, uint64_t *ret_twins) {
        uint32_t hour = (uint32_t) (now / 3600);
        unsigned families = 0;

        memset(ret, 0, _FAMILY_MAX * sizeof(*ret));
        *ret_twins = 0;
        for (size_t i = 0; i < 24; i++) {
                if (s->hours[i].hour > hour || s->hours[i].hour + 24 <= hour)
                        continue;
                for (size_t f = 0; f < _FAMILY_MAX; f++)
                        ret[f] += s->hours[i].stores[f];
                *ret_twins += s->hours[i].twins;
        }
        for (size_t f = 0; f < _FAMILY_MAX; f++)
                families += ret[f] > 0;
        return families;
}
