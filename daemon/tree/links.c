/* SPDX-License-Identifier: MIT */
/* The hard-link table: the inode number of each linked name in arrays by
 * name id; an index of inodes with one name (the usual case), whose slot is
 * that name's id; records of inodes with more, in an open-addressing table
 * keyed by inode number. Both tables probe linearly and delete by backward
 * shift, so no tombstone piles up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "tree/links.h"

#define INO_CHUNK_SHIFT 16
#define INO_CHUNK       (1u << INO_CHUNK_SHIFT)
#define HEADS_MIN       1024
#define HEADS_LOAD_MAX  0.8     /* linear probing stays short below this */
#define SHARED_MIN      64      /* a power of two */

/* A slot of the index of inodes with one name: the name's id + 1 in the low
 * bits (0: empty), 6 bits of the inode number's hash (a probe that cannot
 * match reads no inode number), and whether the inode is unsure. */
#define HEAD_ID_BITS  25
#define HEAD_ID_MASK  ((1u << HEAD_ID_BITS) - 1)
#define HEAD_TAG_MASK (0x3fu << HEAD_ID_BITS)
#define HEAD_UNSURE   (1u << 31)

_Static_assert(LINKS_ID_MAX + 1 <= HEAD_ID_MASK, "a name id + 1 must fit a slot");

/* An inode with more than one name in the account. */
typedef struct Shared {
        uint64_t ino;            /* first: the key; 0 marks an empty slot */
        uint32_t blocks;         /* its st_blocks, counted once in the totals (unless unsure) */
        uint32_t names : 27;     /* names of it the account holds */
        uint32_t kind : 4;       /* the kind its bytes are counted under (its first name's) */
        uint32_t unsure : 1;     /* seen through events only: its bytes wait for a full scan */
        uint32_t owner;          /* who holds its bytes: the join of its names' owners */
} Shared;

_Static_assert(sizeof(Shared) == 24, "Shared must stay 24 bytes");
_Static_assert(LINKS_ID_MAX < (1u << 27), "names must fit");

struct Links {
        uint64_t seed;
        links_name_fn name;
        links_join_fn join;
        void *userdata;
        uint64_t **inos;         /* by name id, INO_CHUNK a chunk; set for linked names only */
        size_t n_ino_chunks;
        uint32_t *heads;         /* inodes with one name: see HEAD_* */
        size_t heads_size, heads_count, hint;
        Shared *shared;          /* inodes with more, by ino (a power of two) */
        size_t shared_size, shared_count, shared_names;
        size_t unsure;
};

static uint64_t ino_hash(const Links *l, uint64_t ino) {
        return hash_mix(ino ^ l->seed);
}

static uint64_t *ino_slot(const Links *l, uint32_t id) {
        return &l->inos[id >> INO_CHUNK_SHIFT][id & (INO_CHUNK - 1)];
}

static int ino_set(Links *l, uint32_t id, uint64_t ino) {
        size_t c = id >> INO_CHUNK_SHIFT;

        if (c >= l->n_ino_chunks) {
                uint64_t **n = realloc(l->inos, (c + 1) * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                memset(n + l->n_ino_chunks, 0, (c + 1 - l->n_ino_chunks) * sizeof(*n));
                l->inos = n;
                l->n_ino_chunks = c + 1;
        }
        /* Not zeroed: only linked names' numbers are ever read, and pages
         * of ids never linked are never touched. */
        if (!l->inos[c] && !(l->inos[c] = malloc(INO_CHUNK * sizeof(uint64_t))))
                return -ENOMEM;
        *ino_slot(l, id) = ino;
        return 0;
}

/* ---- inodes with one name --------------------------------------------- */

static inline size_t head_home(const Links *l, uint64_t h) {
        return (size_t) (((h >> 32) * l->heads_size) >> 32);
}

static inline uint32_t head_tag(uint64_t h) {
        return (uint32_t) (h & 0x3f) << HEAD_ID_BITS;
}

static inline uint32_t head_id(uint32_t v) {
        return (v & HEAD_ID_MASK) - 1;
}

/* The slot of ino's name (want_id: of that name, known to be ino's), or of
 * the empty slot where it would go. */
static size_t head_find(const Links *l, uint64_t ino, uint64_t h, uint32_t want_id) {
        uint32_t tag = head_tag(h);

        for (size_t i = head_home(l, h);; i = i + 1 == l->heads_size ? 0 : i + 1) {
                uint32_t v = l->heads[i];

                if (v == 0 || ((v & HEAD_TAG_MASK) == tag &&
                               (want_id != UINT32_MAX ? head_id(v) == want_id : *ino_slot(l, head_id(v)) == ino)))
                        return i;
        }
}

static int heads_resize(Links *l, size_t size) {
        uint32_t *old = l->heads;
        size_t old_size = l->heads_size;

        if (!(l->heads = calloc(size, sizeof(uint32_t)))) {
                l->heads = old;
                return -ENOMEM;
        }
        l->heads_size = size;
        for (size_t i = 0; i < old_size; i++)
                if (old[i]) {
                        uint64_t ino = *ino_slot(l, head_id(old[i]));

                        l->heads[head_find(l, ino, ino_hash(l, ino), head_id(old[i]))] = old[i];
                }
        free(old);
        return 0;
}

/* Room for one more: doubled, or straight to the hint when doubling would
 * pass it (the hint holds every name at most 80 % full). */
static int heads_reserve_one(Links *l) {
        size_t size;

        if ((double) (l->heads_count + 1) <= HEADS_LOAD_MAX * (double) l->heads_size)
                return 0;
        size = l->heads_size ? 2 * l->heads_size : HEADS_MIN;
        if (size > l->hint && l->hint > l->heads_size && (double) (l->heads_count + 1) <= HEADS_LOAD_MAX * (double) l->hint)
                size = l->hint;
        return heads_resize(l, size);
}

static void head_delete(Links *l, size_t i) {
        size_t j = i;

        l->heads[i] = 0;
        l->heads_count--;
        for (;;) {
                size_t k;

                j = j + 1 == l->heads_size ? 0 : j + 1;
                if (l->heads[j] == 0)
                        return;
                k = head_home(l, ino_hash(l, *ino_slot(l, head_id(l->heads[j]))));
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        l->heads[i] = l->heads[j];
                        l->heads[j] = 0;
                        i = j;
                }
        }
}

/* ---- inodes with more names ---------------------------------------------- */

static inline size_t shared_home(const Links *l, uint64_t h) {
        return (size_t) h & (l->shared_size - 1);
}

/* The slot of ino, or of the empty slot where it would go. */
static size_t shared_find(const Links *l, uint64_t ino) {
        for (size_t i = shared_home(l, ino_hash(l, ino));; i = (i + 1) & (l->shared_size - 1))
                if (l->shared[i].ino == ino || l->shared[i].ino == 0)
                        return i;
}

static Shared *shared_get(const Links *l, uint64_t ino) {
        size_t i;

        if (l->shared_count == 0)
                return NULL;
        i = shared_find(l, ino);
        return l->shared[i].ino ? &l->shared[i] : NULL;
}

/* A new record of ino (absent), zeroed but for the key. NULL: ENOMEM. */
static Shared *shared_put(Links *l, uint64_t ino) {
        Shared *s;

        if (4 * (l->shared_count + 1) > 3 * l->shared_size) {
                Shared *old = l->shared;
                size_t old_size = l->shared_size;

                if (!(l->shared = calloc(old_size ? 2 * old_size : SHARED_MIN, sizeof(Shared)))) {
                        l->shared = old;
                        return NULL;
                }
                l->shared_size = old_size ? 2 * old_size : SHARED_MIN;
                for (size_t i = 0; i < old_size; i++)
                        if (old[i].ino)
                                l->shared[shared_find(l, old[i].ino)] = old[i];
                free(old);
        }
        s = &l->shared[shared_find(l, ino)];
        *s = (Shared) { .ino = ino };
        l->shared_count++;
        return s;
}

static void shared_delete(Links *l, Shared *s) {
        size_t i = (size_t) (s - l->shared), j = i;

        l->shared[i].ino = 0;
        l->shared_count--;
        for (;;) {
                size_t k;

                j = (j + 1) & (l->shared_size - 1);
                if (l->shared[j].ino == 0)
                        return;
                k = shared_home(l, ino_hash(l, l->shared[j].ino));
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        l->shared[i] = l->shared[j];
                        l->shared[j].ino = 0;
                        i = j;
                }
        }
}

/* ---- public ---------------------------------------------------------------- */

Links *links_new(uint64_t seed, links_name_fn name, links_join_fn join, void *userdata) {
        Links *l = calloc(1, sizeof(Links));

        if (l)
                *l = (Links) { .seed = seed, .name = name, .join = join, .userdata = userdata };
        return l;
}

Links *links_free(Links *l) {
        if (!l)
                return NULL;
        for (size_t c = 0; c < l->n_ino_chunks; c++)
                free(l->inos[c]);
        free(l->inos);
        free(l->heads);
        free(l->shared);
        free(l);
        return NULL;
}

void links_set_hint(Links *l, size_t slots) {
        l->hint = slots;
}

/* What a shared inode counts in the totals now: its blocks (none while
 * unsure), kind and owner; a change is the one before and the one after. */
static void shared_counted(const Shared *s, uint32_t *ret_blocks, uint8_t *ret_kind, uint32_t *ret_owner) {
        *ret_blocks = s->unsure ? 0 : s->blocks;
        *ret_kind = (uint8_t) s->kind;
        *ret_owner = s->owner;
}

static uint32_t join(const Links *l, uint32_t a, uint32_t b) {
        return l->join ? l->join(a, b, l->userdata) : 0;
}

/* ino's record, made from its one name (head slot i) when it gets a
 * second: it counts what that name counted, held by the same owner.
 * *before is set to that. NULL: ENOMEM (nothing changed). */
static Shared *shared_from_head(Links *l, uint64_t ino, size_t i, LinksChange *before) {
        uint32_t head = head_id(l->heads[i]), blocks, owner;
        bool unsure = l->heads[i] & HEAD_UNSURE;
        uint8_t kind;
        Shared *s;

        l->name(head, &blocks, &kind, &owner, l->userdata);
        if (!(s = shared_put(l, ino)))
                return NULL;
        *s = (Shared) { .ino = ino, .blocks = blocks, .kind = kind, .unsure = unsure, .owner = owner, .names = 1 };
        l->shared_names++;
        head_delete(l, i);
        shared_counted(s, &before->minus_blocks, &before->minus_kind, &before->minus_owner);
        return s;
}

int links_attach(Links *l, uint32_t id, uint64_t ino, bool unsure, LinksChange *ret) {
        LinksChange c = { 0 };
        uint32_t blocks, owner;
        uint8_t kind;
        Shared *s;
        uint64_t h;
        size_t i;

        *ret = c;
        if (id > LINKS_ID_MAX || ino == 0)
                return -EINVAL;
        if (ino_set(l, id, ino) < 0)
                return -ENOMEM;
        l->name(id, &blocks, &kind, &owner, l->userdata);
        h = ino_hash(l, ino);
        if ((s = shared_get(l, ino)))
                shared_counted(s, &c.minus_blocks, &c.minus_kind, &c.minus_owner);
        else if (l->heads_count > 0 && l->heads[i = head_find(l, ino, h, UINT32_MAX)]) {
                /* A second name: the inode gets a record, as its one name left it. */
                if (!(s = shared_from_head(l, ino, i, &c)))
                        return -ENOMEM;
        }
        if (!s) {
                /* A new inode, one name. */
                if (heads_reserve_one(l) < 0)
                        return -ENOMEM;
                l->heads[head_find(l, ino, h, UINT32_MAX)] = (id + 1) | head_tag(h) | (unsure ? HEAD_UNSURE : 0);
                l->heads_count++;
                if (unsure)
                        l->unsure++;
                else
                        *ret = (LinksChange) { .plus_blocks = blocks, .plus_kind = kind, .plus_owner = owner };
                return 0;
        }
        if (s->unsure && !unsure) {   /* a full scan vouches for it */
                s->unsure = false;
                l->unsure--;
        }
        s->blocks = blocks;   /* the inode's size, as this name saw it */
        s->owner = join(l, s->owner, owner);
        s->names++;
        l->shared_names++;
        shared_counted(s, &c.plus_blocks, &c.plus_kind, &c.plus_owner);
        if (c.minus_blocks == c.plus_blocks && c.minus_owner == c.plus_owner)
                c = (LinksChange) { 0 };   /* (the kind is the record's: it stays) */
        *ret = c;
        return 0;
}

void links_detach(Links *l, uint32_t id, LinksChange *ret) {
        uint64_t ino = *ino_slot(l, id);
        Shared *s = shared_get(l, ino);

        *ret = (LinksChange) { 0 };
        if (s) {
                l->shared_names--;
                if (--s->names > 0)
                        return;
                if (s->unsure)
                        l->unsure--;
                else
                        *ret = (LinksChange) { .minus_blocks = s->blocks, .minus_kind = s->kind,
                                               .minus_owner = s->owner };
                shared_delete(l, s);
        } else if (l->heads_count > 0) {
                size_t i = head_find(l, ino, ino_hash(l, ino), id);
                uint32_t blocks, owner;
                uint8_t kind;

                if (l->heads[i] == 0)
                        return;   /* not a linked name: a caller's bug */
                if (l->heads[i] & HEAD_UNSURE)
                        l->unsure--;
                else {
                        l->name(id, &blocks, &kind, &owner, l->userdata);
                        *ret = (LinksChange) { .minus_blocks = blocks, .minus_kind = kind, .minus_owner = owner };
                }
                head_delete(l, i);
        }
}

uint64_t links_name_ino(const Links *l, uint32_t id) {
        return *ino_slot(l, id);
}

size_t links_unsure(const Links *l) {
        return l->unsure;
}

size_t links_names(const Links *l) {
        return l->heads_count + l->shared_names;
}

size_t links_shared(const Links *l) {
        return l->shared_count;
}

size_t links_memory(const Links *l) {
        size_t chunks = 0;

        for (size_t c = 0; c < l->n_ino_chunks; c++)
                chunks += l->inos[c] != NULL;
        return sizeof(*l) + l->n_ino_chunks * sizeof(uint64_t *) + chunks * INO_CHUNK * sizeof(uint64_t) +
               l->heads_size * sizeof(uint32_t) + l->shared_size * sizeof(Shared);
}

size_t links_longest_run(const Links *l) {
        size_t longest = 0, run = 0;

        for (size_t i = 0; i < l->heads_size; i++) {
                run = l->heads[i] ? run + 1 : 0;
                if (run > longest)
                        longest = run;
        }
        return longest;
}
