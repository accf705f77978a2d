#!/usr/bin/env bats
# bash completion for cachectl, through bash-completion as an interactive
# shell loads it: commands and options from cachectl's own table, cache names
# from a live daemon, sizes for --to; nothing, and quickly, when the daemon
# does not answer.
# tests/run: takes 29 s
load ../lib/helper

COMPLETION=${COMPLETION:-$TOP/ctl/cachectl.bash-completion}

setup() {
        [ -r /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed"
}

teardown() {
        [ -z "${DAEMON_PID:-}" ] || kill -CONT "$DAEMON_PID" 2>/dev/null || true
        stop_daemon
}

# comp WORD...: what completing the last WORD offers, sorted, one a line
# (the first WORD is the cachectl to run). Its stderr is kept apart.
comp() {
        bash -c 'source /usr/share/bash-completion/bash_completion
                 source "$0"
                 COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
                 COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                 _cachectl
                 printf "%s\n" "${COMPREPLY[@]}"' "$COMPLETION" "$@" 2> "$BATS_TEST_TMPDIR/comp.err" | sort
}

@test "completion: the commands, each command's options, the global options, sizes for --to" {
        [ "$(comp "$CTL" "" | tr '\n' ' ')" = "check doctor history measure merge metrics reload status trim " ]
        [ "$(comp "$CTL" st)" = status ]
        [ "$(comp "$CTL" -s /x "" | tr '\n' ' ')" = "check doctor history measure merge metrics reload status trim " ]
        [ "$(comp "$CTL" - | tr '\n' ' ')" = "--help --socket= --timeout= --version " ]
        [ "$(comp "$CTL" trim -- | tr '\n' ' ')" = "--dry-run --help --namespace= --to= --written-by= " ]
        [ "$(comp "$CTL" history --h | tr '\n' ' ')" = "--help --hours= " ]
        [ "$(comp "$CTL" status - | tr '\n' ' ')" = "--help --json " ]
        [ "$(comp "$CTL" check - | tr '\n' ' ')" = "--help --version " ]
        [ "$(comp "$CTL" reload -)" = --help ]
        [ "$(comp "$CTL" merge -- | tr '\n' ' ')" = "--allow-mixed --dry-run --help --into= " ]
        [ "$(comp "$CTL" trim --to "" | tr '\n' ' ')" = "100G 10G 50G " ]
        [ "$(comp "$CTL" trim --to 5)" = 50G ]
        [ -z "$(comp "$CTL" trim --written-by "")" ]
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
        # what the options come from: cachectl's table, the same as getopt's
        "$CTL" trim --dry-run --help > /dev/null
        [ "$("$CTL" __complete options metrics | tr '\n' ' ')" = "--output= --help " ]
        [ "$(comp "$CTL" metrics - | tr '\n' ' ')" = "--help --output= " ]
        # metrics --output: a file
        touch "$BATS_TEST_TMPDIR/cachekeeper.prom"
        [ "$(comp "$CTL" metrics --output "$BATS_TEST_TMPDIR/cachekeeper.p")" = "$BATS_TEST_TMPDIR/cachekeeper.prom" ]
        # measure: after "--" the build's own command line (bash-completion's
        # _command_offset, whose compopt says on stderr that this is no real
        # completion, and which may find a command twice on PATH); its
        # options, rates
        [ "$(comp "$CTL" measure --explain -- nin | uniq)" = ninja ]
        [ "$(comp "$CTL" measure - | tr '\n' ' ')" = "--explain --help --json --min-hit-rate= " ]
        [ "$(comp "$CTL" measure --min-hit-rate "" | tr '\n' ' ')" = "90 95 99 " ]
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
}

@test "completion: cache names from the running daemon, where a command takes them" {
        write_config_caches "{ name = \"mi210\"; path = \"$BATS_TEST_TMPDIR/a\"; max_size = \"1G\"; },
                             { name = \"aiter\"; path = \"$BATS_TEST_TMPDIR/b\"; max_size = \"1G\"; }"
        start_ready
        S=$BATS_TEST_TMPDIR/ck.sock
        [ "$(comp "$CTL" -s "$S" status "" | tr '\n' ' ')" = "aiter mi210 " ]
        [ "$(comp "$CTL" --socket="$S" history a)" = aiter ]
        [ "$(CACHEKEEPER_SOCKET=$S comp "$CTL" trim --dry-run "" | tr '\n' ' ')" = "aiter mi210 " ]
        [ "$(comp "$CTL" -s "$S" trim mi210 --to 10G "")" = aiter ]                       # several, each once
        [ -z "$(comp "$CTL" -s "$S" status mi210 "")" ]                                      # one
        [ "$(comp "$CTL" -s "$S" merge "" | tr '\n' ' ')" = "aiter mi210 " ]
        [ "$(comp "$CTL" -s "$S" merge aiter --into "")" = mi210 ]                        # not itself
        [ -z "$(comp "$CTL" -s "$S" merge aiter --into mi210 "")" ]
        [ -z "$(comp "$CTL" -s "$S" history --hours 3 mi210 "")" ]
        [ -z "$(comp "$CTL" -s "$S" metrics "")" ]
        [ "$(comp "$CTL" -s "$S" measure --json "" | tr '\n' ' ')" = "aiter mi210 " ]          # one, before --
        [ -z "$(comp "$CTL" -s "$S" measure mi210 "")" ]
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
        # the writers and namespaces the caches hold, each once, for trim's --written-by and --namespace
        [ -z "$(comp "$CTL" -s "$S" trim --written-by "")" ]
        version=$(ccache --version | sed -n '1s/^ccache version //p')
        compile "$BATS_TEST_TMPDIR/a" 2
        CCACHE_NAMESPACE=team1 compile "$BATS_TEST_TMPDIR/b" 1 g
        wait_for "[ \"\$(status_jq '[.caches[].writers[]] | length')\" = 2 ]" 20
        [ "$(comp "$CTL" -s "$S" trim --written-by "")" = "$version" ]
        [ "$(comp "$CTL" -s "$S" trim --dry-run --namespace "")" = team1 ]
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
}

@test "completion: no daemon, or a stopped one: no names, no message, no wait" {
        write_config 1G
        start_ready
        S=$BATS_TEST_TMPDIR/ck.sock
        kill -STOP "$DAEMON_PID"
        start=$SECONDS
        [ -z "$(comp "$CTL" -s "$S" status "")" ]
        [ $((SECONDS - start)) -le 3 ]        # its own short timeout, not cachectl's 10 s
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
        kill -CONT "$DAEMON_PID"
        stop_daemon
        [ -z "$(comp "$CTL" -s "$S" trim "")" ]
        [ -z "$(comp "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" status "")" ]
        [ ! -s "$BATS_TEST_TMPDIR/comp.err" ]
        # the commands still complete
        [ "$(comp "$CTL" -s "$S" re)" = reload ]
}

@test "make install puts the completion where bash-completion loads it on demand" {
        P=$BATS_TEST_TMPDIR/p
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" B="$CK_BUILD" install \
                DESTDIR= PREFIX="$P/usr" SYSCONFDIR="$P/etc" > /dev/null
        [ -f "$P/usr/share/bash-completion/completions/cachectl" ]
        COMPLETION=$P/usr/share/bash-completion/completions/cachectl
        [ "$(comp "$CTL" tr)" = trim ]
        # bash-completion's loader finds it by the command's name
        run bash -c "source /usr/share/bash-completion/bash_completion
                     BASH_COMPLETION_USER_DIR=/nonexistent XDG_DATA_DIRS='$P/usr/share' __load_completion cachectl &&
                     complete -p cachectl"
        [ "$output" = "complete -F _cachectl cachectl" ]
}
