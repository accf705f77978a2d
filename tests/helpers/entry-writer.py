#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A build's writes into a live ccache directory, for the tests under load:
new entries of SIZE bytes (ccache 4.12 result names, <l1>/<l2>/<name>R,
mtime now), written as ccache writes them (a temporary beside the entry,
renamed into place), at up to RATE entries a second (0: as fast as this
machine allows), for SECONDS seconds or COUNT entries, whichever ends
first, or until STOPFILE exists. A full volume (ENOSPC) ends the run early,
without an error. Prints
one line: "written=N bytes=B seconds=S rate=R" (B: SIZE·N; R: entries/s).

Usage: entry-writer.py ROOT COUNT SIZE SECONDS [RATE [SEED [STOPFILE]]]"""
import os
import random
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402

B32 = "0123456789abcdefghijklmnopqrstuv"
HEX = "0123456789abcdef"


def key(rng):
    """A ccache 4.12 key: 4 hex, then 29 base32hex whose last carries a 0 bit."""
    return ("".join(rng.choice(HEX) for _ in range(4)) + "".join(rng.choice(B32) for _ in range(28))
            + B32[rng.randrange(16) * 2])


def main():
    root, count, size, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    rate = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
    stopfile = sys.argv[7] if len(sys.argv) > 7 else None
    data = os.urandom(size)
    start = time.monotonic()
    written = 0
    made = set()
    while written < count:
        now = time.monotonic()
        if now - start >= seconds or (stopfile and written % 64 == 0 and os.path.exists(stopfile)):
            break
        if rate > 0 and written > rate * (now - start):
            time.sleep(min(0.01, written / rate - (now - start)))
            continue
        name = key(rng)
        d = os.path.join(root, name[0], name[1])
        if d not in made:
            os.makedirs(d, exist_ok=True)
            made.add(d)
        path = os.path.join(d, name[2:] + "R")
        try:
            cktest.store(path, data, f"{path}.tmp.{os.getpid()}")
        except OSError as e:
            if e.errno == 28:   # ENOSPC: the volume is full
                break
            raise
        written += 1
    took = time.monotonic() - start
    print(f"written={written} bytes={written * size} seconds={took:.3f} rate={written / took if took else 0:.0f}")


if __name__ == "__main__":
    main()
