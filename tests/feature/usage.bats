#!/usr/bin/env bats
# One usage text per command (ctl/core/command.h): for every command, the
# forms its own --help shows are the ones the top-level --help lists, the ones
# a usage error of it prints, and the ones ctl/cachectl.1's SYNOPSIS gives
# (its placeholders in lower case). No daemon: nothing here needs one.
# Needs groff-base.
load ../lib/helper

setup() {
        command -v groff >/dev/null || { echo "groff is missing: install groff-base" >&2; return 1; }
}

# One form a line, its wrapped lines joined and its spaces single, from
# "[Uu]sage: cachectl [-s SOCKET] FORM" and the "cachectl [-s SOCKET] FORM"
# lines below it, on stdin; the prefix dropped.
usage_forms() {
        awk 'NR == 1 && !/sage: / { exit }
             /^(cachectl: )?[Uu]sage: |^ +cachectl / { if (form != "") print form; form = $0; next }
             /^ / && form != "" { form = form " " $0; next }
             { exit }
             END { if (form != "") print form }' |
                sed -E 's/^(cachectl: )?[Uu]sage: +//; s/^ +//; s/^cachectl \[-s SOCKET\] //; s/ +/ /g; s/ $//'
}

# The text on stdin with its spaces and newlines made single spaces.
flat() {
        tr '\n' ' ' | sed -E 's/ +/ /g'
}

# The SYNOPSIS of ctl/cachectl.1, a synopsis a line, in plain ASCII.
synopsis() {
        groff -man -Tascii -rHY=0 -rLL=2000n -P-cbou "$TOP/ctl/cachectl.1" |
                sed -n '/^SYNOPSIS/,/^[A-Z]/p' | sed -E 's/^ +//; s/ +/ /g' | grep '^cachectl '
}

# A usage error of command $1: an option no command has.
usage_error() {
        "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" "$1" --no-such-option 2>&1
}

@test "every command's usage is one text: its --help, the top-level --help, its usage error, the man page" {
        local top man cmd forms form err bad=""
        top=$("$CTL" --help | sed -n '/^Commands:/,/^$/p' | flat)
        man=$(synopsis | tr 'A-Z' 'a-z')
        [ "$(wc -l <<<"$man")" -ge 10 ]
        for cmd in $("$CTL" __complete commands); do
                forms=$("$CTL" "$cmd" --help | usage_forms)
                [ -n "$forms" ] || { echo "$cmd --help shows no usage"; false; }
                err=$(usage_error "$cmd" | flat)
                while read -r form; do
                        [[ "$form" == "$cmd"* ]] || bad="$bad"$'\n'"$cmd --help: a form not of $cmd: $form"
                        [[ "$top" == *" $form "* ]] || bad="$bad"$'\n'"cachectl --help does not list: $form"
                        [[ "$err " == *"cachectl [-s SOCKET] $form "* ]] ||
                                bad="$bad"$'\n'"$cmd's usage error does not show: $form (it says: $err)"
                        grep -qxF "cachectl [-s socket] ${form,,}" <<<"$man" ||
                                bad="$bad"$'\n'"cachectl.1's SYNOPSIS does not give: $form"
                done <<<"$forms"
                # and nothing else of it: as many forms in each place
                [ "$(grep -c "^cachectl \[-s socket\] $cmd\( \|\$\)" <<<"$man")" -eq "$(wc -l <<<"$forms")" ] ||
                        bad="$bad"$'\n'"cachectl.1's SYNOPSIS has another number of forms of $cmd than its --help"
        done
        [ -z "$bad" ] || { echo "$bad"; false; }
}

@test "a usage error names the command's --help; check's goes to stdout as monitoring reads it" {
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" status --frob
        [ "$status" -eq 2 ]
        [ "${stderr_lines[-1]}" = "Try 'cachectl status --help'." ]
        run --separate-stderr "$CTL" -s "$BATS_TEST_TMPDIR/none.sock" check --frob
        [ "$status" -eq 3 ]
        [ "$output" = "CACHEKEEPER UNKNOWN - usage: cachectl [-s SOCKET] check" ]
}
