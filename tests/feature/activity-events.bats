#!/usr/bin/env bats
# What inotify shows of ccache at work (issue 11 item 1), with real ccache
# compiling real files: each new entry is a store, each entry ccache
# refreshes at a hit is counted, removals by others are counted apart from
# the daemon's evictions, and a chmod or the daemon's own trim is none.
# tests/run: takes 32 s
load ../lib/helper

setup() {
        setup_compile_cache
        open_test_dir   # nobody removes entries
}

teardown() {
        stop_daemon
        unmount_all
}

# The cache's ccache entries (legacy names, as Debian's ccache writes them).
entries() {
        find "$CACHE" -mindepth 3 -type f -name '*[RM]'
}

# Σ st_blocks·512 of the files named on stdin.
blocks_of() {
        xargs -r stat -c %b | awk '{ s += $1 * 512 } END { print s + 0 }'
}

# ccache's own count of one statistic of $CACHE.
ccache_stat() {
        CCACHE_DIR=$CACHE ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'
}

# Waits until status field $1 of cache t is $2.
wait_field() {
        wait_for "[ \"\$(cache_field t $1)\" = '$2' ]" 60 || {
                echo "$1: $(cache_field t "$1"), want $2" >&2
                return 1
        }
}

@test "stores, hit refreshes and removals: counted as ccache makes them, a chmod and a trim are none" {
        start_ready
        for f in stored_files_total refreshed_files_total removed_files_total; do
                [ "$(cache_field t $f)" = 0 ]
        done

        # A cold build: every entry ccache wrote is one store, with its bytes.
        compile "$CACHE" 8
        n=$(entries | wc -l)
        [ "$n" -eq 16 ]                       # a result and a manifest per miss
        wait_field stored_files_total "$n"
        [ "$(cache_field t stored_bytes_total)" = "$(entries | blocks_of)" ]
        [ "$(cache_field t refreshed_files_total)" = 0 ]

        # A warm rebuild: direct hits refresh their manifest and result; no store.
        compile "$CACHE" 8
        [ "$(ccache_stat direct_cache_hit)" = 8 ]
        wait_field refreshed_files_total 16
        [ "$(cache_field t stored_files_total)" = "$n" ]

        # A chmod is no hit (the daemon's own repairs are chmods), once it
        # comes more than two ticks of the clock after the last hit (a hit's
        # ctime may be that late on tmpfs: next test); three results removed
        # by an unprivileged user are removals, with their bytes.
        chmodded=$(entries | head -n 4)
        wait_for "[ \$((\$(date +%s%N) - \$(stat -c %.9Y $(echo $chmodded) | tr -d . | sort -n | tail -n 1))) -gt 100000000 ]"
        chmod 0600 $chmodded
        victims=$(entries | grep 'R$' | head -n 3)
        bytes=$(blocks_of <<<"$victims")
        as_nobody rm -f $victims
        wait_field removed_files_total 3
        [ "$(cache_field t removed_bytes_total)" = "$bytes" ]
        [ "$(cache_field t refreshed_files_total)" = 16 ]

        # The daemon's own trim is counted as evictions, not removals: one
        # more rm after it, once counted, shows that its echoes were not.
        ctl trim t --to 1k
        wait_for '[ "$(cache_field t evicted_files_total)" -gt 0 ]'
        # (in a directory watched already: files in a new one are found by its scan)
        late=$(dirname "$(head -n 1 <<<"$victims")")/$(printf '%02x%029uR' 0 42)
        printf x > "$late.tmp.Ab12Cd.tmp"
        mv "$late.tmp.Ab12Cd.tmp" "$late"
        wait_field stored_files_total $((n + 1))
        rm "$late"
        wait_field removed_files_total 4
        [ "$(cache_field t stored_files_total)" = $((n + 1)) ]
}

@test "a hit whose ctime tmpfs stamped a clock tick after its mtime is counted" {
        # tmpfs's setattr stamps ctime once more after setattr_copy set atime,
        # mtime and ctime to one instant: a tick of the coarse clock between
        # the two leaves ctime a tick after mtime, one hit in about 10^5 (the
        # bench's 100,000 touches were counted 99,999). Those times in one
        # IN_ATTRIB: with the daemon stopped, tick-ctime.py touches the entry,
        # then chmods it a tick later, and the kernel merges the two events.
        setup_volume
        write_config 1G
        mkdir -p "$CACHE/0/0"
        entry=$CACHE/0/0/$(printf '%02x%029uR' 0 7)
        printf x > "$entry"
        start_ready
        wait_exact t "$CACHE"   # the entry is the account's: its event is no store
        r0=$(cache_field t refreshed_files_total) s0=$(cache_field t stored_files_total)
        kill -STOP "$DAEMON_PID"
        wait_for "[ \"\$(awk '{ print \$3 }' /proc/$DAEMON_PID/stat)\" = T ]"
        out=$(/usr/bin/python3 "$TOP/tests/helpers/tick-ctime.py" "$entry")
        kill -CONT "$DAEMON_PID"
        read -r gap tick <<<"$out"
        [ "$gap" -gt 0 ] && [ "$gap" -le "$tick" ]
        [ "$(stat -c %.9X "$entry")" = "$(stat -c %.9Y "$entry")" ]
        # A store after it: once the store is counted, the hit's event was read.
        late=$CACHE/0/0/$(printf '%02x%029uR' 0 8)
        printf x > "$late.tmp.Ab12Cd.tmp"
        mv "$late.tmp.Ab12Cd.tmp" "$late"
        wait_field stored_files_total $((s0 + 1))
        [ "$(cache_field t refreshed_files_total)" = $((r0 + 1)) ]
}

@test "the figures are metrics too" {
        start_ready
        compile "$CACHE" 3
        wait_field stored_files_total 6
        metrics=$(ctl metrics)
        grep -qx 'cachekeeper_cache_stored_files_total{cache="t"} 6' <<<"$metrics"
        grep -qx '# TYPE cachekeeper_cache_refreshed_files_total counter' <<<"$metrics"
        grep -qx 'cachekeeper_cache_removed_files_total{cache="t"} 0' <<<"$metrics"
}
