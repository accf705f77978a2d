/* SPDX-License-Identifier: MIT */
/* The remote-errors alarm of a cache, from its activity buckets. Pure. */
#include <stdio.h>

#include "base/human.h"
#include "insight/remote-errors.h"

uint64_t remote_errors_count(const Activity *a, usec_t window, usec_t now, uint64_t *ret_hits, uint64_t *ret_misses) {
        ActivityCounts c;

        activity_sum(a, window > now ? 0 : now - window + 1, now + 1, &c);
        if (ret_hits)
                *ret_hits = c.n[ACTIVITY_CCACHE_REMOTE_HITS];
        if (ret_misses)
                *ret_misses = c.n[ACTIVITY_CCACHE_REMOTE_MISSES];
        return c.n[ACTIVITY_CCACHE_REMOTE_ERRORS];
}

AlarmEvent remote_errors_check(bool *standing, const Activity *a, usec_t window, const char *name, usec_t now,
                               char *msg, size_t len) {
        uint64_t hits, misses, errors = remote_errors_count(a, window, now, &hits, &misses);
        char w[32];

        format_duration(window, w, sizeof(w));
        if (errors > 0 && !*standing) {
                *standing = true;
                snprintf(msg, len, "Cache %s: ccache counted %llu remote storage error%s or timeout%s in the last %s "
                         "(remote hits %llu, misses %llu): stores and lookups in its remote storage fail; "
                         "see the remotes in cachectl status", name, (unsigned long long) errors,
                         errors == 1 ? "" : "s", errors == 1 ? "" : "s", w, (unsigned long long) hits,
                         (unsigned long long) misses);
                return ALARM_FIRE;
        }
        if (errors == 0 && *standing) {
                *standing = false;
                snprintf(msg, len, "Cache %s: no remote storage error or timeout in the last %s.", name, w);
                return ALARM_RECOVER;
        }
        return ALARM_NONE;
}
