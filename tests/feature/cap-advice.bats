#!/usr/bin/env bats
# Is the cap right (issue 12 items 3 and 7), with real ccache: a repeated
# build under a cap smaller than its working set raises cache-cap-small,
# once, with a suggested cap at least the build's working set, and status
# says so in words; under a cap big enough it never does; the alert
# recovers when the cap is raised (reload).
# tests/run: takes 72 s
load ../lib/helper

setup() {
        require_root
        CACHE=$BATS_TEST_TMPDIR/cache
        mkdir -m 1777 "$CACHE"
        export CCACHE_MAXSIZE=0
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        cat > "$BATS_TEST_TMPDIR/alert.sh" <<'EOS'
#!/bin/sh
echo "$CACHEKEEPER_EVENT|$CACHEKEEPER_LEVEL|$CACHEKEEPER_CACHE|$CACHEKEEPER_MESSAGE" >> "$1"
EOS
        chmod +x "$BATS_TEST_TMPDIR/alert.sh"
        touch "$ALERTS"
        # the cap is judged at each feed of ccache's counters: every second
        # here, not every 10 s (cachekeeperd.8, ENVIRONMENT)
        export CACHEKEEPER_TEST_FEED=1s
}

teardown() {
        stop_daemon
}

config() {
        write_config "$1" "${2:-}" "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" 'alert_min_interval = "0s";'
}

# "entries others": bytes of every entry one build of N files makes, and of
# the rest (stats files...), measured on a cache of its own nobody trims.
build_working_set() {
        compile "$BATS_TEST_TMPDIR/ref" "$1" >/dev/null
        find "$BATS_TEST_TMPDIR/ref" -type f -printf '%b %f\n' |
                awk '{ if ($2 ~ /[RM]$/) e += $1 * 512; else o += $1 * 512 } END { print e, o }'
}

@test "cap-small: a build larger than its cap raises it once, with a cap that would hold the build, and recovers" {
        read -r ws others < <(build_working_set 30)
        # Room for the stats files and half the build's entries.
        config "$(((others + ws / 2) / 1000))k" 'trim_to = 0.9; regret_alert = "10%";'
        start_ready
        compile "$CACHE" 30
        compile "$CACHE" 30          # what the cap evicted is stored again
        wait_for 'grep -q "^cache-cap-small|warning|t|" "$ALERTS"' 60
        [ "$(grep -c '^cache-cap-small|' "$ALERTS")" = 1 ]
        grep '^cache-cap-small|' "$ALERTS" | grep -q 'cap looks small: .*would have kept them'
        [ "$(status_jq '.caches[0].regret.stores_7d')" -ge 10 ]
        suggested=$(status_jq '.caches[0].regret.suggested_max_size_bytes')
        advice=$(cache_field t cap_advice)
        [[ "$advice" == *"cap looks small"* ]]
        run ctl status t
        [[ "$output" == *"cap looks small"* ]]
        # the advice, the writers and every other line: 80 columns, wrapped at spaces
        [ "${#advice}" -gt 80 ]
        ! awk 'length($0) > 80 { print length($0) ": " $0; bad = 1 } END { exit !bad }' <<<"$output" || false
        # the table's advice is the status's, once the last regretted stores are counted (both may move until then)
        wait_for 'advice=$(cache_field t cap_advice); run ctl status t
                [[ "$(tr "\n" " " <<<"$output" | tr -s " ")" == *"$(tr -s " " <<<"$advice")"* ]]' 20
        # The suggestion in the message holds the whole build.
        said=$(grep '^cache-cap-small|' "$ALERTS" | sed -n 's/.*about \([0-9.]*[kMGT]\) would have kept them.*/\1/p')
        [ -n "$said" ]
        said_bytes=$(numfmt --from=si "${said/k/K}")
        cat "$ALERTS" >&2
        echo "working set $ws, suggested $said ($said_bytes), regret's $suggested" >&2
        [ "$said_bytes" -ge "$ws" ]

        # The cap raised well above it: the alert recovers, once.
        config 1G 'regret_alert = "100%";'
        ctl reload
        wait_for 'grep -q "^cache-cap-small|ok|t|" "$ALERTS"' 60
        [ "$(grep -c '^cache-cap-small|' "$ALERTS")" = 2 ]
        [ "$(cache_field t cap_advice)" = null ]
}

@test "cap-small: under a cap big enough for the build it never fires" {
        config 1G
        start_ready
        compile "$CACHE" 30
        compile "$CACHE" 30
        # The counters were fed (the rate shows the rebuild's hits): the
        # advice was checked on that same feed.
        wait_for '[ "$(cache_field t hit_rate_1h)" = 0.5 ]' 60
        [ "$(cache_field t regret.stores_7d)" = 0 ]
        [ "$(cache_field t cap_advice)" = null ]
        ! grep -q '^cache-cap-small|' "$ALERTS" || false
}
