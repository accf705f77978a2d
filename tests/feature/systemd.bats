#!/usr/bin/env bats
# systemd without systemd as PID 1: the installed units pass
# `systemd-analyze verify` and `security`; the sd_notify protocol (READY=1
# after the initial scan, STATUS=, RELOADING=1/READY=1, STOPPING=1, watchdog
# pings from the loop itself, none from a wedged loop) read from a datagram
# socket as NOTIFY_SOCKET; socket activation through systemd-socket-activate
# and through an inherited fd 3. tests/boot/run boots a real systemd.
# tests/run: takes 29 s
load ../lib/helper

setup() {
        write_config
        NOTIFY=$BATS_TEST_TMPDIR/notify.sock
        NOUT=$BATS_TEST_TMPDIR/notify.out
}

teardown() {
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -KILL "$DAEMON_PID" 2>/dev/null
                wait "$DAEMON_PID" 2>/dev/null
        fi
        if [ -n "${NOTIFY_PID:-}" ]; then
                kill "$NOTIFY_PID" 2>/dev/null
                wait "$NOTIFY_PID" 2>/dev/null
        fi
        unmount_all
        return 0
}

# --------------------------------------------------------------- helpers

# make install (the Makefile of the tree, or $CK_MAKEFILE) into $1 as PREFIX
# $1/usr and SYSCONFDIR $1/etc, with no DESTDIR: the units then name
# binaries that exist, as systemd-analyze verify requires.
install_into() {
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -f "${CK_MAKEFILE:-$TOP/Makefile}" \
                B="$CK_BUILD" install DESTDIR= PREFIX="$1/usr" SYSCONFDIR="$1/etc" "${@:2}" > /dev/null
        UNITS=$1/usr/lib/systemd/system
        [ -f "$UNITS/cachekeeperd.service" ] && [ -f "$UNITS/cachekeeperd.socket" ] || {
                echo "make install did not install the units (tests/boot/MAKEFILE-SNIPPET.txt not merged?)" >&2
                return 1
        }
}

# Starts notify-recv on $NOTIFY (extra arguments: --until ..., --timeout ...)
# writing to $NOUT, and exports NOTIFY_SOCKET for the daemon.
start_notify() {
        "$HELPERS/notify-recv" "$NOTIFY" "$@" > "$NOUT" 2> "$BATS_TEST_TMPDIR/notify.err" 3>&- &
        NOTIFY_PID=$!
        wait_for "grep -q ' LISTENING$' '$NOUT'"
        export NOTIFY_SOCKET=$NOTIFY
}

now_usec() {
        "$HELPERS/notify-recv" --now
}

# The state changes (READY=1, RELOADING=1, STOPPING=1) in the order sent, one word each.
notify_sequence() {
        awk '{ n = split(substr($0, index($0, " ") + 1), f, / \| /)
               for (i = 1; i <= n; i++) if (f[i] ~ /^(READY|RELOADING|STOPPING)=1$/) printf "%s ", substr(f[i], 1, length(f[i]) - 2) }' "$NOUT"
}

# Timestamps (µs) of the datagrams holding line $1 (e.g. WATCHDOG=1).
notify_times() {
        awk -v want="$1" '{ n = split(substr($0, index($0, " ") + 1), f, / \| /)
                            for (i = 1; i <= n; i++) if (f[i] == want) { print $1; break } }' "$NOUT"
}

# The STATUS= texts sent, one per line.
notify_status() {
        awk '{ n = split(substr($0, index($0, " ") + 1), f, / \| /)
               for (i = 1; i <= n; i++) if (f[i] ~ /^STATUS=/) print substr(f[i], 8) }' "$NOUT"
}

wait_notify() {
        wait_for "[ \"\$(notify_times '$1' | wc -l)\" -ge ${2:-1} ]" "${3:-10}"
}

# "count max_gap_usec" of the timestamps on stdin that lie in [$1, $2).
gaps() {
        awk -v from="$1" -v to="$2" '$1 >= from && $1 < to { if (n++) { g = $1 - last; if (g > max) max = g } last = $1 }
                                     END { printf "%d %d\n", n, max }'
}

# Fills directory $1 with $2 empty files in 16 subdirectories.
many_files() {
        local d per=$(($2 / 16))
        for d in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                mkdir -p "$1/$d/0"
                (cd "$1/$d/0" && seq -f "%07.0fR" 1 "$per" | xargs touch) || return 1
        done
}

# Starts the daemon (DAEMON_PID) with a listening Unix socket bound at $1 on
# its fd 3 and LISTEN_FDS=1 LISTEN_PID=<its pid, or $CK_LISTEN_PID>: perl
# binds, then execs the daemon in the same process. Its stderr goes to
# $BATS_TEST_TMPDIR/daemon.log.
start_daemon_with_socket() {
        perl -MIO::Socket::UNIX -MPOSIX -e '
                my $path = shift;
                unlink $path;
                $^F = 3;        # fds up to 3 are opened without close-on-exec
                my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $path, Listen => 16)
                        or die "cannot listen on $path: $!\n";
                # dup2 clears close-on-exec on the copy.
                if (fileno($s) != 3) { POSIX::dup2(fileno($s), 3) or die "dup2: $!\n" }
                $ENV{LISTEN_FDS} = 1;
                $ENV{LISTEN_FDNAMES} = "control";
                $ENV{LISTEN_PID} = $ENV{CK_LISTEN_PID} // $$;
                exec { $ARGV[0] } @ARGV or die "exec: $!\n";' \
                "$1" "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" 2> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
}

# --------------------------------------------------------------- the units

@test "make install substitutes the units' paths; systemd-analyze verify prints nothing" {
        P=$BATS_TEST_TMPDIR/p
        install_into "$P"
        grep -qx "ExecStart=$P/usr/sbin/cachekeeperd -c $P/etc/cachekeeper.conf" "$UNITS/cachekeeperd.service"
        [ -z "$(LC_ALL=C grep -n '@[A-Z_]\{1,\}@' "$UNITS"/cachekeeperd.*)" ]
        run systemd-analyze verify --man=no "$UNITS/cachekeeperd.service" "$UNITS/cachekeeperd.socket"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]

        # The check is not blind: a bad directive is only a warning, but it prints.
        mkdir "$BATS_TEST_TMPDIR/bad"
        sed 's/^WatchdogSec=/WatchdogSecs=/' "$UNITS/cachekeeperd.service" > "$BATS_TEST_TMPDIR/bad/cachekeeperd.service"
        run systemd-analyze verify --man=no "$BATS_TEST_TMPDIR/bad/cachekeeperd.service"
        [[ "$output" == *"WatchdogSecs"* ]]

        # An existing config is kept; uninstall removes units and binaries, not the config.
        echo '# local change' >> "$P/etc/cachekeeper.conf"
        install_into "$P"
        grep -qx '# local change' "$P/etc/cachekeeper.conf"
        run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -f "${CK_MAKEFILE:-$TOP/Makefile}" \
                B="$CK_BUILD" uninstall DESTDIR= PREFIX="$P/usr" SYSCONFDIR="$P/etc"
        [ "$status" -eq 0 ]
        # It says what stays in each cache's ccache.conf (the shipped caches: mi210, aiter).
        [ "${lines[0]}" = "What stays in each cache's ccache.conf:" ]
        [[ "${lines[1]}" == "mi210: /var/cache/mi210-ccache/ccache.conf"* ]]
        [[ "${lines[2]}" == "aiter: /mnt/llm-storage/ccache-aiter/ccache.conf"* ]]
        [ ! -e "$UNITS/cachekeeperd.service" ]
        [ ! -e "$UNITS/cachekeeperd.socket" ]
        [ ! -e "$P/usr/sbin/cachekeeperd" ]
        [ -e "$P/etc/cachekeeper.conf" ]
}

@test "the units keep their contract and systemd-analyze security scores 2.5 or better" {
        P=$BATS_TEST_TMPDIR/p
        install_into "$P"
        S=$UNITS/cachekeeperd.service
        grep -qx 'Type=notify' "$S"
        grep -qx 'WatchdogSec=30s' "$S"
        grep -qx 'Restart=on-failure' "$S"
        grep -qx "ExecReload=$P/usr/bin/cachectl reload" "$S"
        grep -qx 'WantedBy=multi-user.target' "$S"
        grep -qx 'Requires=cachekeeperd.socket' "$S"
        # An absent optional volume must not fail the start.
        [ -z "$(grep '^RequiresMountsFor=' "$S")" ]
        # ... and every writable path may be missing ("-").
        [ -n "$(grep '^ReadWritePaths=' "$S")" ]
        [ -z "$(grep '^ReadWritePaths=' "$S" | grep -E '(=| )/')" ]
        # The socket in a directory of its own (a container mounts the
        # directory), the old path a symlink to it, removed with it.
        grep -qx 'ListenStream=/run/cachekeeper/cachekeeper.sock' "$UNITS/cachekeeperd.socket"
        grep -qx 'DirectoryMode=0755' "$UNITS/cachekeeperd.socket"
        grep -qx 'Symlinks=/run/cachekeeper.sock' "$UNITS/cachekeeperd.socket"
        grep -qx 'RemoveOnStop=yes' "$UNITS/cachekeeperd.socket"
        grep -qx 'SocketMode=0666' "$UNITS/cachekeeperd.socket"

        run systemd-analyze security --offline=yes --threshold=25 "$S"
        score=$(sed -n 's/.*Overall exposure level for cachekeeperd.service: \([0-9.]*\).*/\1/p' <<< "$output")
        echo "$output" | grep -E '✗|Overall'
        [ "$status" -eq 0 ]
        [ -n "$score" ]
        awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }'
}

# --------------------------------------------------------------- sd_notify

@test "READY=1 comes only after the initial scan, and the watchdog pings during the scan" {
        require_root
        N=96000
        mount_tmpfs "$BATS_TEST_TMPDIR/cache" 256M
        many_files "$BATS_TEST_TMPDIR/cache" "$N"
        N=$((N + 1))    # and the ccache.conf the daemon writes before it scans
        start_notify --until READY=1 --timeout 60
        # 1 s, as the unit's WatchdogSec= is seconds: a scan slice that held
        # the loop would show as a gap near it, while a loaded machine's
        # scheduling delays (tens, at worst hundreds of ms) stay well below.
        export WATCHDOG_USEC=1000000
        start_daemon

        # Ask for status as fast as we can while the daemon scans.
        samples=$BATS_TEST_TMPDIR/samples
        while kill -0 "$NOTIFY_PID" 2>/dev/null; do
                t=$(now_usec)
                s=$(ctl status --json 2>/dev/null | jq -r '"\(.ready) \(.caches[0].state) \(.caches[0].files)"')
                s=${s:-unreachable}
                echo "$t $s" >> "$samples"
        done
        wait "$NOTIFY_PID"
        NOTIFY_PID=
        ready=$(notify_times READY=1 | head -1)
        [ -n "$ready" ]
        # Right after READY=1: scanned, every file counted.
        [ "$(status_jq '"\(.ready) \(.caches[0].state) \(.caches[0].files)"')" = "true ok $N" ]
        # No answer asked for after READY=1 says otherwise; the scan was seen in progress before it.
        awk -v r="$ready" -v n="$N" '$1 > r && $2 != "unreachable" && ($2 != "true" || $3 != "ok" || $4 != n) { print "after READY=1: " $0; bad = 1 }
                                     END { exit bad }' "$samples"
        grep -q ' false scanning ' "$samples"
        awk -v r="$ready" '$2 == "false" && $1 > r { bad = 1 } END { exit bad }' "$samples"
        grep -q "scanned $BATS_TEST_TMPDIR/cache in .*: $N files" "$BATS_TEST_TMPDIR/daemon.log"
        # The loop kept ticking through the scan: pings before READY=1, never
        # as far apart as the watchdog's limit.
        read -r count max <<< "$(notify_times WATCHDOG=1 | gaps 0 "$ready")"
        echo "pings before READY=1: $count, longest gap ${max} µs"
        [ "$count" -ge 2 ]
        [ "$max" -lt 1000000 ]
}

@test "STATUS= tells a person each cache's size against its cap" {
        mkdir -p "$BATS_TEST_TMPDIR/cache/a"
        head -c 100000 /dev/zero > "$BATS_TEST_TMPDIR/cache/a/x"
        start_notify
        start_daemon
        wait_notify READY=1
        wait_for '[ -n "$(notify_status)" ]'
        notify_status
        # e.g. "t 102.4k/1.0G ok" or "1 cache, 102.4k/1G"
        notify_status | tail -1 | grep -Eq '[0-9.]+[kMGTPE]?i?B?/1(\.0)?G'
        # STATUS= follows READY=1 (systemctl status shows the latest one).
        [ "$(tail -1 <<< "$(awk '{ n = split(substr($0, index($0, " ") + 1), f, / \| /)
                for (i = 1; i <= n; i++) if (f[i] ~ /^(READY=1|STATUS=)/) print substr(f[i], 1, 6) }' "$NOUT")")" = STATUS ]
}

@test "reload: RELOADING=1 then READY=1 on SIGHUP and cachectl reload, also when the config is refused" {
        start_notify
        start_daemon
        wait_notify READY=1
        kill -HUP "$DAEMON_PID"
        wait_notify READY=1 2
        [ "$(notify_sequence)" = "READY RELOADING READY " ]

        cp "$BATS_TEST_TMPDIR/ck.conf" "$BATS_TEST_TMPDIR/good.conf"
        echo 'caches = ( { name = "t"; } );' > "$BATS_TEST_TMPDIR/ck.conf"
        kill -HUP "$DAEMON_PID"
        wait_notify READY=1 3
        [ "$(notify_sequence)" = "READY RELOADING READY RELOADING READY " ]
        grep -q 'Reload refused' "$BATS_TEST_TMPDIR/daemon.log"

        cp "$BATS_TEST_TMPDIR/good.conf" "$BATS_TEST_TMPDIR/ck.conf"
        ctl reload
        wait_notify READY=1 4
        [ "$(notify_sequence)" = "READY RELOADING READY RELOADING READY RELOADING READY " ]
        kill -0 "$DAEMON_PID"
}

# systemctl reload runs the unit's ExecReload and fails when it fails: the
# installed command, run as systemd runs it (the socket from the
# environment here, /run/cachekeeper/cachekeeper.sock there), against a real daemon.
@test "the unit's ExecReload waits for the reload and fails when the config is refused; the running config stays" {
        P=$BATS_TEST_TMPDIR/p
        install_into "$P"
        read -ra reload < <(sed -n 's/^ExecReload=//p' "$UNITS/cachekeeperd.service")
        [ "${#reload[@]}" -gt 0 ]
        start_ready
        export CACHEKEEPER_SOCKET=$BATS_TEST_TMPDIR/ck.sock
        run "${reload[@]}"
        [ "$status" -eq 0 ]
        cp "$BATS_TEST_TMPDIR/ck.conf" "$BATS_TEST_TMPDIR/good.conf"
        printf '%s\n' 'caches = (' '  { name = "t"; }' ');' > "$BATS_TEST_TMPDIR/ck.conf"
        run "${reload[@]}"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"ck.conf:2:"* ]]
        # still running, on the old config: cache t at its path
        kill -0 "$DAEMON_PID"
        [ "$(ctl status --json | jq -r '.caches[0].path')" = "$BATS_TEST_TMPDIR/cache" ]
}

@test "a config refused at start is logged at error priority (the journal's PRIORITY=3), naming FILE:LINE; exit 78, not restarted" {
        start_journald
        printf '%s\n' 'caches = (' '  { name = "t"; }' ');' > "$BATS_TEST_TMPDIR/bad.conf"
        # as systemd starts it: INVOCATION_ID set, stderr not a terminal
        INVOCATION_ID=0123456789abcdef0123456789abcdef run "$CKD" -c "$BATS_TEST_TMPDIR/bad.conf"
        # EX_CONFIG, which the unit does not restart on: its retries never
        # use up the start limit before the file is fixed
        [ "$status" -eq 78 ]
        P=$BATS_TEST_TMPDIR/p
        install_into "$P"
        grep -qx "RestartPreventExitStatus=$status" "$UNITS/cachekeeperd.service"
        wait_for "journal PRIORITY=3 | grep -q 'bad.conf:2:'" 5 || { journal; stop_journald; false; }
        journal | jq -e -s 'map(select(.MESSAGE | test("bad.conf:2:"))) | length == 1 and .[0].PRIORITY == "3"'
        stop_journald
        # -t still says it on stderr
        run "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [[ "$output" == *"bad.conf:2:"* ]]
}

@test "SIGTERM: STOPPING=1, then exit 0" {
        start_notify
        start_daemon
        wait_notify READY=1
        kill -TERM "$DAEMON_PID"
        rc=0
        wait "$DAEMON_PID" || rc=$?
        DAEMON_PID=
        [ "$rc" -eq 0 ]
        wait_notify STOPPING=1
        [ "$(notify_sequence)" = "READY STOPPING " ]
}

@test "watchdog: WATCHDOG=1 every 0.5-0.75 s when idle with WATCHDOG_USEC=1000000, none without it" {
        start_notify
        WATCHDOG_USEC=1000000 start_daemon
        wait_notify READY=1
        ready=$(notify_times READY=1)
        # sd-event pings at 1/2 to 3/4 of the period when idle, never more
        # often than every 1/4: 4 to 6 pings in 3 s (3 to 13 allowed), each
        # gap under the limit.
        wait_for "[ \"\$(notify_times WATCHDOG=1 | tail -1)\" -ge $((ready + 3000000)) ]" 10
        read -r count max <<< "$(notify_times WATCHDOG=1 | gaps "$ready" $((ready + 3000000)))"
        echo "pings in 3 s: $count, longest gap ${max} µs"
        [ "$count" -ge 3 ]
        [ "$count" -le 13 ]
        [ "$max" -lt 1000000 ]
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"

        # Without WATCHDOG_USEC (not under a watchdog) the daemon does not ping.
        kill "$NOTIFY_PID"
        wait "$NOTIFY_PID" || true
        start_notify
        start_daemon
        wait_notify READY=1
        sleep 0.5
        [ "$(notify_times WATCHDOG=1 | wc -l)" -eq 0 ]
}

@test "a wedged loop (CACHEKEEPER_TEST_HANG=1, SIGUSR2) stops the pings; without it SIGUSR2 is ignored" {
        start_notify
        export WATCHDOG_USEC=1000000
        start_daemon
        wait_notify READY=1
        t=$(now_usec)
        kill -USR2 "$DAEMON_PID"
        wait_for "grep -q 'Received SIGUSR2, ignoring' '$BATS_TEST_TMPDIR/daemon.log'"
        # still pinging after it
        wait_for "[ \"\$(notify_times WATCHDOG=1 | gaps $t 9999999999999 | cut -d' ' -f1)\" -ge 3 ]" 10
        ctl status > /dev/null
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        kill "$NOTIFY_PID"
        wait "$NOTIFY_PID" || true

        start_notify
        CACHEKEEPER_TEST_HANG=1 start_daemon
        wait_notify READY=1
        wait_notify WATCHDOG=1 2
        kill -USR2 "$DAEMON_PID"
        wait_for "grep -q 'wedging the event loop' '$BATS_TEST_TMPDIR/daemon.log'"
        # Every ping was sent before that line was written (the loop pings
        # before it dispatches the signal); allow 200 ms for the last to be
        # read. Then silence, for longer than a live loop's longest gap (0.75 s).
        t=$(now_usec)
        sleep 1.5
        late=$(notify_times WATCHDOG=1 | awk -v t="$t" '$1 > t + 200000' | wc -l)
        [ "$late" -eq 0 ]
        # Wedged, not dead: still there, no longer answering.
        kill -0 "$DAEMON_PID"
        run timeout 1 "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" status
        [ "$status" -ne 0 ]
}

# --------------------------------------------------------------- socket activation

@test "systemd-socket-activate: started on the first connection; the inherited socket wins and is left in place" {
        SA=$BATS_TEST_TMPDIR/sa.sock
        systemd-socket-activate -l "$SA" --fdname=control "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" \
                2> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
        wait_for "[ -S '$SA' ]"
        sleep 0.2
        [ -z "$(grep 'started with' "$BATS_TEST_TMPDIR/daemon.log")" ]
        [ "$("$CTL" -s "$SA" status --json | jq -r '.caches[0].name')" = t ]
        grep -qF "Listening on $SA, the socket systemd passed; '$BATS_TEST_TMPDIR/ck.sock' from the configuration is not used." \
                "$BATS_TEST_TMPDIR/daemon.log"
        # The config's socket is not bound when a socket is inherited.
        [ ! -e "$BATS_TEST_TMPDIR/ck.sock" ]
        kill -TERM "$DAEMON_PID"
        rc=0
        wait "$DAEMON_PID" || rc=$?
        DAEMON_PID=
        [ "$rc" -eq 0 ]
        # systemd owns the socket file: the daemon must not unlink it.
        [ -S "$SA" ]
}

@test "two inherited sockets are refused" {
        systemd-socket-activate -l "$BATS_TEST_TMPDIR/a.sock" -l "$BATS_TEST_TMPDIR/b.sock" \
                "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" 2> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
        wait_for "[ -S '$BATS_TEST_TMPDIR/a.sock' ]"
        run timeout 10 "$CTL" -s "$BATS_TEST_TMPDIR/a.sock" status
        [ "$status" -ne 0 ]
        rc=0
        wait "$DAEMON_PID" || rc=$?
        DAEMON_PID=
        [ "$rc" -eq 1 ]
        grep -q 'Got 2 sockets from systemd, expected one' "$BATS_TEST_TMPDIR/daemon.log"
}

@test "an inherited fd 3 (LISTEN_FDS=1, LISTEN_PID) is used at once; one meant for another pid is not" {
        SA=$BATS_TEST_TMPDIR/fd3.sock
        start_daemon_with_socket "$SA"
        wait_for "grep -q 'started with' '$BATS_TEST_TMPDIR/daemon.log'"
        grep -qF "Listening on $SA, the socket systemd passed; '$BATS_TEST_TMPDIR/ck.sock' from the configuration is not used." \
                "$BATS_TEST_TMPDIR/daemon.log"
        [ "$("$CTL" -s "$SA" status --json | jq -r '.caches[0].name')" = t ]
        [ ! -e "$BATS_TEST_TMPDIR/ck.sock" ]
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        [ -S "$SA" ]

        # LISTEN_PID names another process: the fds are not ours, bind the config's socket.
        CK_LISTEN_PID=1 start_daemon_with_socket "$SA"
        wait_ready
        grep -q "Listening on $BATS_TEST_TMPDIR/ck.sock" "$BATS_TEST_TMPDIR/daemon.log"
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        DAEMON_PID=
}
