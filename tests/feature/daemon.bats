#!/usr/bin/env bats
# The daemon's skeleton: it runs, reloads on SIGHUP (keeping the old config
# when the new one is bad), and exits cleanly on SIGTERM and SIGINT.
load ../lib/helper

setup() {
        write_config
}

teardown() {
        stop_daemon
}

@test "SIGHUP reloads a good config and keeps the old one when the new one is bad" {
        start_daemon
        wait_for "grep -q 'started with' '$BATS_TEST_TMPDIR/daemon.log'"

        write_config 2G
        kill -HUP "$DAEMON_PID"
        wait_for "grep -q 'Reloaded $BATS_TEST_TMPDIR/ck.conf' '$BATS_TEST_TMPDIR/daemon.log'"

        printf 'caches = (\n { name = "t";\n   max_size = "1G"; }\n);\n' > "$BATS_TEST_TMPDIR/ck.conf"
        kill -HUP "$DAEMON_PID"
        wait_for "grep -q 'Reload refused' '$BATS_TEST_TMPDIR/daemon.log'"
        grep -q "Reload refused, keeping the running configuration: $BATS_TEST_TMPDIR/ck.conf:2: caches\[0\]: missing required setting 'path'" \
                "$BATS_TEST_TMPDIR/daemon.log"
        kill -0 "$DAEMON_PID"
}

@test "SIGTERM and SIGINT end the daemon with status 0" {
        for sig in TERM INT; do
                start_daemon
                wait_for "grep -q 'started with' '$BATS_TEST_TMPDIR/daemon.log'"
                kill -$sig "$DAEMON_PID"
                rc=0
                wait "$DAEMON_PID" || rc=$?
                [ "$rc" -eq 0 ]
                grep -q "Received SIG$sig, exiting\|Received .*, exiting" "$BATS_TEST_TMPDIR/daemon.log"
        done
}

@test "a bad config at start exits 78 (EX_CONFIG, which the unit does not restart on) with FILE:LINE" {
        printf 'caches = (\n { name = "t"; path = "rel"; max_size = "1G"; }\n);\n' > "$BATS_TEST_TMPDIR/ck.conf"
        run --separate-stderr "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 78 ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/ck.conf:2: "*"must be an absolute path"* ]]
}
