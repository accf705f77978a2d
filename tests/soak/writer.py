#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A writer for the soak, at the highest rate it can go until SECONDS have
passed or SIGTERM comes; prints "stores N bytes B hits H" at its end.

  writer.py synth ROOT SECONDS SEED    ccache-shaped entries, written as
      ccache's AtomicFile does (a temporary in the level directory, renamed
      into place; headers by ccache-entry.py), log-normal sizes (median 6 kB),
      one in ten a hit on an entry it wrote (mtime refreshed, as ccache does)
  writer.py ccache ROOT SECONDS SEED SRC    real compiles: CCACHE_DIR=ROOT
      ccache gcc -c on C files of its own under SRC, one in three a file it
      compiled before (a hit, or a miss if the daemon evicted it since)"""
import importlib.util
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
B32 = "0123456789abcdefghijklmnopqrstuv"
HEX = "0123456789abcdef"
stop = False


def on_term(signum, frame):
    global stop
    stop = True


def entry_name(rng):
    """ccache's (4.x, before 4.13) name of an entry in its level directory:
    the key (4 hex, 29 base32hex, the last with its low bit 0) but the two
    chars the directories take, and R (result) or M (manifest)."""
    return ("".join(rng.choice(HEX) for _ in range(2)) + "".join(rng.choice(B32) for _ in range(28))
            + rng.choice(B32[::2]) + rng.choice("RM"))


def load_entry_module():
    spec = importlib.util.spec_from_file_location("ccache_entry", os.path.join(HERE, "ccache-entry.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def synth(root, deadline, rng):
    entry = load_entry_module()
    stores = nbytes = hits = 0
    mine = []
    while not stop and time.monotonic() < deadline:
        if mine and rng.random() < 0.1:
            try:
                os.utime(rng.choice(mine))
                hits += 1
            except OSError:
                pass                    # evicted meanwhile: ccache would miss
            continue
        d = os.path.join(root, rng.choice(HEX), rng.choice(HEX))
        name = entry_name(rng)
        size = min(400000, max(100, int(rng.lognormvariate(8.7, 1.0))))
        payload = rng.randbytes(size) if hasattr(rng, "randbytes") else os.urandom(size)
        h = entry.header("4.7.5", "", 0, 0)
        data = entry.header("4.7.5", "", 0, len(h) + len(payload)) + payload
        path = os.path.join(d, name)
        tmp = f"{path}.tmp.{rng.randrange(1 << 30):08x}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.rename(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            continue
        stores += 1
        nbytes += len(data)
        mine.append(path)
        if len(mine) > 2000:
            mine = mine[1000:]
    return stores, nbytes, hits


def compile_loop(root, deadline, rng, src):
    os.makedirs(src, exist_ok=True)
    env = dict(os.environ, CCACHE_DIR=root)
    env.pop("CCACHE_MAXSIZE", None)
    done = []
    stores = hits = 0
    n = 0
    while not stop and time.monotonic() < deadline:
        if done and rng.random() < 1 / 3:
            name = rng.choice(done)
        else:
            n += 1
            name = f"s{rng.randrange(1 << 40):010x}_{n}"
            # about 100 small functions: an object of some kilobytes
            with open(os.path.join(src, name + ".c"), "w") as f:
                k = rng.randrange(1 << 20)
                for i in range(rng.randint(20, 160)):
                    f.write(f"int {name}_{i}(int x) {{ return x * {k + i} + {i}; }}\n")
            done.append(name)
        c = os.path.join(src, name + ".c")
        r = subprocess.run(["ccache", "gcc", "-O0", "-c", c, "-o", os.path.join(src, name + ".o")],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            stores += 1
        if len(done) > 400:
            done = done[200:]
    return stores, 0, hits


def main(argv):
    signal.signal(signal.SIGTERM, on_term)
    mode, root, seconds, seed = argv[1], argv[2], float(argv[3]), int(argv[4])
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    if mode == "synth":
        s, b, h = synth(root, deadline, rng)
    elif mode == "ccache":
        s, b, h = compile_loop(root, deadline, rng, argv[5])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(f"stores {s} bytes {b} hits {h}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
