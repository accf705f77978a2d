#!/usr/bin/env bats
# Enforcement: the cap by exact LRU eviction with ccache's counters kept true,
# deletion that cannot be tricked into touching anything else, manual trims,
# modes, ccache.conf, and real builds running through it all.
# tests/run: takes 126 s
load ../lib/helper

setup() {
        require_root
        setup_volume 256M
        mkdir -m 1777 "$CACHE"
        # ccache's own cleanup stays out of these tests: only the daemon evicts.
        export CCACHE_MAXSIZE=0
}

teardown() {
        stop_daemon
        unmount_all
}

# config MAX_SIZE [extra cache settings] [extra top-level setting...]: no audit
config() {
        write_config "$1" "${2:-}" 'audit_interval = "0s";' "${@:3}"
}

# ccache's own idea of the cache size, in KiB (Σ of idx 12 over the L1 stats).
ccache_kib() {
        CCACHE_DIR=$CACHE ccache --print-stats | awk '$1 == "cache_size_kibibyte" { print $2 }'
}

# The truth ccache counts: Σ st_blocks/2 KiB over the entry files.
entry_kib() {
        find "$CACHE" -mindepth 3 -type f -regex '.*/[0-9a-v]+\([RM]\|[0-9]W\)' -printf '%b\n' |
                awk '{ s += $1 / 2 } END { printf "%d\n", s }'
}

entries() {
        find "$CACHE" -mindepth 3 -type f -regex '.*/[0-9a-v]+\([RM]\|[0-9]W\)' "$@"
}

@test "over its cap, the oldest entries across the whole cache go, down to trim_to, and ccache -s agrees" {
        config 10M "ccache_conf = false;"
        compile "$CACHE" 60
        # A known LRU order: entry i is i minutes old, in no relation to its
        # directory, so a per-directory evictor would get it wrong.
        i=0
        entries -printf '%p\n' | sort -R --random-source=<(yes) > "$BATS_TEST_TMPDIR/order"
        while read -r f; do
                i=$((i + 1)); touch -m -d "-$i minutes" "$f"
        done < "$BATS_TEST_TMPDIR/order"
        total=$(entries | wc -l)
        [ "$total" -eq 120 ]
        start_ready
        [ "$(cache_field t evicted_files_total)" -eq 0 ]
        size=$(cache_field t size_bytes)

        # Lower the cap under the current size: a trim starts within a second.
        cap=$((size * 8 / 10)); target=$((cap * 9 / 10))
        config "$((cap / 1000))k" "ccache_conf = false;"
        cap=$((cap / 1000 * 1000)); target=$((cap * 9 / 10))
        kill -HUP "$DAEMON_PID"
        wait_for "[ \"\$(cache_field t evicted_files_total)\" -gt 0 ] && [ \"\$(cache_field t state)\" = ok ]" 3
        now=$(cache_field t size_bytes)
        [ "$now" -le "$target" ]
        [ "$now" -gt $((target - 8192)) ]                 # not one entry more than needed
        wait_exact t "$CACHE"
        # exactly the oldest: every survivor is younger than every evicted entry
        kept_oldest=$(entries -printf '%T@\n' | sort -n | head -1)
        evicted=0
        while read -r f; do
                [ -e "$f" ] || evicted=$((evicted + 1))
        done < "$BATS_TEST_TMPDIR/order"
        [ "$evicted" -eq "$(cache_field t evicted_files_total)" ]
        # (a loop's status is only its last test's: fail it on the first wrong one)
        tail -n "$evicted" "$BATS_TEST_TMPDIR/order" | while read -r f; do [ ! -e "$f" ] || exit 1; done
        head -n $((total - evicted)) "$BATS_TEST_TMPDIR/order" | while read -r f; do [ -e "$f" ] || exit 1; done
        [ "$(cache_field t last_trim.oldest_kept_mtime)" -eq "${kept_oldest%.*}" ]
        # ccache's own counters, fixed under its locks, say the same (within 1 %)
        truth=$(entry_kib); counted=$(ccache_kib)
        echo "ccache: $counted KiB, truth: $truth KiB"
        [ $((counted * 100)) -ge $((truth * 99)) ]
        [ $((counted * 100)) -le $((truth * 101)) ]
        [ "$(ls "$CACHE"/lock/*.lock 2>/dev/null | wc -l)" -eq 0 ]          # every lock released
}

@test "eviction never follows a symlink, never leaves the filesystem, never deletes what ccache needs" {
        OUT=$BATS_TEST_TMPDIR/outside
        mount_tmpfs "$OUT" 16M
        config 1G
        compile "$CACHE" 5
        name=2ekitvq0g3ru9p1n2pkn7j5dsgvbflaR            # a real entry name at depth 2 (4.7-4.12)
        mkdir -p "$CACHE/b/4" "$CACHE/c" "$CACHE/a/a" "$CACHE/0/0" "$CACHE/1/1" "$CACHE/lock" "$CACHE/tmp"
        old=$(date -d '-30 days' +%Y%m%d%H%M)
        mkdir -p "$OUT/dir" "$OUT/bind"
        echo precious > "$OUT/victim"
        echo precious > "$OUT/dir/$name"
        echo precious > "$OUT/bind/$name"
        # a symlink entry pointing at a file outside the cache
        ln -s "$OUT/victim" "$CACHE/b/4/$name"
        # a level-3 directory replaced by a symlink to an outside directory
        # (one at a level-1 or level-2 path would be replaced by the upkeep)
        mkdir -p "$CACHE/c/5"; ln -s "$OUT/dir" "$CACHE/c/5/6"
        # a FIFO named like an entry
        mkfifo "$CACHE/a/a/$name"
        # another filesystem mounted inside the cache
        mkdir -p "$CACHE/d/6"; mount --bind "$OUT/bind" "$CACHE/d/6"
        # what ccache needs, all old
        echo 1 > "$CACHE/0/stats"; touch "$CACHE/0/CACHEDIR.TAG" "$CACHE/0/0/stats.alive" "$CACHE/1/1/.nfs0001"
        # a level-2 directory ccache holds locked (its .alive kept fresh, as
        # ccache's long-lived locks do): left alone, and said so
        mkdir -p "$CACHE/f/f"; rm -f "$CACHE"/f/f/*
        echo entry > "$CACHE/f/f/$name"
        ln -s host-1-1-1.1 "$CACHE/lock/subdir_ff.lock"
        touch "$CACHE/tmp/young.i" "$CACHE/1/1/${name%R}.tmp.young.tmp"
        touch "$CACHE/tmp/old-but-2-days" "$CACHE/1/1/${name%R}M.tmp.stale.tmp" "$CACHE/tmp/inode-cache-64.v2"
        touch -h -m -t "$old" "$OUT/victim" "$OUT/dir/$name" "$OUT/bind/$name" "$CACHE/b/4/$name" \
                "$CACHE/a/a/$name" "$CACHE/0/stats" "$CACHE/0/CACHEDIR.TAG" "$CACHE/0/0/stats.alive" \
                "$CACHE/1/1/.nfs0001" "$CACHE/tmp/inode-cache-64.v2" "$CACHE/1/1/${name%R}M.tmp.stale.tmp" \
                "$CACHE/f/f/$name"
        touch -m -d '-3 days' "$CACHE/tmp/old-but-2-days"
        touch -m -d '-30 minutes' "$CACHE/1/1/${name%R}.tmp.young.tmp" "$CACHE/tmp/young.i"
        start_ready

        (while :; do touch "$CACHE/lock/subdir_ff.alive"; sleep 0.2; done) > /dev/null 2>&1 3>&- &
        holder=$!
        run ctl trim --to 1k
        kill "$holder"
        echo "$output"
        [ "$status" -eq 0 ]
        # one result, longer than a line: wrapped at spaces into 80 columns
        [ "${#lines[@]}" -gt 1 ]
        ! awk 'length($0) > 80 { print length($0) ": " $0; bad = 1 } END { exit !bad }' <<<"$output" || false
        [[ "$(tr '\n' ' ' <<<"$output" | tr -s ' ')" == *"1 directories left, locked by ccache"* ]]
        [ "$(entries -not -path "$CACHE/d/6/*" -not -path "$CACHE/f/f/*" | wc -l)" -eq 0 ]   # every real entry went
        [ -e "$CACHE/f/f/$name" ]
        [ -L "$CACHE/lock/subdir_ff.lock" ]
        [ ! -e "$CACHE/tmp/old-but-2-days" ]
        [ ! -e "$CACHE/1/1/${name%R}M.tmp.stale.tmp" ]
        # the outside and everything that is not a regular ccache entry is intact
        [ "$(cat "$OUT/victim" "$OUT/dir/$name" "$OUT/bind/$name")" = "$(printf 'precious\nprecious\nprecious')" ]
        [ -L "$CACHE/b/4/$name" ]
        [ -L "$CACHE/c/5/6" ]
        [ -p "$CACHE/a/a/$name" ]
        [ -e "$CACHE/d/6/$name" ]
        [ -e "$CACHE/0/stats" ]
        [ -e "$CACHE/0/CACHEDIR.TAG" ]
        [ -e "$CACHE/0/0/stats.alive" ]
        [ -e "$CACHE/1/1/.nfs0001" ]
        [ -e "$CACHE/ccache.conf" ]
        [ -e "$CACHE/tmp/young.i" ]
        [ -e "$CACHE/1/1/${name%R}.tmp.young.tmp" ]
        [ -e "$CACHE/tmp/inode-cache-64.v2" ]
        umount "$CACHE/d/6"
}

@test "cachectl trim: --dry-run reports and deletes nothing, --to sizes it, and only admins may trim" {
        config 1G "" 'admin_group = "nogroup";'
        compile "$CACHE" 30
        start_ready
        before=$(find "$CACHE" -type f | wc -l)
        size=$(cache_field t size_bytes)
        run ctl trim --dry-run --to "$((size / 2000))k"
        [ "$status" -eq 0 ]
        [[ "$output" =~ ^t:\ would\ evict\ ([0-9]+)\ files ]]
        would=${BASH_REMATCH[1]}
        [ "$would" -gt 0 ]
        [[ "$output" == *"oldest entry kept: "* ]]
        [ "$(find "$CACHE" -type f | wc -l)" -eq "$before" ]
        [ "$(cache_field t evicted_files_total)" -eq 0 ]

        ctl_copy=$(world_copy "$CTL")   # other users reach the socket, and a cachectl
        run as_user 1234 "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" trim
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied"* ]]
        run as_user 1234 "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" reload
        [ "$status" -eq 1 ]
        [[ "$output" == *"permission denied"* ]]
        [ "$(find "$CACHE" -type f | wc -l)" -eq "$before" ]
        run ctl trim nope
        [ "$status" -eq 1 ]
        run ctl trim --to 12
        [ "$status" -eq 2 ]

        # a member of admin_group may, and the figures are those of the dry run
        run setpriv --reuid=1234 --regid=65534 --clear-groups "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" trim t --to "$((size / 2000))k"
        [ "$status" -eq 0 ]
        [[ "$output" == "t: evicted $would files"* ]]
        [ "$(cache_field t evicted_files_total)" -eq "$would" ]
        [ "$(cache_field t size_bytes)" -le $((size / 2)) ]
        wait_exact t "$CACHE"
}

@test "modes: the root back to 1777, ccache's directories to 0777, never through a symlink nor off a sticky one" {
        # each alert is looked for at once: none folded into the next minute's
        config 1G "" 'alert_min_interval = "0s";'
        mkdir -p "$BATS_TEST_TMPDIR/private" && chmod 0700 "$BATS_TEST_TMPDIR/private"
        start_ready
        # every level-1 and level-2 directory, tmp and lock, created 0777
        [ "$(find "$CACHE" -mindepth 1 -type d -perm 0777 | wc -l)" -eq $((16 + 256 + 2)) ]
        chmod 0755 "$CACHE"
        wait_for "[ \"\$(stat -c %a '$CACHE')\" = 1777 ]" 2
        grep -q "repaired the mode of $CACHE: was 0755, now 1777" "$BATS_TEST_TMPDIR/daemon.log"
        # a sticky one was put there by someone: left alone and said so
        chmod 0755 "$CACHE/b/4"; chmod 1777 "$CACHE/c"
        wait_for "[ \"\$(stat -c %a '$CACHE/b/4')\" = 777 ]" 2
        wait_for "grep -q '$CACHE/c is sticky (mode 1777, owner uid 0).*left alone' '$BATS_TEST_TMPDIR/daemon.log'" 2
        [ "$(stat -c %a "$CACHE/c")" = 1777 ]
        chmod 0777 "$CACHE/c"
        # what a root container with umask 022 creates
        # (moved out, not rm -rf'ed in place: the daemon brings back the
        # level-2 directories of e while a slow rm still empties it)
        mv "$CACHE/e" "$BATS_TEST_TMPDIR/e.gone"; mv "$CACHE/tmp" "$BATS_TEST_TMPDIR/tmp.gone"
        (umask 022; mkdir -p "$CACHE/e/1" "$CACHE/tmp")
        wait_for "[ \"\$(stat -c %a '$CACHE/e' '$CACHE/e/1' '$CACHE/tmp' | sort -u)\" = 777 ]" 2
        wait_for "[ -d '$CACHE/e/f' ]" 4                    # the missing ones come back, after a pause
        # a symlink where a kept directory belongs: replaced, its target untouched
        mv "$CACHE/lock" "$BATS_TEST_TMPDIR/lock.gone"; ln -s "$BATS_TEST_TMPDIR/private" "$CACHE/lock"
        # directories that are not ccache's first two levels keep their mode
        mkdir -m 0700 "$CACHE/mine" "$CACHE/a/b/c"
        chmod 0755 "$CACHE/f"                                # any event that triggers upkeep
        # Its repair shows the events before it were handled.
        wait_for "[ \"\$(stat -c %a '$CACHE/f')\" = 777 ] && [ -d '$CACHE/lock' ] && [ ! -L '$CACHE/lock' ]" 4
        [ "$(stat -c %a "$CACHE/mine" "$CACHE/a/b/c" | sort -u)" = 700 ]
        [ "$(stat -c %a "$BATS_TEST_TMPDIR/private")" = 700 ]
        [ -d "$CACHE/lock" ] && [ ! -L "$CACHE/lock" ]
        kill -0 "$DAEMON_PID"
}

@test "ccache.conf keeps umask = 000 and a max_size above the cap, other lines kept, none indented" {
        printf 'compression_level = 3\nmax_size = 5G\n  umask = 022\n' > "$CACHE/ccache.conf"
        config 100G
        start_ready
        [ "$(cat "$CACHE/ccache.conf")" = "$(printf 'compression_level = 3\nmax_size = 2T\numask = 000')" ]
        [ "$(stat -c '%U %a' "$CACHE/ccache.conf")" = "root 644" ]
        CCACHE_DIR=$CACHE ccache -M 5G > /dev/null           # someone resets it
        wait_for "grep -q '^max_size = 2T$' '$CACHE/ccache.conf'" 2
        CCACHE_DIR=$CACHE ccache -o sloppiness=time_macros > /dev/null
        wait_for "grep -q '^max_size = 2T$' '$CACHE/ccache.conf'" 2
        grep -q '^sloppiness = time_macros$' "$CACHE/ccache.conf"
        grep -q '^compression_level = 3$' "$CACHE/ccache.conf"
        [ "$(grep -c '^[[:space:]]' "$CACHE/ccache.conf")" -eq 0 ]
        [ "$(CCACHE_DIR=$CACHE env -u CCACHE_MAXSIZE ccache -k max_size)" = 2000.0G ] ||
                [ "$(CCACHE_DIR=$CACHE env -u CCACHE_MAXSIZE ccache -k max_size)" = 2T ]
        [ "$(CCACHE_DIR=$CACHE ccache -k umask)" = 000 ]

        # ccache_conf = false: the file is the admin's
        stop_daemon
        printf 'max_size = 7G\n' > "$CACHE/ccache.conf"
        config 100G "ccache_conf = false;"
        start_ready
        [ "$(cat "$CACHE/ccache.conf")" = "max_size = 7G" ]
}

@test "hundreds of real compiles while trims run: none fails, every hit is byte-identical to a plain compile" {
        config 2000k "trim_to = 0.5; ccache_conf = false;"
        start_ready
        src=$BATS_TEST_TMPDIR/src; mkdir -p "$src" "$BATS_TEST_TMPDIR/plain"
        # 40 hot files built twice every round (8k on disk a compile), 24
        # new cold ones per round three times as big (20k each: as many
        # bytes as 60 hot-sized ones, for a third of the compiles) pushing
        # the cache over its cap: trims run all along. The trimmer keeps
        # about 85 hot compiles' worth (900k), so the second build of the
        # hot set, 40 compiles after the first, hits however far behind or
        # ahead the trimmer is; across rounds (the cold ones between) it may not.
        names="$(seq -f 'h%g' 1 40) $(seq -f 'c1_%g' 1 24) $(seq -f 'c2_%g' 1 24) $(seq -f 'c3_%g' 1 24)"
        for n in $names; do
                printf '#include <stdio.h>\nstatic const char s[] = "%s";\nint f_%s(int x) { printf("%%s", s); return x + %d; }\n' \
                        "$(head -c "$([[ $n == h* ]] && echo 600 || echo 15000)" /dev/urandom | base64 -w0)" "$n" "${#n}" > "$src/$n.c"
                CCACHE_DISABLE=1 gcc -c "$src/$n.c" -o "$BATS_TEST_TMPDIR/plain/$n.o"
        done
        # (the trimmer is a driver, not under test: the plain cachectl)
        (while true; do "$CTL_LOOK" -s "$BATS_TEST_TMPDIR/ck.sock" trim --to 900k > /dev/null 2>&1; sleep 0.3; done) &
        trimmer=$!
        build() {   # round, names...
                local round=$1; shift
                printf '%s\n' "$@" | xargs -P 4 -I{} sh -c \
                        'CCACHE_DIR="$1" ccache gcc -c "$2/$3.c" -o "$2/$3.$4.o" || echo "FAILED $3" >&2' \
                        _ "$CACHE" "$src" {} "$round" 2>> "$BATS_TEST_TMPDIR/failures"
        }
        for round in 1 2 3; do
                build "$round" $(seq -f "c${round}_%g" 1 24)
                build "$round" $(seq -f 'h%g' 1 40)
                build "${round}again" $(seq -f 'h%g' 1 40)
        done
        kill "$trimmer"; wait "$trimmer" 2>/dev/null || true
        [ ! -s "$BATS_TEST_TMPDIR/failures" ]
        for o in "$src"/*.o; do
                n=$(basename "$o"); n=${n%%.*}
                cmp "$BATS_TEST_TMPDIR/plain/$n.o" "$o"
        done
        [ "$(ls "$src"/*.o | wc -l)" -eq $((3 * 2 * 40 + 3 * 24)) ]
        stats=$(CCACHE_DIR=$CACHE ccache --print-stats)
        hits=$(awk '$1 == "direct_cache_hit" { print $2 }' <<<"$stats")
        echo "hits: $hits, evicted: $(cache_field t evicted_files_total)"
        # 3 x 40 second builds (a few below: ccache skips a stats update it
        # cannot lock, and the trims take that lock)
        [ "$hits" -ge 100 ]
        [ "$(cache_field t evicted_files_total)" -gt 0 ]
        wait_exact t "$CACHE"
}

@test "ccache 4.13 names and entries at depth 3 are counted and evicted like the others, oldest first" {
        config 1G
        # 4.13: 40 hex chars, no suffix; raw files <key>_<nn>. At depth 2 the
        # name is the key minus its first two chars; at depth 3 minus three.
        i=0
        for l1 in a b c; do for l2 in 1 2; do
                for n in 1 2 3; do
                        i=$((i + 1))
                        key=$(printf '%s%s%038x' "$l1" "$l2" "$i")
                        mkdir -p "$CACHE/$l1/$l2/f"
                        head -c 9000 /dev/urandom > "$CACHE/$l1/$l2/${key:2}"
                        head -c 9000 /dev/urandom > "$CACHE/$l1/$l2/${key:2}_0a"
                        head -c 9000 /dev/urandom > "$CACHE/$l1/$l2/f/${key:3}"   # depth 3 (key[2] is not f: no clash)
                        touch -m -d "-$((100 - i)) hours" "$CACHE/$l1/$l2/${key:2}" "$CACHE/$l1/$l2/${key:2}_0a" \
                                "$CACHE/$l1/$l2/f/${key:3}"
                done
        done; done
        start_ready
        [ "$(cache_field t 'kinds.entry.files')" -eq 36 ]
        [ "$(cache_field t 'kinds.raw.files')" -eq 18 ]
        [ "$(cache_field t entry_files)" -eq 54 ]
        # the 18 files of the six oldest keys (hours 99..94) make 18 x 12 KiB
        size=$(cache_field t size_bytes)
        run ctl trim --to "$(( (size - 18 * 12288 + 999) / 1000 ))k"      # rounded up: not one more
        [ "$status" -eq 0 ]
        [ "$(cache_field t evicted_files_total)" -eq 18 ]
        [ "$(find "$CACHE" -type f -mmin +$((94 * 60 + 30)) | wc -l)" -eq 0 ]      # older than 94.5 h: gone
        [ "$(find "$CACHE" -type f -mmin -$((94 * 60 - 30)) -regex '.*/[0-9a-f_]*' | wc -l)" -eq 36 ]
        wait_exact t "$CACHE"
}

@test "cachectl trim shows its progress on a terminal, and only there" {
        config 1T "ccache_conf = false;"
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 60000
        start_ready 30
        size=$(cache_field t size_bytes)
        # On a terminal (script(1) gives it one): "trimming t: N/M files" lines.
        # (the first progress line comes at once, with what is planned)
        script -qec "$CTL -s $BATS_TEST_TMPDIR/ck.sock trim --to $((size / 4000))k" /dev/null > "$BATS_TEST_TMPDIR/tty.out"
        grep -aq "trimming t: [0-9]*/[0-9]* files" "$BATS_TEST_TMPDIR/tty.out"
        grep -aq "t: evicted [0-9]* files" "$BATS_TEST_TMPDIR/tty.out"
        # Not on a pipe: the result alone.
        run --separate-stderr ctl trim --to "$((size / 8000))k"
        [ "$status" -eq 0 ]
        [ -z "$stderr" ]
        [[ "$output" == "t: evicted "* ]]
}
