#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Asks the daemon for its status COUNT times, INTERVAL seconds apart, over
the real socket, and prints the worst, the 95th percentile and the median
reply time in milliseconds: "worst_ms p95_ms median_ms" (PERCENTILE, when given, in
place of the 95th: "worst_ms p99_ms median_ms" for 99). A refused or broken
connection counts as an error and ends the run with exit status 1.

Usage: status-latency.py SOCKET COUNT INTERVAL [PERCENTILE]"""
import socket
import statistics
import sys
import time


def status(path):
    start = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(path)
        s.sendall(b'{"cmd":"status"}\n')
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                raise OSError("connection closed before the reply ended")
            reply += chunk
    if not reply.startswith(b'{"ok":true'):
        raise OSError(f"refused: {reply[:200]!r}")
    return time.monotonic() - start


def main():
    path, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    percentile = float(sys.argv[4]) if len(sys.argv) > 4 else 95
    times = []
    for _ in range(count):
        times.append(status(path))
        time.sleep(interval)
    times.sort()
    pct = times[min(len(times) - 1, int(len(times) * percentile / 100))]
    print(f"{times[-1] * 1000:.1f} {pct * 1000:.1f} {statistics.median(times) * 1000:.1f}")


if __name__ == "__main__":
    main()
