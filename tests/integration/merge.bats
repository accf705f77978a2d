#!/usr/bin/env bats
# cachectl merge FROM --into TO: real caches filled by Debian's ccache on
# tmpfs volumes mounted in the test's own mount namespace, merged by the
# real daemon across two filesystems (copies) and within one (renames);
# the cap of TO under a live writer; kill -9 mid-merge and a rerun; mixed
# key families; a user swapping directories and planting files meanwhile.
load helper

setup() {
        require_root
        export CCACHE_MAXSIZE=0
        KEEPERS=()
}

teardown() {
        local k
        for k in "${KEEPERS[@]}"; do
                [ "$(awk '/^PPid:/ { print $2 }' "/proc/$k/status" 2>/dev/null)" = "$BASHPID" ] || continue
                kill "$k" 2>/dev/null || true
        done
        stop_daemon
        unmount_all
}

# two_volumes [SIZE_A [SIZE_B]]: FROM=$T/va/a and TO=$T/vb/b on tmpfs volumes of their own.
two_volumes() {
        mount_tmpfs "$BATS_TEST_TMPDIR/va" "${1:-128M}"
        mount_tmpfs "$BATS_TEST_TMPDIR/vb" "${2:-128M}"
        FROM=$BATS_TEST_TMPDIR/va/a
        TO=$BATS_TEST_TMPDIR/vb/b
        mkdir -m 1777 "$FROM" "$TO"
}

# config CAP_A CAP_B [top-level setting...]: caches a (FROM) and b (TO).
config() {
        write_config_caches "{ name = \"a\"; path = \"$FROM\"; max_size = \"$1\"; },
                             { name = \"b\"; path = \"$TO\"; max_size = \"$2\"; }" 'audit_interval = "0s";' "${@:3}"
}

# ccache's entries below $1 ("relative/path mtime" with -l, else the paths).
entries() {
        find "$1" -mindepth 3 -type f -regex '.*/[0-9a-v]+\([RM]\|[0-9]W\)' "${@:2}"
}
entry_list() {
        (cd "$1" && find . -mindepth 3 -type f -regex '.*/[0-9a-v]+\([RM]\|[0-9]W\)' -printf '%P %T@\n' | sort)
}

# ccache's counters of cache $1, "files KiB", as ccache -s sums them.
ccache_counters() {
        CCACHE_DIR=$1 ccache --print-stats |
                awk '$1 == "files_in_cache" { f = $2 } $1 == "cache_size_kibibyte" { k = $2 } END { print f + 0, k + 0 }'
}
# What they should say: the entries on disk, "files KiB" (Σ st_blocks / 2).
disk_counters() {
        entries "$1" -printf '%b\n' | awk '{ n++; s += $1 / 2 } END { printf "%d %d\n", n, s }'
}

# Waits until ccache -s of cache dir $1 agrees with its disk.
wait_counters() {
        wait_for "[ \"\$(ccache_counters $1)\" = \"\$(disk_counters $1)\" ]" "${2:-20}" || {
                echo "ccache -s: $(ccache_counters "$1")  disk: $(disk_counters "$1")" >&2
                for l in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                        echo "$l: $(entries "$1/$l" -mindepth 2 2>/dev/null | wc -l) stats=$(sed -n 12p "$1/$l/stats" 2>/dev/null)"
                done >&2
                cat "$BATS_TEST_TMPDIR/daemon.log" >&2
                return 1
        }
}

# Gives every entry of $1 its own mtime, an hour apart going back from $2
# hours ago (the LRU order the merge must keep).
age_entries() {
        local i=0 f now
        now=$(date +%s)
        while read -r f; do
                touch -h -d "@$((now - ($2 + i) * 3600))" "$f"
                i=$((i + 1))
        done < <(entries "$1" | sort)
}

@test "across two tmpfs volumes every entry moves with its mtime; both figures exact, ccache -s agrees in both" {
        two_volumes
        compile "$FROM" 30 a
        compile "$TO" 20 b
        compile "$FROM" 3 s               # the same three compiles in both: TO has those names already
        compile "$TO" 3 s
        age_entries "$FROM" 10
        # A level-1 directory TO has not got at all (nor its stats file):
        # the merge makes it, and ccache's counters there start from nothing.
        l1=$(entries "$FROM" | head -1 | sed "s|^$FROM/||; s|/.*||")
        rm -rf "${TO:?}/$l1"
        entry_list "$FROM" > "$BATS_TEST_TMPDIR/from.before"
        entry_list "$TO" > "$BATS_TEST_TMPDIR/to.before"
        [ "$(wc -l < "$BATS_TEST_TMPDIR/from.before")" -ge 60 ]
        [ ! -e "$TO/$l1" ]
        config 1G 1G
        start_ready
        wait_counters "$TO"

        run ctl merge a --into b
        echo "$output"
        [ "$status" -eq 0 ]
        both=$(join <(cut -d' ' -f1 "$BATS_TEST_TMPDIR/from.before") <(cut -d' ' -f1 "$BATS_TEST_TMPDIR/to.before") | wc -l)
        [ "$both" -gt 0 ]
        [[ "$output" == *"Merged a into b: $(($(wc -l < "$BATS_TEST_TMPDIR/from.before") - both)) entries"*" moved, $both already in b"* ]]
        [[ "$output" == *"remove the cache \"a\" (path = \"$FROM\")"* ]]
        [[ "$output" == *"docker run -v $TO:CONTAINER_CCACHE_DIR"*"(was: -v $FROM:CONTAINER_CCACHE_DIR)"* ]]

        # FROM: no entry; ccache.conf, CACHEDIR.TAG and the stats files kept.
        [ "$(entries "$FROM" | wc -l)" -eq 0 ]
        # TO: every entry of both, each of FROM's with its own mtime (the LRU order).
        entry_list "$TO" > "$BATS_TEST_TMPDIR/to.after"
        sort -u -k1,1 "$BATS_TEST_TMPDIR/from.before" "$BATS_TEST_TMPDIR/to.before" | cut -d' ' -f1 > "$BATS_TEST_TMPDIR/want"
        cut -d' ' -f1 "$BATS_TEST_TMPDIR/to.after" | diff - "$BATS_TEST_TMPDIR/want"
        while read -r path mtime; do
                [ -n "$(grep -F "$path " "$BATS_TEST_TMPDIR/to.before")" ] && continue   # TO's own copy stays
                got=$(grep -F "$path " "$BATS_TEST_TMPDIR/to.after" | cut -d' ' -f2)
                [ "${got%.*}" = "${mtime%.*}" ] || { echo "$path: mtime $got, was $mtime" >&2; false; }
        done < "$BATS_TEST_TMPDIR/from.before"
        # No temporary left behind in TO.
        [ -z "$(find "$TO" -name '*.tmp.*')" ]
        # The daemon's figures are exact in both, and ccache's counters agree with the disk.
        wait_exact a "$FROM"
        wait_exact b "$TO"
        wait_counters "$FROM"
        wait_counters "$TO"
        [ "$(ccache_counters "$FROM")" = "0 0" ]
        # Nothing counted as a store or a removal: moves are neither.
        [ "$(cache_field b stored_files_total)" -eq 0 ]
        [ "$(cache_field a removed_files_total)" -eq 0 ]
        # The moved entries are hits for TO's ccache.
        run env CCACHE_DIR="$TO" ccache gcc -c "$BATS_TEST_TMPDIR/src/a1.c" -o "$BATS_TEST_TMPDIR/src/a1.o"
        [ "$(CCACHE_DIR=$TO ccache --print-stats | awk '$1 == "direct_cache_hit" { print $2 }')" -ge 1 ]
}
