#!/usr/bin/env bats
# tests/run itself: a crash or a silent non-zero exit must count as a failure,
# and the closing line must be exact.
load ../lib/helper

@test "tests/run counts a crashed binary and a silent failure as failed" {
        printf '#!/bin/sh\necho 1..3\necho "ok 1 - a"\nkill -SEGV $$\n' > "$BATS_TEST_TMPDIR/crash"
        printf '#!/bin/sh\necho 1..2\necho "ok 1 - a"\necho "not ok 2 - b # SKIP no root"\n' > "$BATS_TEST_TMPDIR/skip"
        chmod +x "$BATS_TEST_TMPDIR/crash" "$BATS_TEST_TMPDIR/skip"
        run "$TOP/tests/run" "$BATS_TEST_TMPDIR/crash" /bin/false "$BATS_TEST_TMPDIR/skip"
        [ "$status" -eq 1 ]
        [ "${lines[-1]}" = "2 passed, 2 failed, 1 skipped" ]
        run "$TOP/tests/run" "$BATS_TEST_TMPDIR/skip"
        [ "$status" -eq 0 ]
        [ "${lines[-1]}" = "1 passed, 0 failed, 1 skipped" ]
}

@test "tests/run says how long each bats file took, and tallies it" {
        printf '#!/usr/bin/env bats\n@test "t" {\n\ttrue\n}\n' > "$BATS_TEST_TMPDIR/quick.bats"
        run "$TOP/tests/run" "$BATS_TEST_TMPDIR/quick.bats"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" =~ "# ---- quick.bats, "[0-9]+" s" ]]
        [ "${lines[-1]}" = "1 passed, 0 failed" ]
}

@test "tests/run starts the pool's files longest first, by what they say they take" {
        local log=$BATS_TEST_TMPDIR/started
        for f in a:"" b:"# tests/run: takes 5 s" c:"# tests/run: takes 80 s" d:""; do
                printf '#!/usr/bin/env bats\n%s\n@test "t" {\n\techo %s >> %s\n}\n' "${f#*:}" "${f%%:*}" "$log" \
                        > "$BATS_TEST_TMPDIR/${f%%:*}.bats"
        done
        # one slot: the files run one after the other, in the pool's order
        CK_TEST_JOBS=1 run "$TOP/tests/run" "$BATS_TEST_TMPDIR"/{a,b,c,d}.bats
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(tr '\n' ' ' < "$log")" = "c b a d " ]
        [ "${lines[-1]}" = "4 passed, 0 failed" ]
}

# Bats runs a test under set -e, which ignores a command negated with "!":
# "! grep -q secret log" followed by anything else can never fail the test.
# Each negated line must end in "|| false" (or another ||); lines that go on
# (a trailing "|", "||" or "\") are the next line's business.
unguarded_negations() {
        grep -nE '^[[:space:]]*! ' "$@" | grep -vE '\|\||[|\\][[:space:]]*$'
}

@test "no negated command in a bats file can pass unnoticed: each ends in || false" {
        run unguarded_negations "$TOP"/tests/{feature,attack,repo}/*.bats "$TOP"/tests/lib/*.bash
        echo "$output"
        [ "$status" -eq 1 ] && [ -z "$output" ]
        # The check bites: an unguarded line is found, guarded ones are not.
        printf '@test "t" {\n\t! grep -q a b\n\t! grep -q a b || false\n\t! grep -q a b |\n\t\tcat\n}\n' \
                > "$BATS_TEST_TMPDIR/neg.bats"
        run unguarded_negations "$BATS_TEST_TMPDIR/neg.bats"
        [ "$status" -eq 0 ] && [ "$output" = "2:	! grep -q a b" ]
        # And what it guards against is real: the unguarded line lets the test pass.
        printf '@test "t" {\n\t! true\n\ttrue\n}\n' > "$BATS_TEST_TMPDIR/pass.bats"
        printf '@test "t" {\n\t! true || false\n\ttrue\n}\n' > "$BATS_TEST_TMPDIR/fail.bats"
        bats --tap "$BATS_TEST_TMPDIR/pass.bats"
        ! bats --tap "$BATS_TEST_TMPDIR/fail.bats" || false
}
