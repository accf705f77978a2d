#!/usr/bin/env bats
# The soak's short form: tests/soak/run (see its head) for about 90 s, the
# real daemon through a compressed busy day on a tmpfs volume with writers,
# a hostile user, reloads, trims, a volume filling and a kill -9 mid-trim,
# an oracle checking throughout. Its table and seed are shown on failure:
# `tests/soak/run --seed N --duration 90` replays the run. `make soak` is
# the long form.
load helper

@test "soak, short form: a busy day in 90 s and every oracle check holds" {
        require_root
        run env CK_BUILD="$CK_BUILD" "$TOP/tests/soak/run" --duration 90
        printf '%s\n' "$output" >&2
        [ "$status" -eq 0 ]
}
