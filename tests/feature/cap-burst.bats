#!/usr/bin/env bats
# The cap under a burst of stores by parallel writers into a new cache
# (issue 32, item 0). Every ccache 4.8+ that starts on a cache without an
# inode cache writes one of its own first (tmp/inode-cache-64.v2.tmp.*,
# 5.9 MB) and all but one remove theirs a moment later: eight at once put a
# small cache over its cap with no entry in it. That is no failure of the
# trim (the daemon used to raise cache-trim-failed and back off 60 s while
# the burst's own entries piled up past the cap): the cache is back within
# its cap within a second of the burst's end, no alert, and every entry the
# account counts is evictable, whichever layout wrote it.
# tests/run: takes 55 s (the real ccache case: 20 s of it; the grace: 12 s)
load ../lib/helper

CAP=8000000   # bytes: max_size "8M"
REAL_CCACHE=${REAL_CCACHE:-/opt/ccache-4.12/bin/ccache}

setup() {
        require_root
        setup_volume 256M
        mkdir -m 1777 "$CACHE"
        ALERTS=$BATS_TEST_TMPDIR/alerts
        write_alert_command "$ALERTS" "$BATS_TEST_TMPDIR/alert.sh"
        : > "$ALERTS"
        write_config 8M '' 'audit_interval = "0s";' 'alert_min_interval = "0s";' \
                "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];"
        start_ready
}

teardown() {
        stop_daemon
        unmount_all
}

# Seconds (3 decimals) since the monotonic instant $1 (from now_s).
now_s() {
        awk '{ printf "%.3f\n", $1 }' /proc/uptime
}

# After the burst (ended at $1, from now_s): the cache back within its cap,
# how soon; no cache-trim-failed; every entry the account counts evictable.
after_burst() {
        local end=$1 under entries
        wait_for "[ \$(cache_field t size_bytes) -le $CAP ]" 20
        under=$(now_s)
        echo "within the cap $(awk -v a="$end" -v b="$under" 'BEGIN { printf "%.2f", b - a }') s after the burst's end"
        grep 'cap trim\|over its cap' "$BATS_TEST_TMPDIR/daemon.log" | tail -n 5
        cat "$ALERTS"
        # Within a second (on a loaded machine under ASan: the trim under way
        # when it ended and one more; on the old code, 60 s).
        awk -v a="$end" -v b="$under" 'BEGIN { exit !(b - a <= 3) }'
        ! grep -q '^cache-trim-failed' "$ALERTS" || false
        ! grep -q 'still over its cap' "$BATS_TEST_TMPDIR/daemon.log" || false
        # Every entry counted is evictable: a dry run down to nothing would
        # evict exactly those (no stale temporary is left to add to them).
        entries=$(cache_field t entry_files)
        [ "$entries" -gt 0 ]
        run ctl trim t --to 1k --dry-run
        echo "$output (entries: $entries)"
        [ "$status" -eq 0 ]
        [[ "$output" == "t: would evict $entries files,"* ]]
}

# burst_helper LAYOUT: eight writers of that layout, 24 compiles each, the
# inode cache temporaries held until the daemon has seen them and tried a
# cap trim (on the old code: the one that alerted and backed off).
burst_helper() {
        local go=$BATS_TEST_TMPDIR/go end
        /usr/bin/python3 "$TOP/tests/helpers/ccache-burst.py" "$CACHE" "$1" 8 24 50000 "$go" \
                > "$BATS_TEST_TMPDIR/burst.out" &
        local writers=$!
        wait_for "[ \$(cache_field t size_bytes) -gt 40000000 ]" 20
        wait_for "[ \"\$(cache_field t last_trim.reason)\" = cap ]" 10
        # It found nothing to evict, and says what stood in the way.
        [ "$(cache_field t last_trim.planned_files)" -eq 0 ]
        [ "$(cache_field t last_trim.inflight_bytes)" -gt "$CAP" ]
        touch "$go"
        wait "$writers"
        end=$(now_s)
        cat "$BATS_TEST_TMPDIR/burst.out"
        after_burst "$end"
        # The writers' entries went past the cap: the trims had work to do.
        [ "$(cache_field t evicted_files_total)" -gt 0 ]
        # The in-flight bytes were said for what they are, in the journal.
        grep -q "by ccache's temporaries in use" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a burst of eight ccache 4.8-4.12 layout writers into a new cache: within the cap a second after, no alert" {
        burst_helper 4.12
        [ "$(cache_field t kinds.result.files)" -gt 0 ]
        [ "$(cache_field t kinds.manifest.files)" -gt 0 ]
}

@test "a burst of eight ccache 4.13 layout writers into a new cache: within the cap a second after, no alert" {
        burst_helper 4.13
        [ "$(cache_field t kinds.entry.files)" -gt 0 ]
        [ "$(cache_field t kinds.result.files)" -eq 0 ]
}

@test "a burst of eight ccache 4.7 layout writers (no inode cache, no content locks): within the cap a second after" {
        # What Debian's 4.7.5 does: no inode cache, so no temporaries of it;
        # this passed before the fix too, and must go on passing.
        /usr/bin/python3 "$TOP/tests/helpers/ccache-burst.py" "$CACHE" 4.7 8 24 50000 /nonexistent \
                > "$BATS_TEST_TMPDIR/burst.out"
        cat "$BATS_TEST_TMPDIR/burst.out"
        after_burst "$(now_s)"
        [ "$(cache_field t evicted_files_total)" -gt 0 ]
        [ "$(cache_field t kinds.result.files)" -gt 0 ]
}

@test "real ccache 4.12: eight parallel compiles into a new cache: within the cap a second after, no alert" {
        [ -x "$REAL_CCACHE" ] || skip "no ccache 4.12 at $REAL_CCACHE"
        local src=$BATS_TEST_TMPDIR/src end
        mkdir -p "$src"
        # 32 sources, each a string of 128 kB that does not compress: entries
        # of some 100 kB, past the cap with the inode cache (5.9 MB).
        for i in $(seq 1 32); do
                printf 'const char s%d[] = "%s";\n' "$i" "$(head -c 96000 /dev/urandom | base64 -w0)" > "$src/f$i.c"
        done
        (cd "$src" && ls ./*.c | CCACHE_DIR=$CACHE xargs -P 8 -I{} "$REAL_CCACHE" gcc -c {} -o {}.o)
        end=$(now_s)
        [ "$(ls "$src"/*.o | wc -l)" -eq 32 ]
        after_burst "$end"
        [ "$(cache_field t stored_files_total)" -ge 64 ]
}

@test "a young file nobody keeps in tmp/ holds the cap off: cache-trim-failed once the grace is over, saying why" {
        open_test_dir
        # No entry to evict; the cache over its cap by a file named as
        # ccache names its temporaries in tmp/, young: in flight, as far as
        # anyone can tell. Excused for a while, not for good.
        as_nobody sh -c "head -c 9000000 /dev/zero > '$CACHE/tmp/cpp_stdout.tmp.AbCdEf.i'"
        wait_for "grep -q \"by ccache's temporaries in use\" '$BATS_TEST_TMPDIR/daemon.log'" 10
        ! grep -q '^cache-trim-failed' "$ALERTS" || false
        wait_for "grep -q '^cache-trim-failed  t ' '$ALERTS'" 30
        cat "$ALERTS"
        grep -q "^cache-trim-failed  t .*nothing more evictable.*of the rest are temporaries less than an hour old" "$ALERTS"
        [ -f "$CACHE/tmp/cpp_stdout.tmp.AbCdEf.i" ]
}
