# Shared set-up for the bats tests (tests/feature, tests/attack, tests/repo):
# each loads it as `load ../lib/helper`. CK_BUILD is the build directory
# (absolute); the tests drive the ASan+UBSan build of the binaries.
bats_require_minimum_version 1.5.0
CK_BUILD=${CK_BUILD:-$BATS_TEST_DIRNAME/../../build}
CKD=${CKD:-$CK_BUILD/asan/cachekeeperd}
CTL=${CTL:-$CK_BUILD/asan/cachectl}
# The plain client, for the tests' own looks at the status (status_jq and
# what is built on it: cache_field, daemon_totals ...), which wait_for
# repeats every 50 ms: a sanitized cachectl costs some ten times the CPU of
# this one per call, and the suite is bound by CPU. What a test asks of
# cachectl itself goes through ctl, the sanitized build.
CTL_LOOK=${CTL_LOOK:-$CK_BUILD/cachectl}
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Waits up to $2 seconds (default 10) for command $1 to succeed: it tries
# every 50 ms for the first 2 s or so, then every 200 ms. A try that looks
# at the status costs some 80 ms of CPU on a loaded box (the plain cachectl,
# jq, the shell; more when it walks a cache, as wait_exact does): a wait for
# a feed, a scan or an audit that tried every 50 ms kept half a core busy on
# its own. What takes longer than 2 s is seen at most 200 ms later.
wait_for() {
        local deadline=$((SECONDS + ${2:-10})) tries=0
        until eval "$1"; do
                [ $SECONDS -lt $deadline ] || { echo "timed out waiting for: $1" >&2; return 1; }
                if [ $((tries += 1)) -le 40 ]; then sleep 0.05; else sleep 0.2; fi
        done
}

# write_config [MAX_SIZE [CACHE_SETTINGS [TOP_SETTING...]]]: writes
# $BATS_TEST_TMPDIR/ck.conf with the test's socket and state_dir
# ($BATS_TEST_TMPDIR/state, unless a TOP_SETTING sets it), each TOP_SETTING on a line
# of its own ('audit_interval = "0s";'), and one cache "t" at $CACHE (default
# $BATS_TEST_TMPDIR/cache) of MAX_SIZE (default 1G) with CACHE_SETTINGS
# ('ccache_conf = false;').
write_config() {
        local size=${1:-1G} settings=${2:-}
        shift $(($# < 2 ? $# : 2))
        write_config_caches "{ name = \"t\"; path = \"${CACHE:-$BATS_TEST_TMPDIR/cache}\"; max_size = \"$size\"; $settings }" "$@"
}

# write_config_caches CACHES [TOP_SETTING...]: the same with the list of caches
# given ('{ name = "a"; ... }, { name = "b"; ... }').
write_config_caches() {
        local caches=$1
        shift
        {
                echo "socket = \"$BATS_TEST_TMPDIR/ck.sock\";"
                # Each test's history of its own, never the host's /var/lib/cachekeeper.
                [[ " $* " == *" state_dir "* ]] || echo "state_dir = \"$BATS_TEST_TMPDIR/state\";"
                [ $# -eq 0 ] || printf '%s\n' "$@"
                echo "caches = ( $caches );"
        } > "$BATS_TEST_TMPDIR/ck.conf"
}

# Starts the daemon in the background on $BATS_TEST_TMPDIR/ck.conf; its
# stderr goes to $BATS_TEST_TMPDIR/daemon.log.
start_daemon() {
        "$CKD" -c "$BATS_TEST_TMPDIR/ck.conf" "$@" 2> "$BATS_TEST_TMPDIR/daemon.log" &
        DAEMON_PID=$!
}

# Kills the background loops this test started, and only them: with
# pid_max at 32768 a loop that ended early may have left its pid to another
# process (the test runner, once), so a pid is killed only while it is still
# a child of this shell.
kill_keepers() {
        local k
        for k in "${KEEPERS[@]}"; do
                [ "$(awk '/^PPid:/ { print $2 }' "/proc/$k/status" 2>/dev/null)" = "$BASHPID" ] || continue
                kill "$k" 2>/dev/null || true
        done
}

stop_daemon() {
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                local state
                state=$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat" 2>/dev/null)
                kill -TERM "$DAEMON_PID"
                # A test that stopped it (SIGSTOP) and failed: let it go on
                # to its SIGTERM. Only then: a SIGCONT that reaches it while
                # LeakSanitizer's tracer holds it at exit hangs them both.
                [ "$state" != T ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true
                wait "$DAEMON_PID"
        fi
}

# Starts the daemon and waits until it answers with every cache scanned
# (up to $1 seconds, default 10).
start_ready() {
        start_daemon
        wait_ready "$@"
}

HELPERS=$CK_BUILD/tests/helpers

ctl() {
        "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" "$@"
}

# "files bytes" of the regular files under $1 on its own filesystem: files
# counts names (as find does), bytes each inode once (as du does).
disk_totals() {
        find "$1" -xdev -type f -printf '%i %b\n' |
                awk '{ n++; if (!($1 in seen)) { seen[$1]; s += $2 * 512 } } END { printf "%d %d\n", n, s }'
}

# jq -r ARGS... on the daemon's status --json: status_jq -e '.ready'.
status_jq() {
        "$CTL_LOOK" -s "$BATS_TEST_TMPDIR/ck.sock" status --json | jq -r "$@"
}

# "files bytes" as the daemon reports cache $1.
daemon_totals() {
        status_jq --arg n "$1" '.caches[] | select(.name == $n) | "\(.files) \(.size_bytes)"'
}

# One field of cache $1's status: cache_field t scan.rescans.
cache_field() {
        status_jq --arg n "$1" ".caches[] | select(.name == \$n) | .$2"
}

# One field of the status of the volume mounted at $1: volume_field "$VOL" alert.
volume_field() {
        status_jq --arg m "$1" ".volumes[] | select(.mount == \$m) | .$2"
}

# Waits until the daemon's figures for cache $1 equal a fresh count of
# directory $2 (default: 5 s), then asserts it once more.
wait_exact() {
        wait_for "[ \"\$(daemon_totals $1)\" = \"\$(disk_totals $2)\" ]" "${3:-5}" || {
                echo "daemon: $(daemon_totals "$1")  disk: $(disk_totals "$2")" >&2
                return 1
        }
}

# Waits for the daemon to answer and every cache to be scanned.
wait_ready() {
        # not jq -e: it succeeds on empty input, i.e. before the socket exists.
        # A look of the test's own, repeated: the plain cachectl (CTL_LOOK).
        wait_for "[ \"\$(status_jq .ready 2>/dev/null)\" = true ]" "${1:-10}"
}

# Compiles $2 small C files (named from $3, default "f") into cache dir $1 with real ccache.
compile() {
        local dir=$1 n=$2 prefix=${3:-f} src=$BATS_TEST_TMPDIR/src
        mkdir -p "$src"
        for i in $(seq 1 "$n"); do
                printf 'int %s%d(int x) { return x * %d + %d; }\n' "$prefix" "$i" "$i" "${#prefix}" > "$src/$prefix$i.c"
                CCACHE_DIR=$dir ccache gcc -c "$src/$prefix$i.c" -o "$src/$prefix$i.o" || return 1
        done
}

# setup_compile_cache [write_config ARGS...]: cache "t" at
# CACHE=$BATS_TEST_TMPDIR/cache (1777) for real compiles, ccache's own
# cleanup kept out of it (CCACHE_MAXSIZE=0), configured by write_config
# with ARGS (default: 1G).
setup_compile_cache() {
        require_root
        CACHE=$BATS_TEST_TMPDIR/cache
        mkdir -m 1777 "$CACHE"
        export CCACHE_MAXSIZE=0
        if [ $# -eq 0 ]; then write_config 1G; else write_config "$@"; fi
}

require_root() {
        [ "$(id -u)" -eq 0 ] || skip "needs root (mounts)"
}

# Mounts a tmpfs of size $2 on $1 (the test runs in a private mount namespace).
mount_tmpfs() {
        mkdir -p "$1"
        mount -t tmpfs -o "size=${2:-64M}" cktest "$1"
}

# setup_volume SIZE: a tmpfs of SIZE (default 64M) on VOL=$BATS_TEST_TMPDIR/vol,
# for the cache CACHE=$VOL/cache (not made here: the test or the daemon makes it).
setup_volume() {
        VOL=$BATS_TEST_TMPDIR/vol
        CACHE=$VOL/cache
        mount_tmpfs "$VOL" "${1:-64M}"
}

# Unmounts whatever the test mounted below its temporary directory.
unmount_all() {
        findmnt -rn -o TARGET | grep "^$BATS_TEST_TMPDIR/" | sort -r | while read -r m; do
                umount -l "$m"
        done
}

# Lets other users reach $BATS_TEST_TMPDIR (bats makes its directories 0700),
# for attacks run as nobody.
open_test_dir() {
        local d=$BATS_TEST_TMPDIR
        while [ "$d" != / ] && [ "$d" != /tmp ]; do
                chmod a+x "$d"
                d=$(dirname "$d")
        done
}

# as_user UID CMD...: runs CMD as uid and gid UID with no supplementary group.
# Through env: setpriv keeps root's capabilities until its own exec, so a CMD
# it executed itself would be reached even where the user cannot reach it;
# env looks CMD up as the user, as the user's own shell would.
as_user() {
        local id=$1
        shift
        setpriv --reuid="$id" --regid="$id" --clear-groups env -- "$@"
}

# Runs a command as the unprivileged user nobody, with no groups (through env,
# as as_user). In the background, use "${AS_NOBODY[@]}" CMD &, so that $! is
# the command itself (setpriv and env exec it).
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups env --)
as_nobody() {
        "${AS_NOBODY[@]}" "$@"
}

# hold_lock_as_nobody FILE: nobody opens FILE and holds a shared flock on
# it until killed (HOLDER: its pid, for the test's teardown); returns once
# /proc/locks lists that lock on FILE's inode.
hold_lock_as_nobody() {
        local ino
        ino=$(stat -c %i "$1")
        "${AS_NOBODY[@]}" /usr/bin/python3 -c 'import fcntl, sys, time
f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_SH); time.sleep(600)' "$1" > /dev/null 2>&1 3>&- &
        HOLDER=$!
        wait_for "grep -q ' FLOCK .* READ .*:$ino ' /proc/locks" 10
}

# world_copy FILE...: copies each FILE (a script, a helper, a binary: the ASan
# cachectl is fine) into $BATS_TEST_TMPDIR/world, mode 0755 and reachable by
# every user (open_test_dir), checks that nobody can read the copies, and
# prints their paths, one a line. Whatever a test runs or reads as another
# user comes from such a copy, never from the checkout or the build
# directory: those may be where others cannot enter (root's home is 0700,
# and CI runs the tests from a 0700 directory to prove it: .ci/run). A copy
# keeps its name (cachectl's messages start with it): a file already copied
# is reused, another of the same name goes to world/2/, world/3/...
world_copy() {
        local dir=$BATS_TEST_TMPDIR/world f sub n copy copies=()
        open_test_dir
        mkdir -p "$dir" && chmod 0755 "$dir" || return 1
        for f; do
                sub=$dir n=1
                while [ -e "$sub/${f##*/}" ] && ! cmp -s "$f" "$sub/${f##*/}"; do
                        n=$((n + 1)) sub=$dir/$n
                done
                copy=$sub/${f##*/}
                if [ ! -e "$copy" ]; then
                        mkdir -p -m 0755 "$sub" && install -m 0755 "$f" "$copy" || return 1
                fi
                copies+=("$copy")
        done
        as_nobody sh -c 'for f; do [ -r "$f" ] || { echo "world_copy: nobody cannot read $f" >&2; exit 1; }; done' \
                _ "${copies[@]}" || return 1
        printf '%s\n' "${copies[@]}"
}

# A private journald for this test, in the test's own mount namespace.
start_journald() {
        mount -t tmpfs ckjournal /run/systemd 2>/dev/null || { mkdir -p /run/systemd && mount -t tmpfs ckjournal /run/systemd; }
        mkdir -p /run/log && mount -t tmpfs cklog /run/log
        mkdir -p /run/systemd/journal
        /lib/systemd/systemd-journald > /dev/null 2>&1 &
        JOURNALD=$!
        wait_for "[ -S /run/systemd/journal/socket ]" 5
}

stop_journald() {
        [ -n "${JOURNALD:-}" ] && kill "$JOURNALD" 2>/dev/null && wait "$JOURNALD" 2>/dev/null
        umount -l /run/log /run/systemd 2>/dev/null || true
}

journal() {
        journalctl --directory=/run/log/journal -o json SYSLOG_IDENTIFIER=cachekeeperd "$@" 2>/dev/null
}

# The alert command: one line per run in $1 ("EVENT LEVEL SUBJECT AVAIL |
# MESSAGE"), and what was folded in $1.folded; written to $2.
write_alert_command() {
        cat > "$2" <<'EOS'
#!/bin/sh
echo "$CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL ${CACHEKEEPER_MOUNT:-$CACHEKEEPER_CACHE} $CACHEKEEPER_AVAIL_BYTES | $CACHEKEEPER_MESSAGE" >> "$1"
if [ -n "$CACHEKEEPER_FOLDED" ]; then echo "$CACHEKEEPER_EVENT ${CACHEKEEPER_MOUNT:-$CACHEKEEPER_CACHE} $CACHEKEEPER_FOLDED" >> "$1.folded"; fi
EOS
        chmod +x "$2"
}
