#!/usr/bin/env bats
# A hostile local user (uid 65534) against the cache's ccache.conf and
# ccache's directories, with the real daemon: whatever is planted, root's
# next compile runs no code of theirs, and mode upkeep never hands them
# anyone's files.
# tests/run: takes 55 s
load ../lib/helper

setup() {
        require_root
        open_test_dir                           # nobody must reach what the test gives them
        setup_volume 64M
        C=$CACHE
        chmod 0777 "$VOL"                       # a volume several users write to
        mkdir -m 1777 "$C"
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        MARK=$BATS_TEST_TMPDIR/marks/pwned
        mkdir -p "$BATS_TEST_TMPDIR/marks"
        # The attacker's corner, and their payload: it leaves a mark if it
        # ever runs, then runs what it was given.
        EVIL=$BATS_TEST_TMPDIR/anyone
        mkdir -p "$EVIL/dir"
        printf '#!/bin/sh\ntouch %s\n[ $# -eq 0 ] || exec "$@"\n' "$MARK" > "$EVIL/evil.sh"
        chmod 755 "$EVIL/evil.sh"
        chown -R 65534:65534 "$EVIL"
        # Every way a line could make ccache run it, one indented (4.7-4.12
        # read that as a line of its own).
        PAYLOAD="prefix_command = $EVIL/evil.sh
prefix_command_cpp = $EVIL/evil.sh
compiler_check = $EVIL/evil.sh
namespace = shared
  prefix_command = $EVIL/evil.sh
sloppiness = time_macros"
        as_nobody sh -c 'printf "%s\n" "$1" > "$2"' - "$PAYLOAD" "$EVIL/payload.conf"
        cat > "$BATS_TEST_TMPDIR/alert.sh" <<'EOS'
#!/bin/sh
echo "$CACHEKEEPER_EVENT|$CACHEKEEPER_CACHE|$CACHEKEEPER_MESSAGE" >> "$1"
EOS
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        N=0
}

teardown() {
        [ -z "${DAEMON_PID:-}" ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true
        stop_daemon
        unmount_all
}

# config [extra cache settings]: cache "t" at $C, no audit, alerts to $ALERTS
config() {
        CACHE=$C write_config 1G "${1:-}" 'audit_interval = "0s";' "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];"
}

# A real compile as root, of a file never compiled before (a miss: the
# compiler and the preprocessor run, and with them any prefix command).
root_compile() {
        local src=$BATS_TEST_TMPDIR/src
        mkdir -p "$src"
        N=$((N + 1))
        printf 'int f%d(int x) { return x * %d; }\n' "$N" "$RANDOM" > "$src/f$N.c"
        env -u CCACHE_CONFIGPATH -u CCACHE_PREFIX -u CCACHE_PREFIX_CPP -u CCACHE_COMPILERCHECK \
                CCACHE_DIR="$C" ccache gcc -c "$src/f$N.c" -o "$src/f$N.o"
}

# Root's compiles run no payload, and the file is the daemon's: a
# root-owned 0644 regular file, one link, with only safe lines.
assert_safe() {
        root_compile
        root_compile
        [ ! -e "$MARK" ] || { echo "the payload ran as root"; cat "$C/ccache.conf"; false; }
        [ -f "$C/ccache.conf" ] && [ ! -L "$C/ccache.conf" ]
        [ "$(stat -c '%u %a %h' "$C/ccache.conf")" = "0 644 1" ]
        ! grep -Eq '^[[:space:]]|prefix_command|compiler_check|evil' "$C/ccache.conf" ||
                { cat "$C/ccache.conf"; false; }
}

# Gives the daemon time to make ccache.conf its own again; whether it did,
# assert_safe tells (a daemon that never does fails there, by the payload).
settle() {
        wait_for "[ -f '$C/ccache.conf' ] && [ ! -L '$C/ccache.conf' ] &&
                  [ \"\$(stat -c %u '$C/ccache.conf')\" = 0 ] && ! grep -q evil '$C/ccache.conf'" 5 || true
}

# Stops the daemon while the admin deletes ccache.conf and nobody plants
# with the given command; the daemon sees both when it runs again.
plant_after_delete() {
        kill -STOP "$DAEMON_PID"
        rm -f "$C/ccache.conf"
        as_nobody "$@"
        kill -CONT "$DAEMON_PID"
}

@test "the payload does run from a ccache.conf nobody keeps (the test's own control)" {
        mkdir -m 1777 "$VOL/unkept"
        as_nobody cp "$EVIL/payload.conf" "$VOL/unkept/ccache.conf"
        env -u CCACHE_CONFIGPATH CCACHE_DIR="$VOL/unkept" ccache gcc -c -x c /dev/null -o "$BATS_TEST_TMPDIR/x.o"
        [ -e "$MARK" ]
}

@test "adopting a cache: a ccache.conf nobody renamed into place is replaced before anyone compiles" {
        as_nobody cp "$EVIL/payload.conf" "$C/.x"
        as_nobody mv "$C/.x" "$C/ccache.conf"
        config
        start_ready
        assert_safe
        # only the safe lines of nobody's file survive, one line each
        grep -qx 'sloppiness = time_macros' "$C/ccache.conf"
        grep -qx 'umask = 000' "$C/ccache.conf"
        grep -qx 'max_size = 20G' "$C/ccache.conf"
        # the alert names the keys and the owner
        wait_for "grep -q '^cache-conf-unsafe|t|' '$ALERTS'"
        grep '^cache-conf-unsafe|t|' "$ALERTS" | grep -q 'prefix_command'
        grep '^cache-conf-unsafe|t|' "$ALERTS" | grep -q 'owner uid 65534'
        grep -q "dropped 'compiler_check' from $C/ccache.conf (a file another user owns, owner uid 65534)" \
                "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a file created in place after the admin deleted it is replaced at once" {
        config
        start_ready
        plant_after_delete sh -c 'cat "$1" > "$2"' - "$EVIL/payload.conf" "$C/ccache.conf"
        settle
        assert_safe
        wait_for "grep -q '^cache-conf-unsafe|t|.*owner uid 65534' '$ALERTS'"
}

@test "a symlink to a file of code is replaced, its target untouched" {
        config
        start_ready
        plant_after_delete ln -s "$EVIL/payload.conf" "$C/ccache.conf"
        settle
        assert_safe
        cmp "$EVIL/payload.conf" <(printf '%s\n' "$PAYLOAD")
        [ "$(stat -c %u "$EVIL/payload.conf")" = 65534 ]
        wait_for "grep -q '^cache-conf-unsafe|t|.*was a symlink (owner uid 65534)' '$ALERTS'"
}

@test "an oversized ccache.conf is replaced unread" {
        config
        start_ready
        plant_after_delete sh -c '{ cat "$1"; head -c 100000 /dev/zero | tr "\0" "#"; echo; } > "$2"' - \
                "$EVIL/payload.conf" "$C/ccache.conf"
        settle
        assert_safe
        [ "$(stat -c %s "$C/ccache.conf")" -lt 100 ]
        wait_for "grep -q '^cache-conf-unsafe|t|.*was too big (owner uid 65534)' '$ALERTS'"
}

@test "a ccache.conf another user owns keeps only the safe list, even of what the admin allows" {
        config 'ccache_conf_allow = [ "base_dir" ];'
        start_ready
        # the admin's own line of an allowed key stays
        printf 'base_dir = /srv\nsloppiness = locale\n' > "$C/ccache.conf.new"
        mv "$C/ccache.conf.new" "$C/ccache.conf"
        wait_for "grep -qx 'umask = 000' '$C/ccache.conf'"
        grep -qx 'base_dir = /srv' "$C/ccache.conf"
        # another user's does not
        plant_after_delete sh -c 'printf "base_dir = /srv\nsloppiness = locale\n%s\n" "$1" > "$2"' - \
                "$PAYLOAD" "$C/ccache.conf"
        settle
        ! grep -q base_dir "$C/ccache.conf" || false
        grep -qx 'sloppiness = locale' "$C/ccache.conf"
        assert_safe
}

@test "base_dir root wrote stays without ccache_conf_allow (measure --explain's fix); another user's never does" {
        config
        start_ready
        printf 'base_dir = /srv\nhash_dir = false\n' > "$C/ccache.conf.new"
        mv "$C/ccache.conf.new" "$C/ccache.conf"
        wait_for "grep -qx 'umask = 000' '$C/ccache.conf'"
        grep -qx 'base_dir = /srv' "$C/ccache.conf"
        grep -qx 'hash_dir = false' "$C/ccache.conf"
        plant_after_delete sh -c 'printf "base_dir = /srv\n%s\n" "$1" > "$2"' - "$PAYLOAD" "$C/ccache.conf"
        settle
        ! grep -q base_dir "$C/ccache.conf" || false
        assert_safe
}

@test "a directory planted as ccache.conf is moved aside and the file made" {
        config
        start_ready
        plant_after_delete mkdir "$C/ccache.conf"
        settle
        assert_safe
        [ -d "$C"/ccache.conf.moved.* ]
}

@test "on overlayfs (a container's root), ccache.conf is written once, not rewritten in a loop" {
        # overlayfs gives a directory the overlay's st_dev and a regular file
        # its layer's: a file-system check by st_dev took the daemon's own
        # file for a mount, and replaced it forever (the boot test's root).
        # layers on two file systems, as a container's image and its tmpfs
        mount_tmpfs "$BATS_TEST_TMPDIR/lower" 8M
        mkdir -p "$BATS_TEST_TMPDIR/lower/cache" "$VOL/upper" "$VOL/work" "$BATS_TEST_TMPDIR/ov"
        mount -t overlay -o "lowerdir=$BATS_TEST_TMPDIR/lower,upperdir=$VOL/upper,workdir=$VOL/work" \
                ckov "$BATS_TEST_TMPDIR/ov"
        C=$BATS_TEST_TMPDIR/ov/cache
        chmod 1777 "$C"
        touch "$C/probe"
        [ "$(stat -c %d "$C")" != "$(stat -c %d "$C/probe")" ]   # the premise
        rm "$C/probe"
        config
        start_ready
        wait_for "[ -f '$C/ccache.conf' ]"
        ino=$(stat -c %i "$C/ccache.conf")
        root_compile
        mkdir -p "$C/0/0" && touch "$C/0/0/x"
        wait_exact t "$C"
        [ "$(stat -c %i "$C/ccache.conf")" = "$ino" ] || { head -20 "$BATS_TEST_TMPDIR/daemon.log"; false; }
        ! grep -q 'ccache.conf was' "$BATS_TEST_TMPDIR/daemon.log" || false
        assert_safe
}

@test "on a volume nobody filled, a plant that cannot be replaced is removed, and the file comes back" {
        config
        start_ready
        kill -STOP "$DAEMON_PID"
        rm -f "$C/ccache.conf"
        as_nobody dd if=/dev/zero of="$VOL/fill" bs=1M 2>/dev/null || true
        as_nobody ln -s "$EVIL/payload.conf" "$C/ccache.conf"
        kill -CONT "$DAEMON_PID"
        wait_for "[ ! -e '$C/ccache.conf' ] && [ ! -L '$C/ccache.conf' ]"
        wait_for "grep -q '^cache-conf-unsafe|t|.*was a symlink (owner uid 65534); removed' '$ALERTS'"
        rm -f "$VOL/fill"
        wait_for "[ -f '$C/ccache.conf' ]"
        assert_safe
        grep -q 'ccache.conf is written again' "$BATS_TEST_TMPDIR/daemon.log"
}

@test "deleted, ccache.conf is back at once, and a plant racing the daemon never lasts" {
        config
        start_ready
        # the attacker loops planting a symlink while the admin deletes
        as_nobody sh -c 'end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do
                ln -s "$1" "$2" 2>/dev/null; done; true' - "$EVIL/payload.conf" "$C/ccache.conf" &
        racer=$!
        for i in 1 2 3 4 5; do
                rm -f "$C/ccache.conf"
                t0=$(date +%s%N)
                wait_for "[ \"\$(stat -c '%u %F' '$C/ccache.conf' 2>/dev/null)\" = '0 regular file' ]" 3
                # well within the 2 s an rm -rf is given for kept directories
                [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 1500 ]
        done
        wait "$racer"
        settle
        assert_safe
}

@test "ccache_conf = false: the daemon writes no settings, but ccache.conf stays safe" {
        printf 'max_size = 7G\ncompression_level = 5\n' > "$C/ccache.conf"
        config 'ccache_conf = false;'
        start_ready
        [ "$(cat "$C/ccache.conf")" = "$(printf 'max_size = 7G\ncompression_level = 5')" ]
        plant_after_delete ln -s "$EVIL/payload.conf" "$C/ccache.conf"
        settle
        # nothing of the daemon's own: the file only blocks the planting
        ! grep -q 'umask\|max_size' "$C/ccache.conf" || false
        assert_safe
}

@test "root's own ccache -o and -M: safe keys kept, unsafe ones dropped with an alert" {
        config
        start_ready
        CCACHE_DIR=$C ccache -o compression_level=3
        wait_for "[ \"\$(stat -c %a '$C/ccache.conf')\" = 644 ]"
        wait_for "grep -qx 'compression_level = 3' '$C/ccache.conf'"
        CCACHE_DIR=$C ccache -o prefix_command="$EVIL/evil.sh"
        settle
        wait_for "! grep -q prefix_command '$C/ccache.conf'"
        grep -qx 'compression_level = 3' "$C/ccache.conf"
        assert_safe
        wait_for "grep -q '^cache-conf-unsafe|t|.*was a file root wrote (owner uid 0); dropped 1 setting: prefix_command' '$ALERTS'"
}

@test "reload: a new max_size reaches ccache.conf at once" {
        config
        start_ready
        grep -qx 'max_size = 20G' "$C/ccache.conf"
        sed -i 's/max_size = "1G"/max_size = "50G"/' "$BATS_TEST_TMPDIR/ck.conf"
        ctl reload
        grep -qx 'max_size = 1T' "$C/ccache.conf"
        [ "$(cache_field t ccache_conf_max_size)" = 1T ]
        [ "$(CCACHE_DIR=$C env -u CCACHE_MAXSIZE ccache -k max_size)" = 1000.0G ]
}

@test "a sticky directory moved into a kept slot is left alone: nobody cannot unlock root's files with it" {
        mkdir -m 1777 "$VOL/shared"
        echo "root's" > "$VOL/shared/rootfile"
        config
        start_ready
        as_nobody mv "$C/b/4" "$C/b/4.away"
        as_nobody mv "$VOL/shared" "$C/b/4"
        wait_for "grep -q '^cache-mode|t|.*$C/b/4 ' '$ALERTS'"
        ! as_nobody rm -f "$C/b/4/rootfile" || false
        [ "$(stat -c %a "$C/b/4")" = 1777 ]
        grep -q "^cache-mode|t|.*$C/b/4 is sticky (mode 1777, owner uid 0).*left alone" "$ALERTS"
        as_nobody mv "$C/b/4" "$VOL/shared"
        [ "$(stat -c %a "$VOL/shared")" = 1777 ]
        [ "$(cat "$VOL/shared/rootfile")" = "root's" ]
        # a level directory of nobody's own with a restrictive mode is
        # repaired as ever; nobody cannot move in one of someone else's
        # (rename(2) of a directory to a new parent needs write access to it)
        as_nobody mv "$C/b/5" "$C/b/5.away"
        as_nobody mkdir -m 0700 "$C/b/5"
        wait_for "[ \"\$(stat -c %a '$C/b/5')\" = 777 ]"
        mkdir -m 0755 "$VOL/private"
        as_nobody mv "$C/b/6" "$C/b/6.away"
        ! as_nobody mv "$VOL/private" "$C/b/6" || false
        kill -0 "$DAEMON_PID"
}

@test "a symlink at a kept path is replaced at once, its target untouched" {
        config
        start_ready
        as_nobody mv "$C/c/5" "$C/c/5.away"
        as_nobody ln -s "$EVIL/dir" "$C/c/5"
        wait_for "[ -d '$C/c/5' ] && [ ! -L '$C/c/5' ]" 3
        [ "$(stat -c '%u %a' "$EVIL/dir")" = "65534 755" ]
        [ -z "$(ls -A "$EVIL/dir")" ]
        wait_for "grep -q '^cache-mode|t|.*$C/c/5 was a symlink (owner uid 65534).*removed' '$ALERTS'"
        # tmp/, where root's compiles write: only after root removed it
        kill -STOP "$DAEMON_PID"
        rm -rf "$C/tmp"
        as_nobody ln -s "$EVIL/dir" "$C/tmp"
        kill -CONT "$DAEMON_PID"
        wait_for "[ -d '$C/tmp' ] && [ ! -L '$C/tmp' ]" 3
        root_compile
        [ -z "$(ls -A "$EVIL/dir")" ]
}

@test "one kept path that cannot be fixed does not stop the upkeep of the others" {
        mkdir "$C/tmp"
        mount -t tmpfs -o mode=0700 cktmp "$C/tmp"     # beneath the root, never entered
        config
        start_ready
        [ "$(find "$C" -mindepth 1 -maxdepth 2 -type d -perm 0777 | wc -l)" -eq $((16 + 256 + 1)) ]
        [ -d "$C/lock" ] && [ -d "$C/f/f" ]
        grep -q "cannot keep $C/tmp usable" "$BATS_TEST_TMPDIR/daemon.log"
}
