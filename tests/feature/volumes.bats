#!/usr/bin/env bats
# Volumes: levels that a person can trust (one alert per transition, in the
# journal and through alert_command, no flapping), the fill trend, inode
# exhaustion, pressure eviction across caches, cachectl check, and alerts a
# user floods folded by alert_min_interval.
# tests/run: takes 88 s
load ../lib/helper

setup() {
        require_root
        VOL=$BATS_TEST_TMPDIR/vol
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        # The alert command: one line per run, with what the daemon passed.
        write_alert_command "$ALERTS" "$BATS_TEST_TMPDIR/alert.sh"
        start_journald
}

teardown() {
        [ -z "${DAEMON_PID:-}" ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true   # never left frozen
        stop_daemon
        stop_journald
        unmount_all
}

# config CACHES VOLUME-SETTINGS: every alert runs as it comes (these tests
# count transitions; the rate limit has its own test below).
config() {
        write_config_caches "$1" 'audit_interval = "0s";' "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" \
                'alert_min_interval = "0s";' "volumes = { check_interval = \"100ms\"; $2 };"
}

# fill_to PERCENT: make the volume's available space that percent of its size.
# The daemon is frozen meanwhile: it sees the new fill, never a step on the
# way (the space between removing the old fill and writing the new, or a
# level crossed halfway through a long write).
fill_to() {
        local rc=0
        kill -STOP "$DAEMON_PID"
        fill_now "$1" || rc=$?
        kill -CONT "$DAEMON_PID"
        return "$rc"
}

fill_now() {
        local total avail want
        total=$(df -B1 --output=size "$VOL" | tail -1)
        avail=$(df -B1 --output=avail "$VOL" | tail -1)
        want=$((total * $1 / 100))
        if [ "$avail" -gt "$want" ]; then
                head -c $((avail - want)) /dev/zero > "$VOL/fill.$RANDOM$RANDOM"
        else
                # give back space: shrink the fill files
                rm -f "$VOL"/fill.*
                avail=$(df -B1 --output=avail "$VOL" | tail -1)
                head -c $((avail - want)) /dev/zero > "$VOL/fill.$RANDOM$RANDOM"
        fi
        sync
}

alerts() {
        # grep -c prints 0 (and fails) when nothing matches
        if [ -e "$ALERTS" ]; then grep -c "^$1 " "$ALERTS" || true; else echo 0; fi
}

@test "each level transition: one alert_command run and one journal record, recovery included" {
        setup_volume 100M
        config "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" \
               'warn_free = "20%"; crit_free = "10%"; hysteresis = "2%";'
        start_ready
        run ctl check
        [ "$status" -eq 0 ]
        [[ "$output" == "CACHEKEEPER OK - t "* ]]
        fill_to 15
        wait_for "[ \$(alerts volume-level) -eq 1 ]" 5
        run ctl check
        [ "$status" -eq 1 ]
        [[ "$output" == "CACHEKEEPER WARNING - volume $VOL warning: 1"*"% free"* ]]
        fill_to 5
        wait_for "[ \$(alerts volume-level) -eq 2 ]" 5
        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == "CACHEKEEPER CRITICAL - volume $VOL critical"* ]]
        [ "$(volume_field "$VOL" alert)" = critical ]
        fill_to 60
        wait_for "[ \$(alerts volume-level) -eq 3 ]" 5
        sleep 0.5                                            # nothing more comes
        [ "$(alerts volume-level)" -eq 3 ]
        [ "$(grep '^volume-level' "$ALERTS" | cut -d' ' -f2,3 | tr '\n' ' ')" = "warning $VOL critical $VOL ok $VOL " ]
        # 100M of tmpfs is 104857600 bytes: 20 % of it is 21.0M
        grep -q "^volume-level warning $VOL [0-9]* | Volume $VOL is warning: .* of 104.9M available (15.0%, warning below 21.0M)" "$ALERTS"

        # the journal received each one, with its fields and priority
        wait_for "[ \$(journal CACHEKEEPER_EVENT=volume-level | wc -l) -eq 3 ]" 5
        journal CACHEKEEPER_EVENT=volume-level | jq -e -s --arg m "$VOL" '
                map(.CACHEKEEPER_LEVEL) == ["warning", "critical", "ok"] and
                map(.PRIORITY) == ["4", "2", "5"] and
                all(.MESSAGE_ID == "5f0a32c5b0e94166ac1014bc7f38b801" and .CACHEKEEPER_MOUNT == $m and
                    (.CACHEKEEPER_AVAIL_BYTES | tonumber) > 0 and (.CACHEKEEPER_TOTAL_BYTES | tonumber) >= 100000000)'
        stop_daemon
        run --separate-stderr ctl check
        [ "$status" -eq 3 ]
        [[ "$output" == "CACHEKEEPER UNKNOWN - "*"cannot be reached"* ]]
}

@test "an escalation is never folded: warning, then critical 5 s later, each run within 2 s of its crossing (alert_min_interval 1m)" {
        setup_volume 100M
        # the default alert_min_interval (1m): no alert_min_interval line
        cat > "$BATS_TEST_TMPDIR/alert-at.sh" <<'EOS'
#!/bin/sh
echo "$(date +%s.%N) $CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL" >> "$1"
EOS
        chmod +x "$BATS_TEST_TMPDIR/alert-at.sh"
        write_config_caches "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" 'audit_interval = "0s";' \
                "alert_command = [ \"$BATS_TEST_TMPDIR/alert-at.sh\", \"$ALERTS\" ];" \
                'volumes = { check_interval = "100ms"; warn_free = "20%"; crit_free = "10%"; hysteresis = "2%"; };'
        start_ready
        warned=$(date +%s.%N)
        fill_to 15
        wait_for "grep -q ' volume-level warning' '$ALERTS'" 5
        sleep 5                                              # the scenario: 5 s apart, within the minute
        crit=$(date +%s.%N)
        fill_to 5
        wait_for "grep -q ' volume-level critical' '$ALERTS'" 5
        cat "$ALERTS"
        read -r at_warn _ < <(grep ' volume-level warning' "$ALERTS")
        read -r at_crit _ < <(grep ' volume-level critical' "$ALERTS")
        echo "warning ran $(jq -n "$at_warn - $warned") s after its crossing, critical $(jq -n "$at_crit - $crit") s"
        jq -en "$at_warn - $warned <= 2 and $at_crit - $crit <= 2"
        # The critical run went out on its own, not folded with anything.
        [ "$(grep -c . "$ALERTS")" -eq 2 ]
}

@test "on a loop-mounted ext4 (f_bavail below f_bfree): the levels follow available space" {
        truncate -s 128M "$BATS_TEST_TMPDIR/ext4.img"
        mkfs.ext4 -q -F -m 5 -b 4096 "$BATS_TEST_TMPDIR/ext4.img"
        mkdir -p "$VOL"
        mount -o loop "$BATS_TEST_TMPDIR/ext4.img" "$VOL"
        config "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" \
               'warn_free = "20%"; crit_free = "10%"; hysteresis = "2%";'
        start_ready
        # what unprivileged users may write, not what root could (5 % reserved)
        [ "$(status_jq '.volumes[0] | .avail_bytes < .free_bytes')" = true ]
        [ "$(volume_field "$VOL" avail_bytes)" -eq "$(df -B1 --output=avail "$VOL" | tail -1)" ]
        fill_to 15
        wait_for "[ \$(alerts volume-level) -eq 1 ]" 5
        fill_to 50
        wait_for "[ \$(alerts volume-level) -eq 2 ]" 5
        [ "$(grep '^volume-level' "$ALERTS" | cut -d' ' -f2 | tr '\n' ' ')" = "warning ok " ]
        compile "$VOL/cache" 3
        wait_exact t "$VOL/cache"
}

@test "a volume hovering ±1 % around a threshold ten times changes level at most once each way" {
        setup_volume 100M
        config "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" \
               'warn_free = "30%"; crit_free = "10%"; hysteresis = "3%";'
        start_ready
        fill_to 31
        for i in 1 2 3 4 5 6 7 8 9 10; do
                head -c 2000000 /dev/zero > "$VOL/wobble"          # 29 % free
                sleep 0.3
                rm -f "$VOL/wobble"                                 # 31 % free
                sleep 0.3
        done
        # down once (29 % is below 30 %), never back up (31 % is not 3 % above)
        [ "$(alerts volume-level)" -eq 1 ]
        [ "$(alerts 'volume-level warning')" -eq 1 ]
        [ "$(journal CACHEKEEPER_EVENT=volume-level | wc -l)" -eq 1 ]
}

@test "inode exhaustion is detected and said to be about inodes" {
        mkdir -p "$VOL"
        mount -t tmpfs -o size=64M,nr_inodes=1000 ckinodes "$VOL"
        config "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" \
               'warn_free_inodes = "20%"; crit_free_inodes = "10%";'
        start_ready
        # bytes are plentiful: only inodes run out
        mkdir "$VOL/many" && (cd "$VOL/many" && seq 1 950 | xargs touch 2>/dev/null || true)
        wait_for "grep -q '^volume-level critical' '$ALERTS'" 5
        grep -q "inodes free" "$ALERTS"
        [ "$(status_jq '.volumes[0] | "\(.inodes_level) \(.bytes_level)"')" = "critical ok" ]
        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == *"of inodes free"* ]]
}

@test "the fill trend: an alert when full within full_within, and its recovery" {
        setup_volume 200M
        config "{ name = \"t\"; path = \"$VOL/cache\"; max_size = \"1G\"; }" 'full_within = "60s";'
        start_ready
        [ "$(volume_field "$VOL" full_in_seconds)" = null ]
        # 4 MB every quarter second (8 to 16 MB/s, as busy as the machine
        # is: full in 12 to 25 s), on until the trend is asserted, so that it
        # cannot end meanwhile however slow the assertions are; at most
        # 150 MB, never the volume's levels.
        touch "$BATS_TEST_TMPDIR/growing"
        (for i in $(seq 1 37); do
                [ -e "$BATS_TEST_TMPDIR/growing" ] || break
                head -c 4000000 /dev/zero > "$VOL/grow$i"
                sleep 0.25
        done) &
        writer=$!
        wait_for "grep -q '^volume-trend warning' '$ALERTS'" 30
        full=$(volume_field "$VOL" full_in_seconds)
        [ "$full" -gt 0 ]
        [ "$full" -lt 60 ]
        run ctl status
        [[ "$output" == *"full in ~"* ]]
        run ctl check
        [ "$status" -eq 1 ]
        [[ "$output" == *"full in ~"* ]]
        rm "$BATS_TEST_TMPDIR/growing"
        wait "$writer"
        # it stops growing: once the window (full_within / 4) has passed, recovery
        wait_for "grep -q '^volume-trend ok' '$ALERTS'" 60
        [ "$(grep -c '^volume-trend' "$ALERTS")" -eq 2 ]
        wait_for "[ \"\$(volume_field '$VOL' full_in_seconds)\" = null ]" 20
}

@test "pressure eviction restores min_free, oldest first across two caches on the volume" {
        setup_volume 100M
        config "{ name = \"a\"; path = \"$VOL/a\"; max_size = \"1G\"; ccache_conf = false; },
                { name = \"b\"; path = \"$VOL/b\"; max_size = \"1G\"; ccache_conf = false; }" \
               'min_free = "40%"; hysteresis = "5%"; warn_free = "10%"; crit_free = "5%";'
        mkdir -p "$VOL/a" "$VOL/b"
        # 2 x 60 entries of 200 KB; ages interleaved between the caches
        for i in $(seq 1 120); do
                c=$([ $((i % 2)) -eq 0 ] && echo a || echo b)
                l12=$(printf '%02x' $((i % 256)))
                f="$VOL/$c/${l12:0:1}/${l12:1:1}/$(printf '%031d' "$i" | tr '0-9' 'a-j')R"
                mkdir -p "$(dirname "$f")"
                head -c 200000 /dev/urandom > "$f"
                touch -m -d "-$((121 - i)) hours" "$f"
                echo "$(stat -c %Y "$f") $f" >> "$BATS_TEST_TMPDIR/entries"
        done
        start_ready
        [ "$(status_jq '.volumes | length')" -eq 1 ]
        fill_to 35                                               # 35 % free: 10 MB short of 40 % + 5 %
        wait_for "[ \"\$(volume_field '$VOL' pressure)\" = false ] && [ \"\$(cache_field a evicted_files_total)\" -gt 0 ]" 10
        avail=$(df -B1 --output=avail "$VOL" | tail -1); total=$(df -B1 --output=size "$VOL" | tail -1)
        [ $((avail * 100)) -ge $((total * 40)) ]
        # exactly the oldest went, across both caches
        sort -n "$BATS_TEST_TMPDIR/entries" > "$BATS_TEST_TMPDIR/by-age"
        gone=$(while read -r t f; do [ -e "$f" ] || echo "$t"; done < "$BATS_TEST_TMPDIR/by-age" | wc -l)
        [ "$gone" -gt 0 ]
        [ "$gone" -eq $(( $(cache_field a evicted_files_total) + $(cache_field b evicted_files_total) )) ]
        # (a loop's status is only its last test's: fail it on the first wrong one)
        head -n "$gone" "$BATS_TEST_TMPDIR/by-age" | while read -r t f; do [ ! -e "$f" ] || exit 1; done
        tail -n +"$((gone + 1))" "$BATS_TEST_TMPDIR/by-age" | while read -r t f; do [ -e "$f" ] || exit 1; done
        [ "$(cache_field a evicted_files_total)" -gt 0 ]
        [ "$(cache_field b evicted_files_total)" -gt 0 ]
        grep -q '^volume-pressure warning .*evicting' "$ALERTS"
        wait_for "grep -q '^volume-pressure ok' '$ALERTS'" 5
        # the recovery names what is available (>= 40 % of 100M) and what went (< 40M)
        read -r avail_m evicted_m < <(sed -n 's/^volume-pressure ok .*(\([0-9.]*\)M available) after evicting \([0-9.]*\)M\.$/\1 \2/p' "$ALERTS")
        awk -v a="$avail_m" -v e="$evicted_m" 'BEGIN { exit !(a >= 40 && e > 0 && e < 40) }'
        [ "$(journal CACHEKEEPER_EVENT=volume-pressure | jq -s length)" -ge 2 ]
}

@test "low space the caches cannot fix is said so, and nothing is evicted" {
        setup_volume 100M
        config "{ name = \"a\"; path = \"$VOL/a\"; max_size = \"1G\"; }" 'min_free = "40%";'
        start_ready
        compile "$VOL/a" 3
        wait_exact a "$VOL/a"
        fill_to 20
        wait_for "grep -q 'caches are already empty' '$ALERTS' || grep -q 'evicting' '$ALERTS'" 5
        # three compiles' entries cannot free 20 MB: what there is goes, and it is said
        wait_for "grep -q 'caches are already empty' '$ALERTS'" 10
        run ctl check
        [ "$status" -eq 1 ]
        [[ "$output" == *"below min_free with its caches empty"* ]]
        [ "$(grep -c 'caches are already empty' "$ALERTS")" -eq 1 ]   # said once, not every check
}

@test "cache events: unavailable and available again, through the same alert path" {
        MNT=$BATS_TEST_TMPDIR/mnt
        mkdir -p "$MNT"
        config "{ name = \"late\"; path = \"$MNT/cache\"; max_size = \"1G\"; require_mount = \"$MNT\"; }" ''
        start_ready
        wait_for "grep -q '^cache-unavailable' '$ALERTS'" 5
        [ "$(status_jq '.volumes | length')" -eq 0 ]   # not the parent filesystem's figures
        mount_tmpfs "$MNT" 16M
        wait_for "grep -q '^cache-available' '$ALERTS'" 5
        [ "$(status_jq '.volumes[0].mount')" = "$MNT" ]
        wait_for "[ \$(journal CACHEKEEPER_EVENT=cache-available | wc -l) -eq 1 ]" 5
        journal CACHEKEEPER_EVENT=cache-unavailable | jq -e '.CACHEKEEPER_CACHE == "late" and .MESSAGE_ID == "9a397b0029db4f4c933d493bff41ed11"'
}

@test "alert_command: one at a time per volume, killed after alert_timeout, failures logged, never fatal" {
        setup_volume 100M
        # slow: records start and end; the first run hangs until killed. Each
        # run holds a lock while it lives (its sleep too): a run that finds it
        # taken overlaps another, and says so.
        cat > "$BATS_TEST_TMPDIR/slow.sh" <<'EOS'
#!/bin/sh
exec 9>> "$1.lock"
flock -n 9 || echo "overlap $CACHEKEEPER_LEVEL" >> "$1"
echo "start $CACHEKEEPER_LEVEL" >> "$1"
[ "$CACHEKEEPER_LEVEL" = warning ] && sleep 1000.123
echo "end $CACHEKEEPER_LEVEL" >> "$1"
[ "$CACHEKEEPER_LEVEL" = ok ] && exit 3
exit 0
EOS
        chmod +x "$BATS_TEST_TMPDIR/slow.sh"
        write_config 1G "" "alert_command = [ \"$BATS_TEST_TMPDIR/slow.sh\", \"$ALERTS\" ];" 'alert_timeout = "1500ms";' \
                'alert_min_interval = "0s";' \
                'volumes = { check_interval = "100ms"; warn_free = "20%"; crit_free = "10%"; hysteresis = "2%"; };'
        start_ready
        fill_to 15                                   # warning: the run that hangs
        wait_for "grep -q '^start warning' '$ALERTS'" 30
        fill_to 5                                    # critical: must wait for it
        # The daemon has seen the critical level; its run must not start
        # before the hanging one is killed (no "overlap" line, below).
        wait_for "[ \"\$(status_jq '.volumes[0].bytes_level')\" = critical ]" 30
        wait_for "grep -q 'took too long and was killed' '$BATS_TEST_TMPDIR/daemon.log'" 30
        run pgrep -f 'sleep 1000.123'                # what it started was killed with it
        [ "$status" -eq 1 ]
        wait_for "grep -q '^end critical' '$ALERTS'" 30
        fill_to 60                                   # ok: a run that fails
        wait_for "grep -q 'exited with status 3' '$BATS_TEST_TMPDIR/daemon.log'" 30
        [ "$(cat "$ALERTS" | tr '\n' ' ')" = "start warning start critical end critical start ok end ok " ]
        kill -0 "$DAEMON_PID"
        run ctl check
        [ "$status" -eq 0 ]
}

@test "a volume override applies to its volume only" {
        setup_volume 64M
        OTHER=$BATS_TEST_TMPDIR/other
        mount_tmpfs "$OTHER" 64M
        config "{ name = \"a\"; path = \"$VOL/cache\"; max_size = \"1G\"; },
                { name = \"b\"; path = \"$OTHER/cache\"; max_size = \"1G\"; }" \
               "warn_free = \"10%\"; crit_free = \"5%\"; overrides = ( { mount = \"$VOL\"; warn_free = \"70M\"; crit_free = \"68M\"; } );"
        start_ready
        [ "$(volume_field "$VOL" alert)" = critical ]
        [ "$(volume_field "$OTHER" alert)" = ok ]
        # (64M of tmpfs is 67.1 MB: below both of the override's thresholds)
        [ "$(volume_field "$VOL" warn_free_bytes)" -eq 70000000 ]
        [ "$(volume_field "$OTHER" warn_free_bytes)" -eq $((64 * 1048576 / 10)) ]
}

@test "an alert flood (nobody looping chmod on a level directory): one run per alert_min_interval, the rest folded and counted" {
        setup_volume 64M
        C=$CACHE
        open_test_dir
        write_config 1G "" 'audit_interval = "0s";' "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" \
                'alert_min_interval = "2s";'
        start_ready
        [ "$(stat -c %a "$C/a/b")" = 777 ]
        # The level-1 directory is 0777 and not sticky: nobody replaces the
        # empty level-2 one with its own (the daemon frozen meanwhile, so it
        # cannot recreate it first), then loops chmod 700 on it for 5 s.
        kill -STOP "$DAEMON_PID"
        as_nobody sh -c 'rmdir "$1" && mkdir "$1"' _ "$C/a/b"
        kill -CONT "$DAEMON_PID"
        [ "$(stat -c %U "$C/a/b")" = nobody ]
        start=$SECONDS
        timeout 5 "${AS_NOBODY[@]}" \
                sh -c 'while :; do chmod 700 "$1"; done' _ "$C/a/b" || true
        wait_for "[ \"\$(stat -c %a '$C/a/b')\" = 777 ]" 10
        repairs=$(cache_field t mode_repairs)
        echo "mode repairs: $repairs"
        [ "$repairs" -ge 20 ]                     # the flood happened
        # Each run has its journal record (runs end a little after their records).
        wait_for "[ \$(journal CACHEKEEPER_EVENT=cache-mode | wc -l) -eq \$(alerts cache-mode) ]" 10
        runs=$(alerts cache-mode)
        echo "in $((SECONDS - start)) s: $runs alert_command runs"
        # One at once, then at most one per 2 s window (and one for the last).
        [ "$runs" -le $((2 + (SECONDS - start) / 2)) ]
        # A coalesced run came at the end of a window.
        wait_for "grep -qs '^cache-mode t [1-9]' '$ALERTS.folded'" 10
        # Runs and records read together: the last window may still close
        # (its record first, its run a little later) after any one read.
        wait_for 'runs=$(alerts cache-mode); records=$(journal CACHEKEEPER_EVENT=cache-mode | wc -l)
                  [ "$records" -eq "$runs" ]' 10
        folded=$(journal CACHEKEEPER_EVENT=cache-mode | jq -s 'map(.CACHEKEEPER_FOLDED | tonumber) | add')
        alone=$(journal CACHEKEEPER_EVENT=cache-mode | jq -s 'map(select(.CACHEKEEPER_FOLDED == "0")) | length')
        echo "in $((SECONDS - start)) s: $runs alert_command runs, $records journal records, $alone alone, $folded folded"
        [ "$runs" -le $((2 + (SECONDS - start) / 2)) ]
        # The journal says how many: the runs stand for every alert, each at
        # least one repair; most were folded.
        [ "$alone" -ge 1 ]
        [ "$folded" -ge 10 ]
        [ $((alone + folded)) -le "$(cache_field t mode_repairs)" ]
        journal CACHEKEEPER_EVENT=cache-mode | jq -e -s 'map(select(.CACHEKEEPER_FOLDED != "0")) | length >= 1 and
                all(.MESSAGE | test("alerts? since the last run, folded into this one: alert_min_interval is 2s"))'
        kill -0 "$DAEMON_PID"
}
