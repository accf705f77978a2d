#!/usr/bin/env bats
# cachectl doctor (issue 22, items 3 and 4): a real CMake project (C and
# C++) configured by the real cmake for Ninja and for Unix Makefiles and
# built with Debian's gcc and ccache; a CMakeCache.txt naming a HIP compiler
# (HIP is not on this machine); the cache directory against a live daemon,
# and as nobody; compiler shims compiled through for real: a working one and
# broken ones, with the rollback; --json, exit codes, --help, completion.
# tests/run: takes 77 s
load ../lib/helper

setup() {
        command -v cmake > /dev/null && command -v ninja > /dev/null || skip "cmake and ninja-build are not installed"
        setup_compile_cache
        export CCACHE_DIR=$CACHE
        # root's compiles make what every user can write, as the daemon's
        # caches are meant to be (daemon/ccache/README.md §6)
        export CCACHE_UMASK=000
        SRC=$BATS_TEST_TMPDIR/src
        mkdir -p "$SRC/sub"
        cat > "$SRC/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(p C CXX)
add_library(a a.c)
add_executable(b use_ccache.cpp)
target_link_libraries(b a)
add_subdirectory(sub)
EOF
        echo 'add_library(s s.c)' > "$SRC/sub/CMakeLists.txt"
        echo 'int s(void) { return 1; }' > "$SRC/sub/s.c"
        echo 'int a(void) { return 2; }' > "$SRC/a.c"
        printf 'extern "C" int a(void);\nint main() { return a() - 2; }\n' > "$SRC/use_ccache.cpp"
}

teardown() {
        stop_daemon
}

# configure BUILD GENERATOR CMAKE_ARGS...: a fresh build directory, built.
configure() {
        local build=$1 gen=$2
        shift 2
        rm -rf "$build"
        cmake -S "$SRC" -B "$build" -G "$gen" "$@" > "$BATS_TEST_TMPDIR/cmake.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/cmake.log"; return 1; }
        cmake --build "$build" > "$BATS_TEST_TMPDIR/build.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/build.log"; return 1; }
}

# reconfigure BUILD CMAKE_ARGS...: cmake run again on a build directory
# configure made, with the settings given (what doctor's fixes say to do),
# and built: the compilers are not looked for again (some 2 s of CPU each).
reconfigure() {
        local build=$1
        shift
        [ -f "$build/CMakeCache.txt" ] || { echo "reconfigure: $build was not configured" >&2; return 1; }
        cmake "$@" "$build" > "$BATS_TEST_TMPDIR/cmake.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/cmake.log"; return 1; }
        cmake --build "$build" > "$BATS_TEST_TMPDIR/build.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/build.log"; return 1; }
}

# inert: stdin is UTF-8 with no control character but newlines (C0, DEL,
# C1): nothing a terminal would act on.
inert() {
        /usr/bin/python3 -c '
import re, sys
t = sys.stdin.buffer.read().decode("utf-8")
bad = re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f]", t)
sys.exit("control characters: %r" % bad if bad else 0)'
}

# level NAME: the level of check NAME in $output (doctor --json).
level() {
        jq -r --arg n "$1" '.checks[] | select(.name == $n) | .level' <<<"$output"
}

field() {
        jq -r --arg n "$1" ".checks[] | select(.name == \$n) | .$2" <<<"$output"
}

@test "doctor: C and C++ where C++ lacks a launcher names it, with the fix, for Ninja and for Makefiles; all launchers: ok" {
        start_ready
        for gen in Ninja "Unix Makefiles"; do
                b=$BATS_TEST_TMPDIR/build-${gen// /}
                configure "$b" "$gen" -DCMAKE_C_COMPILER_LAUNCHER=ccache

                run ctl doctor "$b"
                echo "$gen: $output"
                [ "$status" -eq 2 ]
                [[ "$output" == *"FAIL  launcher-CXX     CXX (CMAKE_CXX_COMPILER /usr/bin/c++) has no ccache launcher"* ]]
                [[ "$output" == *"fix: cmake -DCMAKE_CXX_COMPILER_LAUNCHER=ccache $b"* ]]
                [[ "$output" == *"FAIL  rules-CXX        1 of 1 CXX compile rules do not go through ccache (first: CMakeFiles/b.dir/use_ccache.cpp.o)"* ]]
                [[ "$output" == *"ok    launcher-C "* ]]
                [[ "$output" == *"ok    rules-C          2 of 2 C compile rules go through ccache"* ]]
                [[ "$output" == *"ok    cache-dir        CCACHE_DIR $CACHE is cache 't' of cachekeeperd"* ]]
                [[ "$output" == *"ok    cache-writable "* ]]
                [[ "$(tail -n 1 <<<"$output")" == "FAIL: "*" 2 failed" ]]
                # The host's "grep -c ccache build.make" counts the C++ target
                # (its source's name) although nothing of it goes through ccache.
                if [ "$gen" = "Unix Makefiles" ]; then
                        [ "$(grep -c ccache "$b/CMakeFiles/b.dir/build.make")" -gt 0 ]
                fi

                # the same from the build directory itself, as JSON
                run bash -c 'cd "$1" && shift && "$@" doctor --json' _ "$b" "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock"
                [ "$status" -eq 2 ]
                [ "$(jq -r .level <<<"$output")" = fail ]
                [ "$(level launcher-CXX)" = fail ]
                [ "$(field launcher-CXX fix)" = "cmake -DCMAKE_CXX_COMPILER_LAUNCHER=ccache $b" ]
                [ "$(level launcher-C)" = ok ]
                [ "$(field launcher-C fix)" = null ]
                [ "$(jq -r '[.checks[] | keys == ["fix", "level", "message", "name"]] | all' <<<"$output")" = true ]

                reconfigure "$b" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                run ctl doctor "$b"
                echo "$gen: $output"
                [ "$status" -eq 0 ]
                [[ "$output" == *"ok    rules-CXX        1 of 1 CXX compile rules go through ccache"* ]]
                [[ "$output" == *"ok    depend-CXX       "*" files per CXX object (of 1 built): light headers"* ]]
                [[ "$(tail -n 1 <<<"$output")" == "ok: "*" 0 warnings, 0 failed" ]]
        done
        # a relative socket path still reaches the daemon from inside the build directory
        run bash -c 'cd "$1" && "$2" -s ck.sock doctor --json "$3"' _ "$BATS_TEST_TMPDIR" "$CTL" "$b"
        [ "$status" -eq 0 ]
        [ "$(level cache-dir)" = ok ]
}

@test "doctor: a compiler that is a ccache link counts as through ccache; a launcher the project sets in CMakeLists.txt too" {
        start_ready
        b=$BATS_TEST_TMPDIR/build
        configure "$b" Ninja -DCMAKE_C_COMPILER=/usr/lib/ccache/gcc -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(field launcher-C message)" = "CMAKE_C_COMPILER /usr/lib/ccache/gcc is a ccache shim" ]
        [ "$(field rules-C message)" = "2 of 2 C compile rules go through ccache" ]

        sed -i '2a set(CMAKE_C_COMPILER_LAUNCHER ccache)' "$SRC/CMakeLists.txt"
        configure "$b" "Unix Makefiles" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$(field launcher-C message)" == "no CMAKE_C_COMPILER_LAUNCHER in the cache, but the project sets one"* ]]
}

@test "doctor: a CMakeCache.txt naming a HIP compiler without a launcher fails the HIP checks with the fix" {
        start_ready
        b=$BATS_TEST_TMPDIR/hip
        mkdir -p "$b"
        # The lines of a real ROCm build's cache; HIP itself is not on this machine.
        cat > "$b/CMakeCache.txt" <<'EOF'
# This is the CMakeCache file.
//CXX compiler
CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++
CMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache
//HIP compiler
CMAKE_HIP_COMPILER:FILEPATH=/opt/rocm/llvm/bin/clang++
CMAKE_HIP_COMPILER_AR:FILEPATH=/opt/rocm/llvm/bin/llvm-ar
CMAKE_HIP_FLAGS:STRING=
CMAKE_Fortran_COMPILER:FILEPATH=/usr/bin/gfortran
CMAKE_CUDA_COMPILER:FILEPATH=CMAKE_CUDA_COMPILER-NOTFOUND
CMAKE_GENERATOR:INTERNAL=Ninja
EOF
        cat > "$b/build.ninja" <<'EOF'
rule CXX_COMPILER__k_Release
  command = ccache /usr/bin/c++ $DEFINES $FLAGS -MD -MT $out -MF $DEP_FILE -o $out -c $in
rule HIP_COMPILER__k_Release
  command = /opt/rocm/llvm/bin/clang++ $DEFINES $FLAGS -MD -MT $out -MF $DEP_FILE -o $out -x hip -c $in
build CMakeFiles/k.dir/host.cpp.o: CXX_COMPILER__k_Release /src/host.cpp || cmake_object_order_depends_target_k
  FLAGS = -O3
build CMakeFiles/k.dir/kernel.cu.o: HIP_COMPILER__k_Release /src/kernel.cu || cmake_object_order_depends_target_k
build CMakeFiles/k.dir/gemm.cu.o: HIP_COMPILER__k_Release /src/gemm.cu
EOF
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level launcher-HIP)" = fail ]
        [ "$(field launcher-HIP fix)" = "cmake -DCMAKE_HIP_COMPILER_LAUNCHER=ccache $b" ]
        [ "$(level rules-HIP)" = fail ]
        [ "$(field rules-HIP message)" = "2 of 2 HIP compile rules do not go through ccache (first: CMakeFiles/k.dir/kernel.cu.o)" ]
        [ "$(field rules-CXX message)" = "1 of 1 CXX compile rules go through ccache" ]
        [ "$(level launcher-CXX)" = ok ]
        # Fortran is not ccache's, an unfound CUDA not enabled
        [ -z "$(level launcher-Fortran)" ]
        [ -z "$(level launcher-CUDA)" ]

        # with the launcher (newer CMake sets it per edge as $LAUNCHER): ok
        sed -i 's|^CMAKE_HIP_FLAGS|CMAKE_HIP_COMPILER_LAUNCHER:STRING=ccache\n&|' "$b/CMakeCache.txt"
        sed -i 's|command = /opt/rocm/llvm/bin/clang++|command = $LAUNCHER$CODE_CHECK/opt/rocm/llvm/bin/clang++|' "$b/build.ninja"
        sed -i -E 's#^build CMakeFiles/k.dir/(kernel|gemm).*#&\n  LAUNCHER = ccache #' "$b/build.ninja"
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(field rules-HIP message)" = "2 of 2 HIP compile rules go through ccache" ]
        [ "$(level launcher-HIP)" = ok ]
}

@test "doctor: the cache directory: not kept by the daemon, set by the launcher, not writable by nobody, daemon down" {
        start_ready
        b=$BATS_TEST_TMPDIR/build
        configure "$b" Ninja -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

        # a CCACHE_DIR the daemon does not keep
        mkdir -m 0777 "$BATS_TEST_TMPDIR/other"
        run env CCACHE_DIR="$BATS_TEST_TMPDIR/other" "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level cache-dir)" = fail ]
        [ "$(field cache-dir message)" = "CCACHE_DIR $BATS_TEST_TMPDIR/other is not a cache cachekeeperd keeps (it keeps $CACHE)" ]
        [ "$(field cache-dir fix)" = "export CCACHE_DIR=$CACHE" ]
        [ "$(level cache-writable)" = ok ]

        # the launcher's CCACHE_DIR= wins over the environment's
        reconfigure "$b" "-DCMAKE_C_COMPILER_LAUNCHER=env;CCACHE_DIR=$CACHE;ccache" \
                "-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_DIR=$CACHE;ccache"
        run env CCACHE_DIR="$BATS_TEST_TMPDIR/other" "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(level cache-dir)" = ok ]
        [ "$(level rules-C)" = ok ]
        [ "$(field launcher-C message)" = "CMAKE_C_COMPILER_LAUNCHER is ccache (env;CCACHE_DIR=$CACHE;ccache)" ]

        # as nobody: the cache, which root's builds (umask 000) left writable
        reconfigure "$b" -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
        ctl_copy=$(world_copy "$CTL")
        chmod -R a+rX "$b"
        run as_nobody "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(level cache-dir)" = ok ]
        [ "$(level cache-writable)" = ok ]

        # the daemon down: that check warns, nothing crashes
        stop_daemon
        run --separate-stderr ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 1 ]
        [ -z "$stderr" ]                        # said once, in the check
        [ "$(level cache-dir)" = warn ]
        [[ "$(field cache-dir message)" == "CCACHE_DIR $CACHE: could not ask cachekeeperd whether it keeps it (cachekeeperd at $BATS_TEST_TMPDIR/ck.sock cannot be reached"* ]]
        [ "$(level cache-writable)" = ok ]

        # directories root made 0755 (a root container with umask 022; the
        # daemon, which would repair them, is stopped): nobody cannot write them
        mkdir -p "$CACHE/3/a"
        chmod 0755 "$CACHE/3" "$CACHE/3/a"
        run --separate-stderr as_nobody "$ctl_copy" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level cache-writable)" = fail ]
        [[ "$(field cache-writable message)" == "you cannot write 2 of "*" directories of $CACHE (first: $CACHE/3): every miss fails or stores nothing" ]]
        [ "$(field cache-writable fix)" = "sudo chmod -R a+rwX $CACHE" ]
        # root can
        run --separate-stderr ctl doctor --json "$b"
        [ "$(level cache-writable)" = ok ]
}

@test "doctor: depend mode is suggested for heavy headers (200 files or more per object), not for light ones, ok when on" {
        mkdir -p "$SRC/heavy"
        for i in $(seq 1 240); do echo "int h$i(void);" > "$SRC/heavy/h$i.h"; done
        { for i in $(seq 1 240); do echo "#include \"heavy/h$i.h\""; done; echo 'int a(void) { return 2; }'; } > "$SRC/a.c"
        { for i in $(seq 1 240); do echo "#include \"../heavy/h$i.h\""; done; echo 'int s(void) { return 1; }'; } > "$SRC/sub/s.c"
        start_ready
        for gen in Ninja "Unix Makefiles"; do
                b=$BATS_TEST_TMPDIR/build-${gen// /}
                configure "$b" "$gen" -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                run ctl doctor --json "$b"
                echo "$gen: $output"
                [ "$status" -eq 1 ]
                [ "$(level depend-C)" = warn ]
                # a.c and s.c: each itself, 240 headers and stdc-predef.h
                [[ "$(field depend-C message)" == "242 files per C object (of 2 built, 200 or more is heavy): "* ]]
                [ "$(field depend-C fix)" = "cmake -DCMAKE_C_COMPILER_LAUNCHER=\"env;CCACHE_DEPEND=true;ccache\" $b" ]
                [ "$(level depend-CXX)" = ok ]

                reconfigure "$b" "-DCMAKE_C_COMPILER_LAUNCHER=env;CCACHE_DEPEND=true;ccache"
                run ctl doctor --json "$b"
                echo "$gen: $output"
                [ "$status" -eq 0 ]
                [[ "$(field depend-C message)" == "depend mode is on"* ]]
        done
}

# shim NAME BODY: a shim script NAME in $SHIMS whose body is BODY, and
# NAME.real beside it, the "real compiler" it replaced (gcc underneath).
shim() {
        SHIMS=$BATS_TEST_TMPDIR/shims
        mkdir -p "$SHIMS"
        printf '#!/bin/sh\nexec gcc "$@"\n' > "$SHIMS/$1.real"
        printf '#!/bin/sh\n%s\n' "$2" > "$SHIMS/$1"
        chmod 0755 "$SHIMS/$1" "$SHIMS/$1.real"
}

# "hits misses" of cache dir $1 as ccache itself counts them.
ccache_calls() {
        CCACHE_DIR=$1 ccache --print-stats |
                awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
                     $1 == "cache_miss" { m += $2 } END { printf "%d %d\n", h, m }'
}

@test "doctor --compiler: a working shim passes (a store, then a hit); the counters are only added to" {
        # the .real here is a script: ccache should know it by its text
        export CCACHE_COMPILERCHECK=content
        shim hipcc "exec ccache $BATS_TEST_TMPDIR/shims/hipcc.real \"\$@\""
        compile "$CACHE" 3
        compile "$CACHE" 3
        before=$(ccache_calls "$CACHE")
        [ "$before" = "3 3" ]
        run "$CTL" doctor --compiler "$SHIMS/hipcc" -- -O2
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"ok    shim             $SHIMS/hipcc execs ccache with the real compiler $SHIMS/hipcc.real"* ]]
        [[ "$output" == *"ok    real-compiler    $SHIMS/hipcc.real runs: "* ]]
        [[ "$output" == *"ok    first-call       the first compile went through ccache: a miss, stored"* ]]
        [[ "$output" == *"ok    second-call      the second compile was a direct hit"* ]]
        [[ "$output" == *"ok    objects          both objects are "*" bytes"* ]]
        [ "$(ccache_calls "$CACHE")" = "4 4" ]
        # unique per run: the next run's first call is a miss again
        mkdir "$BATS_TEST_TMPDIR/tmp"
        run env TMPDIR="$BATS_TEST_TMPDIR/tmp" "$CTL" doctor --json --compiler "$SHIMS/hipcc"
        [ "$status" -eq 0 ]
        [ "$(jq -r '[.checks[].name] | join(" ")' <<<"$output")" = "shim real-compiler compiler-check first-call second-call objects" ]
        [ "$(jq -r .level <<<"$output")" = ok ]
        [ "$(ccache_calls "$CACHE")" = "5 5" ]
        # its private directory was there, and is gone
        [ -z "$(ls -A "$BATS_TEST_TMPDIR/tmp")" ]

        # the shim named relatively, and a shim naming its compiler by a bare name
        run bash -c 'cd "$1" && "$2" doctor --compiler ./hipcc' _ "$SHIMS" "$CTL"
        [ "$status" -eq 0 ]
        [[ "$output" == *"ok    shim             $SHIMS/hipcc execs ccache with the real compiler $SHIMS/hipcc.real"* ]]
        shim cc 'exec ccache gcc "$@"'
        run "$CTL" doctor --compiler "$SHIMS/cc"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"ok    real-compiler    /usr/bin/gcc runs: "* ]]

        # a link to ccache, found through PATH, as /usr/lib/ccache has them
        run "$CTL" doctor --compiler gcc
        [ "$status" -eq 2 ]
        run env PATH="/usr/lib/ccache:$PATH" "$CTL" doctor --compiler gcc
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"/usr/lib/ccache/gcc is a link to ccache with the real compiler /usr/bin/gcc"* ]]
        # recache set in the environment: the cache was not asked, nothing is called a hit
        run env CCACHE_RECACHE=1 PATH="/usr/lib/ccache:$PATH" "$CTL" doctor --compiler gcc
        [ "$status" -eq 2 ]
        [[ "$output" == *"ccache recached the compile: the cache was not asked"* ]]
}

@test "doctor --compiler: broken shims fail, say what broke and print the rollback" {
        # the real compiler behind it is broken
        shim hipcc "exec ccache $BATS_TEST_TMPDIR/shims/hipcc.real \"\$@\""
        printf '#!/bin/sh\necho "hipcc.real: cannot load libamdhip64.so" >&2\nexit 1\n' > "$SHIMS/hipcc.real"
        run bash -c 'cd "$1" && "$2" doctor --compiler ./hipcc' _ "$SHIMS" "$CTL"
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$output" == *"FAIL  real-compiler    the real compiler $SHIMS/hipcc.real does not run (exit 1): hipcc.real: cannot load libamdhip64.so"* ]]
        [[ "$output" == *"fix: mv $SHIMS/hipcc.real $SHIMS/hipcc"* ]]
        [[ "$output" == *"FAIL  first-call       compiling through $SHIMS/hipcc failed (exit 1)"* ]]

        # the real compiler is gone: no mv of what is not there
        rm "$SHIMS/hipcc.real"
        run "$CTL" doctor --json --compiler "$SHIMS/hipcc"
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$(field real-compiler message)" == "the real compiler $SHIMS/hipcc.real does not run (No such file or directory)" ]]
        [[ "$(field real-compiler fix)" == "rm $SHIMS/hipcc (the shim; then reinstall or restore the compiler it replaced)" ]]

        # ccache disabled in the shim: nothing in the statistics log
        shim cc "exec env CCACHE_DISABLE=1 ccache $BATS_TEST_TMPDIR/shims/cc.real \"\$@\""
        run "$CTL" doctor --json --compiler "$SHIMS/cc"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level first-call)" = fail ]
        [[ "$(field first-call message)" == "the compile did not go through ccache: nothing in its statistics log"* ]]
        [ "$(field first-call fix)" = "mv $SHIMS/cc.real $SHIMS/cc" ]

        # a shim that changes what ccache hashes on every call: never a hit
        shim c++ "exec ccache $BATS_TEST_TMPDIR/shims/c++.real -frandom-seed=\$\$ \"\$@\""
        run "$CTL" doctor --json --compiler "$SHIMS/c++"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level first-call)" = ok ]
        [ "$(level second-call)" = fail ]
        [[ "$(field second-call message)" == "the second compile of the same source was a miss: "* ]]
        [ "$(field second-call fix)" = "mv $SHIMS/c++.real $SHIMS/c++" ]

        # not a shim at all: a warning and a failure, and no rollback for a real compiler
        run "$CTL" doctor --json --compiler /usr/bin/gcc
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level shim)" = warn ]
        [ "$(field first-call fix)" = null ]
        run "$CTL" doctor --compiler "$BATS_TEST_TMPDIR/nothing-here"
        [ "$status" -eq 2 ]
        [[ "$output" == *"FAIL  shim             $BATS_TEST_TMPDIR/nothing-here: No such file or directory"* ]]
}

@test "doctor: ASM rules are counted and said to have no launcher, with a fix that works; without -MD depend mode cannot serve them" {
        # CMake has no ASM launcher: CMAKE_ASM_COMPILER_LAUNCHER is ignored
        printf 'cmake_minimum_required(VERSION 3.16)\nproject(p C ASM)\nadd_library(a a.c f.S g.S)\n' > "$SRC/CMakeLists.txt"
        printf '#define F f\n.globl F\nF:\n ret\n' > "$SRC/f.S"
        printf '.globl g\ng:\n ret\n' > "$SRC/g.S"
        start_ready
        b=$BATS_TEST_TMPDIR/build
        configure "$b" Ninja -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_ASM_COMPILER_LAUNCHER=ccache
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(level rules-ASM)" = warn ]
        [[ "$(field rules-ASM message)" == "2 of 2 ASM rules have no launcher: CMake has no CMAKE_ASM_COMPILER_LAUNCHER "*"so they compile without ccache (first: CMakeFiles/a.dir/"?".S.o)" ]]
        [ "$(field rules-C message)" = "1 of 1 C compile rules go through ccache" ]
        [ -z "$(level launcher-ASM)" ]
        # the fix, as printed, puts ccache before every rule, once
        fix=$(field rules-ASM fix)
        (cd "$b" && bash -c "$fix") > "$BATS_TEST_TMPDIR/fix.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/fix.log"; return 1; }
        for round in 1 2; do
                rm -f "$b"/CMakeFiles/a.dir/*.o "$BATS_TEST_TMPDIR/stats.log"
                CCACHE_STATSLOG=$BATS_TEST_TMPDIR/stats.log cmake --build "$b" > "$BATS_TEST_TMPDIR/build.log" 2>&1
                [ "$(grep -c '^# ' "$BATS_TEST_TMPDIR/stats.log")" -eq 3 ]      # a.c, f.S, g.S: once each
        done
        [ "$(grep -c '^direct_cache_hit' "$BATS_TEST_TMPDIR/stats.log")" -eq 3 ]
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(field rules-ASM message)" = "2 of 2 ASM compile rules go through ccache" ]

        # the Makefile generator gives ASM no -MD: with depend mode on, said, with a fix that works
        cp "$b/ccache-launch.cmake" "$BATS_TEST_TMPDIR/launch.cmake"
        configure "$b" "Unix Makefiles" -DCMAKE_C_COMPILER_LAUNCHER=ccache "-DCMAKE_PROJECT_INCLUDE=$BATS_TEST_TMPDIR/launch.cmake"
        run env CCACHE_DEPEND=1 "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$status" -ge 1 ]
        [ "$(level depend-ASM)" = warn ]
        [[ "$(field depend-ASM message)" == "depend mode is on, but 2 of 2 ASM rules compile without -MD (CMake's Makefile generator passes none): depend mode cannot serve them"* ]]
        fix=$(field depend-ASM fix)
        [[ "$fix" == "cmake -DCMAKE_ASM_DEPENDS_USE_COMPILER=TRUE -DCMAKE_ASM_DEPFILE_FORMAT=gcc $b ("* ]]
        reconfigure "$b" -DCMAKE_ASM_DEPENDS_USE_COMPILER=TRUE -DCMAKE_ASM_DEPFILE_FORMAT=gcc
        run env CCACHE_DEPEND=1 "$CTL" -s "$BATS_TEST_TMPDIR/ck.sock" doctor --json "$b"
        echo "$output"
        [ "$(level depend-ASM)" != warn ]
        grep -q -- '-MD .*f.S' "$b/CMakeFiles/a.dir/build.make"
}

# hip_project BUILD GENERATOR CMAKE_ARGS...: a CMake project in HIP and C++,
# configured (not built) with Debian's HIP: CMake 3.25's HIP language wants
# clang++-15 as the HIP compiler, a ROCm root whose lib/cmake is Debian's
# cmake directory (for amd_comgr and hip-lang), the arch, ROCm's paths in
# the HIP flags and CMAKE_PREFIX_PATH in the environment.
hip_project() {
        local b=$1 gen=$2
        shift 2
        command -v hipcc > /dev/null && [ -x /usr/bin/clang++-15 ] || skip "Debian's hipcc and clang-15 are not installed"
        mkdir -p "$BATS_TEST_TMPDIR/rocm/lib"
        ln -sfn /usr/lib/x86_64-linux-gnu/cmake "$BATS_TEST_TMPDIR/rocm/lib/cmake"
        printf 'cmake_minimum_required(VERSION 3.21)\nproject(p CXX HIP)\nadd_library(k k.hip)\n' > "$SRC/CMakeLists.txt"
        printf '#include <hip/hip_runtime.h>\n__global__ void k(float *x) { x[threadIdx.x] *= 2; }\n' > "$SRC/k.hip"
        CMAKE_PREFIX_PATH=/usr/lib/x86_64-linux-gnu/cmake cmake -S "$SRC" -B "$b" -G "$gen" \
                -DCMAKE_HIP_COMPILER=/usr/bin/clang++-15 -DCMAKE_HIP_ARCHITECTURES=gfx90a \
                "-DCMAKE_HIP_COMPILER_ROCM_ROOT=$BATS_TEST_TMPDIR/rocm" \
                "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode" \
                "$@" > "$BATS_TEST_TMPDIR/cmake.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/cmake.log"; return 1; }
}

@test "doctor: a HIP rule without -MD (the Makefile generator) is one depend mode cannot serve, said with the fix that gives it -MD" {
        start_ready
        b=$BATS_TEST_TMPDIR/hip
        hip_project "$b" "Unix Makefiles" "-DCMAKE_HIP_COMPILER_LAUNCHER=env;CCACHE_DEPEND=1;ccache" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(field rules-HIP message)" = "1 of 1 HIP compile rules go through ccache" ]
        [ "$(level depend-HIP)" = warn ]
        [[ "$(field depend-HIP message)" == "depend mode is on, but 1 of 1 HIP rules compile without -MD (CMake's Makefile generator passes none): depend mode cannot serve them (ccache says \"Disabling depend mode\""* ]]
        [[ "$(field depend-HIP fix)" == "cmake -DCMAKE_HIP_DEPENDS_USE_COMPILER=TRUE -DCMAKE_HIP_DEPFILE_FORMAT=gcc $b ("*"or the Ninja generator" ]]

        # the fix, then one real compile: ccache takes the result key from the dependency file
        CMAKE_PREFIX_PATH=/usr/lib/x86_64-linux-gnu/cmake cmake -DCMAKE_HIP_DEPENDS_USE_COMPILER=TRUE \
                -DCMAKE_HIP_DEPFILE_FORMAT=gcc "$b" > "$BATS_TEST_TMPDIR/cmake.log" 2>&1
        CCACHE_LOGFILE=$BATS_TEST_TMPDIR/ccache.log cmake --build "$b" --target k > "$BATS_TEST_TMPDIR/build.log" 2>&1 ||
                { cat "$BATS_TEST_TMPDIR/build.log"; return 1; }
        grep -q "Got result key from dependency file" "$BATS_TEST_TMPDIR/ccache.log"
        ! grep -q "Disabling depend mode" "$BATS_TEST_TMPDIR/ccache.log"
        run ctl doctor --json "$b"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$(field depend-HIP message)" == "depend mode is on ("*" files per HIP object)" ]]
}

@test "doctor --compiler: the shims people write (NAME=V exec ccache, exec env -u ... ccache, the real one in a variable), --source, version lines past a traceback, script compilers" {
        # a prefix assignment: recognised, and what it sets is what ccache is asked about
        shim cc "CCACHE_COMPILERCHECK=content exec ccache $BATS_TEST_TMPDIR/shims/cc.real \"\$@\""
        run "$CTL" doctor --json --compiler "$SHIMS/cc"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(field shim message)" = "$SHIMS/cc execs ccache with the real compiler $SHIMS/cc.real" ]
        [ "$(field compiler-check message)" = "$SHIMS/cc.real is a sh script; ccache identifies it by compiler_check = content (the script's own text only)" ]

        # exec env with an option taking a word; compiler_check left at mtime: warned, with the fix
        shim c2 "exec env -u HOME CCACHE_DEPEND=1 ccache $BATS_TEST_TMPDIR/shims/c2.real \"\$@\""
        run "$CTL" doctor --json --compiler "$SHIMS/c2"
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(level shim)" = ok ]
        [ "$(level compiler-check)" = warn ]
        [[ "$(field compiler-check message)" == "$SHIMS/c2.real is a sh script and compiler_check is mtime: ccache knows the compiler only by the script's mtime"* ]]
        [[ "$(field compiler-check fix)" == "in the shim, before ccache: CCACHE_COMPILERCHECK=string:VERSION"*"content covers the script's own text only" ]]
        [ "$(level second-call)" = ok ]

        # the real compiler named by a variable, and failing: the rollback is still mv NAME.real NAME
        shim c3 'REAL=$0.real; exec ccache "$REAL" -no-such-flag "$@"'
        run "$CTL" doctor --json --compiler "$SHIMS/c3"
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level first-call)" = fail ]
        [ "$(field first-call fix)" = "mv $SHIMS/c3.real $SHIMS/c3" ]

        # a real compiler printing a traceback before its version: the version line shown
        shim c4 "exec ccache $BATS_TEST_TMPDIR/shims/c4.real \"\$@\""
        printf '#!/bin/sh\n[ "$1" = --version ] && printf "Traceback (most recent call last):\\n  File \\"x\\", line 1, in <module>\\nFileNotFoundError: /sys/class/kfd\\nFake compiler version 7.1\\n" && exit 0\nexec gcc "$@"\n' > "$SHIMS/c4.real"
        run env CCACHE_COMPILERCHECK=content "$CTL" doctor --json --compiler "$SHIMS/c4"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(field real-compiler message)" = "$SHIMS/c4.real runs: Fake compiler version 7.1" ]

        # --source: the user's file; cached before is fine
        printf 'int mine(void) { return 7; }\n' > "$BATS_TEST_TMPDIR/mine.c"
        run env CCACHE_COMPILERCHECK=content "$CTL" doctor --json --compiler "$SHIMS/c4" --source "$BATS_TEST_TMPDIR/mine.c"
        [ "$status" -eq 0 ]
        run env CCACHE_COMPILERCHECK=content "$CTL" doctor --json --compiler "$SHIMS/c4" --source "$BATS_TEST_TMPDIR/mine.c"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$(field first-call message)" == "the first compile of $BATS_TEST_TMPDIR/mine.c was a hit (not from remote): cached before" ]]
        run "$CTL" doctor --compiler "$SHIMS/c4" --source "$BATS_TEST_TMPDIR/none.c"
        [ "$status" -eq 3 ]
}

@test "doctor --compiler: Debian's hipcc behind a shim in /usr/bin (an overlay): a gfx90a kernel through it, its version, its mtime; a failing one rolls back" {
        command -v hipcc > /dev/null || skip "Debian's hipcc is not installed"
        sum=$(sha256sum /usr/bin/hipcc)
        u=$BATS_TEST_TMPDIR/upper
        mkdir -p "$u" "$BATS_TEST_TMPDIR/work"
        cp -p /usr/bin/hipcc "$u/hipcc.real"            # finds hipcc.pl and ROCm beside itself
        printf '#!/bin/sh\nCCACHE_DEPEND=1 exec ccache /usr/bin/hipcc.real "$@"\n' > "$u/hipcc"
        chmod 0755 "$u/hipcc"
        # in a private mount namespace: the real /usr/bin is never touched
        overlay() {
                unshare -m --propagation private sh -c 'mount -t overlay overlay -o "lowerdir=/usr/bin,upperdir=$1,workdir=$2" /usr/bin && shift 2 && exec "$@"' \
                        _ "$u" "$BATS_TEST_TMPDIR/work" "$@"
        }
        run overlay "$CTL" doctor --json --compiler hipcc -- --offload-arch=gfx90a
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(field shim message)" = "/usr/bin/hipcc execs ccache with the real compiler /usr/bin/hipcc.real" ]
        [[ "$(field real-compiler message)" == "/usr/bin/hipcc.real runs: HIP version: "* ]]
        [[ "$output" != *Traceback* ]]
        [ "$(level compiler-check)" = warn ]
        [[ "$(field compiler-check message)" == "/usr/bin/hipcc.real is a perl script and compiler_check is mtime: "* ]]
        [ "$(field first-call message)" = "the first compile of a gfx90a HIP kernel went through ccache: a miss, stored" ]
        [ "$(field second-call message)" = "the second compile was a direct hit" ]
        [[ "$(field objects message)" == "both objects are "*" bytes, with gfx90a device code (.hip_fatbin)" ]]
        [ "$(jq -r .level <<<"$output")" = warn ]

        # a failing shim (exec env form): the rollback puts hipcc.real back
        printf '#!/bin/sh\nexec env CCACHE_COMPILERCHECK=content ccache /usr/bin/hipcc.real --no-such-option "$@"\n' > "$u/hipcc"
        run overlay "$CTL" doctor --json --compiler hipcc -- --offload-arch=gfx90a
        echo "$output"
        [ "$status" -eq 2 ]
        [ "$(level shim)" = ok ]
        [ "$(level compiler-check)" = ok ]
        [ "$(level first-call)" = fail ]
        [ "$(field first-call fix)" = "mv /usr/bin/hipcc.real /usr/bin/hipcc" ]
        [ "$(sha256sum /usr/bin/hipcc)" = "$sum" ]
        [ ! -e /usr/bin/hipcc.real ]
}

@test "doctor: usage, could not check (exit 3), --help, completion" {
        run "$CTL" doctor "$BATS_TEST_TMPDIR"
        [ "$status" -eq 3 ]
        [[ "$output" == *"$BATS_TEST_TMPDIR/CMakeCache.txt: No such file or directory (not a CMake build directory?)"* ]]
        run "$CTL" doctor "$BATS_TEST_TMPDIR/none"
        [ "$status" -eq 3 ]
        mkdir "$BATS_TEST_TMPDIR/f" && mkfifo "$BATS_TEST_TMPDIR/f/CMakeCache.txt"
        run timeout 20 "$CTL" doctor "$BATS_TEST_TMPDIR/f"
        [ "$status" -eq 3 ]
        [[ "$output" == *"CMakeCache.txt: not a regular file"* ]]
        run "$CTL" doctor a b
        [ "$status" -eq 2 ]
        run "$CTL" doctor --compiler gcc "$BATS_TEST_TMPDIR"
        [ "$status" -eq 2 ]
        run "$CTL" doctor "$BATS_TEST_TMPDIR" -- -O2
        [ "$status" -eq 2 ]
        run "$CTL" doctor --nope
        [ "$status" -eq 2 ]
        run "$CTL" doctor --help
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "Usage: cachectl [-s SOCKET] doctor [BUILD_DIR] [--json]" ]
        [ "${lines[1]}" = "       cachectl [-s SOCKET] doctor --compiler PATH [--source FILE] [--json]" ]
        [ "${lines[2]}" = "                                   [-- ARGS...]" ]
        run "$CTL" doctor --source x.c
        [ "$status" -eq 2 ]
        [[ "$output" == *"--compiler PATH"* ]]
        run "$CTL" --help
        [[ "$output" == *"  doctor [BUILD_DIR] [--json]"* ]]
        [ "$("$CTL" __complete options doctor | tr '\n' ' ')" = "--json --compiler= --source= --help " ]
        "$CTL" __complete commands | grep -qx doctor
}

@test "doctor: completion offers its options, directories for BUILD_DIR, files for --compiler" {
        [ -r /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed"
        mkdir -p "$BATS_TEST_TMPDIR/c/build-a" && touch "$BATS_TEST_TMPDIR/c/build-file" "$BATS_TEST_TMPDIR/c/hipcc"
        comp() {
                (cd "$BATS_TEST_TMPDIR/c" && bash -c 'source /usr/share/bash-completion/bash_completion
                         source "$0"
                         COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                         COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                         _cachectl
                         printf "%s\n" "${COMPREPLY[@]}"' "$TOP/ctl/cachectl.bash-completion" "$@" | sort)
        }
        [ "$(comp "$CTL" doctor --c | tr '\n' ' ')" = "--compiler= " ]
        [ "$(comp "$CTL" doctor - | tr '\n' ' ')" = "--compiler= --help --json --source= " ]
        [ "$(comp "$CTL" doctor --compiler hipcc --source h | tr '\n' ' ')" = "hipcc " ]
        [ "$(comp "$CTL" doctor b | tr '\n' ' ')" = "build-a " ]
        [ "$(comp "$CTL" doctor --compiler h | tr '\n' ' ')" = "hipcc " ]
}

@test "doctor: hostile build files: a line of 1 MB, control characters, odd names, a FIFO, an include loop" {
        b=$BATS_TEST_TMPDIR/hostile
        mkdir -p "$b"
        {
                # ESC, BEL, then CSI as a C1 control in UTF-8 (U+009B) and as a lone byte
                printf 'CMAKE_C_COMPILER:FILEPATH=/usr/bin/cc\033]0;owned\007\302\23331m\23331m\n'
                printf 'CMAKE_%s_COMPILER:FILEPATH=/x\n' "$(head -c 1000000 /dev/zero | tr '\0' A)"
                printf 'CMAKE_C X_COMPILER:FILEPATH=/x\nCMAKE_\033[31m_COMPILER:FILEPATH=/x\nCMAKE__COMPILER:FILEPATH=/x\n'
                printf 'CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++\nCMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache\n'
                printf 'CMAKE_GENERATOR:INTERNAL=Ninja\n'
        } > "$b/CMakeCache.txt"
        mkfifo "$b/build.ninja"
        run --separate-stderr timeout 60 "$CTL" doctor "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$output" == *'FAIL  launcher-C       C (CMAKE_C_COMPILER /usr/bin/cc\e]0;owned\x07\u009b31m\x9b31m) has no ccache launcher'* ]]
        [[ "$output" == *"WARN  rules-CXX        could not read the generated rules (build.ninja, generator Ninja): not a regular file"* ]]
        [ "$(grep -c '^[a-zA-Z]* *launcher-' <<<"$output")" -eq 2 ]
        [[ "$output" != *$'\033'* ]]
        inert <<<"$output"

        # build.ninja that includes itself and a line of 1 MB: bounded, counted once a level
        rm "$b/build.ninja"
        {
                echo 'include build.ninja'
                echo 'rule CXX_COMPILER__t_'
                echo '  command = ccache /usr/bin/c++ -MD -MF $out.d -c $in -o $out'
                printf 'build %s.o: CXX_COMPILER__t_ x.cpp\n' "$(head -c 1000000 /dev/zero | tr '\0' o)"
                echo 'build y.o: CXX_COMPILER__t_ y.cpp'
        } > "$b/build.ninja"
        run --separate-stderr timeout 60 "$CTL" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$(field rules-CXX message)" == *" of "*" CXX compile rules go through ccache" ]]

        # and a .ninja_deps of ninja's format that lies: ids out of range, a
        # path without padding, sizes past the end; then one cut short
        /usr/bin/python3 - "$b/.ninja_deps" <<'EOF'
import struct, sys
rec = lambda deps, body: struct.pack("<I", len(body) | (0x80000000 if deps else 0)) + body
d = b"# ninjadeps\n" + struct.pack("<i", 4)
d += rec(False, b"y.o" + b"\0" + struct.pack("<I", 0xffffffff))        # id 0
d += rec(False, b"abcd" + struct.pack("<I", 0xfffffffe))               # id 1, no padding
d += rec(True, struct.pack("<iQ", 0, 1) + struct.pack("<i", 1) * 300)  # y.o: 300 deps
d += rec(True, struct.pack("<iQ", -5, 1) + struct.pack("<i", 7))
d += rec(True, struct.pack("<iQ", 99, 1))
d += rec(True, struct.pack("<i", 0))                                     # too short for a deps record
d += struct.pack("<I", 0x7ffffff0) + b"xx"                               # past the end
open(sys.argv[1], "wb").write(d)
EOF
        run --separate-stderr timeout 60 "$CTL" doctor --json "$b"
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$(field depend-CXX message)" == "300 files per CXX object (of 1 built, 200 or more is heavy): "* ]]
        truncate -s 30 "$b/.ninja_deps"
        run --separate-stderr timeout 60 "$CTL" doctor --json "$b"
        [ "$status" -eq 2 ]
        [ "$(level depend-mode)" = ok ]
}
