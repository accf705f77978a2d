#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Asks the daemon for its status COUNT times, INTERVAL seconds apart, over
the real socket (one request per connection, as cachectl does), and prints
the worst, the 95th percentile and the median reply time in milliseconds:
"worst_ms p95_ms median_ms" (PERCENTILE, when given, in place of the 95th:
"worst_ms p99_ms median_ms" for 99). A refused or broken connection counts
as an error and ends the run with exit status 1.

--echo: a trivial echo server, a process of its own at this one's priority
(tests/soak/sampler.py --echo, the soak's measure), is asked at the same
moment as each status: what it waited for was the box's (a core busy with
other work), not the daemon's. The line goes on with "n echo_worst echo_pct echo_median
own_worst own_pct own_median": the samples, the echo's figures, and the
daemon's own part of each reply (its time less the echo's, at least 0).

--while KEY: asks until a reply shows KEY (a dotted path below each cache of
the status: writers_pending, trim, scan.running) 0, false or absent in every
cache, once one reply showed it set (within 60 s, else exit status 1); COUNT
still bounds the requests. The samples are those asked for after a reply
showed it set, until one shows it unset.

--ready PATH: PATH is created once the first reply came (and the echo
server answers): the job to be measured may start then.

Usage: status-latency.py [--echo] [--while KEY] [--ready PATH] SOCKET COUNT INTERVAL [PERCENTILE]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402

# The echo server is the soak's (tests/soak/sampler.py --echo).
SAMPLER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "soak", "sampler.py")


def ask(path, control):
    """Asks the daemon (and the echo server at control, if any) at once;
    returns (reply, ms, echo ms or None)."""
    asked = [(path, cktest.STATUS)] + ([(control, b"ping\n")] if control else [])
    took = cktest.ask_at_once(asked, 30)
    ms, reply = took[0]
    if not reply.startswith(b'{"ok":true'):
        raise OSError(f"refused: {reply[:200]!r}")
    return reply, ms, took[1][0] if control else None


def is_set(reply, key):
    """KEY set in some cache of a status reply."""
    for c in json.loads(reply)["result"]["caches"]:
        v = c
        for k in key.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        if v not in (None, 0, False):
            return True
    return False


def figures(ms, percentile):
    ms = sorted(ms)
    pct = ms[min(len(ms) - 1, int(len(ms) * percentile / 100))]
    return f"{ms[-1]:.1f} {pct:.1f} {statistics.median(ms):.1f}"


def main():
    args = sys.argv[1:]
    echo, key, ready = False, None, None
    while args and args[0].startswith("--"):
        if args[0] == "--echo":
            echo = True
            args = args[1:]
        elif args[0] == "--while":
            key = args[1]
            args = args[2:]
        elif args[0] == "--ready":
            ready = args[1]
            args = args[2:]
        else:
            print(__doc__, file=sys.stderr)
            return 2
    path, count, interval = args[0], int(args[1]), float(args[2])
    percentile = float(args[3]) if len(args) > 3 else 95
    control, server, tmp = None, None, None
    if echo:
        tmp = tempfile.mkdtemp(prefix="status-latency.")
        control = os.path.join(tmp, "echo.sock")
        server = subprocess.Popen([sys.executable, SAMPLER, "--echo", control])
        deadline = time.monotonic() + 30
        while not os.path.exists(control):
            if time.monotonic() > deadline or server.poll() is not None:
                raise OSError("the echo server did not start")
            time.sleep(0.01)
    try:
        times, echoes, own = [], [], []
        seen = key is None
        deadline = time.monotonic() + 60
        for _ in range(count):
            reply, ms, ctl_ms = ask(path, control)
            if ready:
                open(ready, "w").close()
                ready = None
            if key is not None:
                now_set = is_set(reply, key)
                if not seen and not now_set:
                    if time.monotonic() > deadline:
                        print(f"status-latency: {key} never set within 60 s", file=sys.stderr)
                        return 1
                    time.sleep(interval)
                    continue
                if seen and not now_set:
                    break
                if not seen:
                    seen = True   # asked for before it was seen set: not counted
                    time.sleep(interval)
                    continue
            times.append(ms)
            if echo:
                echoes.append(ctl_ms)
                own.append(max(0.0, ms - ctl_ms))
            time.sleep(interval)
        if not times:
            print("status-latency: no samples", file=sys.stderr)
            return 1
        line = figures(times, percentile)
        if echo:
            line += f" {len(times)} {figures(echoes, percentile)} {figures(own, percentile)}"
        print(line)
        return 0
    finally:
        if server:
            server.kill()
            server.wait()
        if tmp:
            try:
                os.unlink(control)
            except OSError:
                pass
            os.rmdir(tmp)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:
        print(f"status-latency: {e}", file=sys.stderr)
        sys.exit(1)
