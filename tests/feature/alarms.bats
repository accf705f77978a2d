#!/usr/bin/env bats
# The cache-silent-miss and cache-idle alarms (issue 11), with a real daemon
# and real ccache compiling real files: a cold build, a warm rebuild, then a
# namespace set in the cache's ccache.conf that makes every compile miss:
# one cache-silent-miss naming that change, one recovery when hits return.
# A cache left alone for idle_after: one cache-idle, one recovery at the
# next compile. Through alert_command and the journal. Windows are short
# (1m) through the config; the daemon does not know it is under test.
# tests/run: alongside
load ../lib/helper

setup() {
        require_root
        CACHE=$BATS_TEST_TMPDIR/cache
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        mkdir -m 1777 "$CACHE"
        # ccache's own cleanup stays out of it.
        export CCACHE_MAXSIZE=0
        write_alert_command "$ALERTS" "$BATS_TEST_TMPDIR/alert.sh"
        start_journald
}

teardown() {
        stop_daemon
        stop_journald
}

# config CACHE-SETTINGS: cache t with these alarm settings, every alert run
# as it comes.
config() {
        write_config 1G "$1" "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" \
                'alert_min_interval = "0s";' 'audit_interval = "0s";'
}

# alerts "EVENT LEVEL": how many alert_command runs of that event and level.
alerts() {
        if [ -e "$ALERTS" ]; then grep -c "^$1 " "$ALERTS" || true; else echo 0; fi
}

# Waits until the daemon's hit_rate_1h of cache t is $1 (ccache's counters
# are fed every 10 s).
wait_rate() {
        wait_for "[ \"\$(cache_field t hit_rate_1h)\" = $1 ]" 40 || { echo "hit_rate_1h: $(cache_field t hit_rate_1h), want $1" >&2; return 1; }
}

# Waits for the first 15 s of a minute later than this one: a window of 1m
# is the minute bucket now running, and what is compiled then is counted in
# it (ccache's counters are fed every 10 s).
next_minute() {
        local m=$(($(date +%s) / 60))
        wait_for "[ \$((\$(date +%s) / 60)) -gt $m ] && [ \$((\$(date +%s) % 60)) -lt 15 ]" 80
}

# set_namespace NS: the cache's ccache.conf with namespace NS ("" none),
# written as an editor does (a new file renamed over it).
set_namespace() {
        grep -v '^namespace' "$CACHE/ccache.conf" > "$CACHE/ccache.conf.new"
        [ -z "$1" ] || echo "namespace = $1" >> "$CACHE/ccache.conf.new"
        mv "$CACHE/ccache.conf.new" "$CACHE/ccache.conf"
}

@test "cache-silent-miss: a namespace set in ccache.conf makes every compile miss: one alert naming it, one recovery" {
        config 'silent_window = "1m"; silent_min_calls = 10; silent_hit_rate = "5%"; idle_after = "1h";'
        start_ready
        # A cold build (all misses) alone never fires; a warm rebuild hits.
        compile "$CACHE" 12
        wait_rate 0
        compile "$CACHE" 12
        wait_rate 0.5
        [ "$(alerts cache-silent-miss)" -eq 0 ]

        set_namespace x
        wait_for "grep -q 'the settings of $CACHE/ccache.conf changed: namespace: (unset) -> \"x\"' '$BATS_TEST_TMPDIR/daemon.log'" 10
        # Every compile misses now, 12 in a minute of their own (a batch
        # that straddles two minutes has fewer than 10 in each: another one).
        for batch in 1 2 3; do
                next_minute
                compile "$CACHE" 12
                ! wait_for "[ \$(alerts 'cache-silent-miss warning') -gt 0 ]" 45 || break
        done
        [ "$(alerts 'cache-silent-miss warning')" -eq 1 ]
        line=$(grep '^cache-silent-miss warning' "$ALERTS")
        [[ "$line" == "cache-silent-miss warning t "*" | Cache t misses silently: hit rate 0% over the last 1m (0 hits of "*" calls), was "*" in the 24h before ("*"); ccache.conf changed at "[0-2][0-9]:[0-5][0-9]" (namespace: (unset) -> \"x\")." ]] || { echo "$line"; false; }

        # The same journal record: MESSAGE_ID, fields, priority warning.
        wait_for "[ \$(journal CACHEKEEPER_EVENT=cache-silent-miss | wc -l) -eq 1 ]" 5
        journal CACHEKEEPER_EVENT=cache-silent-miss | jq -e '.MESSAGE_ID == "39a656c1fded447986aa9fcaa1cf2c36" and
                .CACHEKEEPER_CACHE == "t" and .CACHEKEEPER_LEVEL == "warning" and .PRIORITY == "4" and
                (.MESSAGE | test("ccache.conf changed at"))'

        # More misses: no second alert. The namespace gone, the first files
        # hit again: one recovery.
        compile "$CACHE" 12 g
        set_namespace ""
        wait_for "grep -q 'namespace: \"x\" -> (unset)' '$BATS_TEST_TMPDIR/daemon.log'" 10
        for batch in 1 2 3; do
                compile "$CACHE" 12
                ! wait_for "[ \$(alerts 'cache-silent-miss ok') -gt 0 ]" 25 || break
        done
        [ "$(alerts 'cache-silent-miss ok')" -eq 1 ]
        [ "$(alerts 'cache-silent-miss warning')" -eq 1 ]
        grep -q '^cache-silent-miss ok t .* | Cache t hits again: [0-9]*% over the last 1m ([0-9]* hits of [0-9]* calls)\.$' "$ALERTS"
        wait_for "[ \$(journal CACHEKEEPER_EVENT=cache-silent-miss CACHEKEEPER_LEVEL=ok | wc -l) -eq 1 ]" 5
        journal CACHEKEEPER_EVENT=cache-silent-miss CACHEKEEPER_LEVEL=ok | jq -e '.PRIORITY == "5"'
        [ "$(alerts cache-idle)" -eq 0 ]
}

@test "cache-idle: no compile for idle_after: one alert; the next compile: one recovery" {
        config 'idle_after = "1m";'
        # Entries written before the daemon starts are recent: not idle yet.
        compile "$CACHE" 2 pre
        start_ready
        compile "$CACHE" 2
        start=$SECONDS
        # Idle once every minute bucket overlapping the last minute is empty:
        # 1 to 2 minutes after the last compile, and the feed's 10 s.
        wait_for "[ \$(alerts 'cache-idle warning') -eq 1 ]" 150
        [ $((SECONDS - start)) -ge 55 ]
        grep -q '^cache-idle warning t .* | Cache t is idle: no store, no hit and no ccache call for 1m[ 0-9s]* (the last at [0-2][0-9]:[0-5][0-9]): a container that lost its mount, or a compiler shim that broke?$' "$ALERTS" ||
                { cat "$ALERTS"; false; }
        wait_for "[ \$(journal CACHEKEEPER_EVENT=cache-idle | wc -l) -eq 1 ]" 5
        journal CACHEKEEPER_EVENT=cache-idle | jq -e '.MESSAGE_ID == "e8501b05758d479b95fe687bb85b1e89" and .CACHEKEEPER_LEVEL == "warning"'

        compile "$CACHE" 1 again
        wait_for "[ \$(alerts 'cache-idle ok') -eq 1 ]" 30
        grep -q '^cache-idle ok t .* | Cache t is in use again, after [0-9][0-9ms ]* without a store, a hit or a call\.$' "$ALERTS"
        [ "$(alerts 'cache-idle warning')" -eq 1 ]
        [ "$(alerts cache-silent-miss)" -eq 0 ]
}

@test "the alarms' settings: bad values are FILE:LINE errors" {
        printf 'caches = (\n  { name = "a"; path = "/srv/a"; max_size = "1G";\n    silent_window = "30s"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:3: 'caches[0].silent_window' must be between 1m and 30d"* ]]
        printf 'caches = (\n  { name = "a"; path = "/srv/a"; max_size = "1G";\n\n    silent_hit_rate = "150%%"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:4: 'caches[0].silent_hit_rate': invalid percentage \"150%\""* ]]
}
