#!/usr/bin/env bats
# tests/ keeps its plan (tests/README.md): every bats file is in
# tests/feature, tests/attack or tests/repo, which make test runs; every unit
# test is tests/unit/daemon/LAYER/test-X.c or tests/unit/ctl/LAYER/test-X.c,
# LAYER the highest layer (Makefile's LAYERS, CTL_LAYERS) whose headers it
# includes, each name once (all build as build/tests/test-X). Reads files
# only: no daemon, no build.
load ../lib/helper

# layers ROOT VAR: the layers the Makefile at ROOT lists in VAR, lowest first.
layers() {
        sed -n "s/^$2 *:= *//p" "$1/Makefile"
}

# unit_layer FILE LAYER...: the highest of LAYERS (lowest first) that FILE
# includes a header of ("LAYER/FILE.h"); nothing when it includes none.
unit_layer() {
        local file=$1 l top=
        shift
        for l in "$@"; do
                grep -qE "^#include \"$l/[^\"]+\\.h\"" "$file" && top=$l
        done
        echo "$top"
}

# check_layout ROOT: fails, naming each, on a bats file outside the three
# folders, a unit test outside the folder of its module's layer or of a name
# another unit test has, and a file below tests/unit/ that is neither a unit
# test nor a shared header; also when it finds too few files (a check gone
# blind passes nothing).
check_layout() {
        local root=$1 bad=0 f rel side layer want n=0
        local -a daemon_layers ctl_layers
        read -ra daemon_layers <<<"$(layers "$root" LAYERS)"
        read -ra ctl_layers <<<"$(layers "$root" CTL_LAYERS)"

        while IFS= read -r rel; do
                [[ $rel =~ ^tests/(feature|attack|repo)/[^/]+\.bats$ ]] ||
                        { echo "$rel: a bats file outside tests/feature, tests/attack and tests/repo" >&2; bad=1; }
                n=$((n + 1))
        done < <(cd "$root" && find . -path ./build -prune -o -path ./.git -prune -o -name '*.bats' -type f -print | sed 's|^\./||' | sort)

        while IFS= read -r rel; do
                f=$root/$rel
                case $rel in
                tests/unit/daemon/*.h | tests/unit/ctl/*.h) continue ;;
                tests/unit/*/*/test-*.c) ;;
                *) echo "$rel: not a unit test in a layer's folder (tests/unit/{daemon,ctl}/LAYER/test-X.c)" >&2; bad=1; continue ;;
                esac
                side=${rel#tests/unit/} side=${side%%/*}
                layer=${rel#tests/unit/"$side"/} layer=${layer%%/*}
                # What it tests: cachectl's modules when it includes one of
                # theirs (besides daemon/base/, which cachectl builds on).
                want=$(unit_layer "$f" "${ctl_layers[@]}")
                if [ -n "$want" ]; then
                        want=ctl/$want
                else
                        want=$(unit_layer "$f" "${daemon_layers[@]}")
                        [ -z "$want" ] || want=daemon/$want
                fi
                if [ -z "$want" ]; then
                        echo "$rel: includes no layer's header: which module does it test?" >&2; bad=1
                elif [ "$side/$layer" != "$want" ]; then
                        echo "$rel: tests a module of $want (its highest include), so belongs in tests/unit/$want/" >&2; bad=1
                fi
                n=$((n + 1))
        done < <(cd "$root" && find tests/unit -type f | sort)

        while IFS= read -r f; do
                echo "two unit tests named $f: each builds as build/tests/${f%.c}" >&2; bad=1
        done < <(cd "$root" && find tests/unit -name 'test-*.c' -printf '%f\n' | sort | uniq -d)

        [ "$n" -ge 80 ] || { echo "only $n test files found" >&2; bad=1; }
        return "$bad"
}

@test "every bats file is in tests/feature, tests/attack or tests/repo; every unit test in its module's layer" {
        check_layout "$TOP"
}

@test "make test runs every bats file and builds every unit test" {
        local cmd f
        cmd=$(cd "$TOP" && make -n test 2>/dev/null | grep 'tests/run')
        for f in feature attack repo; do
                [[ $cmd == *" tests/$f/*.bats"* ]] || { echo "make test does not run tests/$f"; false; }
        done
        while IFS= read -r f; do
                [[ $cmd == *"/tests/${f%.c} "* && $cmd == *"/asan/tests/${f%.c} "* ]] ||
                        { echo "make test does not run build/tests/${f%.c} and its sanitizer build"; false; }
        done < <(cd "$TOP" && find tests/unit -name 'test-*.c' -printf '%f\n')
}

# A copy of what the check reads, to spoil.
copy_tree() {
        T=$BATS_TEST_TMPDIR/tree
        mkdir -p "$T"
        cp -r "$TOP/tests" "$TOP/Makefile" "$T/"
}

@test "the check bites: a bats file astray, a unit test in the wrong layer, astray, or named twice each fail it" {
        copy_tree
        check_layout "$T"        # the copy passes as it is: what fails below is what was spoiled
        mkdir -p "$T/tests/integration" "$T/tests/feature/sub" "$T/tests/unit/daemon/nolayer"
        echo '@test "t" { true; }' > "$T/tests/integration/old.bats"
        echo '@test "t" { true; }' > "$T/tests/feature/sub/deep.bats"
        mv "$T/tests/unit/daemon/base/test-human.c" "$T/tests/unit/daemon/os/"
        mv "$T/tests/unit/daemon/space/test-space.c" "$T/tests/unit/daemon/cache/"
        mv "$T/tests/unit/ctl/views/test-report.c" "$T/tests/unit/ctl/core/"
        cp "$T/tests/unit/daemon/base/test-text.c" "$T/tests/unit/test-flat.c"
        cp "$T/tests/unit/daemon/base/test-text.c" "$T/tests/unit/daemon/nolayer/"
        printf '#include "manager.h"\n' > "$T/tests/unit/daemon/base/test-top.c"
        run check_layout "$T"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"tests/integration/old.bats: a bats file outside"* ]]
        [[ "$output" == *"tests/feature/sub/deep.bats: a bats file outside"* ]]
        [[ "$output" == *"tests/unit/daemon/os/test-human.c: tests a module of daemon/base (its highest include), so belongs in tests/unit/daemon/base/"* ]]
        [[ "$output" == *"tests/unit/daemon/cache/test-space.c: tests a module of daemon/space"* ]]
        [[ "$output" == *"tests/unit/ctl/core/test-report.c: tests a module of ctl/views"* ]]
        [[ "$output" == *"tests/unit/test-flat.c: not a unit test in a layer's folder"* ]]
        [[ "$output" == *"tests/unit/daemon/nolayer/test-text.c: tests a module of daemon/base"* ]]
        [[ "$output" == *"two unit tests named test-text.c"* ]]
        [[ "$output" == *"tests/unit/daemon/base/test-top.c: includes no layer's header"* ]]
        # the untouched tests raise nothing
        [[ "$output" != *"test-account.c"* && "$output" != *"tests/repo/"* ]]
}
