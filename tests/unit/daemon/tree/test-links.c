/* SPDX-License-Identifier: MIT */
/* The hard-link table: each inode's bytes counted once whatever happens to
 * its names, checked against a plain model of inodes (names, blocks, kind,
 * unsure) through random attaches and detaches; growth, collisions,
 * removal in every order, what a linked name costs, and who holds an
 * inode's bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree/links.h"

/* The account's side: a name's blocks and kind, by id. */
typedef struct Names {
        uint32_t *blocks;
        uint8_t *kind;
        uint64_t *ino;           /* 0: not linked */
        uint32_t *owner;         /* NULL: every name's owner is 0 */
        size_t n;
} Names;

static void name_of(uint32_t id, uint32_t *ret_blocks, uint8_t *ret_kind, uint32_t *ret_owner, void *userdata) {
        const Names *n = userdata;

        assert_true(id < n->n);
        *ret_blocks = n->blocks[id];
        *ret_kind = n->kind[id];
        *ret_owner = n->owner ? n->owner[id] : 0;
}

/* Owners on one path from the top: the smaller, the higher; the join of two
 * is the higher one (as the account's nearest common ancestor would be). */
static uint32_t join_higher(uint32_t a, uint32_t b, void *userdata) {
        return a < b ? a : b;
}

static void names_init(Names *n, size_t count) {
        n->n = count;
        n->owner = NULL;
        assert_non_null(n->blocks = calloc(count, sizeof(*n->blocks)));
        assert_non_null(n->kind = calloc(count, sizeof(*n->kind)));
        assert_non_null(n->ino = calloc(count, sizeof(*n->ino)));
}

static void names_done(Names *n) {
        free(n->blocks);
        free(n->kind);
        free(n->ino);
}

/* Bytes by kind, as the account keeps them from the changes. */
typedef struct Totals {
        int64_t blocks[16];
} Totals;

static void apply(Totals *t, const LinksChange *c) {
        t->blocks[c->minus_kind] -= c->minus_blocks;
        t->blocks[c->plus_kind] += c->plus_blocks;
}

static uint64_t rng_next(uint64_t *s) {
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        return *s;
}

/* The model: per inode its names, the blocks and kind it counts, unsure, as
 * the account's contract says (account.h, account_file_set_inode). */
typedef struct Model {
        uint32_t names, blocks;
        uint8_t kind;
        bool unsure;
} Model;

static void model_attach(Model *m, uint32_t blocks, uint8_t kind, bool unsure, Totals *t, size_t *n_unsure) {
        if (m->names == 0) {
                *m = (Model) { .blocks = blocks, .kind = kind, .unsure = unsure };
                if (unsure)
                        ++*n_unsure;
                else
                        t->blocks[kind] += blocks;
        } else if (m->unsure && !unsure) {
                m->unsure = false;
                --*n_unsure;
                m->blocks = blocks;
                t->blocks[m->kind] += blocks;
        } else if (m->blocks != blocks) {
                if (!m->unsure)
                        t->blocks[m->kind] += (int64_t) blocks - m->blocks;
                m->blocks = blocks;
        }
        m->names++;
}

static void model_detach(Model *m, Totals *t, size_t *n_unsure) {
        if (--m->names > 0)
                return;
        if (m->unsure)
                --*n_unsure;
        else
                t->blocks[m->kind] -= m->blocks;
}

/* Random attaches (new inodes, more names of known ones, events and full
 * scans, sizes changing) and detaches, in a pool of inodes small enough
 * that inodes get many names and lose them in every order; the totals and
 * the unsure count agree with the model at every step. */
static void run_model(uint64_t seed, size_t ids, size_t inodes, uint64_t ino_base, size_t steps) {
        Names n;
        Model *model = calloc(inodes, sizeof(Model));
        Totals got = { 0 }, want = { 0 };
        size_t want_unsure = 0, linked = 0;
        uint64_t s = seed;
        Links *l;

        assert_non_null(model);
        names_init(&n, ids);
        assert_non_null(l = links_new(seed * 7 + 1, name_of, NULL, &n));
        for (size_t step = 0; step < steps; step++) {
                uint32_t id = (uint32_t) (rng_next(&s) % ids);
                LinksChange c;

                if (n.ino[id]) {
                        size_t k = (size_t) (n.ino[id] - ino_base);

                        assert_int_equal(links_name_ino(l, id), n.ino[id]);
                        links_detach(l, id, &c);
                        apply(&got, &c);
                        model_detach(&model[k], &want, &want_unsure);
                        n.ino[id] = 0;
                        linked--;
                } else {
                        size_t k = (size_t) (rng_next(&s) % inodes);
                        bool unsure = rng_next(&s) % 4 == 0;

                        /* a name's size is its inode's, as last seen; now and then it changed */
                        n.blocks[id] = model[k].names && rng_next(&s) % 8 ? model[k].blocks : (uint32_t) (rng_next(&s) % 1000);
                        n.kind[id] = (uint8_t) (rng_next(&s) % 7);
                        assert_int_equal(links_attach(l, id, ino_base + k, unsure, &c), 0);
                        apply(&got, &c);
                        model_attach(&model[k], n.blocks[id], n.kind[id], unsure, &want, &want_unsure);
                        n.ino[id] = ino_base + k;
                        linked++;
                }
                if (step % 97 == 0 || step + 1 == steps) {
                        assert_memory_equal(&got, &want, sizeof(got));
                        assert_int_equal(links_unsure(l), want_unsure);
                        assert_int_equal(links_names(l), linked);
                }
        }
        /* every name goes, one by one: nothing is left */
        for (uint32_t id = 0; id < ids; id++)
                if (n.ino[id]) {
                        LinksChange c;

                        links_detach(l, id, &c);
                        apply(&got, &c);
                        model_detach(&model[n.ino[id] - ino_base], &want, &want_unsure);
                        n.ino[id] = 0;
                }
        assert_memory_equal(&got, &want, sizeof(got));
        for (int k = 0; k < 16; k++)
                assert_int_equal(got.blocks[k], 0);
        assert_int_equal(links_unsure(l), 0);
        assert_int_equal(links_names(l), 0);
        assert_int_equal(links_shared(l), 0);
        links_free(l);
        names_done(&n);
        free(model);
}

static void test_model_many_names_per_inode(void **state) {
        (void) state;
        run_model(1, 3000, 40, 1000, 200000);
}

static void test_model_mostly_one_name(void **state) {
        (void) state;
        /* as ccache's hard_link: most inodes have one name here; inode
         * numbers past 32 bits */
        run_model(2, 200000, 400000, (uint64_t) 5 << 40, 600000);
}

/* A name that is an inode's only one costs its inode number and an index
 * slot: no record. 100k of them, every one then removed in another order
 * than it came; the index holds them in short runs at any inode numbers. */
static void test_one_name_each(void **state) {
        enum { N = 100000 };
        static const uint64_t bases[] = { 1, (uint64_t) 1 << 32, UINT64_MAX - 4096 * (uint64_t) N - 1 };
        Names n;

        (void) state;
        names_init(&n, N);
        for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
                Totals t = { 0 };
                Links *l;

                assert_non_null(l = links_new(b, name_of, NULL, &n));
                links_set_hint(l, N * 5 / 4 + 1);   /* the account's index, 80 % full */
                for (uint32_t id = 0; id < N; id++) {
                        LinksChange c;

                        n.blocks[id] = id % 13 + 1;
                        n.kind[id] = id % 7;
                        /* inode numbers in steps of 4096: the low bits tell nothing */
                        assert_int_equal(links_attach(l, id, bases[b] + (uint64_t) id * 4096, false, &c), 0);
                        assert_int_equal(c.plus_blocks, id % 13 + 1);
                        assert_int_equal(c.plus_kind, id % 7);
                        assert_int_equal(c.minus_blocks, 0);
                        apply(&t, &c);
                }
                assert_int_equal(links_names(l), N);
                assert_int_equal(links_shared(l), 0);
                /* 8 bytes of inode number, a slot at most 80 % full at the hint */
                assert_true(links_memory(l) <= (size_t) N * 14 + 512 * 1024);
                /* at 80 % full, a random hash leaves runs of a few hundred;
                 * numbers piled up would make one of N */
                assert_true(links_longest_run(l) < 1000);
                for (uint32_t i = 0; i < N; i++) {
                        uint32_t id = (uint32_t) ((i * 7919ULL) % N);   /* 7919 is prime: each id once */
                        LinksChange c;

                        assert_int_equal(links_name_ino(l, id), bases[b] + (uint64_t) id * 4096);
                        links_detach(l, id, &c);
                        assert_int_equal(c.minus_blocks, id % 13 + 1);
                        assert_int_equal(c.minus_kind, id % 7);
                        apply(&t, &c);
                }
                for (int k = 0; k < 16; k++)
                        assert_int_equal(t.blocks[k], 0);
                assert_int_equal(links_names(l), 0);
                links_free(l);
        }
        names_done(&n);
}

/* An inode's second name gives it a record as its first left it (unsure
 * included); names dropped one by one keep its bytes until the last. */
static void test_second_name(void **state) {
        Names n;
        Links *l;
        LinksChange c;

        (void) state;
        names_init(&n, 8);
        assert_non_null(l = links_new(3, name_of, NULL, &n));
        n.blocks[0] = 10, n.kind[0] = 2;
        assert_int_equal(links_attach(l, 0, 77, true, &c), 0);   /* seen by an event: waits */
        assert_int_equal(c.plus_blocks, 0);
        assert_int_equal(links_unsure(l), 1);
        n.blocks[1] = 10, n.kind[1] = 5;
        assert_int_equal(links_attach(l, 1, 77, true, &c), 0);   /* still unsure */
        assert_int_equal(c.plus_blocks, 0);
        assert_int_equal(links_shared(l), 1);
        n.blocks[2] = 12, n.kind[2] = 5;
        assert_int_equal(links_attach(l, 2, 77, false, &c), 0);   /* a full scan: counted once, its kind the first name's */
        assert_int_equal(c.plus_blocks, 12);
        assert_int_equal(c.plus_kind, 2);
        assert_int_equal(c.minus_blocks, 0);
        assert_int_equal(links_unsure(l), 0);
        n.blocks[3] = 16, n.kind[3] = 1;
        assert_int_equal(links_attach(l, 3, 77, false, &c), 0);   /* it grew */
        assert_int_equal(c.minus_blocks, 12);
        assert_int_equal(c.plus_blocks, 16);
        assert_int_equal(c.plus_kind, 2);
        for (uint32_t id = 0; id < 3; id++) {
                links_detach(l, id, &c);
                assert_int_equal(c.minus_blocks, 0);
                assert_int_equal(c.plus_blocks, 0);
        }
        links_detach(l, 3, &c);
        assert_int_equal(c.minus_blocks, 16);
        assert_int_equal(c.minus_kind, 2);
        assert_int_equal(links_shared(l), 0);
        assert_int_equal(links_names(l), 0);
        /* the inode number again: a new inode */
        n.blocks[4] = 3, n.kind[4] = 4;
        assert_int_equal(links_attach(l, 4, 77, false, &c), 0);
        assert_int_equal(c.plus_blocks, 3);
        assert_int_equal(c.plus_kind, 4);
        assert_int_equal(links_attach(l, 5, 0, false, &c), -EINVAL);
        assert_int_equal(links_attach(l, LINKS_ID_MAX + 1, 5, false, &c), -EINVAL);
        links_free(l);
        names_done(&n);
}

/* An inode's bytes are held by the join of its names' owners: a name
 * higher up moves them there (one change: out of the old owner, into the
 * new), a lower one changes nothing, and the last name takes them from
 * where they are; a new size leaves and enters the same owner. */
static void test_owner_is_the_join(void **state) {
        uint32_t owners[4] = { 5, 3, 7, 3 };
        Names n;
        Links *l;
        LinksChange c;

        (void) state;
        names_init(&n, 4);
        n.owner = owners;   /* (the test's: names_done leaves it) */
        assert_non_null(l = links_new(3, name_of, join_higher, &n));
        for (int i = 0; i < 4; i++)
                n.blocks[i] = 10, n.kind[i] = 1;
        assert_int_equal(links_attach(l, 0, 77, false, &c), 0);
        assert_int_equal(c.plus_blocks, 10);
        assert_int_equal(c.plus_owner, 5);
        assert_int_equal(links_attach(l, 1, 77, false, &c), 0);      /* higher: the bytes move */
        assert_int_equal(c.minus_blocks, 10);
        assert_int_equal(c.minus_owner, 5);
        assert_int_equal(c.plus_blocks, 10);
        assert_int_equal(c.plus_owner, 3);
        assert_int_equal(links_attach(l, 2, 77, false, &c), 0);      /* lower: nothing */
        assert_int_equal(c.minus_blocks, 0);
        assert_int_equal(c.plus_blocks, 0);
        n.blocks[3] = 14;
        assert_int_equal(links_attach(l, 3, 77, false, &c), 0);      /* it grew: same owner */
        assert_int_equal(c.minus_blocks, 10);
        assert_int_equal(c.plus_blocks, 14);
        assert_int_equal(c.minus_owner, 3);
        assert_int_equal(c.plus_owner, 3);
        for (uint32_t id = 0; id < 3; id++) {
                links_detach(l, id, &c);
                assert_int_equal(c.minus_blocks, 0);
        }
        links_detach(l, 3, &c);
        assert_int_equal(c.minus_blocks, 14);
        assert_int_equal(c.minus_owner, 3);
        links_free(l);
        names_done(&n);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_second_name),
                cmocka_unit_test(test_one_name_each),
                cmocka_unit_test(test_model_many_names_per_inode),
                cmocka_unit_test(test_model_mostly_one_name),
                cmocka_unit_test(test_owner_is_the_join),
        };
        return cmocka_run_group_tests_name("links", tests, NULL, NULL);
}
