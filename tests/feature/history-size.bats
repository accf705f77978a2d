#!/usr/bin/env bats
# Every change of a cache's size is explained by its history and its status
# (issue 32, item 5): with real ccache, stores, a big temporary written and
# removed as ccache does (HIP builds: the size fell by megabytes with no
# eviction and no removal shown), an entry removed by another user and the
# daemon's own trim; each row's parts add up to its change of size, and so
# do the status's totals.
# tests/run: takes 8 s
load ../lib/helper

setup() {
        setup_compile_cache
        open_test_dir   # nobody removes an entry
}

teardown() {
        stop_daemon
}

# The parts of a row (jq), in bytes: what its change of size is made of.
PARTS='(.stored_bytes + .adjusted_up_bytes + .other_added_bytes - .evicted_bytes - .removed_bytes - .adjusted_down_bytes - .other_removed_bytes)'

# History of the last 10 minutes, JSON.
rows() {
        ctl history t --json --minutes 10
}

# Checks that history and status explain the size: each row's parts are its
# change from the row before, and all rows' parts (every row since the
# daemon started) the change from the size the status's parts start from;
# the status's own totals say the same.
explained() {
        local h s
        h=$(rows)
        s=$(status_jq '.caches[] | select(.name == "t")')
        jq -e "[.buckets | . as \$b | range(1; length) | select(\$b[.].size_bytes != null and \$b[. - 1].size_bytes != null)
                | \$b[.] as \$r | (\$r.size_bytes - \$b[. - 1].size_bytes) == (\$r | $PARTS)] | all" <<<"$h" > /dev/null || {
                echo "rows whose parts are not their change: $h" >&2
                return 1
        }
        jq -e --argjson s "$s" "(\$s.size_base_bytes + ([.buckets[] | $PARTS] | add)) == (.buckets[-1].size_bytes)
                                and .buckets[-1].size_bytes == \$s.size_bytes" <<<"$h" > /dev/null || {
                echo "history: $h; status: $s" >&2
                return 1
        }
        jq -e '.size_base_bytes + .stored_bytes_total + .adjusted_up_bytes_total + .other_added_bytes_total
               - .evicted_bytes_total - .removed_bytes_total - .adjusted_down_bytes_total - .other_removed_bytes_total
               == .size_bytes' <<<"$s" > /dev/null || {
                echo "status's totals do not add up: $s" >&2
                return 1
        }
}

@test "a big temporary written and removed, a removal by another user, a trim: each change of size explained" {
        start_ready
        compile "$CACHE" 4
        wait_exact t "$CACHE"
        size0=$(cache_field t size_bytes)

        # What ccache does with a big object (atomic write: a temporary
        # next to the entry, renamed or removed), by another user: 6 MB.
        dir=$(dirname "$(find "$CACHE" -mindepth 3 -type f -name '*R' | head -n 1)")
        as_nobody dd if=/dev/urandom of="$dir/0123456789abcdefR.tmp.Ab12Cd.tmp" bs=1M count=6 status=none
        wait_for "[ \$(cache_field t size_bytes) -ge $((size0 + 6000000)) ]"
        wait_exact t "$CACHE"
        as_nobody rm "$dir/0123456789abcdefR.tmp.Ab12Cd.tmp"
        wait_exact t "$CACHE"
        [ "$(cache_field t size_bytes)" -eq "$size0" ]
        # The fall: no eviction, no removal of an entry, and still explained.
        [ "$(cache_field t evicted_files_total)" -eq 0 ]
        [ "$(cache_field t removed_files_total)" -eq 0 ]
        [ "$(cache_field t other_removed_bytes_total)" -ge 6291456 ]
        explained
        rows | jq -e '[.buckets[].other_removed_bytes] | add >= 6291456' > /dev/null
        # The table says it too: OTHER, the rest of each row's change of
        # size (the temporary's megabytes, unless it came and went within
        # the row), the same net as the JSON's (test-report: its format).
        run ctl history t --minutes 10
        [ "$status" -eq 0 ]
        [[ "${lines[1]}" == "TIME "*"REMOVED"*"OTHER"*"SIZE" ]]
        for l in "${lines[@]}"; do [ "${#l}" -le 80 ]; done
        [ "$(printf '%s\n' "${lines[@]:2}" | awk '{ print ($(NF - 1) == "0") }' | tr -d '\n')" = \
          "$(rows | jq -r '.buckets[] | if .other_added_bytes + .adjusted_up_bytes == .other_removed_bytes + .adjusted_down_bytes then 1 else 0 end' | tr -d '\n')" ]

        # An entry removed by another user, then the daemon's own trim.
        victim=$(find "$CACHE" -mindepth 3 -type f -name '*R' | head -n 1)
        as_nobody rm "$victim"
        wait_for '[ "$(cache_field t removed_files_total)" -eq 1 ]'
        ctl trim t --to 1k
        wait_for '[ "$(cache_field t evicted_files_total)" -gt 0 ]'
        wait_exact t "$CACHE"
        explained
        rows | jq -e '([.buckets[].evicted_bytes] | add) > 0 and ([.buckets[].removed_bytes] | add) > 0' > /dev/null
}
