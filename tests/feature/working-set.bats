#!/usr/bin/env bats
# The working set (issue 12 item 1): bytes and entries used within the last
# 1 h, 24 h, 7 d and 30 d, exact, from what the daemon holds, checked
# against find over the entries real ccache wrote (some made older by hand).
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

# "files bytes" of the entries used since $1 (a date(1) string), as find sees them.
used_since() {
        entries -newermt "$1" -printf '%b\n' | awk '{ n++; s += $1 * 512 } END { print n + 0, s + 0 }'
}

# "files bytes" of the working set of cache t for window $1, as status has it.
ws() {
        status_jq -r --arg w "$1" '.caches[0] | "\(.working_set_files[$w]) \(.working_set_bytes[$w])"'
}

@test "working set: entries by last use within 1h/24h/7d/30d, exact as find counts them; in the table and metrics" {
        compile "$CACHE" 12
        mapfile -t all < <(entries | sort)
        [ "${#all[@]}" -eq 24 ]
        # Four entries last used 2 days ago, four 10 days ago, four 60 days ago.
        touch -d '2 days ago' "${all[@]:0:4}"
        touch -d '10 days ago' "${all[@]:4:4}"
        touch -d '60 days ago' "${all[@]:8:4}"
        start_ready
        now=$(date +%s)
        [ "$(ws 1h)" = "$(used_since "@$((now - 3600))")" ]
        [ "$(ws 24h)" = "$(used_since "@$((now - 86400))")" ]
        [ "$(ws 7d)" = "$(used_since "@$((now - 7 * 86400))")" ]
        [ "$(ws 30d)" = "$(used_since "@$((now - 30 * 86400))")" ]
        [ "$(ws 1h | cut -d' ' -f1)" = 12 ]
        [ "$(ws 24h | cut -d' ' -f1)" = 12 ]
        [ "$(ws 7d | cut -d' ' -f1)" = 16 ]
        [ "$(ws 30d | cut -d' ' -f1)" = 20 ]

        # A hit refreshes its entries: they are in the last hour's set again
        # (once the figures are counted again, at most 5 s later).
        compile "$CACHE" 12
        wait_for '[ "$(ws 1h | cut -d" " -f1)" = 24 ]' 30
        [ "$(ws 1h)" = "$(used_since "@$(($(date +%s) - 3600))")" ]

        run ctl status t
        [ "$status" -eq 0 ]
        [[ "${lines[2]}" == *"working set 1h/24h/7d/30d: "*/*/*/* ]]
        run ctl status
        [[ "$output" != *"working set 1h/24h"* ]]     # only for a cache named
        metrics=$(ctl metrics)
        grep -qx "cachekeeper_cache_working_set_files{cache=\"t\",window=\"30d\"} 24" <<<"$metrics"
        grep -qx "cachekeeper_cache_working_set_bytes{cache=\"t\",window=\"1h\"} $(ws 1h | cut -d' ' -f2)" <<<"$metrics"
        grep -qx '# TYPE cachekeeper_cache_working_set_bytes gauge' <<<"$metrics"
}
