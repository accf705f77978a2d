#!/usr/bin/env bats
# Activity and its history (issue 11): ccache's hit rate over 1 h, 24 h and
# 7 d from real compiles with real ccache, in status --json, the status
# table and the metrics; the history in state_dir surviving a restart; and a
# bad history file reported once, set aside, the daemon starting all the same.
# tests/run: alongside
load ../lib/helper

setup() {
        require_root
        CACHE=$BATS_TEST_TMPDIR/cache
        STATE=$BATS_TEST_TMPDIR/state
        mkdir -m 1777 "$CACHE"
        # ccache's own cleanup stays out of it.
        export CCACHE_MAXSIZE=0
        write_config 1G "" "state_dir = \"$STATE\";"
}

teardown() {
        stop_daemon
}

# ccache's own hit rate of $CACHE since it was made: hits / (hits + misses).
ccache_rate() {
        CCACHE_DIR=$CACHE ccache --print-stats |
                awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
                     $1 == "cache_miss" { m += $2 } END { if (h + m) printf "%.6f\n", h / (h + m) }'
}

# Waits (up to $2 s, default 60: the counters are fed every 10 s) until the
# daemon's hit_rate_1h of cache t is within 0.001 of $1.
wait_rate() {
        wait_for "status_jq --argjson w $1 -e '.caches[0].hit_rate_1h as \$r | \$r != null and (\$r - \$w | fabs) < 0.001' >/dev/null" "${2:-60}" || {
                echo "hit_rate_1h: $(cache_field t hit_rate_1h), want $1" >&2
                return 1
        }
}

# A cold build of 10 files (all misses), then a warm rebuild (all hits).
cold_and_warm() {
        compile "$CACHE" 10
        wait_rate 0
        compile "$CACHE" 10
        [ "$(ccache_rate)" = 0.500000 ]
        wait_rate 0.5
}

@test "hit rates: null before any compile, 0 after a cold build, ccache's own after a warm rebuild" {
        start_ready
        for w in 1h 24h 7d; do
                status_jq -e ".caches[0] | has(\"hit_rate_$w\") and .hit_rate_$w == null"
        done
        run ctl status
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == *"HIT 1h/24h"* ]]
        [[ "${lines[1]}" == *" -/- "* ]]
        ! ctl metrics | grep -q '^cachekeeper_cache_hit_ratio{' || false

        cold_and_warm
        [ "$(cache_field t hit_rate_24h)" = 0.5 ]
        [ "$(cache_field t hit_rate_7d)" = 0.5 ]
        run ctl status
        [[ "${lines[1]}" == *" 50%/50% "* ]]
        metrics=$(ctl metrics)
        grep -qx 'cachekeeper_cache_hit_ratio{cache="t",window="1h"} 0.5' <<<"$metrics"
        grep -qx 'cachekeeper_cache_hit_ratio{cache="t",window="7d"} 0.5' <<<"$metrics"
        grep -qx '# TYPE cachekeeper_cache_hit_ratio gauge' <<<"$metrics"
}

@test "the history survives a restart, in an atomically written file of state_dir" {
        [ ! -e "$STATE" ]
        start_ready
        [ -d "$STATE" ]
        [ "$(stat -c %a "$STATE")" = 755 ]
        cold_and_warm
        stop_daemon
        [ -f "$STATE/t.history" ]
        /usr/bin/python3 -c 'import zlib,sys; d=open(sys.argv[1],"rb").read(); sys.exit(0 if zlib.crc32(d[:-4]) == int.from_bytes(d[-4:], "little") else 1)' "$STATE/t.history"
        [ -z "$(find "$STATE" -name '*.tmp.*')" ]

        start_ready
        # Loaded at start: no wait, no compile since.
        [ "$(cache_field t hit_rate_1h)" = 0.5 ]
        [ "$(cache_field t hit_rate_7d)" = 0.5 ]
        ! grep -q "History file" "$BATS_TEST_TMPDIR/daemon.log" || false
}

# corrupt KIND FILE: damages a good history file in one way.
corrupt() {
        case $1 in
        truncated) truncate -s 1000 "$2" ;;
        garbage) head -c "$(stat -c %s "$2")" /dev/urandom > "$2" ;;
        version) printf '\x07' | dd of="$2" bs=1 seek=8 conv=notrunc status=none ;;
        huge) truncate -s 100M "$2" ;;
        esac
}

@test "a truncated, garbage, wrong-version or huge history file: reported once, set aside, history starts empty" {
        start_ready
        cold_and_warm
        stop_daemon
        cp "$STATE/t.history" "$BATS_TEST_TMPDIR/good.history"
        declare -A reason=([truncated]="is truncated (1000 of" [garbage]="is not a history file (no magic)"
                           [version]="has format version 7, this build reads 1"
                           [huge]="is too big (104857600 bytes, at most")
        for kind in truncated garbage version huge; do
                rm -f "$STATE"/t.history*
                cp "$BATS_TEST_TMPDIR/good.history" "$STATE/t.history"
                corrupt "$kind" "$STATE/t.history"
                start_ready
                # One message, naming the file, the reason and where it went.
                [ "$(grep -c "History file" "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ] || {
                        echo "$kind:"; cat "$BATS_TEST_TMPDIR/daemon.log"; false; }
                line=$(grep "History file" "$BATS_TEST_TMPDIR/daemon.log")
                [[ "$line" == *"Cache t: History file 't.history' ${reason[$kind]}"* ]] || { echo "$kind: $line"; false; }
                [[ "$line" == *"set aside as 't.history.corrupt-"*"(in $STATE)"* ]] || { echo "$kind: $line"; false; }
                aside=$(ls "$STATE" | grep '^t\.history\.corrupt-')
                [ "$(wc -l <<<"$aside")" -eq 1 ]
                # Set aside as it was, not deleted; history starts empty; status works.
                [ "$(stat -c %s "$STATE/$aside")" -ne "$(stat -c %s "$BATS_TEST_TMPDIR/good.history")" ] ||
                        ! cmp -s "$STATE/$aside" "$BATS_TEST_TMPDIR/good.history" || false
                [ "$(cache_field t hit_rate_1h)" = null ]
                [ "$(cache_field t state)" = ok ]
                stop_daemon
        done
}

@test "a history file dated in the future: what was dropped is said, the rest loaded" {
        # A version-1 file whose newest minute is 2 h ahead, every bucket of
        # it holding one store: as a clock that ran ahead would leave it.
        mkdir -p "$STATE"
        /usr/bin/python3 - "$STATE/t.history" <<'PY'
import struct, sys, time, zlib
head = int(time.time()) // 60 + 120
minutes, hours = 1440, 2160
bucket = struct.pack("<Q4Q11I", 0, 10, 0, 0, 0, 1, *([0] * 10))
payload = struct.pack("<QQQ", head, head - 60 * hours, 1) + bucket * (minutes + hours)
header = b"\x89CKHIST\n" + struct.pack("<6I", 1, 32, minutes, hours, len(bucket), len(payload))
data = header + payload
open(sys.argv[1], "wb").write(data + struct.pack("<I", zlib.crc32(data)))
PY
        start_ready
        run grep "History file" "$BATS_TEST_TMPDIR/daemon.log"
        echo "$output"
        [ "${#lines[@]}" -eq 1 ]
        # its 120 minutes after now (or 119, if a minute turned since), and
        # the hours after this one: 1 or 2
        [[ "$output" =~ "Cache t: History file 't.history' is dated 1"(19|20)" min in the future (its newest minute ".*" UTC): dropped the 1"(19|20)" minute and "[12]" hour buckets with figures from then, spanning ".*" UTC; the rest is loaded (in $STATE)." ]]
        # the rest is there: a store in each of the last 24 hours up to now
        [ "$(ctl history t --json --hours 24 | jq '[.buckets[].stores] | length')" -eq 24 ]
        [ -f "$STATE/t.history" ]
        ! ls "$STATE" | grep -q corrupt || false
}

@test "a state_dir that cannot be made costs the history, never the start" {
        write_config 1G "" "state_dir = \"$BATS_TEST_TMPDIR/no/such/state\";"
        start_ready
        grep -q "Cannot create state_dir $BATS_TEST_TMPDIR/no/such/state, history is not kept" "$BATS_TEST_TMPDIR/daemon.log"
        [ "$(cache_field t hit_rate_1h)" = null ]
        stop_daemon
        [ ! -e "$BATS_TEST_TMPDIR/no" ]
}

# fake_zero_half FILE...: what ccache -z leaves in each stats FILE it has
# done (every call counter 0, files and size kept, a newer zeroed timestamp
# in line 31), written as ccache writes it (a temporary renamed over it).
fake_zero_half() {
        /usr/bin/python3 - "$@" <<'PY'
import os, sys, time
for path in sys.argv[1:]:
    lines = open(path).read().split("\n")
    lines = [l for l in lines if l != ""]
    lines += ["0"] * (49 - len(lines))
    out = [v if i in (11, 12, 13, 14) or i >= 49 else "0" for i, v in enumerate(lines)]
    out[31] = str(int(time.time()) - 100)
    tmp = path + ".tmp.XXXXXX.tmp"
    open(tmp, "w").write("\n".join(out) + "\n")
    os.rename(tmp, path)
PY
}

@test "a ccache -z seen half done is counted once it is over: no spike of the files not zeroed yet" {
        start_daemon -d
        wait_ready
        cold_and_warm
        # ccache 4.7 counts a store's calls in the level-1 stats file, the
        # others in a level-2 one: the misses are in level-1 files, the hits
        # in level-2 ones. Half a -z: the level-2 files done, not the others.
        kill -STOP "$DAEMON_PID"
        fake_zero_half $(find "$CACHE" -mindepth 3 -maxdepth 3 -name stats)
        kill -CONT "$DAEMON_PID"
        wait_for "grep -q 'Cache t: ccache -z is under way' '$BATS_TEST_TMPDIR/daemon.log'" 60
        CCACHE_DIR=$CACHE ccache -z >/dev/null
        # 10 misses and 10 hits before, none in between (the misses of the
        # files not zeroed are no new calls), 10 hits after.
        compile "$CACHE" 10
        wait_rate 0.666667
}
