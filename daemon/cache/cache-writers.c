/* SPDX-License-Identifier: MIT */
/* Who writes a cache: each entry's header (ccache-header.h) names the
 * ccache version and namespace that wrote it. Its writer is kept as the
 * file's tag byte in the account (1 byte a file); a small table gives each
 * (version, namespace) its tag, with the stores and hits of the last 24 h.
 * Headers are read as entries are stored, at a hit for one not read yet,
 * and for what the scans found by a pass below every other job (CACHE_WRITERS_PRIORITY): never before
 * READY, never a whole cache in one loop iteration. The table has
 * CACHE_WRITERS_MAX slots, so that planted headers cannot grow it; a writer
 * whose entries are all gone gives its slot up when the table is full
 * (reclaim), and the entries counted beyond the table are read again. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/human.h"
#include "base/log.h"
#include "base/slice.h"
#include "base/status-keys.h"
#include "cache/cache-alert.h"
#include "cache/cache-counts.h"
#include "cache/cache-internal.h"
#include "cache/cache-writers.h"
#include "ccache/ccache-header.h"
#include "evict/evict.h"
#include "os/beneath.h"

struct CacheWriter {
        bool used;                        /* the slot names a writer (tags from CACHE_WRITER_FIRST) */
        char version[256], ns[256];       /* "" for the tags below CACHE_WRITER_FIRST */
        struct {
                uint32_t hour, stores, hits;
        } hours[24];                      /* by unix hour % 24 */
};

/* Frees the slots of the writers that hold no entry any more (counted now:
 * one pass over the account), their 24 h figures with them. When one is
 * freed and entries are counted beyond the table, the pass reads those
 * again: their writer may get a slot now. Returns the slots freed. */
static size_t writers_reclaim(Cache *c) {
        size_t freed = 0;

        c->writers_reclaim_at = event_now(c->event, CLOCK_MONOTONIC) + CACHE_WRITERS_RECLAIM_USEC;
        c->ws_at = 0;   /* counted now: a count of this loop iteration may miss a tag just handed out */
        cache_counts_refresh(c, 0);
        for (size_t t = CACHE_WRITER_FIRST; t < CACHE_WRITER_FIRST + c->n_writers; t++)
                if (c->writers[t].used && c->tag_files[t] == 0) {
                        c->writers[t] = (CacheWriter) { .used = false };
                        freed++;
                }
        if (freed > 0 && c->tag_files[CACHE_WRITER_OTHER] > 0 && !c->remote) {
                c->writers_retry_other = true;
                cache_writers_rescan(c);
        }
        return freed;
}

/* The writer of version and namespace ns in the table, or its new slot;
 * 0 if the table is full. */
static size_t writer_slot(Cache *c, const char *version, const char *ns) {
        size_t free_slot = 0;

        for (size_t t = CACHE_WRITER_FIRST; t < CACHE_WRITER_FIRST + c->n_writers; t++)
                if (!c->writers[t].used) {
                        if (!free_slot)
                                free_slot = t;
                } else if (strcmp(c->writers[t].version, version) == 0 && strcmp(c->writers[t].ns, ns) == 0)
                        return t;
        if (free_slot)
                return free_slot;
        return c->n_writers < CACHE_WRITERS_MAX ? CACHE_WRITER_FIRST + c->n_writers++ : 0;
}

/* The tag of the writer of h (NULL: no header), added to the table if new
 * and there is room (made by a reclaim, at most every
 * CACHE_WRITERS_RECLAIM_USEC). */
static uint8_t writer_tag(Cache *c, const CcacheHeader *h) {
        size_t t;

        if (!h)
                return CACHE_WRITER_UNKNOWN;
        t = writer_slot(c, h->version, h->ns);
        if (t == 0 && event_now(c->event, CLOCK_MONOTONIC) >= c->writers_reclaim_at && writers_reclaim(c) > 0)
                t = writer_slot(c, h->version, h->ns);
        if (t == 0)
                return CACHE_WRITER_OTHER;
        if (!c->writers[t].used) {
                _Static_assert(sizeof(c->writers[t].version) == sizeof(h->version) &&
                               sizeof(c->writers[t].ns) == sizeof(h->ns), "a header's names fit the table");
                c->writers[t] = (CacheWriter) { .used = true };
                memcpy(c->writers[t].version, h->version, sizeof(h->version));
                memcpy(c->writers[t].ns, h->ns, sizeof(h->ns));
        }
        return (uint8_t) t;
}

/* The tag of the entry open as fd (closed here; < 0: it could not be
 * opened), and its header into *ret (NULL: not wanted) when it has one;
 * returns the tag. Raw files have no header of their own. */
static uint8_t read_header_tag(Cache *c, CcacheKind kind, int fd, CcacheHeader *ret, bool *ret_ok) {
        CcacheHeader h;
        int r;

        if (ret_ok)
                *ret_ok = false;
        if (fd < 0)
                return CACHE_WRITER_UNKNOWN;
        r = kind == CCACHE_KIND_RAW ? -EBADMSG : ccache_header_read(fd, &h);
        close(fd);
        if (r >= 0 && ret) {
                *ret = h;
                *ret_ok = true;
        }
        return writer_tag(c, r < 0 ? NULL : &h);
}

static uint8_t read_tag(Cache *c, CcacheKind kind, int fd) {
        return read_header_tag(c, kind, fd, NULL, NULL);
}

/* A store's key family, and whether the other scheme's entry of its key is
 * in the same directory (a duplicate of another family's entry). */
static void count_family(Cache *c, DirId d, const char *name, CcacheKind kind, const CcacheHeader *h, bool have_h) {
        char digits[16], twin[CCACHE_NAME_MAX];
        bool dup;
        bool manifest = kind == CCACHE_KIND_MANIFEST || (have_h && h->type == 1);

        if (kind == CCACHE_KIND_RAW)
                return;
        dup = account_dir_path(c->account, d, digits, sizeof(digits)) == 0 &&
              family_twin_name(digits, name, manifest, twin) && account_file_find(c->account, d, twin) != FILE_NONE;
        family_stores_add(&c->families, family_of(have_h ? h->version : NULL, key_scheme_of(kind, name)), dup,
                          event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC);
}

static int open_entry(int dirfd, const char *name) {
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

static void count(Cache *c, uint8_t tag, bool store) {
        uint32_t hour = (uint32_t) (event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC / 3600);
        CacheWriter *w = &c->writers[tag < CACHE_WRITER_TAGS ? tag : CACHE_WRITER_OTHER];
        typeof(w->hours[0]) *h = &w->hours[hour % ELEMENTSOF(w->hours)];

        if (h->hour != hour)
                *h = (typeof(*h)) { .hour = hour };
        if (store)
                h->stores++;
        else
                h->hits++;
}

void cache_writers_stored(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd) {
        FileId f = account_file_find(c->account, d, name);
        CcacheHeader h;
        bool have_h;
        uint8_t tag = read_header_tag(c, kind, open_entry(dirfd, name), &h, &have_h);

        account_file_set_tag(c->account, f, tag);
        count(c, tag, true);
        count_family(c, d, name, kind, &h, have_h);
}

void cache_writers_hit(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd) {
        FileId f = account_file_find(c->account, d, name);
        uint8_t tag = account_file_tag(c->account, f);

        if (tag == CACHE_WRITER_UNREAD) {
                tag = read_tag(c, kind, open_entry(dirfd, name));
                account_file_set_tag(c->account, f, tag);
        }
        count(c, tag, false);
}

void cache_writers_moved(Cache *c, DirId d, const char *name, CcacheKind kind, int dirfd) {
        FileId f = account_file_find(c->account, d, name);

        if (c->remote || !scan_queue_scanned(c->scans) || f == FILE_NONE ||
            account_file_tag(c->account, f) != CACHE_WRITER_UNREAD)
                return;
        account_file_set_tag(c->account, f, read_tag(c, kind, open_entry(dirfd, name)));
}

/* One slice of the pass (CACHE_WRITERS_SLICE_USEC), from where the last one
 * stopped, and CACHE_WRITERS_LOOK files looked at at most (a pass again
 * over a cache read already costs a tag byte a file): the entries among
 * them not read yet (and, after a reclaim, those beyond the table) are
 * read, each opened beneath its directory, itself opened beneath the root
 * (once for the files of one directory that follow each other, as a scan
 * lists them). At the end, once more from the start if the scans found
 * files meanwhile. */
int cache_writers_pass(Cache *c, int root) {
        FileId limit = account_file_limit(c->account);
        DirId dir = DIR_NONE;
        int dirfd = -ENOENT;
        SliceBudget slice;

        slice_begin(&slice, CACHE_WRITERS_SLICE_USEC, CACHE_WRITERS_SLICE_EVERY);
        for (unsigned looked = 0; root >= 0 && c->writers_next < limit && looked < CACHE_WRITERS_LOOK;
             looked++, c->writers_next++) {
                FileId f = c->writers_next;
                uint8_t tag = account_file_tag(c->account, f);
                char rel[PATH_MAX], name[CCACHE_NAME_MAX];
                FileInfo fi;

                if ((tag != CACHE_WRITER_UNREAD && !(tag == CACHE_WRITER_OTHER && c->writers_retry_other)) ||
                    account_file_info(c->account, f, &fi) < 0 || !ccache_kind_is_entry(fi.kind) ||
                    account_file_name(c->account, f, name, sizeof(name)) < 0)
                        continue;
                if (fi.dir != dir) {
                        if (dirfd >= 0)
                                close(dirfd);
                        dir = fi.dir;
                        dirfd = account_dir_path(c->account, dir, rel, sizeof(rel)) < 0 ? -ENAMETOOLONG
                                                                                        : beneath_open_dir(root, rel);
                }
                account_file_set_tag(c->account, f,
                                     read_tag(c, fi.kind, dirfd < 0 ? dirfd : beneath_open_file(dirfd, name)));
                if (slice_over(&slice)) {
                        c->writers_next++;
                        break;
                }
        }
        if (dirfd >= 0)
                close(dirfd);
        if (root >= 0 && c->writers_next >= limit && c->writers_again) {
                c->writers_again = false;
                c->writers_next = 0;
                return 0;
        }
        if (root < 0 || c->writers_next >= limit) {
                c->writers_retry_other = false;
                c->ws_at = 0;   /* the writers' figures as the pass left them, at the next look */
                return sd_event_source_set_enabled(c->writers_pass, SD_EVENT_OFF);
        }
        return 0;
}

/* A pass already running goes on and starts again from the first file at
 * its end, so that the files behind it are read too: scans finding files
 * faster than the pass reads never keep it from its end. */
void cache_writers_rescan(Cache *c) {
        int enabled = SD_EVENT_OFF;

        if (c->remote)
                return;   /* reading a share's headers would move the atimes its LRU may go by */
        if (sd_event_source_get_enabled(c->writers_pass, &enabled) >= 0 && enabled != SD_EVENT_OFF) {
                c->writers_again = true;
                return;
        }
        c->writers_next = 0;
        (void) sd_event_source_set_enabled(c->writers_pass, SD_EVENT_ON);
}

int cache_writers_init(Cache *c, sd_event_handler_t pass) {
        int r;

        c->writers = calloc(CACHE_WRITER_TAGS, sizeof(*c->writers));
        if (!c->writers)
                return -ENOMEM;
        r = sd_event_add_defer(c->event, &c->writers_pass, pass, c);
        if (r < 0)
                return r;
        (void) sd_event_source_set_priority(c->writers_pass, CACHE_WRITERS_PRIORITY);
        (void) sd_event_source_set_description(c->writers_pass, "cache-writers");
        return sd_event_source_set_enabled(c->writers_pass, SD_EVENT_OFF);
}

void cache_writers_done(Cache *c) {
        c->writers_pass = sd_event_source_disable_unref(c->writers_pass);
        free(c->writers);
        c->writers = NULL;
}

static void hours_24h(const CacheWriter *w, uint32_t hour, uint64_t *ret_stores, uint64_t *ret_hits) {
        *ret_stores = *ret_hits = 0;
        for (size_t i = 0; i < ELEMENTSOF(w->hours); i++)
                if (w->hours[i].hour + 24 > hour && w->hours[i].hour <= hour) {
                        *ret_stores += w->hours[i].stores;
                        *ret_hits += w->hours[i].hits;
                }
}

json_object *cache_writers_json(Cache *c) {
        uint32_t hour = (uint32_t) (event_now(c->event, CLOCK_REALTIME) / USEC_PER_SEC / 3600);
        json_object *a = json_object_new_array();

        for (size_t t = CACHE_WRITER_UNKNOWN; t < CACHE_WRITER_FIRST + c->n_writers; t++) {
                const CacheWriter *w = &c->writers[t];
                json_object *o;
                uint64_t stores, hits;

                if (t >= CACHE_WRITER_FIRST && !w->used)
                        continue;
                hours_24h(w, hour, &stores, &hits);
                if (c->tag_files[t] == 0 && stores == 0 && hits == 0)
                        continue;
                o = json_object_new_object();
                JSON_ADD(o, STATUS_WRITER_CCACHE_VERSION,
                         t >= CACHE_WRITER_FIRST ? json_object_new_string(w->version) : NULL);
                JSON_ADD(o, STATUS_WRITER_NAMESPACE, t >= CACHE_WRITER_FIRST ? json_object_new_string(w->ns) : NULL);
                if (t < CACHE_WRITER_FIRST)
                        JSON_ADD(o, STATUS_WRITER_HEADER, json_object_new_string(t == CACHE_WRITER_UNKNOWN
                                                                                         ? "unreadable"
                                                                                         : "beyond the table"));
                JSON_ADD(o, STATUS_WRITER_ENTRIES, JSON_U64(c->tag_files[t]));
                JSON_ADD(o, STATUS_WRITER_BYTES, JSON_U64(c->tag_bytes[t]));
                JSON_ADD(o, STATUS_WRITER_STORES_24H, JSON_U64(stores));
                JSON_ADD(o, STATUS_WRITER_HITS_24H, JSON_U64(hits));
                json_object_array_add(a, o);
        }
        return a;
}

/* Does tag t name a writer of version (NULL: any) and namespace (NULL: any)? */
static bool writer_matches(const Cache *c, size_t t, const char *version, const char *ns) {
        return t >= CACHE_WRITER_FIRST && t < CACHE_WRITER_FIRST + c->n_writers && c->writers[t].used &&
               (!version || strcmp(c->writers[t].version, version) == 0) && (!ns || strcmp(c->writers[t].ns, ns) == 0);
}

uint64_t cache_writers_unread(const Cache *c) {
        return c->tag_files[CACHE_WRITER_UNREAD] + (c->writers_retry_other ? c->tag_files[CACHE_WRITER_OTHER] : 0);
}

/* Before a purge: entries beyond the table may be the purged writer's, so
 * the slots of writers gone are given up first, and those entries read
 * again. Entries left unread (whatever path left them) get the pass
 * started: "try again" always comes true. */
uint64_t cache_writers_pending(Cache *c) {
        int enabled = SD_EVENT_OFF;

        cache_counts_refresh(c, 0);
        if (c->tag_files[CACHE_WRITER_OTHER] > 0 && !c->writers_retry_other)
                (void) writers_reclaim(c);
        if (c->tag_files[CACHE_WRITER_UNREAD] > 0 && !c->remote &&
            sd_event_source_get_enabled(c->writers_pass, &enabled) >= 0 && enabled == SD_EVENT_OFF) {
                log_debug("Cache %s: %llu entries not read yet and no pass running: starting one.", c->config->name,
                          (unsigned long long) c->tag_files[CACHE_WRITER_UNREAD]);
                cache_writers_rescan(c);
        }
        return cache_writers_unread(c);
}

int cache_writers_plan(Cache *c, const char *version, const char *ns, EvictPlan *ret) {
        bool match[256] = { false };
        int r;

        cache_counts_refresh(c, 0);
        if (cache_writers_unread(c) > 0)
                return -EBUSY;   /* who wrote some entries is not known yet */
        for (size_t t = 0; t < 256; t++)
                match[t] = writer_matches(c, t, version, ns);
        r = evict_plan_tagged(c->account, match, ret);
        if (r < 0)
                return r;
        ret->beyond_table = c->tag_files[CACHE_WRITER_OTHER];   /* writers unknown: some may be the one asked for */
        return 0;
}

/* The bytes each family holds, from the entries by writer (unknown ones
 * left out). */
static void family_bytes(const Cache *c, uint64_t ret[_FAMILY_MAX]) {
        memset(ret, 0, _FAMILY_MAX * sizeof(*ret));
        for (size_t t = CACHE_WRITER_FIRST; t < CACHE_WRITER_FIRST + c->n_writers; t++)
                if (c->writers[t].used)
                        ret[family_of(c->writers[t].version, KEY_SCHEME_LEGACY)] += c->tag_bytes[t];
}

void cache_writers_check(Cache *c, usec_t now) {
        uint64_t stores[_FAMILY_MAX], bytes[_FAMILY_MAX], twins;
        char message[512], size[32];
        size_t len;
        bool mix;

        (void) family_stores_24h(&c->families, now / USEC_PER_SEC, stores, &twins);
        mix = family_mix(stores, c->version_mix);
        if (mix == c->version_mix)
                return;
        c->version_mix = mix;
        if (!c->version_mix) {
                cache_alert_level(c, ALERT_CACHE_VERSION_MIX, LOG_NOTICE, "ok",
                                  "Cache %s: one key family of ccache versions has stored for 24 hours "
                                  "(others, if any, stored fewer than %d entries or under %.1f %% of them).",
                                  c->config->name, FAMILY_MIX_MIN_STORES / 2, FAMILY_MIX_PERMILLE / 20.0);
                return;
        }
        cache_counts_refresh(c, 0);
        family_bytes(c, bytes);
        len = (size_t) snprintf(message, sizeof(message), "Cache %s: ccache versions of different key families store into it "
                                "(their entries never hit each other):", c->config->name);
        for (size_t f = 0; f < _FAMILY_MAX && len < sizeof(message); f++)
                if (stores[f] || bytes[f])
                        len += (size_t) snprintf(message + len, sizeof(message) - len, " %s holds %s (%llu stores in 24 h);",
                                                 family_name((Family) f), format_size(bytes[f], size, sizeof(size)),
                                                 (unsigned long long) stores[f]);
        if (len < sizeof(message))
                snprintf(message + len, sizeof(message) - len, " %llu stores in 24 h were duplicates of another family's entry.",
                         (unsigned long long) twins);
        cache_alert_level(c, ALERT_CACHE_VERSION_MIX, LOG_WARNING, "warning", "%s", message);
}

json_object *cache_families_json(Cache *c, usec_t now) {
        uint64_t stores[_FAMILY_MAX], bytes[_FAMILY_MAX], twins;
        json_object *o = json_object_new_object(), *a = json_object_new_array();

        (void) family_stores_24h(&c->families, now / USEC_PER_SEC, stores, &twins);
        family_bytes(c, bytes);
        for (size_t f = 0; f < _FAMILY_MAX; f++) {
                json_object *e;

                if (!stores[f] && !bytes[f])
                        continue;
                e = json_object_new_object();
                JSON_ADD(e, STATUS_FAMILY_FAMILY, json_object_new_string(family_name((Family) f)));
                JSON_ADD(e, STATUS_FAMILY_BYTES, JSON_U64(bytes[f]));
                JSON_ADD(e, STATUS_FAMILY_STORES_24H, JSON_U64(stores[f]));
                json_object_array_add(a, e);
        }
        JSON_ADD(o, STATUS_FAMILIES_FAMILIES, a);
        JSON_ADD(o, STATUS_FAMILIES_DUPLICATE_STORES_24H, JSON_U64(twins));
        JSON_ADD(o, STATUS_FAMILIES_MIXED, json_object_new_boolean(c->version_mix));
        return o;
}
