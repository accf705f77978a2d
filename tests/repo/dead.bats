#!/usr/bin/env bats
# No function is dead (tests/check-dead): the check passes on the tree and
# bites on a copy of it with a function nothing calls, and with a name on
# tests/test-only-functions that a program calls. The copy reuses the
# build's objects ($CK_BUILD/dead, made by `make test`), so only what the
# test spoils is compiled again.
load ../lib/helper

# A copy of the sources, the Makefile and the dead-code build, to spoil.
copy_tree() {
        T=$BATS_TEST_TMPDIR/tree
        mkdir -p "$T/build" "$T/tests"
        cp -a "$TOP/daemon" "$TOP/ctl" "$TOP/etc" "$TOP/Makefile" "$TOP/.ci" "$T/"
        cp -a "$TOP/tests/check-dead" "$TOP/tests/test-only-functions" "$T/tests/"
        cp -a "$CK_BUILD/dead" "$CK_BUILD/.deps-ok" "$T/build/"
        rm -f "$T/build/.dead-ok"
}

check() {
        run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$T" build/.dead-ok
        echo "$output"
}

@test "no function in the programs is dead, and the list of those only tests call is exact" {
        [ -f "$CK_BUILD/dead/cachekeeperd.gc" ] || skip "no dead-code build: run make test"
        run "$TOP/tests/check-dead" "$CK_BUILD/dead"
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
}

@test "a function nothing calls fails it, named with its file, in base/ too; one program calling it is enough" {
        [ -f "$CK_BUILD/dead/cachekeeperd.gc" ] || skip "no dead-code build: run make test"
        copy_tree
        check
        [ "$status" -eq 0 ]
        # one in the daemon, one in base/ (linked into both programs), one
        # in base/ that only the client calls (alive: one program is enough)
        printf 'int planted_dead(void);\nint planted_dead(void) { return 1; }\n' >> "$T/daemon/tree/scan.c"
        printf 'int planted_base(void);\nint planted_base(void) { return 2; }\n' >> "$T/daemon/base/human.c"
        check
        [ "$status" -ne 0 ]
        [[ "$output" == *"check-dead: planted_dead() in build/dead/daemon/tree/scan.o: nothing calls it"* ]]
        [[ "$output" == *"check-dead: planted_base() in build/dead/daemon/base/human.o: nothing calls it"* ]]
        [[ "$output" != *"protocol_encode_status"* ]]
}

@test "a name on the list that a program calls fails it: the list says what is true" {
        [ -f "$CK_BUILD/dead/cachekeeperd.gc" ] || skip "no dead-code build: run make test"
        copy_tree
        echo 'scan_step   planted: the daemon calls it' >> "$T/tests/test-only-functions"
        check
        [ "$status" -ne 0 ]
        [[ "$output" == *"check-dead: scan_step is listed in tests/test-only-functions, but a program calls it"* ]]
}
