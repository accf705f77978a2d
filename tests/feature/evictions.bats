#!/usr/bin/env bats
# The evictions request (issue 31 item 2), with real ccache:
# the keys ccache's debug log names, asked after `cachectl trim`, answer
# when and by what they left (the cap's trim, a purge by writer, an rm by
# hand), also after the miss stored them again and after a restart; a key
# never seen is absent; bad requests get an error and the daemon keeps
# serving; anyone may ask.
# tests/run: takes 15 s
load ../lib/helper

setup() {
        setup_compile_cache
}

teardown() {
        stop_daemon
}

# The key of each entry file of the cache, as ccache prints it (its
# directories' digits and its name, less the R or M), with that suffix:
# "<key> R" a line.
entry_keys() {
        find "$CACHE" -mindepth 3 -type f -name '*[RM]' -printf '%P\n' | tr -d / | sed 's/\(.\)$/ \1/'
}

# evictions KEY...: the daemon's reply to an evictions request for cache t.
evictions() {
        local keys
        keys=$(printf '"%s",' "$@")
        "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send \
                "{\"cmd\":\"evictions\",\"cache\":\"t\",\"keys\":[${keys%,}]}"$'\n' | head -n 1
}

# left REPLY KEY: "<by> <kind> <since>" of KEY in REPLY, "absent" when not listed.
left() {
        jq -r --arg k "$2" '.result.keys[$k] // "absent" | if . == "absent" then . else "\(.by) \(.kind) \(.since)" end' <<<"$1"
}

@test "evictions: what the cap's trim evicted answers by=cap, still after the miss stored it again and a restart; an rm answers other; a purge purge" {
        start_ready
        compile "$CACHE" 4                     # 8 entries: a manifest and a result each
        # One more, with ccache's debug log: the keys as the client reads them.
        mkdir -p "$BATS_TEST_TMPDIR/src"
        echo 'int logged(int x) { return x + 1; }' > "$BATS_TEST_TMPDIR/src/logged.c"
        CCACHE_DIR=$CACHE CCACHE_DEBUG=1 ccache gcc -c "$BATS_TEST_TMPDIR/src/logged.c" \
                -o "$BATS_TEST_TMPDIR/src/logged.o"
        log=$(echo "$BATS_TEST_TMPDIR"/src/logged.o.*.ccache-log)   # 4.7: <object>.<time>.ccache-log
        manifest=$(sed -n 's/.*Manifest key: \([0-9a-v]*\)$/\1/p' "$log" | head -n 1)
        result=$(sed -n 's/.*Result key: \([0-9a-v]*\)$/\1/p' "$log" | head -n 1)
        [ -n "$manifest" ]
        [ -n "$result" ]
        wait_for '[ "$(cache_field t stored_files_total)" = 10 ]'
        entry_keys > "$BATS_TEST_TMPDIR/keys"
        [ "$(wc -l < "$BATS_TEST_TMPDIR/keys")" = 10 ]
        grep -qx "$manifest M" "$BATS_TEST_TMPDIR/keys"
        grep -qx "$result R" "$BATS_TEST_TMPDIR/keys"
        mapfile -t keys < <(cut -d' ' -f1 "$BATS_TEST_TMPDIR/keys")
        never=0123456789abcdefghijklmnopqrstuv0       # no entry ever had it

        reply=$(evictions "${keys[@]}" "$never")
        [ "$(jq -r '.ok, (.result.keys | length)' <<<"$reply" | tr '\n' ' ')" = "true 0 " ]   # nothing left yet

        t0=$(date +%s)
        ctl trim t --to 1k                     # the daemon evicts them all
        t1=$(date +%s)
        [ -z "$(entry_keys)" ]
        reply=$(evictions "${keys[@]}" "$never")
        [ "$(jq -r '.result.keys | length' <<<"$reply")" = 10 ]
        while read -r key suffix; do
                read -r by kind since <<<"$(left "$reply" "$key")"
                [ "$by" = cap ]
                [ "$kind" = "$([ "$suffix" = R ] && echo result || echo manifest)" ]
                [ "$since" -ge "$t0" ]
                [ "$since" -le "$t1" ]
        done < "$BATS_TEST_TMPDIR/keys"
        [ "$(left "$reply" "$never")" = absent ]
        [ "$(left "$reply" "$manifest" | cut -d' ' -f1,2)" = "cap manifest" ]
        [ "$(left "$reply" "$result" | cut -d' ' -f1,2)" = "cap result" ]

        # The misses store them again (a regret each): still told, as when
        # `measure --explain` asks after the build.
        compile "$CACHE" 4
        wait_for '[ "$(cache_field t stored_files_total)" = 18 ]'
        [ "$(status_jq -r '.caches[0].regret.stores_7d')" = 8 ]
        reply=$(evictions "${keys[@]}")
        [ "$(jq -r '[.result.keys[].by] | unique | join(" ")' <<<"$reply")" = cap ]
        [ "$(jq -r '.result.keys | length' <<<"$reply")" = 10 ]

        # An rm by hand: by someone else, and no regret when stored again.
        victim=$(find "$CACHE" -mindepth 3 -type f -name '*R' | head -n 1)
        vkey=$(basename "$(dirname "$(dirname "$victim")")")$(basename "$(dirname "$victim")")$(basename "$victim")
        vkey=${vkey%R}
        t2=$(date +%s)
        rm "$victim"
        wait_for '[ "$(cache_field t removed_files_total)" = 1 ]'
        reply=$(evictions "$vkey")
        read -r by kind since <<<"$(left "$reply" "$vkey")"
        [ "$by $kind" = "other result" ]
        [ "$since" -ge "$t2" ]
        compile "$CACHE" 4
        wait_for '[ "$(cache_field t stored_files_total)" = 19 ]'
        [ "$(status_jq -r '.caches[0].regret.stores_7d')" = 8 ]

        # A purge by writer: by=purge, and no regret either.
        debian=$(ccache --version | awk 'NR == 1 { print $3 }')
        wait_for '[ "$(cache_field t writers_pending)" = 0 ]' 30
        pm=$(entry_keys | awk '$2 == "M" { print $1; exit }')
        ctl trim t --written-by "$debian"
        [ -z "$(entry_keys)" ]
        reply=$(evictions "$vkey" "$pm" "$manifest")
        [ "$(left "$reply" "$vkey" | cut -d' ' -f1,2)" = "purge result" ]
        [ "$(left "$reply" "$pm" | cut -d' ' -f1,2)" = "purge manifest" ]
        [ "$(left "$reply" "$manifest" | cut -d' ' -f1,2)" = "cap manifest" ]   # not stored since: the cap's still

        # Across a restart (the regret file, version 2): the same answers.
        before=$(evictions "${keys[@]}" "$never")
        stop_daemon
        start_ready
        after=$(evictions "${keys[@]}" "$never")
        [ "$(jq -S .result <<<"$before")" = "$(jq -S .result <<<"$after")" ]
        [ "$(jq -r '.result.keys | length' <<<"$after")" = 10 ]
        [ "$(status_jq -r '.caches[0].regret.stores_7d')" = 8 ]
}

@test "evictions: a malformed or oversized request gets an error, the daemon keeps serving; nobody may ask" {
        start_ready
        compile "$CACHE" 1
        wait_for '[ "$(cache_field t stored_files_total)" = 2 ]'
        mapfile -t keys < <(entry_keys | cut -d' ' -f1)
        ctl trim t --to 1k

        # Bad requests on one connection, each refused by name, then a good one.
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send \
                $'{"cmd":"evictions","cache":"t","keys":["../../etc/passwd"]}\n{"cmd":"evictions","cache":"t","keys":[7]}\n{"cmd":"evictions","cache":"t"}\n{"cmd":"evictions","keys":["ab"]}\n{"cmd":"evictions","cache":"nope","keys":["ab"]}\n{"cmd":"status"}\n'
        [ "$(jq -r '.error' <<<"${lines[0]}")" = '"keys"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)' ]
        [ "$(jq -r '.error' <<<"${lines[1]}")" = '"keys"[0] is not a ccache key (2 to 64 characters of 0-9 and a-v)' ]
        [ "$(jq -r '.error' <<<"${lines[2]}")" = '"keys" must be an array of 1 to 4096 ccache keys' ]
        [ "$(jq -r '.error' <<<"${lines[3]}")" = '"cache" must name a cache' ]
        [ "$(jq -r '.error' <<<"${lines[4]}")" = "no cache named 'nope'" ]
        for i in 0 1 2 3 4; do
                [ "$(jq -r '.ok, .protocol' <<<"${lines[$i]}" | tr '\n' ' ')" = "false 1 " ]
        done
        [ "$(jq -r '.ok, .result.ready' <<<"${lines[5]}" | tr '\n' ' ')" = "true true " ]

        # Too many keys for one request line: refused, the connection
        # closed; the daemon answers the next client.
        big=$(for i in $(seq 1 200); do printf '"%040d",' "$i"; done)
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send \
                "{\"cmd\":\"evictions\",\"cache\":\"t\",\"keys\":[${big%,}]}"$'\n'
        [ "$(jq -r '.error' <<<"${lines[0]}")" = "request too long (max 4096 bytes)" ]
        [ "${lines[1]}" = eof ]
        [ "$(status_jq -r .ready)" = true ]
        [ "$(jq -r '.result.keys | length' <<<"$(evictions "${keys[@]}")")" = 2 ]

        # Anyone may ask: nobody gets the same answer.
        poke=$(world_copy "$HELPERS/sockpoke")
        run as_nobody "$poke" "$BATS_TEST_TMPDIR/ck.sock" send \
                "{\"cmd\":\"evictions\",\"cache\":\"t\",\"keys\":[\"${keys[0]}\",\"${keys[1]}\"]}"$'\n'
        [ "$(jq -r '.ok, ([.result.keys[].by] | join(" "))' <<<"${lines[0]}" | tr '\n' ' ')" = "true cap cap " ]
}
