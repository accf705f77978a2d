#!/usr/bin/env bats
# The soak's short form: tests/soak/run (see its head) for about 90 s, the
# real daemon through a compressed busy day on a tmpfs volume with writers,
# a hostile user, reloads, trims, a volume filling, a merge under writers
# and a user stealing its destination's directories, a kill -9 mid-trim,
# an oracle checking throughout. Its table and seed are shown on failure:
# `tests/soak/run --seed N --duration 90` replays the run. `make soak` is
# the long form.
# tests/run: takes 80 s
load ../lib/helper

# Root's status p99 is held to 400 ms here, not the 100 ms of `make soak`:
# this form shares two cores with the rest of make test, and the daemon's
# part of a status reply measured 100-170 ms p99 at such times (its trims
# and event batches, not the box: the control server's p99 stayed under
# 10 ms). 400 ms still catches a loop that one user's big replies or a
# long job starve (1.7-3.5 s before history replies were sliced).
@test "soak, short form: a busy day in 90 s and every oracle check holds" {
        require_root
        run env CK_BUILD="$CK_BUILD" "$TOP/tests/soak/run" --duration 90 --status-p99-ms 400
        printf '%s\n' "$output" >&2
        [ "$status" -eq 0 ]
}
