/* SPDX-License-Identifier: MIT */
/* The merge job (merge.h). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/human.h"
#include "base/log.h"
#include "base/slice.h"
#include "base/status-keys.h"
#include "ccache/ccache.h"
#include "ccache/families.h"
#include "evict/evict.h"
#include "evict/move.h"
#include "evict/trim.h"
#include "merge.h"
#include "os/beneath.h"
#include "os/mounts.h"
#include "space/volume.h"

/* One slice of moves (base/slice.h): ended early, as every job's, by a
 * request waiting at the socket. Longer than a scan's: each slice re-opens
 * TO's directory and finds both caches again. */
#define MERGE_SLICE_USEC   (50 * USEC_PER_MSEC)
/* Bytes copied in one slice at most: a big entry is copied over several, so
 * that the loop answers within its usual latency whatever the entry's size
 * (350 MiB/s tmpfs to tmpfs: some 20 ms). */
#define MERGE_SLICE_BYTES  (8u << 20)
#define MERGE_GROUP_MAX    1024                   /* entries of one directory per group */
#define MERGE_WAIT_USEC    (50 * USEC_PER_MSEC)   /* between looks while waiting (a directory, a scan) */
/* A directory made in TO must reach TO's account (its inotify event) this
 * soon; else its entries are left in FROM this round. */
#define MERGE_DIR_WAIT_USEC (10 * USEC_PER_SEC)
#define MERGE_ROUNDS_MAX   3                      /* rounds for entries FROM's writers add meanwhile */
#define MERGE_CAP_TRIES    4                      /* cap evictions in a row that let nothing move */
/* The dry run's estimate until a merge has been measured: renames a second
 * on one filesystem; entries and bytes a second copied across (whichever
 * takes longer). Measured on a loaded two-core box, tmpfs to tmpfs, 20000
 * gencache entries (661.5M): 1.6-1.9 s copied, 0.57-0.65 s renamed. */
#define MERGE_RENAMES_PER_SEC 30000.0
#define MERGE_COPIES_PER_SEC  10000.0
#define MERGE_COPY_BYTES_PER_SEC (350.0 * 1024 * 1024)
/* In the state directory while a merge runs: found at the start of the
 * next, it says one was interrupted (kill -9). */
#define MERGE_MARK "merge.running"

typedef struct Placed Placed;

typedef struct MergeItem {
        DirId dir;
        uint32_t dir_gen;
        FileId file;
        uint64_t bytes;
} MergeItem;

typedef enum MergePhase {
        MERGE_EVICTING,
        MERGE_MOVING,
        MERGE_DONE,
} MergePhase;

static const char *const phase_names[] = { "evicting", "moving", "done" };

struct Merge {
        MergeEnv env;
        char from[CONFIG_NAME_MAX + 1], into[CONFIG_NAME_MAX + 1];
        char from_path[PATH_MAX], into_path[PATH_MAX];
        bool same_fs;
        MergeItem *items;
        size_t n, next;
        unsigned round;
        uint64_t round_moved;           /* moved + already when the round began */
        MergePhase phase;
        unsigned trims_pending;
        unsigned cap_tries;             /* cap evictions since the last entry moved */
        usec_t started, dir_wait_since; /* monotonic */
        sd_event_source *source, *timer;
        merge_done_t done;
        void *userdata;

        uint64_t files_total, bytes_total, files_done, bytes_done;
        uint64_t moved, moved_bytes, already, skipped, gone, errors, left;
        int first_error;
        uint64_t evict_into_files, evict_into_bytes, drop_from_files, drop_from_bytes;
        uint64_t sparse, sparse_bytes;  /* names left unread: size beyond their blocks (move.h) */
        uint64_t put_back;              /* placed in a directory renamed out of TO: taken back */
        uint64_t min_free;              /* TO's volume's, across filesystems */
        MoveCopy copy;                  /* an entry's copy going on over slices */
        FileId copy_file;
        Placed *placed;                 /* this slice's, until their directory is re-checked */
        uint64_t into_size, into_max_size;  /* TO's size and cap: at the start, then at the end */
        bool recount_all;               /* a merge was interrupted before: recount both at the end */
        bool marked;                    /* MERGE_MARK is ours, removed at the end */
        char failed[256];               /* why it stopped early; "" when it ran to the end */
};

/* The rate the last real merge of each kind achieved (entries, bytes a
 * second), for the next dry run's estimate. */
static double measured_files[2], measured_bytes[2];

static Cache *find(const Merge *j, const char *name, const char *path) {
        return j->env.find(j->env.userdata, name, path);
}

static int item_cmp(const void *x, const void *y) {
        const MergeItem *a = x, *b = y;

        if (a->dir != b->dir)
                return a->dir < b->dir ? -1 : 1;
        return a->file < b->file ? -1 : a->file > b->file;
}

/* FROM's entries now, by directory. Returns 0 or -ENOMEM. */
static int collect(Account *a, MergeItem **ret, size_t *ret_n, uint64_t *ret_bytes) {
        FileId limit = account_file_limit(a);
        MergeItem *items = NULL;
        size_t n = 0, alloc = 0;
        uint64_t bytes = 0;

        for (FileId f = 0; f < limit; f++) {
                FileInfo fi;

                if (account_file_info(a, f, &fi) < 0 || !ccache_kind_is_entry(fi.kind))
                        continue;
                if (n == alloc) {
                        MergeItem *p = reallocarray(items, alloc ? alloc * 2 : 1024, sizeof(*items));

                        if (!p) {
                                free(items);
                                return -ENOMEM;
                        }
                        items = p;
                        alloc = alloc ? alloc * 2 : 1024;
                }
                items[n++] = (MergeItem) { .dir = fi.dir, .dir_gen = fi.dir_gen, .file = f, .bytes = fi.blocks * 512 };
                bytes += fi.blocks * 512;
        }
        if (n > 0)
                qsort(items, n, sizeof(*items), item_cmp);
        *ret = items;
        *ret_n = n;
        *ret_bytes = bytes;
        return 0;
}

/* The entries of each key scheme (families.h) in account a. */
static void schemes(Account *a, uint64_t files[_KEY_SCHEME_MAX], uint64_t bytes[_KEY_SCHEME_MAX]) {
        FileId limit = account_file_limit(a);

        for (FileId f = 0; f < limit; f++) {
                char name[CCACHE_NAME_MAX + 256];
                FileInfo fi;
                KeyScheme s;

                if (account_file_info(a, f, &fi) < 0 || !ccache_kind_is_entry(fi.kind) ||
                    account_file_name(a, f, name, sizeof(name)) < 0)
                        continue;
                s = key_scheme_of(fi.kind, name);
                files[s]++;
                bytes[s] += fi.blocks * 512;
        }
}

/* TO's trim target: what a trim of it aims at. */
static uint64_t into_target(const CacheConfig *cc) {
        return (uint64_t) ((double) cc->max_size_bytes * cc->trim_to);
}

/* The coldest of both caches together, enough that TO's size plus the
 * incoming bytes come down to TO's trim target. plans[0]: TO's, plans[1]:
 * FROM's. Returns 0 or -ENOMEM. */
static int plan_cap(Cache *from, Cache *to, uint64_t incoming, EvictPlan plans[2]) {
        Account *as[2] = { cache_account(to), cache_account(from) };
        uint64_t size = account_totals(as[0])->bytes + incoming, target = into_target(cache_config(to));
        /* Over the cap: down to the trim target, as a trim of TO would. */
        uint64_t need = size > cache_config(to)->max_size_bytes && size > target ? size - target : 0;

        memset(plans, 0, 2 * sizeof(EvictPlan));
        if (need == 0)
                return 0;
        return evict_plan_multi(as, 2, need, (int64_t) (now_usec(CLOCK_REALTIME) / USEC_PER_SEC), plans);
}

static void on_trim_done(Cache *c, const TrimResult *r, void *userdata);

/* Queues the cap's evictions of plans (taken over) in both caches. */
static void evict_both(Merge *j, Cache *from, Cache *to, EvictPlan plans[2]) {
        Cache *caches[2] = { to, from };

        for (int i = 0; i < 2; i++) {
                if (plans[i].n == 0) {
                        evict_plan_done(&plans[i]);
                        continue;
                }
                if (cache_trim_plan(caches[i], &plans[i], TRIM_REASON_MERGE, on_trim_done, j) == 0)
                        j->trims_pending++;
        }
}

static uint64_t count_entries(Account *a) {
        FileId limit = account_file_limit(a);
        uint64_t n = 0;

        for (FileId f = 0; f < limit; f++) {
                FileInfo fi;

                n += account_file_info(a, f, &fi) == 0 && ccache_kind_is_entry(fi.kind);
        }
        return n;
}

static void finish(Merge *j) {
        usec_t took = now_usec(CLOCK_MONOTONIC) - j->started;
        Cache *from = find(j, j->from, j->from_path);
        char b[32];

        Cache *to = find(j, j->into, j->into_path);

        if (from)
                j->left = count_entries(cache_account(from));
        if (to) {
                j->into_size = account_totals(cache_account(to))->bytes;
                j->into_max_size = cache_config(to)->max_size_bytes;
        }
        /* A merge killed before (kill -9: its mark was left) may have
         * moved entries whose counters it never paid, in directories this
         * run does not touch: every level-2 directory of both is recounted. */
        if (j->recount_all)
                log_notice("Merge of cache %s into %s: the last merge was interrupted; ccache's counters of both are "
                           "recounted.", j->from, j->into);
        for (int i = 0; j->recount_all && i < 2; i++) {
                Cache *c = find(j, i ? j->into : j->from, i ? j->into_path : j->from_path);

                for (unsigned l = 0; c && l < 256; l++)
                        cache_recount(c, l >> 4, l & 15);
        }
        move_copy_abort(&j->copy);
        j->phase = MERGE_DONE;
        if (j->marked && j->env.state_fd >= 0)
                (void) unlinkat(j->env.state_fd, MERGE_MARK, 0);
        j->marked = false;
        (void) sd_event_source_set_enabled(j->source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        if (!j->failed[0] && took > 0 && j->moved > 100) {
                measured_files[j->same_fs] = (double) j->moved * USEC_PER_SEC / (double) took;
                measured_bytes[j->same_fs] = (double) j->moved_bytes * USEC_PER_SEC / (double) took;
        }
        log_info("Merge of cache %s into %s %s: %llu entries (%s) moved, %llu already there, %llu left as "
                 "changed, %llu gone meanwhile, %llu errors; %llu entries left in %s; %.1f s.%s%s", j->from, j->into,
                 j->failed[0] ? "stopped" : "done", (unsigned long long) j->moved,   /* not a status key */
                 format_size(j->moved_bytes, b, sizeof(b)), (unsigned long long) j->already,
                 (unsigned long long) j->skipped, (unsigned long long) j->gone, (unsigned long long) j->errors,
                 (unsigned long long) j->left, j->from, (double) took / USEC_PER_SEC, j->failed[0] ? " " : "",
                 j->failed);
        if (j->sparse > 0)
                log_warning("Merge of cache %s into %s: %llu names in %s are sparse files (%s apparent, beyond their "
                            "blocks): no entries of ccache's; left there, never read.", j->from, j->into,
                            (unsigned long long) j->sparse, j->from_path, format_size(j->sparse_bytes, b, sizeof(b)));
        if (j->done)
                j->done(j, j->userdata);
}

static void fail(Merge *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(Merge *j, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(j->failed, sizeof(j->failed), fmt, ap);
        va_end(ap);
        finish(j);
}

static void wait_a_moment(Merge *j) {
        (void) sd_event_source_set_enabled(j->source, SD_EVENT_OFF);
        (void) sd_event_source_set_time_relative(j->timer, MERGE_WAIT_USEC);
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_ONESHOT);
}

static void on_trim_done(Cache *c, const TrimResult *r, void *userdata) {
        Merge *j = userdata;

        if (j->trims_pending > 0 && --j->trims_pending == 0 && j->phase != MERGE_DONE) {
                j->phase = MERGE_MOVING;
                (void) sd_event_source_set_enabled(j->source, SD_EVENT_ON);
        }
}

/* Directory rel ("a/b") in account a, or DIR_NONE. */
static DirId dir_lookup(const Account *a, const char *rel) {
        char buf[PATH_MAX], *save = NULL;
        DirId d = DIR_ROOT;

        snprintf(buf, sizeof(buf), "%s", rel);
        for (char *p = strtok_r(buf, "/", &save); p && d != DIR_NONE; p = strtok_r(NULL, "/", &save))
                d = account_dir_find(a, d, p);
        return d;
}

/* Makes the directories of rel missing below root_fd, one level at a time,
 * each opened beneath the root (never through a symlink, never onto
 * another mount). Mode 0777 less the umask: TO's upkeep sets ccache's modes
 * on the event. Returns 0 or -errno. */
static int make_dirs(int root_fd, const char *rel) {
        char parent[PATH_MAX];

        for (const char *p = rel; *p;) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t) (slash - rel) : strlen(rel);
                _cleanup_close_ int fd = -1;

                /* parent: rel up to the component at p */
                snprintf(parent, sizeof(parent), "%.*s", (int) (p == rel ? 0 : p - rel - 1), rel);
                fd = beneath_open_dir(root_fd, parent);
                if (fd < 0)
                        return fd;
                {
                        char name[NAME_MAX + 1];

                        snprintf(name, sizeof(name), "%.*s", (int) (len - (size_t) (p - rel)), p);
                        if (mkdirat(fd, name, 0777) < 0 && errno != EEXIST)
                                return -errno;
                }
                p = slash ? slash + 1 : p + strlen(p);
        }
        return 0;
}

static void count_error(Merge *j, int r) {
        if (j->errors++ == 0)
                j->first_error = r;
}

typedef struct Slice {
        Cache *from, *to;
        Account *fa, *ta;
        int from_root, to_root;
        dev_t from_dev, to_dev;
        SliceBudget budget;
        uint64_t copied;        /* bytes copied in this slice */
} Slice;

/* The slice has had its time or its bytes, after one more entry (or a
 * group's worth: a look at the clock now). */
static bool merge_slice_over(Slice *s, bool now) {
        return s->copied >= MERGE_SLICE_BYTES || (now ? slice_over_now(&s->budget) : slice_over(&s->budget));
}

/* Counts items [start, end) as done and gone: their directory went. */
static void group_gone(Merge *j, size_t start, size_t end) {
        for (size_t i = start; i < end; i++) {
                j->files_done++;
                j->bytes_done += j->items[i].bytes;
                j->gone++;
        }
}

/* TO's cap holds throughout: before an entry of blocks moves, the coldest
 * of both go if TO would pass its cap. Returns 0 to move it, 1 to wait for
 * the evictions, -1 to stop the merge (why says so). */
static int cap_check(Merge *j, Slice *s, size_t i, uint64_t blocks, char *why, size_t whylen) {
        const CacheConfig *tc = cache_config(s->to);
        uint64_t incoming = 0;
        EvictPlan plans[2];

        if (account_totals(s->ta)->bytes + blocks * 512 <= tc->max_size_bytes)
                return 0;
        if (j->trims_pending > 0)
                return 1;
        if (++j->cap_tries > MERGE_CAP_TRIES) {
                snprintf(why, whylen, "%s stays at its cap (%llu bytes) whatever is evicted: nothing more may go",
                         j->into, (unsigned long long) tc->max_size_bytes);
                return -1;
        }
        for (size_t k = i; k < j->n; k++)
                incoming += j->items[k].bytes;
        if (plan_cap(s->from, s->to, incoming, plans) < 0) {
                snprintf(why, whylen, "out of memory planning the cap's evictions");
                return -1;
        }
        j->evict_into_files += plans[0].n;
        j->evict_into_bytes += plans[0].bytes;
        j->drop_from_files += plans[1].n;
        j->drop_from_bytes += plans[1].bytes;
        evict_both(j, s->from, s->to, plans);
        if (j->trims_pending == 0) {
                snprintf(why, whylen, "%s is at its cap and nothing of either cache may be evicted", j->into);
                return -1;
        }
        return 1;
}

/* Room on TO's volume for a copy of size bytes above its min_free, as the
 * volume is now (TO's writers take room meanwhile too). */
static bool room_for(const Merge *j, const Slice *s, uint64_t size, char *why, size_t whylen) {
        VolumeUsage u;
        char a[32], b[32], c[32];

        if (volume_usage(s->to_root, NULL, &u) < 0 || u.avail_bytes >= size + j->min_free)
                return true;
        snprintf(why, whylen, "%s's volume is down to %s free, its min_free is %s: the next entry (%s) does not fit",
                 j->into, format_size(u.avail_bytes, a, sizeof(a)), format_size(j->min_free, b, sizeof(b)),
                 format_size(size, c, sizeof(c)));
        return false;
}

/* Are fds a and b the same directory? */
static bool same_dir(int a, int b) {
        struct stat sa, sb;

        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Is the directory open as fd still TO's rel: the one found from TO's root
 * now, beneath it, no symlink, no other mount? (A user who may rename its
 * parents can move it away while the fd writes into it.) */
static bool still_into(const Slice *s, const char *rel, int fd) {
        _cleanup_close_ int now = beneath_open_dir(s->to_root, rel);

        return now >= 0 && same_dir(now, fd);
}

/* Places item i (name, its account figures fi) into to_fd, or goes on with
 * its copy; copies stay within the slice's bytes. Returns 0 (*mr says what
 * happened), 1 while its copy goes on in the next slice, -1 to stop the
 * merge (why), or -errno. */
static int place(Merge *j, Slice *s, size_t i, int from_fd, int to_fd, const char *name, const FileInfo *fi,
                 MoveResult *mr, char *why, size_t whylen) {
        MoveExpect e = { .dev = s->from_dev, .blocks = fi->blocks, .mtime = fi->mtime };
        int r = 1;

        *mr = (MoveResult) { 0 };
        /* A copy begun in an earlier slice goes on only into the same
         * directory: one renamed away since is not written to again. */
        if (!(move_copy_busy(&j->copy) && j->copy_file == j->items[i].file && same_dir(j->copy.dir_fd, to_fd))) {
                move_copy_abort(&j->copy);
                r = move_place(from_fd, to_fd, s->to_dev, name, &e, &j->copy, mr);
                if (r != 1)
                        return r;
                j->copy_file = j->items[i].file;
                if (!room_for(j, s, j->copy.size, why, whylen)) {
                        move_copy_abort(&j->copy);
                        return -1;
                }
        }
        r = move_copy_step(&j->copy, s->copied < MERGE_SLICE_BYTES ? MERGE_SLICE_BYTES - s->copied : 1, &s->copied);
        if (r == 1)
                return 1;
        if (r == 0)
                return move_copy_finish(&j->copy, s->to_dev, mr);
        move_copy_abort(&j->copy);
        if (r != -ESTALE)
                return r;
        mr->outcome = MOVE_CHANGED;   /* ended early: truncated meanwhile */
        return 0;
}

/* An entry placed in TO's directory this slice, its source not yet gone. */
struct Placed {
        size_t item;
        FileInfo fi;
        MoveResult mr;
};

/* What a group's moves change in ccache's counters of both. */
typedef struct GroupCounts {
        uint64_t add_files, add_kib, sub_files, sub_kib;
        bool moved_any;
} GroupCounts;

/* One placed entry counted, its destination where it should be: the source
 * goes (committed), both accounts learn of it. */
static void commit_one(Merge *j, Slice *s, int from_fd, DirId to_dir, Placed *p, GroupCounts *g) {
        MoveExpect e = { .dev = s->from_dev, .blocks = p->fi.blocks, .mtime = p->fi.mtime };
        char name[CCACHE_NAME_MAX + 256];
        int r;

        if (account_file_name(s->fa, j->items[p->item].file, name, sizeof(name)) < 0)
                return;
        r = move_commit(from_fd, name, &e, &p->mr);
        if (r < 0) {
                count_error(j, r);
                p->mr.outcome = MOVE_SOURCE_STAYED;
        }
        (void) account_file_set_inode(s->ta, to_dir, name, p->mr.blocks, p->mr.mtime, p->mr.ino, p->mr.nlink, true);
        if (p->mr.source_gone) {
                (void) account_file_remove(s->fa, p->fi.dir, name);
                g->sub_files++;
                g->sub_kib += p->fi.blocks / 2;
        }
        /* A new name in TO (not one it had): ccache's counters gain it. */
        if (p->mr.outcome != MOVE_KEPT_DEST) {
                g->add_files++;
                g->add_kib += p->mr.blocks / 2;
        }
        switch (p->mr.outcome) {
        case MOVE_RENAMED:
        case MOVE_COPIED:
                j->moved++;
                j->moved_bytes += p->fi.blocks * 512;
                g->moved_any = true;
                break;
        case MOVE_KEPT_DEST:
                j->already++;
                g->moved_any = true;
                break;
        default:
                j->skipped++;
                break;
        }
}

/* TO's directory to_fd proved not to be TO's rel (renamed away while
 * written to): every entry placed there goes back, the sources stay. */
static void undo_all(Merge *j, Slice *s, int from_fd, int to_fd, const char *rel, Placed *placed, size_t n) {
        uint64_t back = 0;

        for (size_t k = 0; k < n; k++) {
                char name[CCACHE_NAME_MAX + 256];
                int r;

                if (account_file_name(s->fa, j->items[placed[k].item].file, name, sizeof(name)) < 0)
                        continue;
                r = move_undo(from_fd, to_fd, name, &placed[k].mr);
                if (r < 0)
                        count_error(j, r);
                back += placed[k].mr.outcome == MOVE_UNDONE;
        }
        j->put_back += back;
        log_warning("Merge into %s: directory %s was moved away from %s while entries were put in it: %llu "
                    "entries taken back, they stay in %s.", j->into, rel, j->into_path, (unsigned long long) back,
                    j->from);
}

/* After the slice's writes into to_fd: still TO's, each placed entry is
 * committed; else undone. Then ccache's counters of both, relative as a
 * trim's (ccache storing meanwhile counts its own entries once). */
static void settle(Merge *j, Slice *s, const char *rel, int from_fd, int to_fd, DirId to_dir, size_t n) {
        GroupCounts g = { 0 };
        unsigned l1, l2;

        if (n == 0 && !move_copy_busy(&j->copy))
                return;
        if (!still_into(s, rel, to_fd)) {
                move_copy_abort(&j->copy);
                undo_all(j, s, from_fd, to_fd, rel, j->placed, n);
                return;
        }
        for (size_t k = 0; k < n; k++)
                commit_one(j, s, from_fd, to_dir, &j->placed[k], &g);
        if (g.moved_any)
                j->cap_tries = 0;
        if (ccache_level2_of(rel, &l1, &l2)) {
                cache_counters_moved(s->from, l1, l2, 0, 0, g.sub_files, g.sub_kib);
                cache_counters_moved(s->to, l1, l2, g.add_files, g.add_kib, 0, 0);
        }
}

/* Opens the group's directories in both, making TO's if it has none yet.
 * Returns 1 with both fds, 0 to wait (a directory for TO's account), or -1
 * when the group is dealt with (counted). */
static int open_group(Merge *j, Slice *s, const char *rel, size_t start, size_t end, int *ret_from, int *ret_to,
                      DirId *ret_dir) {
        DirId to_dir = dir_lookup(s->ta, rel);
        int from_fd, to_fd;

        if (to_dir == DIR_NONE) {
                /* Made now; its entries move once TO's account has it (its
                 * event), so that the event finds nothing to rescan. */
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                if (j->dir_wait_since == 0) {
                        j->dir_wait_since = now;
                        r = make_dirs(s->to_root, rel);
                        if (r >= 0)
                                return 0;
                        log_warning_errno(r, "Merge into %s: cannot make directory %s (%m); its entries stay in %s.",
                                          j->into, rel, j->from);
                        count_error(j, r);
                } else if (now - j->dir_wait_since < MERGE_DIR_WAIT_USEC)
                        return 0;
                j->dir_wait_since = 0;
                j->skipped += end - start;
                j->files_done += end - start;
                j->next = end;
                return -1;
        }
        j->dir_wait_since = 0;
        from_fd = beneath_open_dir(s->from_root, rel);
        to_fd = beneath_open_dir(s->to_root, rel);
        if (from_fd < 0 || to_fd < 0) {
                /* A symlink or a mount on the way, or gone: nothing of it moves. */
                if (from_fd == -ENOENT)
                        group_gone(j, start, end);
                else {
                        count_error(j, from_fd < 0 ? from_fd : to_fd);
                        j->skipped += end - start;
                        j->files_done += end - start;
                }
                if (from_fd >= 0)
                        (void) close(from_fd);
                if (to_fd >= 0)
                        (void) close(to_fd);
                j->next = end;
                return -1;
        }
        *ret_from = from_fd;
        *ret_to = to_fd;
        *ret_dir = to_dir;
        return 1;
}

/* Moves the next group (one directory of FROM, at most MERGE_GROUP_MAX
 * entries): each placed in TO's directory, then, that directory re-checked
 * as still TO's, committed (settle). Returns 1 to go on, 0 to wait (a
 * directory for TO's account, the cap's evictions, the slice's bytes). */
static int do_group(Merge *j, Slice *s) {
        size_t start = j->next, end = start, i, n_placed = 0;
        const MergeItem *first = &j->items[start];
        _cleanup_close_ int from_fd = -1, to_fd = -1;
        char rel[PATH_MAX], why[256] = "";
        bool wait = false;
        DirId to_dir;
        int r;

        while (end < j->n && j->items[end].dir == first->dir && end - start < MERGE_GROUP_MAX)
                end++;
        if (!account_dir_check(s->fa, first->dir, first->dir_gen) ||
            account_dir_path(s->fa, first->dir, rel, sizeof(rel)) < 0 || !*rel) {
                group_gone(j, start, end);
                j->next = end;
                return 1;
        }
        r = open_group(j, s, rel, start, end, &from_fd, &to_fd, &to_dir);
        if (r <= 0)
                return r < 0;
        for (i = start; i < end; i++) {
                const MergeItem *it = &j->items[i];
                char name[CCACHE_NAME_MAX + 256];
                MoveResult mr;
                FileInfo fi;

                if (i > start && merge_slice_over(s, false))
                        break;
                /* The account first, as a trim does: still this directory's
                 * entry (evicted or removed since: gone). */
                if (account_file_info(s->fa, it->file, &fi) < 0 || fi.dir != it->dir || fi.dir_gen != it->dir_gen ||
                    !ccache_kind_is_entry(fi.kind) || account_file_name(s->fa, it->file, name, sizeof(name)) < 0) {
                        j->gone++;
                        goto next;
                }
                r = cap_check(j, s, i, fi.blocks, why, sizeof(why));
                if (r != 0) {
                        wait = r > 0;
                        if (wait)
                                j->phase = MERGE_EVICTING;
                        break;
                }
                r = place(j, s, i, from_fd, to_fd, name, &fi, &mr, why, sizeof(why));
                if (r == 1) {
                        wait = true;   /* the copy goes on next slice */
                        break;
                }
                if (r == -1)
                        break;
                if (r < 0) {
                        count_error(j, r);
                        goto next;
                }
                switch (mr.outcome) {
                case MOVE_RENAMED:
                case MOVE_COPIED:
                case MOVE_KEPT_DEST:
                        j->placed[n_placed++] = (Placed) { .item = i, .fi = fi, .mr = mr };
                        break;
                case MOVE_SPARSE:
                        j->sparse++;
                        j->sparse_bytes += mr.size;
                        break;
                default:
                        j->skipped++;
                        break;
                }
        next:
                j->files_done++;
                j->bytes_done += it->bytes;
        }
        j->next = i;
        settle(j, s, rel, from_fd, to_fd, to_dir, n_placed);
        if (why[0]) {
                fail(j, "%s", why);
                return 0;
        }
        return wait ? 0 : 1;
}

/* The next round, for the entries FROM's writers added meanwhile; or the
 * end. */
static void round_over(Merge *j, Cache *from) {
        uint64_t bytes;

        free(j->items);
        j->items = NULL;
        j->n = j->next = 0;
        if (collect(cache_account(from), &j->items, &j->n, &bytes) < 0) {
                fail(j, "out of memory listing %s's entries", j->from);
                return;
        }
        if (j->n == 0 || ++j->round >= MERGE_ROUNDS_MAX || j->moved + j->already == j->round_moved) {
                finish(j);
                return;
        }
        j->round_moved = j->moved + j->already;
        /* The sparse names are met again in each round: counted once. */
        j->sparse = j->sparse_bytes = 0;
        j->files_total += j->n;
        j->bytes_total += bytes;
}

static void run(Merge *j) {
        Slice s = { 0 };

        s.from = find(j, j->from, j->from_path);
        s.to = find(j, j->into, j->into_path);
        if (!s.from || !s.to) {
                fail(j, "cache %s is no longer kept (reload)", s.from ? j->into : j->from);
                return;
        }
        if (cache_state(s.from) == CACHE_UNAVAILABLE || cache_state(s.to) == CACHE_UNAVAILABLE) {
                fail(j, "cache %s became unavailable", cache_state(s.from) == CACHE_UNAVAILABLE ? j->from : j->into);
                return;
        }
        if (cache_state(s.from) == CACHE_SCANNING || cache_state(s.to) == CACHE_SCANNING) {
                wait_a_moment(j);   /* a rescan: its figures are partial until it ends */
                return;
        }
        s.fa = cache_account(s.from);
        s.ta = cache_account(s.to);
        s.from_root = cache_root(s.from, &s.from_dev);
        s.to_root = cache_root(s.to, &s.to_dev);
        if (s.from_root < 0 || s.to_root < 0) {
                fail(j, "the root of %s went", s.from_root < 0 ? j->from : j->into);
                return;
        }
        slice_begin(&s.budget, MERGE_SLICE_USEC, 1);
        while (j->phase == MERGE_MOVING && !merge_slice_over(&s, true)) {
                if (j->next >= j->n) {
                        /* A directory of FROM that went and came back (moved
                         * away by a user, say) is being scanned again: its
                         * entries are in the account once that is over. */
                        if (cache_scan_busy(s.from)) {
                                wait_a_moment(j);
                                return;
                        }
                        round_over(j, s.from);
                        if (j->phase == MERGE_DONE)
                                return;
                        continue;
                }
                if (do_group(j, &s) == 0)
                        break;
        }
        if (j->phase == MERGE_DONE)
                return;
        if (j->phase == MERGE_EVICTING)
                (void) sd_event_source_set_enabled(j->source, SD_EVENT_OFF);
        else if (j->dir_wait_since)
                wait_a_moment(j);
}

static int on_source(sd_event_source *src, void *userdata) {
        run(userdata);
        return 0;
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        Merge *j = userdata;

        if (j->phase == MERGE_MOVING)
                (void) sd_event_source_set_enabled(j->source, SD_EVENT_ON);
        return 0;
}

/* Mixed key families: the entries of FROM in a key scheme TO's entries are
 * not in (TO holding entries at all). */
static void mixed(Account *fa, Account *ta, uint64_t *ret_files, uint64_t *ret_bytes) {
        uint64_t ff[_KEY_SCHEME_MAX] = { 0 }, fb[_KEY_SCHEME_MAX] = { 0 };
        uint64_t tf[_KEY_SCHEME_MAX] = { 0 }, tb[_KEY_SCHEME_MAX] = { 0 };
        uint64_t any = 0;

        schemes(fa, ff, fb);
        schemes(ta, tf, tb);
        *ret_files = *ret_bytes = 0;
        for (int s = 0; s < _KEY_SCHEME_MAX; s++)
                any += tf[s];
        for (int s = 0; any > 0 && s < _KEY_SCHEME_MAX; s++)
                if (tf[s] == 0) {
                        *ret_files += ff[s];
                        *ret_bytes += fb[s];
                }
}

static double estimate(bool same_fs, uint64_t files, uint64_t bytes, bool *ret_measured) {
        double fr = measured_files[same_fs], br = measured_bytes[same_fs];

        *ret_measured = fr > 0;
        if (same_fs)
                return (double) files / (fr > 0 ? fr : MERGE_RENAMES_PER_SEC);
        if (fr <= 0) {
                fr = MERGE_COPIES_PER_SEC;
                br = MERGE_COPY_BYTES_PER_SEC;
        }
        return (double) files / fr > (double) bytes / br ? (double) files / fr : (double) bytes / br;
}

static bool usable(Cache *c) {
        return cache_state(c) != CACHE_UNAVAILABLE && cache_state(c) != CACHE_SCANNING;
}

bool merge_running(const Merge *j) {
        return j && j->phase != MERGE_DONE;
}

int merge_start(const MergeEnv *env, const Merge *running, const ProtocolMerge *req, merge_done_t done,
                void *userdata, Merge **ret, json_object **ret_result, char *err, size_t errlen) {
        Cache *from = env->find(env->userdata, req->from, NULL), *to = env->find(env->userdata, req->into, NULL);
        uint64_t mix_files, mix_bytes, bytes, stay;
        EvictPlan plans[2] = { 0 };
        dev_t from_dev = 0, to_dev = 0;
        VolumeUsage u;
        Merge *j;
        char a[32], b[32], c[32];
        int from_root, to_root, r;

        if (!from || !to) {
                snprintf(err, errlen, "no cache named '%s'", from ? req->into : req->from);
                return -ENOENT;
        }
        if (cache_config_is_remote(cache_config(from)) || cache_config_is_remote(cache_config(to))) {
                snprintf(err, errlen, "%s is a file: remote: only ccache directories are merged",
                         cache_config_is_remote(cache_config(from)) ? req->from : req->into);
                return -EINVAL;
        }
        if (!usable(from) || !usable(to)) {
                Cache *x = usable(from) ? to : from;
                snprintf(err, errlen, "cache %s is %s: cannot merge now", cache_config(x)->name,
                         cache_state_name(cache_state(x)));
                return -EAGAIN;
        }
        if (merge_running(running)) {
                snprintf(err, errlen, "a merge of %s into %s is running: one at a time", running->from,
                         running->into);
                return -EBUSY;
        }
        from_root = cache_root(from, &from_dev);
        to_root = cache_root(to, &to_dev);
        if (from_root < 0 || to_root < 0) {
                snprintf(err, errlen, "the root of %s cannot be opened", from_root < 0 ? req->from : req->into);
                return -ENODEV;
        }
        mixed(cache_account(from), cache_account(to), &mix_files, &mix_bytes);
        if (mix_files > 0 && !req->allow_mixed) {
                snprintf(err, errlen, "%s and %s hold different key families: %llu entries (%s) of %s are named in "
                         "a scheme no writer of %s uses, so no build there would ever hit them; they would only take "
                         "room until they are evicted as the coldest. Add --allow-mixed to merge anyway, or trim %s "
                         "--written-by first", req->from, req->into, (unsigned long long) mix_files,
                         format_size(mix_bytes, a, sizeof(a)), req->from, req->into, req->from);
                return -EMEDIUMTYPE;
        }
        j = calloc(1, sizeof(*j));
        if (!j) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        j->env = *env;
        snprintf(j->from, sizeof(j->from), "%s", req->from);
        snprintf(j->into, sizeof(j->into), "%s", req->into);
        snprintf(j->from_path, sizeof(j->from_path), "%s", cache_config(from)->path);
        snprintf(j->into_path, sizeof(j->into_path), "%s", cache_config(to)->path);
        j->same_fs = from_dev == to_dev;
        j->done = done;
        j->userdata = userdata;
        j->started = now_usec(CLOCK_MONOTONIC);
        j->placed = calloc(MERGE_GROUP_MAX, sizeof(*j->placed));
        if (!j->placed || collect(cache_account(from), &j->items, &j->n, &bytes) < 0 ||
            plan_cap(from, to, bytes, plans) < 0) {
                merge_free(j);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        j->files_total = j->n;
        j->bytes_total = bytes;
        j->into_size = account_totals(cache_account(to))->bytes;
        j->into_max_size = cache_config(to)->max_size_bytes;
        j->evict_into_files = plans[0].n;
        j->evict_into_bytes = plans[0].bytes;
        j->drop_from_files = plans[1].n;
        j->drop_from_bytes = plans[1].bytes;
        /* Across filesystems what stays is written anew on TO's volume:
         * it must fit above min_free, counting what TO's evictions free.
         * What a copy writes is its size, and no size beyond an entry's
         * blocks is copied (move.h: sparse names are left unread), so the
         * blocks are what will be written; each copy checks its own size
         * against the room left as it begins (room_for). */
        stay = bytes - plans[1].bytes;
        if (!j->same_fs && volume_usage(to_root, NULL, &u) == 0) {
                char mount[PATH_MAX];
                VolumeLimits l = { 0 };
                uint64_t room;

                if (volume_mount_of(j->into_path, mount, sizeof(mount)) == 0)
                        volume_limits(env->volume(env->userdata, mount), &u, &l);
                j->min_free = l.min_free;
                room = u.avail_bytes + plans[0].bytes;
                room = room > l.min_free ? room - l.min_free : 0;
                if (stay > room) {
                        evict_plan_done(&plans[0]);
                        evict_plan_done(&plans[1]);
                        merge_free(j);
                        snprintf(err, errlen, "%s's volume cannot take what would stay of %s: %s to copy, %s free "
                                 "above its min_free of %s", req->into, req->from, format_size(stay, a, sizeof(a)),
                                 format_size(room, b, sizeof(b)), format_size(l.min_free, c, sizeof(c)));
                        return -ENOSPC;
                }
        }
        if (req->dry_run) {
                evict_plan_done(&plans[0]);
                evict_plan_done(&plans[1]);
                *ret_result = merge_json(j, false);
                json_object_object_add(*ret_result, STATUS_MERGE_DRY_RUN, json_object_new_boolean(true));
                {
                        bool measured;
                        double secs = estimate(j->same_fs, j->n - plans[1].n, stay, &measured);

                        json_object_object_add(*ret_result, STATUS_MERGE_ESTIMATE_SECONDS, json_object_new_double(secs));
                        json_object_object_add(*ret_result, STATUS_MERGE_RATE_MEASURED,
                                               json_object_new_boolean(measured));
                }
                json_object_object_add(*ret_result, STATUS_MERGE_MIXED_FILES, json_object_new_uint64(mix_files));
                json_object_object_add(*ret_result, STATUS_MERGE_MIXED_BYTES, json_object_new_uint64(mix_bytes));
                *ret = NULL;
                merge_free(j);
                return 0;
        }
        if ((r = sd_event_add_defer(env->event, &j->source, on_source, j)) < 0 ||
            (r = sd_event_add_time_relative(env->event, &j->timer, CLOCK_MONOTONIC, MERGE_WAIT_USEC, 0, on_timer, j)) < 0) {
                evict_plan_done(&plans[0]);
                evict_plan_done(&plans[1]);
                merge_free(j);
                snprintf(err, errlen, "cannot start the merge: %s", strerror(-r));
                return r;
        }
        (void) sd_event_source_set_description(j->source, "merge");   /* not a status key */
        (void) sd_event_source_set_description(j->timer, "merge-wait");
        /* Moving yields to the socket and to the events, as a manual trim does. */
        (void) sd_event_source_set_priority(j->source, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        {
                char d[32], e[32];

                log_info("Merge of cache %s (%llu entries, %s) into %s (%s of %s) begins, %s; for the cap, %llu "
                         "entries (%s) of %s are evicted and %llu (%s) of %s dropped first.", j->from,
                         (unsigned long long) j->n, format_size(bytes, a, sizeof(a)), j->into,
                         format_size(account_totals(cache_account(to))->bytes, b, sizeof(b)),
                         format_size(cache_config(to)->max_size_bytes, c, sizeof(c)),
                         j->same_fs ? "by renames" : "by copies across filesystems", (unsigned long long) plans[0].n,
                         format_size(plans[0].bytes, d, sizeof(d)), j->into, (unsigned long long) plans[1].n,
                         format_size(plans[1].bytes, e, sizeof(e)), j->from);
        }
        if (env->state_fd >= 0) {
                _cleanup_close_ int fd = -1;

                j->recount_all = faccessat(env->state_fd, MERGE_MARK, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
                fd = openat(env->state_fd, MERGE_MARK, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dprintf(fd, "%s %s\n", j->from, j->into);
                        j->marked = true;
                }
        }
        j->phase = MERGE_EVICTING;
        evict_both(j, from, to, plans);
        if (j->trims_pending == 0) {
                j->phase = MERGE_MOVING;
                (void) sd_event_source_set_enabled(j->source, SD_EVENT_ON);
        } else
                (void) sd_event_source_set_enabled(j->source, SD_EVENT_OFF);
        *ret = j;
        *ret_result = NULL;
        return 0;
}

json_object *merge_json(const Merge *j, bool status_only) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, STATUS_MERGE_FROM, json_object_new_string(j->from));
        json_object_object_add(o, STATUS_MERGE_INTO, json_object_new_string(j->into));
        json_object_object_add(o, STATUS_MERGE_FILES_DONE, json_object_new_uint64(j->files_done));
        json_object_object_add(o, STATUS_MERGE_FILES_TOTAL, json_object_new_uint64(j->files_total));
        json_object_object_add(o, STATUS_MERGE_BYTES_DONE, json_object_new_uint64(j->bytes_done));
        json_object_object_add(o, STATUS_MERGE_BYTES_TOTAL, json_object_new_uint64(j->bytes_total));
        json_object_object_add(o, STATUS_MERGE_PHASE, json_object_new_string(phase_names[j->phase]));
        json_object_object_add(o, STATUS_MERGE_SPARSE, json_object_new_uint64(j->sparse));
        json_object_object_add(o, STATUS_MERGE_SPARSE_BYTES, json_object_new_uint64(j->sparse_bytes));
        json_object_object_add(o, STATUS_MERGE_PUT_BACK, json_object_new_uint64(j->put_back));
        if (status_only)
                return o;
        json_object_object_add(o, STATUS_MERGE_DRY_RUN, json_object_new_boolean(false));
        json_object_object_add(o, STATUS_MERGE_SAME_FILESYSTEM, json_object_new_boolean(j->same_fs));
        json_object_object_add(o, STATUS_MERGE_FROM_PATH, json_object_new_string(j->from_path));
        json_object_object_add(o, STATUS_MERGE_INTO_PATH, json_object_new_string(j->into_path));
        json_object_object_add(o, STATUS_MERGE_MOVED, json_object_new_uint64(j->moved));
        json_object_object_add(o, STATUS_MERGE_MOVED_BYTES, json_object_new_uint64(j->moved_bytes));
        json_object_object_add(o, STATUS_MERGE_ALREADY, json_object_new_uint64(j->already));
        json_object_object_add(o, STATUS_MERGE_SKIPPED, json_object_new_uint64(j->skipped));
        json_object_object_add(o, STATUS_MERGE_GONE, json_object_new_uint64(j->gone));
        json_object_object_add(o, STATUS_MERGE_ERRORS, json_object_new_uint64(j->errors));
        json_object_object_add(o, STATUS_MERGE_LEFT, json_object_new_uint64(j->left));
        json_object_object_add(o, STATUS_MERGE_INTO_SIZE_BYTES, json_object_new_uint64(j->into_size));
        json_object_object_add(o, STATUS_MERGE_INTO_MAX_SIZE_BYTES, json_object_new_uint64(j->into_max_size));
        json_object_object_add(o, STATUS_MERGE_EVICT_INTO_FILES, json_object_new_uint64(j->evict_into_files));
        json_object_object_add(o, STATUS_MERGE_EVICT_INTO_BYTES, json_object_new_uint64(j->evict_into_bytes));
        json_object_object_add(o, STATUS_MERGE_DROP_FROM_FILES, json_object_new_uint64(j->drop_from_files));
        json_object_object_add(o, STATUS_MERGE_DROP_FROM_BYTES, json_object_new_uint64(j->drop_from_bytes));
        json_object_object_add(o, STATUS_MERGE_SECONDS,
                               json_object_new_double((double) (now_usec(CLOCK_MONOTONIC) - j->started) /
                                                      USEC_PER_SEC));
        if (j->failed[0])
                json_object_object_add(o, STATUS_MERGE_STOPPED, json_object_new_string(j->failed));
        return o;
}

bool merge_involves(const Merge *j, const char *name) {
        return j && j->phase != MERGE_DONE && (strcmp(j->from, name) == 0 || strcmp(j->into, name) == 0);
}

Merge *merge_free(Merge *j) {
        Cache *c;

        if (!j)
                return NULL;
        if (j->source && j->phase != MERGE_DONE)
                fail(j, "the daemon is stopping");
        for (int i = 0; i < 2; i++)
                if ((c = find(j, i ? j->into : j->from, NULL)))
                        cache_trim_forget(c, j);
        sd_event_source_disable_unref(j->source);
        sd_event_source_disable_unref(j->timer);
        move_copy_abort(&j->copy);
        free(j->placed);
        free(j->items);
        free(j);
        return NULL;
}
