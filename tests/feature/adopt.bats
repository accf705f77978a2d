#!/usr/bin/env bats
# Adopting an existing cache is quiet and kind (issue 13, item 11): many
# mode repairs make one line with a count and a few examples; the first
# takeover of ccache.conf says what it changed and what was there before.
# tests/run: takes 38 s
load ../lib/helper

setup() {
        CACHE=$BATS_TEST_TMPDIR/cache
        mkdir -m 1777 "$CACHE"
        write_config 1G
}

teardown() {
        stop_daemon
}

@test "a cache whose 274 directories have the wrong mode: one summary line with a count and examples, not one per directory" {
        # every repair round alerted at once (none folded into a later minute's): one line is one round
        write_config 1G "" 'alert_min_interval = "0s";'
        # what a root build with umask 022 leaves behind: every directory ccache keeps at 0755
        mkdir -m 0755 "$CACHE/tmp" "$CACHE/lock"
        for a in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
                mkdir -m 0755 "$CACHE/$a"
                for b in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do mkdir -m 0755 "$CACHE/$a/$b"; done
        done
        start_ready
        [ "$(find "$CACHE" -mindepth 1 -type d ! -perm 0777 | wc -l)" -eq 0 ]
        cat "$BATS_TEST_TMPDIR/daemon.log"
        [ "$(grep -c 'repaired the mode' "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
        grep -q "Cache t: repaired the modes of 274 directories in $CACHE ([^)]* and 271 more; [^ ]* was 0755, now 0777): a writer with a restrictive umask" \
                "$BATS_TEST_TMPDIR/daemon.log"
        [ "$(cache_field t mode_repairs)" = 274 ]
        # one more later is one line of its own, naming it
        chmod 0700 "$CACHE/7/c"
        wait_for "[ \"\$(stat -c %a '$CACHE/7/c')\" = 777 ]" 5
        wait_for "grep -q 'repaired the mode of $CACHE/7/c: was 0700, now 0777' '$BATS_TEST_TMPDIR/daemon.log'" 5
        [ "$(grep -c 'repaired the mode' "$BATS_TEST_TMPDIR/daemon.log")" -eq 2 ]
}

@test "the first takeover of a cache logs what it changed in ccache.conf and the previous values; later rewrites do not claim it" {
        printf 'max_size = 5G\numask = 022\ncompression_level = 3\n' > "$CACHE/ccache.conf"
        start_ready
        grep -q "Cache t: took over $CACHE/ccache.conf: umask = 000 (was 022), max_size = 20G (was 5G); its other safe settings are kept." \
                "$BATS_TEST_TMPDIR/daemon.log"
        [ "$(cat "$CACHE/ccache.conf")" = "$(printf 'max_size = 20G\numask = 000\ncompression_level = 3')" ]
        # a new cap is no takeover
        write_config 2G
        ctl reload
        wait_for "grep -q 'wrote umask = 000 and max_size = 40G to ccache.conf (max_size was 20G)' '$BATS_TEST_TMPDIR/daemon.log'" 5
        [ "$(grep -c 'took over' "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
        # nor is a restart on a file the daemon wrote: nothing to write
        stop_daemon
        start_ready
        ! grep -q 'took over\|wrote' "$BATS_TEST_TMPDIR/daemon.log" || false
}

@test "a cache without ccache.conf: the daemon says it wrote one; unset settings are said to be unset" {
        start_ready
        grep -q "Cache t: wrote $CACHE/ccache.conf, there was none: umask = 000, max_size = 20G." "$BATS_TEST_TMPDIR/daemon.log"
        stop_daemon
        printf 'compression = true\n' > "$CACHE/ccache.conf"
        start_ready
        grep -q "Cache t: took over $CACHE/ccache.conf: umask = 000 (was unset), max_size = 20G (was unset)" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "--describe-conf says what each cache's ccache.conf keeps once the daemon is gone (for make uninstall, a purge)" {
        mkdir -p "$BATS_TEST_TMPDIR/other"
        write_config_caches "{ name = \"t\"; path = \"$CACHE\"; max_size = \"1G\"; }, { name = \"o\"; path = \"$BATS_TEST_TMPDIR/other\"; max_size = \"1G\"; }"
        start_ready
        stop_daemon
        rm -f "$BATS_TEST_TMPDIR/other/ccache.conf"
        run --separate-stderr "$CKD" --describe-conf -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "t: $CACHE/ccache.conf keeps umask = 000 (what ccache writes stays writable by every user) and max_size = 20G (ccache's own cleanup trims the cache there); ccache goes on using the cache with them" ]
        [ "${lines[1]}" = "o: $BATS_TEST_TMPDIR/other/ccache.conf: none; ccache's defaults apply" ]
        # a symlink there is not followed
        ln -s "$CACHE/ccache.conf" "$BATS_TEST_TMPDIR/other/ccache.conf"
        run --separate-stderr "$CKD" --describe-conf -c "$BATS_TEST_TMPDIR/ck.conf"
        [ "${lines[1]}" = "o: $BATS_TEST_TMPDIR/other/ccache.conf: Too many levels of symbolic links; ccache's defaults apply" ]
}
