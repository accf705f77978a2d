/* SPDX-License-Identifier: MIT */
/* Key families (ccache/README.md §1, §8, §9): ccache up to 4.12 names an entry by a
 * 33-character key (4 hex digits, 29 base32hex) with an R/M suffix; 4.13
 * by 40 hex digits, and renames a legacy entry it hits, so a 4.12 writer
 * misses it next time and stores it again; 4.14+ no longer looks up legacy
 * names at all. Writers of two families in one cache store the same
 * results twice. Pure: no I/O, no clock reads. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccache/ccache.h"

typedef enum Family {
        FAMILY_LEGACY,          /* ccache <= 4.12 */
        FAMILY_413,             /* 4.13 */
        FAMILY_414,             /* 4.14 and later */
        _FAMILY_MAX,
} Family;

/* "<= 4.12", "4.13", ">= 4.14". */
const char *family_name(Family f);

/* How an entry's name is formed, which the name alone tells (no header
 * read): up to 4.12 every name ends in R, M or <n>W (FAMILY_LEGACY's);
 * 4.13+ names an entry by 40 hex digits with no suffix, and a raw file
 * <key>_<nn>. */
typedef enum KeyScheme {
        KEY_SCHEME_LEGACY,
        KEY_SCHEME_HEX,
        _KEY_SCHEME_MAX,
} KeyScheme;

KeyScheme key_scheme_of(CcacheKind kind, const char *name);
/* For a person: "ccache 4.12 or older (names with R/M/W suffixes)", "4.13+ names". */
const char *key_scheme_name(KeyScheme s);

/* The family of an entry written by ccache version (from its header; NULL
 * or not a release number, such as a development build's commit: told by
 * its name's scheme instead, a hex name being 4.13's). */
Family family_of(const char *version, KeyScheme scheme);

/* The name the same entry has in the other naming scheme, in the same
 * directory: dir_digits the hex digits of its directories ("ab", or "a/b"),
 * name its file name, manifest whether it is a manifest (for the legacy
 * suffix). Writes it to out (CCACHE_NAME_MAX) and returns true, or false
 * for a name that is no result or manifest key of either scheme. */
bool family_twin_name(const char *dir_digits, const char *name, bool manifest, char *out);

/* Stores by family over the last 24 hours, and how many of them were of a
 * key another family's entry already had. */
typedef struct FamilyStores {
        struct {
                uint32_t hour;          /* unix hours */
                uint32_t stores[_FAMILY_MAX];
                uint32_t twins;
        } hours[24];
} FamilyStores;

/* A store of family f at now (unix seconds); twin: the other scheme's
 * entry of its key was there. */
void family_stores_add(FamilyStores *s, Family f, bool twin, uint64_t now);

/* The stores by family (ret, _FAMILY_MAX) and the twins (ret_twins) over
 * the 24 hours before now; returns how many families stored. */
unsigned family_stores_24h(const FamilyStores *s, uint64_t now, uint64_t *ret, uint64_t *ret_twins);

/* cache-version-mix: a family takes part in a mix when, over 24 h, it
 * stored FAMILY_MIX_MIN_STORES entries or more and at least
 * FAMILY_MIX_PERMILLE / 1000 of all stores. Not one stray entry: a single
 * entry a user plants (or a colleague's one-off compile with another
 * ccache) is no mix worth a human; 10 stores are 5 compilations of ccache
 * 4.x (a manifest and a result each), the smallest real build. Not a
 * sliver: under 1 % of the stores, the other family's duplicates cost the
 * cache under 1 % of its space and hits. Anyone who may write the cache
 * may run another ccache for real, so this bounds strays, not intent. Once
 * mixed (was_mixed), half of each keeps a family in, so that a family
 * near the threshold does not flap. Is stores (_FAMILY_MAX) a mix? */
#define FAMILY_MIX_MIN_STORES 10
#define FAMILY_MIX_PERMILLE 10
bool family_mix(const uint64_t *stores, bool was_mixed);
