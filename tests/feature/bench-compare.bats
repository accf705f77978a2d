#!/usr/bin/env bats
# make bench BASE=/BASE_BUILD= (issue 33 item 8): two builds' figures side by
# side. The verdict is tested on planted figures through
# tests/bench/compare-table.py (real timings on a shared box prove nothing
# either way); one real run of tests/bench/compare on small data checks the
# table's shape and that the base's runs use the base's daemon (one slowed).
# tests/run: takes 90 s
load ../lib/helper

TABLE=$TOP/tests/bench/compare-table.py

# figs FILE ROW=VALUE...: a planted round of figures ("wall s" of each ROW).
figs() {
        local f=$BATS_TEST_TMPDIR/$1 kv
        shift
        : > "$f"
        for kv in "$@"; do printf '%s\twall s\t%s\n' "${kv%%=*}" "${kv#*=}" >> "$f"; done
}

# line ROW: the table's line of ROW's wall time.
line() { grep -F "$1 [wall s] " <<< "$output"; }

@test "compare-table: within noise when the difference lies inside the wider spread, OUTSIDE beyond it" {
        # rows: same (a build against itself), edge (the difference equals the
        # base's spread), past (one more), wide (this spread is the wider),
        # skew (the median, not the mean: an outlier round), slow, fast.
        figs b1 same=1.00 edge=100 past=100 wide=100 skew=100 slow=100 fast=100 gone=5
        figs b2 same=1.10 edge=110 past=110 wide=100 skew=101 slow=101 fast=101 gone=5
        figs b3 same=0.95 edge=120 past=120 wide=100 skew=190 slow=102 fast=102 gone=5
        figs t1 same=1.02 edge=130 past=131 wide=90 skew=20 slow=130 fast=70 new=1
        figs t2 same=1.05 edge=130 past=131 wide=105 skew=20 slow=131 fast=71 new=1
        figs t3 same=1.08 edge=130 past=131 wide=130 skew=20 slow=129 fast=69 new=1
        cd "$BATS_TEST_TMPDIR"
        run python3 "$TABLE" --base b1 b2 b3 --this t1 t2 t3
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$(line same)" =~ " within noise"$ ]]
        [[ "$(line edge)" =~ " within noise"$ ]]
        [[ "$(line past)" =~ " OUTSIDE (higher)"$ ]]
        [[ "$(line wide)" =~ " within noise"$ ]]
        [[ "$(line skew)" =~ " within noise"$ ]]
        [[ "$(line slow)" =~ " OUTSIDE (higher)"$ ]]
        [[ "$(line fast)" =~ " OUTSIDE (lower)"$ ]]
        # base, this (medians), change, both spreads
        read -r -a f <<< "$(line slow | sed 's/^slow \[wall s\] //')"
        [ "${f[*]:0:6}" = "101 130 +28.7 % 100-102 129-131" ]
        read -r -a f <<< "$(line edge | sed 's/^edge \[wall s\] //')"
        [ "${f[*]:0:6}" = "110 130 +18.2 % 100-120 130-130" ]
        # a figure one build lacks: no verdict
        [[ "$(line gone)" =~ ^"gone [wall s] "\ +5\ +-\ +-\ +5-5\ +-\ +-$ ]]
        [[ "$(line new)" =~ ^"new [wall s] "\ +-\ +1\ +-\ +-\ +1-1\ +-$ ]]
        # one round each: no spread, so any difference is OUTSIDE and none is not
        run python3 "$TABLE" --base b1 --this b1
        [[ "$(line same)" =~ " within noise"$ ]]
        run python3 "$TABLE" --base b1 --this t1
        [[ "$(line same)" =~ " OUTSIDE (higher)"$ ]]
}

@test "make bench BASE_BUILD=: every figure of both runs side by side; a base whose daemon starts 8 s late is OUTSIDE" {
        [ -x "$CK_BUILD/cachekeeperd" ] && [ -x "$CK_BUILD/tests/helpers/gencache" ] || skip "needs make all and the helpers"
        # The base: this build's binaries, its first daemon (the bench's main
        # one) held 8 s before it starts; the config checks (-t) are not.
        local slow=$BATS_TEST_TMPDIR/slow out=$BATS_TEST_TMPDIR/out
        mkdir "$slow"
        ln -s "$CK_BUILD/cachectl" "$slow/cachectl"
        printf '#!/bin/sh\nif [ "$1" != -t ] && mkdir %s 2> /dev/null; then sleep 8; fi\nexec %s "$@"\n' \
                "$slow/held" "$CK_BUILD/cachekeeperd" > "$slow/cachekeeperd"
        chmod +x "$slow/cachekeeperd"
        BENCH_OUT=$out BENCH_FILES=500 BENCH_BURST=0 BENCH_TRIM=0 BENCH_SHARE=0 BENCH_LATENCY=0 BENCH_FLOOD=0 BENCH_COLD=0 \
                BENCH_MEASURE=0 BASE_BUILD=$slow BENCH_ROUNDS=1 run "$TOP/tests/bench/compare"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -d "$slow/held" ] # the base's run ran the base's daemon
        # every figure of each run is a line of the table, each with a verdict
        local fig row metric n=0
        for fig in "$out"/{base,this}.1.fig; do
                [ -s "$fig" ]
                while IFS=$'\t' read -r row metric _; do
                        grep -qF "$row [$metric] " <<< "$output"
                        n=$((n + 1))
                done < "$fig"
        done
        [ "$n" -ge 30 ]
        [ "$(grep -c -E ' (within noise|OUTSIDE \((higher|lower)\))$' <<< "$output")" -eq "$(cut -f1,2 "$out"/*.fig | sort -u | wc -l)" ]
        # today's rows, the reference tools' too, each with its wall time and memory
        for row in "walk-ref (getdents64+statx)" "du -sB1" "find -type f -printf '%s %T@'" \
                "cachekeeperd start -> READY=1" "cachekeeperd header pass after READY" \
                "cachekeeperd start -> READY=1, hard-linked"; do
                grep -qF "$row [wall s] " <<< "$output"
                grep -qF "$row [peak RSS MiB] " <<< "$output"
        done
        # the base's daemon, 8 s late to READY: OUTSIDE, this lower, by some -90 %
        [[ "$(line "cachekeeperd start -> READY=1")" =~ " -"[0-9.]+" % ".*" OUTSIDE (lower)"$ ]]
        [[ "$output" =~ "load (1, 5, 15 min) at each run's start: base.1: "[0-9.]+" "[0-9.]+" "[0-9.]+"; this.1: " ]]
        [[ "$output" =~ "medians over 1 round(s) of base, 1 of this" ]]
}

@test "make bench BENCH_ROUNDS=2: each build goes first in every other round (base, this, this, base)" {
        [ -x "$CK_BUILD/cachekeeperd" ] && [ -x "$CK_BUILD/tests/helpers/gencache" ] || skip "needs make all and the helpers"
        BENCH_OUT=$BATS_TEST_TMPDIR/out BENCH_FILES=200 BENCH_BURST=0 BENCH_TRIM=0 BENCH_SHARE=0 BENCH_LATENCY=0 \
                BENCH_FLOOD=0 BENCH_COLD=0 BENCH_MEASURE=0 BASE_BUILD=$CK_BUILD BENCH_ROUNDS=2 \
                run --separate-stderr "$TOP/tests/bench/compare"
        echo "$stderr"
        [ "$status" -eq 0 ]
        [ "$(grep -o 'round [12] of 2: [a-z]*' <<< "$stderr" | tr '\n' ,)" = \
                "round 1 of 2: base,round 1 of 2: this,round 2 of 2: this,round 2 of 2: base," ]
        grep -qE "^load \(1, 5, 15 min\) at each run's start: base\.1: [0-9. ]+; this\.1: [0-9. ]+; this\.2: [0-9. ]+; base\.2: " <<< "$output"
        [[ "$output" =~ "medians over 2 round(s) of base, 2 of this" ]]
}

@test "make bench: BASE names a commit, BENCH_ROUNDS a number" {
        BASE=no-such-rev-here run "$TOP/tests/bench/compare"
        [ "$status" -eq 2 ]
        [[ "$output" =~ "BASE=no-such-rev-here is not a commit here" ]]
        BASE_BUILD=/ BENCH_ROUNDS=x run "$TOP/tests/bench/compare"
        [ "$status" -eq 2 ]
        [[ "$output" =~ "BENCH_ROUNDS must be a number" ]]
        BASE_BUILD=$BATS_TEST_TMPDIR run "$TOP/tests/bench/compare"
        [ "$status" -eq 2 ]
        [[ "$output" =~ "$BATS_TEST_TMPDIR/cachekeeperd is not an executable" ]]
}
