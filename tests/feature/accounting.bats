#!/usr/bin/env bats
# The daemon knows each cache's exact size and file count: after the first
# scan, after real ccache churn, after the root is deleted, after inotify
# lost events, with directories it cannot watch, and after level-1
# directories of a big cache moved out and back.
# tests/run: takes 98 s
load ../lib/helper

setup() {
        require_root
        setup_volume 256M
        config
}

teardown() {
        stop_daemon
        unmount_all
}

# config [AUDIT_INTERVAL]: no audit unless asked for
config() {
        write_config 1G "" "audit_interval = \"${1:-0s}\";"
}

@test "figures equal a fresh find after the first scan and after real ccache churn" {
        mkdir -m 1777 "$CACHE"
        compile "$CACHE" 20 pre
        start_ready
        [ "$(daemon_totals t)" = "$(disk_totals "$CACHE")" ]
        [ "$(cache_field t state)" = ok ]

        # new entries and cache hits (mtime refresh): ccache's own counters,
        # summed over its stats files, come out as ccache -s sums them
        compile "$CACHE" 10 new
        compile "$CACHE" 5 pre
        wait_exact t "$CACHE"
        check_counters 5 30

        # deletions, renames in and out, a new deep directory, a whole
        # level-2 directory gone (its stats file with it)
        find "$CACHE" -name '*R' | head -5 | xargs rm -f
        f=$(find "$CACHE" -name '*M' | head -1)
        mv "$f" "$BATS_TEST_TMPDIR/moved-out"
        mv "$BATS_TEST_TMPDIR/moved-out" "$CACHE/tmp/moved-in"
        mv "$(find "$CACHE" -name '*R' | head -1)" "$CACHE/renamed-inside"
        mkdir -p "$CACHE/a/b/c/d/e"
        head -c 100000 /dev/urandom > "$CACHE/a/b/c/d/e/deep"
        head -c 5000 /dev/urandom > "$CACHE/a/b/shallow"
        rm -rf "$(find "$CACHE" -mindepth 2 -maxdepth 2 -type d -name '[0-9a-f]' | head -1)"
        mkdir "$CACHE/x" && head -c 3000 /dev/urandom > "$CACHE/x/f" && mv "$CACHE/x" "$CACHE/y"
        head -c 7000 /dev/urandom >> "$CACHE/y/f"
        wait_exact t "$CACHE"
        check_counters
        # entries: results and manifests of 30 compiles, minus what was removed
        entries=$(find "$CACHE" -mindepth 3 -type f -regex '.*/[0-9a-v]+[RM]' | wc -l)
        [ "$(cache_field t entry_files)" -eq "$entries" ]
}

# Compares the daemon's hits and misses with ccache --print-stats, and with
# $1 direct hits and $2 misses when given.
check_counters() {
        local stats direct preproc miss
        stats=$(CCACHE_DIR=$CACHE ccache --print-stats)
        direct=$(awk '$1 == "direct_cache_hit" { print $2 }' <<<"$stats")
        preproc=$(awk '$1 == "preprocessed_cache_hit" { print $2 }' <<<"$stats")
        miss=$(awk '$1 == "cache_miss" { print $2 }' <<<"$stats")
        [ -z "${1:-}" ] || [ "$direct" -eq "$1" ]
        [ -z "${2:-}" ] || [ "$miss" -eq "$2" ]
        wait_for "[ \"\$(cache_field t hits) \$(cache_field t misses)\" = '$((direct + preproc)) $miss' ]"
}

@test "a deleted root is recreated with its mode and counted from zero" {
        start_ready
        [ "$(stat -c %a "$CACHE")" = 1777 ]
        compile "$CACHE" 5
        wait_exact t "$CACHE"
        # frozen meanwhile: the daemon puts a deleted ccache.conf back at once,
        # which would leave the root not empty for rm
        kill -STOP "$DAEMON_PID"
        rm -rf "$CACHE"
        kill -CONT "$DAEMON_PID"
        wait_for "[ -d '$CACHE' ]" 3
        [ "$(stat -c %a "$CACHE")" = 1777 ]
        wait_exact t "$CACHE"
        compile "$CACHE" 3 again
        wait_exact t "$CACHE"
        grep -q "root $CACHE was deleted" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "an inotify queue overflow is reported and repaired by a rescan" {
        mkdir -p "$CACHE/0/0"
        start_ready
        # 20000 creates in a watched directory while the daemon is stopped:
        # more events than the kernel queues (16384), so it overflows for certain.
        kill -STOP "$DAEMON_PID"
        (cd "$CACHE/0/0" && seq -f 'burst%05g' 1 20000 | xargs touch)
        kill -CONT "$DAEMON_PID"
        wait_exact t "$CACHE" 20
        cat "$BATS_TEST_TMPDIR/daemon.log"; cache_field t scan
        [ "$(cache_field t scan.inotify_overflows)" -ge 1 ]
        [ "$(cache_field t scan.rescans)" -ge 1 ]
        grep -q "inotify queue overflowed" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "directories beyond the watch limit are reported and rescanned" {
        mkdir -m 1777 "$CACHE"
        for a in 0 1 2 3; do for b in 0 1 2 3; do mkdir -p "$CACHE/$a/$b"; done; done
        # The limit is lowered in a child user namespace only, never on the host.
        unshare -U -r sh -c 'echo 8 > /proc/sys/user/max_inotify_watches && exec "$0" -c "$1"' \
                "$CKD" "$BATS_TEST_TMPDIR/ck.conf" 2> "$BATS_TEST_TMPDIR/daemon.log" &
        DAEMON_PID=$!
        wait_ready
        [ "$(cache_field t scan.unwatched_dirs)" -gt 0 ]
        grep -q "cannot watch every directory" "$BATS_TEST_TMPDIR/daemon.log"
        for a in 0 1 2 3; do head -c 4000 /dev/urandom > "$CACHE/$a/3/late$a"; done
        rm -rf "$CACHE/2/2"
        wait_exact t "$CACHE" 10
}

@test "the periodic audit: no drift when events kept up; drift no event told is found, corrected, reported" {
        config 1s
        mkdir -m 1777 "$CACHE"
        compile "$CACHE" 10
        start_ready
        compile "$CACHE" 5 more
        # an audit that started after the compiles: two more than now
        r=$(cache_field t scan.rescans)
        wait_for "[ \"\$(cache_field t scan.rescans)\" -ge $((r + 2)) ]" 6
        [ "$(cache_field t scan.last.reason)" = audit ]
        status_jq -e '.caches[0].scan | .rescans >= 1 and .last.added == 0 and .last.changed == 0
                                        and .last.removed == 0 and .last.seconds >= 0'
        grep -q "Cache t: audit rescan found no drift" "$BATS_TEST_TMPDIR/daemon.log"
        wait_exact t "$CACHE"

        # Drift no watched event tells: truncate(2) raises only IN_MODIFY,
        # which the daemon does not watch (it would flood the queue).
        f=$(find "$CACHE" -name '*R' | head -1)
        [ "$(stat -c %b "$f")" -gt 0 ]
        perl -e 'truncate($ARGV[0], 0) or die "truncate: $!"' "$f"
        wait_exact t "$CACHE" 5
        # The figures are exact as soon as the audit's walk has seen the file;
        # its report comes when the walk is over, a loop iteration or more later.
        # Waited for in the log: status's scan.last is the latest audit's, and
        # with one a second, a loaded machine may poll after the next one.
        wait_for "grep -q 'Cache t: audit rescan corrected drift: 0 files added, 1 changed, 0 removed' \
                  '$BATS_TEST_TMPDIR/daemon.log'" 10
}

@test "level-1 directories moved out of a big cache, hard links across and inside them: exact at once, and the audits' fresh counts agree" {
        config 2s
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 30000
        cp -al "$CACHE/0" "$CACHE/keep0"        # other names of 0's inodes: their bytes stay
        cp -al "$CACHE/1/0" "$CACHE/1/keep"     # other names inside 1: their bytes go with it
        start_ready 30
        wait_exact t "$CACHE" 10
        mkdir "$VOL/out"
        for d in 0 1 2 3 4 5 6 7; do mv "$CACHE/$d" "$VOL/out/"; done
        wait_exact t "$CACHE" 10
        # (the upkeep puts ccache's level directories back, empty)
        [ "$(cache_field t entry_files)" -eq "$(find "$CACHE"/[0-9a-f] -mindepth 2 -type f ! -name stats | wc -l)" ]
        # two come back under other names: found again, in the DirIds the
        # purge freed
        mv "$VOL/out/3" "$CACHE/back3"
        mv "$VOL/out/1" "$CACHE/back1"
        wait_exact t "$CACHE" 10
        # two audits that began after all that: a fresh walk of the whole
        # cache that finds nothing to correct
        r=$(cache_field t scan.rescans)
        wait_for "[ \"\$(cache_field t scan.rescans)\" -ge $((r + 2)) ]" 30
        status_jq -e '.caches[0].scan.last | .reason == "audit" and .added == 0 and .changed == 0 and .removed == 0'
        wait_exact t "$CACHE"
}
