#!/usr/bin/env bats
# The daemon's layers hold (daemon/README.md), and cachectl's (ctl/README.md):
# tests/check-layers passes on the tree, and bites on a copy of it with an
# include that reaches up, a folder that is no layer, a header named by a bare
# name, and headers in a circle. tests/check-calls passes on the build's
# objects and bites on objects where a lower layer calls a higher one.
# No daemon runs.
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

@test "the call graph keeps the layers too: no object uses what a higher layer defines (nm on the build's objects)" {
        run "$TOP/tests/check-calls" "$CK_BUILD" $LAYERS
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        run "$TOP/tests/check-calls" --tree ctl --on daemon/base "$CK_BUILD" $CTL_LAYERS
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        # The graph it read is the program's: layers below the top are used.
        run "$TOP/tests/check-calls" --graph "$CK_BUILD" $LAYERS
        [[ "$output" == *"top -> cache "* ]]
        [[ "$output" == *"evict -> tree "* ]]
        run "$TOP/tests/check-calls" --graph --tree ctl --on daemon/base "$CK_BUILD" $CTL_LAYERS
        [[ "$output" == *"build -> core "* ]]
}

@test "a call that reaches up fails the call check, naming the object, the symbol and both layers, even with no include" {
        O=$BATS_TEST_TMPDIR/objs S=$BATS_TEST_TMPDIR/src
        mkdir -p "$O/daemon/base" "$O/daemon/tree" "$O/ctl/core" "$O/ctl/views"
        mkdir -p "$S/daemon/base" "$S/daemon/tree" "$S/ctl/core" "$S/ctl/views"
        # Declared by hand: check-layers sees no include of tree/.
        echo 'int tree_thing(void); int base_thing(void) { return tree_thing(); }' > "$S/daemon/base/a.c"
        echo 'int base_thing(void); int tree_thing(void) { return 1; } int tree_user(void) { return base_thing(); }' > "$S/daemon/tree/b.c"
        cc -c "$S/daemon/base/a.c" -o "$O/daemon/base/a.o"
        cc -c "$S/daemon/tree/b.c" -o "$O/daemon/tree/b.o"
        run "$TOP/tests/check-calls" --src "$S" "$O" base tree
        [ "$status" -eq 1 ]
        [[ "$output" == *"check-calls: base/a.o uses tree_thing of tree/b.o: layer tree is above layer base"* ]]
        # with the layers' order given the other way, tree's call to base reaches up
        run "$TOP/tests/check-calls" --src "$S" "$O" tree base
        [ "$status" -eq 1 ]
        [[ "$output" == *"tree/b.o uses base_thing of base/a.o: layer base is above layer tree"* ]]
        # the downward call alone passes
        rm "$O/daemon/base/a.o"
        echo 'int base_thing(void) { return 2; }' > "$S/daemon/base/a.c"
        cc -c "$S/daemon/base/a.c" -o "$O/daemon/base/a.o"
        run "$TOP/tests/check-calls" --src "$S" "$O" base tree
        [ "$status" -eq 0 ]
        # cachectl: a core object calling a view
        echo 'int view_thing(void); int core_thing(void) { return view_thing(); }' > "$S/ctl/core/c.c"
        echo 'int view_thing(void) { return 3; }' > "$S/ctl/views/v.c"
        cc -c "$S/ctl/core/c.c" -o "$O/ctl/core/c.o"
        cc -c "$S/ctl/views/v.c" -o "$O/ctl/views/v.o"
        run "$TOP/tests/check-calls" --tree ctl --on daemon/base --src "$S" "$O" core views
        [ "$status" -eq 1 ]
        [[ "$output" == *"core/c.o uses view_thing of views/v.o: layer views is above layer core"* ]]
        # an object whose source is gone is stale, and not read
        rm "$S/ctl/core/c.c"
        run "$TOP/tests/check-calls" --tree ctl --on daemon/base --src "$S" "$O" core views
        [ "$status" -eq 0 ]
}
