#!/usr/bin/env bats
# The man pages: each renders without a single groff or man warning, and each
# documents what the binaries accept: every option and command of --help,
# every configuration key of daemon/config/config.c and etc/cachekeeper.conf, every
# field of a live `cachectl status --json`.
# Needs man-db and groff-base.
load ../lib/helper

PAGES="daemon/cachekeeperd.8 ctl/cachectl.1 etc/cachekeeper.conf.5"

setup() {
        command -v groff >/dev/null || { echo "groff is missing: install groff-base" >&2; return 1; }
        command -v man >/dev/null || { echo "man is missing: install man-db" >&2; return 1; }
}

teardown() {
        stop_daemon
}

# The page's text in plain ASCII, without hyphenation and with very long
# lines, so that every word is whole.
page_text() {
        groff -man -Tascii -rHY=0 -rLL=2000n -P-cbou "$TOP/$1"
}

# Fails, naming them, unless every word on stdin appears in page $1. A word
# counts only whole: "--to" is not found in "--top".
require_words() {
        local page=$1 text word missing=""
        text=$(page_text "$page")
        while read -r word; do
                [ -n "$word" ] || continue
                grep -qE -- "(^|[^A-Za-z0-9_-])${word}([^A-Za-z0-9_-]|\$)" <<<"$text" || missing="$missing $word"
        done
        [ -z "$missing" ] || { echo "$page does not mention:$missing" >&2; return 1; }
}

@test "each page renders without a warning (man in UTF-8 and C locales, groff -ww)" {
        for page in $PAGES; do
                out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings=w -E UTF-8 -l "$TOP/$page" 2>&1 >/dev/null)
                [ -z "$out" ] || { echo "man (UTF-8) on $page:"; echo "$out"; false; }
                out=$(LC_ALL=C MANROFFSEQ='' MANWIDTH=80 man --warnings=w -l "$TOP/$page" 2>&1 >/dev/null)
                [ -z "$out" ] || { echo "man (C) on $page:"; echo "$out"; false; }
                for dev in utf8 ascii; do
                        out=$(groff -man -T$dev -ww -z "$TOP/$page" 2>&1)
                        [ -z "$out" ] || { echo "groff -T$dev -ww on $page:"; echo "$out"; false; }
                done
                # Something was rendered: the page is not empty or broken.
                LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$TOP/$page" 2>/dev/null | grep -q '^NAME$'
                LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$TOP/$page" 2>/dev/null | grep -q '^SEE ALSO$'
        done
}

@test "each page carries the version the binaries print" {
        version=$("$CKD" --version | awk '{ print $2 }')
        [ -n "$version" ]
        for page in $PAGES; do
                grep -q "^\.TH .*\"cachekeeper $version\"" "$TOP/$page" ||
                        { echo "$page: .TH does not say \"cachekeeper $version\""; false; }
        done
}

@test "cachekeeperd.8 documents every option of cachekeeperd --help" {
        help=$("$CKD" --help)
        longs=$(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u)
        shorts=$(grep -oE -- '^ +-[a-zA-Z],' <<<"$help" | tr -d ' ,' | sort -u)
        [ "$(wc -l <<<"$longs")" -ge 6 ]    # --config --socket --test --debug --help --version
        [ "$(wc -l <<<"$shorts")" -ge 5 ]
        require_words daemon/cachekeeperd.8 <<<"$longs"$'\n'"$shorts"
}

@test "cachectl.1 documents every option and command of cachectl --help" {
        help=$("$CTL" --help)
        longs=$(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u)
        shorts=$(grep -oE -- '^ +-[a-zA-Z],' <<<"$help" | tr -d ' ,' | sort -u)
        commands=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | grep -oE '^  [a-z]+' | tr -d ' ')
        [ "$(wc -l <<<"$longs")" -ge 6 ]    # --json --to --dry-run --socket --help --version
        [ "$(wc -l <<<"$commands")" -ge 5 ] # status trim reload check metrics
        require_words ctl/cachectl.1 <<<"$longs"$'\n'"$shorts"$'\n'"$commands"
        # Each command has its own subsection.
        for cmd in $commands; do
                grep -qE "^\.SS $cmd( |\$)" "$TOP/ctl/cachectl.1" || { echo "no .SS for command $cmd"; false; }
        done
        # The environment variable that stands in for -s.
        grep -q 'CACHEKEEPER_SOCKET' <<<"$help"
        require_words ctl/cachectl.1 <<<CACHEKEEPER_SOCKET
}

@test "cachekeeper.conf.5 documents every key the daemon accepts" {
        # The key tables of the parser...
        table_keys=$(awk '/^static const char \*const (top|volumes|override|cache|remote)_keys\[\] = \{/ { on = 1; next }
                          on && /^\};/ { on = 0 }
                          on' "$TOP/daemon/config/config.c" | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u)
        # ...and every setting of the shipped file, commented-out ones included.
        shipped_keys=$(grep -oE '^[[:space:]]*(#[[:space:]]*)?[a-z_]+[[:space:]]*=' "$TOP/etc/cachekeeper.conf" |
                       sed -E 's/^[[:space:]]*(#[[:space:]]*)?//; s/[[:space:]]*=$//' | sort -u)
        for t in top volumes override cache remote; do
                grep -q "^static const char \*const ${t}_keys\[\] = {" "$TOP/daemon/config/config.c" ||
                        { echo "daemon/config/config.c has no ${t}_keys table any more: update this test"; false; }
        done
        [ "$(wc -l <<<"$table_keys")" -ge 24 ]
        [ "$(wc -l <<<"$shipped_keys")" -ge 20 ]
        # The shipped file uses no key the parser does not know.
        extra=$(comm -13 <(echo "$table_keys") <(echo "$shipped_keys"))
        [ -z "$extra" ] || { echo "etc/cachekeeper.conf has keys config.c does not: $extra"; false; }
        require_words etc/cachekeeper.conf.5 <<<"$table_keys"
}

@test "cachectl.1 names every field of a live status --json and every metric" {
        mkdir -m 1777 "$BATS_TEST_TMPDIR/share"
        write_config 1G '' "remotes = ( { name = \"s\"; url = \"file:$BATS_TEST_TMPDIR/share\"; max_size = \"1G\"; } );"
        start_ready
        # the share kept too: its fields and metrics are named as well
        wait_for "[ \"\$(status_jq '.remotes[0].state')\" = ok ]"
        ctl trim --to 1T >/dev/null           # a real trim (of nothing), so that last_trim is there too
        fields=$(status_jq '[paths | map(select(type == "string")) | last | select(. != null)] | unique[]')
        [ "$(wc -l <<<"$fields")" -ge 40 ]
        grep -qx last_trim <<<"$fields"
        require_words ctl/cachectl.1 <<<"$fields"
        metrics=$(ctl metrics | sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p')
        [ "$(wc -l <<<"$metrics")" -ge 10 ]
        require_words ctl/cachectl.1 <<<"$metrics"
}
