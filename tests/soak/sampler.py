#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The soak's sampler: asks the daemon for its status over the real socket,
one request per connection as cachectl does, every INTERVAL seconds until
killed, and prints one JSON line per sample: "t" (CLOCK_MONOTONIC when the
request began), "ms" (connect to the end of the reply), "ctl_ms" (the same
for a trivial echo server at the daemon's priority, asked at the same
moment: what any process was waiting for a core right then) and, per cache,
[size_bytes, files, max_size_bytes, stored_bytes_total, stored_files_total,
trimming (0/1), the last trim's seconds, its reason, scan.found_bytes_total
(stores the events did not show, found by rescans)], and "vol": the first
volume's [avail_bytes, alert]; or "err" when the daemon could not be reached
or answered badly. Its own process, so that what the oracle does meanwhile
never delays a measurement.

Usage: sampler.py SOCKET INTERVAL OUTPUT CONTROL_SOCKET
       sampler.py --echo CONTROL_SOCKET    the echo server"""
import json
import os
import socket
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402


def ask_both(path, control):
    """Asks the daemon and the echo server at once; returns (reply, ms,
    control ms)."""
    (ms, reply), (ctl_ms, _) = cktest.ask_at_once([(path, cktest.STATUS), (control, b"ping\n")], 10)
    return json.loads(reply), ms, ctl_ms


def echo(path):
    """Serves at path, which appears only once it is listening (bound and
    listening under another name, then renamed): whoever waits for the
    path to exist may connect at once."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path + ".new")
    srv.listen(64)
    os.rename(path + ".new", path)
    while True:
        conn, _ = srv.accept()
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while not data.endswith(b"\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(data)
            except OSError:
                pass


def main():
    if sys.argv[1] == "--echo":
        echo(sys.argv[2])
        return
    path, interval, output, control = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(output, "a", buffering=1) as out:
        while True:
            t0 = time.monotonic()
            rec = {"t": round(t0, 4)}
            try:
                reply, ms, ctl_ms = ask_both(path, control)
                rec["ms"], rec["ctl_ms"] = round(ms, 2), round(ctl_ms, 2)
                if not reply.get("ok"):
                    raise OSError(f"refused: {reply.get('error')}")
                for v in reply["result"]["volumes"][:1]:
                    rec["vol"] = [v["avail_bytes"], v["alert"]]
                for c in reply["result"]["caches"]:
                    last = c.get("last_trim") or {}
                    rec[c["name"]] = [c["size_bytes"], c["files"], c["max_size_bytes"],
                                      c["stored_bytes_total"], c["stored_files_total"],
                                      1 if "trim" in c else 0, last.get("seconds", 0), last.get("reason", ""),
                                      c["scan"]["found_bytes_total"]]
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
