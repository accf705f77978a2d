#!/usr/bin/env bats
# file: remotes (issue 14, item 2), for real: a share on a tmpfs of its own,
# filled by Debian's ccache from two "hosts" (two local cache directories,
# CCACHE_REMOTE_STORAGE=file:SHARE), kept by the daemon: exact figures by
# inotify or by paced rescans, trimmed to its cap least recently used first
# by atime (hits from the other host read entries: relatime moves atime) or
# by mtime (writers with update-mtime=true; plain reads do not count), one
# keeper per share (flock and heartbeat), hostile files left alone.
# tests/run: takes 118 s
load ../lib/helper

setup() {
        setup_compile_cache
        SV=$BATS_TEST_TMPDIR/sv
        SHARE=$SV/share
        HOST_A=$BATS_TEST_TMPDIR/host-a
        HOST_B=$BATS_TEST_TMPDIR/host-b
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        cat > "$BATS_TEST_TMPDIR/alert.sh" <<'EOS'
#!/bin/sh
echo "$CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL ${CACHEKEEPER_REMOTE:-$CACHEKEEPER_CACHE} | $CACHEKEEPER_MESSAGE" >> "$1"
EOS
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
}

teardown() {
        [ -z "${HOLDER:-}" ] || { kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null; } || true
        stop_daemon
        [ -z "${DAEMON2:-}" ] || { kill "$DAEMON2" 2>/dev/null && wait "$DAEMON2" 2>/dev/null; } || true
        umount -l "$SV" 2>/dev/null || true
}

# share_volume [MOUNT-OPTIONS]: a tmpfs for the share (mode 1777, as build
# users share it).
share_volume() {
        mkdir -p "$SV"
        mount -t tmpfs -o "size=64M${1:+,$1}" ckshare "$SV"
        mkdir -m 1777 "$SHARE"
}

# config REMOTE-SETTINGS: cache t, and share s at $SHARE.
config() {
        write_config 1G '' 'alert_min_interval = "0s";' \
                "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" \
                "remotes = ( { name = \"s\"; url = \"file:$SHARE\"; $1 } );"
}

# on HOST N [PREFIX [URL-ATTRIBUTES]]: N compiles on a host (its own local
# cache) storing into and reading from the share.
on() {
        CCACHE_REMOTE_STORAGE="file:$SHARE${4:+|$4}" compile "$1" "$2" "${3:-f}"
}

share_field() {
        status_jq ".remotes[] | select(.name == \"s\") | .$1"
}

wait_share() {
        wait_for "[ \"\$(share_field state 2>/dev/null)\" = ${1:-ok} ]" "${2:-10}"
}

# The share's entries (every file but ccache's CACHEDIR.TAG and our lock).
entries() {
        find "$SHARE" -type f ! -name CACHEDIR.TAG ! -name .cachekeeper.lock | sort
}

# "files bytes" of the share, as du and find count them / as the daemon does.
share_disk() {
        disk_totals "$SHARE"
}
share_daemon() {
        status_jq '.remotes[] | select(.name == "s") | "\(.files) \(.size_bytes)"'
}

@test "a share's figures are exact by inotify while two hosts store into it; the lock names us" {
        share_volume
        config 'max_size = "1G";'
        start_ready
        wait_share
        [ "$(share_field watch)" = inotify ]
        [ "$(share_field kind)" = file ]
        on "$HOST_A" 6 a
        on "$HOST_B" 4 b
        on "$HOST_B" 6 a    # hits: nothing new
        [ "$(entries | wc -l)" -eq 20 ]
        wait_for "[ \"\$(share_daemon)\" = \"\$(share_disk)\" ]"
        [ "$(share_field entry_files)" -eq 20 ]
        [ "$(share_field kinds.entry.files)" -eq 20 ]
        [ "$(share_field kinds.result.files)" -eq 0 ]   # bare keys: no R/M suffix
        grep -Eq "^cachekeeperd $(hostname) $DAEMON_PID [0-9]+$" "$SHARE/.cachekeeper.lock"
        [ "$(stat -c %u "$SHARE/.cachekeeper.lock")" -eq 0 ]
        # Nothing of a local cache's upkeep: no ccache.conf, no stats, no lock/.
        [ ! -e "$SHARE/ccache.conf" ]
        [ ! -e "$SHARE/lock" ]
        [ ! -e "$SHARE/tmp" ]
        [ "$(stat -c %a "$SHARE")" = 1777 ]
        # Files deleted behind its back are gone from the figures too.
        rm -f $(entries | head -4)
        wait_for "[ \"\$(share_daemon)\" = \"\$(share_disk)\" ]"
        [ "$(share_field entry_files)" -eq 16 ]
}

@test "reload keeps a share as it is (no rescan), with its new cap; a share dropped lets go of its lock" {
        share_volume
        on "$HOST_A" 10 a
        config 'max_size = "1G";'
        start_ready
        wait_share
        [ "$(grep -c "Remote s: scanned" "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
        sed -i 's/max_size = "1G"; }/max_size = "40k"; }/' "$BATS_TEST_TMPDIR/ck.conf"
        grep -q 'max_size = "40k"' "$BATS_TEST_TMPDIR/ck.conf"
        ctl reload
        [ "$(share_field max_size_bytes)" -eq 40000 ]
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 1 ] && [ \"\$(share_field state)\" = ok ]" 20
        [ "$(share_field size_bytes)" -le 40000 ]
        [ "$(grep -c "Remote s: scanned" "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]   # not scanned again
        [ "$(share_field scan.rescans)" -eq 0 ]
        wait_for "[ \"\$(share_daemon)\" = \"\$(share_disk)\" ]"
        # Dropped from the config: the lock is free for another keeper.
        write_config 1G ''
        ctl reload
        [ "$(status_jq '.remotes | length')" -eq 0 ]
        flock -n "$SHARE/.cachekeeper.lock" true
}

# setup_lru ATTRS: host A stores 20 objects (40 entries), all aged two days;
# host B then hits the first 5 (10 entries). Leaves HIT (the hit entries).
setup_lru() {
        on "$HOST_A" 20 f "$1"
        [ "$(entries | wc -l)" -eq 40 ]
        find "$SHARE" -type f -exec touch -d '2 days ago' {} +
        entries > "$BATS_TEST_TMPDIR/all"
        # A hit is told from a store by an mtime two seconds or more after the
        # entry's birth: host B's come after those.
        local born=$(date +%s)
        wait_for "[ \$(date +%s) -gt $((born + 2)) ]"
        on "$HOST_B" 5 f "$1"
        [ "$(entries | wc -l)" -eq 40 ]   # hits, nothing stored
}

# cap_for N: a max_size whose trim target (trim_to 0.9) holds N entries of
# the share beside its other files, and not N + 3.
cap_for() {
        local per others
        per=$(stat -c %b "$(entries | head -1)")
        others=$(find "$SHARE" -type f \( -name CACHEDIR.TAG -o -name .cachekeeper.lock \) -printf '%b\n' | awk '{ s += $1 } END { print s + 0 }')
        # the lock file does not exist yet: one block group for it
        echo "$(( ((${1} + 1) * per + others + per) * 512 * 10 / 9 / 1000 + 1 ))k"
}

@test "LRU by atime: a trim keeps the entries the other host hit, and evicts the rest" {
        share_volume relatime
        setup_lru ""
        # The hit entries: read since written (relatime moved their atime).
        find "$SHARE" -type f -neweram "$BATS_TEST_TMPDIR/all" ! -name CACHEDIR.TAG | sort > "$BATS_TEST_TMPDIR/hit"
        [ "$(wc -l < "$BATS_TEST_TMPDIR/hit")" -eq 10 ]
        config "max_size = \"$(cap_for 10)\"; clock = \"atime\";"
        start_ready
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 25 ] && [ \"\$(share_field state)\" = ok ]" 20
        [ "$(share_field clock)" = atime ]
        # Every hit entry stays; what stays beside them is at most two.
        while read -r f; do [ -f "$f" ] || { echo "hit entry $f evicted" >&2; false; }; done < "$BATS_TEST_TMPDIR/hit"
        [ "$(entries | wc -l)" -le 12 ]
        [ "$(share_field size_bytes)" -le "$(share_field max_size_bytes)" ]
        wait_for "[ \"\$(share_daemon)\" = \"\$(share_disk)\" ]"
        [ "$(share_field clock_evidence.read_files)" -ge 10 ]
        [ "$(share_field clock_warning)" = null ]
        # Named, a share is trimmed on demand too (by its clock: the hit ones last).
        ctl trim s --to 30k
        wait_for "[ \"\$(share_field size_bytes)\" -le 30000 ]"
        [ "$(entries | wc -l)" -le 5 ]
        # what stays is hit entries only
        [ "$(entries | grep -cxFf "$BATS_TEST_TMPDIR/hit")" -eq "$(entries | wc -l)" ]
        run ctl trim s --written-by 4.7.5
        [ "$status" -ne 0 ]
        [[ "$output" == *"remote s: --written-by and --namespace need the entries' headers"* ]]
}

@test "LRU by mtime (auto: writers refresh it): reads that are no hits save nothing" {
        share_volume relatime
        setup_lru "update-mtime=true"
        find "$SHARE" -type f -newer "$BATS_TEST_TMPDIR/all" ! -name CACHEDIR.TAG | sort > "$BATS_TEST_TMPDIR/hit"
        [ "$(wc -l < "$BATS_TEST_TMPDIR/hit")" -eq 10 ]
        # A backup reads every other entry: their atimes are now the newest.
        find "$SHARE" -type f ! -newer "$BATS_TEST_TMPDIR/all" -exec cat {} + > /dev/null
        [ "$(find "$SHARE" -type f -neweram "$BATS_TEST_TMPDIR/hit" | wc -l)" -ge 30 ]
        config "max_size = \"$(cap_for 10)\";"
        start_ready
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 25 ] && [ \"\$(share_field state)\" = ok ]" 20
        [ "$(share_field clock_configured)" = auto ]
        [ "$(share_field clock)" = mtime ] || { status_jq ".remotes" >&2; cat "$BATS_TEST_TMPDIR/daemon.log" >&2; stat "$(head -1 "$BATS_TEST_TMPDIR/hit")" >&2; false; }
        [ "$(share_field clock_evidence.touched_files)" -ge 1 ]
        while read -r f; do [ -f "$f" ] || { echo "hit entry $f evicted" >&2; false; }; done < "$BATS_TEST_TMPDIR/hit"
        [ "$(entries | wc -l)" -le 12 ]
        grep -q "refresh mtime on hits" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "neither clock moves (noatime, no update-mtime): status warns, check says so" {
        share_volume noatime
        setup_lru ""
        [ "$(find "$SHARE" -type f -neweram "$BATS_TEST_TMPDIR/all" | wc -l)" -eq 0 ]   # noatime: hits left no trace
        config 'max_size = "1G";'
        start_ready
        wait_share
        wait_for "[ \"\$(share_field clock_evidence.scanned)\" = true ]"
        share_field clock_warning | grep -q "neither clock moves"
        run ctl check
        [ "$status" -eq 1 ]
        [[ "$output" == *"remote s: neither clock moves"* ]]
}

@test "watch = poll: no inotify watch, paced rescans bring other hosts' stores in" {
        share_volume
        on "$HOST_A" 3 a
        config 'max_size = "1G"; watch = "poll"; rescan_interval = "1s";'
        start_ready
        wait_share
        [ "$(share_field watch)" = poll ]
        [ "$(share_field scan.watches)" -eq 0 ]
        [ "$(share_field rescan_interval_seconds)" -eq 1 ]
        [ "$(share_field entry_files)" -eq 6 ]
        on "$HOST_B" 5 b
        wait_for "[ \"\$(share_field entry_files)\" -eq 16 ]" 15
        wait_for "[ \"\$(share_daemon)\" = \"\$(share_disk)\" ]" 15
        [ "$(share_field scan.rescans)" -ge 1 ]
        ctl status | grep -E '^s +ok .*lru:atime \(polled\)'
}

# A second daemon on its own socket and state directory, same share.
start_second() {
        sed -e "s|$BATS_TEST_TMPDIR/ck.sock|$BATS_TEST_TMPDIR/ck2.sock|" \
                -e "s|$BATS_TEST_TMPDIR/state|$BATS_TEST_TMPDIR/state2|" \
                -e "s|path = \"$CACHE\"|path = \"$CACHE-2\"|" "$BATS_TEST_TMPDIR/ck.conf" > "$BATS_TEST_TMPDIR/ck2.conf"
        mkdir -m 1777 "$CACHE-2"
        "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf" 2> "$BATS_TEST_TMPDIR/daemon2.log" &
        DAEMON2=$!
}

# One field of share s as the second daemon reports it (a look of the
# test's own, repeated by wait_for: the plain cachectl, as status_jq).
ctl2_share() {
        "$CTL_LOOK" -s "$BATS_TEST_TMPDIR/ck2.sock" status --json 2>/dev/null | jq -r ".remotes[] | select(.name == \"s\") | .$1"
}

@test "one keeper per share: a second is refused and names the first, then takes over when it stops" {
        share_volume
        on "$HOST_A" 2 a
        config 'max_size = "1G";'
        start_ready
        wait_share
        start_second
        wait_for "[ \"\$(ctl2_share state)\" = unavailable ]"
        [ "$(ctl2_share kept_by.pid)" -eq "$DAEMON_PID" ]
        [ "$(ctl2_share kept_by.host)" = "$(hostname)" ]
        ctl2_share reason | grep -q "kept by cachekeeperd on $(hostname) (pid $DAEMON_PID"
        # Kept elsewhere is no finding for the second host's check.
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck2.sock" check
        [[ "$output" != *"remote s"* ]]
        stop_daemon
        wait_for "[ \"\$(ctl2_share state)\" = ok ]" 10
        grep -Eq "^cachekeeperd $(hostname) $DAEMON2 " "$SHARE/.cachekeeper.lock"
}

@test "a user holding the share lock's flock cannot keep the share unkept (as nobody)" {
        share_volume
        on "$HOST_A" 2 a
        config 'max_size = "1G";'
        start_ready
        wait_share
        [ "$(stat -c %a "$SHARE/.cachekeeper.lock")" = 600 ]
        stop_daemon
        open_test_dir
        # 0600: nobody cannot even open it to hold it
        run "${AS_NOBODY[@]}" flock -n -s "$SHARE/.cachekeeper.lock" true
        [ "$status" -ne 0 ]
        # As an older version left it (0644): nobody opens it and holds its
        # flock; the next keeper replaces it and keeps the share.
        chmod 644 "$SHARE/.cachekeeper.lock"
        hold_lock_as_nobody "$SHARE/.cachekeeper.lock"
        start_ready
        wait_share ok 20
        [ "$(stat -c %a "$SHARE/.cachekeeper.lock")" = 600 ]
        grep -Eq "^cachekeeperd $(hostname) $DAEMON_PID " "$SHARE/.cachekeeper.lock"
        kill "$HOLDER"
}

@test "another host's fresh heartbeat keeps us off (flock not shared); a stale one is taken over" {
        share_volume
        on "$HOST_A" 2 a
        echo "cachekeeperd builder-7 4242 $(date +%s)" > "$SHARE/.cachekeeper.lock"
        config 'max_size = "1G";'
        start_daemon
        wait_share unavailable
        share_field reason | grep -q "kept by cachekeeperd on builder-7 (pid 4242"
        [ "$(share_field kept_by.host)" = builder-7 ]
        grep -q "^cachekeeperd builder-7 4242 " "$SHARE/.cachekeeper.lock"   # left alone
        echo "cachekeeperd builder-7 4242 $(( $(date +%s) - 600 ))" > "$SHARE/.cachekeeper.lock"
        wait_share ok
        grep -Eq "^cachekeeperd $(hostname) $DAEMON_PID " "$SHARE/.cachekeeper.lock"
        grep -q "remote-unavailable\|cache-unavailable .* s |" "$ALERTS"
}

@test "hostile share (as nobody): a planted lock symlink is not followed; only entries are evicted" {
        share_volume
        open_test_dir
        echo precious > "$BATS_TEST_TMPDIR/victim"
        chmod 644 "$BATS_TEST_TMPDIR/victim"
        mkdir -m 755 "$BATS_TEST_TMPDIR/outside"
        echo keep > "$BATS_TEST_TMPDIR/outside/x"
        as_nobody ln -s "$BATS_TEST_TMPDIR/victim" "$SHARE/.cachekeeper.lock"
        on "$HOST_A" 10 f "layout=flat"
        [ "$(find "$SHARE" -maxdepth 1 -type f ! -name CACHEDIR.TAG | wc -l)" -eq 20 ]
        find "$SHARE" -type f -exec touch -d '2 days ago' {} +
        # Planted, older still: names that are no bare key, a suffixed key,
        # a FIFO, a symlink named like a key, a file in a directory of its own.
        key=$(find "$SHARE" -maxdepth 1 -type f ! -name CACHEDIR.TAG -printf '%f\n' | head -1)
        as_nobody sh -c "cd '$SHARE' && echo x > stats && echo x > ${key%?}zR && mkfifo ${key%?}y && \
                ln -s '$BATS_TEST_TMPDIR/outside/x' ${key%?}x && mkdir zz && echo x > zz/$key"
        as_nobody touch -h -d '3 days ago' "$SHARE/stats" "$SHARE/${key%?}zR" "$SHARE/zz/$key"
        config "max_size = \"40K\"; layout = \"flat\";"
        start_ready
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 10 ]" 20 || { status_jq . >&2; cat "$BATS_TEST_TMPDIR/daemon.log" >&2; ls -la "$SHARE" >&2; false; }
        wait_share ok 20
        [ "$(cat "$BATS_TEST_TMPDIR/victim")" = precious ]
        [ -f "$SHARE/.cachekeeper.lock" ]
        [ ! -L "$SHARE/.cachekeeper.lock" ]
        grep -q "was not ours" "$BATS_TEST_TMPDIR/daemon.log"
        [ -f "$SHARE/stats" ]
        [ -f "$SHARE/${key%?}zR" ]
        [ -p "$SHARE/${key%?}y" ]
        [ -L "$SHARE/${key%?}x" ]
        [ "$(cat "$BATS_TEST_TMPDIR/outside/x")" = keep ]
        [ -f "$SHARE/zz/$key" ]
        [ "$(share_field size_bytes)" -le $((40 * 1024)) ]
}

# python3 -c "$EXCHANGE" A B: swaps the names A and B in one step.
EXCHANGE='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))'

# quarantined SLOT: the quarantine's slot SLOT.
quarantined() {
        echo "$SHARE/.cachekeeper.quarantine/$1"
}

@test "jam (as nobody): a full directory planted at the lock before the first keeper goes aside intact; the share is kept" {
        share_volume
        chmod 0777 "$SHARE"    # as a share may be found: no sticky bit
        open_test_dir
        on "$HOST_A" 10 a
        find "$SHARE" -type f -exec touch -d '2 days ago' {} +
        # A directory with files in it where the lock belongs, and the
        # quarantine's name taken in advance too.
        as_nobody sh -c "cd '$SHARE' && mkdir .cachekeeper.lock .cachekeeper.lock/sub .cachekeeper.quarantine && \
                echo precious > .cachekeeper.lock/file && echo deep > .cachekeeper.lock/sub/x && \
                echo squat > .cachekeeper.quarantine/0"
        config 'max_size = "40K";'
        start_ready
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 5 ] && [ \"\$(share_field state)\" = ok ]" 20 || { status_jq .remotes >&2; cat "$BATS_TEST_TMPDIR/daemon.log" >&2; false; }
        [ "$(share_field size_bytes)" -le "$(share_field max_size_bytes)" ]
        grep -Eq "^cachekeeperd $(hostname) $DAEMON_PID [0-9]+$" "$SHARE/.cachekeeper.lock"
        # The quarantine is the keeper's (no user can put anything in it);
        # the squatter went in first, then the planted directory, as they were.
        [ "$(stat -c '%u %a' "$SHARE/.cachekeeper.quarantine")" = "0 700" ]
        [ "$(cat "$(quarantined 0)/0")" = squat ]
        [ "$(cat "$(quarantined 1)/file")" = precious ]
        [ "$(cat "$(quarantined 1)/sub/x")" = deep ]
        [ "$(stat -c %u "$(quarantined 1)")" -eq 65534 ]
        [ "$(find "$SHARE" -maxdepth 1 -name '.cachekeeper.quarantine*' | wc -l)" -eq 1 ]
        grep -q "'.cachekeeper.lock' in $SHARE was not ours (a directory, mode 0755, owner uid 65534): moved aside, as it was, to $(quarantined 1)" "$BATS_TEST_TMPDIR/daemon.log"
        # The root's mode is a cache root's (mode, 1777 by default): no
        # other user may now replace the keeper's lock.
        [ "$(stat -c %a "$SHARE")" = 1777 ]
        run as_nobody mv "$SHARE/.cachekeeper.lock" "$SHARE/gone"
        [ "$status" -ne 0 ]
        # Another mode configured: the reload puts it on at once.
        sed -i 's/max_size = "40K"; }/max_size = "40K"; mode = "1775"; }/' "$BATS_TEST_TMPDIR/ck.conf"
        ctl reload
        wait_for "[ \"\$(stat -c %a '$SHARE')\" = 1775 ]"
}

@test "jam (as nobody): a full directory swapped in for the lock while the share is kept goes aside; bounded, and kept" {
        share_volume
        on "$HOST_A" 10 a
        find "$SHARE" -type f -exec touch -d '2 days ago' {} +
        # The share's root belongs to a build user (ccache made it): the
        # sticky bit does not keep its owner from renaming the lock.
        chown 65534 "$SHARE"
        chmod 0777 "$SHARE"
        open_test_dir
        config 'max_size = "1G";'
        start_ready
        wait_share
        # Swapped (in one step: renameat2(RENAME_EXCHANGE)), nine times
        # over: the quarantine takes eight, then says it is full.
        for i in 1 2 3 4 5 6 7 8 9; do
                as_nobody sh -c "cd '$SHARE' && mkdir j$i && echo precious$i > j$i/file"
                as_nobody /usr/bin/python3 -c "$EXCHANGE" "$SHARE/j$i" "$SHARE/.cachekeeper.lock"
                as_nobody mv "$SHARE/j$i" "$SHARE/stolen$i"
                [ $i -eq 9 ] && break
                wait_for "[ -f \"$(quarantined $((i - 1)))/file\" ] && [ -f '$SHARE/.cachekeeper.lock' ]" 20 || { cat "$BATS_TEST_TMPDIR/daemon.log" >&2; ls -la "$SHARE" >&2; false; }
                [ "$(cat "$(quarantined $((i - 1)))/file")" = "precious$i" ]
        done
        wait_share unavailable 20
        share_field reason | grep -q "quarantine $SHARE/.cachekeeper.quarantine is full (8 slots)"
        [ -d "$SHARE/.cachekeeper.lock" ]
        [ "$(ls "$SHARE/.cachekeeper.quarantine" | wc -l)" -eq 8 ]
        [ "$(find "$SHARE" -maxdepth 1 -name '.cachekeeper.quarantine*' | wc -l)" -eq 1 ]
        # The admin empties it: kept again, and trimmed to a new cap.
        rm -rf "$SHARE/.cachekeeper.quarantine"
        wait_share ok 20
        [ "$(cat "$(quarantined 0)/file")" = precious9 ]
        # (the users' nine stolen locks and the quarantine hold 12 blocks)
        sed -i 's/max_size = "1G"; }/max_size = "100K"; }/' "$BATS_TEST_TMPDIR/ck.conf"
        ctl reload
        wait_for "[ \"\$(share_field evicted_files_total)\" -ge 5 ] && [ \"\$(share_field state)\" = ok ]" 20
        [ "$(share_field size_bytes)" -le "$(share_field max_size_bytes)" ]
        for i in 1 2 3 4 5 6 7 8 9; do [ -f "$SHARE/stolen$i" ]; done   # the user's own renames, left alone
        [ "$(stat -c %a "$SHARE")" = 1777 ]   # the root's mode, kept
}

# rescans_after N: waits for two more full rescans than N (the second
# started after whatever the test did).
rescans_after() {
        wait_for "[ \"\$(share_field scan.rescans)\" -ge $(($1 + 2)) ]" 20
}

@test "clock auto: a restart and one touch keep the share's clock; many touched entries switch it, and it switches back" {
        share_volume relatime
        open_test_dir
        on "$HOST_A" 20 f
        [ "$(entries | wc -l)" -eq 40 ]
        find "$SHARE" -type f -exec chmod 666 {} +    # writers with umask 000
        find "$SHARE" -type f -exec touch -d '2 days ago' {} +
        config 'max_size = "1G"; rescan_interval = "1s";'
        start_ready
        wait_share
        [ "$(share_field clock)" = atime ]
        # The keeper's own lock, rewritten and read at each take and beat,
        # is no touched entry: a restart keeps the clock.
        born=$(date +%s)
        wait_for "[ \$(date +%s) -gt $((born + 2)) ]"
        stop_daemon
        start_ready
        wait_share
        [ "$(share_field clock)" = atime ] || { status_jq .remotes >&2; cat "$BATS_TEST_TMPDIR/daemon.log" >&2; false; }
        rescans_after 0
        [ "$(share_field clock)" = atime ]
        [ "$(share_field clock_evidence.touched_files)" -eq 0 ]
        [ "$(share_field clock_evidence.entry_files)" -eq 40 ]
        ctl status | grep -E '^s +ok .*lru:atime'
        # One touch by a user: one entry's evidence, no switch.
        as_nobody touch "$(entries | head -1)"
        rescans_after "$(share_field scan.rescans)"
        [ "$(share_field clock_evidence.touched_files)" -eq 1 ]
        [ "$(share_field clock)" = atime ]
        # Many (10 of 40: 8 and 1 % are needed): by mtime.
        entries | head -10 > "$BATS_TEST_TMPDIR/touched"
        xargs -a "$BATS_TEST_TMPDIR/touched" "${AS_NOBODY[@]}" touch
        wait_for "[ \"\$(share_field clock)\" = mtime ]" 20
        [ "$(share_field clock_evidence.touched_files)" -eq 10 ]
        grep -q "Remote s: 10 of its 40 entries were touched after they were written" "$BATS_TEST_TMPDIR/daemon.log"
        # The evidence goes (those entries' times set back: mtime is no
        # longer the change time): back to atime, logged.
        xargs -a "$BATS_TEST_TMPDIR/touched" touch -d '1 day ago'
        wait_for "[ \"\$(share_field clock)\" = atime ]" 20
        [ "$(share_field clock_evidence.touched_files)" -eq 0 ]
        grep -q "Remote s: only 0 of its 40 entries show a touch now .*: least recently used is by atime again" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "remote-level: a share over its cap that cannot be trimmed is critical, then ok" {
        share_volume
        open_test_dir
        on "$HOST_A" 2 a
        as_nobody dd if=/dev/zero of="$SHARE/big.iso" bs=1M count=2 status=none
        config 'max_size = "1M";'
        start_ready
        wait_for "grep -q '^remote-level critical s |' '$ALERTS'" 20
        [ "$(share_field level)" = critical ]
        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == *"remote s over its cap and cannot be trimmed"* ]]
        rm "$SHARE/big.iso"
        wait_for "grep -q '^remote-level ok s |' '$ALERTS'" 10
        [ "$(share_field level)" = ok ]
}

@test "config: a file: remote needs max_size, knows its clock and watch, never overlaps a cache" {
        printf 'caches = ( { name = "t"; path = "/tmp/ck-c"; max_size = "1G"; } );\nremotes = (\n  { name = "s"; url = "file:/srv/s"; }\n);\n' > "$BATS_TEST_TMPDIR/a.conf"
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/a.conf"
        [ "$status" -ne 0 ]
        [[ "$output" == *"a.conf:3: remote s: a file: remote needs max_size"* ]]
        printf 'caches = ( { name = "t"; path = "/tmp/ck-c"; max_size = "1G"; } );\nremotes = (\n  { name = "s"; url = "file:/srv/s"; max_size = "1G";\n    clock = "ctime"; }\n);\n' > "$BATS_TEST_TMPDIR/b.conf"
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/b.conf"
        [[ "$output" == *"b.conf:4: 'clock' must be one of \"mtime\", \"atime\", \"auto\", not \"ctime\""* ]]
        printf 'caches = ( { name = "t"; path = "/srv/s/c"; max_size = "1G"; } );\nremotes = (\n  { name = "s"; url = "file:/srv/s"; max_size = "1G"; }\n);\n' > "$BATS_TEST_TMPDIR/c.conf"
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/c.conf"
        [[ "$output" == *"c.conf:3: remote s (/srv/s) and cache 't' (/srv/s/c) overlap"* ]]
        printf 'caches = ( { name = "t"; path = "/tmp/ck-c"; max_size = "1G"; } );\nremotes = (\n  { name = "r"; url = "redis://127.0.0.1:6379"; clock = "atime"; }\n);\n' > "$BATS_TEST_TMPDIR/d.conf"
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/d.conf"
        [[ "$output" == *"d.conf:3: 'clock' is for file: remotes only"* ]]
        printf 'caches = ( { name = "t"; path = "/tmp/ck-c"; max_size = "1G"; } );\nremotes = (\n  { name = "s"; url = "file:/srv/s"; max_size = "500G"; watch = "poll"; rescan_interval = "15m"; }\n);\n' > "$BATS_TEST_TMPDIR/e.conf"
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/e.conf"
        [ "$status" -eq 0 ]
        [[ "$output" == *'watch = "poll";'* ]]
        [[ "$output" == *'clock = "auto";'* ]]
        [[ "$output" == *'rescan_interval = "15m";'* ]]   # as written
}
