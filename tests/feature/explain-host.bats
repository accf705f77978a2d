#!/usr/bin/env bats
# cachectl measure --explain on a project shaped like the GPU build host's
# (issue 31, item 7): C, C++ and HIP with Debian's clang-15 and ROCm through
# CMake's HIP language (README-hip.md), a .cu compiled as HIP, a version
# header configured into the build directory, generated headers and -I
# into it, .S files, sub-directories (tests/helpers/hostproj.py). One
# cache, one daemon and one project for the whole file; the tests are the
# issue's sequence, in order, each building on the state the one before
# left: cold; a second build directory; the fix by the environment; a
# third directory; entries evicted by the cap; a header change; a
# sloppiness change; depend mode; the host's full setup; then Unix
# Makefiles (a cwd per sub-directory), and the text of an eviction. Every
# step checks the cause of EVERY miss, the shape of each (cachectl(1), measure:
# the source absolute and normalised, its object), and the figures against
# ccache's own counters in the same cache. Depend mode switched on changes
# no key of an unchanged source (ccache 4.7.5 looks an entry up in direct
# mode first): that step hits, and its header change is what misses.
# tests/run: takes 170 s
load ../lib/helper

D=$(realpath "$BATS_FILE_TMPDIR")
P=$D/proj                      # the project; its build directories are $D/b1 ... $D/b5
# Fewer units than the generator's default (a few hundred): each step that
# misses everything recompiles them all, and the file walks nine steps.
HOSTPROJ_ARGS=${HOSTPROJ_ARGS:---c 48 --cxx 32 --hip 2 --cu 1 --asm 2 --parts 4}
# The host's sloppiness (its ccache.conf), and the same without locale.
HOST_SLOPPINESS=include_file_ctime,include_file_mtime,locale,pch_defines,time_macros
NO_LOCALE=include_file_ctime,include_file_mtime,pch_defines,time_macros
BIG=1G

ctl() {
        "$CTL" -s "$D/ck.sock" "$@"
}

look() {
        "$CTL_LOOK" -s "$D/ck.sock" status --json | jq -r ".caches[0]$1"
}

# conf MAX_SIZE: the daemon's config, one cache "t" at $CCACHE_DIR.
conf() {
        cat > "$D/ck.conf" <<EOF
socket = "$D/ck.sock";
state_dir = "$D/state";
caches = ( { name = "t"; path = "$CCACHE_DIR"; max_size = "$1"; } );
EOF
}

setup_file() {
        export CCACHE_DIR=$D/cache CCACHE_MAXSIZE=0
        export XDG_CACHE_HOME=$D/xdg          # measure --explain keeps its records there
        # A locale in the environment: ccache hashes it unless sloppiness has locale.
        export LANG=C.UTF-8
        unset LC_ALL LC_CTYPE LC_MESSAGES CCACHE_STATSLOG CCACHE_DEBUG CCACHE_DEBUGDIR CCACHE_BASEDIR \
                CCACHE_NOHASHDIR CCACHE_HASHDIR CCACHE_DEPEND CCACHE_NODEPEND CCACHE_CONFIGPATH
        export CCACHE_SLOPPINESS=$HOST_SLOPPINESS
        mkdir -m 1777 "$CCACHE_DIR"
        /usr/bin/python3 "$TOP/tests/helpers/hostproj.py" "$P" $HOSTPROJ_ARGS > "$D/proj.json"
        conf "$BIG"
        "$CKD" -c "$D/ck.conf" 2> "$D/daemon.log" 3>&- &
        export DAEMON_PID=$!
        wait_for "[ \"\$(\"\$CTL_LOOK\" -s '$D/ck.sock' status --json 2>/dev/null | jq -r .ready)\" = true ]" 20
        export BIG_BYTES
        BIG_BYTES=$(look .max_size_bytes)
}

teardown_file() {
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID"
                wait "$DAEMON_PID" 2>/dev/null || true
        fi
}

# configure DIR [CMAKE_ARGS...]: the project in DIR with Ninja, Debian's HIP
# (the toolchain file) and the host's three launchers.
configure() {
        local dir=$1
        shift
        cmake -S "$P" -B "$dir" -G "${GENERATOR:-Ninja}" -DCMAKE_TOOLCHAIN_FILE="$P/cmake/hip-debian.cmake" \
                -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
                -DCMAKE_HIP_COMPILER_LAUNCHER=ccache "$@" > "$dir.configure.log" 2>&1 || {
                tail -n 30 "$dir.configure.log"
                return 1
        }
}

# The sum of ccache's counters named (direct_cache_hit ...) in $CCACHE_DIR.
counter() {
        ccache --print-stats | awk -v names=" $* " 'index(names, " " $1 " ") { s += $2 } END { print s + 0 }'
}

# measured NAME [MEASURE_OPTIONS...] -- BUILD...: runs the build through
# measure --explain --json into $D/NAME.json, with the deltas of ccache's
# counters in the same cache over the run in $D/NAME.ccache ("hits
# misses") and measure's exit status in $D/NAME.rc. The steps build first
# and check after (checked NAME), so that a wrong verdict in one leaves the
# cache and the build directories as the next step expects them.
measured() {
        local name=$1 hits0 misses0 rc=0
        shift
        hits0=$(counter direct_cache_hit preprocessed_cache_hit)
        misses0=$(counter cache_miss)
        ctl measure --explain --json "$@" > "$D/$name.json" 2> "$D/$name.err" || rc=$?
        echo "$rc" > "$D/$name.rc"
        echo "$(($(counter direct_cache_hit preprocessed_cache_hit) - hits0)) $(($(counter cache_miss) - misses0))" \
                > "$D/$name.ccache"
}

# checked NAME: sets J to $D/NAME.json and checks what holds for every run:
# measure exited 0; the figures are ccache's own; one entry in missed[]
# per miss, each with a known cause (the list below), its source absolute,
# normalised and in the project, its object named (CMake's NAME.o of the
# source). Each check is tried and a failing one named, then it fails.
checked() {
        local name=$1 hits misses failed=""
        J=$D/$name.json
        read -r hits misses < "$D/$name.ccache"
        # What a failure shows: the figures, and the causes with a detail each.
        echo "== $name: ccache counted hits +$hits, misses +$misses; measure exited $(cat "$D/$name.rc")"
        jq -c '{calls: .calls | {hits, misses}, hit_rate, causes}' "$J" || { tail -n 20 "$D/$name.err"; return 1; }
        jq -c '[(.missed // [])[] | {cause, detail, by, since, source, object}] | group_by([.cause, .detail])[]
                | {n: length} + .[0]' "$J" | head -n 12
        [ "$(cat "$D/$name.rc")" -eq 0 ] || { tail -n 20 "$D/$name.err"; return 1; }
        jq -e --argjson h "$hits" --argjson m "$misses" '.calls.hits == $h and .calls.misses == $m' "$J" > /dev/null ||
                failed+=" figures-not-ccache's"
        jq -e '(.missed // [] | length) == .calls.misses' "$J" > /dev/null || failed+=" a-missed-entry-per-miss"
        jq -e '[(.missed // [])[].cause] - ["evicted", "config", "build-dir", "include-changed", "compiler", "argument",
                "source", "time-macro", "environment", "first-build", "unknown"] == []' "$J" > /dev/null ||
                failed+=" known-causes"
        # Sources: absolute, normalised (no "..", ".", "//"), the project's own files.
        jq -e --arg p "$P/" '[(.missed // [])[].source | select(type != "string" or (startswith($p) | not)
                or test("//|/\\.\\.?(/|$)"))] == []' "$J" > /dev/null || failed+=" sources-absolute-normalised"
        # Objects: named, normalised, CMake's SOURCE_NAME.o.
        jq -e '[(.missed // [])[] | select((.object | type) != "string" or (.object | test("//|(^|/)\\.\\.?(/|$)"))
                or (.object | split("/") | last) != ((.source | split("/") | last) + ".o"))] == []' "$J" > /dev/null ||
                failed+=" objects-named"
        [ -z "$failed" ] || { echo "$name failed:$failed"; return 1; }
}

# Every miss of $J has cause $1: every_miss build-dir.
every_miss() {
        jq -e --arg c "$1" '[(.missed // [])[] | select(.cause != $c)] == []' "$J" > /dev/null
}

# The number of compiles of a full build: C, C++ and HIP (not .S: CMake
# gives ASM no launcher).
compiles() {
        jq .compiles "$D/proj.json"
}

# The real paths of the project's sources that include header $1
# (hostlib/tuning.h), sorted, as a JSON array.
includers() {
        grep -rl --include='*.c' --include='*.cpp' --include='*.hip' --include='*.cu' "\"$1\"" "$P" |
                xargs realpath | sort | jq -R . | jq -sc .
}

@test "a. cold: every miss is first-build, the figures are ccache's" {
        configure "$D/b1"
        measured a -- cmake --build "$D/b1"
        checked a
        jq -e --argjson n "$(compiles)" '.calls.misses == $n and .calls.hits == 0' "$J"
        every_miss first-build
        # the HIP kernels, the .cu among them, went through ccache
        jq -e --argjson k "$(jq '.hip + .cu' "$D/proj.json")" \
                '[(.missed // [])[].source | select(endswith(".hip") or endswith(".cu"))] | length == $k' "$J"
}

@test "b. a second build directory: build-dir, naming the flag the path leaks through; the fix is base_dir = the common parent" {
        configure "$D/b2"
        # The text, on one sub-directory's target first; then the rest as JSON.
        ctl measure --explain -- cmake --build "$D/b2" --target part0 > "$D/b.txt" 2>&1 || true
        measured b -- cmake --build "$D/b2"
        cat "$D/b.txt"
        checked b
        # hash_dir hashes the cwd only with -g: what misses is what the path
        # reaches through -I, the headers generated into the build directory.
        [ "$(jq .calls.misses "$J")" -gt 0 ]
        every_miss build-dir
        # Each names how the path leaks: -I into the build directory, with b2's path.
        jq -e --arg b "$D/b2" '[(.missed // [])[] | select((.detail | contains("-I")) and (.detail | contains($b)))]
                | length == (input | .calls.misses)' "$J" "$J"
        jq -e --arg d "$D" '[.causes[] | select(.cause == "build-dir")][0].fix
                | contains("base_dir = \($d)") and contains("hash_dir = false")' "$J"
        # the text: the fix, and a line for a missed source that says why
        grep -qE "base_dir = $D( |$)" "$D/b.txt"
        grep -q "hash_dir = false" "$D/b.txt"
        grep -qE "$P/src/part0/[a-z0-9]+\.(c|cpp)[: ].*build-dir" "$D/b.txt"
}

@test "c. the fix applied through the environment: config (base_dir and hash_dir, old -> new), expected once" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1
        configure "$D/b3"
        ctl measure --explain -- cmake --build "$D/b3" --target part0 > "$D/c.txt" 2>&1 || true
        measured c -- cmake --build "$D/b3"
        cat "$D/c.txt"
        checked c
        [ "$(jq .calls.misses "$J")" -gt 0 ]
        every_miss config
        # base_dir, old -> new; hash_dir, if named, true -> false (without -g
        # it does not enter the key: naming it is no must)
        jq -e --arg d "$D" '[(.missed // [])[].detail | select(test("base_dir[^,;]*(->|→) *\"?" + $d) and
                ((test("hash_dir") | not) or test("hash_dir[ :=]*true *(->|→) *false")))]
                | length == (input | .calls.misses)' "$J" "$J"
        grep -q "expected once" "$D/c.txt"
}

@test "d. a third directory with the fix: >= 95 % hits, and --min-hit-rate 95 passes" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1
        configure "$D/b4"
        measured d --min-hit-rate 95 -- cmake --build "$D/b4"
        checked d
        jq -e --argjson n "$(compiles)" '.hit_rate >= 0.95 and .calls.hits + .calls.misses == $n' "$J"
}

# cap_trim SIZE: the daemon trims the cache to a cap of SIZE, as a reload
# with that cap makes it; the cap is put back ($BIG) once it has.
cap_trim() {
        local t0
        t0=$(date +%s)
        conf "$1"
        kill -HUP "$DAEMON_PID"
        wait_for "[ \"\$(look .last_trim.reason)\" = cap ] && [ \"\$(look .last_trim.at)\" -ge $t0 ] && [ \"\$(look .trim)\" = null ]" 30
        look .last_trim
        conf "$BIG"
        kill -HUP "$DAEMON_PID"
        wait_for "[ \"\$(look .max_size_bytes)\" = $BIG_BYTES ]" 10
}

@test "e. entries the cap evicted: every miss is evicted, by the cap, since this run" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1
        # A cap that keeps a fifth of the entries (the newest: b4's, which
        # are b3's) beside what is no entry (ccache's stats, its tmp/): the
        # older directories' entries go, and part of b4's. A cap trim goes
        # down to trim_to of the cap.
        t0=$(date +%s)
        cap_trim "$(look '| ((.size_bytes - .entry_bytes + .entry_bytes / 5) / .trim_to / 1000 | floor)')k"
        cmake --build "$D/b4" --target clean > /dev/null
        measured e -- cmake --build "$D/b4"
        t1=$(date +%s)
        checked e
        # part of the cache: some hit, some were evicted
        jq -e '.calls.misses > 0 and .calls.hits > 0' "$J"
        every_miss evicted
        # what the daemon says left, it says left by the cap trim, since this run
        jq -e --argjson t0 "$t0" --argjson t1 "$t1" '[(.missed // [])[] | select(.by != null) | select(.by != "cap"
                or (.since | type) != "number" or .since < $t0 or .since > $t1)] == []' "$J"
        # most through the daemon; any other on ccache's own evidence, saying so
        jq -e '[(.missed // [])[] | select(.by == "cap")] | length >= ((input | .calls.misses) * 0.9)' "$J" "$J"
        jq -e '[(.missed // [])[] | select(.by == null) | select(.detail | test("^(ccache.s manifest named its entry|the same inputs as the explained run)") | not)] == []' "$J"
}

@test "f. a header a subset includes changed: exactly its includers miss, include-changed naming it once" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1
        sed -i 's/HOSTLIB_TUNING 1$/HOSTLIB_TUNING 2/' "$P/include/hostlib/tuning.h"
        measured f -- cmake --build "$D/b4"
        checked f
        jq -e --argjson s "$(includers hostlib/tuning.h)" '([(.missed // [])[].source] | sort) == $s and .calls.hits == 0' "$J"
        every_miss include-changed
        h=$(realpath "$P/include/hostlib/tuning.h")
        jq -e --arg h "$h" '[(.missed // [])[] | select((.detail | split($h) | length) != 2)] == []' "$J"
}

@test "g. sloppiness without locale: config naming sloppiness old -> new, never an argument or the locale's value" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=$NO_LOCALE
        cmake --build "$D/b4" --target clean > /dev/null
        measured g -- cmake --build "$D/b4"
        # and back to the host's: the entries stored before hit again
        export CCACHE_SLOPPINESS=$HOST_SLOPPINESS
        cmake --build "$D/b4" --target clean > /dev/null
        measured g2 -- cmake --build "$D/b4"
        checked g
        jq -e --argjson n "$(compiles)" '.calls.misses == $n' "$J"
        every_miss config
        jq -e '[(.missed // [])[].detail | select(test("sloppiness") and test("locale") and (contains("C.UTF-8") | not))]
                | length == (input | .calls.misses)' "$J" "$J"
        checked g2
        jq -e '.hit_rate >= 0.95' "$J"
}

@test "h. depend mode switched on: the entries stored without it still serve; then a header change is include-changed, never a hash" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
        cmake --build "$D/b4" --target clean > /dev/null
        measured h -- cmake --build "$D/b4"
        sed -i 's/HOSTLIB_TUNING 2$/HOSTLIB_TUNING 3/' "$P/include/hostlib/tuning.h"
        measured h2 -- cmake --build "$D/b4"
        # ccache looks an entry up in direct mode before depend mode acts:
        # switched on, depend mode changes no key of an unchanged source
        # (ccache 4.7.5). A miss here would be the setting's, said as such.
        checked h
        jq -e '.hit_rate >= 0.95' "$J"
        every_miss config
        jq -e '[(.missed // [])[].detail | select(test("depend") and test("false *(->|→) *true"))]
                | length == (input | .calls.misses)' "$J" "$J"
        checked h2
        jq -e --argjson s "$(includers hostlib/tuning.h)" '([(.missed // [])[].source] | sort) == $s' "$J"
        every_miss include-changed
        h=$(realpath "$P/include/hostlib/tuning.h")
        jq -e --arg h "$h" '[(.missed // [])[] | select((.detail | split($h) | length) != 2
                or (.detail | split($h) | join(" ") | test("[0-9a-z]{24,}")))] == []' "$J"
}

@test "i. the host's full setup in a new directory after a warm one: >= 95 % hits; -g added is argument -g, never a directory" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_SLOPPINESS=$HOST_SLOPPINESS
        configure "$D/b5"
        measured i --min-hit-rate 95 -- cmake --build "$D/b5"
        cmake -DCMAKE_C_FLAGS=-g "$D/b5" > /dev/null
        measured i2 -- cmake --build "$D/b5"
        checked i
        jq -e '.hit_rate >= 0.95' "$J"
        checked i2
        c_units=$(find "$P/src" -name '*.c' | xargs realpath | sort | jq -R . | jq -sc .)
        jq -e --argjson s "$c_units" '([(.missed // [])[].source] | sort) == $s' "$J"
        every_miss argument
        jq -e --arg d "$D" '[(.missed // [])[].detail | select(test("(^|[^-A-Za-z0-9_])-g([^-A-Za-z0-9_=]|$)")
                and (contains($d) | not))] | length == (input | .calls.misses)' "$J" "$J"
}

@test "j. Unix Makefiles (each sub-directory compiled from its own directory): sources normalised from there; a second directory hits" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_SLOPPINESS=$HOST_SLOPPINESS
        GENERATOR="Unix Makefiles" configure "$D/m1"
        GENERATOR="Unix Makefiles" configure "$D/m2"
        # One C/C++ sub-directory and the kernels (HIP: no -MD under this
        # generator, so not in depend mode), not the whole project.
        measured j -- cmake --build "$D/m1" --target part1 kernels
        measured j2 -- cmake --build "$D/m2" --target part1 kernels
        checked j
        # Built before by Ninja, with other arguments: known, not first-build.
        # The kernels: ccache disables depend mode for a HIP rule without -MD.
        jq -e '.calls.misses > 0 and ([(.missed // [])[] | select(.source | endswith(".hip") or endswith(".cu") | not)
                | .cause] - ["argument", "build-dir"]) == []' "$J"
        jq -e '[(.missed // [])[] | select(.source | endswith(".hip") or endswith(".cu")) | select(.cause != "config" or
                (.detail | startswith("depend mode used -> not used (ccache disabled it for this compile: no -MD or -MMD)") | not))] == []' "$J"
        checked j2
        jq -e '.hit_rate >= 0.95' "$J"
}

@test "e, the text: a miss the cap evicted reads \"evicted ... ago by the cap trim\", one line per source" {
        export CCACHE_BASEDIR=$D CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_SLOPPINESS=$HOST_SLOPPINESS
        # Everything evicted by a cap of 1k: every compile of part0 misses on it.
        cap_trim 1k
        rm -f "$D"/b5/src/part0/CMakeFiles/part0.dir/*.o
        run ctl measure --explain -- cmake --build "$D/b5" --target part0
        [ "$status" -eq 0 ]
        echo "$output"
        grep -qE "evicted .*ago by the cap trim" <<<"$output"
        for f in "$P"/src/part0/*.c "$P"/src/part0/*.cpp; do
                grep -qE "$f[^a-z].*evicted" <<<"$output"
        done
}
