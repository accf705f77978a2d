#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A burst of stores into a new cache by WRITERS parallel processes that
write as ccache does (daemon/ccache/README.md §1, §7), in the LAYOUT of
ccache 4.8-4.12 ("4.12": <l1>/<l2>/<key>R and <key>M, 33-char keys), of
4.13 ("4.13": <l1>/<l2>/<key>, 40 hex digits, no suffix) or of Debian's
4.7.5 ("4.7": the names of 4.12, no content lock, no inode cache).

Each writer of 4.12 or 4.13 first does what every ccache does on a cache
without an inode cache: writes a temporary of its own, tmp/inode-cache-64.v2.tmp.XXXXXX.tmp,
of 5.9 MB (allocated, as ccache's fallocate), links it to
tmp/inode-cache-64.v2 (a writer that loses the race keeps the winner's)
and removes it. The writers all hold their temporary until GOFILE exists
(the test makes it once the daemon has seen them), so that they overlap as
ccache's race makes them do. Then each does COMPILES compiles: the
preprocessor's output in tmp/ (SIZE bytes), then a manifest (1 KiB) and a
result (SIZE bytes) with ccache's entry header, each through a temporary
beside it renamed into place, under the level-2 directory's content lock
(lock/subdir_XY.lock, a symlink, and its .alive); then the tmp/ file goes.

Prints one line: "entries=N bytes=B seconds=S" (B: the entries' bytes).

Usage: ccache-burst.py ROOT LAYOUT WRITERS COMPILES SIZE GOFILE [SEED]"""
import os
import random
import socket
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402

B32 = "0123456789abcdefghijklmnopqrstuv"
HEX = "0123456789abcdef"
INODE_CACHE = 5_898_240   # sizeof(SharedRegion) in 4.8+: what tmp/inode-cache-64.v2 takes
VERSION = {"4.7": "4.7.5", "4.12": "4.12.3", "4.13": "4.13.6"}


def tmp_suffix(rng):
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


def key(rng, layout):
    if layout == "4.13":
        return "".join(rng.choice(HEX) for _ in range(40))
    return ("".join(rng.choice(HEX) for _ in range(4)) + "".join(rng.choice(B32) for _ in range(28))
            + B32[rng.randrange(16) * 2])


def names(rng, layout):
    """The manifest's and the result's paths below the root (depth 2)."""
    if layout == "4.13":
        m, r = key(rng, layout), key(rng, layout)
        return [(m[0], m[1], m[2:]), (r[0], r[1], r[2:])]
    k = key(rng, layout)
    m = key(rng, layout)
    return [(m[0], m[1], m[2:] + "M"), (k[0], k[1], k[2:] + "R")]


def atomic_write(path, data, rng):
    cktest.store(path, data, f"{path}.tmp.{tmp_suffix(rng)}.tmp")


def lock(root, l1, l2):
    """ccache's content lock of <l1>/<l2>: a symlink naming the holder, and its .alive."""
    base = os.path.join(root, "lock", f"subdir_{l1}{l2}")
    text = f"{socket.gethostname()}-{os.getpid()}-{os.getpid()}-{time.time():.9f}"
    os.makedirs(os.path.join(root, "lock"), exist_ok=True)
    while True:
        try:
            os.symlink(text, base + ".lock")
            break
        except FileExistsError:
            time.sleep(random.uniform(0.01, 0.05))
    open(base + ".alive", "wb").close()
    return base


def unlock(base):
    os.unlink(base + ".alive")
    os.unlink(base + ".lock")


def inode_cache(root, gofile, rng):
    """ccache's InodeCache::create_new_file, the temporary held until gofile exists."""
    path = os.path.join(root, "tmp", "inode-cache-64.v2")
    tmp = f"{path}.tmp.{tmp_suffix(rng)}.tmp"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
    os.posix_fallocate(fd, 0, INODE_CACHE)
    os.close(fd)
    while not os.path.exists(gofile):
        time.sleep(0.01)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    os.unlink(tmp)


def writer(root, layout, compiles, size, gofile, seed, entry):
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "tmp"), exist_ok=True)
    if layout != "4.7":   # 4.7.5 has the inode cache off by default
        inode_cache(root, gofile, rng)
    written = 0
    for _ in range(compiles):
        cpp = os.path.join(root, "tmp", f"cpp_stdout.tmp.{tmp_suffix(rng)}.i")
        with open(cpp, "wb") as f:
            f.write(os.urandom(size))
        for (l1, l2, name), (kind, n) in zip(names(rng, layout), ((1, 1024), (0, size))):
            d = os.path.join(root, l1, l2)
            os.makedirs(d, exist_ok=True)
            payload = os.urandom(n)
            head = entry.header(VERSION[layout], "", kind, 0)
            base = lock(root, l1, l2) if layout != "4.7" else None   # 4.7 has no content locks
            try:
                atomic_write(os.path.join(d, name),
                             entry.header(VERSION[layout], "", kind, len(head) + n) + payload, rng)
            finally:
                if base:
                    unlock(base)
            written += len(head) + n
        os.unlink(cpp)
    return written


def main():
    if len(sys.argv) < 7 or sys.argv[2] not in VERSION:
        print(__doc__, file=sys.stderr)
        return 2
    root, layout = sys.argv[1], sys.argv[2]
    writers, compiles, size, gofile = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    seed = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    entry = cktest.load_helper("ccache-entry.py")
    start = time.monotonic()
    pids = []
    for w in range(writers):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            n = writer(root, layout, compiles, size, gofile, seed * 1000 + w, entry)
            os.write(wfd, str(n).encode())
            os._exit(0)
        os.close(wfd)
        pids.append((pid, rfd))
    total, failed = 0, 0
    for pid, rfd in pids:
        with os.fdopen(rfd) as f:
            out = f.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not out:
            failed += 1
        else:
            total += int(out)
    print(f"entries={writers * compiles * 2} bytes={total} seconds={time.monotonic() - start:.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
