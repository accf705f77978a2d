#!/usr/bin/env bats
# What an unprivileged user can do to the daemon's view of a cache through
# the directories alone: renames, deletions and recreations racing its scans,
# audits and trims. The daemon never crashes and its figures stay exact.
# tests/run: takes 76 s
load ../lib/helper

setup() {
        require_root
        setup_volume 512M
        open_test_dir
        mkdir -m 1777 "$CACHE"
}

teardown() {
        if [ -n "${BG_PIDS:-}" ]; then
                kill $BG_PIDS 2>/dev/null || true
                wait $BG_PIDS 2>/dev/null || true
        fi
        stop_daemon
        unmount_all
}

# config [MAX_SIZE [AUDIT_INTERVAL [extra cache settings]]]: no audit unless asked for
config() {
        write_config "${1:-1G}" "${3:-}" "audit_interval = \"${2:-0s}\";"
}

# The daemon is alive and its log shows no sanitizer report.
daemon_sound() {
        kill -0 "$DAEMON_PID"
        ! grep -E "runtime error|AddressSanitizer|LeakSanitizer" "$BATS_TEST_TMPDIR/daemon.log" || false
}

@test "renaming a big tree back and forth while it is scanned (issue 9.1): no crash, exact figures" {
        config
        start_ready
        # 3000 new directories queue their subtree scans; each rename makes
        # the daemon forget the tree its scan is walking.
        as_nobody bash -c 'C=$1; mkdir -p "$C"/a/x/{1..3000}/s
                           for i in $(seq 200); do mv "$C/a/x" "$C/a/y"; mv "$C/a/y" "$C/a/x"; done' _ "$CACHE"
        head -c 5000 /dev/urandom > "$CACHE/a/x/17/s/late"
        daemon_sound
        wait_exact t "$CACHE" 30
        [ "$(cache_field t dirs)" -ge 6002 ]
        daemon_sound
}

@test "random renames, deletions and recreations during scans, audits and trims: no crash, exact figures" {
        # A small cap: the compiles and the churn's old entries keep cap trims
        # going; audits every second; root's own trims besides.
        config 3M 1s
        mkdir "$BATS_TEST_TMPDIR/src" && chown 65534:65534 "$BATS_TEST_TMPDIR/src"
        churn=$(world_copy "$TOP/tests/helpers/churn.py")
        start_ready
        BG_PIDS=
        "${AS_NOBODY[@]}" bash -c 'src=$1 C=$2
                for i in $(seq 400); do
                        printf "int f%d(int x) { return x * %d; }\n" $i $i > "$src/f$i.c"
                        CCACHE_DIR=$C ccache gcc -c "$src/f$i.c" -o "$src/f$i.o" 2>/dev/null
                done' _ "$BATS_TEST_TMPDIR/src" "$CACHE" &
        BG_PIDS="$BG_PIDS $!"
        (while :; do ctl trim t --to 1M > /dev/null 2>&1; sleep 0.1; done) &
        BG_PIDS="$BG_PIDS $!"
        "${AS_NOBODY[@]}" /usr/bin/python3 "$churn" "$CACHE" 25 1 &
        churn1=$!
        "${AS_NOBODY[@]}" /usr/bin/python3 "$churn" "$CACHE" 25 2 &
        churn2=$!
        wait "$churn1" "$churn2"
        # Trims ran: on a loaded machine the compiles may not have stored
        # past the trims' 1M by the churn's end, so they go on until then.
        wait_for "[ \"\$(cache_field t evicted_files_total)\" -gt 0 ]" 120
        kill $BG_PIDS 2>/dev/null || true
        wait $BG_PIDS 2>/dev/null || true
        BG_PIDS=
        daemon_sound
        [ "$(cache_field t scan.rescans)" -ge 3 ]       # audits ran
        wait_exact t "$CACHE" 30
        daemon_sound
}

# The inotify watches the daemon holds, as the kernel lists them.
kernel_watches() {
        cat /proc/"$DAEMON_PID"/fdinfo/* 2>/dev/null | grep -c '^inotify wd:'
}

# "dirs" as the daemon counts them, and as find does.
dirs_equal() {
        [ "$(cache_field t dirs)" -eq "$(find "$CACHE" -xdev -type d | wc -l)" ]
}

@test "a foreign tree gets no inotify watch: it is counted by the paced rescans" {
        config
        start_ready
        w0=$(cache_field t scan.watches)
        [ "$w0" -ge 275 ]            # the root, 16 + 256 levels, tmp/, lock/
        [ "$(kernel_watches)" -eq "$w0" ]
        as_nobody bash -c 'C=$1; mkdir -p "$C"/a/x/{1..3000}/s "$C"/0/0/zz/{1..50}
                           for i in 7 77 777 2999; do head -c $((i * 10)) /dev/urandom > "$C/a/x/$i/s/f"; done
                           head -c 5000 /dev/urandom > "$C/0/0/zz/3/f"' _ "$CACHE"
        wait_exact t "$CACHE" 60
        wait_for dirs_equal 60
        [ "$(cache_field t scan.watches)" -eq "$w0" ]
        [ "$(kernel_watches)" -eq "$w0" ]
        [ "$(cache_field t scan.unwatched_dirs)" -ge 3052 ]
        # a change in the foreign tree, which no event tells: the next paced round sees it
        as_nobody bash -c 'head -c 9000 /dev/urandom > "$1/a/x/1500/s/g"; rm "$1/a/x/7/s/f"' _ "$CACHE"
        wait_exact t "$CACHE" 60
        daemon_sound
}

@test "max_watches caps the watches of ccache's own directories; the rest are rescanned, figures exact" {
        config 1G 0s "max_watches = 100;"
        start_ready
        [ "$(cache_field t scan.max_watches)" -eq 100 ]
        # ccache's own shape, to depth 4: far more directories than the cap
        as_nobody bash -c 'C=$1; mkdir -p "$C"/{{0..9},{a..f}}/{{0..9},{a..f}}/{0..3}/{0..1}
                           for d in 0/0/0/0 5/a/3/1 f/f/2; do head -c 3000 /dev/urandom > "$C/$d/x"; done' _ "$CACHE"
        wait_exact t "$CACHE" 60
        wait_for dirs_equal 60
        [ "$(cache_field t scan.watches)" -le 100 ]
        [ "$(kernel_watches)" -le 100 ]
        [ "$(cache_field t scan.unwatched_dirs)" -ge 3000 ]
        grep -q "cannot watch every directory of ccache's (max_watches reached)" "$BATS_TEST_TMPDIR/daemon.log"
        as_nobody bash -c 'head -c 7000 /dev/urandom > "$1/e/e/3/1/y"; rm "$1/0/0/0/0/x"' _ "$CACHE"
        wait_exact t "$CACHE" 60
        daemon_sound
}

@test "status answers within 100 ms while two users flood the cache with utime() events" {
        config
        start_ready
        # 2000 entries of two users, in ccache's watched level directories
        for u in 65534 65533; do
                as_user $u bash -c 'for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                        for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                                for i in 1 2 3 4; do echo x > "$1/$a/$b/e$i$2kitvq0g3ru9p1n2pkn7j5dsgvR"; done
                        done; done' _ "$CACHE" "$u"
        done
        wait_exact t "$CACHE"
        BG_PIDS=
        touch "$BATS_TEST_TMPDIR/before"
        loop=$(world_copy "$TOP/tests/helpers/utime-loop.py")
        for u in 65534 65533; do
                setpriv --reuid=$u --regid=$u --clear-groups /usr/bin/python3 "$loop" "$CACHE" 60 &
                BG_PIDS="$BG_PIDS $!"
        done
        # the flood is on: both users' files have new times
        for u in 65534 65533; do
                wait_for "[ -n \"\$(find '$CACHE' -newer '$BATS_TEST_TMPDIR/before' -user $u | head -1)\" ]"
        done
        # --echo: an echo server asked at the same moments tells the box's
        # share of each wait (a core busy with other work) from the daemon's.
        read -r worst p95 median _ echo_worst echo_p95 _ own_worst own_p95 _ \
                < <(python3 "$TOP/tests/helpers/status-latency.py" --echo "$BATS_TEST_TMPDIR/ck.sock" 200 0.02)
        echo "status under the flood: worst $worst ms, 95th percentile $p95 ms, median $median ms;" \
             "the echo's worst $echo_worst, p95 $echo_p95; the daemon's own worst $own_worst, p95 $own_p95" >&3
        kill $BG_PIDS
        wait $BG_PIDS 2>/dev/null || true
        BG_PIDS=
        # The daemon's own part within 100 ms, but for a few outliers: four
        # busy processes share two cores here, and others may be running.
        awk -v p="$own_p95" -v w="$own_worst" 'BEGIN { exit !(p < 100 && w < 500) }'
        wait_exact t "$CACHE" 20
        daemon_sound
}

@test "hard links count once (as du), any depth is counted, memory_bytes holds the names" {
        config
        start_ready
        s0=$(cache_field t size_bytes)
        f0=$(cache_field t files)
        m0=$(cache_field t memory_bytes)
        # 30 names of one 20 MB file, in level directories and a foreign one
        as_nobody bash -c 'C=$1; head -c 20000000 /dev/zero > "$C/0/0/big"; mkdir "$C/x"
                           for i in $(seq 1 28); do ln "$C/0/0/big" "$C/$((i % 3))/$((i % 5))/l$i"; done
                           ln "$C/0/0/big" "$C/x/l30"' _ "$CACHE"
        wait_exact t "$CACHE" 60
        [ "$(cache_field t files)" -eq $((f0 + 30)) ]
        size=$(cache_field t size_bytes)
        [ $((size - s0)) -ge 20000000 ] && [ $((size - s0)) -lt 20100000 ]
        [ "$size" -eq $(($(du -sB1 --exclude=. "$CACHE" | cut -f1) - $(find "$CACHE" -type d -printf '%b\n' | awk '{ s += $1 * 512 } END { print s }'))) ]
        # the names go; the bytes with the last
        as_nobody bash -c 'C=$1; for i in $(seq 1 28); do rm "$C/$((i % 3))/$((i % 5))/l$i"; done; rm "$C/x/l30"' _ "$CACHE"
        wait_exact t "$CACHE" 60
        [ $(($(cache_field t size_bytes) - s0)) -ge 20000000 ]
        as_nobody rm "$CACHE/0/0/big"
        wait_exact t "$CACHE" 60
        [ "$(cache_field t size_bytes)" -eq "$s0" ]

        # 40 levels deep, far below the 16 directories a walk holds open
        as_nobody bash -c 'd=$1/x; for i in $(seq 1 40); do d=$d/d; mkdir "$d"
                           [ $((i % 10)) -ne 0 ] || head -c $((i * 1000)) /dev/urandom > "$d/f"; done' _ "$CACHE"
        wait_exact t "$CACHE" 60
        [ "$(cache_field t files)" -eq $((f0 + 4)) ]

        # 2000 files of 200-character names: their names are memory too
        as_nobody bash -c 'n=$(printf "n%.0s" $(seq 1 200)); for i in $(seq 1 2000); do : > "$1/7/7/$n$i"; done' _ "$CACHE"
        wait_exact t "$CACHE" 60
        [ "$(cache_field t memory_bytes)" -ge $((m0 + 2000 * 200)) ]
        daemon_sound
}
