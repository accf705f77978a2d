#!/usr/bin/env bats
# cachectl status's table against a real daemon: the shipped config's two
# caches fit 80 columns, caps read as configured, a long name widens its
# column and every row stays aligned, colour only on a terminal.
load ../lib/helper

setup() {
        require_root
}

teardown() {
        stop_daemon
        unmount_all
        for m in /mnt/llm-storage /mnt /var/cache; do
                [ "${SHIPPED_MOUNTS:-}" != 1 ] || ! mountpoint -q "$m" || umount -l "$m"
        done
}

# The shipped config as is, but for the socket and state_dir (the test's),
# and mi210's cap written in binary units ("1.5Ti"). Its paths are the real
# ones, each on a tmpfs of its own: only in a private mount namespace.
shipped_config() {
        [ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] ||
                skip "needs a private mount namespace (tests/run gives one)"
        SHIPPED_MOUNTS=1
        mount_tmpfs /var/cache 64M
        mount_tmpfs /mnt 1M
        mkdir -p /mnt/llm-storage
        sed -e "s|^socket = .*|socket = \"$BATS_TEST_TMPDIR/ck.sock\";|" \
            -e "s|^state_dir = .*|state_dir = \"$BATS_TEST_TMPDIR/state\";|" \
            -e 's|max_size = "100G";|max_size = "1.5Ti";|' "$TOP/etc/cachekeeper.conf" > "$BATS_TEST_TMPDIR/ck.conf"
        grep -q 'max_size = "1.5Ti";' "$BATS_TEST_TMPDIR/ck.conf"
}

# Every line of $1 at most $2 columns wide.
max_width() {
        local w=0 line
        while IFS= read -r line; do
                [ ${#line} -le "$w" ] || w=${#line}
        done <<<"$1"
        [ "$w" -le "$2" ] || { echo "$w columns:" >&2; echo "$1" >&2; return 1; }
}

# The cache table's rows (lines 2 to $2 + 1 of $1) line up under its
# titles: each row's state starts under STATE, its mode under MODE, its
# file count ends under FILES's end.
aligned() {
        local header state_at mode_at files_end line i
        header=$(head -n 1 <<<"$1")
        state_at=$(awk '{ print index($0, "STATE") - 1 }' <<<"$header")
        mode_at=$(awk '{ print index($0, "MODE") - 1 }' <<<"$header")
        files_end=$(awk '{ print index($0, "FILES") + 4 }' <<<"$header")
        for i in $(seq 2 $(($2 + 1))); do
                line=$(sed -n "${i}p" <<<"$1")
                [ "${line:$((state_at - 1)):1}" = " " ] && [ "${line:$state_at:1}" != " " ] || return 1
                [ "${line:$((mode_at - 1)):5}" = " 1777" ] || return 1
                [ "${line:$((files_end - 1)):1}" != " " ] && [ "${line:$files_end:1}" = " " ] || return 1
        done
}

@test "the shipped two caches: at most 80 columns, caps as configured, mounted or not" {
        shipped_config
        start_ready
        compile /var/cache/mi210-ccache 3
        [ "$(cache_field mi210 max_size_text)" = 1.5Ti ]
        [ "$(cache_field mi210 max_size_bytes)" = $((3 * 1024 ** 4 / 2)) ]
        run ctl status
        [ "$status" -eq 0 ]
        echo "$output"
        [[ "${lines[1]}" == "mi210 "*" / 1.5Ti "* ]]
        [[ "${lines[2]}" == "aiter unavailable "*" / 40G "* ]]
        [[ "${lines[3]}" == "aiter: unavailable: '/mnt/llm-storage' is not a mount point" ]]
        max_width "$output" 80
        aligned "$output" 2

        mount_tmpfs /mnt/llm-storage 64M
        wait_for "[ \"\$(cache_field aiter state)\" = ok ]" 10
        compile /mnt/llm-storage/ccache-aiter 2
        run ctl status
        echo "$output"
        [[ "${lines[2]}" == "aiter ok "*" / 40G "* ]]
        [[ "$output" == *$'\n'"/mnt/llm-storage "*" ok"* ]]
        max_width "$output" 80
        aligned "$output" 2
        # the detail view: the same row, the detail under it
        run ctl status mi210
        [[ "${lines[1]}" == "mi210 "*" / 1.5Ti "* ]]
        [[ "${lines[2]}" == "  working set 1h/24h/7d/30d: "* ]]
        max_width "$output" 80
}

@test "a long cache name widens its column; every row stays aligned" {
        long=cache-with-a-name-of-32-chars-xx
        write_config_caches "{ name = \"t\"; path = \"$BATS_TEST_TMPDIR/t\"; max_size = \"1G\"; },
                             { name = \"$long\"; path = \"$BATS_TEST_TMPDIR/long\"; max_size = \"512Mi\"; }"
        start_ready
        compile "$BATS_TEST_TMPDIR/long" 2
        run ctl status
        [ "$status" -eq 0 ]
        echo "$output"
        [[ "${lines[0]}" == "CACHE"*"                            STATE "* ]]
        [[ "${lines[2]}" == "$long ok "*" / 512Mi "* ]]
        aligned "$output" 2
}

@test "colour for states and levels on a terminal only: not with NO_COLOR, not in a pipe" {
        write_config 1G
        start_ready
        cmd="'$CTL' -s '$BATS_TEST_TMPDIR/ck.sock' status"
        out=$(TERM=xterm script -qec "$cmd" /dev/null < /dev/null)
        echo "$out" | cat -v
        [[ "$out" == *$'\e[32mok'* ]]                 # the state
        [[ "$out" == *$'\e[32mok'*$'\e[32mok'* ]]     # and the volume's level
        [[ "$out" == *$'\n'"t "* ]]                      # the name itself plain
        out=$(NO_COLOR=1 TERM=xterm script -qec "$cmd" /dev/null < /dev/null)
        [[ "$out" == *" ok "* ]]
        [[ "$out" != *$'\e'* ]]
        out=$(TERM=xterm script -qec "$cmd | cat" /dev/null < /dev/null)
        [[ "$out" == *" ok "* ]]
        [[ "$out" != *$'\e'* ]]
        run ctl status
        [[ "$output" != *$'\e'* ]]
}
