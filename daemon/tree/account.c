/* SPDX-License-Identifier: MIT */
/* The accounting table. Files: fixed-size records in 2 MiB chunks (no copy on
 * growth), found by (directory, name) through an open-addressing index of
 * 32-bit slots. Directories: a vector with child/sibling links, found by
 * (parent, name) through a second such index. Nothing is linear in the number
 * of siblings or directories, except whole passes that say so. */
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "tree/account.h"
#include "tree/links.h"

#define CHUNK_SHIFT 16
#define CHUNK_FILES (1u << CHUNK_SHIFT)
#define INDEX_LOAD_MAX 0.8      /* linear probing stays short below this */
/* An index slot: FileId + 1 in the low bits, 0 for empty, and 7 bits of the
 * hash on top, so a probe that cannot match never touches the record. */
#define SLOT_ID_BITS 25
#define SLOT_ID_MASK ((1u << SLOT_ID_BITS) - 1)
#define FILES_MAX    (SLOT_ID_MASK - 1)
#define INDEX_MIN 1024
#define DIR_INDEX_MIN 64        /* a power of two; kept at least twice the directories */

/* flags: name form in bits 0-1, mark in bit 2, link in bit 3, code or kind in bits 4-7 */
#define FORM_FREE   0u
#define FORM_PACKED 1u
#define FORM_INLINE 2u
#define FORM_HEAP   3u
#define FLAG_MARK   0x04u
#define FLAG_LINK   0x08u   /* a name of an inode with more links: its bytes count in links */
#define BLOCKS_BIG  0xffffffu
#define BIG_MIN     16      /* a power of two */

typedef struct File {
        /* FORM_PACKED: the packed name; FORM_INLINE: a name of < 20 chars;
         * FORM_HEAP: a char * (memcpy'd: no pointer member, so the record
         * stays 4-byte aligned and 32 bytes); FORM_FREE: the next free id. */
        union {
                uint8_t packed[CCACHE_PACKED_SIZE];
                char inline_name[CCACHE_PACKED_SIZE];
        } n;
        uint32_t dir : 24;
        uint32_t flags : 8;
        uint32_t mtime;
        uint32_t blocks : 24;    /* st_blocks; BLOCKS_BIG: 8 GiB or more, the count is in big */
        uint32_t tag : 8;        /* the owner's byte (account_file_tag) */
} File;

_Static_assert(sizeof(File) == 32, "File must stay 32 bytes");
_Static_assert(FILES_MAX <= LINKS_ID_MAX, "every FileId may be a linked name");
_Static_assert(_CCACHE_KIND_MAX <= 16, "a kind fits the links table's records");

struct Account {
        File **chunks;
        /* st_blocks of files of 8 GiB or more (File.blocks BLOCKS_BIG):
         * (FileId + 1) << 32 | blocks, 0 for empty, at most half full.
         * Each takes 8 GiB of the disk: a disk of any size holds few. */
        uint64_t *big;
        size_t big_size, big_count;
        size_t n_chunks;
        FileId limit;            /* one past the highest id ever used */
        FileId free_head;
        uint32_t *index;         /* FileId + 1; 0 is empty */
        size_t index_size, n_files;
        Dir *dirs;
        size_t n_dirs, dirs_cap;
        DirId free_dir;
        /* Forgotten directories whose files are still in the table (or
         * that hold a linked inode's bytes: links.h's owner): their DirIds
         * are free again only once the purge has forgotten those files
         * (until then no lookup can confuse a new directory with them).
         * limbo: forgotten since the purge's pass began; purging: before. */
        DirId limbo_dir, purging_dir;
        FileId purge_next;       /* where the purge's pass is (account_purge_step) */
        uint64_t dead_files;     /* files of forgotten directories still in the table */
        uint32_t *dir_index;     /* DirId + 1 by (parent, name); 0 is empty */
        size_t dir_index_size;
        uint32_t last_gen;       /* the gen of the directory added last */
        uint32_t scan_begin_gen; /* last_gen at account_scan_begin */
        size_t names_bytes;      /* heap held by names: directories', and files' that do not fit */
        uint64_t dirs_released;
        bool span_valid;
        int64_t oldest, newest;
        uint64_t passes;         /* over every file: account_passes */
        AccountTotals totals;
        account_dir_hook_t dir_hook;
        void *dir_hook_userdata;
        uint64_t seed;           /* the hashes' key: random per account (keyed_hash) */
        Links *links;            /* hard-linked names; NULL until the first */
        AccountLayout layout;
};

static inline File *file_at(const Account *a, FileId id) {
        return &a->chunks[id >> CHUNK_SHIFT][id & (CHUNK_FILES - 1)];
}

static inline char *heap_name(const File *f) {
        char *p;
        memcpy(&p, f->n.packed, sizeof(p));
        return p;
}

static inline void set_heap_name(File *f, char *p) {
        memcpy(f->n.packed, &p, sizeof(p));
}

static inline FileId next_free(const File *f) {
        FileId id;
        memcpy(&id, f->n.packed, sizeof(id));
        return id;
}

static inline void set_next_free(File *f, FileId id) {
        memcpy(f->n.packed, &id, sizeof(id));
}

/* What a heap block really costs: its usable size and malloc's header. */
static size_t heap_size(void *p) {
        return malloc_usable_size(p) + sizeof(size_t);
}

static inline unsigned form(const File *f) {
        return f->flags & 3u;
}

static inline unsigned code(const File *f) {
        return f->flags >> 4;
}

static CcacheKind file_kind(const File *f) {
        return form(f) == FORM_PACKED ? ccache_code_kind((uint8_t) code(f)) : (CcacheKind) code(f);
}

static const char *file_string(const File *f) {
        return form(f) == FORM_HEAP ? heap_name(f) : f->n.inline_name;
}

/* A hash of len bytes at p, keyed by seed and starting from h. Names come
 * from the cache's users: one who could predict the hash could plant names
 * (or keys) that all land in one slot, making every lookup O(n) and a scan
 * O(n^2). Each 8-byte word goes through the whole finaliser after the key,
 * so without the key no word can be chosen to cancel another (a linear fold,
 * or FNV with known constants, can be). */
static uint64_t keyed_hash(uint64_t seed, uint64_t h, const void *p, size_t len) {
        const uint8_t *b = p;
        uint64_t w;

        h = hash_mix(h ^ seed);
        for (; len >= 8; b += 8, len -= 8) {
                memcpy(&w, b, 8);
                h = hash_mix(h ^ w);
        }
        if (len > 0) {
                w = 0;
                memcpy(&w, b, len);
                h = hash_mix(h ^ w ^ ((uint64_t) len << 56));
        }
        return h;
}

static uint64_t file_hash(const Account *a, const File *f) {
        uint64_t h = (uint64_t) f->dir << 8 | code(f);
        const char *s;

        if (form(f) == FORM_PACKED)
                return keyed_hash(a->seed, h, f->n.packed, CCACHE_PACKED_SIZE);
        s = file_string(f);
        return keyed_hash(a->seed, h ^ (1ULL << 63), s, strlen(s));
}

static bool file_equal(const File *a, const File *b) {
        if (a->dir != b->dir || form(a) != form(b) || code(a) != code(b))
                return false;
        if (form(a) == FORM_PACKED)
                return memcmp(a->n.packed, b->n.packed, CCACHE_PACKED_SIZE) == 0;
        return strcmp(file_string(a), file_string(b)) == 0;
}

static inline size_t home(const Account *a, uint64_t h) {
        return (size_t) (((h >> 32) * a->index_size) >> 32);
}

/* How many key chars the directory path of a remote layout's entry holds. */
static unsigned remote_dir_chars(AccountLayout layout) {
        return layout == ACCOUNT_LAYOUT_REMOTE_SUBDIRS ? CCACHE_REMOTE_DIR_CHARS_SUBDIRS : CCACHE_REMOTE_DIR_CHARS_FLAT;
}

/* Packs name in d if it is an entry's: stores its code and returns its kind,
 * or returns -EINVAL. */
static int pack_entry(const Account *a, DirId d, const char *name, uint8_t *packed, uint8_t *ret_code) {
        if (!account_entry_dir(a, d))
                return -EINVAL;
        if (a->layout == ACCOUNT_LAYOUT_LOCAL)
                return ccache_pack_name(name, a->dirs[d].depth, packed, ret_code);
        return ccache_pack_remote_name(name, remote_dir_chars(a->layout), packed, ret_code);
}

bool account_name_is_entry(const Account *a, DirId d, const char *name) {
        uint8_t packed[CCACHE_PACKED_SIZE], code;
        int kind;

        kind = pack_entry(a, d, name, packed, &code);   /* (checks d first) */
        return kind >= 0 && ccache_kind_is_entry((CcacheKind) kind);
}

/* Builds the lookup key for name in d. The probe borrows name for heap form. */
static void make_probe(const Account *a, DirId d, const char *name, File *p) {
        const Dir *dir = &a->dirs[d];
        uint8_t c;
        int kind;

        memset(p, 0, sizeof(*p));
        p->dir = d;
        if (pack_entry(a, d, name, p->n.packed, &c) >= 0) {
                p->flags = (uint8_t) (FORM_PACKED | (unsigned) c << 4);
                return;
        }
        kind = a->layout == ACCOUNT_LAYOUT_LOCAL ? ccache_classify_other(name, dir->depth, dir->in_tmp)
                                                 : ccache_classify_remote_other(name);
        if (strlen(name) < sizeof(p->n.inline_name)) {
                strcpy(p->n.inline_name, name);
                p->flags = (uint8_t) (FORM_INLINE | (unsigned) kind << 4);
        } else {
                set_heap_name(p, (char *) name);
                p->flags = (uint8_t) (FORM_HEAP | (unsigned) kind << 4);
        }
}

static inline uint32_t slot_tag(uint64_t h) {
        return (uint32_t) (h & 0x7f) << SLOT_ID_BITS;
}

static inline FileId slot_id(uint32_t slot) {
        return (slot & SLOT_ID_MASK) - 1;
}

static size_t index_find(const Account *a, const File *probe, uint64_t h) {
        uint32_t tag = slot_tag(h);

        for (size_t i = home(a, h);; i = i + 1 == a->index_size ? 0 : i + 1) {
                uint32_t v = a->index[i];
                if (v == 0 || ((v & ~SLOT_ID_MASK) == tag && file_equal(file_at(a, slot_id(v)), probe)))
                        return i;
        }
}

/* The index has a mapping of its own: it grows in place (mremap moves its
 * pages, never copies them) and is rebuilt from the records, which say
 * all it holds, so a growth never holds an old and a new table at once (a
 * million files' index is 5 MB: the peak would be half as much again). */
static uint32_t *index_map(size_t size) {
        void *p = mmap(NULL, size * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

static int index_resize(Account *a, size_t size) {
        void *p = mremap(a->index, a->index_size * sizeof(uint32_t), size * sizeof(uint32_t), MREMAP_MAYMOVE);

        if (p == MAP_FAILED)
                return -ENOMEM;   /* (the old one stays as it was) */
        memset(p, 0, a->index_size * sizeof(uint32_t));   /* (what it grew by is zero already) */
        a->index = p;
        a->index_size = size;
        if (a->links)
                links_set_hint(a->links, size);
        /* Every record in use has its slot, those of forgotten directories
         * too (the purge finds theirs). */
        for (FileId id = 0; id < a->limit; id++) {
                const File *f = file_at(a, id);
                uint64_t h;

                if (form(f) == FORM_FREE)
                        continue;
                h = file_hash(a, f);
                a->index[index_find(a, f, h)] = (id + 1) | slot_tag(h);
        }
        return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void index_delete(Account *a, size_t i) {
        size_t j = i;

        a->index[i] = 0;
        for (;;) {
                size_t k;

                j = j + 1 == a->index_size ? 0 : j + 1;
                if (a->index[j] == 0)
                        return;
                k = home(a, file_hash(a, file_at(a, slot_id(a->index[j]))));
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        a->index[i] = a->index[j];
                        a->index[j] = 0;
                        i = j;
                }
        }
}

/* The big table (see Account): linear probing, backward-shift deletion. */
static size_t big_home(const Account *a, FileId id) {
        return (size_t) hash_mix(id) & (a->big_size - 1);
}

static size_t big_find(const Account *a, FileId id) {
        for (size_t i = big_home(a, id);; i = (i + 1) & (a->big_size - 1))
                if (a->big[i] == 0 || a->big[i] >> 32 == (uint64_t) id + 1)
                        return i;
}

/* Room for one more entry, so that big_set cannot fail. */
static int big_reserve(Account *a) {
        uint64_t *old = a->big, *n;
        size_t old_size = a->big_size, size = old_size ? 2 * old_size : BIG_MIN;

        if (2 * (a->big_count + 1) <= a->big_size)
                return 0;
        if (!(n = calloc(size, sizeof(uint64_t))))
                return -ENOMEM;
        a->big = n;
        a->big_size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i])
                        a->big[big_find(a, (FileId) (old[i] >> 32) - 1)] = old[i];
        free(old);
        return 0;
}

static void big_set(Account *a, FileId id, uint32_t blocks) {
        size_t i = big_find(a, id);

        a->big_count += a->big[i] == 0;
        a->big[i] = ((uint64_t) id + 1) << 32 | blocks;
}

static void big_drop(Account *a, FileId id) {
        size_t i = big_find(a, id), j = i;

        if (a->big[i] == 0)
                return;
        a->big[i] = 0;
        a->big_count--;
        for (;;) {
                size_t k;

                j = (j + 1) & (a->big_size - 1);
                if (a->big[j] == 0)
                        return;
                k = big_home(a, (FileId) (a->big[j] >> 32) - 1);
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        a->big[i] = a->big[j];
                        a->big[j] = 0;
                        i = j;
                }
        }
}

/* File f's (id's) st_blocks. */
static uint32_t file_blocks(const Account *a, FileId id, const File *f) {
        return f->blocks == BLOCKS_BIG ? (uint32_t) a->big[big_find(a, id)] : f->blocks;
}

/* Sets them: the big table has room (big_reserve) if they are big. */
static void file_set_blocks(Account *a, FileId id, File *f, uint32_t blocks) {
        if (blocks >= BLOCKS_BIG)
                big_set(a, id, blocks);
        else if (f->blocks == BLOCKS_BIG)
                big_drop(a, id);
        f->blocks = blocks >= BLOCKS_BIG ? BLOCKS_BIG : blocks;
}

static int file_alloc(Account *a, FileId *ret) {
        if (a->free_head != FILE_NONE) {
                *ret = a->free_head;
                a->free_head = next_free(file_at(a, *ret));
                return 0;
        }
        if (a->limit >= FILES_MAX)
                return -E2BIG;
        if ((a->limit >> CHUNK_SHIFT) >= a->n_chunks) {
                File **c = realloc(a->chunks, (a->n_chunks + 1) * sizeof(File *));

                if (!c)
                        return -ENOMEM;
                a->chunks = c;
                if (!(c[a->n_chunks] = malloc(CHUNK_FILES * sizeof(File))))
                        return -ENOMEM;
                a->n_chunks++;
        }
        *ret = a->limit++;
        return 0;
}

/* A name of a live directory counts in files, in the totals and in its
 * directory's share of them; its bytes too unless it is a linked name,
 * whose inode's bytes count once through link_attach/link_detach, held by
 * the directory links.h calls its owner. */
static void totals_add(Account *a, FileId id, const File *f, int sign) {
        uint64_t bytes = f->flags & FLAG_LINK ? 0 : (uint64_t) file_blocks(a, id, f) * 512;
        CcacheKind k = file_kind(f);
        Dir *dir = &a->dirs[f->dir];

        if (sign > 0) {
                a->totals.files++, a->totals.bytes += bytes;
                a->totals.kind_files[k]++, a->totals.kind_bytes[k] += bytes;
                dir->files++, dir->kind_files[k]++, dir->kind_bytes[k] += bytes;
                if (ccache_kind_is_entry(k)) {   /* bounds, never narrowed: see Dir */
                        dir->entry_oldest = f->mtime < dir->entry_oldest ? f->mtime : dir->entry_oldest;
                        dir->entry_newest = f->mtime > dir->entry_newest ? f->mtime : dir->entry_newest;
                }
        } else {
                a->totals.files--, a->totals.bytes -= bytes;
                a->totals.kind_files[k]--, a->totals.kind_bytes[k] -= bytes;
                dir->files--, dir->kind_files[k]--, dir->kind_bytes[k] -= bytes;
        }
}

static uint64_t entry_count(const Account *a) {
        uint64_t n = 0;

        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                if (ccache_kind_is_entry((CcacheKind) k))
                        n += a->totals.kind_files[k];
        return n;
}

/* The entries' mtime span as f enters (after its totals_add +1): it can
 * only widen. */
static void span_enter(Account *a, const File *f) {
        if (!a->span_valid || !ccache_kind_is_entry(file_kind(f)))
                return;
        if (entry_count(a) == 1)
                a->oldest = a->newest = f->mtime;
        else {
                a->oldest = f->mtime < a->oldest ? f->mtime : a->oldest;
                a->newest = f->mtime > a->newest ? f->mtime : a->newest;
        }
}

/* ... and as f leaves (after its totals_add -1): an entry at either edge
 * takes the span's exactness with it (the next one in is unknown without a
 * pass); the figures stay as they were, exact as of the moment before. */
static void span_leave(Account *a, const File *f) {
        if (!a->span_valid || !ccache_kind_is_entry(file_kind(f)))
                return;
        if (entry_count(a) == 0)
                a->oldest = a->newest = 0;
        else if (f->mtime == a->oldest || f->mtime == a->newest)
                a->span_valid = false;
}

/* The inode's bytes, blocks of kind k held by directory owner, enter
 * (sign > 0) or leave the totals. */
static void inode_bytes(Account *a, DirId owner, uint32_t blocks, uint8_t k, int sign) {
        uint64_t bytes = (uint64_t) blocks * 512;
        Dir *o = &a->dirs[owner];

        if (sign > 0)
                a->totals.bytes += bytes, a->totals.kind_bytes[k] += bytes, o->kind_bytes[k] += bytes;
        else
                a->totals.bytes -= bytes, a->totals.kind_bytes[k] -= bytes, o->kind_bytes[k] -= bytes;
}

/* What the links table asks of a name: its blocks, kind and owner, its
 * directory (links.h). */
static void link_name(uint32_t id, uint32_t *ret_blocks, uint8_t *ret_kind, uint32_t *ret_owner, void *userdata) {
        const Account *a = userdata;
        const File *f = file_at(a, id);

        *ret_blocks = file_blocks(a, id, f);
        *ret_kind = (uint8_t) file_kind(f);
        *ret_owner = f->dir;
}

/* The owner of an inode with names below x and below y: their nearest
 * common ancestor, so that forgetting a directory takes the bytes of the
 * inodes with every name below it. A forgotten x took the inode's bytes
 * with it: y alone holds them again. Deeper than Dir.depth tells, the root
 * holds them (never forgotten: the bytes leave with the last name). */
static uint32_t link_join(uint32_t x, uint32_t y, void *userdata) {
        const Account *a = userdata;
        DirId p = x, q = y;

        if (!a->dirs[p].used)
                return q;
        if (a->dirs[p].depth == UINT8_MAX || a->dirs[q].depth == UINT8_MAX)
                return DIR_ROOT;
        while (a->dirs[p].depth > a->dirs[q].depth)
                p = a->dirs[p].parent;
        while (a->dirs[q].depth > a->dirs[p].depth)
                q = a->dirs[q].parent;
        while (p != q)
                p = a->dirs[p].parent, q = a->dirs[q].parent;
        return p;
}

/* An owner forgotten took the bytes it held out of the totals then. */
static void link_change(Account *a, const LinksChange *c) {
        if (a->dirs[c->minus_owner].used)
                inode_bytes(a, c->minus_owner, c->minus_blocks, c->minus_kind, -1);
        inode_bytes(a, c->plus_owner, c->plus_blocks, c->plus_kind, +1);
}

/* Makes f (id) a linked name of inode ino, whose size is f's. unsure: f was
 * not seen by a full scan, and the account may hold other names of ino as
 * files of their own (recorded when they had one link): a new inode's bytes
 * then wait for a full scan rather than count twice. Returns false (f
 * unchanged, its bytes counted on its own) if out of memory. */
static bool link_attach(Account *a, File *f, FileId id, uint64_t ino, bool unsure) {
        LinksChange c;

        if (!a->links) {
                if (!(a->links = links_new(a->seed, link_name, link_join, a)))
                        return false;
                links_set_hint(a->links, a->index_size);
        }
        if (links_attach(a->links, id, ino, unsure, &c) < 0)
                return false;
        link_change(a, &c);
        f->flags |= FLAG_LINK;
        return true;
}

/* f (id) is a linked name no more: its inode loses a name, and its bytes
 * with its last one. */
static void link_detach(Account *a, File *f, FileId id) {
        LinksChange c;

        links_detach(a->links, id, &c);
        link_change(a, &c);
        f->flags &= (uint8_t) ~FLAG_LINK;
}

/* Forgets file id (index slot slot). One of a forgotten directory left the
 * totals with it (dir_release): only the table forgets it now. */
static void file_release(Account *a, FileId id, size_t slot) {
        File *f = file_at(a, id);

        if (a->dirs[f->dir].used) {
                totals_add(a, id, f, -1);
                span_leave(a, f);
        } else
                a->dead_files--;
        if (f->flags & FLAG_LINK)
                link_detach(a, f, id);
        if (f->blocks == BLOCKS_BIG)
                big_drop(a, id);
        f->blocks = 0;
        index_delete(a, slot);
        if (form(f) == FORM_HEAP) {
                a->names_bytes -= heap_size(heap_name(f));
                free(heap_name(f));
        }
        f->flags = FORM_FREE;
        set_next_free(f, a->free_head);
        a->free_head = id;
        a->n_files--;
}

int account_reserve(Account *a, size_t n) {
        size_t size = (size_t) ((double) n / INDEX_LOAD_MAX) + 1;

        if (n > FILES_MAX || size <= a->index_size)
                return 0;
        return index_resize(a, size);
}

int account_file_set(Account *a, DirId d, const char *name, uint64_t blocks, int64_t mtime) {
        return account_file_set_inode(a, d, name, blocks, mtime, 0, 1, false);
}

int account_file_set_inode(Account *a, DirId d, const char *name, uint64_t blocks, int64_t mtime, uint64_t ino,
                           uint64_t nlink, bool unsure) {
        bool linked = nlink > 1 && ino != 0;
        uint32_t blocks32 = blocks > UINT32_MAX ? UINT32_MAX : (uint32_t) blocks;
        File probe, *f;
        uint64_t h;
        size_t slot;
        FileId id;
        int r;

        make_probe(a, d, name, &probe);
        probe.mtime = mtime < 0 ? 0 : mtime > UINT32_MAX ? UINT32_MAX : (uint32_t) mtime;
        probe.flags |= FLAG_MARK;   /* seen: by a scan, or by an event since it began */
        h = file_hash(a, &probe);
        slot = index_find(a, &probe, h);
        if (a->index[slot]) {
                bool changed;

                id = slot_id(a->index[slot]);
                f = file_at(a, id);
                if (blocks32 >= BLOCKS_BIG && (r = big_reserve(a)) < 0)
                        return r;
                changed = file_blocks(a, id, f) != blocks32 || f->mtime != probe.mtime;
                totals_add(a, id, f, -1);
                if (f->mtime != probe.mtime)
                        span_leave(a, f);   /* (the same name: the same kind) */
                if (f->flags & FLAG_LINK)
                        link_detach(a, f, id);   /* and attached again below, with its new size */
                file_set_blocks(a, id, f, blocks32);
                f->mtime = probe.mtime;
                f->flags = probe.flags;
                if (linked)
                        (void) link_attach(a, f, id, ino, unsure);
                totals_add(a, id, f, +1);
                span_enter(a, f);
                return changed ? 2 : 0;
        }
        if ((double) (a->n_files + 1) > INDEX_LOAD_MAX * (double) a->index_size) {
                if ((r = index_resize(a, a->index_size + a->index_size / 2)) < 0)
                        return r;
                slot = index_find(a, &probe, h);
        }
        if (blocks32 >= BLOCKS_BIG && (r = big_reserve(a)) < 0)
                return r;
        if (form(&probe) == FORM_HEAP) {
                char *copy = strdup(name);
                if (!copy)
                        return -ENOMEM;
                set_heap_name(&probe, copy);
        }
        if ((r = file_alloc(a, &id)) < 0) {
                if (form(&probe) == FORM_HEAP)
                        free(heap_name(&probe));
                return r;
        }
        if (form(&probe) == FORM_HEAP)
                a->names_bytes += heap_size(heap_name(&probe));
        f = file_at(a, id);
        *f = probe;   /* (tag 0) */
        file_set_blocks(a, id, f, blocks32);
        a->index[slot] = (id + 1) | slot_tag(h);
        a->n_files++;
        if (linked)
                (void) link_attach(a, f, id, ino, unsure);
        totals_add(a, id, f, +1);
        span_enter(a, f);
        return 1;
}

FileId account_file_find(const Account *a, DirId d, const char *name) {
        File probe;
        size_t slot;

        make_probe(a, d, name, &probe);
        slot = index_find(a, &probe, file_hash(a, &probe));
        return a->index[slot] ? slot_id(a->index[slot]) : FILE_NONE;
}

int account_file_remove(Account *a, DirId d, const char *name) {
        File probe;
        size_t slot;

        make_probe(a, d, name, &probe);
        slot = index_find(a, &probe, file_hash(a, &probe));
        if (!a->index[slot])
                return 0;
        file_release(a, slot_id(a->index[slot]), slot);
        return 1;
}

int account_file_info(const Account *a, FileId id, FileInfo *ret) {
        const File *f;

        /* A file of a forgotten directory is as good as gone (the purge). */
        if (id >= a->limit || form(f = file_at(a, id)) == FORM_FREE || !a->dirs[f->dir].used)
                return -ENOENT;
        *ret = (FileInfo) { .dir = f->dir, .dir_gen = a->dirs[f->dir].gen, .kind = file_kind(f),
                            .blocks = file_blocks(a, id, f), .mtime = f->mtime };
        return 0;
}

int account_file_name(const Account *a, FileId id, char *buf, size_t len) {
        const File *f = file_at(a, id);
        char tmp[CCACHE_NAME_MAX];
        const char *s = tmp;

        if (form(f) == FORM_PACKED)
                ccache_unpack_name(f->n.packed, (uint8_t) code(f),
                                   a->layout == ACCOUNT_LAYOUT_LOCAL ? a->dirs[f->dir].depth : remote_dir_chars(a->layout),
                                   tmp);
        else
                s = file_string(f);
        if (strlen(s) >= len)
                return -ENAMETOOLONG;
        strcpy(buf, s);
        return 0;
}

FileId account_file_limit(const Account *a) {
        return a->limit;
}

/* Forgets file id, found by its record. */
static void release_record(Account *a, FileId id) {
        File probe = *file_at(a, id);

        file_release(a, id, index_find(a, &probe, file_hash(a, &probe)));
}

/* Removes every file whose directory satisfies pred; one pass over all files.
 * Returns how many of them the totals counted (those of forgotten
 * directories had left them already). */
static size_t remove_files_where(Account *a, bool (*pred)(const Account *a, const File *f, uint32_t arg), uint32_t arg) {
        size_t removed = 0;

        a->passes++;
        for (FileId id = 0; id < a->limit; id++) {
                File *f = file_at(a, id);

                if (form(f) == FORM_FREE || !pred(a, f, arg))
                        continue;
                removed += a->dirs[f->dir].used;
                release_record(a, id);
        }
        return removed;
}

/* The DirIds of list *head (limbo or purging) are free again. */
static void limbo_free(Account *a, DirId *head) {
        while (*head != DIR_NONE) {
                DirId d = *head;

                *head = a->dirs[d].next_sibling;
                a->dirs[d].next_sibling = a->free_dir;
                a->free_dir = d;
        }
}

/* No file of a forgotten directory is left: every DirId waiting is free. */
static void purge_done(Account *a) {
        limbo_free(a, &a->purging_dir);
        limbo_free(a, &a->limbo_dir);
        a->purge_next = 0;
}

size_t account_purge_step(Account *a, size_t max) {
        FileId end;

        if (a->dead_files == 0)
                return 0;
        if (a->purge_next == 0 && a->purging_dir == DIR_NONE) {   /* a pass begins */
                a->purging_dir = a->limbo_dir;
                a->limbo_dir = DIR_NONE;
        }
        end = max >= (size_t) (a->limit - a->purge_next) ? a->limit : a->purge_next + (FileId) max;
        for (; a->purge_next < end && a->dead_files > 0; a->purge_next++) {
                const File *f = file_at(a, a->purge_next);

                if (form(f) != FORM_FREE && !a->dirs[f->dir].used)
                        release_record(a, a->purge_next);
        }
        if (a->dead_files == 0)
                purge_done(a);
        else if (a->purge_next >= a->limit) {
                /* Those forgotten before the pass began have no file left;
                 * those forgotten since may have some behind it: another. */
                limbo_free(a, &a->purging_dir);
                a->purge_next = 0;
        }
        return (size_t) a->dead_files;
}

/* The whole purge at once: for what must not wait (a new layout). */
static void purge_all(Account *a) {
        while (account_purge_step(a, SIZE_MAX) > 0)
                ;
}

/* After a sweep released directories: their files, and the files of the
 * directories the round listed that it did not see again. */
static bool gone_after_sweep(const Account *a, const File *f, uint32_t gen) {
        return !a->dirs[f->dir].used || (!(f->flags & FLAG_MARK) && a->dirs[f->dir].scan_gen == gen);
}

/* The directory index: DirId + 1 by (parent, name), open addressing in a
 * power-of-two table, backward-shift deletion as for files. */
static uint32_t dir_hash(const Account *a, DirId parent, const char *name) {
        return (uint32_t) keyed_hash(a->seed, parent, name, strlen(name));
}

static size_t dir_slot(const Account *a, uint32_t hash, DirId parent, const char *name) {
        size_t mask = a->dir_index_size - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                uint32_t v = a->dir_index[i];
                const Dir *d = &a->dirs[v - 1];

                if (v == 0 || (d->hash == hash && d->parent == parent && strcmp(d->name, name) == 0))
                        return i;
        }
}

static int dir_index_resize(Account *a, size_t size) {
        uint32_t *old = a->dir_index;
        size_t old_size = a->dir_index_size;

        a->dir_index = calloc(size, sizeof(uint32_t));
        if (!a->dir_index) {
                a->dir_index = old;
                return -ENOMEM;
        }
        a->dir_index_size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i]) {
                        const Dir *d = &a->dirs[old[i] - 1];
                        a->dir_index[dir_slot(a, d->hash, d->parent, d->name)] = old[i];
                }
        free(old);
        return 0;
}

static void dir_index_delete(Account *a, DirId d) {
        size_t mask = a->dir_index_size - 1;
        size_t i = dir_slot(a, a->dirs[d].hash, a->dirs[d].parent, a->dirs[d].name), j = i;

        a->dir_index[i] = 0;
        for (;;) {
                size_t k;

                j = (j + 1) & mask;
                if (a->dir_index[j] == 0)
                        return;
                k = a->dirs[a->dir_index[j] - 1].hash & mask;
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        a->dir_index[i] = a->dir_index[j];
                        a->dir_index[j] = 0;
                        i = j;
                }
        }
}

static Dir root_dir(uint32_t gen, int wd, uint32_t scan_gen) {
        return (Dir) { .parent = DIR_NONE, .first_child = DIR_NONE, .next_sibling = DIR_NONE,
                       .prev_sibling = DIR_NONE, .gen = gen, .wd = wd, .scan_gen = scan_gen, .used = true,
                       .entry_oldest = UINT32_MAX };
}

int account_new(Account **ret) {
        Account *a = calloc(1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        a->free_head = FILE_NONE;
        a->free_dir = a->limbo_dir = a->purging_dir = DIR_NONE;
        a->index_size = INDEX_MIN;
        a->index = index_map(a->index_size);
        a->dir_index_size = DIR_INDEX_MIN;
        a->dir_index = calloc(a->dir_index_size, sizeof(uint32_t));
        a->dirs_cap = 64;
        a->dirs = calloc(a->dirs_cap, sizeof(Dir));
        if (!a->index || !a->dir_index || !a->dirs)
                return account_free(a), -ENOMEM;
        if (getrandom(&a->seed, sizeof(a->seed), GRND_NONBLOCK) != sizeof(a->seed))
                a->seed = hash_mix((uint64_t) time(NULL) ^ (uint64_t) getpid() << 32 ^ (uintptr_t) a);
        a->dirs[0] = root_dir(++a->last_gen, -1, 0);
        a->n_dirs = 1;
        a->totals.dirs = 1;
        a->span_valid = true;   /* no entries: 0 and 0, exact */
        *ret = a;
        return 0;
}

int account_set_layout(Account *a, AccountLayout layout) {
        if ((unsigned) layout >= _ACCOUNT_LAYOUT_MAX)
                return -EINVAL;
        purge_all(a);   /* the files of forgotten directories: gone, they hold nothing */
        if (a->totals.dirs > 1 || a->n_files > 0)
                return -EBUSY;   /* their kinds and flags were decided under the old layout */
        a->layout = layout;
        return 0;
}

AccountLayout account_layout(const Account *a) {
        return a->layout;
}

bool account_entry_dir(const Account *a, DirId d) {
        const Dir *dir = account_dir(a, d);

        if (!dir)
                return false;
        switch (a->layout) {
        case ACCOUNT_LAYOUT_LOCAL:
                return dir->hex && !dir->in_tmp && dir->depth >= CCACHE_DEPTH_MIN && dir->depth <= CCACHE_DEPTH_MAX;
        case ACCOUNT_LAYOUT_REMOTE_SUBDIRS:
                return dir->hex;
        case ACCOUNT_LAYOUT_REMOTE_FLAT:
                return d == DIR_ROOT;
        default:
                return false;
        }
}

void account_set_dir_hook(Account *a, account_dir_hook_t hook, void *userdata) {
        a->dir_hook = hook;
        a->dir_hook_userdata = userdata;
}

void account_clear(Account *a) {
        Dir root;

        for (DirId d = DIR_ROOT; d < a->n_dirs; d++)
                if (a->dirs[d].used && a->dir_hook)
                        a->dir_hook(d, &a->dirs[d], a->dir_hook_userdata);
        root = a->dirs[DIR_ROOT];
        for (DirId d = DIR_ROOT + 1; d < a->n_dirs; d++)
                free(a->dirs[d].name);
        a->dirs_released += a->n_dirs - 1;
        for (FileId id = 0; id < a->limit; id++)
                if (form(file_at(a, id)) == FORM_HEAP)
                        free(heap_name(file_at(a, id)));
        for (size_t i = 0; i < a->n_chunks; i++)
                free(a->chunks[i]);
        free(a->chunks);
        a->chunks = NULL;
        a->n_chunks = 0;
        free(a->big);
        a->big = NULL;
        a->big_size = a->big_count = 0;
        a->limit = 0;
        a->free_head = FILE_NONE;
        a->n_files = 0;
        memset(a->index, 0, a->index_size * sizeof(uint32_t));
        memset(a->dir_index, 0, a->dir_index_size * sizeof(uint32_t));
        a->n_dirs = 1;
        a->free_dir = a->limbo_dir = a->purging_dir = DIR_NONE;
        a->dead_files = 0;
        a->purge_next = 0;
        a->dirs[DIR_ROOT] = root_dir(root.gen, root.wd, root.scan_gen);
        a->totals = (AccountTotals) { .dirs = 1 };
        a->oldest = a->newest = 0;   /* no entries: exact */
        a->span_valid = true;
        a->names_bytes = 0;
        a->links = links_free(a->links);
}

Account *account_free(Account *a) {
        if (!a)
                return NULL;
        if (a->dirs && a->index && a->dir_index)
                account_clear(a);
        if (a->index)
                munmap(a->index, a->index_size * sizeof(uint32_t));
        free(a->dir_index);
        free(a->dirs);
        free(a);
        return NULL;
}

DirId account_dir_find(const Account *a, DirId parent, const char *name) {
        uint32_t v = a->dir_index[dir_slot(a, dir_hash(a, parent, name), parent, name)];

        return v ? v - 1 : DIR_NONE;
}

/* A DirId for a new directory: a free one, or one more at the end. */
static int dir_alloc(Account *a, DirId *ret) {
        if (a->free_dir == DIR_NONE && a->n_dirs == a->dirs_cap) {
                Dir *n;
                if (a->dirs_cap >= ACCOUNT_DIRS_MAX)
                        return -E2BIG;
                if (!(n = realloc(a->dirs, 2 * a->dirs_cap * sizeof(Dir))))
                        return -ENOMEM;
                a->dirs = n;
                a->dirs_cap *= 2;
        }
        if (a->free_dir != DIR_NONE) {
                *ret = a->free_dir;
                a->free_dir = a->dirs[*ret].next_sibling;
        } else
                *ret = (DirId) a->n_dirs++;
        return 0;
}

/* A new directory's hex, in_tmp and in_lock (see Dir), from its parent p. */
static void dir_set_flags(const Account *a, Dir *x, const Dir *p) {
        bool top = x->parent == DIR_ROOT;

        switch (a->layout) {
        case ACCOUNT_LAYOUT_LOCAL:
                /* Only ccache's levels are hex. */
                x->hex = p->depth < CCACHE_DEPTH_MAX && (top || p->hex) && ccache_is_level_name(x->name);
                x->in_tmp = p->in_tmp || (top && strcmp(x->name, CCACHE_TMP_DIR) == 0);
                x->in_lock = p->in_lock || (top && strcmp(x->name, CCACHE_LOCK_DIR) == 0);
                break;
        case ACCOUNT_LAYOUT_REMOTE_SUBDIRS:
                x->hex = top && ccache_is_remote_subdir_name(x->name);
                break;
        default:
                break;
        }
}

int account_dir_add(Account *a, DirId parent, const char *name, DirId *ret) {
        uint32_t hash = dir_hash(a, parent, name);
        size_t slot = dir_slot(a, hash, parent, name);
        DirId d;
        Dir *p;
        char *copy;
        int r;

        if (a->dir_index[slot]) {
                *ret = a->dir_index[slot] - 1;
                return 0;
        }
        if (2 * (a->totals.dirs + 1) > a->dir_index_size) {
                if ((r = dir_index_resize(a, 2 * a->dir_index_size)) < 0)
                        return r;
                slot = dir_slot(a, hash, parent, name);
        }
        if (!(copy = strdup(name)))
                return -ENOMEM;
        if ((r = dir_alloc(a, &d)) < 0) {
                free(copy);
                return r;
        }
        if (++a->last_gen == 0)
                a->last_gen = 1;
        p = &a->dirs[parent];
        a->dirs[d] = (Dir) {
                .name = copy, .parent = parent, .first_child = DIR_NONE, .next_sibling = p->first_child,
                .prev_sibling = DIR_NONE, .hash = hash, .gen = a->last_gen,
                /* Deeper than 255 counts as 255. */
                .wd = -1, .depth = (uint8_t) (p->depth < UINT8_MAX ? p->depth + 1 : UINT8_MAX), .used = true,
                .entry_oldest = UINT32_MAX,
        };
        dir_set_flags(a, &a->dirs[d], p);
        if (p->first_child != DIR_NONE)
                a->dirs[p->first_child].prev_sibling = d;
        p->first_child = d;
        a->dir_index[slot] = d + 1;
        a->totals.dirs++;
        a->names_bytes += heap_size(copy);
        *ret = d;
        return 1;
}

DirId account_dir_limit(const Account *a) {
        return (DirId) a->n_dirs;
}

Dir *account_dir(const Account *a, DirId d) {
        return d < a->n_dirs && a->dirs[d].used ? &a->dirs[d] : NULL;
}

Dir *account_dir_check(const Account *a, DirId d, uint32_t gen) {
        Dir *dir = account_dir(a, d);

        return dir && dir->gen == gen ? dir : NULL;
}

uint64_t account_dirs_released(const Account *a) {
        return a->dirs_released;
}

/* x's share leaves the totals, all at once: its files' and the linked
 * inodes' bytes it holds (they stay in the table until the purge). The
 * entries' span stays exact unless x's entries may have been at an edge. */
static void dir_totals_leave(Account *a, const Dir *x) {
        uint64_t entries = 0;

        for (int k = 0; k < _CCACHE_KIND_MAX; k++) {
                a->totals.files -= x->kind_files[k], a->totals.kind_files[k] -= x->kind_files[k];
                a->totals.bytes -= x->kind_bytes[k], a->totals.kind_bytes[k] -= x->kind_bytes[k];
                if (ccache_kind_is_entry((CcacheKind) k))
                        entries += x->kind_files[k];
        }
        a->dead_files += x->files;
        if (entries == 0 || !a->span_valid)
                return;
        if (entry_count(a) == 0)
                a->oldest = a->newest = 0;
        else if (x->entry_oldest <= a->oldest || x->entry_newest >= a->newest)
                a->span_valid = false;
}

/* Whether x's DirId must wait for the purge: its files are in the table,
 * or it holds a linked inode's bytes (a name below it will tell links.h so). */
static bool dir_waits(const Dir *x) {
        for (int k = 0; k < _CCACHE_KIND_MAX; k++)
                if (x->kind_bytes[k])
                        return true;
        return x->files > 0;
}

/* Unlinks d from its parent and forgets d and its subtree's directories:
 * their share of the totals leaves at once, their files wait for the purge
 * (account_purge_step). O(directories forgotten). Returns how many files
 * they held. */
static uint64_t dir_release(Account *a, DirId d) {
        Dir *x = &a->dirs[d];
        uint64_t files = x->files;
        bool waits;

        while (x->first_child != DIR_NONE)
                files += dir_release(a, x->first_child);
        if (x->prev_sibling != DIR_NONE)
                a->dirs[x->prev_sibling].next_sibling = x->next_sibling;
        else
                a->dirs[x->parent].first_child = x->next_sibling;
        if (x->next_sibling != DIR_NONE)
                a->dirs[x->next_sibling].prev_sibling = x->prev_sibling;
        dir_index_delete(a, d);
        if (a->dir_hook)
                a->dir_hook(d, x, a->dir_hook_userdata);
        account_dir_set_stats(a, d, 0, 0);
        a->names_bytes -= heap_size(x->name);
        free(x->name);
        dir_totals_leave(a, x);
        waits = dir_waits(x);
        /* Files left: the DirId waits in limbo until they are purged. */
        *x = (Dir) { .used = false, .wd = -1 };
        if (waits) {
                x->next_sibling = a->limbo_dir;
                a->limbo_dir = d;
        } else {
                x->next_sibling = a->free_dir;
                a->free_dir = d;
        }
        a->totals.dirs--;
        a->dirs_released++;
        return files;
}

void account_dir_remove(Account *a, DirId d) {
        if (d == DIR_ROOT || !account_dir(a, d))
                return;
        (void) dir_release(a, d);
}

int account_dir_path(const Account *a, DirId d, char *buf, size_t len) {
        return account_dir_relpath(a, DIR_ROOT, d, buf, len);
}

int account_dir_relpath(const Account *a, DirId base, DirId d, char *buf, size_t len) {
        size_t need = 0;

        for (DirId x = d; x != base; x = a->dirs[x].parent) {
                if (x == DIR_ROOT)
                        return -EINVAL;   /* base is not an ancestor of d */
                need += strlen(a->dirs[x].name) + (need ? 1 : 0);
        }
        if (need >= len)
                return -ENAMETOOLONG;
        buf[need] = '\0';
        for (DirId x = d; x != base; x = a->dirs[x].parent) {
                size_t n = strlen(a->dirs[x].name);

                need -= n;
                memcpy(buf + need, a->dirs[x].name, n);
                if (need > 0)
                        buf[--need] = '/';
        }
        return 0;
}

void account_dir_set_stats(Account *a, DirId d, uint64_t hits, uint64_t misses) {
        Dir *dir = &a->dirs[d];

        a->totals.hits = a->totals.hits - dir->stats_hits + hits;
        a->totals.misses = a->totals.misses - dir->stats_misses + misses;
        dir->stats_hits = hits;
        dir->stats_misses = misses;
}

void account_scan_begin(Account *a) {
        /* Everyone unseen; what the scan (or an event meanwhile) records is
         * seen. A reset, not a flip: after two scans a flip would make the
         * files neither of them saw look seen again. Directories added from
         * now on are seen too (their gen is newer). */
        a->scan_begin_gen = a->last_gen;
        for (FileId id = 0; id < a->limit; id++)
                file_at(a, id)->flags &= (uint8_t) ~FLAG_MARK;
}

size_t account_scan_sweep(Account *a, uint32_t gen) {
        size_t removed = 0;

        /* Subdirectories of listed directories that the listing did not show.
         * Releasing one only unlinks it and its subtree (which become unused):
         * the walk goes on from where it is. */
        for (DirId d = DIR_ROOT + 1; d < a->n_dirs; d++) {
                const Dir *x = &a->dirs[d];
                if (x->used && x->scan_gen != gen && a->dirs[x->parent].used && a->dirs[x->parent].scan_gen == gen &&
                    (int32_t) (x->gen - a->scan_begin_gen) <= 0)   /* not added (by an event) since the scan began */
                        removed += dir_release(a, d);
        }
        removed += remove_files_where(a, gone_after_sweep, gen);
        assert(a->dead_files == 0);   /* that pass took the forgotten directories' files too */
        purge_done(a);
        return removed;
}

size_t account_links_unsure(const Account *a) {
        return a->links ? links_unsure(a->links) : 0;
}

const AccountTotals *account_totals(const Account *a) {
        return &a->totals;
}

uint64_t account_entry_files(const Account *a) {
        return entry_count(a);
}

/* Is f an entry the totals count (not one of a forgotten directory's)? */
static bool live_entry(const Account *a, const File *f) {
        return form(f) == FORM_PACKED && (a->dead_files == 0 || a->dirs[f->dir].used);
}

void account_entry_mtime_span(Account *a, int64_t *ret_oldest, int64_t *ret_newest) {
        if (!a->span_valid) {
                uint32_t lo = UINT32_MAX, hi = 0;

                a->passes++;
                for (FileId id = 0; id < a->limit; id++) {
                        const File *f = file_at(a, id);
                        if (live_entry(a, f)) {
                                lo = f->mtime < lo ? f->mtime : lo;
                                hi = f->mtime > hi ? f->mtime : hi;
                        }
                }
                a->oldest = lo <= hi ? lo : 0;
                a->newest = hi;
                a->span_valid = true;
        }
        *ret_oldest = a->oldest;
        *ret_newest = a->newest;
}

void account_entry_mtime_span_recent(const Account *a, int64_t *ret_oldest, int64_t *ret_newest) {
        *ret_oldest = a->oldest;
        *ret_newest = a->newest;
}

void account_entry_counts(Account *a, const int64_t *since, size_t n, uint64_t *ret_files, uint64_t *ret_bytes,
                          uint64_t tag_files[256], uint64_t tag_bytes[256]) {
        /* The windows by since, latest first: an entry is in windows
         * order[m..n) for m = how many of them start after its mtime, so
         * it is counted once, in bucket m, and the windows are the buckets'
         * running sums. */
        size_t order[ACCOUNT_WINDOWS_MAX];
        int64_t s[ACCOUNT_WINDOWS_MAX];
        uint64_t files[ACCOUNT_WINDOWS_MAX + 1] = { 0 }, bytes[ACCOUNT_WINDOWS_MAX + 1] = { 0 };
        uint32_t lo = UINT32_MAX, hi = 0;

        assert(n <= ACCOUNT_WINDOWS_MAX);
        for (size_t i = 0; i < n; i++) {
                size_t j = i;

                for (; j > 0 && since[order[j - 1]] < since[i]; j--)
                        order[j] = order[j - 1];
                order[j] = i;
        }
        for (size_t k = 0; k < n; k++)
                s[k] = since[order[k]];
        memset(tag_files, 0, 256 * sizeof(*tag_files));
        memset(tag_bytes, 0, 256 * sizeof(*tag_bytes));
        a->passes++;
        for (FileId first = 0; first < a->limit; first += CHUNK_FILES) {
                const File *chunk = a->chunks[first >> CHUNK_SHIFT];
                uint32_t end = a->limit - first < CHUNK_FILES ? a->limit - first : CHUNK_FILES;

                for (uint32_t i = 0; i < end; i++) {
                        const File *f = &chunk[i];
                        uint64_t b;
                        size_t m = 0;

                        if (!live_entry(a, f))
                                continue;
                        b = (uint64_t) file_blocks(a, first + i, f) * 512;
                        for (size_t k = 0; k < n; k++)
                                m += (int64_t) f->mtime < s[k];
                        files[m]++;
                        bytes[m] += b;
                        tag_files[f->tag]++;
                        tag_bytes[f->tag] += b;
                        lo = f->mtime < lo ? f->mtime : lo;
                        hi = f->mtime > hi ? f->mtime : hi;
                }
        }
        a->oldest = lo <= hi ? lo : 0;   /* the span, exact now, on the way */
        a->newest = hi;
        a->span_valid = true;
        for (size_t k = 0; k < n; k++) {
                if (k > 0) {
                        files[k] += files[k - 1];
                        bytes[k] += bytes[k - 1];
                }
                ret_files[order[k]] = files[k];
                ret_bytes[order[k]] = bytes[k];
        }
}

uint8_t account_file_tag(const Account *a, FileId id) {
        return id < a->limit ? file_at(a, id)->tag : 0;
}

void account_file_set_tag(Account *a, FileId id, uint8_t tag) {
        if (id < a->limit)
                file_at(a, id)->tag = tag;
}

size_t account_memory(const Account *a) {
        return sizeof(*a) + a->n_chunks * CHUNK_FILES * sizeof(File) + a->big_size * sizeof(uint64_t) +
               a->index_size * sizeof(uint32_t) +
               a->dirs_cap * sizeof(Dir) + a->dir_index_size * sizeof(uint32_t) + a->names_bytes +
               (a->links ? links_memory(a->links) : 0);
}

uint64_t account_passes(const Account *a) {
        return a->passes;
}

size_t account_index_longest_run(const Account *a) {
        size_t longest = 0, run = 0;

        for (size_t i = 0; i < a->index_size; i++) {
                run = a->index[i] ? run + 1 : 0;
                if (run > longest)
                        longest = run;
        }
        return longest;
}
