#!/usr/bin/env bats
# Redis remotes (issue 14), for real: one redis-server for the file, on a
# Unix socket in the file's directory (no persistence), each test setting
# its maxmemory and policy; real ccache compiles with remote_storage storing
# into it; the daemon polls every second. noeviction fills until ccache's
# stores fail: remote-policy and remote-errors fire; allkeys-lru stays
# healthy and evicts; a killed server is remote-unreachable, and recovers
# when it is back; a server that accepts and never answers is unreachable
# too, and status keeps answering; a password_file with wrong modes is
# refused with FILE:LINE, and the secret is never shown. Attacks (issue
# 20): a FIFO planted at password_file, a listener nobody bound on the
# Redis port (it gets no password; real Redis as root does), a fake server
# (tests/helpers/fake-redis.py) sending a 4 GB string, a 200M-element
# array, or SCANs 1.8 s apart.
# tests/run: alongside
load ../lib/helper

REDIS_SOCK=$BATS_FILE_TMPDIR/redis.sock

redis_start() {
        redis-server --port 0 --unixsocket "$REDIS_SOCK" --unixsocketperm 700 --save '' --appendonly no \
                --dir "$BATS_FILE_TMPDIR" --logfile "$BATS_FILE_TMPDIR/redis.log" \
                --pidfile "$BATS_FILE_TMPDIR/redis.pid" --daemonize yes 3>&-
        wait_for "redis-cli -s '$REDIS_SOCK' ping 2>/dev/null | grep -q PONG" 10
}

redis_stop() {
        local pid
        pid=$(cat "$BATS_FILE_TMPDIR/redis.pid" 2>/dev/null) || return 0
        kill "$pid" 2>/dev/null || return 0
        wait_for "! kill -0 $pid 2>/dev/null" 10
}

rcli() {
        redis-cli -s "$REDIS_SOCK" "$@"
}

setup_file() {
        [ "$(id -u)" -eq 0 ] || skip "needs root"
        command -v redis-server > /dev/null || skip "no redis-server"
        redis_start
}

teardown_file() {
        redis_stop
}

setup() {
        setup_compile_cache
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        # One line per run: EVENT LEVEL SUBJECT | MESSAGE.
        cat > "$BATS_TEST_TMPDIR/alert.sh" <<'EOS'
#!/bin/sh
echo "$CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL ${CACHEKEEPER_REMOTE:-$CACHEKEEPER_CACHE} | $CACHEKEEPER_MESSAGE" >> "$1"
EOS
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        [ -S "$REDIS_SOCK" ] || redis_start
        rcli config set requirepass '' > /dev/null
        rcli flushall > /dev/null
        export CCACHE_REMOTE_STORAGE="redis+unix:$REDIS_SOCK"
}

teardown() {
        # A daemon waiting in open() on a FIFO never sees its SIGTERM.
        if [ -n "${PWDIR:-}" ] && [ -n "${DAEMON_PID:-}" ] &&
                [ "$(cat "/proc/$DAEMON_PID/wchan" 2>/dev/null)" = wait_for_partner ]; then
                echo "the daemon waits in open() on the FIFO: killed" >&2
                kill -KILL "$DAEMON_PID"
        fi
        stop_daemon
        [ -z "${LISTENER:-}" ] || kill "$LISTENER" 2>/dev/null || true
        [ -z "${PWDIR:-}" ] || rm -rf "$PWDIR"
        [ -z "${FAKE:-}" ] || kill "$FAKE" 2>/dev/null || true
        [ -z "${TCP_REDIS:-}" ] || kill "$(cat "$TCP_REDIS")" 2>/dev/null || true
}

# fake MODE: tests/helpers/fake-redis.py MODE on $BATS_TEST_TMPDIR/fake.sock
# (misbehaving once $BATS_TEST_TMPDIR/go exists), pid in FAKE.
fake() {
        /usr/bin/python3 "$TOP/tests/helpers/fake-redis.py" "$1" "$BATS_TEST_TMPDIR/fake.sock" "$BATS_TEST_TMPDIR/go" 3>&- &
        FAKE=$!
        wait_for "[ -S '$BATS_TEST_TMPDIR/fake.sock' ]" 10
}

# kB of the daemon's memory: vm VmRSS, vm VmHWM (the peak).
vm() {
        awk -v k="$1:" '$1 == k { print $2 }' "/proc/$DAEMON_PID/status"
}

# config REMOTE-SETTINGS [URL]: cache t, remote r polled every second
# (timeout $REMOTE_TIMEOUT, default 1s).
config() {
        write_config 1G 'remote_errors_window = "5m";' \
                "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" 'alert_min_interval = "0s";' \
                "remotes = ( { name = \"r\"; url = \"${2:-redis+unix:$REDIS_SOCK}\"; poll_interval = \"1s\"; timeout = \"${REMOTE_TIMEOUT:-1s}\"; $1 } );"
}

alerts() {
        if [ -e "$ALERTS" ]; then grep -c "^$1 " "$ALERTS" || true; else echo 0; fi
}

remote_field() {
        status_jq ".remotes[] | select(.name == \"r\") | .$1"
}

# big N PREFIX: N objects of 250 kB of random data each, compiled with
# ccache into cache t and its remote storage (in base64, which ccache's
# compression brings back to about 250 kB).
big() {
        local src=$BATS_TEST_TMPDIR/src
        mkdir -p "$src"
        for i in $(seq 1 "$1"); do
                { printf 'const char %s%d[] = "' "$2" "$i"; head -c 250000 /dev/urandom | base64 -w0; printf '";\n'; } > "$src/$2$i.c"
                CCACHE_DIR=$CACHE ccache gcc -c "$src/$2$i.c" -o "$src/$2$i.o" || return 1
        done
}

used_memory() {
        rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'
}

remote_errors() {
        CCACHE_DIR=$CACHE ccache --print-stats | awk '$1 == "remote_storage_error" { print $2 }'
}

@test "noeviction: stores fail once full: remote-policy and remote-errors fire, check says so" {
        rcli config set maxmemory 8mb > /dev/null
        rcli config set maxmemory-policy noeviction > /dev/null
        # Once a store failed, less than 1M of its 8.4M is free: critical.
        config 'warn_free = "2M"; crit_free = "1M";'
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        wait_for "[ \$(alerts 'remote-policy warning') -eq 1 ]" 10
        grep -q '^remote-policy warning r | Remote r (redis+unix:.*) has maxmemory-policy noeviction, which evicts none of ccache.s keys' "$ALERTS"
        [ "$(remote_field policy)" = noeviction ]
        [ "$(remote_field evicts)" = false ]
        [ "$(remote_field maxmemory_bytes)" -eq 8388608 ]

        # Fill it: 34 objects of 250 kB are more than 8 MB. Until a store
        # failed with the server full (not for some other reason).
        for round in $(seq 1 15); do
                big 4 "r$round"
                [ "$(remote_errors)" -eq 0 ] || [ "$(used_memory)" -lt 7800000 ] || break
        done
        [ "$(remote_errors)" -gt 0 ]
        [ "$(used_memory)" -ge 7800000 ]
        # ccache's counters are fed every 10 s.
        wait_for "[ \$(alerts 'remote-errors warning') -eq 1 ]" 30
        grep -q "^remote-errors warning t | Cache t: ccache counted [0-9]* remote storage errors\? or timeouts\? in the last 5m" "$ALERTS"
        [ "$(cache_field t remote_errors.alert)" = true ]
        [ "$(cache_field t remote_errors.errors)" -gt 0 ]
        # Memory at the cap under a non-evicting policy: remote-level too.
        wait_for "[ \"\$(remote_field level)\" = critical ]" 10 || { status_jq '.remotes[0]' >&2; false; }
        # alert_command runs after the status changed: wait for its line.
        wait_for "[ \$(alerts 'remote-level critical') -eq 1 ]" 10
        grep -q '^remote-level critical r | Remote r (.*) memory critical: [0-9]* of maxmemory 8388608 bytes used, policy noeviction$' "$ALERTS"
        wait_for "[ \"\$(remote_field ccache_keys)\" = \"\$(rcli --scan --pattern 'ccache:*' | wc -l)\" ]" 10
        [ "$(remote_field ccache_keys)" -gt 10 ]

        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == *"remote r memory critical: "* ]]
        [[ "$output" == *"remote r will fill and refuse stores (maxmemory 8.4M, policy noeviction)"* ]]
        [[ "$output" == *"cache t: "*" remote storage errors in 300s"* ]]
        ctl metrics | grep -q '^cachekeeper_remote_evicts{remote="r"} 0$'
        ctl metrics | grep -q '^cachekeeper_remote_used_memory_bytes{remote="r"} [0-9]'
        ctl metrics | grep -q '^cachekeeper_cache_remote_errors{cache="t"} [1-9]'
        ctl status | grep -q '^r  *ok  .*noeviction'

        # Evicting again: remote-policy recovers.
        rcli config set maxmemory-policy allkeys-lru > /dev/null
        wait_for "[ \$(alerts 'remote-policy ok') -eq 1 ]" 10
        grep -q '^remote-policy ok r | Remote r .* evicts again: maxmemory 8388608, maxmemory-policy allkeys-lru\.$' "$ALERTS"
}

@test "allkeys-lru: filling it evicts, stores go on, no remote-policy" {
        rcli config set maxmemory 8mb > /dev/null
        rcli config set maxmemory-policy allkeys-lru > /dev/null
        config
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        [ "$(remote_field evicts)" = true ]
        before=$(remote_field evicted_keys_total)
        big 40 a
        wait_for "[ \$(remote_field evicted_keys_total) -gt $before ]" 10
        [ "$(remote_field 'evicted_keys."1h"')" -gt 0 ]
        [ "$(remote_errors)" -eq 0 ]
        [ "$(alerts remote-policy)" -eq 0 ]
        [ "$(alerts remote-level)" -eq 0 ]
        [ "$(remote_field level)" = ok ]
        run ctl check
        [ "$status" -eq 0 ]
        ctl metrics | grep -q '^cachekeeper_remote_evicts{remote="r"} 1$'
}

@test "a killed server is remote-unreachable; back, it recovers" {
        rcli config set maxmemory 8mb > /dev/null
        rcli config set maxmemory-policy allkeys-lru > /dev/null
        config
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        redis_stop
        wait_for "[ \$(alerts 'remote-unreachable critical') -eq 1 ]" 15
        grep -q "^remote-unreachable critical r | Remote r (redis+unix:$REDIS_SOCK) is unreachable: cannot connect: " "$ALERTS"
        [ "$(remote_field state)" = unreachable ]
        [ "$(remote_field reachable)" = false ]
        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == *"remote r unreachable: cannot connect: "* ]]
        ctl metrics | grep -q '^cachekeeper_remote_up{remote="r"} 0$'

        redis_start
        wait_for "[ \$(alerts 'remote-unreachable ok') -eq 1 ]" 15
        grep -q '^remote-unreachable ok r | Remote r (.*) answers again\.$' "$ALERTS"
        [ "$(remote_field state)" = ok ]
        [ "$(alerts 'remote-unreachable critical')" -eq 1 ]
}

@test "a server that accepts and never answers: remote-unreachable after the timeout, status answers meanwhile" {
        # A listening Unix socket whose connections are never read.
        /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(16)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$BATS_TEST_TMPDIR/mute.sock" 3>&- &
        LISTENER=$!
        wait_for "[ -S '$BATS_TEST_TMPDIR/mute.sock' ]" 5
        # A timeout of 4s: a loop that waited on the server would hold status
        # back that long.
        REMOTE_TIMEOUT=4s config '' "redis+unix:$BATS_TEST_TMPDIR/mute.sock"
        start_ready
        # The loop never waits on the server: status answers at once, a
        # round in flight or not (a generous bound on a loaded machine).
        for i in 1 2 3 4 5 6; do
                start=$(date +%s%N)
                ctl -t 5 status --json > /dev/null
                ms=$(( ($(date +%s%N) - start) / 1000000 ))
                [ "$ms" -lt 2500 ] || { echo "status took $ms ms" >&2; false; }
                sleep 0.5
        done
        wait_for "[ \$(alerts 'remote-unreachable critical') -eq 1 ]" 30
        grep -q '^remote-unreachable critical r | .* is unreachable: no answer within 4s (timeout)$' "$ALERTS"
        err=$(remote_field last_error)
        [ "$err" = "no answer within 4s (timeout)" ] || { echo "last_error: $err" >&2; false; }
}

@test "a SCAN whose cursor never ends: the round ends after 200,000 calls, the next poll comes, status answers" {
        # A fake server: the INFOs a poll asks, then SCAN cursors that never
        # come back to 0. Each connection's SCAN count goes to scans.log.
        /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(16)
info = b"# Memory\r\nused_memory:1000\r\nmaxmemory:8000000\r\nmaxmemory_policy:allkeys-lru\r\n" \
       b"evicted_keys:0\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\nconnected_clients:1\r\n"
def bulk(b): return b"$%d\r\n%s\r\n" % (len(b), b)
while True:
    c, _ = s.accept()
    buf, scans = b"", 0
    while True:
        d = c.recv(65536)
        if not d: break
        buf += d
        out = []
        while True:                     # whole commands: *N then N bulk strings
            if not buf.startswith(b"*"): buf = b""; break
            head = buf.find(b"\r\n")
            if head < 0: break
            n, pos, args = int(buf[1:head]), head + 2, []
            for _ in range(n):
                e = buf.find(b"\r\n", pos)
                if e < 0: break
                ln = int(buf[pos + 1:e]); pos = e + 2
                if len(buf) < pos + ln + 2: break
                args.append(buf[pos:pos + ln]); pos += ln + 2
            if len(args) < n: break
            buf = buf[pos:]
            cmd = args[0].upper()
            if cmd == b"SCAN": scans += 1; out.append(b"*2\r\n" + bulk(b"7") + b"*0\r\n")
            elif cmd == b"INFO": out.append(bulk(info))
            elif cmd == b"CONFIG": out.append(b"*2\r\n" + bulk(b"maxmemory-policy") + bulk(b"allkeys-lru"))
            else: out.append(b"+OK\r\n")
        if out: c.sendall(b"".join(out))
    c.close()
    with open(sys.argv[2], "a") as f: f.write("scans=%d\n" % scans)
' "$BATS_TEST_TMPDIR/endless.sock" "$BATS_TEST_TMPDIR/scans.log" 3>&- &
        LISTENER=$!
        wait_for "[ -S '$BATS_TEST_TMPDIR/endless.sock' ]" 5
        # round_timeout well past the time 200,000 calls take here.
        config 'round_timeout = "10m";' "redis+unix:$BATS_TEST_TMPDIR/endless.sock"
        start_ready
        ctl -t 5 status --json > /dev/null   # answers while the SCANs go on
        # The first round stops at the bound and closes its connection.
        wait_for "[ -s '$BATS_TEST_TMPDIR/scans.log' ]" 180
        [ "$(head -1 "$BATS_TEST_TMPDIR/scans.log")" = scans=200000 ]
        [ "$(remote_field state)" = ok ]
        [ "$(remote_field ccache_keys)" = null ]   # unknown, not a count of what was seen
        [ "$(remote_field scan_error)" = "SCAN stopped after 200000 calls (its cursor never came back to 0)" ]
        [ "$(remote_field used_memory_bytes)" -eq 1000 ]
        # ... and the polls go on: a second connection.
        wait_for "[ \$(remote_field polls_total) -ge 2 ]" 180
}

@test "password_file: wrong owner or modes refused with FILE:LINE; the secret never shows" {
        pw=$BATS_TEST_TMPDIR/redis.pass
        secret="s3cr3t-$RANDOM-never-shown"
        printf '%s\n' "$secret" > "$pw"
        chmod 0644 "$pw"
        config "password_file = \"$pw\";"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        line=$(grep -n password_file "$BATS_TEST_TMPDIR/ck.conf" | cut -d: -f1)
        [[ "$stderr" == "$BATS_TEST_TMPDIR/ck.conf:$line: password_file '$pw' must be owned by root and not readable by group or other"*"mode 0644" ]] || { echo "$stderr"; false; }
        chmod 0600 "$pw"
        chown 65534 "$pw"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"owned by uid 65534 with mode 0600" ]]
        chown 0 "$pw"
        ln -s "$pw" "$BATS_TEST_TMPDIR/link.pass"
        config "password_file = \"$BATS_TEST_TMPDIR/link.pass\";"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"link.pass' is not a regular file" ]]
        # A password in the URL itself is refused, without echoing it.
        config '' "redis://user:$secret@127.0.0.1:1"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"a password in the URL is refused: put it in password_file"* ]]
        [[ "$stderr" != *"$secret"* ]]

        # Root-only: accepted, used, and shown nowhere.
        rcli config set requirepass "$secret" > /dev/null
        config "password_file = \"$pw\";"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 0 ]
        [[ "$output" == *"password_file = \"$pw\";"* ]]
        [[ "$output$stderr" != *"$secret"* ]]
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        [ "$(remote_field used_memory_bytes)" -gt 0 ]
        # A wrong password: refused by the server, reported, still not shown.
        printf 'wrong-%s\n' "$secret" > "$pw"
        wait_for "[ \"\$(remote_field state)\" = unreachable ]" 10
        [[ "$(remote_field last_error)" == "the server refused: "* ]]
        printf '%s\n' "$secret" > "$pw"
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        stop_daemon
        ! grep -rq -- "$secret" "$BATS_TEST_TMPDIR/daemon.log" "$ALERTS" 2>/dev/null || false
        ! ctl status --json 2>/dev/null | grep -q -- "$secret" || false
        rcli -a "$secret" --no-auth-warning config set requirepass '' > /dev/null
}

@test "password_file: a FIFO planted by nobody in a directory it may write: refused at each poll, status answers" {
        # Outside the test's own directories, so that nobody can reach it.
        PWDIR=$(mktemp -d /tmp/ck-pw.XXXXXX)
        chmod 755 "$PWDIR"
        secret="s3cr3t-$RANDOM"
        printf '%s\n' "$secret" > "$PWDIR/redis.pass"
        chmod 600 "$PWDIR/redis.pass"
        rcli config set requirepass "$secret" > /dev/null
        config "password_file = \"$PWDIR/redis.pass\";"
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        # The directory given away (a mistake): its owner swaps the file for
        # a FIFO no one ever writes.
        chown 65534:65534 "$PWDIR"
        as_nobody sh -c 'rm -f "$1/redis.pass" && mkfifo -m 600 "$1/redis.pass"' sh "$PWDIR"
        [ -p "$PWDIR/redis.pass" ]
        polls=$(remote_field polls_total)
        wait_for "[ \$(remote_field polls_total) -ge $((polls + 3)) ]" 30
        [ "$(remote_field state)" = unreachable ]
        err=$(remote_field last_error)
        [[ "$err" == "password_file '$PWDIR/redis.pass' refused: is in directory '$PWDIR', owned by uid 65534, who could replace the file"* ]] || { echo "last_error: $err" >&2; false; }
        ctl -t 5 status > /dev/null
        # Given back to root, the FIFO is refused for what it is.
        chown 0:0 "$PWDIR"
        wait_for "[[ \"\$(remote_field last_error)\" == *\"redis.pass' refused: is not a regular file\" ]]" 15
        # At start too: -t refuses it (and never waits on it).
        run --separate-stderr timeout 20 "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"password_file '$PWDIR/redis.pass' is not a regular file" ]] || { echo "$stderr" >&2; false; }
        rcli -a "$secret" --no-auth-warning config set requirepass '' > /dev/null
}

@test "a listener nobody bound on the Redis port never gets the password: refused, said, alerted; real Redis as root gets it" {
        # The attacker's listener, from a world-readable copy, recording
        # every byte it receives into a file of its own.
        PWDIR=$(mktemp -d /tmp/ck-listen.XXXXXX)
        chmod 755 "$PWDIR"
        cp "$TOP/tests/helpers/fake-redis.py" "$PWDIR/"
        chmod 644 "$PWDIR/fake-redis.py"
        install -o 65534 -m 600 /dev/null "$PWDIR/got"
        # Not through as_nobody: $! must be the listener itself.
        setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$PWDIR/fake-redis.py" listen 0 "$PWDIR/got" \
                > "$BATS_TEST_TMPDIR/port" 3>&- &
        LISTENER=$!
        wait_for "[ -s '$BATS_TEST_TMPDIR/port' ]" 10
        port=$(cat "$BATS_TEST_TMPDIR/port")
        secret="s3cr3t-$RANDOM-for-redis-only"
        pw=$BATS_TEST_TMPDIR/redis.pass
        printf '%s\n' "$secret" > "$pw"
        chmod 600 "$pw"
        config "password_file = \"$pw\";" "redis://127.0.0.1:$port"
        start_ready
        wait_for "[ \"\$(remote_field state)\" = refused ]" 15 ||
                { echo "state $(remote_field state); the listener got: $(cat -v "$PWDIR/got")" >&2; false; }
        redis_uid=$(id -u redis 2>/dev/null || echo '')
        err=$(remote_field last_error)
        [[ "$err" == "the password was not sent: port 127.0.0.1:$port is held by uid 65534, not root or server_user redis"*"; another user may have taken it while Redis was down" ]] || { echo "last_error: $err" >&2; false; }
        wait_for "[ \$(alerts 'remote-auth-refused critical') -eq 1 ]" 10
        grep -q "^remote-auth-refused critical r | Remote r (redis://127.0.0.1:$port): the password was not sent: port 127.0.0.1:$port is held by uid 65534" "$ALERTS"
        [ "$(remote_field 'alerts | index("remote-auth-refused") != null')" = true ]
        run ctl check
        [ "$status" -eq 2 ]
        [[ "$output" == *"remote r refused: the password was not sent: "* ]]
        out=$(ctl status)
        grep -q "^r  *refused " <<<"$out"
        # the reason under the table, wrapped into 80 columns
        tr '\n' ' ' <<<"$out" | tr -s ' ' | grep -q "r: .*is held by uid 65534"
        ! awk 'length($0) > 80 { print; bad = 1 } END { exit !bad }' <<<"$out" || false
        # Several polls, and the listener saw connections but not a byte.
        polls=$(remote_field polls_total)
        wait_for "[ \$(remote_field polls_total) -ge $((polls + 2)) ]" 15
        [ ! -s "$PWDIR/got" ] || { echo "the listener got: $(cat -v "$PWDIR/got")" >&2; false; }
        [ "$(alerts 'remote-auth-refused critical')" -eq 1 ]
        [ "$(alerts remote-unreachable)" -eq 0 ]

        # The real server back on its port, as root: it gets AUTH and works,
        # and the alert recovers.
        kill "$LISTENER"
        wait "$LISTENER" 2>/dev/null || true
        LISTENER=
        TCP_REDIS=$BATS_TEST_TMPDIR/tcp-redis.pid
        redis-server --port "$port" --bind 127.0.0.1 --requirepass "$secret" --save '' --appendonly no \
                --dir "$BATS_TEST_TMPDIR" --pidfile "$TCP_REDIS" --logfile "$BATS_TEST_TMPDIR/tcp-redis.log" \
                --daemonize yes 3>&-
        wait_for "[ \"\$(remote_field state)\" = ok ]" 20 || { remote_field last_error; cat "$BATS_TEST_TMPDIR/tcp-redis.log"; } >&2
        [ "$(remote_field used_memory_bytes)" -gt 0 ]
        [ "$(remote_field last_error)" = null ]
        wait_for "[ \$(alerts 'remote-auth-refused ok') -eq 1 ]" 10
        grep -q "^remote-auth-refused ok r | Remote r (redis://127.0.0.1:$port): the password goes to the server's user again\.$" "$ALERTS"
        [ "$(remote_field 'alerts | index("remote-auth-refused") != null')" = false ]
        ! grep -rq -- "$secret" "$BATS_TEST_TMPDIR/daemon.log" "$ALERTS" || false
}

@test "-t warns for a password over TCP to another host (no TLS) and for a server_user that is no user" {
        pw=$BATS_TEST_TMPDIR/redis.pass
        printf 'x\n' > "$pw"
        chmod 600 "$pw"
        config "password_file = \"$pw\";" "redis://10.1.2.3:6379"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 0 ]
        [[ "$stderr" == *"warning: remote r: the password goes to 10.1.2.3 over TCP without TLS: anyone on the way can read it; prefer redis+unix:"* ]] || { echo "$stderr" >&2; false; }
        [[ "$output" == *'server_user = "redis";'* ]]
        [[ "$output" == *'round_timeout = "1m";'* ]]
        config "password_file = \"$pw\";" "redis://127.0.0.1:6379"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 0 ]
        [[ "$stderr" != *"without TLS"* ]]
        config "password_file = \"$pw\"; server_user = \"no-such-user-here\";" "redis://127.0.0.1:6379"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *'server_user: no user "no-such-user-here" on this host' ]] || { echo "$stderr" >&2; false; }
        REMOTE_TIMEOUT=10s config 'round_timeout = "5s";'
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"remote r: round_timeout must be at least timeout" ]]
}

@test "a 4 GB bulk string: cut at 4 MiB, memory stays bounded, status says why" {
        fake bulk
        REMOTE_TIMEOUT=10s config '' "redis+unix:$BATS_TEST_TMPDIR/fake.sock"
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 15
        rss0=$(vm VmRSS)
        touch "$BATS_TEST_TMPDIR/go"
        wait_for "[ \"\$(remote_field last_error)\" = 'a reply of more than 4194304 bytes: disconnected' ]" 30 || { remote_field last_error >&2; false; }
        [ "$(remote_field state)" = unreachable ]
        growth=$(( $(vm VmHWM) - rss0 ))
        echo "peak RSS growth: $growth kB" >&2
        [ "$growth" -lt 65536 ]
        ctl -t 5 status > /dev/null
}

@test "an array of 200M elements: refused before it is allocated, memory stays bounded" {
        fake array
        REMOTE_TIMEOUT=10s config '' "redis+unix:$BATS_TEST_TMPDIR/fake.sock"
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 15
        rss0=$(vm VmRSS)
        touch "$BATS_TEST_TMPDIR/go"
        wait_for "[ \"\$(remote_field last_error)\" = 'a reply of more than 4194304 bytes or 100000 elements: disconnected' ]" 30 || { remote_field last_error >&2; false; }
        growth=$(( $(vm VmHWM) - rss0 ))
        echo "peak RSS growth: $growth kB" >&2
        [ "$growth" -lt 65536 ]
}

@test "a SCAN answered every 1.8 s: the round ends at round_timeout, figures_age_seconds shows how old the figures are" {
        fake slowscan
        touch "$BATS_TEST_TMPDIR/go"
        REMOTE_TIMEOUT=3s config 'round_timeout = "6s";' "redis+unix:$BATS_TEST_TMPDIR/fake.sock"
        start_ready
        [ "$(remote_field figures_age_seconds)" = null ]
        # Each SCAN comes within timeout; the round ends by its deadline.
        wait_for "[ \$(remote_field polls_total) -ge 1 ]" 30
        [ "$(remote_field state)" = ok ]
        [ "$(remote_field used_memory_bytes)" -eq 1000 ]
        [ "$(remote_field ccache_keys)" = null ]
        [[ "$(remote_field scan_error)" =~ ^SCAN\ stopped\ at\ round_timeout\ \(6s\)\ after\ [0-9]+\ calls$ ]] || { remote_field scan_error >&2; false; }
        # While the next round runs, the figures grow old, and say so.
        wait_for "[ \$(remote_field figures_age_seconds) -ge 4 ]" 20
        ctl status | grep -Eq '^r  *ok  *[0-9]+s  *1\.0k / 8\.0M  *allkeys-lru  *-  '
        wait_for "[ \$(remote_field polls_total) -ge 2 ]" 30
}

@test "remotes: bad settings are FILE:LINE errors" {
        printf 'caches = ( { name = "a"; path = "/srv/a"; max_size = "1G"; } );\nremotes = (\n  { name = "r";\n    url = "memcached://x"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/bad.conf:4: remote r: invalid url: unknown kind of remote storage: redis://, redis+unix: and file: are known" ]
        printf 'caches = ( { name = "a"; path = "/srv/a"; max_size = "1G"; } );\nremotes = (\n  { name = "r"; url = "redis://db.example:6379"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:3: remote r: invalid url: the host must be an IP address (or localhost)"* ]]
        printf 'caches = ( { name = "a"; path = "/srv/a"; max_size = "1G"; } );\nremotes = (\n  { name = "r"; url = "redis://127.0.0.1";\n    max_size = "1G"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:4: 'max_size' is for file: remotes only"* ]]
        # A file: remote whose share is missing is unavailable, and says why.
        mkdir -m 1777 "$CACHE" 2>/dev/null || true
        write_config 1G '' 'remotes = ( { name = "share"; url = "file:/srv/ccache-shared"; max_size = "500G"; layout = "subdirs"; } );'
        start_ready
        [ "$(status_jq '.remotes[0].state')" = unavailable ]
        [ "$(status_jq '.remotes[0].kind')" = file ]
        out=$(ctl status)
        grep -q "^share  *unavailable  *file:/srv/ccache-shared$" <<<"$out"
        grep -qx "share: '/srv/ccache-shared' does not exist.*" <<<"$out"
}

@test "reload swaps the remotes: a new one is watched, a removed one is gone" {
        config
        start_ready
        wait_for "[ \"\$(remote_field state)\" = ok ]" 10
        write_config 1G '' 'remotes = ( { name = "share"; url = "file:/srv/ccache-shared"; max_size = "1G"; },' \
                "{ name = \"r2\"; url = \"redis+unix:$REDIS_SOCK\"; poll_interval = \"1s\"; } );"
        ctl reload
        [ "$(status_jq '[.remotes[].name] | join(",")')" = share,r2 ]
        wait_for "[ \"\$(status_jq '.remotes[1].state')\" = ok ]" 10
        # And none again.
        write_config 1G ''
        ctl reload
        [ "$(status_jq '.remotes | length')" -eq 0 ]
        ctl status --json > /dev/null
}
