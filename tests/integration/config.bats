#!/usr/bin/env bats
# cachekeeperd -t: the golden outputs, the shipped config, and errors on stderr.
load helper

@test "-t prints each golden config normalised" {
        cd "$TOP"
        for conf in tests/config/*.conf; do
                run --separate-stderr "$CKD" -t -c "$conf"
                [ "$status" -eq 0 ] || { echo "$conf: exit $status: $stderr"; false; }
                diff -u "${conf%.conf}.ok" - <<<"$output"
        done
}

@test "the shipped etc/cachekeeper.conf passes -t and is the seed's set-up" {
        cd "$TOP"
        run --separate-stderr "$CKD" -t -c etc/cachekeeper.conf
        [ "$status" -eq 0 ]
        diff -u tests/config/shipped.ok - <<<"$output"
        grep -q 'path = "/var/cache/mi210-ccache"' <<<"$output"
        grep -q 'max_size = 100000000000;' <<<"$output"
        grep -q 'require_mount = "/mnt/llm-storage"' <<<"$output"
}

@test "-t on a bad config prints FILE:LINE: message on stderr and exits 1" {
        printf 'caches = (\n  { name = "a"; path = "/srv/a";\n    max_size = "100"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [ -z "$output" ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:3: "*'invalid size "100"'* ]]
}

@test "a missing config file is an error naming it" {
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/none.conf"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/none.conf: No such file or directory" ]
}

@test "--help, --version and usage errors" {
        run "$CKD" --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"Usage: cachekeeperd [-c FILE] [-s SOCKET] [-t]"* ]]
        run "$CKD" --version
        [ "$status" -eq 0 ]
        [[ "$output" =~ ^cachekeeperd\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
        run "$CKD" --no-such-flag
        [ "$status" -eq 2 ]
        run "$CKD" extra-arg
        [ "$status" -eq 2 ]
}
