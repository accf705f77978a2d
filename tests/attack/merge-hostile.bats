#!/usr/bin/env bats
# cachectl merge FROM --into TO against what a user of the host can put in
# its way: sparse files named like entries in FROM (never copied, counted,
# TO's volume keeps its room, status answers throughout), and TO's level-2
# directory renamed away into the user's own directory while the merge
# writes into it, across filesystems (copies) and within one (renames):
# nothing ends outside TO, no entry is lost.
# tests/run: takes 40 s
load ../lib/helper

setup() {
        require_root
        export CCACHE_MAXSIZE=0
        KEEPERS=()
}

teardown() {
        [ -z "${DAEMON_PID:-}" ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true
        kill_keepers
        stop_daemon
        unmount_all
}

# config CAP_A CAP_B: caches a (FROM) and b (TO), no audit.
config() {
        write_config_caches "{ name = \"a\"; path = \"$FROM\"; max_size = \"$1\"; },
                             { name = \"b\"; path = \"$TO\"; max_size = \"$2\"; }" 'audit_interval = "0s";'
}

# ccache's entries below $1, one path a line.
entries() {
        find "$1" -mindepth 3 -type f -regex '.*/[0-9a-v]+\([RM]\|[0-9]W\)' "${@:2}"
}

# fill_dir DIR N: N entries of 3000 bytes named as ccache names them, in
# one level-2 directory (a group of the merge of its own, long enough to
# be halfway through when something happens to it), mtimes spread.
fill_dir() {
        mkdir -p "$1"
        python3 - "$1" "$2" <<'EOP'
import os, random, sys, time
d, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(32)
now = int(time.time())
for i in range(n):
    # a key of 4 hex and 29 base32hex digits less the two in the path
    name = "".join(rnd.choice("0123456789abcdef") for _ in range(2)) + \
        "".join(rnd.choice("0123456789abcdefghijklmnopqrstuv") for _ in range(29)) + "R"
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(os.urandom(3000))
    os.utime(p, (now - 100000 + i, now - 100000 + i))
EOP
}

# The smallest free space (bytes) of the filesystem of $1, sampled every
# 2 ms until $2 exists; printed at the end.
min_free_until() {
        python3 - "$1" "$2" <<'EOP'
import os, sys, time
low = None
while True:
    s = os.statvfs(sys.argv[1])
    low = s.f_bavail * s.f_frsize if low is None else min(low, s.f_bavail * s.f_frsize)
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.002)
print(low)
EOP
}

@test "sparse files named like entries are never copied: skipped and counted; TO's volume keeps its room; status answers throughout" {
        mount_tmpfs "$BATS_TEST_TMPDIR/va" 512M
        mount_tmpfs "$BATS_TEST_TMPDIR/vb" 2G
        FROM=$BATS_TEST_TMPDIR/va/a
        TO=$BATS_TEST_TMPDIR/vb/b
        mkdir -m 1777 "$FROM" "$TO"
        "$HELPERS/gencache" --quiet --tiny --seed=21 "$FROM" 20000 > /dev/null
        # Names of entries FROM has not got: three for nobody's sparse files
        # (truncate -s 20G: no block), one for a real entry of 96 MiB (copied
        # over several slices).
        "$HELPERS/gencache" --quiet --tiny --seed=99 "$BATS_TEST_TMPDIR/names" 4 > /dev/null
        mapfile -t names < <(cd "$BATS_TEST_TMPDIR/names" && entries . -printf '%P\n' | sort)
        [ "${#names[@]}" -eq 4 ]
        open_test_dir
        chmod 0755 "$BATS_TEST_TMPDIR/va"
        for n in "${names[@]:0:3}"; do
                chmod 0777 "$FROM/${n%/*}"
                as_nobody truncate -s 20G "$FROM/$n"
        done
        head -c 96M /dev/urandom > "$FROM/${names[3]}"
        big_sum=$(md5sum < "$FROM/${names[3]}")
        real=$(entries "$FROM" -size -1000M -printf '%b\n' | awk '{ s += $1 * 512 } END { print s }')
        config 1G 1G
        start_ready 60
        # The dry run counts what will be written: blocks, the sparse files none.
        run ctl merge a --into b --dry-run
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" != *"G"*"to copy"* ]]
        free_before=$(stat -f -c '%a * %S' "$TO" | bc)
        min_free_until "$TO" "$BATS_TEST_TMPDIR/done" > "$BATS_TEST_TMPDIR/min_free" &
        KEEPERS+=($!)
        # status asked every 20 ms from before the merge to its end
        python3 "$TOP/tests/helpers/status-latency.py" --while merge --ready "$BATS_TEST_TMPDIR/lat.ready" \
                "$BATS_TEST_TMPDIR/ck.sock" 100000 0.02 > "$BATS_TEST_TMPDIR/lat.out" 2>&1 &
        LAT=$!
        KEEPERS+=($LAT)
        wait_for "[ -e $BATS_TEST_TMPDIR/lat.ready ]" 20
        run ctl -t 120s merge a --into b
        touch "$BATS_TEST_TMPDIR/done"
        echo "$output"
        wait "$LAT"
        wait "${KEEPERS[0]}"
        read -r worst p95 median < "$BATS_TEST_TMPDIR/lat.out"
        low=$(cat "$BATS_TEST_TMPDIR/min_free")
        echo "status during the merge: worst ${worst} ms, p95 ${p95} ms, median ${median} ms (WatchdogSec=30s)"
        echo "TO's volume: $free_before free before, $low at the lowest; the real entries: $real"
        # Skipped and counted, never copied; nothing else left in FROM.
        [ "$status" -eq 1 ]
        [[ "$output" == *"3 names in $FROM were never copied: sparse files ("*" apparent size"* ]]
        [[ "$output" != *"errors"* ]]
        for n in "${names[@]:0:3}"; do
                [ "$(stat -c '%s %b %U' "$FROM/$n")" = "21474836480 0 nobody" ]
                [ ! -e "$TO/$n" ]
        done
        [ "$(entries "$FROM" | wc -l)" -eq 3 ]
        [ "$(entries "$TO" | wc -l)" -eq 20001 ]
        [ "$(md5sum < "$TO/${names[3]}")" = "$big_sum" ]
        [ -z "$(find "$TO" -name '*.tmp.*')" ]
        # TO's volume gave no more than the real entries (and a little for
        # ccache's stats files and directories).
        [ $((free_before - low)) -le $((real + 8 * 1024 * 1024)) ]
        # status answered within its usual latency throughout, a merge slice
        # or two: far below the watchdog's 30 s.
        [ "${worst%.*}" -lt 1000 ]
        grep -q "3 names in $FROM are sparse files" "$BATS_TEST_TMPDIR/daemon.log"
}

# stolen_dir_case SAME_FS: TO's level-2 directory 0/0 (its parents 0777, not
# sticky, as in a cache shared by its users) is renamed by nobody into a
# directory of nobody's own on TO's volume the moment the merge first puts
# an entry in it (the daemon held stopped meanwhile by stop-on-event):
# whatever the merge put there is taken back, nothing stays outside TO,
# FROM and TO together hold every entry; the same command again finishes.
stolen_dir_case() {
        if [ "$1" = same ]; then
                mount_tmpfs "$BATS_TEST_TMPDIR/v" 512M
                FROM=$BATS_TEST_TMPDIR/v/a
                TO=$BATS_TEST_TMPDIR/v/b
                VB=$BATS_TEST_TMPDIR/v
        else
                mount_tmpfs "$BATS_TEST_TMPDIR/va" 256M
                mount_tmpfs "$BATS_TEST_TMPDIR/vb" 256M
                FROM=$BATS_TEST_TMPDIR/va/a
                TO=$BATS_TEST_TMPDIR/vb/b
                VB=$BATS_TEST_TMPDIR/vb
        fi
        mkdir -m 1777 "$FROM" "$TO"
        fill_dir "$FROM/0/0" 3000
        "$HELPERS/gencache" --quiet --tiny --seed=23 "$FROM" 2000 > /dev/null
        mkdir -p "$TO/0/0"
        chmod 0777 "$TO/0" "$TO/0/0"
        open_test_dir
        chmod 0755 "$VB"
        ATT=$VB/nobody
        mkdir "$ATT"
        chown 65534:65534 "$ATT"
        total=$(entries "$FROM" | wc -l)
        config 1G 1G
        start_ready 60
        # ready: TO's account has 0/0 (no directory to wait for)
        "$HELPERS/stop-on-event" "$TO/0/0" "$DAEMON_PID" 60 > "$BATS_TEST_TMPDIR/stop.out" &
        STOPPER=$!
        KEEPERS+=($STOPPER)
        wait_for "grep -q READY $BATS_TEST_TMPDIR/stop.out"
        ctl -t 120s merge a --into b > "$BATS_TEST_TMPDIR/merge1.out" 2>&1 &
        MERGE=$!
        wait "$STOPPER"
        cat "$BATS_TEST_TMPDIR/stop.out"
        [ "$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat")" = T ]
        # What TO's 0/0 holds as it is taken: entries a slice committed
        # before the stop landed (a loaded box delivers it late) are TO's,
        # and a user who may rename TO's directories takes those with it;
        # what the merge still writes through its fd must not stay there.
        find "$TO/0/0" -type f -printf '%f\n' | grep -E '^[0-9a-v]+([RM]|[0-9]W)$' | sort > "$BATS_TEST_TMPDIR/held" || true
        as_nobody mv "$TO/0/0" "$ATT/stolen"
        kill -CONT "$DAEMON_PID"
        wait "$MERGE" || true
        cat "$BATS_TEST_TMPDIR/merge1.out"
        find "$ATT" -type f -printf '%f\n' | sort > "$BATS_TEST_TMPDIR/taken"   # every file: no temporary either
        taken=$(wc -l < "$BATS_TEST_TMPDIR/taken")
        echo "TO's 0/0 held $(wc -l < "$BATS_TEST_TMPDIR/held") entries when taken; in nobody's directory: $taken files"
        # Nothing written outside TO after it went: only what it held then;
        # every entry in FROM, TO or (those) nobody's directory.
        echo "after: FROM $(entries "$FROM" | wc -l), TO $(entries "$TO" | wc -l), taken $taken, of $total"
        [ -z "$(comm -13 "$BATS_TEST_TMPDIR/held" "$BATS_TEST_TMPDIR/taken")" ]
        [ $(($(entries "$FROM" | wc -l) + $(entries "$TO" | wc -l) + taken)) -eq "$total" ]
        [ -z "$(find "$TO" "$FROM" -name '*.tmp.*')" ]
        kill -0 "$DAEMON_PID"
        # The same command again (TO's 0/0 made anew) moves what stayed.
        run ctl -t 120s merge a --into b
        echo "$output"
        echo "after again: FROM $(entries "$FROM" | wc -l), TO $(entries "$TO" | wc -l), of $total"
        [ "$status" -eq 0 ]
        [ "$(entries "$FROM" | wc -l)" -eq 0 ]
        [ "$(entries "$TO" | wc -l)" -eq $((total - taken)) ]
        [ "$(find "$ATT" -type f | wc -l)" -eq "$taken" ]
        wait_exact a "$FROM" 20
        wait_exact b "$TO" 20
}

@test "across filesystems: TO's level-2 directory renamed away by nobody mid-merge: nothing written outside TO stays, no entry lost" {
        stolen_dir_case across
}

@test "on one filesystem: TO's level-2 directory renamed away by nobody mid-merge: the renamed entries come back, none lost" {
        stolen_dir_case same
}
