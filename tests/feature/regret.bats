#!/usr/bin/env bats
# Eviction regret (issue 12 item 2), with real ccache: the stores of entries
# the daemon had evicted are counted (misses the cap caused), stores of
# entries someone else removed are not, a second store of a key is none,
# and status suggests the cap that would have kept them.
# tests/run: takes 20 s
load ../lib/helper

setup() {
        setup_compile_cache
}

teardown() {
        stop_daemon
}

entries() {
        find "$CACHE" -mindepth 3 -type f -name '*[RM]' "$@"
}

regret() {
        status_jq -r ".caches[0].regret.$1"
}

@test "regret: a store of an entry the daemon evicted is counted, with its share and a suggested cap" {
        start_ready
        [ "$(regret stores_7d)" = 0 ]
        [ "$(regret share_7d)" = null ]
        [ "$(regret suggested_max_size_bytes)" = null ]

        compile "$CACHE" 10                    # 20 stores: a result and a manifest each
        wait_for '[ "$(cache_field t stored_files_total)" = 20 ]'
        ctl trim t --to 1k                     # the daemon evicts them all
        [ "$(entries | wc -l)" -eq 0 ]
        [ "$(regret remembered_evictions)" = 20 ]

        compile "$CACHE" 10                    # the same 20 stored again: each one a regret
        wait_for '[ "$(cache_field t stored_files_total)" = 40 ]'
        [ "$(regret stores_24h)" = 20 ]
        [ "$(regret stores_7d)" = 20 ]
        [ "$(regret bytes_7d)" = "$(entries -printf '%b\n' | awk '{ s += $1 * 512 } END { print s }')" ]
        [ "$(regret share_7d)" = 0.5 ]
        # 1G cap + at most the bytes evicted, rounded up to two digits
        [ "$(regret suggested_max_size_bytes)" = 1100000000 ]
        [ "$(regret remembered_evictions)" = 20 ]
        # The same regret in history's rows, minute by minute and as a day.
        history=$(ctl history t --json --minutes 60)
        [ "$(jq '[.buckets[].regretted] | add' <<<"$history")" = 20 ]
        [ "$(jq '[.buckets[].regretted_bytes] | add' <<<"$history")" = "$(regret bytes_7d)" ]
        [ "$(ctl history t --json --days 2 | jq '[.buckets[].regretted] | add')" = 20 ]

        # Stored once more after an rm by someone else: no regret of the cap.
        rm -f $(entries | grep 'R$' | head -n 3)
        compile "$CACHE" 10
        wait_for '[ "$(cache_field t stored_files_total)" = 43 ]'
        [ "$(regret stores_7d)" = 20 ]

        metrics=$(ctl metrics)
        grep -qx 'cachekeeper_cache_regret_stores{cache="t",window="7d"} 20' <<<"$metrics"
        share=$(awk '$1 == "cachekeeper_cache_regret_share{cache=\"t\"}" { print $2 }' <<<"$metrics")
        awk -v s="$share" 'BEGIN { exit !(s > 20 / 43 - 1e-5 && s < 20 / 43 + 1e-5) }'   # 20 of 43 stores
        grep -qx 'cachekeeper_cache_suggested_max_size_bytes{cache="t"} 1100000000' <<<"$metrics"
}

@test "regret: what the daemon evicted is remembered across a restart (state_dir)" {
        start_ready
        compile "$CACHE" 6                     # 12 stores
        wait_for '[ "$(cache_field t stored_files_total)" = 12 ]'
        ctl trim t --to 1k
        [ "$(regret remembered_evictions)" = 12 ]
        stop_daemon                            # SIGTERM: the state is saved
        [ -f "$BATS_TEST_TMPDIR/state/t.regret" ]

        start_ready
        [ "$(regret remembered_evictions)" = 12 ]
        compile "$CACHE" 6                     # the same 12 again: regretted after the restart too
        wait_for '[ "$(cache_field t stored_files_total)" = 12 ]'
        [ "$(regret stores_24h)" = 12 ]
        [ "$(regret stores_7d)" = 12 ]
        [ "$(ctl history t --json --minutes 60 | jq '[.buckets[].regretted] | add')" = 12 ]
        ! grep -q 'Regret file' "$BATS_TEST_TMPDIR/daemon.log" || false
}
