#!/usr/bin/env bats
# .ci/deps, which make, make run and make test call first: as a user it
# names the exact apt-get line and stops; with everything there it is silent.
load helper

@test "missing packages: a user is told the exact apt-get line, and the check fails" {
        # a dpkg-query that knows every package but libcmocka-dev and bats
        mkdir -p "$BATS_TEST_TMPDIR/bin"
        cat > "$BATS_TEST_TMPDIR/bin/dpkg-query" <<'EOS'
#!/bin/sh
case "$3" in libcmocka-dev|bats) exit 1 ;; esac
echo "install ok installed"
EOS
        chmod 0755 "$BATS_TEST_TMPDIR/bin/dpkg-query"
        chmod a+rx "$BATS_TEST_TMPDIR" "$(dirname "$BATS_TEST_TMPDIR")" "$(dirname "$(dirname "$BATS_TEST_TMPDIR")")"
        run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
                env PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" sh "$TOP/.ci/deps"
        [ "$status" -eq 1 ]
        [ "${stderr_lines[0]}" = "cachekeeper: missing build dependencies. Install them with:" ]
        [ "${stderr_lines[1]}" = "  sudo apt-get install -y --no-install-recommends libcmocka-dev bats" ]
}

@test "nothing missing: silent, status 0" {
        # A dpkg-query that knows every package installed: not the live
        # database, where a package another process is configuring reads as
        # missing. An apt-get that must not be called.
        mkdir -p "$BATS_TEST_TMPDIR/bin"
        printf '#!/bin/sh\necho "install ok installed"\n' > "$BATS_TEST_TMPDIR/bin/dpkg-query"
        printf '#!/bin/sh\necho "apt-get called: $*"\nexit 1\n' > "$BATS_TEST_TMPDIR/bin/apt-get"
        chmod 0755 "$BATS_TEST_TMPDIR/bin/dpkg-query" "$BATS_TEST_TMPDIR/bin/apt-get"
        run env PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" sh "$TOP/.ci/deps"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
}
