# Shared set-up for the integration tests. CK_BUILD is the build directory
bats_require_minimum_version 1.5.0
# (absolute); the tests drive the ASan+UBSan build of the binaries.
CK_BUILD=${CK_BUILD:-$BATS_TEST_DIRNAME/../../build}
CKD=${CKD:-$CK_BUILD/asan/cachekeeperd}
CTL=${CTL:-$CK_BUILD/asan/cachectl}
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Waits up to $2 seconds (default 10) for command $1 to succeed.
wait_for() {
        local deadline=$((SECONDS + ${2:-10}))
        until eval "$1"; do
                [ $SECONDS -lt $deadline ] || { echo "timed out waiting for: $1" >&2; return 1; }
                sleep 0.05
        done
}

# Writes a config with one cache under $BATS_TEST_TMPDIR to $BATS_TEST_TMPDIR/ck.conf.
write_config() {
        cat > "$BATS_TEST_TMPDIR/ck.conf" <<EOC
socket = "$BATS_TEST_TMPDIR/ck.sock";
caches = ( { name = "t"; path = "$BATS_TEST_TMPDIR/cache"; max_size = "${1:-1G}"; } );
EOC
}

# Starts the daemon in the background on $BATS_TEST_TMPDIR/ck.conf; its
# stderr goes to $BATS_TEST_TMPDIR/daemon.log.
start_daemon() {
        "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" "$@" 2> "$BATS_TEST_TMPDIR/daemon.log" &
        DAEMON_PID=$!
}

stop_daemon() {
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID"
                wait "$DAEMON_PID"
        fi
}
