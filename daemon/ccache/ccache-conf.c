/* SPDX-License-Identifier: MIT */
/* ccache.conf: every ccache setting of 4.7 to 4.14 classed by what a line a
 * hostile user planted could do with it, and the rewrite that keeps only the
 * harmless ones. The output never depends on how a ccache version reads
 * indentation: it has no indented line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "ccache/ccache-conf.h"

#define KEY_MAX 64   /* longer keys are no ccache setting; reported truncated */

/* Sorted by name. A shared cache trusts its writers with the content of its
 * entries (any user may replace an entry file: ccache/README.md §6), so settings
 * that only change which entry a compile gets, or how it is stored, give a
 * user nothing new. What the file must never give is a command to run, a
 * file or directory to write or read outside the cache, a program to look
 * for, or a remote to send root's objects to. */
static const struct {
        const char *key;
        CcacheConfClass class;
        const char *why;
} keys[] = {
        { "absolute_paths_in_stderr", CCACHE_CONF_ALLOWABLE, "rewrites paths in compiler messages" },
        /* base_dir: absolute paths below it become relative in what ccache hashes and
         * runs, so builds from other directories share entries (cachectl measure
         * --explain advises it). It runs, reads and writes nothing; root's own file
         * is root's choice, and no other user can write a file root owns. */
        { "base_dir", CCACHE_CONF_ROOT, "rewrites the compiler's command line" },
        { "cache_dir", CCACHE_CONF_NEVER, "would send every compile's files to another directory" },
        { "ceiling_dirs", CCACHE_CONF_ALLOWABLE, "changes which directory-specific ccache.conf files are read" },
        { "ceiling_markers", CCACHE_CONF_ALLOWABLE, "changes which directory-specific ccache.conf files are read" },
        { "compiler", CCACHE_CONF_NEVER, "names the program every compile runs" },
        { "compiler_check", CCACHE_CONF_NEVER, "may name a command every compile runs" },
        { "compiler_type", CCACHE_CONF_ALLOWABLE, "changes how compiler arguments are read" },
        { "compression", CCACHE_CONF_SAFE, "how entries are stored" },
        { "compression_level", CCACHE_CONF_SAFE, "how entries are stored" },
        { "cpp_extension", CCACHE_CONF_ALLOWABLE, "changes how preprocessed output is compiled" },
        { "debug", CCACHE_CONF_NEVER, "writes debug files beside every compile's output" },
        { "debug_dir", CCACHE_CONF_NEVER, "names a directory every compile writes to" },
        { "debug_level", CCACHE_CONF_ALLOWABLE, "only matters with debug" },
        { "depend_mode", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "direct_mode", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "disable", CCACHE_CONF_ALLOWABLE, "turns the cache off for everyone" },
        { "extra_files_to_hash", CCACHE_CONF_ALLOWABLE, "makes every compile read more files" },
        { "file_clone", CCACHE_CONF_ALLOWABLE, "stores uncompressed copies (never hard links: hard_link is never kept)" },
        { "hard_link", CCACHE_CONF_NEVER, "would hard-link cache files, which other users may own and rewrite, "
                                          "into every build tree" },
        { "hash_dir", CCACHE_CONF_SAFE, "which entry a compile gets" },
        { "ignore_headers_in_manifest", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "ignore_options", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "inode_cache", CCACHE_CONF_ALLOWABLE, "changes how files are hashed" },
        { "keep_comments_cpp", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "libexec_dirs", CCACHE_CONF_NEVER, "names directories whose programs every compile may run" },
        { "limit_multiple", CCACHE_CONF_ALLOWABLE, "tunes ccache 4.7's own cleanup" },
        { "log_file", CCACHE_CONF_NEVER, "names a file every compile writes to" },
        { "max_files", CCACHE_CONF_SAFE, "a limit for ccache's own cleanup" },
        { "max_size", CCACHE_CONF_OURS, "a limit for ccache's own cleanup" },
        { "msvc_dep_prefix", CCACHE_CONF_ALLOWABLE, "MSVC only" },
        { "msvc_utf8", CCACHE_CONF_ALLOWABLE, "MSVC only" },
        { "namespace", CCACHE_CONF_SAFE, "which entry a compile gets" },
        { "path", CCACHE_CONF_NEVER, "names where every compile looks for the compiler to run" },
        { "pch_external_checksum", CCACHE_CONF_ALLOWABLE, "changes how hits are found" },
        { "prefix_command", CCACHE_CONF_NEVER, "names a command every compile runs" },
        { "prefix_command_cpp", CCACHE_CONF_NEVER, "names a command every compile runs" },
        { "read_only", CCACHE_CONF_ALLOWABLE, "stops every user storing entries" },
        { "read_only_direct", CCACHE_CONF_ALLOWABLE, "stops every user storing entries" },
        { "recache", CCACHE_CONF_ALLOWABLE, "makes every compile a miss" },
        { "remote_only", CCACHE_CONF_ALLOWABLE, "only matters with a remote storage" },
        { "remote_storage", CCACHE_CONF_NEVER, "sends every compile's results to a remote, or runs a storage helper" },
        { "reshare", CCACHE_CONF_ALLOWABLE, "only matters with a remote storage" },
        { "response_file_format", CCACHE_CONF_ALLOWABLE, "changes how compiler arguments are read" },
        { "run_second_cpp", CCACHE_CONF_NEVER, "= false compiles the preprocessed file from tmp/, which every "
                                               "user may replace" },
        { "safe_dirs", CCACHE_CONF_NEVER, "lets directory-specific ccache.conf files run commands" },
        { "secondary_storage", CCACHE_CONF_NEVER, "sends every compile's results to a remote, or runs a storage helper" },
        { "sloppiness", CCACHE_CONF_SAFE, "which entry a compile gets" },
        { "stats", CCACHE_CONF_ALLOWABLE, "turns ccache's counters and cleanup off" },
        { "stats_log", CCACHE_CONF_NEVER, "names a file every compile writes to" },
        { "temporary_dir", CCACHE_CONF_NEVER, "names a directory every compile writes its temporary files to" },
        { "umask", CCACHE_CONF_OURS, "the mode of what every compile writes to the cache" },
};

static int key_index(const char *key) {
        size_t lo = 0, hi = ELEMENTSOF(keys);

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(key, keys[mid].key);
                if (c == 0)
                        return (int) mid;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return -1;
}

CcacheConfClass ccache_conf_class(const char *key) {
        int i = key_index(key);

        return i < 0 ? CCACHE_CONF_UNKNOWN : keys[i].class;
}

const char *ccache_conf_why(const char *key) {
        int i = key_index(key);

        return i < 0 ? "not a ccache setting" : keys[i].why;
}

/* ccache strips what isspace() calls space; '\n' ends the line first. */
static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void strip(const char **s, size_t *len) {
        while (*len > 0 && is_space(**s))
                (*s)++, (*len)--;
        while (*len > 0 && is_space((*s)[*len - 1]))
                (*len)--;
}

static bool all_of(const char *v, const char *set) {
        return v[strspn(v, set)] == '\0';
}

static bool valid_uint(const char *v) {
        char *end;

        errno = 0;
        return *v && strlen(v) <= 20 && all_of(v, "0123456789") && (strtoull(v, &end, 10), errno == 0);
}

static bool valid_level(const char *v) {
        const char *d = *v == '-' ? v + 1 : v;
        long l;

        if (!*d || strlen(d) > 3 || !all_of(d, "0123456789"))
                return false;
        l = strtol(v, NULL, 10);
        return l >= -128 && l <= 127;
}

/* As ccache parses sizes (ccache/README.md §3): a number, then maybe one of k K M G
 * T, an i and a B. */
static bool valid_size(const char *v) {
        size_t n = strspn(v, "0123456789");

        if (n == 0)
                return false;
        v += n;
        if (*v == '.' && (n = strspn(v + 1, "0123456789")) > 0)
                v += 1 + n;
        v += strspn(v, " \t");
        if (*v && strchr("kKMGT", *v))
                v++;
        if (*v == 'i')
                v++;
        if (*v == 'B')
                v++;
        return *v == '\0';
}

/* A value ccache takes for a setting that is kept from any file. A refused
 * one makes every compile fail ("ccache: error: ..."), and ccache expands
 * $VAR in every value, failing when it is not set: no '$' at all. */
static bool valid_value(const char *key, const char *v) {
        if (strchr(v, '$'))
                return false;
        if (strcmp(key, "compression") == 0 || strcmp(key, "hash_dir") == 0)
                return strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
        if (strcmp(key, "compression_level") == 0)
                return valid_level(v);
        if (strcmp(key, "max_files") == 0)
                return valid_uint(v);
        if (strcmp(key, "max_size") == 0)
                return valid_size(v);
        if (strcmp(key, "umask") == 0)
                return *v && strlen(v) <= 4 && all_of(v, "01234567");
        if (strcmp(key, "sloppiness") == 0)
                return all_of(v, "abcdefghijklmnopqrstuvwxyz0123456789_, \t");
        /* namespace: a name, never "x = y" (a setting hidden in a joined line) */
        return all_of(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+:@/- ");
}

static bool allowed(const char *key, const char *const *allow) {
        for (; allow && *allow; allow++)
                if (strcmp(*allow, key) == 0)
                        return true;
        return false;
}

typedef struct Rewrite {
        const CcacheConfPolicy *p;
        ccache_conf_drop_t drop;
        void *userdata;
        FILE *out;
        bool have_umask, have_max;
        char *ret_old_max;
        size_t old_max_len;
        char *entry;             /* the setting being read, continuation lines joined */
        size_t entry_len, entry_cap;
        unsigned blanks;         /* blank lines inside it, written after it */
} Rewrite;

static void dropped(Rewrite *w, const char *key, size_t len, const char *why) {
        char k[KEY_MAX + 1];

        if (!w->drop)
                return;
        len = len < KEY_MAX ? len : KEY_MAX;
        /* For the journal and an alert's environment: printable ASCII only. */
        for (size_t i = 0; i < len; i++)
                k[i] = key[i] > 0x20 && key[i] < 0x7f ? key[i] : '?';
        k[len] = '\0';
        w->drop(k, why, w->userdata);
}

static int entry_add(Rewrite *w, const char *s, size_t len) {
        size_t need = w->entry_len + len + 2;

        if (need > w->entry_cap) {
                size_t cap = need * 2;
                char *e = realloc(w->entry, cap);
                if (!e)
                        return -ENOMEM;
                w->entry = e;
                w->entry_cap = cap;
        }
        if (w->entry_len > 0)
                w->entry[w->entry_len++] = ' ';
        memcpy(w->entry + w->entry_len, s, len);
        w->entry_len += len;
        w->entry[w->entry_len] = '\0';
        return 0;
}

/* Whether the daemon writes this key itself; the first one is replaced. */
static bool ours(Rewrite *w, const char *key, const char *value) {
        if (strcmp(key, "umask") == 0 && w->p->umask) {
                if (!w->have_umask)
                        fputs("umask = 000\n", w->out);
                w->have_umask = true;
                return true;
        }
        if (strcmp(key, "max_size") == 0 && w->p->max_size) {
                if (!w->have_max) {
                        fprintf(w->out, "max_size = %s\n", w->p->max_size);
                        if (w->ret_old_max && w->old_max_len > 0)
                                snprintf(w->ret_old_max, w->old_max_len, "%s", value);
                }
                w->have_max = true;
                return true;
        }
        return false;
}

/* Keeps or drops the setting read so far. */
static void entry_flush(Rewrite *w) {
        const char *text = w->entry, *eq, *k, *v;
        size_t klen, vlen;
        char key[KEY_MAX + 1];

        if (w->entry_len == 0)
                goto blanks;
        for (size_t i = 0; i < w->entry_len; i++)
                if ((unsigned char) text[i] < 0x20 ? text[i] != '\t' : text[i] == 0x7f) {
                        dropped(w, text, strcspn(text, " \t="), "a line with control characters");
                        goto done;
                }
        eq = memchr(text, '=', w->entry_len);
        if (!eq) {
                dropped(w, text, w->entry_len, "not a \"key = value\" line (ccache would refuse the file)");
                goto done;
        }
        k = text, klen = (size_t) (eq - text);
        v = eq + 1, vlen = w->entry_len - klen - 1;
        strip(&k, &klen);
        strip(&v, &vlen);
        if (klen == 0 || klen > KEY_MAX) {
                dropped(w, k, klen, "not a ccache setting");
                goto done;
        }
        memcpy(key, k, klen);
        key[klen] = '\0';
        ((char *) v)[vlen] = '\0';   /* the entry buffer is ours */
        switch (ccache_conf_class(key)) {
        case CCACHE_CONF_OURS:
                if (ours(w, key, v))
                        break;
                __attribute__((fallthrough));
        case CCACHE_CONF_SAFE:
                if (valid_value(key, v))
                        fprintf(w->out, "%s = %s\n", key, v);
                else
                        dropped(w, k, klen, "a value ccache would refuse (every compile would fail)");
                break;
        case CCACHE_CONF_ROOT:
                /* ccache refuses a relative base_dir; "$HOME/src" it expands first */
                if (w->p->trusted && (v[0] == '\0' || v[0] == '/' || v[0] == '$')) {
                        fprintf(w->out, "%s = %s\n", key, v);
                        break;
                }
                dropped(w, k, klen, w->p->trusted ? "a value ccache would refuse (every compile would fail)"
                                                  : "kept only in a file root wrote");
                break;
        case CCACHE_CONF_ALLOWABLE:
                if (allowed(key, w->p->allow) && w->p->trusted)
                        fprintf(w->out, "%s = %s\n", key, v);
                else
                        dropped(w, k, klen, allowed(key, w->p->allow)
                                                    ? "allowed only in a file root wrote"
                                                    : "not on the safe list nor in ccache_conf_allow");
                break;
        default:
                dropped(w, k, klen, ccache_conf_why(key));
                break;
        }
done:
        w->entry_len = 0;
blanks:
        for (; w->blanks > 0; w->blanks--)
                fputc('\n', w->out);
}

/* One line of the file, without its '\n'. */
static int rewrite_line(Rewrite *w, const char *line, size_t len) {
        const char *s = line;
        size_t n = len;
        bool indented = len > 0 && is_space(line[0]);

        strip(&s, &n);
        if (n == 0) {
                if (w->entry_len > 0)
                        w->blanks++;   /* inside a multi-line value (4.13): skipped there */
                else
                        fputc('\n', w->out);
                return 0;
        }
        if (s[0] == '#') {
                /* An indented comment inside a multi-line value is skipped by
                 * 4.13; one at the start of a line ends the value. */
                if (indented && w->entry_len > 0)
                        return 0;
                entry_flush(w);
                fprintf(w->out, "%.*s\n", (int) n, s);
                return 0;
        }
        if (indented) {
                if (w->entry_len > 0)
                        return entry_add(w, s, n);
                dropped(w, s, strcspn(s, " \t="), "an indented line that continues no setting");
                return 0;
        }
        entry_flush(w);
        return entry_add(w, s, n);
}

char *ccache_conf_update(const char *old, size_t len, const CcacheConfPolicy *p, ccache_conf_drop_t drop,
                         void *userdata, char *ret_old_max, size_t old_max_len) {
        Rewrite w = { .p = p, .drop = drop, .userdata = userdata, .ret_old_max = ret_old_max,
                      .old_max_len = old_max_len };
        char *out = NULL;
        size_t size = 0;
        int r = 0;

        if (ret_old_max && old_max_len > 0)
                ret_old_max[0] = '\0';
        w.out = open_memstream(&out, &size);
        if (!w.out)
                return NULL;
        for (size_t i = 0; old && i < len && r == 0;) {
                const char *nl = memchr(old + i, '\n', len - i);
                size_t n = nl ? (size_t) (nl - (old + i)) : len - i;

                r = rewrite_line(&w, old + i, n);
                i += n + 1;
        }
        if (r == 0)
                entry_flush(&w);
        if (p->max_size && !w.have_max)
                fprintf(w.out, "max_size = %s\n", p->max_size);
        if (p->umask && !w.have_umask)
                fputs("umask = 000\n", w.out);
        free(w.entry);
        if (fclose(w.out) != 0 || r < 0) {
                free(out);
                return NULL;
        }
        return out;
}

bool ccache_conf_get(const char *text, size_t len, const char *key, char *buf, size_t buflen) {
        size_t klen = strlen(key);

        for (size_t i = 0; text && i < len;) {
                const char *line = text + i, *nl = memchr(line, '\n', len - i), *k, *v;
                size_t n = nl ? (size_t) (nl - line) : len - i, kl, vl;
                const char *eq = memchr(line, '=', n);

                i += n + 1;
                if (!eq || n == 0 || is_space(line[0]) || line[0] == '#')
                        continue;
                k = line, kl = (size_t) (eq - line);
                v = eq + 1, vl = n - kl - 1;
                strip(&k, &kl);
                strip(&v, &vl);
                if (kl != klen || memcmp(k, key, klen) != 0)
                        continue;
                if (buflen > 0)
                        snprintf(buf, buflen, "%.*s", (int) (vl < buflen ? vl : buflen - 1), v);
                return true;
        }
        return false;
}

char *ccache_format_size(uint64_t bytes, char *buf, size_t len) {
        static const struct {
                char suffix;
                uint64_t unit;
        } units[] = { { 'T', 1000000000000ULL }, { 'G', 1000000000ULL }, { 'M', 1000000ULL }, { 'k', 1000ULL } };

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (bytes >= units[i].unit && bytes % units[i].unit == 0) {
                        snprintf(buf, len, "%llu%c", (unsigned long long) (bytes / units[i].unit), units[i].suffix);
                        return buf;
                }
        /* Not a whole number of kB: round up to one, so the cap still holds
         * (without overflowing near 2^64). */
        snprintf(buf, len, "%lluk", (unsigned long long) (bytes / 1000 + (bytes % 1000 != 0)));
        return buf;
}

char *ccache_conf_max_size(uint64_t cap, char *buf, size_t len) {
        uint64_t v = cap > CCACHE_CONF_MAX_SIZE_MAX / CCACHE_CONF_MAX_SIZE_TIMES ? CCACHE_CONF_MAX_SIZE_MAX
                                                                                : cap * CCACHE_CONF_MAX_SIZE_TIMES;

        return ccache_format_size(v, buf, len);
}

/* Is line (len bytes) a setting other than umask and max_size? Its key's
 * length into *ret_klen. */
static bool setting_line(const char *line, size_t len, size_t *ret_klen) {
        const char *eq = memchr(line, '=', len);
        size_t k;

        if (len == 0 || line[0] == '#' || is_space(line[0]) || !eq)
                return false;
        for (k = (size_t) (eq - line); k > 0 && is_space(line[k - 1]); k--)
                ;
        if (k == 0 || (k == 5 && memcmp(line, "umask", 5) == 0) || (k == 8 && memcmp(line, "max_size", 8) == 0))
                return false;
        *ret_klen = k;
        return true;
}

char *ccache_conf_settings(const char *text, char *buf, size_t len) {
        size_t used = 0, klen;

        if (len == 0)
                return buf;
        buf[0] = '\0';
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);

                if (setting_line(p, n, &klen)) {
                        if (used + n + 2 > len)
                                break;   /* whole lines only */
                        memcpy(buf + used, p, n);
                        used += n;
                        buf[used++] = '\n';
                        buf[used] = '\0';
                }
                p += n + (nl ? 1 : 0);
        }
        return buf;
}

/* The value of key (klen bytes) in settings (ccache_conf_settings), or NULL;
 * its length into *ret_len. */
static const char *setting_value(const char *settings, const char *key, size_t klen, size_t *ret_len) {
        size_t k;

        for (const char *p = settings; *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);

                if (setting_line(p, n, &k) && k == klen && memcmp(p, key, k) == 0) {
                        const char *v = (const char *) memchr(p, '=', n) + 1;
                        size_t vlen = n - (size_t) (v - p);

                        strip(&v, &vlen);
                        *ret_len = vlen;
                        return v;
                }
                p += n + (nl ? 1 : 0);
        }
        return NULL;
}

/* Notes key's change from old to new into buf at *used; counts it. */
static void note_change(const char *key, size_t klen, const char *old, const char *new, char *buf, size_t len,
                        size_t *used, unsigned *n) {
        const char *ov, *nv;
        size_t ol = 0, nl = 0;
        int k;

        ov = setting_value(old, key, klen, &ol);
        nv = setting_value(new, key, klen, &nl);
        if ((ov && nv && ol == nl && memcmp(ov, nv, ol) == 0) || (!ov && !nv))
                return;
        if ((*n)++ > 0 || *used >= len)
                return;
        k = snprintf(buf, len, "%.*s: %s%.*s%s -> %s%.*s%s", (int) klen, key, ov ? "\"" : "", ov ? (int) ol : 7,
                     ov ? ov : "(unset)", ov ? "\"" : "", nv ? "\"" : "", nv ? (int) nl : 7, nv ? nv : "(unset)",
                     nv ? "\"" : "");
        *used = k < 0 ? 0 : (size_t) k;
}

/* Each key of settings, to note_change. */
static void changes_of(const char *settings, const char *old, const char *new, char *buf, size_t len, size_t *used,
                       unsigned *n, bool only_gone) {
        size_t klen, ignored;

        for (const char *p = settings; *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);

                if (setting_line(p, l, &klen) && (!only_gone || !setting_value(new, p, klen, &ignored)))
                        note_change(p, klen, old, new, buf, len, used, n);
                p += l + (nl ? 1 : 0);
        }
}

char *ccache_conf_change(const char *old, const char *new, char *buf, size_t len) {
        size_t used = 0;
        unsigned n = 0;

        if (len == 0)
                return buf;
        buf[0] = '\0';
        changes_of(new, old, new, buf, len, &used, &n, false);
        changes_of(old, old, new, buf, len, &used, &n, true);
        if (n > 1 && used < len)
                snprintf(buf + used, len - used, ", and %u more", n - 1);
        return buf;
}
