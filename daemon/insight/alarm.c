/* SPDX-License-Identifier: MIT */
/* The cache-silent-miss and cache-idle decisions and their messages (the
 * rules are in alarm.h). Pure: reads the activity buckets it is given, never
 * a clock or a file. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/human.h"
#include "insight/alarm.h"

/* The day before the window, where a healthy hit rate is looked for. */
#define BEFORE_USEC (24 * 3600 * USEC_PER_SEC)
/* Evictions and removals are looked for this long before the window too. */
#define REMOVALS_BEFORE_USEC (3600 * USEC_PER_SEC)
/* A change is named with its time of day when this recent, else its date too. */
#define CLOCK_ONLY_USEC (20 * 3600 * USEC_PER_SEC)

static uint64_t calls(const ActivityCounts *c) {
        return c->n[ACTIVITY_CCACHE_HITS] + c->n[ACTIVITY_CCACHE_MISSES];
}

static double rate(const ActivityCounts *c) {
        return calls(c) ? (double) c->n[ACTIVITY_CCACHE_HITS] / (double) calls(c) : 0.0;
}

static uint64_t activity(const ActivityCounts *c) {
        return c->n[ACTIVITY_STORE] + c->n[ACTIVITY_HIT] + calls(c);
}

static usec_t sub_sat(usec_t a, usec_t b) {
        return a > b ? a - b : 0;
}

/* The buckets starting in (since, until]. */
static void sum(const Activity *a, usec_t since, usec_t until, ActivityCounts *ret) {
        activity_sum(a, since + 1, until + 1, ret);
}

/* Appends to buf (len bytes, NUL-terminated, cut short when full). */
_printf_(3, 4)
static void append(char *buf, size_t len, const char *fmt, ...) {
        size_t used = strnlen(buf, len);
        va_list ap;

        if (used + 1 >= len)
                return;
        va_start(ap, fmt);
        vsnprintf(buf + used, len - used, fmt, ap);
        va_end(ap);
}

static const char *percent(double r, char *buf, size_t len) {
        snprintf(buf, len, r > 0 && r < 0.01 ? "%.1f%%" : "%.0f%%", r * 100.0);
        return buf;
}

/* "14:05", or "2026-11-28 14:05" when not that recent. */
static const char *when(usec_t t, usec_t now, char *buf, size_t len) {
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&sec, &tm) ||
            !strftime(buf, len, now - t < CLOCK_ONLY_USEC || t > now ? "%H:%M" : "%Y-%m-%d %H:%M", &tm))
                snprintf(buf, len, "@%llu", (unsigned long long) sec);
        return buf;
}

/* Start of the first bucket at seconds granularity in [since, now] whose
 * figures pass want (every bucket when want is NULL); 0 if none. */
static usec_t first_bucket(const Activity *a, usec_t since, usec_t now, unsigned seconds,
                           bool (*want)(const ActivityCounts *c)) {
        ActivityIter it;
        ActivityRow row;

        (void) activity_iter_init(&it, a, since, now + 1, seconds);
        while (activity_iter_next(&it, &row))
                if (!want || want(&row.c))
                        return (usec_t) row.start_sec * USEC_PER_SEC;
        return 0;
}

static bool has_calls(const ActivityCounts *c) {
        return calls(c) > 0;
}

/* The first bucket passing want, to the minute where the minutes still
 * hold it (0: none). */
static usec_t first_time(const Activity *a, usec_t now, bool (*want)(const ActivityCounts *c)) {
        usec_t hour = first_bucket(a, 0, now, ACTIVITY_HOUR_SEC, want), minute;

        if (hour == 0)
                return 0;
        minute = first_bucket(a, hour, now, ACTIVITY_MINUTE_SEC, want);
        /* The minutes begin later than that hour when it is older than they reach. */
        return minute && minute - hour < ACTIVITY_HOUR_SEC * USEC_PER_SEC ? minute : hour;
}

double alarm_healthy_rate(double hit_rate) {
        double twice = 2 * hit_rate, halfway = (1 + hit_rate) / 2;

        return twice < halfway ? twice : halfway;
}

/* The last healthy bucket of [since, now] at seconds granularity (its
 * start, 0: none), and the end of the first bucket with calls after it. */
static usec_t last_good(const Activity *a, usec_t since, usec_t now, unsigned seconds, double healthy,
                        usec_t *ret_bad_end) {
        usec_t good = 0, bad_end = now, unit = (usec_t) seconds * USEC_PER_SEC;
        ActivityIter it;
        ActivityRow row;

        (void) activity_iter_init(&it, a, since, now + 1, seconds);
        while (activity_iter_next(&it, &row)) {
                usec_t start = (usec_t) row.start_sec * USEC_PER_SEC;

                if (calls(&row.c) == 0)
                        continue;
                if (rate(&row.c) >= healthy) {
                        good = start;
                        bad_end = now;
                } else if (good && bad_end == now)
                        bad_end = start + unit < now ? start + unit : now;
        }
        *ret_bad_end = bad_end;
        return good;
}

/* When the drop began: from the start of the last healthy bucket of
 * [since, now] (one bucket earlier: ccache's counters reach the buckets a
 * feed late) to the end of the first bucket with calls after it. Minutes
 * where they reach, else hours. */
static void drop_span(const Activity *a, usec_t since, usec_t now, double healthy, usec_t *ret_lo, usec_t *ret_hi) {
        usec_t minutes = sub_sat(now, (ACTIVITY_MINUTES - 1) * ACTIVITY_MINUTE_SEC * USEC_PER_SEC), good;
        unsigned seconds = ACTIVITY_MINUTE_SEC;

        good = last_good(a, since > minutes ? since : minutes, now, seconds, healthy, ret_hi);
        if (!good) {
                seconds = ACTIVITY_HOUR_SEC;
                good = last_good(a, since, now, seconds, healthy, ret_hi);
        }
        *ret_lo = good ? sub_sat(good, (usec_t) seconds * USEC_PER_SEC) : since;
}

/* Evictions or external removals in (since, now] that took most of what
 * the cache held before them, appended to what. */
static void say_removals(const Activity *a, usec_t since, usec_t now, char *what, size_t len) {
        static const struct {
                ActivityKind kind;
                const char *what;
        } kinds[] = {
                { ACTIVITY_EVICTION, "evictions by the daemon" },
                { ACTIVITY_REMOVAL, "external removals (ccache's own cleanup, rm)" },
        };
        ActivityCounts in, before;
        char a1[32], a2[32], t[32];

        sum(a, since, now, &in);
        sum(a, sub_sat(since, BEFORE_USEC), since, &before);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                uint64_t gone = in.bytes[kinds[i].kind], held = before.size_bytes;

                if (in.n[kinds[i].kind] == 0)
                        continue;
                /* What it held before: the size then, else what is left and what went. */
                if (held == ACTIVITY_SIZE_UNKNOWN || held < gone)
                        held = in.size_bytes == ACTIVITY_SIZE_UNKNOWN ? gone : in.size_bytes + gone;
                if (gone == 0 || gone * 2 < held)
                        continue;
                append(what, len, "%s%s took %s of the %s it held (%llu files) since %s", *what ? "; " : "",
                       kinds[i].what, format_size(gone, a1, sizeof(a1)), format_size(held, a2, sizeof(a2)),
                       (unsigned long long) in.n[kinds[i].kind], when(since, now, t, sizeof(t)));
        }
}

/* What changed in [lo, hi], and evictions or removals that took most of the
 * cache since the hour before the window; or that nothing did. */
static void say_changes(const Activity *a, const AlarmChanges *ch, usec_t lo, usec_t hi, usec_t window, usec_t now,
                        char *msg, size_t len) {
        char what[384] = "", t[32];

        if (ch && ch->conf_changed_at >= lo && ch->conf_changed_at <= hi && ch->conf_changed_at > 0)
                append(what, sizeof(what), "ccache.conf changed at %s%s%s%s",
                       when(ch->conf_changed_at, now, t, sizeof(t)), ch->conf_change && *ch->conf_change ? " (" : "",
                       ch->conf_change ? ch->conf_change : "", ch->conf_change && *ch->conf_change ? ")" : "");
        for (KeyScheme f = 0; ch && f < _KEY_SCHEME_MAX; f++) {
                usec_t first = ch->family_first_store[f], other = ch->family_first_store[1 - f];

                /* A family new to this cache: the other one was there before it. */
                if (first == 0 || first < lo || first > hi ||
                    (ch->family_entries[1 - f] == 0 && (other == 0 || other >= first)))
                        continue;
                append(what, sizeof(what), "%sthe first entries of another ccache version (%s) appeared at %s",
                       *what ? "; " : "", key_scheme_name(f), when(first, now, t, sizeof(t)));
        }
        say_removals(a, sub_sat(now, window + REMOVALS_BEFORE_USEC), now, what, sizeof(what));
        append(msg, len, "; %s", *what ? what : "nothing the daemon saw changed: check the compiler, its flags, "
               "CCACHE_* in the build environment");
}

static AlarmEvent silent_recover(AlarmState *s, const ActivityCounts *win, const AlarmThresholds *t,
                                 const char *name, char *msg, size_t len) {
        char r[16], w[32];

        if (calls(win) < t->min_calls || rate(win) < alarm_healthy_rate(t->hit_rate))
                return ALARM_NONE;
        s->silent = false;
        snprintf(msg, len, "Cache %s hits again: %s over the last %s (%llu hits of %llu calls).", name,
                 percent(rate(win), r, sizeof(r)), format_duration(t->window_usec, w, sizeof(w)),
                 (unsigned long long) win->n[ACTIVITY_CCACHE_HITS], (unsigned long long) calls(win));
        return ALARM_RECOVER;
}

AlarmEvent alarm_silent(AlarmState *s, const Activity *a, const AlarmThresholds *t, const AlarmChanges *ch,
                        const char *name, usec_t now, char *msg, size_t len) {
        usec_t start = sub_sat(now, t->window_usec), began = 0, lo, hi;
        double healthy = alarm_healthy_rate(t->hit_rate);
        ActivityCounts win, before, all;
        char r1[16], r2[16], w[32], ago[32], out[512];
        bool first = !s->silent_checked;

        s->silent_checked = true;
        sum(a, start, now, &win);
        if (s->silent)
                return silent_recover(s, &win, t, name, msg, len);
        if (calls(&win) < t->min_calls || rate(&win) >= t->hit_rate)
                return ALARM_NONE;
        sum(a, sub_sat(start, BEFORE_USEC), start, &before);
        if (calls(&before) >= t->min_calls && rate(&before) >= healthy) {
                snprintf(out, sizeof(out), "Cache %s misses silently: hit rate %s over the last %s (%llu hits of %llu "
                         "calls), was %s in the 24h before (%llu of %llu)", name, percent(rate(&win), r1, sizeof(r1)),
                         format_duration(t->window_usec, w, sizeof(w)),
                         (unsigned long long) win.n[ACTIVITY_CCACHE_HITS], (unsigned long long) calls(&win),
                         percent(rate(&before), r2, sizeof(r2)), (unsigned long long) before.n[ACTIVITY_CCACHE_HITS],
                         (unsigned long long) calls(&before));
                drop_span(a, sub_sat(start, BEFORE_USEC), now, healthy, &lo, &hi);
        } else {
                /* Never a hit, and calls for two windows: more than a cold build. */
                sum(a, 0, now, &all);
                if (all.n[ACTIVITY_CCACHE_HITS] > 0 || !(began = first_time(a, now, has_calls)) ||
                    began + 2 * t->window_usec > now)
                        return ALARM_NONE;
                snprintf(out, sizeof(out), "Cache %s misses silently: hit rate %s over the last %s (%llu hits of %llu "
                         "calls), and not one hit since its calls began %s ago", name,
                         percent(rate(&win), r1, sizeof(r1)), format_duration(t->window_usec, w, sizeof(w)),
                         (unsigned long long) win.n[ACTIVITY_CCACHE_HITS], (unsigned long long) calls(&win),
                         format_duration(now - began, ago, sizeof(ago)));
                lo = began;
                hi = now;
        }
        say_changes(a, ch, lo, hi, t->window_usec, now, out, sizeof(out));
        append(out, sizeof(out), first ? " (standing when the daemon started: it may have been reported before)." : ".");
        snprintf(msg, len, "%s", out);
        s->silent = true;
        return ALARM_FIRE;
}

bool alarm_idle_quiet(const Activity *a, usec_t idle_after, usec_t now) {
        usec_t since = sub_sat(now, idle_after), unit, began;
        ActivityCounts c;

        /* Every bucket that overlaps the span, at the granularity it is summed in. */
        unit = (usec_t) activity_granularity(a, since) * USEC_PER_SEC;
        since -= since % unit;
        unit = (usec_t) activity_granularity(a, since) * USEC_PER_SEC;
        since -= since % unit;
        activity_sum(a, since, now + 1, &c);
        if (activity(&c) > 0)
                return false;
        began = first_time(a, now, NULL);
        return began && began + idle_after <= now;
}

static bool is_active(const ActivityCounts *c) {
        return activity(c) > 0;
}

/* The end of the last bucket with activity (0: none), to the minute where
 * the minutes still hold it. */
static usec_t last_activity(const Activity *a, usec_t now) {
        usec_t last = 0, minute = 0;
        ActivityIter it;
        ActivityRow row;

        (void) activity_iter_init(&it, a, 0, now + 1, ACTIVITY_HOUR_SEC);
        while (activity_iter_next(&it, &row))
                if (is_active(&row.c))
                        last = (usec_t) (row.start_sec + row.seconds) * USEC_PER_SEC;
        if (last == 0)
                return 0;
        (void) activity_iter_init(&it, a, sub_sat(last, ACTIVITY_HOUR_SEC * USEC_PER_SEC), now + 1, ACTIVITY_MINUTE_SEC);
        while (activity_iter_next(&it, &row))
                if (is_active(&row.c))
                        minute = (usec_t) (row.start_sec + row.seconds) * USEC_PER_SEC;
        if (minute)
                last = minute;
        return last > now ? now : last;
}

AlarmEvent alarm_idle(AlarmState *s, const Activity *a, usec_t idle_after, usec_t newest_entry, const char *name,
                      usec_t now, char *msg, size_t len) {
        bool first = !s->idle_checked, idle;
        usec_t last, began;
        char w[32], t[32], d[32];

        s->idle_checked = true;
        idle = alarm_idle_quiet(a, idle_after, now) && newest_entry + idle_after <= now;
        if (idle == s->idle)
                return ALARM_NONE;
        if (!idle) {
                snprintf(msg, len, "Cache %s is in use again, after %s without a store, a hit or a call.", name,
                         format_duration(sub_sat(now, s->idle_last), d, sizeof(d)));
                s->idle = false;
                return ALARM_RECOVER;
        }
        last = last_activity(a, now);
        if (newest_entry > last)
                last = newest_entry;
        began = first_time(a, now, NULL);
        if (last)
                snprintf(msg, len, "Cache %s is idle: no store, no hit and no ccache call for %s (the last at %s): a "
                         "container that lost its mount, or a compiler shim that broke?%s", name,
                         format_duration(now - last, d, sizeof(d)), when(last, now, t, sizeof(t)),
                         first ? " (standing when the daemon started: it may have been reported before)" : "");
        else
                snprintf(msg, len, "Cache %s is idle: no store, no hit and no ccache call since its history began at "
                         "%s (idle_after is %s): a container that lost its mount, or a compiler shim that broke?%s",
                         name, when(began, now, t, sizeof(t)), format_duration(idle_after, w, sizeof(w)),
                         first ? " (standing when the daemon started: it may have been reported before)" : "");
        s->idle = true;
        s->idle_last = last ? last : began;
        return ALARM_FIRE;
}
