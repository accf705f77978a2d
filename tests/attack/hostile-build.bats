#!/usr/bin/env bats
# cachectl's build tools against a build tree nobody wrote (issue 32, items
# 3 and 4): `doctor` on a build.ninja that includes a 1 GiB sparse file four
# times, a FIFO and a device; `measure --explain` on a source whose #line
# directives name a FIFO, a device and more big files than its budget. Each
# finishes in seconds, says what it did not read, never opens a FIFO or a
# device (inotify sees every open but an O_PATH one), and shows the names
# harmlessly. root runs the tools; nobody wrote the tree.
# tests/run: takes 10 s
load ../lib/helper

setup() {
        require_root
        command -v inotifywait > /dev/null || skip "inotify-tools is not installed"
        open_test_dir
        T=$BATS_TEST_TMPDIR/tree
        mkdir -m 0777 "$T"
        # a device node only root can make, where nobody's links may point (as at /dev/watchdog)
        DEV=$BATS_TEST_TMPDIR/dev
        mkdir "$DEV"
        mknod "$DEV/tape" c 1 3         # /dev/null's numbers: harmless if it were opened
        # an OSC sequence (retitles a terminal shown raw), then CSI as a C1 control in UTF-8
        NAME=$(printf 'fifo\033]0;owned\007\302\23331m')
        # A cache directory of the test's own: doctor checks CCACHE_DIR, and
        # a fresh machine's root has no ~/.cache/ccache (a FAIL, exit 2).
        export CCACHE_DIR=$BATS_TEST_TMPDIR/ccache
        mkdir -m 0777 "$CCACHE_DIR"
}

teardown() {
        [ -z "${WATCH:-}" ] || kill "$WATCH" 2>/dev/null || true
}

# watch_opens DIR...: inotifywait logs every open in DIRs to $BATS_TEST_TMPDIR/opens.
watch_opens() {
        inotifywait -m -e open --format '%w%f' "$@" > "$BATS_TEST_TMPDIR/opens" 2> "$BATS_TEST_TMPDIR/watch.log" &
        WATCH=$!
        wait_for 'grep -q "Watches established" "$BATS_TEST_TMPDIR/watch.log"'
}

# opened_only_regular: after an open of a sentinel (the events before it
# are all in), no open of the FIFO or the device was seen.
opened_only_regular() {
        : > "$T/sentinel"
        cat "$T/sentinel"
        wait_for 'grep -q "sentinel$" "$BATS_TEST_TMPDIR/opens"'
        cat "$BATS_TEST_TMPDIR/opens"
        ! grep -q -e 'fifo' -e 'tape' "$BATS_TEST_TMPDIR/opens"
}

@test "doctor: a 1 GiB sparse file included four times stops at the read budget, said; a FIFO and a device (an include, .ninja_deps) are never opened" {
        as_nobody sh -c "
                cd '$T'
                printf 'CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\nCMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache\nCMAKE_GENERATOR:INTERNAL=Ninja\n' > CMakeCache.txt
                truncate -s 1G big.ninja
                mkfifo '$NAME'
                ln -s '$DEV/tape' tape.ninja
                ln -s '$DEV/tape' .ninja_deps
                {
                        echo 'rule CXX_COMPILER__t_'
                        echo '  command = ccache /usr/bin/c++ -MD -MF \$out.d -c \$in -o \$out'
                        echo 'build x.o: CXX_COMPILER__t_ x.cpp'
                        echo 'include $NAME'
                        echo 'include tape.ninja'
                        for i in 1 2 3 4; do echo 'include big.ninja'; done
                } > build.ninja"
        watch_opens "$T" "$DEV"
        run --separate-stderr timeout 60 "$CTL" doctor "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"WARN  read-budget      the read budget was reached (256 MiB, 100000 files in all): 1 file not read or read in part (first: big.ninja)"* ]]
        [[ "$output" == *"WARN  build-files      3 files the build names are not a regular file, not opened (first: fifo\\e]0;owned\\x07\\u009b31m)"* ]]
        [[ "$output" == *"ok    rules-CXX        1 of 1 CXX compile rules go through ccache"* ]]
        [[ "$output" != *$'\e'* && "$output" != *$'\a'* && "$output" != *$'\302\233'* ]]
        opened_only_regular
        # --json: the same, the name as JSON escapes it (C1 too, which json-c leaves raw)
        run --separate-stderr timeout 60 "$CTL" doctor --json "$T"
        [ "$status" -eq 1 ]
        [[ "$output" != *$'\e'* && "$output" != *$'\302\233'* && "$output" == *'\u009b31m'* ]]
        jq -e --arg n "$NAME" '.checks[] | select(.name == "build-files") | .message | endswith("(first: " + $n + ")")' <<<"$output"
}

@test "measure --explain: #line naming a FIFO, a device and more big files than the budget: finishes, says what it did not read, never opens the FIFO or the device" {
        export XDG_CACHE_HOME=$BATS_TEST_TMPDIR/xdg CCACHE_DIR=$BATS_TEST_TMPDIR/cache CCACHE_MAXSIZE=0
        export CCACHE_NODIRECT=1        # ccache hashes the text only: the files are the tool's to read
        unset CCACHE_STATSLOG CCACHE_DEBUG CCACHE_DEBUGDIR CCACHE_BASEDIR
        # 17 files of 63 MiB: each under the 64 MiB read whole, together over the 1 GiB budget
        as_nobody sh -c "
                cd '$T'
                mkfifo '$NAME'
                ln -s '$DEV/tape' tape.h
                {
                        for i in \$(seq 1 17); do
                                truncate -s 63M big\$i.h
                                printf '#line 1 \"$T/big%s.h\"\nint v%s;\n' \$i \$i
                        done
                        printf '#line 1 \"$T/$NAME\"\nint f;\n#line 1 \"$T/tape.h\"\nint t;\n'
                } > a.c"
        watch_opens "$T" "$DEV"
        run --separate-stderr timeout 120 "$CTL" measure --explain -- ccache gcc -c "$T/a.c" -o "$BATS_TEST_TMPDIR/a.o"
        echo "$output"
        echo "$stderr"
        [ "$status" -eq 0 ]
        [[ "$output" == *"The read budget was reached (1024 MiB, 200000 files in all): 1 file the build names not read, so nothing is claimed of them (first: $T/big17.h)."* ]]
        [[ "$output" == *"2 files the build names are not a regular file, never opened (first: $T/fifo\\e]0;owned\\x07\\u009b31m)."* ]]
        [[ "$output" != *$'\e'* && "$output" != *$'\a'* && "$output" != *$'\302\233'* ]]
        opened_only_regular
}
