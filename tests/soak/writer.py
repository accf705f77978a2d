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
      compiled before (a hit, or a miss if the daemon evicted it since)
  writer.py explain ROOT SECONDS SEED SRC CTL SOCK    the same compiles, each
      through `CTL -s SOCK measure --explain --json`, one source in four with
      #line directives naming a FIFO and a big sparse file (a hostile
      checkout); prints "explained E failed F" too: a run that did not end
      in 120 s, failed, or printed no JSON of its misses and causes fails"""
import json
import os
import random
import signal
import subprocess
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402

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


def synth(root, deadline, rng):
    entry = cktest.load_helper("ccache-entry.py")
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
        try:
            cktest.store(path, data, f"{path}.tmp.{rng.randrange(1 << 30):08x}.tmp")
        except OSError:
            continue
        stores += 1
        nbytes += len(data)
        mine.append(path)
        if len(mine) > 2000:
            mine = mine[1000:]
    return stores, nbytes, hits


class Sources:
    """The sources a compile loop builds, under src: a new one (about 100
    small functions: an object of some kilobytes) or, one in three, one it
    compiled before (a hit, or a miss if the daemon evicted it since).
    hostile: one new source in four starts with #line directives naming a
    FIFO and a 63 MiB sparse file in src, as a hostile checkout may."""

    def __init__(self, src, prefix, rng, hostile=False):
        os.makedirs(src, exist_ok=True)
        self.src, self.prefix, self.rng, self.hostile = src, prefix, rng, hostile
        self.done, self.n = [], 0
        if hostile and not os.path.exists(os.path.join(src, "fifo.h")):
            os.mkfifo(os.path.join(src, "fifo.h"))
            with open(os.path.join(src, "big.h"), "wb") as f:
                f.truncate(63 << 20)

    def next(self):
        """The path of the next source to compile, and of its object."""
        rng = self.rng
        if self.done and rng.random() < 1 / 3:
            name = rng.choice(self.done)
        else:
            self.n += 1
            name = f"{self.prefix}{rng.randrange(1 << 40):010x}_{self.n}"
            with open(os.path.join(self.src, name + ".c"), "w") as f:
                if self.hostile and rng.random() < 0.25:
                    f.write(f'#line 1 "{self.src}/fifo.h"\nint {name}_f;\n'
                            f'#line 1 "{self.src}/big.h"\nint {name}_b;\n')
                k = rng.randrange(1 << 20)
                for i in range(rng.randint(20, 160)):
                    f.write(f"int {name}_{i}(int x) {{ return x * {k + i} + {i}; }}\n")
            self.done.append(name)
            if len(self.done) > 400:
                self.done = self.done[200:]
        return os.path.join(self.src, name + ".c"), os.path.join(self.src, name + ".o")


def compile_loop(root, deadline, rng, src):
    env = dict(os.environ, CCACHE_DIR=root)
    env.pop("CCACHE_MAXSIZE", None)
    sources = Sources(src, "s", rng)
    stores = 0
    while not stop and time.monotonic() < deadline:
        c, o = sources.next()
        r = subprocess.run(["ccache", "gcc", "-O0", "-c", c, "-o", o],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            stores += 1
    return stores, 0, 0


def explain_loop(root, deadline, rng, src, ctl, sock):
    """Compiles as compile_loop does, from a hostile checkout, each through
    measure --explain."""
    env = dict(os.environ, CCACHE_DIR=root, XDG_CACHE_HOME=os.path.join(src, "xdg"))
    env.pop("CCACHE_MAXSIZE", None)
    sources = Sources(src, "x", rng, hostile=True)
    stores = explained = failed = 0
    while not stop and time.monotonic() < deadline:
        c, o = sources.next()
        try:
            r = subprocess.run([ctl, "-s", sock, "measure", "--explain", "--json", "--", "ccache", "gcc", "-O0",
                                "-c", c, "-o", o], env=env, capture_output=True, text=True, timeout=120)
            out = json.loads(r.stdout) if r.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError):
            out = None
        if out is None or "missed" not in out or "causes" not in out:
            failed += 1
            print(f"failed: {c}: {'timeout or no JSON' if out is None else out}", flush=True)
            continue
        explained += 1
        stores += len(out["missed"])
    print(f"explained {explained} failed {failed}", flush=True)
    return stores, 0, 0


def main(argv):
    signal.signal(signal.SIGTERM, on_term)
    mode, root, seconds, seed = argv[1], argv[2], float(argv[3]), int(argv[4])
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    if mode == "synth":
        s, b, h = synth(root, deadline, rng)
    elif mode == "ccache":
        s, b, h = compile_loop(root, deadline, rng, argv[5])
    elif mode == "explain":
        s, b, h = explain_loop(root, deadline, rng, argv[5], argv[6], argv[7])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(f"stores {s} bytes {b} hits {h}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
