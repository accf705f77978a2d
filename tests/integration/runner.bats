#!/usr/bin/env bats
# tests/run itself: a crash or a silent non-zero exit must count as a failure,
# and the closing line must be exact.
load helper

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
