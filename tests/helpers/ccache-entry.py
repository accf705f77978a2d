#!/usr/bin/python3
"""Writes ccache entries with the exact header layout (daemon/ccache/README.md §9),
as ccache's AtomicFile does (a temporary in the same directory, renamed into
place), so the tests can have entries of ccache versions and namespaces
Debian does not ship.

usage: ccache-entry.py PATH VERSION NAMESPACE [TYPE [PAYLOAD_BYTES]]
       ccache-entry.py --garbage PATH
"""
import os
import struct
import sys
import time


def header(version, namespace, entry_type, size):
    v, n = version.encode(), namespace.encode()
    return (struct.pack(">HBBBbBQ", 0xCCAC, 1, entry_type, 0, 0, 1, int(time.time()))
            + bytes([len(v)]) + v + bytes([len(n)]) + n + struct.pack(">Q", size))


def put(path, data):
    tmp = path + ".tmp.Ab12Cd.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def main(argv):
    if len(argv) == 3 and argv[1] == "--garbage":
        put(argv[2], os.urandom(300))
        return 0
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    entry_type = int(argv[4]) if len(argv) > 4 else 0
    payload = os.urandom(int(argv[5]) if len(argv) > 5 else 200)
    h = header(argv[2], argv[3], entry_type, 0)
    put(argv[1], header(argv[2], argv[3], entry_type, len(h) + len(payload)) + payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
