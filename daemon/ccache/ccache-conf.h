/* SPDX-License-Identifier: MIT */
/* ccache.conf, the file every user's ccache reads in a shared cache (root's
 * compiles included): which settings may stay in it and the rewrite that
 * keeps only those. Pure: no I/O (upkeep.c reads and writes the file). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a ccache setting may do in a file any user might have written. Every
 * key of ccache 4.7 to 4.14 is classed (ccache-conf.c says why, key by key);
 * anything else is UNKNOWN. */
typedef enum CcacheConfClass {
        CCACHE_CONF_UNKNOWN,    /* not a ccache setting: dropped */
        CCACHE_CONF_OURS,       /* umask, max_size: the daemon writes them (else SAFE) */
        CCACHE_CONF_SAFE,       /* kept from any file: cannot run or write anything */
        CCACHE_CONF_ROOT,       /* kept where root wrote the file: root's choice for every build,
                                 * and a line no other user can plant (base_dir) */
        CCACHE_CONF_ALLOWABLE,  /* harmless but changes everyone's builds: kept only when the
                                 * admin allows it (ccache_conf_allow) and root wrote the file */
        CCACHE_CONF_NEVER,      /* runs a command, writes or reads outside the cache, or reaches
                                 * a remote: never kept */
} CcacheConfClass;

/* The class of ccache setting key, and (for NEVER and UNKNOWN) a few words
 * saying why it is dropped. */
CcacheConfClass ccache_conf_class(const char *key);
const char *ccache_conf_why(const char *key);

/* How to rewrite a ccache.conf. */
typedef struct CcacheConfPolicy {
        const char *max_size;        /* write "max_size = MAX_SIZE"; NULL: keep the file's own */
        bool umask;                  /* write "umask = 000"; false: keep the file's own */
        bool trusted;                /* the daemon's user wrote the file: allow[] counts */
        const char *const *allow;    /* ALLOWABLE keys the admin allows, NULL-terminated; may be NULL */
} CcacheConfPolicy;

/* Called once per setting dropped: its key (or the start of a line that is
 * not "key = value") and why. */
typedef void (*ccache_conf_drop_t)(const char *key, const char *why, void *userdata);

/* Returns the text of a ccache.conf that every version of ccache reads the
 * same way and that holds only what policy p keeps of old (len bytes, may be
 * NULL): one "key = value" line per kept setting (an indented continuation
 * line, ccache 4.13+, joined to its setting), comments and blank lines as
 * they were but never indented, "umask = 000" and "max_size = ..." in place
 * of the first such line (appended when missing, later ones dropped). A kept
 * setting's value must be one ccache accepts (a bad one fails every compile).
 * Everything else is reported through drop (may be NULL). malloc'd; NULL on
 * ENOMEM. ret_old_max (may be NULL) gets the value of the first max_size
 * setting, "" if none. Applying it twice gives the same text. */
char *ccache_conf_update(const char *old, size_t len, const CcacheConfPolicy *p, ccache_conf_drop_t drop,
                         void *userdata, char *ret_old_max, size_t old_max_len);

/* The value of the first "key = value" line of text (len bytes; a line
 * that starts with a blank continues another and is skipped) into buf,
 * stripped and cut to len - 1 bytes. Returns true if key is set. */
bool ccache_conf_get(const char *text, size_t len, const char *key, char *buf, size_t buflen);

/* A size as ccache.conf wants it, exact and with a unit: "120G", "1500M";
 * not a whole number of kB: rounded up to one. Returns buf. */
char *ccache_format_size(uint64_t bytes, char *buf, size_t len);

/* The largest max_size the daemon writes: every ccache version parses a size
 * through a double into a uint64_t, and a value past 2^64 would come out as
 * garbage or 0, which means no limit at all. */
#define CCACHE_CONF_MAX_SIZE_MAX 18000000000000000000ULL   /* "18000000T" */

/* The max_size for ccache.conf of a cache capped at cap bytes: 20 x cap,
 * saturating at CCACHE_CONF_MAX_SIZE_MAX. ccache 4.7 cleans one level-1
 * directory whenever its counter passes max_size/16 (ccache/README.md §5),
 * and one directory may hold the whole cache (a small cache, a few big
 * entries): max_size/16 = 1.25 x cap stays above any directory of a cache
 * the daemon holds under its cap, with a quarter to spare for a burst the
 * trim has not caught up with. ccache 4.8+ cleans only past max_size for the
 * whole cache: never either. The threshold cannot follow the largest
 * directory instead: 4.7 checks right after its own store, before the
 * daemon sees it. Formatted into buf as ccache_format_size does; returns
 * buf. */
#define CCACHE_CONF_MAX_SIZE_TIMES 20U
char *ccache_conf_max_size(uint64_t cap, char *buf, size_t len);

/* The settings of text (a ccache.conf as ccache_conf_update writes it: one
 * "key = value" line each) but umask and max_size, which the daemon writes:
 * those lines, in order, into buf (len bytes; whole lines only, the rest
 * left out). For telling when someone changed the settings. Returns buf. */
char *ccache_conf_settings(const char *text, char *buf, size_t len);

/* How the settings changed from old to new (both from
 * ccache_conf_settings), in words: the first key that changed, as
 * `namespace: "" -> "x"` (a key not set: (unset)), then ", and N more" if
 * others did; "" if none did. Returns buf. */
char *ccache_conf_change(const char *old, const char *new, char *buf, size_t len);
