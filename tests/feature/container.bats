#!/usr/bin/env bats
# cachectl in a build container: the container is a process in a mount
# namespace of its own (unshare -m), with a /run of its own (tmpfs) into
# which the host's socket directory is bind-mounted, as
# `docker run -v /run/cachekeeper:/run/cachekeeper` does. The daemon runs
# as systemd would run it: systemd-socket-activate holds the socket in a
# directory of its own (tests/boot/run does the same with the real units).
load ../lib/helper

setup() {
        require_root
        write_config
        SOCKDIR=$BATS_TEST_TMPDIR/run-cachekeeper      # the host's /run/cachekeeper
        mkdir -p "$SOCKDIR"
}

teardown() {
        [ -z "${CONT_PID:-}" ] || { kill "$CONT_PID" 2>/dev/null; wait "$CONT_PID" 2>/dev/null; }
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID"
                wait "$DAEMON_PID" 2>/dev/null
        fi
        return 0
}

# The daemon on $SOCKDIR/cachekeeper.sock, as the socket unit starts it.
start_activated() {
        systemd-socket-activate -l "$SOCKDIR/cachekeeper.sock" --fdname=control \
                "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" 2>> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
        wait_for "[ -S '$SOCKDIR/cachekeeper.sock' ]"
        chmod 0666 "$SOCKDIR/cachekeeper.sock"          # the unit's SocketMode=
}

# A restart of the service and of its socket: the daemon goes, systemd
# removes the socket file (RemoveOnStop=yes) and binds a new one in the
# same directory.
restart_activated() {
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        rm "$SOCKDIR/cachekeeper.sock"
        start_activated
}

# A container: a process in a mount namespace of its own with a private
# /run; $1 is a shell script run inside to set up its mounts. in_container
# runs a command there.
start_container() {
        unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run && eval "$1" && exec sleep 600' \
                sh "$1" 3>&- &
        CONT_PID=$!
        wait_for "[ \"\$(readlink /proc/$CONT_PID/ns/mnt)\" != \"\$(readlink /proc/self/ns/mnt)\" ] &&
                  [ \"\$(readlink /proc/$CONT_PID/exe)\" = \"\$(readlink -f /usr/bin/sleep)\" ]"
}

in_container() {
        nsenter -t "$CONT_PID" -m -- "$@"
}

@test "a container that mounted the socket directory reaches the daemon after it and its socket restart; one that mounted the socket file does not" {
        start_activated
        # The directory at the default path, and (the old way) the socket file itself.
        start_container "mkdir /run/cachekeeper && mount --bind '$SOCKDIR' /run/cachekeeper &&
                         touch /run/old.sock && mount --bind '$SOCKDIR/cachekeeper.sock' /run/old.sock"
        run in_container "$CTL" status --json
        [ "$status" -eq 0 ]
        [ "$(jq -r '.caches[0].name' <<< "$output")" = t ]
        in_container "$CTL" -s /run/old.sock status > /dev/null
        ino=$(stat -c %i "$SOCKDIR/cachekeeper.sock")

        restart_activated
        [ "$(stat -c %i "$SOCKDIR/cachekeeper.sock")" != "$ino" ]
        run in_container "$CTL" status --json
        [ "$status" -eq 0 ]
        [ "$(jq -r '.caches[0].name' <<< "$output")" = t ]
        # The mounted file is the first socket's inode: nobody listens there any more.
        run in_container "$CTL" -s /run/old.sock status
        echo "$output"
        [ "$status" -eq 3 ]
        [[ "$output" == *"cannot reach cachekeeperd at /run/old.sock: Connection refused"* ]]
}

@test "cachectl's default socket is /run/cachekeeper/cachekeeper.sock, then the old /run/cachekeeper.sock; -s and \$CACHEKEEPER_SOCKET never fall back" {
        start_activated
        # Only the old path, as a container made for 0.1.0 has it.
        start_container "mkdir /run/elsewhere && mount --bind '$SOCKDIR' /run/elsewhere &&
                         ln -s /run/elsewhere/cachekeeper.sock /run/cachekeeper.sock"
        run in_container "$CTL" status --json
        [ "$status" -eq 0 ]
        [ "$(jq -r '.caches[0].name' <<< "$output")" = t ]
        run in_container env CACHEKEEPER_SOCKET=/run/cachekeeper/cachekeeper.sock "$CTL" status
        [ "$status" -eq 3 ]
        [[ "$output" == *"cannot reach cachekeeperd at /run/cachekeeper/cachekeeper.sock: No such file or directory"* ]]
        run in_container "$CTL" -s /run/cachekeeper/cachekeeper.sock status
        [ "$status" -eq 3 ]
        # Neither path: the message names the default.
        in_container rm /run/cachekeeper.sock
        run in_container "$CTL" status
        echo "$output"
        [ "$status" -eq 3 ]
        [[ "$output" == *"cannot reach cachekeeperd at /run/cachekeeper/cachekeeper.sock: No such file or directory"* ]]
        # The help names the default.
        "$CTL" --help | grep -q '/run/cachekeeper/cachekeeper.sock'
}

@test "a daemon that binds its socket itself makes the socket's missing directory (0755)" {
        write_config 1G "" "socket = \"$BATS_TEST_TMPDIR/made/ck.sock\";"
        sed -i '1d' "$BATS_TEST_TMPDIR/ck.conf"       # write_config's own socket line
        start_daemon
        wait_for "[ -S '$BATS_TEST_TMPDIR/made/ck.sock' ]"
        [ "$(stat -c %a "$BATS_TEST_TMPDIR/made")" = 755 ]
        "$CTL" -s "$BATS_TEST_TMPDIR/made/ck.sock" status > /dev/null
}

# ------------------------------------------------------------ rights of a container

# The daemon on the socket directory, a container with it mounted at the
# host's path, a few real entries in the cache.
container_with_cache() {
        setup_compile_cache "$@"
        compile "$CACHE" 3
        start_activated
        start_container "mkdir /run/cachekeeper && mount --bind '$SOCKDIR' /run/cachekeeper"
        wait_for "[ \"\$(cache_field_at ready)\" = true ]"
}

@test "root in a container is refused trim, reload and merge, whatever its uid; its status, history and dry run are answered; root on the host trims" {
        container_with_cache
        for req in "trim --to 1k" reload "merge u --into t"; do
                run in_container "$CTL" $req
                echo "$req: $output"
                [ "$status" -eq 1 ]
                [[ "$output" == *"permission denied: ${req%% *} is not allowed from a container (pid "*" is in another mount namespace; container_rights lists what is)"* ]]
        done
        files=$(cache_field_at files)
        [ "$files" -gt 0 ]
        run in_container "$CTL" trim --dry-run --to 1k
        echo "$output"
        [ "$status" -eq 0 ]
        in_container "$CTL" status --json | jq -e '.caches[0].name == "t"'
        in_container "$CTL" history t > /dev/null
        [ "$(cache_field_at files)" = "$files" ]
        # The same request from the host's root is a real trim.
        "$CTL" -s "$SOCKDIR/cachekeeper.sock" trim --to 1k
        wait_for "[ \"\$(cache_field_at files)\" -lt $files ]"
}

@test "container_rights sets what a container may ask: without dry-run its dry run is refused; with trim its root trims and its nobody does not" {
        container_with_cache 1G "" 'container_rights = [ "status" ];'
        run in_container "$CTL" trim --dry-run
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: dry-run is not allowed from a container"* ]]
        run in_container "$CTL" history t
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: history is not allowed from a container"* ]]
        in_container "$CTL" status > /dev/null
        kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rm "$SOCKDIR/cachekeeper.sock"

        write_config 1G "" 'container_rights = [ "status", "trim" ];'
        start_activated
        wait_for "[ \"\$(cache_field_at ready)\" = true ]"
        files=$(cache_field_at files)
        ctl_copy=$(world_copy "$CTL")   # nobody cannot enter a 0700 build tree
        run in_container "${AS_NOBODY[@]}" "$ctl_copy" trim --to 1k
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: trim is for root and members of 'root'"* ]]
        in_container "$CTL" trim --to 1k
        wait_for "[ \"\$(cache_field_at files)\" -lt $files ]"
}

@test "without SO_PEERPIDFD (a kernel before 6.5, made here by seccomp) the peer is placed through pidfd_open: the host's root trims, a container's root is refused" {
        # The filter itself: SO_PEERPIDFD fails under it, and works without it.
        peerpidfd='import socket; a, b = socket.socketpair(); a.getsockopt(socket.SOL_SOCKET, 77)'
        python3 -c "$peerpidfd"
        run "$HELPERS/no-peerpidfd" python3 -c "$peerpidfd"
        [ "$status" -ne 0 ]
        [[ "$output" == *"Protocol not available"* ]]

        setup_compile_cache
        compile "$CACHE" 3
        systemd-socket-activate -l "$SOCKDIR/cachekeeper.sock" --fdname=control \
                "$HELPERS/no-peerpidfd" "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" 2>> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
        wait_for "[ -S '$SOCKDIR/cachekeeper.sock' ]"
        start_container "mkdir /run/cachekeeper && mount --bind '$SOCKDIR' /run/cachekeeper"
        wait_for "[ \"\$(cache_field_at ready)\" = true ]"
        run in_container "$CTL" trim --to 1k
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: trim is not allowed from a container"* ]]
        in_container "$CTL" trim --dry-run --to 1k > /dev/null
        files=$(cache_field_at files)
        [ "$files" -gt 0 ]
        "$CTL" -s "$SOCKDIR/cachekeeper.sock" trim --to 1k
        wait_for "[ \"\$(cache_field_at files)\" -lt $files ]"
}

@test "a peer the daemon cannot place (no SO_PEERPIDFD, no pidfd_open: before Linux 5.3) counts as a container, and the refusal says why" {
        write_config
        systemd-socket-activate -l "$SOCKDIR/cachekeeper.sock" --fdname=control \
                "$HELPERS/no-peerpidfd" --no-pidfd-open "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" \
                2>> "$BATS_TEST_TMPDIR/daemon.log" 3>&- &
        DAEMON_PID=$!
        wait_for "[ -S '$SOCKDIR/cachekeeper.sock' ]"
        wait_for "[ \"\$(cache_field_at ready)\" = true ]"
        run "$CTL" -s "$SOCKDIR/cachekeeper.sock" trim --to 1k
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied: trim is not allowed from a container (the mount namespace of pid "*" could not be read: Function not implemented; such a peer counts as one;"* ]]
}

# cache_field_at FIELD: cache t's FIELD ("ready": the daemon's), asked on the host's socket.
cache_field_at() {
        local f=".caches[0].$1"
        [ "$1" != ready ] || f=.ready
        "$CTL_LOOK" -s "$SOCKDIR/cachekeeper.sock" status --json 2>/dev/null | jq -r "$f"
}

# ------------------------------------------------------------ cachectl inside

@test "measure --explain inside a container, the cache mounted elsewhere: the daemon's eviction is named, found by the cache's root_id; without the socket directory it says why not" {
        setup_compile_cache
        start_activated
        wait_for "[ \"\$(cache_field_at ready)\" = true ]"
        "$CTL_LOOK" -s "$SOCKDIR/cachekeeper.sock" status --json | jq -e '.caches[0].root_id | test("^[0-9]+:[0-9]+$")'
        # The cache at another path, as docker run -v /var/cache/mi210-ccache:/ccache mounts it.
        start_container "mkdir /run/cachekeeper /run/ccache && mount --bind '$SOCKDIR' /run/cachekeeper &&
                         mount --bind '$CACHE' /run/ccache"
        P=$BATS_TEST_TMPDIR/proj
        mkdir -p "$P"
        printf 'int a(void) { return 1; }\n' > "$P/a.c"
        build="cd '$P' && ccache gcc -O1 -c a.c -o a.o"
        inside_explain() {
                run --separate-stderr in_container env CCACHE_DIR=/run/ccache XDG_CACHE_HOME="$BATS_TEST_TMPDIR/xdg" \
                        "$CTL" measure --explain --json -- sh -c "$build"
                [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
        }
        inside_explain
        wait_for "[ \"\$(cache_field_at stored_files_total)\" = 2 ]"
        rm -rf "$BATS_TEST_TMPDIR/xdg"           # nothing kept: the daemon alone knows
        "$CTL" -s "$SOCKDIR/cachekeeper.sock" trim t --to 1k > /dev/null
        inside_explain
        echo "$output" | jq -c '.missed'
        jq -e '[.missed[] | .cause == "evicted" and .by == "cap"] | all and length == 1' <<<"$output"
        jq -e '.missed[0].detail | test("^evicted [0-9]+ s ago by the cap trim of t$")' <<<"$output"

        # A container without the socket directory: the miss is still an
        # eviction, and cachectl says plainly why it cannot say more.
        kill "$CONT_PID"; wait "$CONT_PID" || true
        start_container "mkdir /run/ccache && mount --bind '$CACHE' /run/ccache"
        "$CTL" -s "$SOCKDIR/cachekeeper.sock" trim t --to 1k > /dev/null
        inside_explain
        echo "$stderr"
        jq -e '[.missed[] | .cause == "evicted" and .by == null] | all and length == 1' <<<"$output"
        [[ "$stderr" == *"cachectl: entries left the cache, and the daemon could not be asked when or why: cachekeeperd at /run/cachekeeper/cachekeeper.sock cannot be reached: No such file or directory (in a container: mount the host's /run/cachekeeper there)"* ]]
}
