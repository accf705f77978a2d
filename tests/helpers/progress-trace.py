#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Traces what reaches a client while the daemon works on its request: a
proxy on LISTEN for one connection, forwarded to the daemon's SOCKET both
ways as it comes, which notes the moment each line of the daemon's arrives
(what the client, cachectl itself, reads at the same moment). The client
is the real one: `cachectl -s LISTEN trim ...`, its own request and its own
timeout.

Once the daemon's final line (not a progress line) was forwarded, or
either side closed before it (cachectl gave up waiting), prints one JSON
object: {"progress": progress lines, "lines": all lines, "first_ms": from
the request to the first line, "max_gap_ms", "median_gap_ms": between two
lines in a row (progress to progress, and the last progress to the
result: the silences the client sat through), "total_ms": from the
request to the last line, "gaps_ms": every gap in order, "final": the
final line, null if none came}. Gaps are null with fewer than two lines,
first_ms and total_ms with no line. Exit status 1 if no client comes
within 60 s.

LISTEN is created once the proxy listens (a test waits for it).

Usage: progress-trace.py LISTEN SOCKET"""
import json
import os
import select
import socket
import statistics
import sys
import time


def main():
    listen, daemon = sys.argv[1], sys.argv[2]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(listen + ".tmp")
    srv.listen(1)
    os.rename(listen + ".tmp", listen)   # there once it listens
    srv.settimeout(60)
    try:
        client, _ = srv.accept()
    except socket.timeout:
        sys.exit("progress-trace: no client within 60 s")
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    up.connect(daemon)
    asked, stamps, kinds, final, buf = None, [], [], None, b""
    while final is None:
        ready, _, _ = select.select([client, up], [], [])
        if client in ready:
            data = client.recv(1 << 16)
            if not data:
                break
            if asked is None:
                asked = time.monotonic()
            up.sendall(data)
        if up in ready:
            data = up.recv(1 << 16)
            if not data:
                break
            now = time.monotonic()
            client.sendall(data)
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                stamps.append(now)
                progress = "progress" in json.loads(line)
                kinds.append(progress)
                if not progress:
                    final = line.decode()
    gaps = [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]
    print(json.dumps({
        "progress": sum(kinds),
        "lines": len(stamps),
        "first_ms": round((stamps[0] - asked) * 1000, 1) if stamps else None,
        "max_gap_ms": round(max(gaps), 1) if gaps else None,
        "median_gap_ms": round(statistics.median(gaps), 1) if gaps else None,
        "total_ms": round((stamps[-1] - asked) * 1000, 1) if stamps else None,
        "gaps_ms": [round(g, 1) for g in gaps],
        "final": final,
    }))
    client.close()
    up.close()
    os.unlink(listen)


if __name__ == "__main__":
    main()
