#!/usr/bin/env bats
# cachekeeperd -t: the golden outputs, the shipped config, and errors on stderr.
# tests/run: takes 33 s
load ../lib/helper

teardown() {
        stop_daemon
        # the sandbox test's units, if it failed before it took them away
        ! findmnt -rn -o SOURCE /etc/systemd/system | grep -qx ckunits || umount /etc/systemd/system
        unmount_all
}

@test "-t prints each golden config normalised" {
        cd "$TOP"
        for conf in tests/config/*.conf; do
                run --separate-stderr "$CKD" -t -c "$conf"
                [ "$status" -eq 0 ] || { echo "$conf: exit $status: $stderr"; false; }
                diff -u "${conf%.conf}.ok" - <<<"$output"
        done
}

@test "the shipped etc/cachekeeper.conf passes -t and is the seed's set-up" {
        cd "$TOP"
        run --separate-stderr "$CKD" -t -c etc/cachekeeper.conf
        [ "$status" -eq 0 ]
        diff -u tests/config/shipped.ok - <<<"$output"
        grep -q 'path = "/var/cache/mi210-ccache"' <<<"$output"
        grep -q 'max_size = "100G";  # 100000000000 bytes' <<<"$output"
        grep -q 'require_mount = "/mnt/llm-storage"' <<<"$output"
}

@test "-t output is a config -t reads back the same (every golden config and the shipped one)" {
        cd "$TOP"
        for conf in tests/config/*.conf etc/cachekeeper.conf; do
                run --separate-stderr "$CKD" -t -c "$conf"
                [ "$status" -eq 0 ]
                printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/again.conf"
                run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/again.conf"
                [ "$status" -eq 0 ] || { echo "$conf: its -t output is refused: $stderr"; false; }
                # the same, but for the first line, which names the file read
                diff -u <(tail -n +2 "$BATS_TEST_TMPDIR/again.conf") <(tail -n +2 <<<"$output")
        done
        # sizes as configured, their bytes in a comment; fractions and percentages exact
        cat > "$BATS_TEST_TMPDIR/odd.conf" <<'EOC'
volumes = { warn_free = "1.5Ti"; crit_free = "0.000123456789%"; };
caches = ( { name = "a"; path = "/srv/a"; max_size = "1.234567M"; trim_to = 0.123456789;
             regret_alert = "12.3456789%"; silent_hit_rate = "0.1%"; } );
EOC
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/odd.conf"
        [ "$status" -eq 0 ]
        grep -qF 'warn_free = "1.5Ti";  # 1649267441664 bytes' <<<"$output"
        grep -qF 'crit_free = "0.000123456789%";' <<<"$output"
        grep -qF 'max_size = "1.234567M";  # 1234567 bytes' <<<"$output"
        grep -qF 'trim_to = 0.123456789;' <<<"$output"
        grep -qF 'regret_alert = "12.3456789%";' <<<"$output"
        grep -qF 'silent_hit_rate = "0.1%";' <<<"$output"
        printf '%s\n' "$output" > "$BATS_TEST_TMPDIR/again.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/again.conf"
        [ "$status" -eq 0 ]
        diff -u <(tail -n +2 "$BATS_TEST_TMPDIR/again.conf") <(tail -n +2 <<<"$output")
}

# check_hint TEXT HINT: -t on TEXT fails with FILE:LINE: syntax error: HINT,
# and what the hint says to do, done to TEXT, loads (apply_hint).
check_hint() {
        printf '%b' "$1" > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        echo "got: $stderr"
        [ "$status" -eq 1 ]
        [ -z "$output" ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/bad.conf:$2" ]
        apply_hint "${2%%:*}" "${2#*: syntax error}" < "$BATS_TEST_TMPDIR/bad.conf" > "$BATS_TEST_TMPDIR/fixed.conf" ||
                return 0   # no hint, or one that suggests no edit
        cat "$BATS_TEST_TMPDIR/fixed.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/fixed.conf"
        echo "the hint's fix: $stderr"
        [ "$status" -eq 0 ]
}

# apply_hint LINE HINT: stdin with HINT's edit done on LINE (or on the line
# it names), to stdout; status 1 when HINT suggests no edit. The edits are
# the hints' own words: `KEY = VALUE;` replaces KEY's value; "remove the ','
# after its last element (line N)"; "missing 'C' at the end of line N".
apply_hint() {
        local line=$1 hint=$2
        if [[ "$hint" =~ [:,]\ ([a-z_]+)\ =\ (.*)\;$ ]]; then
                KEY=${BASH_REMATCH[1]} VALUE=${BASH_REMATCH[2]} L=$line perl -pe \
                        'if ($. == $ENV{L}) { s/\b\Q$ENV{KEY}\E\s*=\s*[^;,})\]\n]*/$ENV{KEY} = $ENV{VALUE}/ or die }'
        elif [[ "$hint" =~ remove\ the\ \',\'\ after\ its\ last\ element\ \(line\ ([0-9]+)\)$ ]]; then
                L=${BASH_REMATCH[1]} perl -pe 'if ($. == $ENV{L}) { s/,(\s*(#.*)?)$/$1/ or s/,(\s*[\])])/$1/ or die }'
        elif [[ "$hint" =~ missing\ \'(.)\'\ at\ the\ end\ of\ line\ ([0-9]+) ]]; then
                C=${BASH_REMATCH[1]} L=${BASH_REMATCH[2]} perl -pe 'if ($. == $ENV{L}) { s/(\s*)$/$ENV{C}$1/ }'
        else
                return 1
        fi
}

@test "a bare syntax error gets a hint when the line shows the likely cause, still as FILE:LINE: message" {
        c='caches = (\n  { name = "a"; path = "/srv/a";'
        check_hint "$c\n    max_size = 100G; }\n);\n" '3: syntax error: sizes are strings: max_size = "100G";'
        check_hint "volumes = {\n  warn_free = 10%;\n};\n$c max_size = \"1G\"; }\n);\n" \
                '2: syntax error: percentages are strings: warn_free = "10%";'
        check_hint "volumes = {\n  check_interval = 10s; # often\n};\n$c max_size = \"1G\"; }\n);\n" \
                '2: syntax error: durations are strings: check_interval = "10s";'
        check_hint "admin_group = wheel;\n$c max_size = \"1G\"; }\n);\n" \
                '1: syntax error: strings are quoted: admin_group = "wheel";'
        # a trailing comma in a list, on the same line or lines before
        check_hint "$c max_size = \"1G\";\n    ccache_conf_allow = [ \"base_dir\", ]; }\n);\n" \
                "3: syntax error: an array must not end with a comma: remove the ',' after its last element (line 3)"
        check_hint "$c max_size = \"1G\"; },\n  # the end\n\n);\n" \
                "5: syntax error: a list must not end with a comma: remove the ',' after its last element (line 2)"
        # a separator missing at the end of the line before
        check_hint "$c max_size = \"1G\"; }\n  { name = \"b\"; path = \"/srv/b\"; max_size = \"1G\"; }\n);\n" \
                "3: syntax error: missing ',' at the end of line 2 (elements of a list are separated by commas)"
        # no likely cause on the line: libconfig's message as it is
        check_hint "$c max_size = \"1G\"; }\n);\n}\n" '4: syntax error'
        # inside a one-line group, the layout the shipped comments use; a
        # ';' inside a string separates nothing
        check_hint 'caches = ( { name = "a"; path = "/srv/a"; max_size = 100G; } );\n' \
                '1: syntax error: sizes are strings: max_size = "100G";'
        check_hint 'caches = ( { name = "a"; path = "/srv/a;b = 1G"; max_size = "1G"; trim_to = 90%; } );\n' \
                '1: syntax error: trim_to is a fraction, not a percentage: trim_to = 0.9;'
        # each hint says what the key takes: no percentage where none loads
        check_hint "$c max_size = 90%; }\n);\n" '2: syntax error: max_size is a size such as "100G", not a percentage'
        check_hint "$c max_size = \"1G\";\n    idle_after = 10d; }\n);\n" \
                '3: syntax error: durations are strings: idle_after = "10d";'
        check_hint "$c max_size = \"1G\";\n    regret_alert = 12.5%; }\n);\n" \
                '3: syntax error: percentages are strings: regret_alert = "12.5%";'
        check_hint "volumes = {\n  min_free = 5G;\n};\n$c max_size = \"1G\"; }\n);\n" \
                '2: syntax error: sizes are strings: min_free = "5G";'
}

@test "alert_command as one string with spaces: the error gives the list, and that list loads" {
        printf 'alert_command = "/bin/echo the pager";\ncaches = ( { name = "a"; path = "/srv/a"; max_size = "1G"; } );\n' \
                > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        echo "$stderr"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/bad.conf:1: 'alert_command' is run without a shell, so \"/bin/echo the pager\" names no program: give the program and its arguments as a list, alert_command = [ \"/bin/echo\", \"the\", \"pager\" ];" ]
        apply_hint 1 "$stderr" < "$BATS_TEST_TMPDIR/bad.conf" > "$BATS_TEST_TMPDIR/fixed.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/fixed.conf"
        echo "$stderr"
        [ "$status" -eq 0 ]
        grep -qxF 'alert_command = [ "/bin/echo", "the", "pager" ];' <<<"$output"
}

@test "-c naming a directory, or anything but a regular file: a clear error and exit 1, never libconfig's exit" {
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR: is a directory, not a config file" ]
        mkfifo "$BATS_TEST_TMPDIR/fifo"
        # a FIFO with no writer: refused at once, never waited on
        run --separate-stderr timeout 10 "$CKD" -t -c "$BATS_TEST_TMPDIR/fifo"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/fifo: is not a regular file" ]
        # and a reload onto a directory keeps the daemon and its config
        write_config
        start_ready
        cp "$BATS_TEST_TMPDIR/ck.conf" "$BATS_TEST_TMPDIR/good.conf"
        rm "$BATS_TEST_TMPDIR/ck.conf"
        mkdir "$BATS_TEST_TMPDIR/ck.conf"
        run ctl reload
        [ "$status" -eq 1 ]
        [[ "$output" == *"ck.conf: is a directory, not a config file"* ]]
        kill -0 "$DAEMON_PID"
        ctl status > /dev/null
        stop_daemon
}

@test "-t warns (exit 0, stderr) about an admin_group that is no group, an alert_command that cannot run, thresholds that swap" {
        mkdir -p "$BATS_TEST_TMPDIR/vol"
        printf '#!/bin/sh\n' > "$BATS_TEST_TMPDIR/page-me"
        chmod 644 "$BATS_TEST_TMPDIR/page-me"
        cat > "$BATS_TEST_TMPDIR/w.conf" <<EOC
admin_group = "no-such-group-ck";
alert_command = [ "$BATS_TEST_TMPDIR/page-me", "-x" ];
volumes = { warn_free = "10%"; crit_free = "100000T"; warn_free_inodes = "1000"; crit_free_inodes = "50%";
            overrides = ( { mount = "/no/such/mount"; warn_free = "1G"; crit_free = "10%"; } ); };
caches = ( { name = "a"; path = "$BATS_TEST_TMPDIR/vol/cache"; max_size = "1G"; } );
EOC
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/w.conf"
        echo "$stderr"
        [ "$status" -eq 0 ]
        grep -q '^caches = ' <<<"$output"
        w="$BATS_TEST_TMPDIR/w.conf: warning:"
        grep -qxF "$w admin_group 'no-such-group-ck' is no group on this host: only root may trim and reload" <<<"$stderr"
        grep -qxF "$w alert_command '$BATS_TEST_TMPDIR/page-me' is not executable: alerts go to the journal only" <<<"$stderr"
        mount=$(findmnt -n -o TARGET -T "$BATS_TEST_TMPDIR/vol")
        grep -qF "$w volumes.crit_free \"100000T\" and warn_free \"10%\" cannot both hold on $mount (cache a): critical is" <<<"$stderr"
        grep -qF "$w volumes.crit_free_inodes \"50%\" and warn_free_inodes \"1000\" cannot both hold on $mount (cache a)" <<<"$stderr"
        grep -qxF "$w the override for /no/such/mount: crit_free \"10%\" and warn_free \"1G\" cannot both hold on a volume of 10.0G or more: it would go critical before it warns" <<<"$stderr"
        # the override keeps the defaults' inode thresholds, and their trouble
        grep -qxF "$w the override for /no/such/mount: crit_free_inodes \"50%\" and warn_free_inodes \"1000\" cannot both hold on a volume of 2000 inodes or more: it would go critical before it warns" <<<"$stderr"
        [ "$(wc -l <<<"$stderr")" -eq 6 ]
        # a missing program, a directory
        sed -i "s|\"$BATS_TEST_TMPDIR/page-me\", \"-x\"|\"/no/such/page-me\"|" "$BATS_TEST_TMPDIR/w.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/w.conf"
        [ "$status" -eq 0 ]
        grep -qxF "$w alert_command '/no/such/page-me' cannot be run (No such file or directory): alerts go to the journal only" <<<"$stderr"
        sed -i 's|"/no/such/page-me"|"/etc"|' "$BATS_TEST_TMPDIR/w.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/w.conf"
        grep -qxF "$w alert_command '/etc' is not a regular file: alerts go to the journal only" <<<"$stderr"
        # none of it for a config that means what it says
        printf 'admin_group = "root";\nalert_command = "/bin/true";\ncaches = ( { name = "a"; path = "/srv/a"; max_size = "1G"; } );\n' \
                > "$BATS_TEST_TMPDIR/ok.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/ok.conf"
        [ "$status" -eq 0 ]
        [ -z "$stderr" ]
}

@test "the sandbox explains itself: -t names a cache, share or state_dir the installed unit may not write, and the drop-in; the runtime error too" {
        require_root
        # An installed unit, in this test's own mount namespace.
        mount -t tmpfs ckunits /etc/systemd/system
        printf '[Unit]\nDescription=test\n[Service]\nProtectSystem=strict\nReadWritePaths=-/var/cache -/mnt\nStateDirectory=cachekeeper\n' \
                > /etc/systemd/system/cachekeeperd.service
        cat > "$BATS_TEST_TMPDIR/s.conf" <<EOC
state_dir = "$BATS_TEST_TMPDIR/state";
caches = ( { name = "srv"; path = "$BATS_TEST_TMPDIR/srv/ccache"; max_size = "1G"; },
           { name = "ok"; path = "/var/cache/ck-sandbox-test"; max_size = "1G"; } );
remotes = ( { name = "sh"; url = "file:/mnt/ck-sandbox-share"; max_size = "1G"; } );
EOC
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/s.conf"
        echo "$stderr"
        [ "$status" -eq 0 ]
        w="$BATS_TEST_TMPDIR/s.conf: warning:"
        grep -qxF "$w cache srv $BATS_TEST_TMPDIR/srv/ccache lies outside what /etc/systemd/system/cachekeeperd.service may write (ProtectSystem=strict; ReadWritePaths= and StateDirectory= allow /var/cache /mnt /var/lib/cachekeeper): the service will find it read-only; add it with a drop-in, systemctl edit cachekeeperd.service ([Service] ReadWritePaths=$BATS_TEST_TMPDIR/srv/ccache), then restart it" <<<"$stderr"
        grep -qF "$w state_dir $BATS_TEST_TMPDIR/state lies outside" <<<"$stderr"
        [ "$(grep -c 'lies outside' <<<"$stderr")" -eq 2 ]        # not the cache below /var/cache, nor the share below /mnt
        # the drop-in it says: nothing left to say
        mkdir /etc/systemd/system/cachekeeperd.service.d
        printf '[Service]\nReadWritePaths=%s\n' "$BATS_TEST_TMPDIR" > /etc/systemd/system/cachekeeperd.service.d/srv.conf
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/s.conf"
        ! grep 'lies outside' <<<"$stderr" || false
        # a later drop-in's empty ReadWritePaths= resets the list, as systemd reads it
        printf '[Service]\nReadWritePaths=\n' > /etc/systemd/system/cachekeeperd.service.d/zz-reset.conf
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/s.conf"
        [ "$(grep -c 'lies outside' <<<"$stderr")" -eq 4 ]
        # Not strict, or not installed: no sandbox, no word of it.
        rm /etc/systemd/system/cachekeeperd.service.d/zz-reset.conf /etc/systemd/system/cachekeeperd.service
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/s.conf"
        ! grep 'lies outside' <<<"$stderr" || false

        # At run time, as a service (INVOCATION_ID): a root the sandbox keeps
        # read-only (here: a read-only mount) is unavailable with the hint.
        mkdir -p "$BATS_TEST_TMPDIR/ro"
        mount -t tmpfs -o ro ckro "$BATS_TEST_TMPDIR/ro"
        write_config 1G '' 'audit_interval = "0s";'
        sed -i "s|path = \"[^\"]*\"|path = \"$BATS_TEST_TMPDIR/ro/cache\"|" "$BATS_TEST_TMPDIR/ck.conf"
        INVOCATION_ID=ck-test start_ready
        reason=$(cache_field t reason)
        [[ "$reason" == "'$BATS_TEST_TMPDIR/ro/cache' cannot be opened or created: Read-only file system; the service's sandbox (ProtectSystem=strict) writes only below its ReadWritePaths=: add a drop-in, systemctl edit cachekeeperd.service ([Service] ReadWritePaths=$BATS_TEST_TMPDIR/ro/cache), then restart it" ]] || { echo "$reason"; false; }
        stop_daemon
        umount "$BATS_TEST_TMPDIR/ro"
        umount /etc/systemd/system
}

@test "-t on a bad config prints FILE:LINE: message on stderr and exits 1" {
        printf 'caches = (\n  { name = "a"; path = "/srv/a";\n    max_size = "100"; }\n);\n' > "$BATS_TEST_TMPDIR/bad.conf"
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/bad.conf"
        [ "$status" -eq 1 ]
        [ -z "$output" ]
        [[ "$stderr" == "$BATS_TEST_TMPDIR/bad.conf:3: "*'invalid size "100"'* ]]
}

@test "a missing config file is an error naming it" {
        run --separate-stderr "$CKD" -t -c "$BATS_TEST_TMPDIR/none.conf"
        [ "$status" -eq 1 ]
        [ "$stderr" = "$BATS_TEST_TMPDIR/none.conf: No such file or directory" ]
}

@test "--help, --version and usage errors" {
        run "$CKD" --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"Usage: cachekeeperd [-c FILE] [-s SOCKET] [-t]"* ]]
        run "$CKD" --version
        [ "$status" -eq 0 ]
        [[ "$output" =~ ^cachekeeperd\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
        run "$CKD" --no-such-flag
        [ "$status" -eq 2 ]
        run "$CKD" extra-arg
        [ "$status" -eq 2 ]
}
