#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The biggest history replies, over and over, from several users at once
(issue 20 item 9): a flood that must not starve anyone's status.

Usage:
  history-flood.py history FILE
      Writes a history file (format version 1) whose hour ring holds 90
      days, every figure at its widest, its newest minute now: a cache
      with it answers `history --hours 2160` with 2160 rows (1 MB).
  history-flood.py flood SOCKET DIR UID...
      As root: one process per UID, each as that user (uid and gid UID, no
      groups; the code is loaded before, nothing is read as them), asks
      SOCKET for the history of every cache, 2160 hour rows, on a new
      connection each time as cachectl does, reads the reply whole (not
      parsed: that would cost the flooder's CPU, not the daemon's), until
      DIR/stop exists or the daemon is gone; after each reply it writes
      "replies failures" to DIR/UID (DIR must be writable by them). Exits
      when all have stopped."""
import os
import socket
import struct
import sys
import time
import zlib


def write_history(path):
    now_min = int(time.time()) // 60
    minutes, hours = 1440, 2160
    bucket = struct.pack("<Q4Q11I", 10**15, *([10**15] * 4), *([4000000000] * 11))
    payload = struct.pack("<QQQ", now_min, now_min - 60 * hours, 1) + bucket * (minutes + hours)
    header = b"\x89CKHIST\n" + struct.pack("<6I", 1, 32, minutes, hours, len(bucket), len(payload))
    data = header + payload
    with open(path, "wb") as f:
        f.write(data + struct.pack("<I", zlib.crc32(data)))


def report(out, n, failed):
    with open(out + ".tmp", "w") as f:
        f.write("%d %d\n" % (n, failed))
    os.rename(out + ".tmp", out)


def flood(path, out, stop):
    buf = memoryview(bytearray(1 << 16))
    n = failed = 0
    while not os.path.exists(stop):
        head, last, size = b"", b"", 0
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(30)
                try:
                    s.connect(path)
                except OSError:
                    failed += 1
                    break       # the daemon is gone: so is the flood
                s.sendall(b'{"cmd":"history","seconds":3600,"count":2160}\n')
                while last != b"\n":
                    got = s.recv_into(buf)
                    if got == 0:
                        break
                    if size < 16:
                        head += bytes(buf[:16 - size])
                    size += got
                    last = bytes(buf[got - 1:got])
        except OSError:
            pass
        if head.startswith(b'{"ok":true') and last == b"\n" and size > 1000000:
            n += 1
        else:
            failed += 1
        report(out, n, failed)
    report(out, n, failed)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "history":
        write_history(sys.argv[2])
        return 0
    if len(sys.argv) < 5 or sys.argv[1] != "flood":
        sys.exit(__doc__)
    path, d, uids = sys.argv[2], sys.argv[3], [int(u) for u in sys.argv[4:]]
    pids = []
    for uid in uids:
        pid = os.fork()
        if pid == 0:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            flood(path, os.path.join(d, str(uid)), os.path.join(d, "stop"))
            os._exit(0)
        pids.append(pid)
    status = 0
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        status |= st != 0
    return status


if __name__ == "__main__":
    sys.exit(main())
