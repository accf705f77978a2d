#!/usr/bin/env bats
# cachectl measure: what one build did with the cache, by ccache's own
# per-build statistics log, with real ccache, gcc, cmake and ninja; --explain
# names why each miss missed against the last explained run; the fallback
# to the daemon's figures for a build the environment does not reach.
# tests/run: takes 46 s
load ../lib/helper

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
        # a TMPDIR of its own: other sessions' measures come and go in /tmp
        export TMPDIR=$BATS_TEST_TMPDIR/tmp
        mkdir "$TMPDIR"
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
        [ -z "$(ls -A "$TMPDIR")" ]
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
        # not a terminal: not wrapped, a cause and each miss on a line of its own, for grep
        grep -q "^  build-dir  *20   fix: CCACHE_BASEDIR=$BATS_TEST_TMPDIR CCACHE_NOHASHDIR=1" <<<"$output"
        grep -q "^  $SRC/proj/c1.c   build-dir: the build directory $BATS_TEST_TMPDIR/b2 -> $BATS_TEST_TMPDIR/b3 reaches" <<<"$output"
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
        [[ "$output" == *"in the build's cache, t ($CACHE, the build's CCACHE_DIR): the build ran where"* ]]
        [[ "$output" == *"Hits                 6"* ]]
        # no daemon, no log, and the cache named: nothing to measure by, not a success
        stop_daemon
        run "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" measure t --min-hit-rate 50 -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 4 ]
        [[ "$output" == *"cachekeeperd cannot be asked: nothing to measure by"* ]]
        [[ "$output" == *"no figures to hold to --min-hit-rate 50.0 %"* ]]
}

@test "measure: a build that compiled nothing has no hit rate, passes --min-hit-rate, and says so; no container hint unless the daemon saw calls" {
        # no daemon to ask: the log alone
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" measure --min-hit-rate 90 -- true
        [ "$status" -eq 0 ]
        [[ "$output" == *"Nothing was compiled: no ccache call reached this build's statistics log"* ]]
        [[ "$output$stderr" != *"does not reach"* && "$output$stderr" != *container* ]]
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" measure --min-hit-rate 90 --json -- true
        [ "$status" -eq 0 ]
        jq -e '.hit_rate == null and .calls.cacheable == 0 and .source == "statslog"' <<<"$output"
        # a ninja with nothing to do, the daemon keeping the build's cache and seeing nothing meanwhile
        setup_compile_cache
        start_ready
        cmake_project 1
        configure "$BATS_TEST_TMPDIR/b"
        ninja -C "$BATS_TEST_TMPDIR/b" > /dev/null
        run --separate-stderr ctl measure --min-hit-rate 90 --json -- ninja -C "$BATS_TEST_TMPDIR/b"
        [ "$status" -eq 0 ]
        jq -e '.hit_rate == null and .calls.cacheable == 0 and .source == "statslog" and .cache == "t"' <<<"$output"
        run --separate-stderr ctl measure --min-hit-rate 90 -- ninja -C "$BATS_TEST_TMPDIR/b"
        [ "$status" -eq 0 ]
        [[ "$output" == *"Nothing was compiled: no ccache call reached this build's statistics log, and cachekeeperd saw none meanwhile in the build's cache, t ($CACHE, the build's CCACHE_DIR)."* ]]
        [[ "$output$stderr" != *"does not reach"* && "$output$stderr" != *container* ]]
        # a link alone reaches the log: no cacheable call, so no rate either
        run --separate-stderr ctl measure --min-hit-rate 90 --json -- \
                sh -c "cd '$BATS_TEST_TMPDIR/b' && ccache gcc -shared CMakeFiles/demo.dir/c1.c.o -o libx.so"
        [ "$status" -eq 0 ]
        jq -e '.hit_rate == null and .calls.cacheable == 0 and .calls.uncacheable.called_for_link == 1' <<<"$output"
}

@test "measure: recache calls (CCACHE_RECACHE) are counted apart and left out of the hit rate and its gate" {
        csrc a 1
        csrc b 2
        (cd "$SRC" && ccache gcc -c a.c -o a.o)
        run --separate-stderr bash -c "cd '$SRC' && '$CTL' measure --min-hit-rate 90 --json -- sh -c '
                CCACHE_RECACHE=1 ccache gcc -c a.c -o a.o && CCACHE_RECACHE=1 ccache gcc -c b.c -o b.o && ccache gcc -c a.c -o a.o'"
        [ "$status" -eq 0 ]
        jq -e '.calls | .recache == 2 and .cacheable == 1 and .hits == 1 and .misses == 0 and .uncacheable == {}' <<<"$output"
        jq -e '.hit_rate == 1' <<<"$output"
        # ccache's own counters agree: two recaches
        [ "$(ccache --print-stats | awk '$1 == "recache" { print $2 }')" = 2 ]
        # recaches only: no rate to fall short of
        run --separate-stderr bash -c "cd '$SRC' && CCACHE_RECACHE=1 '$CTL' measure --min-hit-rate 90 -- ccache gcc -c b.c -o b.o"
        [ "$status" -eq 0 ]
        grep -qx "  Cacheable calls      0   recaches only: no hit rate" <<<"$output"
        grep -q "^  Recache              1   (CCACHE_RECACHE" <<<"$output"
}

@test "measure: the fallback counts only the cache the build uses (its CCACHE_DIR, a symlinked spelling, or ccache's cache_dir), never every cache" {
        require_root
        A=$BATS_TEST_TMPDIR/a
        B=$BATS_TEST_TMPDIR/b
        mkdir -m 1777 "$A" "$B"
        export CCACHE_MAXSIZE=0
        write_config_caches "{ name = \"a\"; path = \"$A\"; max_size = \"1G\"; }, { name = \"b\"; path = \"$B\"; max_size = \"1G\"; }"
        start_ready
        other=$BATS_TEST_TMPDIR/other
        mkdir -p "$other"
        csrc a 1
        csrc b 2
        csrc c 3
        # Into a (bind-mounted elsewhere, as in a container): 3 misses, 3 hits; into b meanwhile: 3 misses, 3
        # hits more each time, out of the log's reach too.
        build="mount --bind '$A' '$other' && cd '$SRC' && for i in 1 2; do for f in a b c; do
                env -i PATH=/usr/bin:/bin CCACHE_DIR='$other' CCACHE_MAXSIZE=0 ccache gcc -c \$f.c -o \$f.o &&
                env -i PATH=/usr/bin:/bin CCACHE_DIR='$B' CCACHE_MAXSIZE=0 ccache gcc -DB -c \$f.c -o \$f.o || exit 1; done; done"
        ln -s "$A" "$BATS_TEST_TMPDIR/a-link"
        export CCACHE_DIR=$BATS_TEST_TMPDIR/a-link
        run --separate-stderr ctl measure --json -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        jq -e '.source == "daemon" and .cache == "a" and .calls.hits == 3 and .calls.misses == 3' <<<"$output"
        [[ "$stderr" != *"nothing to measure by"* ]]
        run --separate-stderr ctl measure -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        [[ "$output" == *"in the build's cache, a ($BATS_TEST_TMPDIR/a-link, the build's CCACHE_DIR): the build ran where"* ]]
        grep -qx "  Hits                 6" <<<"$output"
        grep -qx "  Misses               0" <<<"$output"
        # no CCACHE_DIR: where ccache itself puts the cache (here: its config file's cache_dir)
        unset CCACHE_DIR
        printf 'cache_dir = %s\nmax_size = 0\n' "$BATS_TEST_TMPDIR/a-link" > "$BATS_TEST_TMPDIR/ccache.conf"
        export CCACHE_CONFIGPATH=$BATS_TEST_TMPDIR/ccache.conf
        run --separate-stderr ctl measure --json -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        jq -e '.source == "daemon" and .cache == "a" and .calls.hits == 6 and .calls.misses == 0' <<<"$output"
        # a build into a cache the daemon does not keep: nothing here to count by
        export CCACHE_DIR=$BATS_TEST_TMPDIR/elsewhere
        run --separate-stderr ctl measure --json -- unshare -m --propagation private sh -c "$build"
        [ "$status" -eq 0 ]
        jq -e '.source == "statslog" and .cache == null and .hit_rate == null' <<<"$output"
}

@test "measure: escape sequences in a source's name and in the command are shown harmlessly" {
        name=$(printf 'evil\033]0;owned\007.c')
        printf 'int evil(void) { return 1; }\n' > "$SRC/$name"
        run --separate-stderr "$CTL" measure -- ccache gcc -c "$SRC/$name" -o "$SRC/e.o"
        [ "$status" -eq 0 ]
        [[ "$output" != *$'\e'* && "$output" != *$'\a'* ]]
        # the command, quoted as a shell needs it, and the miss
        [[ "$(head -n 1 <<<"$output")" == "ccache gcc -c '$SRC/evil\\e]0;owned\\x07.c' -o $SRC/e.o: "* ]]
        grep -qxF "  $SRC/evil\\e]0;owned\\x07.c" <<<"$output"
        # with --explain too
        run --separate-stderr "$CTL" measure --explain -- ccache gcc -O1 -c "$SRC/$name" -o "$SRC/e.o"
        [ "$status" -eq 0 ]
        [[ "$output" != *$'\e'* && "$output" != *$'\a'* ]]
        grep -q "^  $SRC/evil\\\\e\]0;owned\\\\x07\.c   [a-z-]*: " <<<"$output"
        # JSON escapes it its own way
        run --separate-stderr "$CTL" measure --json -- ccache gcc -O2 -c "$SRC/$name" -o "$SRC/e.o"
        [[ "$output" != *$'\e'* ]]
        jq -e --arg s "$SRC/$name" '.missed == [{"source": $s}] and .command[4] == $s' <<<"$output"
}

@test "measure: text piped is not wrapped (a long path stays on one line with its cause), on a terminal it is; the command quoted" {
        deep=$SRC/a-rather-long-directory-name/and-another-long-directory-name/and-a-third-one-to-pass-80
        mkdir -p "$deep"
        printf 'int deep(void) { return 1; }\n' > "$deep/long_source_file_name.c"
        run --separate-stderr "$CTL" measure --explain -- sh -c "ccache gcc -c '$deep/long_source_file_name.c' -o '$SRC/d.o'"
        [ "$status" -eq 0 ]
        [[ "$(head -n 1 <<<"$output")" == "sh -c 'ccache gcc -c '\\''$deep/long_source_file_name.c'\\'' -o '\\''$SRC/d.o'\\''': "* ]]
        grep -q "^  $deep/long_source_file_name\.c   [a-z-]*: ." <<<"$output"
        run --separate-stderr "$CTL" measure -- ccache gcc -O1 -c "$deep/long_source_file_name.c" -o "$SRC/d.o"
        grep -qxF "  $deep/long_source_file_name.c" <<<"$output"
        # prose: one line piped, wrapped at 80 columns on a terminal
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" measure -- true
        [ "$(grep -c . <<<"$output")" -eq 2 ]
        [ "$(awk '{ print length($0) }' <<<"$output" | sort -n | tail -n 1)" -gt 80 ]
        run script -qec "'$CTL' -s '$BATS_TEST_TMPDIR/none.sock' measure -- true" /dev/null
        [ "$status" -eq 0 ]
        [ "$(grep -c . <<<"$output")" -gt 2 ]
        [ "$(tr -d '\r' <<<"$output" | awk '{ print length($0) }' | sort -n | tail -n 1)" -le 80 ]
}
