#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Watches one cache hold its cap while writers outpace its trims, over the
daemon's real socket: status every INTERVAL seconds (default 0.05).

It waits until the cache's cap is CAP and a trim aimed at that cap has
ended (the first, which brings the cache down from its old cap, is not
growth). From then on it records the largest size the daemon reports and
the longest trim (until the cache is within CAP again: the pass running when
the writers stopped counts); once PASSES more trims have ended (default 2) it creates
STOPFILE, to stop the writers, and goes on until DONEFILE exists (they have
stopped); then it measures how long the cache takes to be within CAP again,
from DONEFILE's mtime. Prints one JSON object: {"max_size",
"longest_trim_s", "trims", "settle_s", "samples", "max_gap_s"}. Exit
status 1, with the reason, if the cap is never applied, if the PASSES trims
do not follow within 60 s, or if the cache is not within CAP 60 s after
DONEFILE appeared.

Usage: cap-watch.py SOCKET CACHE CAP STOPFILE DONEFILE [PASSES [INTERVAL]]"""
import json
import os
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402


def status(path, name):
    for c in json.loads(cktest.request(path))["result"]["caches"]:
        if c["name"] == name:
            return c
    raise OSError(f"no cache {name}")


def fail(out, why):
    print(json.dumps(out))
    print(f"cap-watch: {why}", file=sys.stderr)
    return 1


def main():
    path, name, cap, stopfile, donefile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    want = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    interval = float(sys.argv[7]) if len(sys.argv) > 7 else 0.05
    out = {"max_size": 0, "longest_trim_s": 0.0, "trims": 0, "settle_s": None, "samples": 0, "max_gap_s": 0.0}
    started = time.monotonic()
    holding_at = None        # a trim aimed at CAP ended: from now on, growth
    passes = set()           # the trims seen ended since: (at, seconds, files)
    done_at = None
    last = None
    while True:
        c = status(path, name)
        now = time.monotonic()
        out["samples"] += 1
        lt = c.get("last_trim")
        if holding_at is None:
            if c["max_size_bytes"] == cap and lt is not None and lt["target_bytes"] <= cap:
                holding_at = now
            elif now - started > 60:
                return fail(out, f"the cap {cap} was never applied and trimmed to")
        if holding_at is not None and done_at is None:
            if last is not None:
                out["max_gap_s"] = max(out["max_gap_s"], now - last)
            out["max_size"] = max(out["max_size"], c["size_bytes"])
            out["longest_trim_s"] = max(out["longest_trim_s"], lt["seconds"])
            passes.add((lt["at"], lt["seconds"], lt["files"]))
            out["trims"] = len(passes) - 1
            if out["trims"] >= want and not os.path.exists(stopfile):
                open(stopfile, "w").close()
            elif out["trims"] < want and now - holding_at > 60:
                return fail(out, f"only {out['trims']} trims followed the first in 60 s while the writers wrote")
            if os.path.exists(donefile):
                done_at = os.stat(donefile).st_mtime
        last = now
        if done_at is not None:
            # The pass that ran when they stopped grew the cache too.
            out["longest_trim_s"] = max(out["longest_trim_s"], lt["seconds"])
            if c["size_bytes"] <= cap:
                out["settle_s"] = max(0.0, time.time() - done_at)
                print(json.dumps(out))
                return 0
            if time.time() - done_at > 60:
                return fail(out, "still over the cap 60 s after the writers stopped")
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main())
