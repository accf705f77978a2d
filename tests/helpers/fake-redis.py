#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A fake Redis server for the remote-redis tests: it answers what a poll of
cachekeeperd asks (INFO, CONFIG GET, SCAN, AUTH, SELECT) and misbehaves in
one way, chosen by MODE, once the file GO exists (before it: a well-behaved
server whose SCAN ends at once):

  bulk       INFO answered by a bulk string announced as 4 GB, of which
             LIMIT bytes (default 256M) are sent, then nothing
  array      INFO answered by an array announced as 200M elements, of which
             LIMIT elements (default 1M) are sent, then nothing
  slowscan   each SCAN answered after 1.8 s, its cursor never back to 0
  listen     no answer at all: each connection's bytes appended to the
             file GO (a listener taking a port while Redis is down)

ADDR is a Unix socket path, or PORT on 127.0.0.1 (0: any; the port is then
printed on stdout). Usage: fake-redis.py MODE ADDR GO [LIMIT]"""
import os
import socket
import sys
import time

MODE, ADDR, GO = sys.argv[1], sys.argv[2], sys.argv[3]
LIMIT = int(sys.argv[4]) if len(sys.argv) > 4 else None
INFO = (b"# Memory\r\nused_memory:1000\r\nmaxmemory:8000000\r\nmaxmemory_policy:allkeys-lru\r\n"
        b"evicted_keys:0\r\nkeyspace_hits:0\r\nkeyspace_misses:0\r\nconnected_clients:1\r\n")


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def commands(buf):
    """Whole commands at the start of buf (*N then N bulk strings), and the rest."""
    out = []
    while buf.startswith(b"*"):
        head = buf.find(b"\r\n")
        if head < 0:
            break
        n, pos, args = int(buf[1:head]), head + 2, []
        for _ in range(n):
            e = buf.find(b"\r\n", pos)
            if e < 0:
                break
            ln = int(buf[pos + 1:e])
            pos = e + 2
            if len(buf) < pos + ln + 2:
                break
            args.append(buf[pos:pos + ln])
            pos += ln + 2
        if len(args) < n:
            break
        out.append(args)
        buf = buf[pos:]
    return out, buf


def hold(c):
    """Sends nothing more; returns when the client closes."""
    while c.recv(65536):
        pass


def misbehave(c):
    if MODE == "bulk":
        c.sendall(b"$4000000000\r\n")
        chunk, sent = b"\0" * 65536, 0
        while sent < (LIMIT or 256 << 20):
            c.sendall(chunk)
            sent += len(chunk)
    elif MODE == "array":
        c.sendall(b"*200000000\r\n")
        n = LIMIT or 1000000
        for _ in range(n // 10000):
            c.sendall(b":1\r\n" * 10000)
    hold(c)


def serve(c):
    buf = b""
    while True:
        d = c.recv(65536)
        if not d:
            return
        if MODE == "listen":
            with open(GO, "ab") as f:
                f.write(d)
            continue
        cmds, buf = commands(buf + d)
        out = []
        for args in cmds:
            cmd, go = args[0].upper(), os.path.exists(GO)
            if cmd == b"INFO" and go and MODE in ("bulk", "array"):
                c.sendall(b"".join(out))
                misbehave(c)
                return
            if cmd == b"INFO":
                out.append(bulk(INFO))
            elif cmd == b"CONFIG":
                out.append(b"*2\r\n" + bulk(b"maxmemory-policy") + bulk(b"allkeys-lru"))
            elif cmd == b"SCAN" and MODE == "slowscan":
                c.sendall(b"".join(out))
                out = []
                time.sleep(1.8)
                out.append(b"*2\r\n" + bulk(b"7") + b"*0\r\n")
            elif cmd == b"SCAN":
                out.append(b"*2\r\n" + bulk(b"0") + b"*1\r\n" + bulk(b"ccache:x"))
            else:
                out.append(b"+OK\r\n")
        if out:
            c.sendall(b"".join(out))


if ADDR.isdigit():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(ADDR)))
    print(s.getsockname()[1], flush=True)
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(ADDR)
s.listen(16)
while True:
    conn, _ = s.accept()
    try:
        serve(conn)
    except OSError:
        pass
    conn.close()
