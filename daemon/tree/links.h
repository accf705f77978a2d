/* SPDX-License-Identifier: MIT */
/* Hard links in an Account: which inode each name with more than one link
 * is, and how many of that inode's names the account holds, so that an
 * inode's blocks count once, as du counts them. Only linked names are here:
 * a cache normally has none, and costs nothing. Pure data, no I/O.
 *
 * Sized for a cache whose every entry is linked (ccache's hard_link, a copy
 * made with cp -al), where an inode's other names are outside the cache: a
 * linked name costs its inode number (8 bytes, in arrays by name id) and a
 * 4-byte slot in an index of inodes by number that points at the name, no
 * record of its own. Only an inode with two names or more in the account
 * has a record (16 bytes, found by inode number). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Links Links;

/* Name ids are 0 .. LINKS_ID_MAX (the account's FileIds). */
#define LINKS_ID_MAX ((uint32_t) (1u << 25) - 2)

/* The blocks, kind and owner name id's record holds, as attached (the table
 * keeps them only for inodes with more than one name in the account). */
typedef void (*links_name_fn)(uint32_t id, uint32_t *ret_blocks, uint8_t *ret_kind, uint32_t *ret_owner,
                              void *userdata);
/* The owner of an inode with names held by owners a and b. */
typedef uint32_t (*links_join_fn)(uint32_t a, uint32_t b, void *userdata);

/* What an attach or a detach does to the totals: an inode's blocks leave
 * them (minus_blocks, under minus_kind, held by minus_owner) and enter them
 * (plus_*); 0 blocks for none. A change of owner alone is a change too:
 * the same blocks leave one owner and enter another. */
typedef struct LinksChange {
        uint32_t minus_blocks, plus_blocks;
        uint32_t minus_owner, plus_owner;
        uint8_t minus_kind, plus_kind;
} LinksChange;

/* Returns a new, empty table, or NULL (out of memory). seed keys the hash
 * of inode numbers; name tells the blocks, kind and owner of a name; join
 * (NULL: every owner is 0) the owner of an inode's names together. */
Links *links_new(uint64_t seed, links_name_fn name, links_join_fn join, void *userdata);
Links *links_free(Links *l);

/* The index of inodes never needs more than slots slots (the account's
 * file index, which holds every name at most 80 % full): it grows straight
 * to that size rather than past it. */
void links_set_hint(Links *l, size_t slots);

/* Records name id, whose blocks and kind are those name() tells for it, as
 * a name of inode ino; id must not be a linked name already. The inode's
 * bytes enter the totals with its first name, or wait while it is unsure:
 * unsure says id was not seen by a full scan, and the account may hold
 * other names of ino as files of their own (recorded when they had one
 * link), so a new inode's bytes wait for a name a full scan saw (unsure
 * false) rather than count twice. A name of a known inode with other blocks
 * says the inode's size changed. The inode's owner becomes the join of its
 * owner and the new name's (an owner joined with itself must give itself).
 * Returns 0, or -ENOMEM (nothing changed). */
int links_attach(Links *l, uint32_t id, uint64_t ino, bool unsure, LinksChange *ret);
/* Name id, a linked name, is one no more (name() still tells its blocks,
 * kind and owner as attached); the inode's bytes leave with its last name,
 * from the owner that holds them. An inode that keeps names keeps its owner
 * (an owner of the names it has left, not always the nearest). */
void links_detach(Links *l, uint32_t id, LinksChange *ret);

/* The inode of linked name id. */
uint64_t links_name_ino(const Links *l, uint32_t id);
/* Inodes whose bytes wait for a full scan (see links_attach). */
size_t links_unsure(const Links *l);
/* Names, and inodes with more than one name, held. */
size_t links_names(const Links *l);
size_t links_shared(const Links *l);

/* Bytes of memory held. */
size_t links_memory(const Links *l);
/* The longest run of occupied slots in the index of inodes (tests). */
size_t links_longest_run(const Links *l);
