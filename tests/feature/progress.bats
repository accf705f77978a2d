#!/usr/bin/env bats
# A trim's and a merge's progress reach the client every 250 ms while they
# run, so that cachectl, which counts its timeout from the last line it read,
# waits out a job of any length. Traced by tests/helpers/progress-trace.py, a
# proxy between the real cachectl and the daemon that notes when each line
# arrives. The jobs are long by their size alone (the ASan daemon, on tmpfs:
# 64000 unlinks, 20000 copies; seconds each): no CPU limit, which needs a
# cgroup controller not every runner lends, and no ext4 image, whose entries
# take longer to make than the test lasts. cachectl is given a timeout of
# 1 s: it completes only if no silence is longer. The 500k-entry ext4 case,
# with the default timeout, is make bench's (tests/bench/run, BENCH_FS=ext4:
# its rows "cachectl trim --to" and "progress during a trim of 10 %").
# tests/run: takes 30 s
load ../lib/helper

setup() {
        require_root
        export CCACHE_MAXSIZE=0
}

teardown() {
        stop_daemon
        unmount_all
}

# trace CACHECTL-ARGS...: runs cachectl -t 1s through the tracing proxy;
# cachectl's status in $status, its output in $output, the trace's JSON
# in $TRACE (echoed for the log) and the daemon's final line in $FINAL.
trace() {
        local sock=$BATS_TEST_TMPDIR/trace.sock
        python3 "$TOP/tests/helpers/progress-trace.py" "$sock" "$BATS_TEST_TMPDIR/ck.sock" \
                > "$BATS_TEST_TMPDIR/trace.json" &
        local proxy=$!
        wait_for "[ -S '$sock' ]"
        run "$CTL" -s "$sock" -t 1s "$@"
        echo "cachectl: $output"
        wait "$proxy"
        TRACE=$(jq -c 'del(.final)' "$BATS_TEST_TMPDIR/trace.json")
        FINAL=$(jq -r .final "$BATS_TEST_TMPDIR/trace.json")
        echo "trace: $TRACE"
}

# The trace's field $1.
traced() {
        jq -r ".$1" <<< "$TRACE"
}

# What every trace must show: lines at least every second (the bound for
# 250 ms on a busy 2-core box), and as many as the job's length calls for,
# whatever that length is on this machine (the old code sent one, at once).
assert_steady() {
        local total want
        total=$(traced total_ms | cut -d. -f1)
        want=$((total / 250 / 2))
        echo "the job took $total ms: at least $want progress lines"
        [ "$(traced progress)" -ge "$want" ]
        [ "$(traced "max_gap_ms | . <= 1000")" = true ]
        [ "$(traced progress)" -lt 3 ] || [ "$(traced "median_gap_ms | . <= 500")" = true ]
}

@test "a trim of several seconds keeps talking: progress every 250 ms, cachectl -t 1s waits it out" {
        setup_volume 512M
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 80000
        write_config 1T "ccache_conf = false;" 'audit_interval = "0s";'
        start_ready 60
        size=$(cache_field t size_bytes)
        trace trim t --to "$((size / 5000))k"                  # 4/5 of them go
        [ "$status" -eq 0 ]
        [[ "$output" == "t: evicted "* ]]
        assert_steady
        [ "$(jq -r .result.t.files <<< "$FINAL")" -gt 0 ]
}

@test "a merge of several seconds keeps talking: progress every 250 ms, cachectl -t 1s waits it out" {
        mount_tmpfs "$BATS_TEST_TMPDIR/va" 256M
        mount_tmpfs "$BATS_TEST_TMPDIR/vb" 256M
        FROM=$BATS_TEST_TMPDIR/va/a
        TO=$BATS_TEST_TMPDIR/vb/b
        "$HELPERS/gencache" --tiny --quiet --seed=3 "$FROM" 20000
        "$HELPERS/gencache" --tiny --quiet --seed=4 "$TO" 100
        write_config_caches "{ name = \"a\"; path = \"$FROM\"; max_size = \"1T\"; ccache_conf = false; },
                             { name = \"b\"; path = \"$TO\"; max_size = \"1T\"; ccache_conf = false; }" \
                'audit_interval = "0s";'
        start_ready 60
        trace merge a --into b
        [ "$status" -eq 0 ]
        [[ "$output" == *"Merged a into b: 20000 entries"* ]]
        assert_steady
}
