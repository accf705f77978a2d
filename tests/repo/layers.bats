#!/usr/bin/env bats
# The daemon's layers hold (daemon/README.md), and cachectl's (ctl/README.md):
# tests/check-layers passes on the tree, and bites on a copy of it with an
# include that reaches up, a folder that is no layer, a header named by a bare
# name, and headers in a circle. Reads files only: no daemon, no build.
# tests/run: takes 38 s
load ../lib/helper

LAYERS="base os ccache alert control config tree insight evict cache space remote"
CTL_LAYERS="core views build"

# A copy of daemon/, ctl/ and the check, to spoil.
copy_tree() {
        T=$BATS_TEST_TMPDIR/tree
        rm -rf "$T"
        mkdir -p "$T/tests"
        cp -r "$TOP/daemon" "$TOP/ctl" "$T/"
        cp "$TOP/tests/check-layers" "$T/tests/"
}

# make_print VAR: the Makefile's VAR. Not the parent make's flags: run under
# `make -C DIR test` they carry -w, and the directory lines would join the
# output.
make_print() {
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory \
                -C "$TOP" -f Makefile -f - print-var <<<"print-var: ; @echo \$($1)"
}

@test "the Makefile's LAYERS and CTL_LAYERS are the ones this test checks" {
        run make_print LAYERS
        [ "$status" -eq 0 ]
        [ "$output" = "$LAYERS" ]
        run make_print CTL_LAYERS
        [ "$status" -eq 0 ]
        [ "$output" = "$CTL_LAYERS" ]
}

@test "the tree keeps its layers" {
        run "$TOP/tests/check-layers" $LAYERS
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        run "$TOP/tests/check-layers" --tree ctl --on daemon/base $CTL_LAYERS
        [ "$status" -eq 0 ]
        [ -z "$output" ]
}

@test "an include that reaches up fails it, naming the file and both layers" {
        copy_tree
        echo '#include "cache/cache.h"' >> "$T/daemon/tree/scan.c"
        run "$T/tests/check-layers" $LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/tree/scan.c includes cache/cache.h: layer cache is above layer tree"* ]]
        # the top is above every layer
        copy_tree
        echo '#include "manager.h"' >> "$T/daemon/base/log.h"
        run "$T/tests/check-layers" $LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/base/log.h includes manager.h: the top is above layer base"* ]]
}

@test "a folder that is no layer, or a header by a bare name, fails it" {
        copy_tree
        mkdir "$T/daemon/merge"
        run "$T/tests/check-layers" $LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"daemon/merge/ is no layer"* ]]
        copy_tree
        echo '#include "account.h"' >> "$T/daemon/evict/trim.c"
        run "$T/tests/check-layers" $LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *'daemon/evict/trim.c includes "account.h", which is no file below daemon/'* ]]
}

@test "headers that include each other in a circle fail it, even within one layer" {
        copy_tree
        echo '#include "tree/account.h"' >> "$T/daemon/tree/links.h"
        grep -q '"tree/links.h"' "$T/daemon/tree/account.h" || echo '#include "tree/links.h"' >> "$T/daemon/tree/account.h"
        run "$T/tests/check-layers" $LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"in a circle"* ]]
}

@test "cachectl: an include that reaches up fails it, naming the file and both layers" {
        copy_tree
        echo '#include "views/report.h"' >> "$T/ctl/core/client.c"
        run "$T/tests/check-layers" --tree ctl --on daemon/base $CTL_LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"ctl/core/client.c includes views/report.h: layer views is above layer core"* ]]
        # the top (cachectl.c and the commands) is above every layer
        copy_tree
        echo '#include "merge.h"' >> "$T/ctl/build/statslog.h"
        run "$T/tests/check-layers" --tree ctl --on daemon/base $CTL_LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *"ctl/build/statslog.h includes merge.h: the top is above layer build"* ]]
}

@test "cachectl: a daemon header beyond base/, a bare name, or a folder that is no layer fails it" {
        copy_tree
        echo '#include "tree/scan.h"' >> "$T/ctl/views/report-check.c"
        echo '#include "client.h"' >> "$T/ctl/build/measure.c"
        mkdir "$T/ctl/commands"
        run "$T/tests/check-layers" --tree ctl --on daemon/base $CTL_LAYERS
        [ "$status" -eq 1 ]
        [[ "$output" == *'ctl/views/report-check.c includes "tree/scan.h", which is no file below ctl/ nor daemon/base/'* ]]
        [[ "$output" == *'ctl/build/measure.c includes "client.h", which is no file below ctl/ nor daemon/base/'* ]]
        [[ "$output" == *"ctl/commands/ is no layer"* ]]
}
