#!/usr/bin/env bats
# daemon/THREATS.md cannot rot: every test its table cites exists by that
# exact name (a boot script's check by its description in the script's TESTS), every test cell is citations, "none" or "n/a", and every
# function it names as FILE.c:function is defined in that file. Reads files
# only: no daemon, no build.
load ../lib/helper

# check_threats FILE: fails, naming each, on a cited test that does not
# exist and on an item of a test cell it cannot read; also when it finds
# fewer citations than a real table has (a parser gone blind passes nothing).
check_threats() {
        local line cell item file name bad=0 cited=0
        local -a items
        while IFS= read -r line; do
                [[ $line == '|'* && $line != '| Input |'* && $line != '|---'* ]] || continue
                cell=${line%|}
                cell=${cell##*| }                        # the last cell: the test
                cell=${cell//<br>/$'\n'}
                mapfile -t items <<<"$cell"
                for item in "${items[@]}"; do
                        item=${item#"${item%%[! ]*}"}
                        item=${item%"${item##*[! ]}"}
                        if [[ $item =~ ^(tests/(feature|attack|repo)/[a-z0-9-]+\.bats):\ \"(.+)\"$ ]]; then
                                file=$TOP/${BASH_REMATCH[1]} name=${BASH_REMATCH[3]}
                                grep -qxF "@test \"$name\" {" "$file" 2>/dev/null ||
                                        { echo "no test \"$name\" in ${file#"$TOP"/}" >&2; bad=1; }
                        elif [[ $item =~ ^tests/boot/([a-z0-9-]+):\ \"(.+)\"$ ]]; then
                                # A check of a boot script: "function|description" in its TESTS.
                                file=$TOP/tests/boot/${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
                                sed -n 's/^[[:space:]]*"t_[a-z0-9_]*|\(.*\)"$/\1/p' "$file" 2>/dev/null | grep -qxF "$name" ||
                                        { echo "no check \"$name\" in ${file#"$TOP"/}" >&2; bad=1; }
                        elif [[ $item =~ ^(tests/unit/(daemon|ctl)/[a-z]+/test-[a-z0-9-]+\.c):\ (test_[a-z0-9_]+)$ ]]; then
                                file=$TOP/${BASH_REMATCH[1]} name=${BASH_REMATCH[3]}
                                grep -qE "cmocka_unit_test[a-z_]*\\($name[,)]" "$file" 2>/dev/null ||
                                        { echo "no unit test $name in ${file#"$TOP"/}" >&2; bad=1; }
                        elif [[ $item =~ ^tests/fuzz/fuzz-[a-z0-9-]+\.c$ ]]; then
                                [ -f "$TOP/$item" ] || { echo "no fuzzer $item" >&2; bad=1; }
                        elif [[ $item == none || $item == n/a || ($item == '('*')') ]]; then
                                continue
                        else
                                echo "cannot read this test cell item: $item" >&2
                                bad=1
                                continue
                        fi
                        cited=$((cited + 1))
                done
        done < "$1"
        [ "$cited" -ge 50 ] || { echo "only $cited citations found in $1" >&2; bad=1; }
        return "$bad"
}

# check_code TABLE: fails, naming each, on a `FOLDER/FILE.c:function` in
# TABLE whose file (below daemon/, or ctl/FILE.c) defines no such function.
check_code() {
        local ref file fn bad=0 n=0
        while read -r ref; do
                ref=${ref//\`/}
                file=${ref%%:*} fn=${ref#*:}
                [[ $file == ctl/* ]] || file=daemon/$file
                grep -qE "^[A-Za-z].*[ *]$fn\(" "$TOP/$file" 2>/dev/null ||
                        { echo "no function $fn in $file" >&2; bad=1; }
                n=$((n + 1))
        done < <(grep -oE '`([a-z]+/)?[a-z0-9-]+\.c:[a-z0-9_]+`' "$1")
        [ "$n" -ge 50 ] || { echo "only $n functions named in $1" >&2; bad=1; }
        return "$bad"
}

@test "every test daemon/THREATS.md cites exists by that exact name" {
        check_threats "$TOP/daemon/THREATS.md"
}

@test "the check bites: a renamed test or boot check, a missing unit test or fuzzer, an unreadable cell each fail it" {
        local t=$BATS_TEST_TMPDIR/THREATS.md
        sed -e '0,/hostile-socket.bats: "/s//hostile-socket.bats: "no such /' \
            -e '0,/test-remote.c: test_password_file/s//test-remote.c: test_no_such_test/' \
            -e '0,/tests\/boot\/containers: "/s//tests\/boot\/containers: "no such /' \
            -e '0,/tests\/fuzz\/fuzz-config.c/s//tests\/fuzz\/fuzz-nothing.c/' \
            -e '0,/| n\/a |$/s//| tested somewhere |/' "$TOP/daemon/THREATS.md" > "$t"
        run check_threats "$t"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *'no test "no such '*'" in tests/attack/hostile-socket.bats'* ]]
        [[ "$output" == *"no unit test test_no_such_test in tests/unit/daemon/remote/test-remote.c"* ]]
        [[ "$output" == *'no check "no such '*'" in tests/boot/containers'* ]]
        [[ "$output" == *"no fuzzer tests/fuzz/fuzz-nothing.c"* ]]
        [[ "$output" == *"cannot read this test cell item: tested somewhere"* ]]
        # a table the parser cannot see at all fails too
        sed 's/^|/ |/' "$TOP/daemon/THREATS.md" > "$t"
        run check_threats "$t"
        [ "$status" -eq 1 ]
        [[ "$output" == *"only 0 citations found"* ]]
}

@test "every function daemon/THREATS.md names as FILE.c:function is defined there" {
        check_code "$TOP/daemon/THREATS.md"
        sed '0,\|`os/root-lock.c:root_lock_take`|s||`os/root-lock.c:root_lock_grab`|' "$TOP/daemon/THREATS.md" \
                > "$BATS_TEST_TMPDIR/THREATS.md"
        run check_code "$BATS_TEST_TMPDIR/THREATS.md"
        [ "$status" -eq 1 ]
        [[ "$output" == *"no function root_lock_grab in daemon/os/root-lock.c"* ]]
}
