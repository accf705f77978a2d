#!/usr/bin/env bats
# Trims against what other users of the host can do to them: ccache locks
# planted or held (stale ones broken as ccache breaks them, never a sleep in
# the loop), dry runs looped to starve the cap; and the daemon's own locks
# after a kill -9 mid-trim, with ccache's counters corrected on restart.
# tests/run: takes 66 s
load ../lib/helper

setup() {
        require_root
        setup_volume 512M
        mkdir -m 1777 "$CACHE"
        export CCACHE_MAXSIZE=0
        open_test_dir                   # other users reach the socket and the cache
        KEEPERS=()
}

teardown() {
        kill_keepers
        stop_daemon
        unmount_all
}

# config MAX_SIZE [extra cache settings]: no audit
config() {
        write_config "$1" "${2:-}" 'audit_interval = "0s";'
}

# Runs shell code $1 (arguments after it) as nobody in the background, until
# teardown; not through a function, so that $! is the process itself.
keep_as_nobody() {
        local code=$1; shift
        "${AS_NOBODY[@]}" sh -c "$code" _ "$@" > /dev/null 2>&1 3>&- &
        KEEPERS+=($!)
}

# ccache's own counters, "files KiB", summed over its stats files as ccache -s does.
ccache_counters() {
        CCACHE_DIR=$CACHE ccache --print-stats |
                awk '$1 == "files_in_cache" { f = $2 } $1 == "cache_size_kibibyte" { k = $2 } END { print f, k }'
}

# What they should say: the entries the daemon counts (ccache counts entries only).
true_counters() {
        status_jq '.caches[0] | "\(.entry_files) \(.entry_bytes / 1024 | floor)"'
}

# Level-1 directory $1: files_in_cache in its stats file, and the entries really there.
l1_counter() {
        sed -n 12p "$CACHE/$1/stats"
}
l1_entries() {
        find "$CACHE/$1" -mindepth 2 -type f -regex '.*/[0-9a-v]+[RM]' | wc -l
}

# As nobody: a lock on each of the 256 level-2 directories ($1 = alive: with
# an .alive beside it).
plant_subdir_locks() {
        mkdir -p "$CACHE/lock"
        as_nobody sh -c 'for l1 in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do for l2 in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                ln -s nobody-1-1-1.1 "$1/lock/subdir_$l1$l2.lock"
                [ "$2" != alive ] || touch "$1/lock/subdir_$l1$l2.alive"
        done; done' _ "$CACHE" "${1:-}"
}

ms_now() {
        echo $(($(date +%s%N) / 1000000))
}

# Trims to $1 kB (cachectl's output in trim.out); prints how long it took in ms.
timed_trim() {
        local start=$(ms_now)
        ctl trim --to "$1k" > "$BATS_TEST_TMPDIR/trim.out" || return 1
        cat "$BATS_TEST_TMPDIR/trim.out" >&2
        grep -q "^t: evicted [1-9]" "$BATS_TEST_TMPDIR/trim.out" || return 1
        echo $(($(ms_now) - start))
}

@test "a stats.lock planted by nobody costs a trim nothing; ccache's counters are fixed once it is stale or released" {
        config 1T
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 20000
        start_ready 30
        [ "$(ccache_counters)" = "$(true_counters)" ]
        size=$(cache_field t size_bytes)
        usual=$(timed_trim $((size * 3 / 4000)))
        # in 0-7 a lock nobody holds any more; in 8-f one whose .alive nobody keeps fresh
        for l1 in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                as_nobody ln -s nobody-was-here "$CACHE/$l1/stats.lock"
        done
        keep_as_nobody 'while :; do for l1 in 8 9 a b c d e f; do touch "$1/$l1/stats.alive"; done; sleep 0.3; done' \
                "$CACHE"
        took=$(timed_trim $((size / 2000)))
        echo "the same trim: $usual ms unhindered, $took ms with every stats.lock taken"
        # it waited 200 ms per directory (256 of them) for the lock: 57 s
        [ "$took" -le $((2 * usual + 1000)) ]
        # 0-7: stale 2 s after the daemon first saw them: broken, counters exact
        wait_for "[ -z \"\$(ls $CACHE/[0-7]/stats.lock 2>/dev/null)\" ]" 6
        for l1 in 0 1 2 3 4 5 6 7; do
                wait_for "[ \"\$(l1_counter $l1)\" -eq \"\$(l1_entries $l1)\" ]" 2
        done
        grep -q "broke .* stale ccache lock" "$BATS_TEST_TMPDIR/daemon.log"
        # 8-f: held and alive: the lock stays, the fix stays owed
        for l1 in 8 9 a b c d e f; do
                [ -L "$CACHE/$l1/stats.lock" ]
                [ "$(l1_counter $l1)" -gt "$(l1_entries $l1)" ]
        done
        # released: paid within the retry interval
        kill "${KEEPERS[0]}"
        as_nobody rm -f "$CACHE"/[89a-f]/stats.lock "$CACHE"/[89a-f]/stats.alive
        wait_for "[ \"\$(ccache_counters)\" = \"\$(true_counters)\" ]" 3
        [ "$(ls "$CACHE"/*/stats.lock 2>/dev/null | wc -l)" -eq 0 ]
        kill -0 "$DAEMON_PID"
}

@test "subdir locks planted by nobody are broken once stale: the trim evicts everything it planned, promptly" {
        config 1T
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 20000
        start_ready 30
        size=$(cache_field t size_bytes)
        usual=$(timed_trim $((size * 3 / 4000)))
        plant_subdir_locks
        took=$(timed_trim $((size / 2000)))
        echo "the same trim: $usual ms unhindered, $took ms with every subdir lock planted"
        [[ "$(cat "$BATS_TEST_TMPDIR/trim.out")" != *"locked by ccache"* ]]   # they were left as locked after 5 s
        [ "$(cache_field t size_bytes)" -le "$((size / 2000 * 1000))" ]
        [ "$took" -le $((2000 + 2 * usual + 1000)) ]          # 2 s of staleness, then the work
        [ "$(ls "$CACHE"/lock/*.lock 2>/dev/null | wc -l)" -eq 0 ]
        wait_for "[ \"\$(ccache_counters)\" = \"\$(true_counters)\" ]" 2
}

@test "cache-trim-failed says why: directories ccache keeps locked, nothing evictable" {
        config 1T
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 20000
        start_ready 30
        # nobody holds every level-2 directory's lock and keeps it alive
        plant_subdir_locks alive
        keep_as_nobody 'while :; do touch "$1"/lock/subdir_*.alive; sleep 0.3; done' "$CACHE"
        size=$(cache_field t size_bytes)
        config "$((size / 2000))k"
        kill -HUP "$DAEMON_PID"
        wait_for "grep -q 'still over its cap' '$BATS_TEST_TMPDIR/daemon.log'" 10
        grep 'still over its cap' "$BATS_TEST_TMPDIR/daemon.log"
        grep -q "still over its cap.*locked: ccache kept 256 directories locked throughout" "$BATS_TEST_TMPDIR/daemon.log"
        stop_daemon

        # a cache that holds only what is not ccache's to evict
        kill "${KEEPERS[0]}"
        rm -rf "${CACHE:?}"/* && head -c 3000000 /dev/urandom > "$CACHE/not-an-entry"
        config 1M
        : > "$BATS_TEST_TMPDIR/daemon.log"
        start_daemon
        wait_for "grep -q 'still over its cap' '$BATS_TEST_TMPDIR/daemon.log'" 10
        grep 'still over its cap' "$BATS_TEST_TMPDIR/daemon.log"
        grep -q "still over its cap.*nothing more evictable" "$BATS_TEST_TMPDIR/daemon.log"
}

# Writes N tiny entries into level-2 directory a/b and a/stats (ccache 4.12,
# counters matching): one long run of groups under one content lock.
make_one_dir_cache() {
        /usr/bin/python3 - "$CACHE" "$1" <<'EOP'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
b32 = "0123456789abcdefghijklmnopqrstuv"
d = os.path.join(root, "a", "b")
os.makedirs(d, exist_ok=True)
rnd = random.Random(1)
for i in range(n):
    name = "".join(rnd.choice("0123456789abcdef") for _ in range(2)) + "".join(rnd.choice(b32) for _ in range(29)) + "R"
    with open(os.path.join(d, name), "w") as f:
        f.write("x")
    t = 1600000000 + i
    os.utime(os.path.join(d, name), (t, t))
kib = 0
for e in os.scandir(d):
    kib += e.stat().st_blocks // 2
c = [0] * 85
c[11], c[12], c[49 + 11], c[65 + 11] = n, kib, n, kib
with open(os.path.join(root, "a", "stats"), "w") as f:
    f.write("".join("%d\n" % v for v in c))
EOP
}

# Stops the daemon (SIGSTOP) while it holds lock/subdir_ab.lock and has
# deleted part of that group: ccache's counters then disagree with the disk.
catch_mid_group() {
        /usr/bin/python3 - "$DAEMON_PID" "$CACHE/lock/subdir_ab.lock" <<'EOP'
import os, signal, sys, time
pid, lock = int(sys.argv[1]), sys.argv[2]
deadline = time.time() + 60
while time.time() < deadline:
    try:
        os.readlink(lock)
    except OSError:
        continue
    time.sleep(0.002)
    os.kill(pid, signal.SIGSTOP)
    try:
        os.readlink(lock)
        sys.exit(0)
    except OSError:
        os.kill(pid, signal.SIGCONT)
sys.exit(1)
EOP
}

@test "kill -9 mid-trim: on restart the daemon breaks its own lock and corrects ccache's counters" {
        config 1T
        make_one_dir_cache 60000
        caught=no
        for attempt in 1 2 3 4 5; do
                start_ready 60
                [ "$(l1_counter a)" -eq "$(l1_entries a)" ]
                left=$(cache_field t size_bytes)
                ctl trim --to "$((left / 4000 + 1))k" > /dev/null 2>&1 &
                catch_mid_group
                kill -9 "$DAEMON_PID"
                wait "$DAEMON_PID" 2>/dev/null || true
                DAEMON_PID=
                [ -L "$CACHE/lock/subdir_ab.lock" ]
                echo "attempt $attempt: counter $(l1_counter a), entries $(l1_entries a), lock $(readlink "$CACHE/lock/subdir_ab.lock")"
                if [ "$(l1_counter a)" -ne "$(l1_entries a)" ]; then caught=yes; break; fi
                rm -f "$CACHE/lock/subdir_ab.lock" "$CACHE/lock/subdir_ab.alive"
        done
        [ "$caught" = yes ]
        start_ready 60
        wait_for "[ \"\$(l1_counter a)\" -eq \"\$(l1_entries a)\" ]" 3
        # the group's lock, and its L1 stats.lock if the kill came while the
        # counters were being fixed
        grep -Eq "broke (1 lock|2 locks) left by a cachekeeperd that died mid-trim" "$BATS_TEST_TMPDIR/daemon.log"
        [ ! -L "$CACHE/lock/subdir_ab.lock" ]
        [ "$(ccache_counters)" = "$(true_counters)" ]
        # the per-subdirectory counter moved with it (ccache 4.8+ checks they add up)
        [ "$(sed -n $((49 + 11 + 1))p "$CACHE/a/stats")" -eq "$(l1_entries a)" ]
        # and what ccache itself recounts agrees
        cp -a "$CACHE" "$VOL/copy"
        CCACHE_DIR=$VOL/copy ccache -c > /dev/null
        [ "$(CCACHE_DIR=$VOL/copy ccache --print-stats | awk '$1 == "files_in_cache" { print $2 }')" -eq "$(l1_entries a)" ]
}

@test "a file nobody puts in a planned victim's place (and its slot) goes only if it may: never a stats file" {
        config 1T
        make_one_dir_cache 200
        start_ready
        stats0=$(cache_field t kinds.stats.files)
        # nobody holds a/b's content lock and keeps it alive: the trim plans, then waits
        as_nobody ln -s nobody-1-1-1.1 "$CACHE/lock/subdir_ab.lock"
        keep_as_nobody 'while :; do touch "$1"; sleep 0.2; done' "$CACHE/lock/subdir_ab.alive"
        as_nobody sh -c 'echo x > "$1" && touch -m -d @1500000000 "$1"' _ "$VOL/planted"
        size=$(cache_field t size_bytes)
        ctl trim --to "$((size / 2000))k" > "$BATS_TEST_TMPDIR/trim.out" &
        trimmer=$!
        wait_for "[ \"\$(cache_field t trim.planned_files)\" -gt 0 ]" 10
        # The oldest entry, planned, goes; a "stats" older still comes in its
        # place: the daemon, frozen meanwhile, gives it the entry's slot.
        victim=$(find "$CACHE/a/b" -name '*R' -printf '%T@ %p\n' | sort -n | head -1 | cut -d' ' -f2)
        kill -STOP "$DAEMON_PID"
        as_nobody rm "$victim"
        as_nobody mv "$VOL/planted" "$CACHE/a/b/stats"
        kill -CONT "$DAEMON_PID"
        wait_for "[ \"\$(cache_field t kinds.stats.files)\" -eq $((stats0 + 1)) ]" 5
        # the lock is let go: the trim goes on, and the stats file stays
        kill "${KEEPERS[0]}"
        as_nobody rm -f "$CACHE/lock/subdir_ab.lock" "$CACHE/lock/subdir_ab.alive"
        wait "$trimmer"
        cat "$BATS_TEST_TMPDIR/trim.out"
        grep -q "^t: evicted [1-9]" "$BATS_TEST_TMPDIR/trim.out"
        [ -f "$CACHE/a/b/stats" ]
        [ "$(cache_field t kinds.stats.files)" -eq $((stats0 + 1)) ]
        wait_exact t "$CACHE"
        kill -0 "$DAEMON_PID"
}

# One status field, through the plain build of cachectl: polling often
# under load, the sanitizers' start-up would be most of what is measured.
field() {
        "$CK_BUILD/cachectl" -s "$BATS_TEST_TMPDIR/ck.sock" status --json | jq -r ".caches[0].$1"
}

# Pushes the cache over its cap with one new entry of $1 bytes (named from
# $2; $3: evicted_files_total before), then waits for the cap trim to bring
# it back under; prints how long that took in ms.
push_over_cap() {
        local cap start
        cap=$(field max_size_bytes)
        start=$(ms_now)
        head -c "$1" /dev/zero > "$CACHE/0/0/$(printf '00%029dR' "$2")"
        wait_for "[ \"\$(field size_bytes)\" -gt $cap ] || [ \"\$(field evicted_files_total)\" -gt $3 ]" 5
        wait_for "[ \"\$(field size_bytes)\" -le $cap ]" 10
        echo $(($(ms_now) - start))
}

# Starts the client loops: 4 as nobody, 2 as root, each sending
# `cachectl trim --dry-run ARGS` as fast as it can (the plain build of
# cachectl: the clients' own CPU is not what is being tested).
client_loops() {
        local ctl sock=$BATS_TEST_TMPDIR/ck.sock
        ctl=$(world_copy "$CK_BUILD/cachectl")
        for i in 1 2 3 4; do
                keep_as_nobody 'c=$1 s=$2; shift 2; while :; do "$c" -s "$s" trim --dry-run "$@"; done' "$ctl" "$sock" "$@"
        done
        for i in 1 2; do
                (while :; do "$ctl" -s "$sock" trim --dry-run "$@"; done) > /dev/null 2>&1 3>&- &
                KEEPERS+=($!)
        done
}

stop_client_loops() {
        kill_keepers
        KEEPERS=()
}

# The longest of $1 pushes over the cap (see push_over_cap), numbered from $2.
worst_push() {
        local worst=0 took i
        for i in $(seq "$2" $(($2 + $1 - 1))); do
                took=$(push_over_cap 6000000 "$i" "$(field evicted_files_total)")
                echo "push $i: $took ms" >&2
                [ "$took" -gt "$worst" ] && worst=$took
        done
        echo "$worst"
}

@test "dry runs looped by four users as nobody (and two as root) never hold off the cap trim" {
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 100000
        config 1T
        start_ready 60
        size=$(cache_field t size_bytes)
        config "$(((size + 4000000) / 1000))k" "trim_to = 0.98;"
        kill -HUP "$DAEMON_PID"
        wait_for "[ \"\$(cache_field t max_size_bytes)\" -eq $(((size + 4000000) / 1000 * 1000)) ]" 5
        # The usual time to the cap here: the same clients, the same CPU they
        # take, but asking for a cache that does not exist (refused at once).
        client_loops nosuch
        usual=$(worst_push 3 1)
        stop_client_loops
        # Now real dry runs, for 15 s, with the cache pushed over its cap again
        # and again: the six loops take both cores all along, so every second
        # here costs two of CPU. Before the cap came first, no push was trimmed
        # within 10 s (5e448c9): the first one fails then.
        client_loops
        worst=0 n=0 end=$((SECONDS + 15))
        while [ $SECONDS -lt $end ]; do
                took=$(worst_push 1 $((10 + n)))
                n=$((n + 1))
                [ "$took" -gt "$worst" ] && worst=$took
        done
        stop_client_loops
        echo "usual: $usual ms; under dry runs, the longest of $n: $worst ms"
        grep "cap trim" "$BATS_TEST_TMPDIR/daemon.log"
        [ "$n" -ge 3 ]
        [ "$worst" -le $((2 * usual + 1000)) ]
        # nobody's were refused with a reason, root's were not limited
        ctl_copy=$(world_copy "$CTL")
        run as_nobody "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" trim --dry-run
        kill -0 "$DAEMON_PID"
}

@test "dry runs by one user: one at a time and ten a minute, refused with a reason; root is not limited" {
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 2000
        config 1T
        start_ready 30
        sock=$BATS_TEST_TMPDIR/ck.sock
        ctl_copy=$(world_copy "$CTL")
        # two at once by nobody (both sent while the daemon is frozen): one
        # runs, the other is told why not
        kill -STOP "$DAEMON_PID"
        "${AS_NOBODY[@]}" "$ctl_copy" -s "$sock" trim --dry-run > "$BATS_TEST_TMPDIR/one" 2>&1 3>&- &
        p1=$!
        "${AS_NOBODY[@]}" "$ctl_copy" -s "$sock" trim --dry-run > "$BATS_TEST_TMPDIR/two" 2>&1 3>&- &
        p2=$!
        # both sent and waiting for the answer (cachectl polls its socket)
        wait_for "grep -qE 'poll|unix_stream_read' /proc/$p1/wchan && grep -qE 'poll|unix_stream_read' /proc/$p2/wchan" 5
        kill -CONT "$DAEMON_PID"
        s1=0 s2=0
        wait "$p1" || s1=$?
        wait "$p2" || s2=$?
        cat "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
        [ $((s1 + s2)) -eq 1 ]
        grep -q "t: would evict" "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
        grep -q "a dry run of uid 65534 is still running: one at a time" "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
        # a dry run by a writer nobody has is refused, and counts among the
        # ten (admitted before the writers are looked at); the next is not
        # held off as "still running"
        for i in 2 3; do
                run as_nobody "$ctl_copy" -s "$sock" trim --dry-run --written-by 9.9
                echo "$output"
                [ "$status" -eq 1 ]
                [[ "$output" == *"no entries written by ccache 9.9"* ]]
        done
        # one after the other: ten a minute
        for i in $(seq 4 10); do
                run as_nobody "$ctl_copy" -s "$sock" trim --dry-run
                [ "$status" -eq 0 ]
        done
        run as_nobody "$ctl_copy" -s "$sock" trim --dry-run
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"dry runs are limited to 10 a minute per user: uid 65534 may ask again in "* ]]
        # a dry run by writer is admitted first too: the writers' check
        # (each cache's status built) is never done past the limit
        run as_nobody "$ctl_copy" -s "$sock" trim --dry-run --written-by 9.9
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"dry runs are limited to 10 a minute per user"* ]]
        # another user has limits of his own; root (and admin_group) none
        run as_user 1234 "$ctl_copy" -s "$sock" trim --dry-run
        [ "$status" -eq 0 ]
        for i in $(seq 1 12); do
                run ctl trim --dry-run
                [ "$status" -eq 0 ]
        done
}
