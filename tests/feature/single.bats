#!/usr/bin/env bats
# One daemon per socket and per cache root (issue 13, item 3): a second
# daemon where one answers is refused and touches nothing; a stale socket is
# replaced; a cache root another daemon keeps is refused at start and
# unavailable (then picked up) after a reload.
load ../lib/helper

setup() {
        write_config
}

teardown() {
        [ -z "${HOLDER:-}" ] || { kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null; } || true
        [ -z "${SECOND_PID:-}" ] || { kill -TERM "$SECOND_PID" 2>/dev/null; wait "$SECOND_PID" 2>/dev/null; } || true
        stop_daemon
}

# The same cache and state directory as ck.conf, on socket ck2.sock, in ck2.conf.
second_config() {
        sed "s|$BATS_TEST_TMPDIR/ck.sock|$BATS_TEST_TMPDIR/ck2.sock|" "$BATS_TEST_TMPDIR/ck.conf" > "$BATS_TEST_TMPDIR/ck2.conf"
}

@test "a second daemon on a socket where one answers is refused, names its pid, and leaves the socket alone" {
        start_ready
        ino=$(stat -c %i "$BATS_TEST_TMPDIR/ck.sock")
        run --separate-stderr timeout 30 "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf"
        echo "$stderr"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"cachekeeperd (pid $DAEMON_PID) already answers on $BATS_TEST_TMPDIR/ck.sock: not starting"* ]]
        # the first one's socket is the same file, and it still answers
        [ "$(stat -c %i "$BATS_TEST_TMPDIR/ck.sock")" = "$ino" ]
        ctl status --json | jq -e '.caches[0].name == "t"'
        # -s pointing at the same socket is the same case
        run --separate-stderr timeout 30 "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" -s "$BATS_TEST_TMPDIR/ck.sock"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"(pid $DAEMON_PID) already answers"* ]]
        ctl status > /dev/null
}

@test "a stale socket (nobody listens: connection refused) is replaced" {
        /usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$BATS_TEST_TMPDIR/ck.sock"
        [ -S "$BATS_TEST_TMPDIR/ck.sock" ]
        start_ready
        ctl status --json | jq -e '.caches[0].state == "ok"'
        grep -q "Listening on $BATS_TEST_TMPDIR/ck.sock" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "two daemons on different sockets cannot keep the same cache root: the second is refused, naming the cache and pid" {
        start_ready
        second_config
        run --separate-stderr timeout 30 "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf"
        echo "$stderr"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"Cache t: another cachekeeperd (pid $DAEMON_PID) keeps $BATS_TEST_TMPDIR/cache (it holds $BATS_TEST_TMPDIR/state/root-"*".lock): not starting"* ]]
        [ ! -e "$BATS_TEST_TMPDIR/ck2.sock" ]
        # the lock file names its holder and the root
        grep -qx "$DAEMON_PID $BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR"/state/root-*.lock
        ctl status > /dev/null
        # once the first is gone, the second starts
        stop_daemon
        "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf" 2> "$BATS_TEST_TMPDIR/second.log" &
        SECOND_PID=$!
        wait_for "[ \"\$('$CTL' -s '$BATS_TEST_TMPDIR/ck2.sock' status --json 2>/dev/null | jq -r .ready)\" = true ]"
}

@test "a cache added by a reload while another daemon keeps its root is unavailable with the reason, then picked up" {
        start_ready
        # the second daemon: its own cache u, its own socket, the same state directory
        mkdir -p "$BATS_TEST_TMPDIR/u"
        cat > "$BATS_TEST_TMPDIR/ck2.conf" <<EOC
socket = "$BATS_TEST_TMPDIR/ck2.sock";
state_dir = "$BATS_TEST_TMPDIR/state";
caches = ( { name = "u"; path = "$BATS_TEST_TMPDIR/u"; max_size = "1G"; } );
EOC
        "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf" 2> "$BATS_TEST_TMPDIR/second.log" &
        SECOND_PID=$!
        ctl2() { "$CTL" -s "$BATS_TEST_TMPDIR/ck2.sock" "$@"; }
        wait_for "[ \"\$(ctl2 status --json 2>/dev/null | jq -r .ready)\" = true ]"
        # it adds the first one's cache t
        sed -i "s|caches = ( |caches = ( { name = \"t\"; path = \"$BATS_TEST_TMPDIR/cache\"; max_size = \"1G\"; }, |" \
                "$BATS_TEST_TMPDIR/ck2.conf"
        ctl2 reload
        run ctl2 status --json
        echo "$output"
        jq -e --arg pid "$DAEMON_PID" '.caches[] | select(.name == "t") | .state == "unavailable" and
                (.reason | contains("another cachekeeperd keeps") and contains("pid " + $pid))' <<<"$output"
        jq -e '.caches[] | select(.name == "u") | .state == "ok"' <<<"$output"
        grep -q "Cache t is unavailable: another cachekeeperd keeps" "$BATS_TEST_TMPDIR/second.log"
        kill -0 "$SECOND_PID"
        # the first one keeps it as before
        ctl status --json | jq -e '.caches[0].state == "ok"'
        # the first one goes: the second takes the cache over
        stop_daemon
        wait_for "[ \"\$(ctl2 status --json | jq -r '.caches[] | select(.name == \"t\") | .state')\" = ok ]" 10
        grep -qx "$SECOND_PID $BATS_TEST_TMPDIR/cache" "$BATS_TEST_TMPDIR"/state/root-*.lock
}

@test "another user cannot keep the daemon off a root by holding its lock file (as nobody)" {
        start_ready
        lock=$(ls "$BATS_TEST_TMPDIR"/state/root-*.lock)
        [ "$(stat -c %a "$lock")" = 600 ]
        stop_daemon
        open_test_dir
        chmod 755 "$BATS_TEST_TMPDIR/state"
        # 0600: nobody cannot even open it to hold it
        run "${AS_NOBODY[@]}" flock -n -s "$lock" true
        [ "$status" -ne 0 ]
        # As an older version left it (0644): nobody opens it and holds it;
        # the daemon starts anyway, replacing it with one only root opens.
        chmod 644 "$lock"
        hold_lock_as_nobody "$lock"
        start_ready
        grep -q "was held by another user's process, not a cachekeeperd: replaced" "$BATS_TEST_TMPDIR/daemon.log"
        ctl status --json | jq -e '.caches[0].state == "ok"'
        [ "$(stat -c %a "$lock")" = 600 ]
        grep -qx "$DAEMON_PID $BATS_TEST_TMPDIR/cache" "$lock"
        # and a second daemon is still refused: root's lock is respected
        second_config
        run --separate-stderr timeout 30 "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"another cachekeeperd (pid $DAEMON_PID) keeps"* ]]
}

@test "lock files of roots no longer kept leave the state directory, at start and at reload; held ones, links and others' files stay" {
        mkdir -p "$BATS_TEST_TMPDIR/u" "$BATS_TEST_TMPDIR/state"
        chmod 700 "$BATS_TEST_TMPDIR/state"
        S=$BATS_TEST_TMPDIR/state
        # planted before the start: one nobody holds (an old root's), one
        # held by a root process, a symlink to a file of root's, a file of
        # nobody's, and a name that is not a lock file's
        touch "$S/root-0123456789abcdef.lock" "$S/root-fedcba9876543210.lock" "$BATS_TEST_TMPDIR/target" \
                "$S/root-2222222222222222.lock" "$S/root-notalock.lock"
        chown nobody "$S/root-2222222222222222.lock"
        ln -s "$BATS_TEST_TMPDIR/target" "$S/root-1111111111111111.lock"
        /usr/bin/python3 -c 'import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(600)' "$S/root-fedcba9876543210.lock" > /dev/null 2>&1 3>&- &
        HOLDER=$!
        wait_for "grep -q ' FLOCK .* WRITE .*:$(stat -c %i "$S/root-fedcba9876543210.lock") ' /proc/locks" 10
        write_config_caches "{ name = \"t\"; path = \"$BATS_TEST_TMPDIR/cache\"; max_size = \"1G\"; },
                { name = \"u\"; path = \"$BATS_TEST_TMPDIR/u\"; max_size = \"1G\"; }"
        start_ready
        grep -q "Removed 1 lock file of cache roots no longer kept from $S" "$BATS_TEST_TMPDIR/daemon.log"
        [ ! -e "$S/root-0123456789abcdef.lock" ]
        [ -e "$S/root-fedcba9876543210.lock" ] && [ -L "$S/root-1111111111111111.lock" ] && [ -e "$BATS_TEST_TMPDIR/target" ]
        [ -e "$S/root-2222222222222222.lock" ] && [ -e "$S/root-notalock.lock" ]
        t_lock=$(grep -lx "$DAEMON_PID $BATS_TEST_TMPDIR/cache" "$S"/root-*.lock)
        u_lock=$(grep -lx "$DAEMON_PID $BATS_TEST_TMPDIR/u" "$S"/root-*.lock)
        # a reload that drops u: its lock file goes, t's stays, and so do the others
        write_config
        ctl reload
        [ ! -e "$u_lock" ]
        grep -qx "$DAEMON_PID $BATS_TEST_TMPDIR/cache" "$t_lock"
        [ -e "$S/root-fedcba9876543210.lock" ] && [ -L "$S/root-1111111111111111.lock" ]
        [ -e "$S/root-2222222222222222.lock" ] && [ -e "$S/root-notalock.lock" ]
        # t's lock is still a lock: a second daemon is refused
        second_config
        run --separate-stderr timeout 30 "$CKD" -c "$BATS_TEST_TMPDIR/ck2.conf"
        [ "$status" -eq 1 ]
        [[ "$stderr" == *"another cachekeeperd (pid $DAEMON_PID) keeps"* ]]
}
