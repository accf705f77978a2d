/* SPDX-License-Identifier: MIT */
/* Hard links in an Account: which inode each name with more than one link
 * is, and how many of that inode's names the account holds, so that an
 * inode's blocks count once, as du counts them. Only linked names are here:
 * a cache normally has none, and costs nothing. Pure data, no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Links Links;

typedef struct LinkedInode {
        uint64_t ino;            /* first: the table's key */
        uint32_t names;          /* names of it the account holds */
        uint32_t blocks;         /* its st_blocks, counted once in the totals */
        uint8_t kind;            /* the kind its bytes are counted under (its first name's) */
        bool unsure;             /* seen through events only: its bytes wait for a full scan */
} LinkedInode;

/* Returns a new, empty table, or NULL (out of memory). */
Links *links_new(void);
Links *links_free(Links *l);
/* Forgets everything. */
void links_clear(Links *l);

/* The entry of inode ino; created with names 0, blocks and kind if absent.
 * Borrowed, valid until the next links_* call. NULL: out of memory (nothing
 * changed). */
LinkedInode *links_inode(Links *l, uint64_t ino, uint32_t blocks, uint8_t kind);
/* Forgets inode ino (its last name went). */
void links_inode_drop(Links *l, uint64_t ino);

/* Records that name id is a name of inode ino. Returns 0 or -ENOMEM. */
int links_name_set(Links *l, uint32_t id, uint64_t ino);
/* The inode of name id, 0 if it is not a linked name. */
uint64_t links_name_ino(const Links *l, uint32_t id);
void links_name_drop(Links *l, uint32_t id);

/* Bytes of memory held. */
size_t links_memory(const Links *l);
