#!/usr/bin/env bats
# cachectl measure: what one build did with the cache, by ccache's own
# per-build statistics log, with real ccache, gcc, cmake and ninja; --explain
# names why each miss missed against the last explained run; the fallback
# to the daemon's figures for a build the environment does not reach.
# tests/run: takes 46 s
load helper

setup() {
        export CCACHE_DIR=$BATS_TEST_TMPDIR/cache CCACHE_MAXSIZE=0
        export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg
        unset CCACHE_STATSLOG CCACHE_DEBUG CCACHE_DEBUGDIR CCACHE_BASEDIR CCACHE_NOHASHDIR
        SRC=$BATS_TEST_TMPDIR/src
        mkdir -p "$SRC"
}

teardown() {
        stop_daemon
        unmount_all
}

# A C file $SRC/$1.c returning $2.
csrc() {
        printf 'int %s(void) { return %s; }\n' "$1" "$2" > "$SRC/$1.c"
}

# ccache's counters of $CCACHE_DIR, "id value" a line, sorted.
counters() {
        ccache --print-stats | sort
}

@test "measure: this build's hits, misses and uncacheable calls from its own log; every other counter only grows" {
        csrc a 1
        csrc b 2
        csrc c 3
        (cd "$SRC" && for f in a b; do ccache gcc -c $f.c -o $f.o; done)
        counters > "$BATS_TEST_TMPDIR/before"
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" measure --json -- sh -c "
                cd '$SRC' && ccache gcc -c a.c -o a.o && ccache gcc -c b.c -o b.o && ccache gcc -c c.c -o c.o &&
                ccache gcc a.o b.o c.o -o prog -nostartfiles -e a 2>/dev/null; ccache gcc -E a.c > /dev/null; echo built"
        [ "$status" -eq 0 ]
        # the build's own output went to stderr: stdout is the JSON alone
        [[ "$stderr" == *built* ]]
        jq -e '.source == "statslog" and .exit_status == 0 and .command[0] == "sh"' <<<"$output"
        jq -e '.calls | .cacheable == 3 and .hits == 2 and .direct_hits == 2 and .preprocessed_hits == 0
                and .remote_hits == 0 and .misses == 1' <<<"$output"
        jq -e '.calls.uncacheable | .called_for_link == 1 and .called_for_preprocessing == 1' <<<"$output"
        jq -e '(.hit_rate * 1000 | round) == 667 and (.seconds > 0)' <<<"$output"
        jq -e '.missed == [{"source": "c.c"}]' <<<"$output"
        # ccache's counters of the cache: added to, never zeroed or lowered
        counters > "$BATS_TEST_TMPDIR/after"
        join "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after" | awk '$3 < $2 && $1 != "stats_updated_timestamp" { print; bad = 1 } END { exit bad }'
        grep -qP '^direct_cache_hit\t[1-9]' "$BATS_TEST_TMPDIR/after"
        # the text: the figures, and every miss when not on a terminal
        run bash -c "cd '$SRC' && '$CTL' -s '$BATS_TEST_TMPDIR/none.sock' measure -- ccache gcc -c c.c -o c2.o"
        [ "$status" -eq 0 ]
        [[ "$output" == *"Cacheable calls      1"* ]]
        [[ "$output" == *"Hits               1   100.0 %   (direct 1, preprocessed 0, remote 0)"* ]]
        # nothing of the private directory is left
        [ -z "$(find /tmp -maxdepth 1 -name 'cachectl-measure.*' -newer "$BATS_TEST_TMPDIR/before")" ]
}

@test "measure: --min-hit-rate gates (4 below, 0 above), a failing build's own status, usage errors" {
        csrc a 1
        csrc b 2
        ccache gcc -c "$SRC/a.c" -o "$SRC/a.o"
        # one hit, one miss: 50 %
        run "$CTL" measure --min-hit-rate 60 -- sh -c "ccache gcc -c '$SRC/a.c' -o '$SRC/a.o' && ccache gcc -c '$SRC/b.c' -o '$SRC/b.o'"
        [ "$status" -eq 4 ]
        [[ "$output" == *"the hit rate 50.0 % is below --min-hit-rate 60.0 %"* ]]
        run "$CTL" measure --min-hit-rate 100% -- ccache gcc -c "$SRC/b.c" -o "$SRC/b.o"
        [ "$status" -eq 0 ]
        # no cacheable call holds no rate
        run "$CTL" measure --min-hit-rate 1 -- true
        [ "$status" -eq 4 ]
        [[ "$output" == *"no cacheable call"* ]]
        # the build's own failure wins, with the figures still said
        printf 'int broken(void) { return }\n' > "$SRC/x.c"
        run "$CTL" measure --min-hit-rate 99 -- ccache gcc -c "$SRC/x.c" -o "$SRC/x.o"
        [ "$status" -eq 1 ]
        [[ "$output" == *"compile_failed 1"* ]]
        run "$CTL" measure -- sh -c 'exit 7'
        [ "$status" -eq 7 ]
        run -127 "$CTL" measure -- /nonexistent/build
        [ "$status" -eq 127 ]
        [[ "$output" == *"cannot run /nonexistent/build"* ]]
        run "$CTL" measure --min-hit-rate 120 -- true
        [ "$status" -eq 2 ]
        run "$CTL" measure true
        [ "$status" -eq 2 ]
        [[ "$output" == *"-- COMMAND"* ]]
        run "$CTL" measure a b -- true
        [ "$status" -eq 2 ]
}

# A CMake project of C and C++ in $SRC/proj: $1 files of each, all including h.h.
cmake_project() {
        local p=$SRC/proj
        mkdir -p "$p"
        printf 'cmake_minimum_required(VERSION 3.13)\nproject(demo C CXX)\nadd_library(demo %s)\n' \
                "$(for i in $(seq 1 "$1"); do printf 'c%d.c x%d.cpp ' "$i" "$i"; done)" > "$p/CMakeLists.txt"
        echo '#define BASE 1' > "$p/h.h"
        for i in $(seq 1 "$1"); do
                printf '#include "h.h"\nint c%d(void) { return BASE + %d; }\n' "$i" "$i" > "$p/c$i.c"
                printf '#include "h.h"\nint x%d() { return BASE * %d; }\n' "$i" "$i" > "$p/x$i.cpp"
        done
}

# configure BUILD_DIR: a Debug (-g) Ninja build of $SRC/proj through ccache.
configure() {
        cmake -S "$SRC/proj" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
                -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
}

@test "measure --explain: one project built from two directories misses on the build directory; its fix makes the next build hit" {
        cmake_project 10
        configure "$BATS_TEST_TMPDIR/b1"
        configure "$BATS_TEST_TMPDIR/b2"
        run --separate-stderr "$CTL" measure --explain --json -- ninja -C "$BATS_TEST_TMPDIR/b1"
        [ "$status" -eq 0 ]
        jq -e '.calls.misses == 20 and ([.missed[].cause] | unique) == ["first-build"]' <<<"$output"
        run --separate-stderr "$CTL" measure --explain --json -- ninja -C "$BATS_TEST_TMPDIR/b2"
        [ "$status" -eq 0 ]
        jq -e '.calls.misses == 20 and (.missed | length) == 20' <<<"$output"
        jq -e --arg b1 "$BATS_TEST_TMPDIR/b1" --arg b2 "$BATS_TEST_TMPDIR/b2" \
                '[.missed[] | select(.cause == "build-dir" and (.detail | startswith("the build directory \($b1) -> \($b2) reaches the key through cwd (hashed with -g: hash_dir)")))] | length == 20' <<<"$output"
        jq -e --arg t "$BATS_TEST_TMPDIR" '.causes | length == 1 and .[0].cause == "build-dir" and .[0].count == 20 and
                (.[0].fix | startswith("CCACHE_BASEDIR=\($t) CCACHE_NOHASHDIR=1 in the build'"'"'s environment"))' <<<"$output"
        # the text, as a user sees it
        configure "$BATS_TEST_TMPDIR/b3"
        run "$CTL" measure --explain -- ninja -C "$BATS_TEST_TMPDIR/b3"
        [ "$status" -eq 0 ]
        # in 80 columns, long lines wrapped at spaces
        ! awk 'length($0) > 80 && !/^\[/ { print length($0) ": " $0; bad = 1 } END { exit !bad }' <<<"$output" || false
        flat=$(tr '\n' ' ' <<<"$output" | tr -s ' ')
        [[ "$flat" == *"build-dir 20 fix: CCACHE_BASEDIR=$BATS_TEST_TMPDIR CCACHE_NOHASHDIR=1"* ]]
        [[ "$flat" == *"$SRC/proj/c1.c build-dir: the build directory $BATS_TEST_TMPDIR/b2 -> $BATS_TEST_TMPDIR/b3 reaches"* ]]
        # the fix, applied: a first build stores under the new keys, the next from elsewhere hits
        export CCACHE_BASEDIR=$BATS_TEST_TMPDIR CCACHE_NOHASHDIR=1
        configure "$BATS_TEST_TMPDIR/b4"
        configure "$BATS_TEST_TMPDIR/b5"
        "$CTL" measure -- ninja -C "$BATS_TEST_TMPDIR/b4" > /dev/null
        run --separate-stderr "$CTL" measure --min-hit-rate 95 --json -- ninja -C "$BATS_TEST_TMPDIR/b5"
        [ "$status" -eq 0 ]
        jq -e '.hit_rate >= 0.95 and .calls.hits == 20' <<<"$output"
}

@test "measure --explain: a header change, a flag, the source, __TIME__, each named for what it is" {
        cmake_project 2
        configure "$BATS_TEST_TMPDIR/b"
        "$CTL" measure --explain -- ninja -C "$BATS_TEST_TMPDIR/b" > /dev/null
        # a macro-only header changed: no line of its own in the preprocessed text, still named
        echo '#define BASE 2' > "$SRC/proj/h.h"
        run --separate-stderr "$CTL" measure --explain --json -- ninja -C "$BATS_TEST_TMPDIR/b"
        [ "$status" -eq 0 ]
        jq -e --arg h "$SRC/proj/h.h" '.calls.misses == 4 and
                ([.missed[] | select(.cause == "include-changed" and .detail == "\($h) changed")] | length) == 4' <<<"$output"
        jq -e '.causes == [{"cause": "include-changed", "count": 4, "fix": null}]' <<<"$output"
        # one source changed: that one only
        printf '#include "h.h"\nint c1(void) { return BASE + 100; }\n' > "$SRC/proj/c1.c"
        run --separate-stderr "$CTL" measure --explain --json -- ninja -C "$BATS_TEST_TMPDIR/b"
        jq -e --arg s "$SRC/proj/c1.c" '.calls.misses == 1 and .calls.hits == 0 and
                ([.missed[] | {source, cause, detail}] == [{"source": $s, "cause": "source", "detail": "the source file changed"}])' <<<"$output"
        # a flag the object depends on (a -D that changes no line is a preprocessed hit)
        cmake -DCMAKE_C_FLAGS=-O1 "$BATS_TEST_TMPDIR/b" > /dev/null
        run --separate-stderr "$CTL" measure --explain --json -- ninja -C "$BATS_TEST_TMPDIR/b"
        jq -e '.calls.misses == 2 and ([.missed[].cause] | unique) == ["argument"] and
                ([.missed[].detail] | unique) == ["added: -O1"]' <<<"$output"
        # __TIME__: a new text each build, once the clock's second moved
        printf 'const char *when(void) { return __TIME__; }\n' > "$SRC/t.c"
        (cd "$SRC" && "$CTL" measure --explain -- ccache gcc -c t.c -o t.o > /dev/null)
        first=$(date +%s)
        wait_for '[ "$(date +%s)" -gt "$first" ]'
        run --separate-stderr bash -c "cd '$SRC' && '$CTL' measure --explain --json -- ccache gcc -c t.c -o t.o"
        jq -e --arg s "$SRC/t.c" '[.missed[] | {source, cause, detail}] == [{"source": $s, "cause": "time-macro",
                "detail": "__TIME__, __DATE__ or __TIMESTAMP__ in the source expands anew each build"}]' <<<"$output"
        jq -e '.causes[0].fix | startswith("add time_macros to sloppiness")' <<<"$output"
        # what --explain keeps is the user's own, bounded
        [ "$(stat -c %a "$XDG_CACHE_HOME/cachekeeper/explain")" = 700 ]
}

@test "measure: a build the environment does not reach (its own mount namespace, the cache bind-mounted elsewhere) falls back to the daemon's figures" {
        setup_compile_cache
        start_ready
        other=$BATS_TEST_TMPDIR/other
        mkdir -p "$other"
        csrc a 1
        csrc b 2
        csrc c 3
        # As a container would: another path, a scrubbed environment, its own namespace.
        build="mount --bind '$CACHE' '$other' && cd '$SRC' && for i in 1 2; do for f in a b c; do
                env -i PATH=/usr/bin:/bin CCACHE_DIR='$other' CCACHE_MAXSIZE=0 ccache gcc -c \$f.c -o \$f.o || exit 1; done; done"
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" measure t --json -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        jq -e '.source == "daemon" and .cache == "t"' <<<"$output"
        jq -e '.calls | .hits == 3 and .misses == 3 and .cacheable == 6 and .direct_hits == null' <<<"$output"
        jq -e '.hit_rate == 0.5' <<<"$output"
        # the text says where the figures came from and what they include
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" measure -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        [[ "$output" == *"which include every other build in that window"* ]]
        [[ "$output" == *"Hits                 6"* ]]
        # no daemon, no log: said, and not a success
        stop_daemon
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" measure --min-hit-rate 50 -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 4 ]
        [[ "$output" == *"cannot be asked either"* ]]
}
