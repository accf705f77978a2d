/* SPDX-License-Identifier: MIT */
/* Two small open-addressing tables keyed by 64-bit integers (inode numbers,
 * name ids + 1; 0 marks an empty slot), linear probing, backward-shift
 * deletion, grown at half full. Each slot starts with its key. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree/links.h"

#define TABLE_MIN 64   /* a power of two */

typedef struct NameSlot {
        uint64_t key;    /* name id + 1; 0: empty */
        uint64_t ino;
} NameSlot;

typedef struct Table {
        char *slots;
        size_t slot_size, size, count;
} Table;

struct Links {
        Table inodes;    /* LinkedInode, keyed by ino */
        Table names;     /* NameSlot */
};

static uint64_t *key_at(const Table *t, size_t i) {
        return (uint64_t *) (t->slots + i * t->slot_size);
}

static size_t slot_home(const Table *t, uint64_t key) {
        key ^= key >> 33;
        key *= 0xff51afd7ed558ccdULL;
        key ^= key >> 33;
        return (size_t) key & (t->size - 1);
}

/* The slot index of key, or of the empty slot where it would go; t->size
 * when the table has no slots yet. */
static size_t slot_find(const Table *t, uint64_t key) {
        if (t->size == 0)
                return 0;
        for (size_t i = slot_home(t, key);; i = (i + 1) & (t->size - 1))
                if (*key_at(t, i) == key || *key_at(t, i) == 0)
                        return i;
}

static void *table_get(const Table *t, uint64_t key) {
        size_t i = slot_find(t, key);

        return t->size && *key_at(t, i) == key ? key_at(t, i) : NULL;
}

static int table_grow(Table *t) {
        Table n = { .slot_size = t->slot_size, .size = t->size ? 2 * t->size : TABLE_MIN, .count = t->count };

        n.slots = calloc(n.size, n.slot_size);
        if (!n.slots)
                return -ENOMEM;
        for (size_t i = 0; i < t->size; i++)
                if (*key_at(t, i))
                        memcpy(key_at(&n, slot_find(&n, *key_at(t, i))), key_at(t, i), t->slot_size);
        free(t->slots);
        *t = n;
        return 0;
}

/* The slot of key; if absent, inserted zeroed but for the key. NULL: ENOMEM. */
static void *table_put(Table *t, uint64_t key) {
        void *s = table_get(t, key);

        if (s)
                return s;
        if (2 * (t->count + 1) > t->size && table_grow(t) < 0)
                return NULL;
        s = key_at(t, slot_find(t, key));
        memset(s, 0, t->slot_size);
        *(uint64_t *) s = key;
        t->count++;
        return s;
}

static void table_delete(Table *t, uint64_t key) {
        size_t i = slot_find(t, key), j = i;

        if (t->size == 0 || *key_at(t, i) != key)
                return;
        *key_at(t, i) = 0;
        t->count--;
        for (;;) {
                size_t k;

                j = (j + 1) & (t->size - 1);
                if (*key_at(t, j) == 0)
                        return;
                k = slot_home(t, *key_at(t, j));
                if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
                        memcpy(key_at(t, i), key_at(t, j), t->slot_size);
                        *key_at(t, j) = 0;
                        i = j;
                }
        }
}

Links *links_new(void) {
        Links *l = calloc(1, sizeof(Links));

        if (l) {
                l->inodes.slot_size = sizeof(LinkedInode);
                l->names.slot_size = sizeof(NameSlot);
        }
        return l;
}

void links_clear(Links *l) {
        free(l->inodes.slots);
        free(l->names.slots);
        l->inodes = (Table) { .slot_size = sizeof(LinkedInode) };
        l->names = (Table) { .slot_size = sizeof(NameSlot) };
}

Links *links_free(Links *l) {
        if (l)
                links_clear(l);
        free(l);
        return NULL;
}

LinkedInode *links_inode(Links *l, uint64_t ino, uint32_t blocks, uint8_t kind) {
        LinkedInode *i = table_get(&l->inodes, ino);

        if (i)
                return i;
        if (!(i = table_put(&l->inodes, ino)))
                return NULL;
        i->blocks = blocks;
        i->kind = kind;
        return i;
}

void links_inode_drop(Links *l, uint64_t ino) {
        table_delete(&l->inodes, ino);
}

int links_name_set(Links *l, uint32_t id, uint64_t ino) {
        NameSlot *s = table_put(&l->names, (uint64_t) id + 1);

        if (!s)
                return -ENOMEM;
        s->ino = ino;
        return 0;
}

uint64_t links_name_ino(const Links *l, uint32_t id) {
        const NameSlot *s = table_get(&l->names, (uint64_t) id + 1);

        return s ? s->ino : 0;
}

void links_name_drop(Links *l, uint32_t id) {
        table_delete(&l->names, (uint64_t) id + 1);
}

size_t links_memory(const Links *l) {
        return sizeof(*l) + l->inodes.size * l->inodes.slot_size + l->names.size * l->names.slot_size;
}
