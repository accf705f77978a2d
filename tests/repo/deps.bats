#!/usr/bin/env bats
# .ci/deps, which make, make run and make test call first: as a user it
# names the exact apt-get line and stops; with everything there it is
# silent. Two sets: `build` (make, make install) and `test` (the tests,
# make test-boot, make deb); a test-only package never lands in the build set.
# tests/run: takes 25 s
load ../lib/helper

# Packages only the tests or the package build need: never in the build set.
TEST_ONLY="libcmocka-dev ccache bats inotify-tools jq time systemd-container debootstrap \
man-db groff-base prometheus redis-server debhelper lintian hipcc libamdhip64-dev rocm-cmake clang-15"

# fake_dpkg_query MISSING...: a dpkg-query on $BATS_TEST_TMPDIR/bin that knows
# every package installed but MISSING ("*": none installed).
fake_dpkg_query() {
        mkdir -p "$BATS_TEST_TMPDIR/bin"
        {
                echo '#!/bin/sh'
                [ $# -eq 0 ] || echo "case \"\$3\" in $(echo "$@" | tr ' ' '|')) exit 1 ;; esac"
                echo 'echo "install ok installed"'
        } > "$BATS_TEST_TMPDIR/bin/dpkg-query"
        chmod 0755 "$BATS_TEST_TMPDIR/bin" "$BATS_TEST_TMPDIR/bin/dpkg-query"
        open_test_dir
}

# deps_as_user ARGS...: .ci/deps ARGS as nobody (a copy of it: the checkout
# may be where nobody cannot enter), with the fake dpkg-query.
deps_as_user() {
        local deps
        deps=$(world_copy "$TOP/.ci/deps")
        run --separate-stderr "${AS_NOBODY[@]}" PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" sh "$deps" "$@"
}

@test "missing packages: a user is told the exact apt-get line, and the check fails" {
        fake_dpkg_query libcmocka-dev bats
        deps_as_user test
        [ "$status" -eq 1 ]
        [ "${stderr_lines[0]}" = "cachekeeper: missing test dependencies. Install them with:" ]
        [ "${stderr_lines[1]}" = "  sudo apt-get install -y --no-install-recommends libcmocka-dev bats" ]

        fake_dpkg_query libconfig-dev
        deps_as_user
        [ "$status" -eq 1 ]
        [ "${stderr_lines[0]}" = "cachekeeper: missing build dependencies. Install them with:" ]
        [ "${stderr_lines[1]}" = "  sudo apt-get install -y --no-install-recommends libconfig-dev" ]
}

@test "nothing missing: silent, status 0" {
        # A dpkg-query that knows every package installed: not the live
        # database, where a package another process is configuring reads as
        # missing. An apt-get that must not be called.
        mkdir -p "$BATS_TEST_TMPDIR/bin"
        printf '#!/bin/sh\necho "install ok installed"\n' > "$BATS_TEST_TMPDIR/bin/dpkg-query"
        printf '#!/bin/sh\necho "apt-get called: $*"\nexit 1\n' > "$BATS_TEST_TMPDIR/bin/apt-get"
        chmod 0755 "$BATS_TEST_TMPDIR/bin/dpkg-query" "$BATS_TEST_TMPDIR/bin/apt-get"
        for set in build test; do
                run env PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" sh "$TOP/.ci/deps" $set
                [ "$status" -eq 0 ]
                [ -z "$output" ]
        done
}

@test "the build set (make, make install) holds no test-only package; the test set holds both" {
        fake_dpkg_query '*'
        deps_as_user
        [ "$status" -eq 1 ]
        build=" ${stderr_lines[1]#  sudo apt-get install -y --no-install-recommends } "
        echo "build set:$build"
        for p in build-essential pkg-config libsystemd-dev libconfig-dev libinotifytools0-dev libjson-c-dev; do
                [[ "$build" == *" $p "* ]] || { echo "build set lacks $p"; return 1; }
        done
        for p in $TEST_ONLY; do
                [[ "$build" != *" $p "* ]] || { echo "test-only package $p in the build set"; return 1; }
        done
        deps_as_user test
        [ "$status" -eq 1 ]
        all=" ${stderr_lines[1]#  sudo apt-get install -y --no-install-recommends } "
        for p in $build $TEST_ONLY dpkg-dev; do
                [[ "$all" == *" $p "* ]] || { echo "test set lacks $p"; return 1; }
        done
        run sh "$TOP/.ci/deps" nonsense
        [ "$status" -eq 2 ]
        [[ "$output" == "usage: .ci/deps"* ]]
}

@test "make and make install ask for the build set, make test, test-boot and deb for the test set" {
        # A build directory of our own: no stamp, so make must check (-n: only say).
        mk() {
                env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -C "$TOP" B="$BATS_TEST_TMPDIR/b" "$@" 2>&1
        }
        for t in all install run; do
                out=$(mk $t)
                echo "$out" | grep -qx 'sh .ci/deps build' || { echo "make $t: $out" | head -5; return 1; }
                ! echo "$out" | grep -q 'ci/deps test' || { echo "make $t asks for the test set"; return 1; }
        done
        for t in test test-boot deb; do
                out=$(mk $t)
                echo "$out" | grep -qx 'sh .ci/deps test' || { echo "make $t: $out" | head -5; return 1; }
        done
}

@test "debian/control's Build-Depends are the build set (build-essential implied, plus debhelper)" {
        # Build-Depends, continuation lines included, one package a line, no versions.
        bd=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); print; next }
                  on && /^[ \t]/ { print; next } { on = 0 }' "$TOP/debian/control" |
                tr ',' '\n' | sed -e 's/(.*)//' -e 's/[[:space:]]//g' | grep . | sort)
        want=$({ sh "$TOP/.ci/deps" --list build | grep -vx build-essential; echo debhelper-compat; } | sort)
        diff <(echo "$want") <(echo "$bd")
}
