#!/usr/bin/env bats
# cachectl metrics means what it says (issue 13, items 8 and 9): one daemon
# for the whole file, on a tmpfs volume with a cache that real ccache
# compiled into and a cache whose mount is missing. Each metric is checked
# against what cachectl(1) says it is (its type, the status field it is),
# against the cache and the volume themselves (du, find, ccache -s, statfs,
# the config), by promtool, against the Grafana dashboard's queries; and
# the textfile unit's command is run for real against the running daemon,
# then against the stopped one (the last tests: they stop it).
# tests/run: takes 26 s
load ../lib/helper

D=$BATS_FILE_TMPDIR
VOL=$D/vol
CACHE=$VOL/cache

ctl() {
        "$CTL" -s "$D/ck.sock" "$@"
}

setup_file() {
        require_root
        mkdir -p "$VOL" "$D/nomount" "$D/src"
        mount -t tmpfs -o size=64M cktest "$VOL"
        mkdir -m 1777 "$CACHE"
        cat > "$D/ck.conf" <<EOF
socket = "$D/ck.sock";
state_dir = "$D/state";
volumes = { warn_free = "16M"; crit_free = "8M"; warn_free_inodes = "1000"; crit_free_inodes = "500";
            full_within = "12h"; };
caches = (
  { name = "t"; path = "$CACHE"; max_size = "1G"; regret_alert = "15%"; silent_hit_rate = "20%";
    silent_min_calls = 7; silent_window = "2h"; },
  { name = "gone"; path = "$D/nomount/c"; max_size = "2G"; require_mount = "$D/nomount"; }
);
EOF
        # Six real compiles before the daemon starts (its scan finds them),
        # two more after (it sees them stored), then two hits.
        export CCACHE_MAXSIZE=0 CCACHE_DIR=$CACHE
        for i in 1 2 3 4 5 6 7 8; do
                printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" > "$D/src/f$i.c"
        done
        for i in 1 2 3 4 5 6; do ccache gcc -c "$D/src/f$i.c" -o "$D/src/f$i.o"; done
        # ccache's counters fed every second, not every 10 s: the hit rates
        # below come sooner (cachekeeperd.8, ENVIRONMENT)
        CACHEKEEPER_TEST_FEED=1s "$CKD" -c "$D/ck.conf" 2> "$D/daemon.log" &
        export DAEMON_PID=$!
        wait_for "[ \"\$(ctl status --json 2>/dev/null | jq -r .ready)\" = true ]" 20
        for i in 7 8; do ccache gcc -c "$D/src/f$i.c" -o "$D/src/f$i.o"; done
        for i in 1 2; do ccache gcc -c "$D/src/f$i.c" -o "$D/src/f$i.o"; done
        # The daemon has seen the stores, and ccache's stats show the hits.
        wait_for "[ \"\$(ctl status --json | jq '.caches[0] | [.stored_files_total, .hits] | tostring')\" = '\"[4,2]\"' ]" 20
        # ... and has fed them to its activity history (the hit rates).
        wait_for "ctl status --json | jq -e '.caches[0].hit_rate_1h != null' > /dev/null" 30
        # ... and the figures it counts at most every 5 s (the oldest entry: the
        # hits moved two) have caught up.
        wait_for "[ \"\$(ctl status --json | jq .caches[0].oldest_entry_mtime)\" = \"\$(find '$CACHE' -mindepth 3 -type f -name '*[RM]' -printf '%T@\n' | sort -n | head -1 | cut -d. -f1)\" ]" 20
        # One reading for the tests, which compare it with what they measure.
        ctl metrics > "$D/metrics"
        ctl status --json > "$D/status.json"
}

teardown_file() {
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID"
                wait "$DAEMON_PID" 2>/dev/null || true
        fi
        umount -l "$VOL" 2>/dev/null || true
}

# The value of sample $1 (a whole line's left side, labels included).
sample() {
        awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$D/metrics"
}


@test "every family is typed as cachectl(1) says, and every sample is the status field the page names for it" {
        /usr/bin/python3 "$TOP/tests/prometheus/metrics-vs-page.py" "$TOP/ctl/cachectl.1" "$D/metrics" "$D/status.json"
        [ "$(sample cachekeeper_up)" = 1 ]
        grep -qx 'cachekeeper_build_info{version="'"$("$CKD" --version | awk '{ print $2 }')"'",cachectl_version="'"$(ctl --version | awk '{ print $2 }')"'"} 1' "$D/metrics"

        # The check is not blind: a page that names the wrong field, or the wrong type, fails it.
        sed 's/^Gauge, bytes: status \\fBsize_bytes\\fR/Gauge, bytes: status \\fBentry_bytes\\fR/' "$TOP/ctl/cachectl.1" > "$D/bad.1"
        run /usr/bin/python3 "$TOP/tests/prometheus/metrics-vs-page.py" "$D/bad.1" "$D/metrics" "$D/status.json"
        [ "$status" -eq 1 ]
        [[ "$output" == *'cachekeeper_cache_size_bytes{'*'status says'* ]]
        sed 's/^Counter, calls: status \\fBhits\\fR/Gauge, calls: status \\fBhits\\fR/' "$TOP/ctl/cachectl.1" > "$D/bad.1"
        run /usr/bin/python3 "$TOP/tests/prometheus/metrics-vs-page.py" "$D/bad.1" "$D/metrics" "$D/status.json"
        [ "$status" -eq 1 ]
        [[ "$output" == *'cachekeeper_cache_hits_total: the page says gauge, TYPE says counter'* ]]
}

@test "the figures are the cache's and the volume's own: du, find, ccache's stats, statfs, the config" {
        # Size as du counts it (tmpfs gives directories no blocks), files and entries as find counts them.
        [ "$(sample 'cachekeeper_cache_size_bytes{cache="t"}')" = "$(du -sB1 "$CACHE" | cut -f1)" ]
        [ "$(sample 'cachekeeper_cache_files{cache="t"}')" = "$(find "$CACHE" -type f | wc -l)" ]
        entries=$(find "$CACHE" -mindepth 3 -type f -name '*[RM]' | wc -l)
        [ "$entries" -eq 16 ]                                    # 8 compiles: a result and a manifest each
        [ "$(sample 'cachekeeper_cache_entry_files{cache="t"}')" = "$entries" ]
        [ "$(sample 'cachekeeper_cache_entry_bytes{cache="t"}')" = \
          "$(find "$CACHE" -mindepth 3 -type f -name '*[RM]' -printf '%b\n' | awk '{ s += $1 * 512 } END { print s }')" ]
        [ "$(sample 'cachekeeper_cache_oldest_entry_timestamp_seconds{cache="t"}')" = \
          "$(find "$CACHE" -mindepth 3 -type f -name '*[RM]' -printf '%T@\n' | sort -n | head -1 | cut -d. -f1)" ]
        # ccache's own counters.
        stats=$(CCACHE_DIR=$CACHE ccache --print-stats)
        hits=$(awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { s += $2 } END { print s }' <<<"$stats")
        [ "$hits" -eq 2 ]
        [ "$(sample 'cachekeeper_cache_hits_total{cache="t"}')" = "$hits" ]
        [ "$(sample 'cachekeeper_cache_misses_total{cache="t"}')" = "$(awk '$1 == "cache_miss" { print $2 }' <<<"$stats")" ]
        # The hit rate of the calls it saw: 2 misses and 2 hits since it started.
        [ "$(sample 'cachekeeper_cache_hit_ratio{cache="t",window="1h"}')" = 0.5 ]
        # The stores the daemon saw: the two compiles after its scan, 2 entries each.
        [ "$(sample 'cachekeeper_cache_stored_files_total{cache="t"}')" = 4 ]
        [ "$(sample 'cachekeeper_cache_max_size_bytes{cache="t"}')" = 1000000000 ]
        [ "$(sample 'cachekeeper_cache_mode_ok{cache="t"}')" = 1 ]
        # The volume as statfs has it (tmpfs: available = free).
        read -r blocks bsize avail inodes ifree < <(stat -f -c '%b %S %a %c %d' "$VOL")
        [ "$(sample 'cachekeeper_volume_size_bytes{mountpoint="'"$VOL"'"}')" = $((blocks * bsize)) ]
        [ "$(sample 'cachekeeper_volume_avail_bytes{mountpoint="'"$VOL"'"}')" = $((avail * bsize)) ]
        [ "$(sample 'cachekeeper_volume_files{mountpoint="'"$VOL"'"}')" = "$inodes" ]
        [ "$(sample 'cachekeeper_volume_files_avail{mountpoint="'"$VOL"'"}')" = "$ifree" ]
        # The thresholds as configured.
        [ "$(sample 'cachekeeper_volume_warn_free_bytes{mountpoint="'"$VOL"'"}')" = 16000000 ]
        [ "$(sample 'cachekeeper_volume_crit_free_bytes{mountpoint="'"$VOL"'"}')" = 8000000 ]
        [ "$(sample 'cachekeeper_volume_warn_free_files{mountpoint="'"$VOL"'"}')" = 1000 ]
        [ "$(sample 'cachekeeper_volume_crit_free_files{mountpoint="'"$VOL"'"}')" = 500 ]
        [ "$(sample 'cachekeeper_volume_full_within_seconds{mountpoint="'"$VOL"'"}')" = 43200 ]
        ! grep -q '^cachekeeper_volume_min_free_bytes{' "$D/metrics" || false     # not set: absent
        [ "$(sample 'cachekeeper_volume_alert_level{mountpoint="'"$VOL"'"}')" = 0 ]
        [ "$(sample 'cachekeeper_cache_regret_alert_ratio{cache="t"}')" = 0.15 ]
        [ "$(sample 'cachekeeper_cache_silent_hit_ratio{cache="t"}')" = 0.2 ]
        [ "$(sample 'cachekeeper_cache_silent_window_seconds{cache="t"}')" = 7200 ]
        [ "$(sample 'cachekeeper_cache_silent_min_calls{cache="t"}')" = 7 ]
        [ "$(sample 'cachekeeper_cache_alarm{cache="t",alarm="cache-cap-small"}')" = 0 ]
        grep -qx 'cachekeeper_cache_info{cache="t",path="'"$CACHE"'",mountpoint="'"$VOL"'"} 1' "$D/metrics"
}

@test "an unavailable cache: no size samples (not 0), cachekeeper_cache_available 0, its cap still; volumes labelled mountpoint" {
        [ "$(jq -r '.caches[1].state' "$D/status.json")" = unavailable ]
        [ "$(sample 'cachekeeper_cache_available{cache="gone"}')" = 0 ]
        [ "$(sample 'cachekeeper_cache_available{cache="t"}')" = 1 ]
        [ "$(sample 'cachekeeper_cache_max_size_bytes{cache="gone"}')" = 2000000000 ]
        for m in size_bytes files entry_bytes entry_files hits_total misses_total oldest_entry_timestamp_seconds \
                 working_set_bytes working_set_files mode_ok scanning; do
                ! grep -q "^cachekeeper_cache_$m{cache=\"gone\"" "$D/metrics" || { echo "$m sampled"; false; }
        done
        grep -qx 'cachekeeper_cache_info{cache="gone",path="'"$D/nomount/c"'"} 1' "$D/metrics"
        ! grep -q '{mount=' "$D/metrics" || false
        grep -q '^cachekeeper_volume_avail_bytes{mountpoint="/' "$D/metrics"
}

@test "promtool check metrics passes on the live output and on a down daemon's" {
        run promtool check metrics < "$D/metrics"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        run --separate-stderr "$CTL" -s "$D/none.sock" metrics
        [ "$status" -eq 3 ]
        [ "$(grep -v '^#' <<<"$output")" = "cachekeeper_up 0" ]
        run promtool check metrics <<<"$output"
        [ "$status" -eq 0 ]
}

@test "every metric the shipped alert rules query is in the live output" {
        queried=$(/usr/bin/python3 -c 'import sys, yaml
for g in yaml.safe_load(open(sys.argv[1]))["groups"]:
    for r in g["rules"]: print(r["expr"])' "$TOP/etc/prometheus/cachekeeper-rules.yml" |
                  grep -oE 'cachekeeper_[a-z0-9_]+' | sort -u)
        [ "$(wc -l <<<"$queried")" -ge 10 ]
        missing=$(comm -23 <(echo "$queried") <(sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' "$D/metrics" | sort -u))
        [ -z "$missing" ] || { echo "queried but not exported: $missing"; false; }
        # The alarms the rules select by label are those the daemon exports.
        for a in $(grep -oE 'alarm="[a-z-]+"' "$TOP/etc/prometheus/cachekeeper-rules.yml" | sort -u); do
                grep -q "^cachekeeper_cache_alarm{cache=\"t\",$a} " "$D/metrics" || { echo "no $a"; false; }
        done
}

@test "every metric the Grafana dashboard queries is in the live output" {
        dash=$TOP/etc/grafana/cachekeeper.json
        jq -e '.panels | length >= 6' "$dash"
        # the datasource is a variable of the dashboard: no import input to fill that nothing uses
        jq -e 'has("__inputs") | not' "$dash"
        ! grep -q 'DS_PROMETHEUS' "$dash" || false
        queried=$(jq -r '.. | strings' "$dash" | grep -oE 'cachekeeper_[a-z0-9_]+' | sort -u)
        [ "$(wc -l <<<"$queried")" -ge 10 ]
        exported=$(sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' "$D/metrics")
        missing=$(comm -23 <(echo "$queried") <(sort -u <<<"$exported"))
        [ -z "$missing" ] || { echo "queried but not exported: $missing"; false; }
        # ... and has samples in it, for the panels' labels.
        for m in cachekeeper_cache_size_bytes cachekeeper_cache_hit_ratio cachekeeper_cache_working_set_bytes \
                 cachekeeper_cache_regret_share cachekeeper_volume_avail_bytes; do
                grep -q "^$m{" "$D/metrics" || { echo "no sample of $m"; false; }
        done
        # The panels the issue asks for, by title.
        for t in Size Hit Working Regret Volume Redis; do
                jq -e --arg t "$t" '[.panels[].title | select(test($t))] | length > 0' "$dash" > /dev/null ||
                        { echo "no panel titled $t"; false; }
        done
}

# The unit pair, installed by make install with its paths substituted.
install_units() {
        P=$D/p
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" B="$CK_BUILD" install DESTDIR= \
                PREFIX="$P/usr" SYSCONFDIR="$P/etc" > /dev/null
        UNITS=$P/usr/lib/systemd/system
}

# The service's ExecStart, run as systemd would: its Environment= and $1
# as CACHEKEEPER_TEXTFILE, cachectl on the test's socket.
run_service() {
        local cmd
        cmd=$(sed -n 's/^ExecStart=//p' "$UNITS/cachekeeper-metrics.service")
        [[ "$cmd" == "$P/usr/bin/cachectl "* ]]
        run --separate-stderr env CACHEKEEPER_SOCKET="$D/ck.sock" CACHEKEEPER_TEXTFILE="$1" \
                sh -c "exec ${cmd//\$\{CACHEKEEPER_TEXTFILE\}/\"\$CACHEKEEPER_TEXTFILE\"}"
}

@test "the textfile units: systemd-analyze verify prints nothing; the service writes the file atomically, 0644" {
        install_units
        run systemd-analyze verify --man=no "$UNITS/cachekeeper-metrics.service" "$UNITS/cachekeeper-metrics.timer"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        grep -qx 'Environment=CACHEKEEPER_TEXTFILE=/var/lib/prometheus/node-exporter/cachekeeper.prom' \
                "$UNITS/cachekeeper-metrics.service"
        grep -qx 'ReadWritePaths=/var/lib/prometheus/node-exporter' "$UNITS/cachekeeper-metrics.service"
        grep -qx 'SuccessExitStatus=3' "$UNITS/cachekeeper-metrics.service"
        grep -qx 'WantedBy=timers.target' "$UNITS/cachekeeper-metrics.timer"

        mkdir -p "$D/textfile"
        F=$D/textfile/cachekeeper.prom
        echo 'cachekeeper_up 1 # an old one' > "$F"
        ino=$(stat -c %i "$F")
        run_service "$F"
        [ "$status" -eq 0 ]
        [ "$(stat -c %a "$F")" = 644 ]
        [ "$(stat -c %i "$F")" != "$ino" ]                       # replaced by a rename, not rewritten
        [ "$(ls -A "$D/textfile")" = cachekeeper.prom ]           # no temporary file left
        grep -qx 'cachekeeper_up 1' "$F"
        grep -q '^cachekeeper_cache_size_bytes{cache="t"} ' "$F"
        promtool check metrics < "$F"
        # A reader never sees a partial file: the bytes at any rename are a whole exposition
        # (written again until no figure moved between the file and the look: under load the
        # daemon may still be counting the set-up's last entries).
        same_as_live() {
                run_service "$F" && diff <(grep -v '^cachekeeper_volume_\(avail\|files_avail\)' "$F") \
                        <(ctl metrics | grep -v '^cachekeeper_volume_\(avail\|files_avail\)')
        }
        wait_for same_as_live 20
}

@test "the textfile units, daemon stopped: the file is removed (never a stale healthy one), exit 3 which the unit takes as success" {
        install_units
        F=$D/textfile/cachekeeper.prom
        mkdir -p "$D/textfile"
        run_service "$F"
        [ "$status" -eq 0 ]
        [ -s "$F" ]
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID" || true
        run_service "$F"
        [ "$status" -eq 3 ]
        [ ! -e "$F" ]
        [ -z "$(ls -A "$D/textfile")" ]
        [[ "$stderr" == *"cachectl: removed $F: the daemon did not answer"* ]]
        # Again: nothing to remove, quietly the same.
        run_service "$F"
        [ "$status" -eq 3 ]
        [ ! -e "$F" ]
        # Without --output: cachekeeper_up 0 alone on stdout, exit 3.
        run --separate-stderr ctl metrics
        [ "$status" -eq 3 ]
        [ "$(grep -v '^#' <<<"$output")" = "cachekeeper_up 0" ]
}
