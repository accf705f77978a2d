# shellcheck shell=bash
# What tests/boot/run and tests/boot/containers both need: the cached Debian
# root (ensure_rootfs), the checks' TAP lines, a cgroup of their own for
# systemd-nspawn, and wait_for. Sourced; the script sets TOP, TESTS (its
# checks, "function|description") and defines diagnose (what to show after a
# failed check).
#
# Environment: CK_BOOT_ROOTFS (default /var/cache/cachekeeper-test-rootfs),
# CK_BOOT_REBUILD=1 (debootstrap anew), CK_DEBIAN_MIRROR (default: the host's
# apt sources, else deb.debian.org), CK_BOOT_VERBOSE=1 (show every check's
# output, not only a failed one's).

ROOTFS=${CK_BOOT_ROOTFS:-/var/cache/cachekeeper-test-rootfs}
SUITE=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") )
SUITE=${SUITE:-bookworm}
passed=0 failed=0 n=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
note() { printf '# %s\n' "$*"; }

# Every check as "ok/not ok N description # reason", then the closing line.
all_tests() {
        local i=0 t
        echo "1..${#TESTS[@]}"
        for t in "${TESTS[@]}"; do
                i=$((i + 1))
                echo "$1 $i ${t#*|} # $2"
        done
}

skip_all() {
        all_tests ok "SKIP $1"
        echo "0 passed, 0 failed, ${#TESTS[@]} skipped"
        exit 0
}

fail_all() {
        note "$1"
        all_tests "not ok" "not run: $1"
        echo "0 passed, ${#TESTS[@]} failed"
        exit 1
}

# Skips the whole script where systemd-nspawn cannot run.
require_nspawn() {
        [ "$(id -u)" -eq 0 ] || skip_all "needs root (systemd-nspawn, mounts, cgroups)"
        command -v systemd-nspawn > /dev/null ||
                skip_all "systemd-nspawn is not installed (apt-get install systemd-container)"
        unshare -m -p -f --propagation private true 2> /dev/null ||
                skip_all "cannot create mount and PID namespaces here, so systemd-nspawn cannot run"
        [ -w /sys/fs/cgroup ] || [ -w /sys/fs/cgroup/unified ] || [ -w /sys/fs/cgroup/systemd ] ||
                skip_all "the cgroup file system is not writable here, so systemd-nspawn cannot run"
}

# ------------------------------------------------------------ the cached root

# The Debian mirror the host uses for $SUITE (deb822 .sources or one-line lists).
debian_mirror() {
        local f uri
        if [ -n "${CK_DEBIAN_MIRROR:-}" ]; then
                echo "$CK_DEBIAN_MIRROR"
                return
        fi
        for f in /etc/apt/sources.list.d/*.sources; do
                [ -r "$f" ] || continue
                uri=$(awk -v suite="$SUITE" '
                        function flush() { if (deb && ok && u != "" && !done) { print u; done = 1 } deb = ok = 0; u = "" }
                        done { exit }
                        /^[ \t]*$/ { flush(); next }
                        /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
                        /^URIs:/ { u = $2 }
                        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
                        END { flush() }' "$f")
                [ -n "$uri" ] && { echo "$uri"; return; }
        done
        uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                sed -e 's/#.*//' -e 's/\[[^]]*\]//' |
                awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }')
        echo "${uri:-http://deb.debian.org/debian}"
}

# deb_depends DEB...: the packages the .debs depend on, one a line (first
# alternatives, no versions), but each other (the client comes in beside the
# daemon).
deb_depends() {
        local d
        for d in "$@"; do
                dpkg-deb -f "$d" Depends Pre-Depends | sed 's/^[A-Za-z-]*: //' | tr ',' '\n'
        done | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' | grep . |
                grep -vx 'cachekeeper\(-client\)\{0,1\}' | sort -u
}

# The packages of $1 (comma-separated) that the cached root lacks.
rootfs_lacks() {
        local p
        for p in ${1//,/ }; do
                dpkg-query --admindir="$ROOTFS/var/lib/dpkg" -W -f='${Status}\n' "$p" 2>/dev/null |
                        grep -q '^install ok installed$' || echo "$p"
        done
}

# rootfs_add PKG...: installs the packages into the cached root with apt-get
# in a chroot (a private mount namespace: /proc, /dev and the host's
# resolv.conf mounted for it), and adds them to its stamp's list. Far quicker
# than debootstrap anew, and what another branch added stays.
rootfs_add() {
        local start log=$ROOTFS.add.log
        start=$(now)
        note "root: adding $* to $ROOTFS with apt-get in a chroot"
        [ -e "$ROOTFS/etc/resolv.conf" ] || : > "$ROOTFS/etc/resolv.conf"
        # shellcheck disable=SC2016 # expanded by the inner shell
        if ! unshare -m --propagation private sh -ec '
                r=$1; shift
                mount -t proc proc "$r/proc"
                mount --rbind /dev "$r/dev"
                mount --bind /etc/resolv.conf "$r/etc/resolv.conf"
                chroot "$r" apt-get -q update
                chroot "$r" env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends install "$@"
                chroot "$r" apt-get clean' sh "$ROOTFS" "$@" > "$log" 2>&1; then
                sed 's/^/#   /' "$log" | tail -20
                fail_all "apt-get install $* in $ROOTFS failed (network? its /etc/apt/sources.list)"
        fi
        rm -rf "$ROOTFS"/var/lib/apt/lists/*_* "$log"
        sed -i "s/--include=\([^ ]*\) /--include=\1,$(echo "$*" | tr ' ' ,) /" "$ROOTFS/.ck-rootfs-stamp"
        note "root: added in $(elapsed "$start") s, $(du -sh "$ROOTFS" | cut -f1)"
}

# rootfs_build PKGS: debootstrap of $SUITE with PKGS (comma-separated) into
# $ROOTFS, replacing whatever is there.
rootfs_build() {
        local start tmp mirror stamp="debootstrap --variant=minbase --include=$1 $SUITE"
        command -v debootstrap > /dev/null ||
                fail_all "debootstrap is missing and $ROOTFS is not built: apt-get install debootstrap"
        mirror=$(debian_mirror)
        note "root: building $ROOTFS with debootstrap from $mirror (minutes)"
        start=$(now)
        tmp=$ROOTFS.new.$$
        rm -rf "$ROOTFS".new.*          # a build that was interrupted (we hold the lock)
        if ! debootstrap --variant=minbase --include="$1" "$SUITE" "$tmp" "$mirror" > "$tmp.log" 2>&1; then
                sed 's/^/#   /' "$tmp.log" | tail -20
                rm -rf "$tmp" "$tmp.log"
                fail_all "debootstrap failed (network? mirror $mirror)"
        fi
        rm -f "$tmp.log"
        # No package caches or lists in the cached copy.
        rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*_* 2>/dev/null
        echo "$stamp" > "$tmp/.ck-rootfs-stamp"
        rm -rf "$ROOTFS"
        mv "$tmp" "$ROOTFS"
        note "root: built in $(elapsed "$start") s, $(du -sh "$ROOTFS" | cut -f1)"
}

# ensure_rootfs PKGS DEB...: makes sure the cached root holds PKGS
# (comma-separated) and what the .debs depend on (the containers have no
# network). Built with debootstrap when absent, built for another suite or
# with CK_BOOT_REBUILD=1; a root that lacks packages gets them with apt-get
# (checked in its dpkg database, so a root another branch built with more
# packages is used as it is). Changed under an exclusive lock on
# $ROOTFS.lock, then read under a shared one held on fd 8 until the script
# ends: no run changes the root under another's overlay.
ensure_rootfs() {
        local need=$1 lacks p
        shift
        for p in $(deb_depends "$@"); do
                [[ ",$need," == *",$p,"* ]] || need=$need,$p
        done
        mkdir -p "$(dirname "$ROOTFS")"
        exec 8> "$ROOTFS.lock"
        flock -n 8 || { note "root: waiting for the other runs on $ROOTFS to end"; flock 8; }
        if [ "${CK_BOOT_REBUILD:-0}" != 1 ] && [ -f "$ROOTFS/.ck-rootfs-stamp" ] &&
           [ "$(awk '{ print $NF }' "$ROOTFS/.ck-rootfs-stamp")" = "$SUITE" ]; then
                lacks=$(rootfs_lacks "$need")
                if [ -z "$lacks" ]; then
                        note "root: cached $ROOTFS ($(cat "$ROOTFS/.ck-rootfs-stamp"))"
                else
                        # shellcheck disable=SC2086 # one argument per package
                        rootfs_add $lacks
                fi
        else
                rootfs_build "$need"
        fi
        flock -s 8
}

# ------------------------------------------------------------ cgroups

CGROUPS=()              # "hierarchy|original path|our cgroup"

# A cgroup of our own in each hierarchy nspawn uses, so that its /payload and
# /supervisor land below it and two runs cannot collide.
cgroup_enter() {
        local h cur line new old
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
                set -- /sys/fs/cgroup
        else
                set --
                [ -e /sys/fs/cgroup/systemd/cgroup.procs ] && set -- "$@" /sys/fs/cgroup/systemd
                [ -e /sys/fs/cgroup/unified/cgroup.procs ] && set -- "$@" /sys/fs/cgroup/unified
        fi
        for h in "$@"; do
                if [ "$(stat -f -c %T "$h")" = cgroup2fs ]; then
                        line=$(grep '^0::' /proc/self/cgroup)
                else
                        line=$(grep ':name=systemd:' /proc/self/cgroup)
                fi
                cur=${line#*:*:}
                cur=${cur%/}
                # Left by a run that was killed: empty now, remove.
                for old in "$h$cur"/ck-boot-*; do
                        [ -d "$old" ] && ! kill -0 "${old##*-}" 2>/dev/null &&
                                find "$old" -depth -type d -exec rmdir {} + 2>/dev/null
                done
                new=$h$cur/ck-boot-$$
                mkdir "$new" && echo $$ > "$new/cgroup.procs" || return 1
                CGROUPS+=("$h|$cur|$new")
        done
}

cgroup_leave() {
        local e h cur new i
        for e in "${CGROUPS[@]}"; do
                IFS='|' read -r h cur new <<< "$e"
                echo $$ > "$h$cur/cgroup.procs" 2>/dev/null
                for i in $(seq 50); do
                        find "$new" -depth -type d -exec rmdir {} + 2>/dev/null
                        [ -d "$new" ] || break
                        sleep 0.1
                done
                [ -d "$new" ] && note "warning: could not remove cgroup $new"
        done
        CGROUPS=()
}

# ------------------------------------------------------------ the checks

# Waits up to $2 seconds (default 15) for shell condition $1.
wait_for() {
        local deadline=$((SECONDS + ${2:-15}))
        until eval "$1"; do
                [ -z "${INTERRUPTED:-}" ] || { echo "interrupted"; return 1; }
                [ $SECONDS -lt $deadline ] || { echo "timed out waiting for: $1"; return 1; }
                sleep 0.1
        done
}

# check DESCRIPTION FUNCTION: one TAP line; the function's output is shown
# (as comments) when it fails, or always with CK_BOOT_VERBOSE=1. Its log is
# in $W.
check() {
        local desc=$1 fn=$2 log t0
        n=$((n + 1))
        log=$W/test-$n.log
        t0=$(now)
        # In this shell, not a subshell: a check may keep pids for the next.
        if "$fn" > "$log" 2>&1 < /dev/null; then
                passed=$((passed + 1))
                echo "ok $n $desc ($(elapsed "$t0") s)"
                [ "${CK_BOOT_VERBOSE:-0}" = 1 ] && sed 's/^/#   /' "$log"
        else
                failed=$((failed + 1))
                echo "not ok $n $desc"
                { cat "$log"; diagnose; } | sed 's/^/#   /'
        fi
}

# run_checks: runs every check of TESTS in order. After a failed check,
# stop_reason FUNCTION (the script's) prints why the rest cannot run, or
# nothing: then they are "not ok ... # REASON". Counts in passed, failed.
run_checks() {
        local t fn desc before stop=""
        echo "1..${#TESTS[@]}"
        for t in "${TESTS[@]}"; do
                fn=${t%%|*}
                desc=${t#*|}
                [ -n "${INTERRUPTED:-}" ] && stop="interrupted"
                if [ -n "$stop" ]; then
                        n=$((n + 1))
                        failed=$((failed + 1))
                        echo "not ok $n $desc # $stop"
                        continue
                fi
                before=$failed
                check "$desc" "$fn"
                [ $failed -eq "$before" ] || stop=$(stop_reason "$fn")
        done
}
