#!/usr/bin/env bats
# Who writes each cache (issue 12 item 4): each entry's header names the
# ccache version and namespace that wrote it. Real ccache (Debian's) and
# entries written to the exact header layout for versions Debian does not
# ship; read for the entries there before the start by a pass after READY,
# and for new ones as they are stored; unreadable headers are unknown, never
# an error; a user planting headers cannot grow the table or stall the daemon.
# tests/run: takes 73 s
load ../lib/helper

ENTRY=$BATS_TEST_DIRNAME/../helpers/ccache-entry.py

setup() {
        require_root
        CACHE=$BATS_TEST_TMPDIR/cache
        mkdir -m 1777 "$CACHE"
        mkdir -p -m 0777 "$CACHE/a" "$CACHE/a/b"
        export CCACHE_MAXSIZE=0
        # the mix is judged at each feed of ccache's counters: every second
        # here, not every 10 s (cachekeeperd.8, ENVIRONMENT)
        export CACHEKEEPER_TEST_FEED=1s
        write_config 1G
}

teardown() {
        stop_daemon
}

legacy() { printf '%s/a/b/%031d%s' "$CACHE" "$1" "${2:-R}"; }
hex() { printf '%s/a/b/%038x' "$CACHE" "$1"; }

# One field of the writer VERSION NAMESPACE of cache t (null: the unknown).
writer() {
        status_jq -r --arg v "$1" --arg n "$2" \
                '.caches[0].writers[] | select(.ccache_version == $v and .namespace == $n) | .'"$3"
}

unknown() {
        status_jq -r '.caches[0].writers[] | select(.header == "unreadable") | .'"$1"
}

blocks_of() { xargs -r stat -c %b | awk '{ s += $1 * 512 } END { print s + 0 }'; }

@test "writers: versions and namespaces from the headers, found after READY and as stored" {
        compile "$CACHE" 5                                 # Debian's ccache: 10 entries
        debian=$(ccache --version | awk 'NR == 1 { print $3 }')
        for i in 1 2 3; do /usr/bin/python3 "$ENTRY" "$(hex $i)" 4.13.6 ""; done
        for i in 1 2; do /usr/bin/python3 "$ENTRY" "$(legacy $i M)" 4.9.1 ns-a 1; done
        /usr/bin/python3 "$ENTRY" --garbage "$(legacy 3)"
        start_ready
        wait_for '[ "$(cache_field t writers_pending)" = 0 ]' 30

        [ "$(writer "$debian" "" entries)" = 10 ]
        # The writers' figures are a snapshot of at most 5 s (CACHE_WS_USEC):
        # one taken while the compiles' last events were in flight can
        # stand a moment (1 run in 10 on a quiet box): wait for the next.
        wait_for "[ \"\$(writer '$debian' '' bytes)\" = \"\$(find '$CACHE' -mindepth 3 -name '*[RM]' ! -path '*/a/b/*' | blocks_of)\" ]" 15
        [ "$(writer 4.13.6 "" entries)" = 3 ]
        [ "$(writer 4.9.1 ns-a entries)" = 2 ]
        [ "$(unknown entries)" = 1 ]
        [ "$(writer 4.9.1 ns-a stores_24h)" = 0 ]          # there before: no store seen

        # New entries, as they are stored; hits of them.
        compile "$CACHE" 3 g
        wait_for '[ "$(writer "$debian" "" stores_24h)" = 6 ]' 30
        compile "$CACHE" 3 g
        wait_for '[ "$(writer "$debian" "" hits_24h)" = 6 ]' 30   # manifest and result of each
        wait_for '[ "$(writer "$debian" "" entries)" = 16 ]' 30
        /usr/bin/python3 "$ENTRY" "$(legacy 9)" 4.12.3 ""
        wait_for '[ "$(writer 4.12.3 "" stores_24h)" = 1 ]' 30
        wait_for '[ "$(writer 4.12.3 "" entries)" = 1 ]' 30

        run ctl status t
        [[ "$output" == *"written by 4.13.6: 3 entries"* ]]
        [[ "$output" == *"written by 4.9.1 (namespace ns-a): 2 entries"* ]]
        metrics=$(ctl metrics)
        grep -qx "cachekeeper_cache_writer_entries{cache=\"t\",ccache_version=\"4.13.6\",namespace=\"\"} 3" <<<"$metrics"
        grep -qx "cachekeeper_cache_writer_entries{cache=\"t\",ccache_version=\"4.9.1\",namespace=\"ns-a\"} 2" <<<"$metrics"
}

@test "writers: a user planting a hundred versions and a FIFO: the table stays bounded, the daemon keeps serving" {
        entry=$(world_copy "$ENTRY")
        start_ready
        for i in $(seq 1 100); do
                as_nobody /usr/bin/python3 "$entry" "$(legacy $i)" "9.$i" "evil\\$i"
        done
        as_nobody mkfifo "$(legacy 500)"
        wait_for '[ "$(status_jq "[.caches[0].writers[].entries] | add")" = 100 ]' 30
        [ "$(status_jq '.caches[0].writers | map(select(.ccache_version != null)) | length')" = 32 ]
        [ "$(status_jq -r '.caches[0].writers[] | select(.header == "beyond the table") | .entries')" = 68 ]
        [ "$(writer 9.7 'evil\7' entries)" = 1 ]             # names kept as written, escaped in JSON
        ctl status > /dev/null
}

@test "writers: a directory of real entries renamed into the running cache is read: its purge works without a restart" {
        start_ready
        wait_for '[ "$(cache_field t writers_pending)" = 0 ]' 30
        OTHER=$BATS_TEST_TMPDIR/other
        mkdir "$OTHER"
        compile "$OTHER" 8                                 # Debian's ccache, into another cache
        debian=$(ccache --version | awk 'NR == 1 { print $3 }')
        # Each of its directories renamed over the empty one the daemon made
        # (rename(2) replaces an empty directory).
        for d in "$OTHER"/?/?; do
                mv -T "$d" "$CACHE/${d#"$OTHER"/}"
        done
        moved=$(find "$CACHE" -name '*[RM]' | wc -l)
        [ "$moved" -gt 0 ]
        # The scan of what came in finds them; the pass reads them.
        wait_for '[ "$(writer "$debian" "" entries)" = "$moved" ]' 60
        [ "$(cache_field t writers_pending)" = 0 ]
        run ctl trim t --written-by "$debian"
        [ "$status" -eq 0 ]
        [[ "$output" == *"evicted $moved files"* ]]
        [ -z "$(find "$CACHE" -name '*[RM]')" ]
}

@test "writers: an entry renamed within the cache (4.13 renaming a legacy entry it hits) is read under its new name" {
        /usr/bin/python3 "$ENTRY" "$(legacy 4)" 4.12.3 ""
        start_ready
        wait_for '[ "$(writer 4.12.3 "" entries)" = 1 ]' 30
        mv "$(legacy 4)" "$(hex 4)"                        # one cookie: no store, a new name
        wait_for '[ "$(cache_field t files)" = "$(find "$CACHE" -type f | wc -l)" ] && [ -e "$(hex 4)" ]'
        wait_for '[ "$(cache_field t writers_pending)" = 0 ]' 30
        [ "$(writer 4.12.3 "" entries)" = 1 ]
        [ "$(writer 4.12.3 "" stores_24h)" = 0 ]
}

@test "writers: 41 planted versions fill the table; a purge says it may miss entries; once they are gone their slots serve root's writer" {
        entry=$(world_copy "$ENTRY")
        start_ready
        for i in $(seq 1 41); do
                as_nobody /usr/bin/python3 "$entry" "$(legacy $i)" "9.$i" ""
        done
        wait_for '[ "$(status_jq "[.caches[0].writers[].entries] | add")" = 41 ]' 30
        # Root's ccache stores after them: its writer is beyond the table.
        compile "$CACHE" 3
        debian=$(ccache --version | awk 'NR == 1 { print $3 }')
        beyond='.caches[0].writers[] | select(.header == "beyond the table") | .entries'
        wait_for '[ "$(status_jq -r "$beyond")" = 15 ]' 30
        [ "$(writer "$debian" "" entries)" = "" ]

        # A purge now may miss root's entries, and says so: reply and output.
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send \
                "{\"cmd\":\"trim\",\"dry_run\":true,\"caches\":[\"t\"],\"written_by\":\"$debian\"}"$'\n'
        [ "$status" -eq 0 ]
        [ "$(head -n 1 <<<"$output" | jq '.result.t.beyond_table_files')" = 15 ]
        run ctl trim t --written-by "$debian"
        [ "$status" -eq 0 ]
        # (one result, wrapped at spaces into 80 columns)
        [[ "$(tr '\n' ' ' <<<"$output" | tr -s ' ')" == *"evicted 0 files"*"may have missed some: 15 entries are of writers beyond the daemon's table"* ]]
        [ "$(find "$CACHE" -mindepth 3 -name '*[RM]' ! -path '*/a/b/*' | wc -l)" = 6 ]

        # The planted entries go; the next purge frees their slots and has
        # root's entries read again ("try again" meanwhile), then finds them.
        for i in $(seq 1 41); do as_nobody rm "$(legacy $i)"; done
        wait_for '[ "$(status_jq "[.caches[0].writers[].entries] | add")" = 6 ]' 30
        wait_for 'ctl trim t --written-by "$debian" --dry-run 2>/dev/null | grep -q "would evict 6 files"' 60
        [ "$(writer "$debian" "" entries)" = 6 ]
        [ "$(status_jq -r "$beyond")" = 0 ]                 # (its stores of 24 h stay)
        [ "$(status_jq '.caches[0].writers | map(select(.ccache_version != null)) | length')" = 1 ]
        run ctl trim t --written-by "$debian"
        [ "$status" -eq 0 ]
        [[ "$output" == *"evicted 6 files"* ]]
        [[ "$output" != *"may have missed"* ]]
        [ -z "$(find "$CACHE" -mindepth 3 -name '*[RM]')" ]
}

@test "trim --written-by and --namespace: exactly that writer's entries go, ccache's counters follow, for admins only" {
        open_test_dir
        compile "$CACHE" 10                                # Debian's ccache: 20 entries
        debian=$(ccache --version | awk 'NR == 1 { print $3 }')
        for i in 1 2 3 4 5 6; do /usr/bin/python3 "$ENTRY" "$(hex $i)" 4.13.6 ""; done
        for i in 1 2 3 4; do /usr/bin/python3 "$ENTRY" "$(legacy $i M)" 4.9.1 ns-a 1; done
        start_ready
        wait_for '[ "$(cache_field t writers_pending)" = 0 ]' 30
        find "$CACHE" -type f | sort > "$BATS_TEST_TMPDIR/before"

        # Usage errors, and a non-admin's real trim refused; its dry run counts.
        run ctl trim t --written-by ""
        [ "$status" -eq 2 ]
        run ctl trim t --written-by 4.13.6 --to 1k
        [ "$status" -eq 2 ]
        ctl_copy=$(world_copy "$CTL")
        run as_nobody "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" trim t --written-by 4.13.6
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied"* ]]
        run as_nobody "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" trim t --written-by 4.13.6 --dry-run
        [ "$status" -eq 0 ]
        [[ "$output" == *"6 files"* ]]
        [ "$(find "$CACHE" -type f | sort)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
        # A version or namespace nobody wrote in is refused, naming who did.
        run --separate-stderr ctl trim t --written-by 4.99.0
        [ "$status" -eq 1 ]
        [[ "$stderr" == "cachectl: no entries written by ccache 4.99.0 in the caches asked: they hold t: "* ]]
        [[ "$stderr" == *"t: 4.13.6 (6 entries)"* ]]
        [[ "$stderr" == *"t: 4.9.1 namespace ns-a (4 entries)"* ]]
        [[ "$stderr" == *"t: $debian (20 entries)"* ]]
        run --separate-stderr ctl trim t --namespace ns-b --dry-run
        [ "$status" -eq 1 ]
        [[ "$stderr" == "cachectl: no entries written by namespace ns-b in the caches asked: they hold "* ]]
        [ "$(find "$CACHE" -type f | sort)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]

        # Debian's own first (ccache counted those): all 20 go, nothing
        # else, and ccache's counters say so.
        [ "$(CCACHE_DIR=$CACHE ccache --print-stats | awk '$1 == "files_in_cache" { print $2 }')" = 20 ]
        run ctl trim t --written-by "$debian"
        [ "$status" -eq 0 ]
        find "$CACHE" -type f | sort > "$BATS_TEST_TMPDIR/after"
        [ "$(comm -23 "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after" | wc -l)" -eq 20 ]
        [ -z "$(comm -13 "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after")" ]
        [ -z "$(find "$CACHE" -mindepth 3 -name '*[RM]' ! -path '*/a/b/*')" ]
        [ "$(CCACHE_DIR=$CACHE ccache --print-stats | awk '$1 == "files_in_cache" { print $2 }')" = 0 ]
        [ "$(CCACHE_DIR=$CACHE ccache --print-stats | awk '$1 == "cache_size_kibibyte" { print $2 }')" = 0 ]

        # 4.13.6's six entries, then the namespace's four: exactly those.
        ctl trim t --written-by 4.13.6
        for i in 1 2 3 4 5 6; do [ ! -e "$(hex $i)" ]; done
        for i in 1 2 3 4; do [ -e "$(legacy $i M)" ]; done
        wait_for '[ "$(writer 4.13.6 "" entries)" = "" ]'   # gone from the table (counted every 5 s)
        [ "$(writer 4.9.1 ns-a entries)" = 4 ]
        ctl trim t --namespace ns-a
        for i in 1 2 3 4; do [ ! -e "$(legacy $i M)" ]; done

        # A purge is no regret of the cap: compiled again, nothing counts.
        compile "$CACHE" 10
        wait_for '[ "$(writer "$debian" "" entries)" = 20 ]' 30
        [ "$(cache_field t regret.stores_7d)" = 0 ]
}

# The 4.13 name of the legacy entry at path $1 (same directory).
hex_twin() {
        /usr/bin/python3 - "$1" <<'EOP'
import base64, os, sys
p = sys.argv[1]
d, name = os.path.split(p)
l2 = os.path.basename(d)
l1 = os.path.basename(os.path.dirname(d))
key = l1 + l2 + name[:-1]
digest = bytes.fromhex(key[:4]) + base64.b32hexdecode(key[4:].upper() + "===")
print(os.path.join(d, digest.hex()[2:]))
EOP
}

@test "version mix: a 4.13 writer storing beside Debian's ccache raises cache-version-mix once, with bytes and duplicates" {
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        printf '#!/bin/sh\necho "$CACHEKEEPER_EVENT|$CACHEKEEPER_LEVEL|$CACHEKEEPER_MESSAGE" >> "$1"\n' > "$BATS_TEST_TMPDIR/alert.sh"
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        write_config 1G "" "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];"
        start_ready
        compile "$CACHE" 5                                 # Debian's ccache: <= 4.12
        wait_for '[ "$(cache_field t stored_files_total)" = 10 ]'
        [ "$(cache_field t key_families.mixed)" = false ]
        # A 4.13 writer stores two of the same results under its own names,
        # and eight more: ten stores, half of all, a mix (families.h).
        mapfile -t results < <(find "$CACHE" -mindepth 3 -name '*R' ! -path '*/a/b/*' | sort | head -n 2)
        for r in "${results[@]}"; do /usr/bin/python3 "$ENTRY" "$(hex_twin "$r")" 4.13.6 ""; done
        for i in $(seq 70 77); do /usr/bin/python3 "$ENTRY" "$(hex $i)" 4.13.6 ""; done
        wait_for '[ -s "$ALERTS" ] && grep -q "^cache-version-mix|warning|" "$ALERTS"' 30
        msg=$(grep '^cache-version-mix|' "$ALERTS")
        [[ "$msg" == *"<= 4.12 holds "*"(10 stores in 24 h)"* ]]
        [[ "$msg" == *"4.13 holds "*"(10 stores in 24 h)"* ]]
        [[ "$msg" == *" 2 stores in 24 h were duplicates of another family's entry."* ]]
        [ "$(cache_field t key_families.duplicate_stores_24h)" = 2 ]
        [ "$(cache_field t key_families.mixed)" = true ]
        [ "$(status_jq '.caches[0].key_families.families | length')" = 2 ]
        # More stores of both: still one alert.
        compile "$CACHE" 2 h
        /usr/bin/python3 "$ENTRY" "$(hex 78)" 4.13.6 ""
        wait_for '[ "$(cache_field t stored_files_total)" = 25 ]'
        [ "$(grep -c '^cache-version-mix|' "$ALERTS")" = 1 ]
}

@test "version mix: one entry of another family planted by a user raises no cache-version-mix; a real mix above the threshold does" {
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        printf '#!/bin/sh\necho "$CACHEKEEPER_EVENT|$CACHEKEEPER_LEVEL|$CACHEKEEPER_MESSAGE" >> "$1"\n' > "$BATS_TEST_TMPDIR/alert.sh"
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        write_config 1G "" "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];"
        entry=$(world_copy "$ENTRY")
        start_ready
        compile "$CACHE" 10                                # Debian's ccache: <= 4.12, 20 stores
        wait_for '[ "$(cache_field t stored_files_total)" = 20 ]'
        size=$(cache_field t size_bytes)
        as_nobody /usr/bin/python3 "$entry" "$(hex 1)" 4.13.6 ""
        wait_for '[ "$(cache_field t stored_files_total)" = 21 ]'
        [ "$(status_jq '.caches[0].key_families.families | length')" = 2 ]   # seen, and shown
        # The next feed of the activity (it checks the mix) has gone by: the history has the new size.
        wait_for '[ "$(cache_field t size_bytes)" -gt "$size" ]'
        wait_for "[ \"\$(\"\$CTL_LOOK\" -s '$BATS_TEST_TMPDIR/ck.sock' history t --json --minutes 5 | jq '.buckets[-1].size_bytes')\" = \"\$(cache_field t size_bytes)\" ]" 60
        [ "$(cache_field t key_families.mixed)" = false ]
        [ "$(cache_field t alarms.\"cache-version-mix\")" = false ]
        # A 4.13 writer that stores for real (ten entries with the planted one): a mix.
        for i in $(seq 2 10); do /usr/bin/python3 "$ENTRY" "$(hex $i)" 4.13.6 ""; done
        wait_for '[ -s "$ALERTS" ] && grep -q "^cache-version-mix|warning|" "$ALERTS"' 60
        [[ "$(grep '^cache-version-mix|' "$ALERTS")" == *"4.13 holds "*"(10 stores in 24 h)"* ]]
        [ "$(grep -c '^cache-version-mix|' "$ALERTS")" = 1 ]
        [ "$(cache_field t key_families.mixed)" = true ]
}
