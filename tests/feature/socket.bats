#!/usr/bin/env bats
# The control socket and cachectl: the table, JSON, exit statuses, and
# clients that misbehave without stalling or crashing the daemon.
# tests/run: takes 42 s
load ../lib/helper

setup() {
        write_config
        start_ready
}

teardown() {
        [ -z "${DAEMON_PID:-}" ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true
        stop_daemon
}

@test "cachectl status prints the table, --json the contract's object, a name narrows it" {
        run ctl status
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == CACHE*STATE*"SIZE / CAP"*FILES*"HIT RATE"*MODE ]]
        [[ "${lines[1]}" == "t "*ok*"/ 1G "*"["*"]"*1777 ]]      # the cap as configured
        [[ "$output" == *VOLUME*"AVAIL / TOTAL"*ALERT* ]]

        run ctl status --json
        [ "$status" -eq 0 ]
        jq -e '.caches[0] | .name == "t" and .path and .state == "ok" and (.size_bytes | type) == "number"
               and (.files | type) == "number" and .max_size_bytes == 1000000000 and .mode == "1777"
               and .mode_ok == true and (.mount | type) == "string" and (.hits | type) == "number"
               and (.misses | type) == "number" and .evicted_files_total == 0 and .evicted_bytes_total == 0' <<<"$output"
        jq -e '.volumes[0] | (.mount | type) == "string" and .total_bytes > 0 and (.avail_bytes | type) == "number"
               and (.alert == "ok" or .alert == "warning" or .alert == "critical")' <<<"$output"

        run ctl status --json t
        [ "$status" -eq 0 ]
        [ "$(jq '.caches | length' <<<"$output")" -eq 1 ]
        run --separate-stderr ctl status nope
        [ "$status" -eq 1 ]
        [ "$stderr" = "cachectl: no cache named 'nope'" ]
}

@test "cachectl exit statuses: 2 for usage, 3 with the socket named when unreachable" {
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" frobnicate
        [ "$status" -eq 2 ]
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock"
        [ "$status" -eq 2 ]
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" status a b
        [ "$status" -eq 2 ]
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" status
        [ "$status" -eq 3 ]
        [[ "$stderr" == *"cannot reach cachekeeperd at $BATS_TEST_TMPDIR/none.sock"* ]]
        CACHEKEEPER_SOCKET=$BATS_TEST_TMPDIR/ck.sock run "$CTL" status
        [ "$status" -eq 0 ]
        run "$CTL" --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"Usage: cachectl"* ]]
}

@test "every command has its own --help (no daemon needed), check takes -h and -V, errors start with cachectl:" {
        # every command cachectl has (its completion's list), each --help in 80 columns
        for cmd in $("$CTL" __complete commands); do
                for flag in --help -h; do
                        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" $cmd $flag
                        [ "$status" -eq 0 ] || { echo "$cmd $flag: exit $status: $stderr"; false; }
                        [[ "${lines[0]}" == "Usage: cachectl [-s SOCKET] $cmd"* ]]
                        [ -z "$stderr" ]
                        ! awk -v c="$cmd" 'length($0) > 80 { print c ": " length($0) ": " $0; bad = 1 } END { exit !bad }' <<<"$output" || false
                done
                # and the main help names it
                "$CTL" --help | grep -q "^  $cmd"
        done
        run "$CTL" trim t --dry-run --help
        [[ "$output" == *"--written-by VERSION"* ]]
        "$CTL" --help | awk 'length($0) > 80 { print length($0) ": " $0; bad = 1 } END { exit bad }'
        run "$CTL" check -V
        [ "$status" -eq 0 ]
        [ "$output" = "cachectl $("$CKD" --version | awk '{ print $2 }')" ]
        # After "--" a -h is an argument, not a request for help.
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" status -- -h
        [ "$status" -eq 3 ]
        # a typo gets the command it was meant to be
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" stauts
        [ "$status" -eq 2 ]
        [ "$stderr" = "cachectl: unknown command 'stauts' (did you mean 'status'?)"$'\n'"Try 'cachectl --help'." ]
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" frobnicate
        [ "$stderr" = "cachectl: unknown command 'frobnicate'"$'\n'"Try 'cachectl --help'." ]
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" reload now
        [ "$stderr" = "cachectl: 'reload' takes no arguments"$'\n'"Try 'cachectl --help'." ]
        for bad in "frobnicate" "status --frob" "history --minutes 0" "trim --to 5" "metrics x"; do
                run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" $bad
                [ "$status" -eq 2 ]
                [[ "$stderr" == "cachectl: "* ]] || { echo "$bad: $stderr"; false; }
        done
}

@test "requests with fields of the wrong type get an error reply, not a guess or a crash" {
        S=$BATS_TEST_TMPDIR/ck.sock
        # anyone may send these (dry runs): none may take the daemon down
        run "$HELPERS/sockpoke" "$S" send $'{"cmd":"trim","caches":"t","dry_run":true}\n{"cmd":"trim","caches":[1],"dry_run":true}\n'
        [ "${lines[0]}" = '{"ok":false,"error":"\"caches\" must be an array of cache names","protocol":1}' ]
        [ "${lines[1]}" = '{"ok":false,"error":"\"caches\" must be an array of cache names","protocol":1}' ]
        # "no" is not false: a string must not be read as a boolean either way
        run "$HELPERS/sockpoke" "$S" send $'{"cmd":"trim","dry_run":"no"}\n{"cmd":"trim","to_bytes":"1G"}\n'
        [ "${lines[0]}" = '{"ok":false,"error":"\"dry_run\" must be true or false","protocol":1}' ]
        [ "${lines[1]}" = '{"ok":false,"error":"\"to_bytes\" must be a positive number","protocol":1}' ]
        run "$HELPERS/sockpoke" "$S" send $'{"cmd":"status","cache":7}\n{"cmd":"status","cache":"nope"}\n'
        [ "${lines[0]}" = '{"ok":false,"error":"\"cache\" must be a string","protocol":1}' ]
        [ "${lines[1]}" = '{"ok":false,"error":"no cache named '"'nope'"'","protocol":1}' ]
        kill -0 "$DAEMON_PID"
        run "$HELPERS/sockpoke" "$S" send $'{"cmd":"trim","caches":["t"],"dry_run":true}\n'
        [[ "${lines[0]}" == '{"ok":true,"result":{"t":{"dry_run":true,'* ]]
}

@test "cachectl reads what answers, not trusts it: a wrong-shaped reply is no crash and no false OK" {
        # Something else on the socket (an old or foreign server) answering
        # with a result of the wrong shape; json-c aborts on a blind read.
        F=$BATS_TEST_TMPDIR/fake.sock
        cat > "$BATS_TEST_TMPDIR/fake.sh" <<'EOS'
#!/bin/sh
read -r line
case "$line" in
*trim*) echo '{"ok":true,"result":{"a":"x","b":[1],"c":7}}' ;;
*) echo '{"ok":true,"result":{"caches":"x","volumes":{"a":1}}}' ;;
esac
EOS
        chmod +x "$BATS_TEST_TMPDIR/fake.sh"
        timeout 30 systemd-socket-activate -l "$F" --inetd -a "$BATS_TEST_TMPDIR/fake.sh" 2>/dev/null &
        fake=$!
        wait_for "[ -S '$F' ]" 5
        run "$CTL" -s "$F" status
        [ "$status" -eq 0 ]
        [ "${#lines[@]}" -eq 1 ]                  # the header, no rows made up
        run "$CTL" -s "$F" trim --dry-run
        [ "$status" -eq 0 ]
        [ -z "$output" ]                          # no result that is not one
        run "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - the reply is not a status (no list of caches)" ]
        run "$CTL" -s "$F" metrics
        [ "$status" -eq 0 ]
        ! grep -q '{cache=' <<<"$output" || false
        kill "$fake"
}

@test "cachectl on a refused or broken connection: never SIGPIPE, a clear message, exit 3 (1 for an error reply), check UNKNOWN" {
        # A fake daemon whose behaviour the file "mode" picks, per connection.
        F=$BATS_TEST_TMPDIR/fake.sock
        cat > "$BATS_TEST_TMPDIR/fake.sh" <<'EOS'
#!/bin/sh
case "$(cat "${0%/*}/mode")" in
busy)   echo '{"ok":false,"error":"too many connections","busy":true}' ;;   # before reading anything
close)  ;;                                                                     # nothing read, nothing said
cut)    read -r line; printf '{"ok":true,"result":{"caches":[' ;;            # half a reply
error)  read -r line; echo '{"ok":false,"error":"permission denied"}' ;;
esac
EOS
        chmod +x "$BATS_TEST_TMPDIR/fake.sh"
        timeout 60 systemd-socket-activate -l "$F" --inetd -a "$BATS_TEST_TMPDIR/fake.sh" 2>/dev/null &
        fake=$!
        wait_for "[ -S '$F' ]" 5
        # more than a socket buffer of request: the writer is still writing when the other end closes
        long=$(head -c 100000 /dev/zero | tr '\0' x)
        big=("$long" "$long" "$long" "$long" "$long" "$long" "$long" "$long" "$long" "$long")

        echo busy > "$BATS_TEST_TMPDIR/mode"
        run --separate-stderr "$CTL" -s "$F" status
        [ "$status" -eq 3 ]
        [ "$stderr" = "cachectl: cachekeeperd at $F turned the connection away: too many connections" ]
        run --separate-stderr "$CTL" -s "$F" trim --dry-run "${big[@]}"
        [ "$status" -eq 3 ]
        [[ "$stderr" == *"turned the connection away: too many connections" ]]
        run --separate-stderr "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - cachekeeperd at $F turned the connection away: too many connections" ]
        [ -z "$stderr" ]                          # said once, on stdout

        echo close > "$BATS_TEST_TMPDIR/mode"
        run --separate-stderr "$CTL" -s "$F" status
        [ "$status" -eq 3 ]
        [ "$stderr" = "cachectl: cachekeeperd at $F closed the connection without a reply" ]
        run --separate-stderr "$CTL" -s "$F" trim --dry-run "${big[@]}"
        [ "$status" -eq 3 ]                     # not 141: SIGPIPE
        [[ "$stderr" == "cachectl: cachekeeperd at $F closed the connection"* ]]
        run --separate-stderr "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - cachekeeperd at $F closed the connection without a reply" ]
        [ -z "$stderr" ]                          # said once, on stdout

        echo cut > "$BATS_TEST_TMPDIR/mode"
        run --separate-stderr "$CTL" -s "$F" metrics
        [ "$status" -eq 3 ]
        [ "$(grep -v '^#' <<<"$output")" = "cachekeeper_up 0" ]   # the daemon down, nothing made up
        [ "$stderr" = "cachectl: cachekeeperd at $F closed the connection in the middle of its reply" ]
        run --separate-stderr "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - cachekeeperd at $F closed the connection in the middle of its reply" ]
        [ -z "$stderr" ]                          # said once, on stdout

        echo error > "$BATS_TEST_TMPDIR/mode"
        run --separate-stderr "$CTL" -s "$F" reload
        [ "$status" -eq 1 ]
        [ "$stderr" = "cachectl: permission denied" ]
        run --separate-stderr "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - cachekeeperd at $F refused the status request: permission denied" ]
        [ -z "$stderr" ]                          # said once, on stdout
        kill "$fake"

        # the real daemon, sent more than it takes, answers and closes while
        # cachectl is still writing: its answer is what cachectl says
        run --separate-stderr ctl trim --dry-run "${big[@]}"
        [ "$status" -eq 1 ]
        [ "$stderr" = "cachectl: request too long (max 4096 bytes)" ]
        run ctl status
        [ "$status" -eq 0 ]
}

@test "garbage, an oversized line, idle and non-reading clients, 200 at once: the daemon keeps serving" {
        S=$BATS_TEST_TMPDIR/ck.sock
        run "$HELPERS/sockpoke" "$S" send $'not json\n{"cmd":"status"}\n'
        [[ "${lines[0]}" == '{"ok":false,"error":"request is not one JSON object'* ]]
        [[ "${lines[1]}" == '{"ok":true,"result":{"caches":'* ]]
        run "$HELPERS/sockpoke" "$S" send $'{"cmd":"frob"}\n[1,2]\n'
        [ "${lines[0]}" = '{"ok":false,"error":"unknown command '"'frob'"'","protocol":1}' ]
        [[ "${lines[1]}" == '{"ok":false,"error":"request must be an object with a string \"cmd\"","protocol":1}' ]]

        run "$HELPERS/sockpoke" "$S" big 100000
        [[ "${lines[0]}" == '{"ok":false,"error":"request too long'* ]]
        [ "${lines[1]}" = eof ]

        "$HELPERS/sockpoke" "$S" hold 200 3 > "$BATS_TEST_TMPDIR/hold.out" &
        holder=$!
        wait_for "grep -q 'holding 200' '$BATS_TEST_TMPDIR/hold.out'" 5
        "$HELPERS/sockpoke" "$S" noread 100000 > "$BATS_TEST_TMPDIR/noread.out" &
        noreader=$!
        kill -0 "$DAEMON_PID"
        wait "$holder"
        wait "$noreader"
        run ctl status --json
        [ "$status" -eq 0 ]
        [ "$(jq -r '.caches[0].state' <<<"$output")" = ok ]
        kill -0 "$DAEMON_PID"
}

@test "a stopped daemon (SIGSTOP): each command gives up after -t, says what it waited for, exit 3; check UNKNOWN" {
        kill -STOP "$DAEMON_PID"
        for cmd in status history metrics; do
                t0=$SECONDS
                run --separate-stderr ctl -t 1 $cmd
                [ "$status" -eq 3 ]
                [[ "$stderr" == "cachectl: cachekeeperd at $BATS_TEST_TMPDIR/ck.sock did not answer within 1s (waiting for its answer to '$cmd'"* ]] ||
                        { echo "$cmd: $stderr"; false; }
                [ $((SECONDS - t0)) -le 5 ]
        done
        run --separate-stderr ctl -t 500ms trim t --dry-run
        [ "$status" -eq 3 ]
        [[ "$stderr" == *"(waiting for the trim's progress or result;"* ]]
        run --separate-stderr ctl -t 1 check
        [ "$status" -eq 3 ]
        [[ "$output" == "CACHEKEEPER UNKNOWN - cachekeeperd at "*" did not answer within 1s"* ]] || { echo "$output"; false; }
        [ -z "$stderr" ]
        # without -t, check gives up before NRPE's 10 s: its own line is what the monitor shows
        t0=$SECONDS
        run --separate-stderr ctl check
        [ "$status" -eq 3 ]
        [[ "$output" == "CACHEKEEPER UNKNOWN - cachekeeperd at "*" did not answer within 8s"* ]] || { echo "$output"; false; }
        [ $((SECONDS - t0)) -lt 10 ]
        for bad in 0 -1 abc 1x; do
                run ctl -t "$bad" status
                [ "$status" -eq 2 ]
        done
        kill -CONT "$DAEMON_PID"
        run ctl -t 1 status
        [ "$status" -eq 0 ]
}
