#!/usr/bin/env bats
# What an admin trips over (issue 24): a failure that repeats at every retry
# is logged once, and again when it changes or clears, never every few
# seconds while the admin reads the journal.
load ../lib/helper

setup() {
        require_root
}

teardown() {
        stop_daemon
        unmount_all
}

@test "a volume out of inodes: 'cannot keep …/lock usable' is said once, its recovery once, not at every retry" {
        VOL=$BATS_TEST_TMPDIR/vol
        CACHE=$VOL/cache
        mkdir -p "$VOL"
        mount -t tmpfs -o size=16M,nr_inodes=2000 cktest "$VOL"
        write_config 1G
        start_daemon -d
        wait_ready
        # Every inode taken; then ccache.conf and lock/ renamed away (a rename
        # frees none): the daemon must write both again, and cannot. The
        # ccache.conf it cannot write is retried every 2 s, and each retry
        # is a full upkeep pass that fails on lock/ again.
        mkdir "$VOL/fill"
        i=0
        while : 2>/dev/null > "$VOL/fill/$i"; do i=$((i + 1)); done
        [ "$i" -gt 100 ]
        mv "$CACHE/ccache.conf" "$VOL/conf.away"
        mv "$CACHE/lock" "$VOL/lock.away"
        log=$BATS_TEST_TMPDIR/daemon.log
        # three passes failed: said, or (debug) said already
        wait_for "[ \$(grep -cE 'cannot keep $CACHE/lock usable|still cannot keep 1 directory of $CACHE usable \\(said already\\)' '$log') -ge 3 ]" 60
        [ "$(grep -c "cannot keep $CACHE/lock usable: No space left on device" "$log")" -eq 1 ]
        [ "$(grep -c "cannot write $CACHE/ccache.conf" "$log")" -eq 1 ]
        # Inodes again: put right, and said once.
        rm -rf "$VOL/fill"
        wait_for "[ -d '$CACHE/lock' ] && grep -q 'its directories in $CACHE are usable again' '$log'" 30
        wait_for "grep -q 'ccache.conf is written again' '$log'" 10
        [ "$(grep -c "are usable again" "$log")" -eq 1 ]
        [ "$(grep -c "cannot keep $CACHE/lock usable" "$log")" -eq 1 ]
}

@test "a stats file a user replaced by a directory: 'cannot update ccache's counters' said once, not at every trim, and the recovery once" {
        CACHE=$BATS_TEST_TMPDIR/cache
        open_test_dir
        write_config 1G
        "$HELPERS/gencache" --tiny --quiet "$CACHE" 3000
        start_ready
        log=$BATS_TEST_TMPDIR/daemon.log
        # every level-1 directory's stats file, a directory now (they are 0777: anyone may)
        for d in "$CACHE"/[0-9a-f]; do
                rm -f "$d/stats"
                "${AS_NOBODY[@]}" mkdir "$d/stats"
        done
        size=$(ctl status --json | jq '.caches[0].size_bytes')
        for i in 1 2 3; do
                ctl trim t --to "$((size * (10 - i) / 10 / 1024))k" > /dev/null
        done
        [ "$(grep -c "cannot update ccache's counters" "$log")" -eq 1 ]
        # ccache's stats files again (as its next store writes them)
        for d in "$CACHE"/[0-9a-f]; do rmdir "$d/stats"; yes 0 | head -85 > "$d/stats"; done
        ctl trim t --to "$((size * 6 / 10 / 1024))k" > /dev/null
        wait_for "grep -q \"ccache's counters are updated again\" '$log'" 10
        [ "$(grep -c "cannot update ccache's counters" "$log")" -eq 1 ]
}
