/* SPDX-License-Identifier: MIT */
/* Writing into a cache beside ccache, as ccache does (ccache/README.md §2, §7): its
 * lock files, taken without ever waiting and broken when stale, and its
 * temporary file names, for a file replaced atomically. I/O relative to a
 * directory fd; never follows a symlink; never logs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ccache's lock files (ccache/README.md §2, §7): <name>.lock is a symlink whose
 * text names the holder ("host-pid-tid-sec.nsec"), <name>.alive a regular
 * file whose mtime shows it is alive. Nothing here ever waits: a lock held
 * by someone else is tried again later, from the loop. */

/* ccache's k_staleness_limit: a lock whose symlink text and .alive mtime
 * have not changed for this long is stale, and ccache breaks it. */
#define CCACHE_LOCK_STALE_USEC 2000000ULL
/* A lock we hold this long gets its .alive touched (ccache's long-lived
 * locks use 500 ms), so that no waiter judges us stale. */
#define CCACHE_LOCK_REFRESH_USEC 500000ULL

typedef struct CcacheLock {
        int dirfd;               /* borrowed */
        char name[64];
        char content[128];
        bool held;
        bool broke;              /* taking it broke a stale lock ... */
        char broken[128];        /* ... whose text was this */
        uint64_t refreshed_usec; /* monotonic: when .alive was last touched */
} CcacheLock;

/* What one waiter has seen of a lock someone else holds, kept by the caller
 * from one try to the next (zeroed at first). */
typedef struct CcacheLockSeen {
        uint64_t content_hash;   /* the holder's symlink text */
        int64_t alive_nsec;      /* its .alive's mtime, 0 without one */
        uint64_t since_usec;     /* realtime of the last activity seen */
        bool valid;
} CcacheLockSeen;

/* Takes the lock <name> in dirfd without waiting. If someone else holds it,
 * records in seen (may be NULL: a first look only) what it looks like at
 * now (realtime, usec); a lock is stale, and is broken the way ccache breaks
 * it (unlink .alive, then .lock) and taken, when
 *  - its text and .alive mtime have not changed for CCACHE_LOCK_STALE_USEC
 *    (on first sight, as in ccache, from the .alive's mtime if there is one),
 *  - or its text names a cachekeeperd of this host that is gone
 *    (ccache_lock_is_ours_dead).
 * Returns 1 taken (l->broke says whether a stale lock went first), 0 held
 * by someone else, or -errno. */
int ccache_lock_try(CcacheLock *l, int dirfd, const char *name, CcacheLockSeen *seen, uint64_t now);
/* Touches the .alive of a lock we hold when CCACHE_LOCK_REFRESH_USEC have
 * passed since it was last touched (monotonic now, usec). */
void ccache_lock_refresh(CcacheLock *l, uint64_t now);
/* Releases a lock we hold (only if its symlink still names us). */
void ccache_lock_release(CcacheLock *l);

/* Is content the text of a lock taken by a cachekeeperd on this host that
 * no longer runs: its pid is gone, or it is this process's pid but older than
 * this process (a previous run in the same pid namespace)? Our text is
 * "host-pid-pid-sec.nsec": ccache writes a pthread id where we repeat the
 * pid, so a live ccache's lock never matches, even if its pid is in another
 * pid namespace. */
bool ccache_lock_is_ours_dead(const char *content);
/* Breaks the lock <name> in dirfd if ccache_lock_is_ours_dead says it was
 * left by a cachekeeperd that is gone. Returns 1 broken, 0 no such lock (or
 * not ours), or -errno. */
int ccache_lock_break_ours_dead(int dirfd, const char *name);

/* Creates a new file "<base>.tmp.XXXXXX.tmp" in dirfd (ccache's temporary
 * naming, so a stale one is swept like ccache's own) with O_EXCL and a
 * random suffix. Returns the fd and the name in name, or -errno. */
int ccache_tmpfile(int dirfd, const char *base, mode_t mode, char *name, size_t len);
