#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The soak's sampler: asks the daemon for its status over the real socket,
one request per connection as cachectl does, every INTERVAL seconds until
killed, and prints one JSON line per sample: "t" (CLOCK_MONOTONIC when the
request began), "ms" (connect to the end of the reply) and, per cache,
[size_bytes, files, max_size_bytes, stored_bytes_total, stored_files_total,
trimming (0/1), the last trim's seconds, its reason], and "vol": the first
volume's [avail_bytes, alert]; or "err" when the daemon
could not be reached or answered badly. Its own process, so that what the
oracle does meanwhile never delays a measurement.

Usage: sampler.py SOCKET INTERVAL OUTPUT"""
import json
import os
import socket
import sys
import time


def ask(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(b'{"cmd":"status"}\n')
        reply = bytearray()
        while not reply.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                raise OSError("connection closed before the reply ended")
            reply += chunk
    return json.loads(reply)


def main():
    path, interval, output = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    with open(output, "a", buffering=1) as out:
        while True:
            t0 = time.monotonic()
            rec = {"t": round(t0, 4)}
            try:
                reply = ask(path)
                rec["ms"] = round((time.monotonic() - t0) * 1000, 2)
                if not reply.get("ok"):
                    raise OSError(f"refused: {reply.get('error')}")
                for v in reply["result"]["volumes"][:1]:
                    rec["vol"] = [v["avail_bytes"], v["alert"]]
                for c in reply["result"]["caches"]:
                    last = c.get("last_trim") or {}
                    rec[c["name"]] = [c["size_bytes"], c["files"], c["max_size_bytes"],
                                      c["stored_bytes_total"], c["stored_files_total"],
                                      1 if "trim" in c else 0, last.get("seconds", 0), last.get("reason", "")]
            except (OSError, ValueError, KeyError) as e:
                rec["err"] = str(e)[:200]
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            left = interval - (time.monotonic() - t0)
            if left > 0:
                time.sleep(left)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    os._exit(0)
