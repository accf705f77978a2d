#!/usr/bin/env bats
# require_mount: nothing is created or touched under a mount point that is
# not mounted; the cache comes up when it is mounted and goes unavailable
# when it is unmounted, and the daemon never pins the mount.
load ../lib/helper

setup() {
        require_root
        MNT=$BATS_TEST_TMPDIR/llm-storage
        CACHE=$MNT/ccache-aiter
        mkdir -p "$MNT"
        write_config_caches "{ name = \"local\"; path = \"$BATS_TEST_TMPDIR/local\"; max_size = \"1G\"; },
                             { name = \"aiter\"; path = \"$CACHE\"; max_size = \"40G\"; require_mount = \"$MNT\"; }"
}

teardown() {
        stop_daemon
        unmount_all
}

@test "a cache whose mount is absent is unavailable, untouched, then follows the mount" {
        start_ready
        [ "$(cache_field aiter state)" = unavailable ]
        [[ "$(cache_field aiter reason)" == *"'$MNT' is not a mount point"* ]]
        [ ! -e "$CACHE" ]                                     # nothing created on the wrong filesystem
        [ "$(status_jq '[.volumes[].caches[]] | index("aiter")')" = null ]
        run ctl status
        [ "$status" -eq 0 ]
        [[ "$(tr '\n' ' ' <<<"$output" | tr -s ' ')" == *"aiter"*"unavailable"*"is not a mount point"* ]]   # wrapped at 80

        mount_tmpfs "$MNT" 64M
        wait_for "[ \"\$(cache_field aiter state)\" = ok ]" 5
        [ -d "$CACHE" ]
        [ "$(stat -c %a "$CACHE")" = 1777 ]
        compile "$CACHE" 5
        wait_exact aiter "$CACHE"
        [ "$(cache_field aiter mount)" = "$MNT" ]
        [ "$(volume_field "$MNT" total_bytes)" -eq $((64 * 1024 * 1024)) ]

        # a plain umount must succeed: the daemon holds no fd on the volume
        umount "$MNT"
        wait_for "[ \"\$(cache_field aiter state)\" = unavailable ]" 5
        [ ! -e "$CACHE" ]
        [ "$(cache_field aiter files)" -eq 0 ]
        [ "$(cache_field local state)" = ok ]

        mount_tmpfs "$MNT" 64M
        wait_for "[ \"\$(cache_field aiter state)\" = ok ]" 5
        wait_exact aiter "$CACHE"
}

@test "without require_mount, a cache whose volume is unmounted (umount -l) is reported, not recreated below" {
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        printf '#!/bin/sh\necho "$CACHEKEEPER_EVENT $CACHEKEEPER_CACHE | $CACHEKEEPER_MESSAGE" >> "$1"\n' > "$BATS_TEST_TMPDIR/alert.sh"
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        setup_volume 64M
        # alert_min_interval 0s: cache-available follows cache-unavailable at once, not folded
        write_config_caches "{ name = \"v\"; path = \"$CACHE\"; max_size = \"1G\"; }" \
                "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" 'alert_min_interval = "0s";'
        start_ready
        [ "$(cache_field v mount)" = "$VOL" ]
        compile "$CACHE" 3
        wait_exact v "$CACHE"

        umount -l "$VOL"
        wait_for "[ \"\$(cache_field v state)\" = unavailable ]" 5
        [[ "$(cache_field v reason)" == *"its volume was unmounted"* ]]
        wait_for "grep -q '^cache-unavailable v | .*its volume was unmounted' '$ALERTS'" 5
        # what the daemon's checks do every second, now: set the cache up again
        ctl reload
        [ "$(cache_field v state)" = unavailable ]
        [ ! -e "$CACHE" ]
        [ "$(cache_field v files)" -eq 0 ]
        [ "$(grep -c '^cache-unavailable' "$ALERTS")" -eq 1 ]

        # the volume is back: so is the cache, and that is said too
        mount_tmpfs "$VOL" 64M
        wait_for "[ \"\$(cache_field v state)\" = ok ]" 5
        [ "$(cache_field v mount)" = "$VOL" ]
        wait_exact v "$CACHE"
        wait_for "grep -q '^cache-available v' '$ALERTS'" 5
}

@test "a cache a reload removes while its cache-unavailable stands: the alert gets its recovery, saying why" {
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        printf '#!/bin/sh\necho "$CACHEKEEPER_EVENT $CACHEKEEPER_LEVEL $CACHEKEEPER_CACHE | $CACHEKEEPER_MESSAGE" >> "$1"\n' > "$BATS_TEST_TMPDIR/alert.sh"
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        alert="alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];"
        write_config_caches "{ name = \"local\"; path = \"$BATS_TEST_TMPDIR/local\"; max_size = \"1G\"; },
                             { name = \"aiter\"; path = \"$CACHE\"; max_size = \"40G\"; require_mount = \"$MNT\"; }" \
                "$alert" 'alert_min_interval = "0s";'
        start_ready
        wait_for "grep -q '^cache-unavailable [a-z]* aiter ' '$ALERTS'" 10 || { cat "$ALERTS"; false; }
        # the container that used it is gone, and so is the cache from the config
        write_config_caches "{ name = \"local\"; path = \"$BATS_TEST_TMPDIR/local\"; max_size = \"1G\"; }" \
                "$alert" 'alert_min_interval = "0s";'
        ctl reload
        wait_for "grep -q '^cache-available .* aiter | Cache aiter is no longer configured: its cache-unavailable no longer stands.' '$ALERTS'" 10
        [ "$(grep -c ' aiter ' "$ALERTS")" -eq 2 ]
        [ "$(cache_field local state)" = ok ]
}
