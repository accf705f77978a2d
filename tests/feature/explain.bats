#!/usr/bin/env bats
# cachectl measure --explain: each verdict true, tried case by case with
# real ccache and gcc on a few files (the whole host-like sequence is
# explain-host.bats). Every case here was a wrong verdict once: a path
# spelled otherwise, a setting named as an argument, an eviction called a
# first build or a real change, a depend-mode header named by its hash.
load ../lib/helper

setup() {
        export CCACHE_DIR=$BATS_TEST_TMPDIR/cache CCACHE_MAXSIZE=0
        export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg CACHEKEEPER_SOCKET=$BATS_TEST_TMPDIR/ck.sock
        unset CCACHE_STATSLOG CCACHE_DEBUG CCACHE_DEBUGDIR CCACHE_BASEDIR CCACHE_NOHASHDIR CCACHE_DEPEND \
                CCACHE_SLOPPINESS CCACHE_RECACHE
        P=$BATS_TEST_TMPDIR/proj
        mkdir -p "$P/src" "$P/inc" "$P/b1" "$P/b2"
        echo '#define V 1' > "$P/inc/v.h"
        printf '#include "v.h"\nint a(void) { return V; }\n' > "$P/src/a.c"
        printf 'int c(void) { return 3; }\n' > "$P/src/c.c"
}

teardown() {
        stop_daemon
        unmount_all
}

# explain DIR ARGS...: one explained compile of a.c (and c.c) in DIR, the JSON in $output.
explain() {
        local dir=$1
        shift
        run --separate-stderr bash -c "cd '$dir' && '$CTL' measure --explain --json -- sh -c '
                ccache gcc $* -I$P/inc -c $P/src/a.c -o a.o && ccache gcc $* -c $P/src/c.c -o c.o'"
        [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
}

# causes: "SOURCE-BASENAME=CAUSE ..." of the misses, sorted.
causes() {
        jq -r '[.missed[] | "\(.source | split("/") | last)=\(.cause)"] | sort | join(" ")' <<<"$output"
}

@test "explain: the same source from another spelling of its path is the same file; a header reached twice is named once" {
        explain "$P/b1" -O1
        [ "$(causes)" = "a.c=first-build c.c=first-build" ]
        # every miss names its source absolute and normalised, and its object
        jq -e --arg p "$P" '[.missed[] | .source | test("/\\.\\.?/|//") | not] | all' <<<"$output"
        jq -e --arg p "$P" '[.missed[].object] == ["\($p)/b1/a.o", "\($p)/b1/c.o"]' <<<"$output"
        # a.c through a symlinked directory and a "..": the same file, its header changed
        ln -s "$P" "$BATS_TEST_TMPDIR/link"
        echo '#define V 2' > "$P/inc/v.h"
        run --separate-stderr bash -c "cd '$P/b1' && '$CTL' measure --explain --json -- \
                ccache gcc -O1 -I$BATS_TEST_TMPDIR/link/inc -I$P/inc/../inc -c $BATS_TEST_TMPDIR/link/src/../src/a.c -o a.o"
        [ "$status" -eq 0 ]
        jq -e --arg p "$P" '.missed | length == 1 and .[0].source == "\($p)/src/a.c"' <<<"$output"
        # the argument's spelling changed too (-I through the link): named by what it is
        jq -e '.missed[0].cause == "argument"' <<<"$output"
        # and the next build, spelled the same, names the header once, by its real path
        echo '#define V 3' > "$P/inc/v.h"
        run --separate-stderr bash -c "cd '$P/b1' && '$CTL' measure --explain --json -- \
                ccache gcc -O1 -I$BATS_TEST_TMPDIR/link/inc -I$P/inc/../inc -c $BATS_TEST_TMPDIR/link/src/../src/a.c -o a.o"
        jq -e --arg p "$P" '.missed == [.missed[0]] and .missed[0].cause == "include-changed" and
                .missed[0].detail == "\($p)/inc/v.h changed"' <<<"$output"
}

@test "explain: hash_dir turned off is config, never an argument named by a directory; -g added is the argument -g" {
        explain "$P/b1" -g
        CCACHE_NOHASHDIR=1 explain "$P/b1" -g
        [ "$(causes)" = "a.c=config c.c=config" ]
        jq -e '[.missed[].detail] | unique == ["hash_dir true -> false (a setting that enters the key: expected once)"]' <<<"$output"
        # -g added where the directory is hashed: the flag, not the directory it brings in
        explain "$P/b2"
        explain "$P/b2" -g
        [ "$(causes)" = "a.c=argument c.c=argument" ]
        jq -e '[.missed[].detail] | unique == ["added: -g"]' <<<"$output"
}

@test "explain: the locale dropped from sloppiness is config, never the locale's value" {
        CCACHE_SLOPPINESS=locale explain "$P/b1"
        LANG=C.UTF-8 explain "$P/b1"
        [ "$(causes)" = "a.c=config c.c=config" ]
        jq -e '[.missed[].detail] | unique == ["sloppiness locale -> (none) (the locale is hashed or not: expected once)"]' <<<"$output"
        ! grep -q 'C.UTF-8' <<<"$output"
        # the locale itself changed, sloppiness alike: the environment, by the variable's name
        LANG=C explain "$P/b2" -O2
        LANG=C.UTF-8 explain "$P/b2" -O2
        [ "$(causes)" = "a.c=environment c.c=environment" ]
        jq -e '[.missed[].detail] | unique == ["a hashed variable changed: LANG=C.UTF-8"]' <<<"$output"
}

@test "explain: depend mode names the changed header by its path, and keeps its records" {
        export CCACHE_DEPEND=1
        explain "$P/b1" -MD
        echo '#define V 2' > "$P/inc/v.h"
        explain "$P/b1" -MD
        jq -e --arg p "$P" '.missed | length == 1 and .[0].cause == "include-changed" and
                .[0].detail == "\($p)/inc/v.h changed"' <<<"$output"
        # the record moved on: the next change is named against this build, not the first
        echo '#define V 3' > "$P/inc/v.h"
        rm -f "$P"/b1/*.d   # as ninja does once it has read them
        explain "$P/b1" -MD
        jq -e --arg p "$P" '.missed | length == 1 and .[0].cause == "include-changed" and
                .[0].detail == "\($p)/inc/v.h changed"' <<<"$output"
        ! grep -Eq '[0-9a-v]{30,}' <<<"$(jq -r '.missed[].detail' <<<"$output")"
        # a record a direct hit kept (it hashed no include) from another directory, then -g: -g, and nothing else
        export CCACHE_BASEDIR=$P CCACHE_NOHASHDIR=1
        explain "$P/b1" -MD
        explain "$P/b2" -MD
        jq -e '.calls.hits == 2 and .calls.misses == 0' <<<"$output"
        explain "$P/b2" -MD -g
        jq -e '[.missed[].detail] == ["added: -g", "added: -g"]' <<<"$output"
}

@test "explain: an entry gone from the cache is evicted, never a first build or a real change" {
        explain "$P/b1"
        # the entries of a.c gone (as a cap trim or ccache's own cleanup would), nothing changed
        find "$CCACHE_DIR" -name '*R' -delete
        explain "$P/b1"
        [ "$(causes)" = "a.c=evicted c.c=evicted" ]
        jq -e '[.missed[] | .since == null and .by == null] | all' <<<"$output"
        # with no earlier explained run: ccache's manifest still proves the entry was there
        rm -rf "$XDG_CACHE_HOME"
        find "$CCACHE_DIR" -name '*R' -delete
        explain "$P/b1"
        [ "$(causes)" = "a.c=evicted c.c=evicted" ]
        jq -e '[.missed[].detail | startswith("ccache'"'"'s manifest named its entry")] | all' <<<"$output"
}

@test "explain: what the cap evicted is evicted, when and by the cap trim, asked of cachekeeperd; with no earlier explained run" {
        write_config
        start_ready
        explain "$P/b1" -O1
        wait_for '[ "$(cache_field t stored_files_total)" = 4 ]'
        rm -rf "$XDG_CACHE_HOME"             # nothing kept: the daemon alone knows
        t0=$(date +%s)
        ctl trim t --to 1k > /dev/null
        t1=$(date +%s)
        explain "$P/b1" -O1
        [ "$(causes)" = "a.c=evicted c.c=evicted" ]
        jq -e --argjson t0 "$t0" --argjson t1 "$t1" '[.missed[] | .by == "cap" and .since >= $t0 and .since <= $t1] | all' <<<"$output"
        jq -e '[.missed[].detail | test("^evicted [0-9]+ s ago by the cap trim of t$")] | all' <<<"$output"
        jq -e '.causes[0].fix | startswith("a larger max_size for the cache: `cachectl status t`")' <<<"$output"
}

@test "explain: a FIFO put at a manifest's name (a shared cache's entries are anyone's) never blocks the explanation" {
        export CCACHE_DEPEND=1
        # The build stores a.c's manifest, then the manifest is swapped for a FIFO nobody writes.
        run --separate-stderr timeout 60 bash -c "cd '$P/b1' && '$CTL' measure --explain --json -- sh -c '
                ccache gcc -MD -I$P/inc -c $P/src/a.c -o a.o &&
                for m in \$(find \"$CCACHE_DIR\" -name \"*M\"); do rm \"\$m\" && mkfifo \"\$m\"; done'"
        [ "$status" -eq 0 ]
        [ -p "$(find "$CCACHE_DIR" -name '*M' | head -n 1)" ]
        jq -e '.calls.misses == 1 and .missed[0].cause == "first-build"' <<<"$output"
}
