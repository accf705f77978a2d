#!/usr/bin/env bats
# Hostile local users against the control socket, run as unprivileged users
# (setpriv) against the real daemon: floods of slow connections, an
# /etc/group that stalls every reader, bytes that are not UTF-8.
# tests/run: takes 61 s
load ../lib/helper

ADMIN_GID=4321          # ckadmin, a group of this test's own (see setup)

setup() {
        require_root
        open_test_dir                   # other users must reach the socket
        CTL_COPY=$(world_copy "$CTL")   # and a cachectl
        # admin_group names a group that exists in this mount namespace only
        cp /etc/group "$BATS_TEST_TMPDIR/group"
        echo "ckadmin:x:$ADMIN_GID:" >> "$BATS_TEST_TMPDIR/group"
        mount --bind "$BATS_TEST_TMPDIR/group" /etc/group
        # unstalled runs clients in a mount namespace of their own, which the
        # daemon takes for a container: every right, so that what is tested
        # here is the uid and group rule (container.bats tests the other).
        write_config 1G "" 'admin_group = "ckadmin";' \
                'container_rights = [ "status", "history", "evictions", "dry-run", "trim", "merge", "reload" ];'
        start_ready
}

teardown() {
        while findmnt -rn /etc/group > /dev/null; do umount -l /etc/group; done
        # a reader stuck on the FIFO (the old code) is let go by a writer
        if [ -p "$BATS_TEST_TMPDIR/group.fifo" ]; then
                timeout 2 sh -c ': <> "$1"' sh "$BATS_TEST_TMPDIR/group.fifo" || true
        fi
        stop_daemon
}

# The attacker: holds up to N connections to SOCKET for SECONDS, sends one
# byte on each every TICK seconds (never a newline), opens a new one for
# each the daemon closes or refuses. Prints "opened N refused N" each tick:
# tests/lib/cktest.py drip, the soak's dripper too, run from a world copy.
write_dripper() {
        DRIP=$(world_copy "$TOP/tests/lib/cktest.py")
}

# The monitor: asks SOCKET for status, one request per connection, for
# SECONDS; prints "calls failures worst_ms", then each failure or each
# answer that took 1 s or more. Timed from connect to the whole reply.
write_prober() {
        cat > "$BATS_TEST_TMPDIR/probe.py" <<'EOF'
import json, signal, socket, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
calls, failures, worst, notes = 0, 0, 0.0, []
end = time.monotonic() + secs
while time.monotonic() < end:
    t0 = time.monotonic()
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        signal.alarm(10)                # a hang is a failure, not a hung test
        s.connect(path)                 # blocking, as cachectl's: waits in the backlog
        s.settimeout(10)
        s.sendall(b'{"cmd":"status"}\n')
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        signal.alarm(0)
        ok = json.loads(data.decode("utf-8")).get("ok") is True
    except (OSError, ValueError) as e:
        ok, data = False, str(e).encode()
    took = time.monotonic() - t0
    calls += 1
    worst = max(worst, took)
    if not ok:
        failures += 1
        notes.append("failed: %r" % data[:200])
    elif took >= 1:
        notes.append("took %d ms" % (took * 1000))
    time.sleep(0.05)
print(calls, failures, int(worst * 1000))
print("\n".join(notes[:20]))
EOF
        chmod 644 "$BATS_TEST_TMPDIR/probe.py"
}

@test "seven users dripping bytes on hundreds of connections never lock out root, an admin or another user" {
        # 30 s (CK_ATTACK_SECONDS): three times the idle timeout, fifteen the
        # line's; on the code before the per-user limits (f1c4e3e) all three
        # probes were turned away from the first second.
        local secs=${CK_ATTACK_SECONDS:-30} attackers="65534 60001 60002 60003 60004 60005 60006" u pids=()
        write_dripper
        # 7 uids x 64 connections, a byte every 0.25 s each, reconnecting: far
        # more than the daemon's connection limit, from more users than the
        # per-user limit lets fill the slots that are not reserved
        for u in $attackers; do
                as_user "$u" /usr/bin/python3 "$DRIP" drip "$BATS_TEST_TMPDIR/ck.sock" 64 $((secs + 5)) 0.25 \
                        > "$BATS_TEST_TMPDIR/drip-$u" &
                pids+=($!)
        done
        # the flood is on once the daemon refuses attackers
        wait_for "for u in $attackers; do tail -n1 '$BATS_TEST_TMPDIR'/drip-\$u; done | grep -qv 'refused 0'" 20

        write_prober
        probe=("$BATS_TEST_TMPDIR/probe.py" "$BATS_TEST_TMPDIR/ck.sock" "$secs")
        /usr/bin/python3 "${probe[@]}" > "$BATS_TEST_TMPDIR/probe-root" &
        pids+=($!)
        # an admin by a supplementary group only: the socket tells the daemon
        setpriv --reuid=4001 --regid=4001 --groups="$ADMIN_GID" /usr/bin/python3 "${probe[@]}" \
                > "$BATS_TEST_TMPDIR/probe-admin" &
        pids+=($!)
        # a monitor that is neither root nor admin: an eighth user
        as_user 4002 /usr/bin/python3 "${probe[@]}" > "$BATS_TEST_TMPDIR/probe-monitor" &
        pids+=($!)
        # and cachectl itself, for root and the monitor, all along
        end=$((SECONDS + secs))
        while [ $SECONDS -lt $end ]; do
                ctl status > /dev/null
                as_user 4002 "$CTL_COPY" -s "$BATS_TEST_TMPDIR/ck.sock" status > /dev/null
                sleep 1
        done
        wait "${pids[@]}"

        for p in root admin monitor; do
                echo "$p: $(cat "$BATS_TEST_TMPDIR/probe-$p")"
        done
        for u in $attackers; do echo "attacker $u: $(tail -n1 "$BATS_TEST_TMPDIR/drip-$u")"; done
        for p in root admin monitor; do
                read -r calls failures worst < "$BATS_TEST_TMPDIR/probe-$p"
                [ "$calls" -ge $((secs * 2)) ]
                [ "$failures" -eq 0 ]
                [ "$worst" -lt 1000 ]
        done
        # the attack really was one: each attacker was held to its share
        for u in $attackers; do
                read -r _ opened _ refused < <(tail -n1 "$BATS_TEST_TMPDIR/drip-$u")
                [ "$opened" -gt 64 ] && [ "$refused" -gt 0 ]
        done
        kill -0 "$DAEMON_PID"
}

# unstalled CMD...: runs CMD in a mount namespace of its own where
# /etc/group is readable again (setpriv reads it).
unstalled() {
        unshare -m --propagation private sh -c 'umount /etc/group && exec "$@"' sh "$@"
}

@test "admin is decided from the socket and a gid looked up at load and reload: a stalled /etc/group stalls no request" {
        S=$BATS_TEST_TMPDIR/ck.sock
        # from now on, whoever reads /etc/group here waits for a writer that never comes
        mkfifo -m 644 "$BATS_TEST_TMPDIR/group.fifo"
        mount --bind "$BATS_TEST_TMPDIR/group.fifo" /etc/group
        run unstalled timeout 10 setpriv --reuid=4002 --regid=4002 --clear-groups "$CTL_COPY" -s "$S" reload
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: reload is for root and members of 'ckadmin'"* ]]
        # a member by a supplementary group only, as the socket says, may trim
        run unstalled timeout 10 setpriv --reuid=4001 --regid=4001 --groups="$ADMIN_GID" "$CTL_COPY" -s "$S" trim
        [ "$status" -eq 0 ]
        [[ "$output" == "t: evicted 0 files"* ]]
        run timeout 10 "$CTL" -s "$S" status
        [ "$status" -eq 0 ]
        umount /etc/group
        grep -q "admin_group 'ckadmin' is gid $ADMIN_GID" "$BATS_TEST_TMPDIR/daemon.log"

        # the group's gid changes: the daemon follows at reload
        sed "s/^ckadmin:x:$ADMIN_GID:/ckadmin:x:4322:/" "$BATS_TEST_TMPDIR/group" > "$BATS_TEST_TMPDIR/group.new"
        cat "$BATS_TEST_TMPDIR/group.new" > "$BATS_TEST_TMPDIR/group"      # in place: it is bind-mounted
        run ctl reload
        [ "$status" -eq 0 ]
        grep -q "admin_group 'ckadmin' is gid 4322" "$BATS_TEST_TMPDIR/daemon.log"
        run setpriv --reuid=4001 --regid=4001 --groups="$ADMIN_GID" "$CTL_COPY" -s "$S" reload
        [ "$status" -eq 1 ]
        # the primary group counts as well
        run setpriv --reuid=4001 --regid=4322 --clear-groups "$CTL_COPY" -s "$S" reload
        [ "$status" -eq 0 ]
        kill -0 "$DAEMON_PID"
}

@test "bytes that are not UTF-8 come back as valid UTF-8 JSON, U+FFFD in their place" {
        # as nobody: names that are not UTF-8, echoed in the error replies
        cat > "$BATS_TEST_TMPDIR/utf8.py" <<'EOF'
import json, socket, sys
cases = [
    (b'{"cmd":"status","cache":"\xff"}', "no cache named '\ufffd'"),
    (b'{"cmd":"status","cache":"a\xc3\xa9\xe2\x82"}', "no cache named 'a\u00e9\ufffd\ufffd'"),
    (b'{"cmd":"status","cache":"\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"}', "no cache named '" + "\ufffd" * 9 + "'"),
    (b'{"cmd":"\xfe\x80z"}', "unknown command '\ufffd\ufffdz'"),
    (b'{"cmd":"trim","dry_run":true,"caches":["t","\xe9t\xe9"]}', "no cache named '\ufffdt\ufffd'"),
    (b'{"cmd":"status","cache":"\xf0\x9f\x98\x80"}', "no cache named '\U0001F600'"),
]
for request, want in cases:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(request + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    o = json.loads(reply.decode("utf-8", errors="strict"))
    assert o == {"ok": False, "error": want, "protocol": 1}, (request, reply)
print("all valid")
EOF
        chmod 644 "$BATS_TEST_TMPDIR/utf8.py"
        run as_user 65534 /usr/bin/python3 "$BATS_TEST_TMPDIR/utf8.py" "$BATS_TEST_TMPDIR/ck.sock"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "all valid" ]

        # a configured path that is not UTF-8, in status and in a trim's reply
        mkdir "$BATS_TEST_TMPDIR/c"$'\xff'
        printf 'caches = ( { name = "u"; path = "%s"; max_size = "1G"; } );\n' "$BATS_TEST_TMPDIR/c"$'\xff'"/u" \
                >> "$BATS_TEST_TMPDIR/ck.conf"
        sed -i '/^caches = ( { name = "t"/d' "$BATS_TEST_TMPDIR/ck.conf"
        run ctl reload
        [ "$status" -eq 0 ]
        wait_ready
        "$HELPERS/sockpoke" "$BATS_TEST_TMPDIR/ck.sock" send $'{"cmd":"status"}\n{"cmd":"trim","dry_run":true}\n' \
                > "$BATS_TEST_TMPDIR/replies"
        run /usr/bin/python3 -c '
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-2:] == [b"eof", b""], lines[-2:]
replies = [json.loads(l.decode("utf-8", errors="strict")) for l in lines[:-2]]
assert replies[0]["result"]["caches"][0]["path"].endswith("/c\ufffd/u"), replies[0]
assert replies[1]["ok"] is True, replies[1]
print(len(replies))' "$BATS_TEST_TMPDIR/replies"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = 2 ]
}

@test "at its connection limit the daemon turns a user away with a reason: cachectl exits 3, check says UNKNOWN" {
        S=$BATS_TEST_TMPDIR/ck.sock
        sockpoke=$(world_copy "$HELPERS/sockpoke")
        setpriv --reuid=4000 --regid=4000 --clear-groups "$sockpoke" "$S" hold "$((8 + 2))" 30 \
                > "$BATS_TEST_TMPDIR/hold.out" &
        holder=$!
        wait_for "grep -q 'holding' '$BATS_TEST_TMPDIR/hold.out'" 5
        run --separate-stderr as_user 4000 "$CTL_COPY" -s "$S" status
        [ "$status" -eq 3 ]
        [ "$stderr" = "cachectl: cachekeeperd at $S turned the connection away: too many connections from uid 4000 (at most 8)" ]
        run --separate-stderr as_user 4000 "$CTL_COPY" -s "$S" check
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - cachekeeperd at $S turned the connection away: too many connections from uid 4000 (at most 8)" ]
        # everyone else is served meanwhile
        run as_user 4001 "$CTL_COPY" -s "$S" status
        [ "$status" -eq 0 ]
        run ctl status
        [ "$status" -eq 0 ]
        # and the user itself, once its connections are gone
        kill "$holder"
        wait "$holder" || true
        wait_for "as_user 4000 '$CTL_COPY' -s '$S' status > /dev/null 2>&1" 5
}
