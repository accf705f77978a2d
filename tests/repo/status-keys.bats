#!/usr/bin/env bats
# The keys of the status have one spelling (issue 21), the macros of
# daemon/base/status-keys.h, and both ends use it: tests/check-status-keys
# passes on the tree and bites on a copy with a key spelled out in cachectl
# or in a writer of the status; every key cachectl reads (each STATUS_*
# macro in ctl/*.c, ctl/*/*.c) is in the status of a real daemon, in the object its
# macro names: a cache on a tmpfs of real ccache entries with a trim behind
# it, a cache that is unavailable, a file: share real ccache stored into, a
# redis remote (redis-server on a Unix socket) polled; and in a trim result.
# tests/run: takes 28 s
load ../lib/helper

# A copy of what the check reads, to spoil.
copy_tree() {
        T=$BATS_TEST_TMPDIR/tree
        rm -rf "$T"
        mkdir -p "$T/tests"
        cp -r "$TOP/daemon" "$TOP/ctl" "$T/"
        cp "$TOP/tests/check-status-keys" "$T/tests/"
}

@test "the tree spells no status key out" {
        run "$TOP/tests/check-status-keys"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        # and it knows the keys, composed ones too
        run "$TOP/tests/check-status-keys" --list
        [[ "$output" == *$'\nSTATUS_CACHE_SIZE_BYTES size_bytes\n'* ]]
        [[ "$output" == *$'\nSTATUS_CACHE_HIT_RATE_24H hit_rate_24h\n'* ]]
        [[ "$output" == *$'\nSTATUS_SHARE_EVICTED_FILES_TOTAL evicted_files_total\n'* ]]
}

@test "a key spelled out in cachectl or in a writer of the status fails it, naming where" {
        copy_tree
        sed -i 's/protocol_field_u64(c, STATUS_CACHE_SIZE_BYTES)/protocol_field_u64(c, "size_bytes")/' "$T/ctl/views/report-check.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 1 ]
        [[ "$output" == *'ctl/views/report-check.c:'*': the status key "size_bytes" spelled out'* ]]

        # a key made of a window
        copy_tree
        sed -i 's/STATUS_CACHE_HIT_RATE_24H/"hit_rate_24h"/' "$T/ctl/views/status-table.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 1 ]
        [[ "$output" == *'ctl/views/status-table.c:'*'"hit_rate_24h"'* ]]

        # the daemon's side
        copy_tree
        sed -i 's/json_object_object_add(o, STATUS_VOLUME_MOUNT,/json_object_object_add(o, "mount",/' "$T/daemon/space/space.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 1 ]
        [[ "$output" == *'daemon/space/space.c:'*'"mount"'* ]]
        copy_tree
        sed -i 's/JSON_ADD(o, STATUS_SCAN_WATCHES,/JSON_ADD(o, "watches",/' "$T/daemon/cache/cache-status.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 1 ]
        [[ "$output" == *'daemon/cache/cache-status.c:'*'"watches"'* ]]

        # any file of the daemon that includes the header is a writer
        copy_tree
        printf '#include "base/status-keys.h"\nstatic const char *k = "hit_rate_7d";\n' >> "$T/daemon/insight/history.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 1 ]
        [[ "$output" == *'daemon/insight/history.c:'*'"hit_rate_7d"'* ]]

        # In a comment, or marked as no key, it is no key.
        copy_tree
        echo '/* a cache'"'"'s "size_bytes" */' >> "$T/ctl/views/report-metrics.c"
        printf '/*\n * "mount"\n */\n' >> "$T/daemon/space/space.c"
        echo 'static const char *reason = "pressure";   /* not a status key */' >> "$T/daemon/space/space.c"
        run "$T/tests/check-status-keys"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
}

# The status's objects a macro's key belongs to, as a jq path ("trim": the
# values of a trim result).
object_of() {
        case $1 in
        STATUS_CACHES | STATUS_VOLUMES | STATUS_REMOTES | STATUS_READY | STATUS_VERSION) echo '.' ;;
        STATUS_WINDOW_*) echo '.caches[].working_set_bytes' ;;
        STATUS_CACHE_*) echo '.caches[]' ;;
        STATUS_KIND_*) echo '.caches[].kinds[]' ;;
        STATUS_SCAN_*) echo '.caches[].scan' ;;
        STATUS_RESCAN_*) echo '.caches[].scan.last' ;;
        STATUS_TRIM_*) echo trim ;;
        STATUS_MERGE_*) echo merge ;;
        STATUS_REGRET_*) echo '.caches[].regret' ;;
        STATUS_WRITER_*) echo '.caches[].writers[]' ;;
        STATUS_FAMILIES_*) echo '.caches[].key_families' ;;
        STATUS_FAMILY_*) echo '.caches[].key_families.families[]' ;;
        STATUS_REMOTE_ERRORS_*) echo '.caches[].remote_errors' ;;
        STATUS_VOLUME_*) echo '.volumes[]' ;;
        STATUS_REMOTE_*) echo '.remotes[]' ;;
        STATUS_REDIS_*) echo '.remotes[] | select(.kind == "redis")' ;;
        STATUS_SHARE_*) echo '.remotes[] | select(.kind == "file")' ;;
        STATUS_KEEPER_*) echo '.remotes[].kept_by' ;;
        STATUS_CLOCK_*) echo '.remotes[].clock_evidence' ;;
        *) return 1 ;;
        esac
}

# Sent only in a state this test does not bring about: the figures of a
# scan while it runs, a trim that met entries beyond the writers' table,
# the writer of entries without a header that parses.
# A merge's result, of a dry run here: why a merge stopped early, what a
# mix of key families costs (merge.bats brings those about).
EXEMPT="STATUS_SCAN_FILES STATUS_SCAN_DIRS STATUS_TRIM_BEYOND_TABLE_FILES STATUS_WRITER_HEADER"
EXEMPT+=" STATUS_MERGE_STOPPED STATUS_MERGE_MIXED_FILES STATUS_MERGE_MIXED_BYTES"

# keys_missing ROOT STATUS TRIM MERGE: each STATUS_* macro ROOT/ctl/*.c and ROOT/ctl/*/*.c uses
# whose key (by ROOT's header) is in none of the objects of the status (file
# STATUS) it names, or in every remote for STATUS_REMOTE_*, or in none of
# the trim result's (file TRIM) or the merge result's (file MERGE); fails if
# there is one.
keys_missing() {
        local root=$1 status=$2 trim=$3 merge=${4:-/dev/null} macro key path json test bad=0
        while read -r macro key; do
                case " $EXEMPT " in *" $macro "*) continue ;; esac
                path=$(object_of "$macro") || { echo "$macro: no object known for it"; bad=1; continue; }
                json=$status
                [ "$path" != trim ] || { json=$trim; path='.[]'; }
                [ "$path" != merge ] || { json=$merge; path='.'; }
                test=any
                [[ "$macro" != STATUS_REMOTE_* || "$macro" == STATUS_REMOTE_ERRORS_* ]] || test=all
                jq -e --arg k "$key" "[$path | objects | has(\$k)] | length > 0 and $test" "$json" > /dev/null ||
                        { echo "cachectl reads $macro (\"$key\"), not in $path"; bad=1; }
        done < <(join <(grep -oh 'STATUS_[A-Z0-9_]*' "$root"/ctl/*.c "$root"/ctl/*/*.c | sort -u) \
                      <("$root/tests/check-status-keys" --list "$root" | sort))
        return $bad
}

redis_stop() {
        [ -f "$BATS_TEST_TMPDIR/redis.pid" ] || return 0
        local pid
        pid=$(cat "$BATS_TEST_TMPDIR/redis.pid")
        kill "$pid" 2>/dev/null || return 0
        wait_for "! kill -0 $pid 2>/dev/null" 10
}

teardown() {
        stop_daemon
        redis_stop
        unmount_all
}

@test "every key cachectl reads is in a real daemon's status, in the object its macro names" {
        require_root
        command -v redis-server > /dev/null || skip "no redis-server"
        local sock=$BATS_TEST_TMPDIR/redis.sock share=$BATS_TEST_TMPDIR/sv/share
        redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' --appendonly no \
                --dir "$BATS_TEST_TMPDIR" --logfile "$BATS_TEST_TMPDIR/redis.log" \
                --pidfile "$BATS_TEST_TMPDIR/redis.pid" --daemonize yes 3>&-
        wait_for "redis-cli -s '$sock' ping 2>/dev/null | grep -q PONG" 10
        setup_volume
        mkdir -m 1777 "$CACHE"
        mount_tmpfs "$BATS_TEST_TMPDIR/sv"
        mkdir -m 1777 "$share" "$BATS_TEST_TMPDIR/nomount"
        export CCACHE_MAXSIZE=0
        compile "$CACHE" 3
        CCACHE_REMOTE_STORAGE="file:$share" compile "$BATS_TEST_TMPDIR/host" 3 g
        mkdir -m 1777 "$VOL/u"
        compile "$VOL/u" 2 m
        write_config_caches "{ name = \"t\"; path = \"$CACHE\"; max_size = \"1G\"; },
                { name = \"u\"; path = \"$VOL/u\"; max_size = \"1G\"; },
                { name = \"gone\"; path = \"$BATS_TEST_TMPDIR/nomount/c\"; max_size = \"1G\";
                  require_mount = \"$BATS_TEST_TMPDIR/nomount\"; }" \
                'volumes = { warn_free = "16M"; crit_free = "8M"; min_free = "1M"; full_within = "12h"; };' \
                "remotes = ( { name = \"s\"; url = \"file:$share\"; max_size = \"1G\"; },
                             { name = \"r\"; url = \"redis+unix:$sock\"; poll_interval = \"1s\"; timeout = \"2s\"; } );"
        start_ready 30
        wait_for "[ \"\$(status_jq '.remotes[] | select(.kind == \"redis\") | .last_ok')\" != null ]" 30
        wait_for "[ \"\$(status_jq '.remotes[] | select(.kind == \"file\") | .state')\" = ok ]" 30
        ctl trim t --to 1k
        wait_for "status_jq -e '.caches[] | select(.name == \"t\") | .last_trim'" 30
        compile "$CACHE" 2 h       # entries again, after the trim took them all
        wait_for "status_jq -e '.caches[] | select(.name == \"t\") | .writers[0].ccache_version | strings'" 30
        ctl status --json > "$BATS_TEST_TMPDIR/status.json"
        "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send $'{"cmd":"trim","caches":["t"],"to_bytes":1,"dry_run":true}\n' |
                head -n 1 | jq -e '.result' > "$BATS_TEST_TMPDIR/trim.json"
        "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send $'{"cmd":"merge","from":"u","into":"t","dry_run":true,"allow_mixed":false}\n' |
                grep '^{' | jq -ec 'select(.result) | .result' | tail -n 1 > "$BATS_TEST_TMPDIR/merge.json"
        jq -e '.dry_run == true and .files_total == 4' "$BATS_TEST_TMPDIR/merge.json"

        run keys_missing "$TOP" "$BATS_TEST_TMPDIR/status.json" "$BATS_TEST_TMPDIR/trim.json" "$BATS_TEST_TMPDIR/merge.json"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        # It reads many of them: the table, check, metrics, trim's report.
        [ "$(grep -oh 'STATUS_[A-Z0-9_]*' "$TOP"/ctl/*.c "$TOP"/ctl/*/*.c | sort -u | wc -l)" -gt 100 ]

        # It bites: a key cachectl would read where the daemon does not
        # write it (a redis remote's "policy" read from a cache), and a key
        # the daemon does not write at all.
        copy_tree
        sed -i 's|^#define STATUS_CACHE_MODE_OK .*|&\n#define STATUS_CACHE_POLICY "policy"\n#define STATUS_VOLUME_FILL "fill"|' \
                "$T/daemon/base/status-keys.h"
        echo 'static const char *planted[] = { STATUS_CACHE_POLICY, STATUS_VOLUME_FILL };' >> "$T/ctl/views/report-metrics.c"
        run keys_missing "$T" "$BATS_TEST_TMPDIR/status.json" "$BATS_TEST_TMPDIR/trim.json" "$BATS_TEST_TMPDIR/merge.json"
        [ "$status" -eq 1 ]
        [ "${#lines[@]}" -eq 2 ]
        [[ "$output" == *'cachectl reads STATUS_CACHE_POLICY ("policy"), not in .caches[]'* ]]
        [[ "$output" == *'cachectl reads STATUS_VOLUME_FILL ("fill"), not in .volumes[]'* ]]
        # and a key of the trim result that a trim result lacks
        jq 'map_values(del(.saved))' "$BATS_TEST_TMPDIR/trim.json" > "$BATS_TEST_TMPDIR/trim-spoilt.json"
        run keys_missing "$TOP" "$BATS_TEST_TMPDIR/status.json" "$BATS_TEST_TMPDIR/trim-spoilt.json" "$BATS_TEST_TMPDIR/merge.json"
        [ "$status" -eq 1 ]
        [ "$output" = 'cachectl reads STATUS_TRIM_SAVED ("saved"), not in .[]' ]
}
