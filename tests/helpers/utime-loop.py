#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A flood of inotify events a user can cause without writing a byte: sets
the times of every regular file under ROOT again and again, for SECONDS.
Files that vanish meanwhile are skipped.

Usage: utime-loop.py ROOT SECONDS"""
import os
import sys
import time


def main():
    root, seconds = sys.argv[1], float(sys.argv[2])
    files = [os.path.join(d, n) for d, _, names in os.walk(root) for n in names]
    deadline = time.monotonic() + seconds
    calls = 0
    while time.monotonic() < deadline:
        for f in files:
            try:
                os.utime(f)
            except OSError:
                pass
            calls += 1
    print(f"utime-loop: {calls} calls")


if __name__ == "__main__":
    main()
