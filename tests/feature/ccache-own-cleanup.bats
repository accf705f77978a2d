#!/usr/bin/env bats
# ccache's own cleanup stays out of a cache the daemon keeps under its cap
# (issue 32, item 6): Debian's ccache 4.7 cleans one level-1 directory as
# soon as it alone holds more than max_size/16, and a small cache with a few
# big entries (HIP objects) holds far more than 1/16 of itself in one
# directory. With the max_size the daemon writes into ccache.conf, neither
# 4.7 nor 4.9/4.12 (which clean only past max_size for the whole cache) ever
# cleans while the daemon holds the cap. A writer that goes by a max_size
# of its own (CCACHE_MAXSIZE) is told of: status and an alert say what to
# set.
# tests/run: takes 25 s
load ../lib/helper

CCACHE47=/usr/bin/ccache
CCACHE49=/opt/ccache-4.9/bin/ccache
CCACHE412=/opt/ccache-4.12/bin/ccache

setup() {
        ALERTS=$BATS_TEST_TMPDIR/alerts.log
        write_alert_command "$ALERTS" "$BATS_TEST_TMPDIR/alert.sh"
        # ccache's counters reach the daemon every second (cachekeeperd.8).
        export CACHEKEEPER_TEST_FEED=1s
        setup_compile_cache 4M "" "alert_command = [ \"$BATS_TEST_TMPDIR/alert.sh\", \"$ALERTS\" ];" \
                'alert_min_interval = "0s";'
        # ccache.conf's max_size is the one that counts here, not the
        # helper's CCACHE_MAXSIZE=0; uncompressed, so that a big object
        # stays big in the cache.
        unset CCACHE_MAXSIZE
        export CCACHE_NOCOMPRESS=1
        # 4.8+'s inode cache (tmp/, 6 MB) would count against so small a cap.
        export CCACHE_NOINODECACHE=1
        SRC=$BATS_TEST_TMPDIR/src
        mkdir -p "$SRC"
}

teardown() {
        stop_daemon
}

# with CCACHE NAME BYTES: compiles NAME.c, an object of about BYTES, into
# the cache with ccache binary CCACHE.
with() {
        printf 'const char %s[%d] = { [0 ... %d] = 1 };\n' "$2" "$3" "$(($3 - 1))" > "$SRC/$2.c"
        CCACHE_DIR=$CACHE "$1" gcc -c "$SRC/$2.c" -o "$SRC/$2.o"
}

# ccache's cleanups_performed over the cache, as ccache -s adds it.
cleanups() {
        CCACHE_DIR=$CACHE "$CCACHE47" --print-stats | awk '$1 == "cleanups_performed" { print $2 }'
}

# The bytes of the largest level-1 directory of the cache, as du counts them.
largest_l1() {
        du -s -B1 "$CACHE"/[0-9a-f] | sort -n | tail -1 | cut -f1
}

@test "a small cache with big entries in one level-1 directory: no ccache (4.7, 4.9, 4.12) ever cleans it while the daemon holds the cap" {
        [ -x "$CCACHE47" ] && [ -x "$CCACHE49" ] && [ -x "$CCACHE412" ] || skip "needs ccache 4.7, 4.9 and 4.12"
        [[ "$("$CCACHE47" --version | head -1)" == *" 4.7."* ]]
        start_ready
        wait_for "grep -q '^max_size = ' '$CACHE/ccache.conf'"
        # Each 4.7 store checks its level-1 directory: a 400 kB entry is
        # more than max_size/16 would be at 1.2 x the cap (300 kB).
        for i in 1 2 3; do with "$CCACHE47" big$i 400000; done
        for i in 1 2 3 4 5 6; do with "$CCACHE47" small$i 1000; done
        with "$CCACHE49" big49 200000
        with "$CCACHE412" big412 200000
        with "$CCACHE47" big4 350000
        wait_exact t "$CACHE"
        echo "cache: $(cache_field t size_bytes) bytes, largest level-1 directory: $(largest_l1) bytes; $(grep '^max_size' "$CACHE/ccache.conf"); ccache cleanups: $(cleanups)" >&3
        # The daemon holds the cap: no eviction was due, none was made.
        [ "$(cache_field t size_bytes)" -lt 4000000 ]
        [ "$(cleanups)" -eq 0 ]
        [ "$(largest_l1)" -gt 300000 ]
        [ "$(cache_field t removed_files_total)" -eq 0 ]
        [ "$(cache_field t evicted_files_total)" -eq 0 ]
        [ "$(cache_field t ccache_cleanups_total)" -eq 0 ]
        ! grep -qs '^cache-ccache-cleanup ' "$ALERTS" || false
        # Every object is still a hit.
        for i in 1 2 3 4; do
                CCACHE_DIR=$CACHE "$CCACHE47" gcc -c "$SRC/big$i.c" -o "$SRC/big$i.o"
        done
        [ "$(CCACHE_DIR=$CACHE "$CCACHE47" --print-stats | awk '$1 == "direct_cache_hit" { print $2 }')" -eq 4 ]
}

@test "a writer whose own CCACHE_MAXSIZE makes ccache clean: status counts it, an alert says what to set" {
        start_ready
        wait_for "grep -q '^max_size = 80M$' '$CACHE/ccache.conf'"
        [ "$(cache_field t ccache_cleanups_total)" -eq 0 ]
        with "$CCACHE47" small1 1000
        # A container with its own limit: 4.7 cleans the level-1 directory
        # of every store past 1M/16.
        CCACHE_MAXSIZE=1M with "$CCACHE47" big1 400000
        [ "$(cleanups)" -ge 1 ]
        wait_for '[ "$(cache_field t ccache_cleanups_total)" -ge 1 ]'
        wait_for "grep -q '^cache-ccache-cleanup ' '$ALERTS'"
        grep '^cache-ccache-cleanup ' "$ALERTS" | grep -q "t .*ccache's own cleanup ran .*max_size = 80M.*CCACHE_MAXSIZE.*set CCACHE_MAXSIZE=80M"
}
