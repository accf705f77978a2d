#!/usr/bin/env bats
# The protocol version: every reply of the daemon says it; cachectl works
# with a daemon older than the field as before, and refuses, with a clear
# message, only a result of a newer protocol it cannot know.
load ../lib/helper

teardown() {
        [ -z "${fake:-}" ] || kill "$fake" 2>/dev/null || true
        stop_daemon
}

# A fake daemon on $F that answers each request as the file "mode" says:
# "old" (replies without a version, as cachekeeperd 0.1.0 sent them) or
# "newer" (protocol 2).
start_fake() {
        F=$BATS_TEST_TMPDIR/fake.sock
        cat > "$BATS_TEST_TMPDIR/fake.sh" <<'EOS'
#!/bin/sh
read -r line
status='{"caches":[{"name":"t","path":"/x","state":"ok","size_bytes":1000,"files":1,"max_size_bytes":1000000000,"mode":"1777","mode_ok":true,"hits":3,"misses":1}],"volumes":[{"mount":"/","total_bytes":1000,"avail_bytes":500,"alert":"ok"}],"ready":true,"version":"0.1.0"}'
trim='{"t":{"dry_run":false,"files":2,"bytes":8192,"size_bytes":100}}'
case "$(cat "${0%/*}/mode")-$line" in
old-*'"status"'*)  echo "{\"ok\":true,\"result\":$status}" ;;
old-*'"trim"'*)    echo "{\"ok\":true,\"result\":$trim}" ;;
old-*'"reload"'*)  echo '{"ok":true}' ;;
newer-*'"status"'*) echo "{\"ok\":true,\"result\":$status,\"protocol\":2}" ;;
newer-*'"trim"'*)  echo '{"ok":false,"error":"permission denied","protocol":2}' ;;
newer-*'"reload"'*) echo '{"ok":true,"protocol":2}' ;;
esac
EOS
        chmod +x "$BATS_TEST_TMPDIR/fake.sh"
        timeout 60 systemd-socket-activate -l "$F" --inetd -a "$BATS_TEST_TMPDIR/fake.sh" 2>/dev/null &
        fake=$!
        wait_for "[ -S '$F' ]" 5
}

@test "every reply of the daemon says its protocol: ok, error and malformed-request replies" {
        write_config
        start_daemon
        wait_ready
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send $'{"cmd":"status"}\n{"cmd":"frob"}\nnot json\n'
        [ "$(jq -r '.ok' <<<"${lines[0]}")" = true ]
        for i in 0 1 2; do
                [ "$(jq -r '.protocol' <<<"${lines[$i]}")" = 1 ]
        done
        [ "$(jq -r '.ok' <<<"${lines[2]}")" = false ]
}

@test "cachectl with a daemon older than the version field: status, check, metrics, trim and reload as before" {
        start_fake
        echo old > "$BATS_TEST_TMPDIR/mode"
        run "$CTL" -s "$F" status
        [ "$status" -eq 0 ]
        [[ "${lines[1]}" == "t "*ok*"1.0k / 1.0G"*"75.0%"*1777 ]]
        [[ "${lines[3]}" == "/ "*"500B / 1.0k"*ok ]]
        run "$CTL" -s "$F" status --json
        [ "$status" -eq 0 ]
        [ "$(jq -r '.caches[0].name' <<<"$output")" = t ]
        run "$CTL" -s "$F" check
        [ "$status" -eq 0 ]
        [[ "$output" == "CACHEKEEPER OK - t 1.0k/1.0G; / 50.0% free | "* ]]
        run "$CTL" -s "$F" metrics
        [ "$status" -eq 0 ]
        grep -qx 'cachekeeper_cache_size_bytes{cache="t"} 1000' <<<"$output"
        run "$CTL" -s "$F" trim t
        [ "$status" -eq 0 ]
        [[ "$output" == "t: evicted 2 files, 8.2k; now 100B" ]]
        run "$CTL" -s "$F" reload
        [ "$status" -eq 0 ]
        [ -z "$output" ]
}

@test "cachectl with a newer daemon: its result is refused with why (exit 3, check UNKNOWN); its errors and a bare ok are read" {
        start_fake
        echo newer > "$BATS_TEST_TMPDIR/mode"
        why="cachekeeperd at $F answered in protocol 2, newer than this cachectl's 1: use the cachectl that came with the daemon"
        run --separate-stderr "$CTL" -s "$F" status
        [ "$status" -eq 3 ]
        [ -z "$output" ]
        [ "$stderr" = "cachectl: $why" ]
        run --separate-stderr "$CTL" -s "$F" metrics
        [ "$status" -eq 3 ]
        [ "$(grep -v '^#' <<<"$output")" = "cachekeeper_up 0" ]
        run --separate-stderr "$CTL" -s "$F" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - $why" ]
        run --separate-stderr "$CTL" -s "$F" trim t
        [ "$status" -eq 1 ]
        [ "$stderr" = "cachectl: permission denied" ]
        run --separate-stderr "$CTL" -s "$F" reload
        [ "$status" -eq 0 ]
        [ -z "$stderr" ]
}

@test "a trim names at most 64 caches: cachectl says so (exit 2), the daemon refuses more from any client" {
        write_config
        start_daemon
        wait_ready
        run --separate-stderr ctl trim --dry-run $(seq 65)
        [ "$status" -eq 2 ]
        [[ "$stderr" == "cachectl: trim names at most 64 caches at once"* ]]
        names=$(printf '"t",%.0s' $(seq 64))
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send "{\"cmd\":\"trim\",\"dry_run\":true,\"caches\":[${names}\"t\"]}"$'\n'
        [ "${lines[0]}" = '{"ok":false,"error":"\"caches\" may name at most 64 caches","protocol":1}' ]
        run "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send "{\"cmd\":\"trim\",\"dry_run\":true,\"caches\":[${names%,}]}"$'\n'
        [[ "${lines[0]}" == '{"ok":true,"result":{"t":{"dry_run":true,'* ]]
}
