#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A hostile user's directory churn in a cache, for the stress tests: creates,
renames, deletes and recreates directories (ccache-shaped hex levels and
foreign trees alike) and files (entry names with old mtimes, so that trims
pick them) in a random but reproducible order, for at most SECONDS seconds
and OPS operations. Every failure of a single operation (a race with the
daemon's own upkeep or trims, a name taken) is ignored: the point is the
daemon's side.

Usage: churn.py ROOT SECONDS SEED [OPS]"""
import os
import random
import shutil
import sys
import time

B32 = "0123456789abcdefghijklmnopqrstuv"
HEX = "0123456789abcdef"
NAMES = list(HEX) + ["a", "x", "y", "zz", "deep", "s"]
MAX_DIRS = 4000


def entry_name(rng):
    return "".join(rng.choice(B32) for _ in range(31)) + rng.choice("RM")


class Churn:
    def __init__(self, root, seed):
        self.root = root
        self.rng = random.Random(seed)
        self.dirs = []
        self.files = []
        self.rescan()

    def rescan(self):
        self.dirs, self.files = [], []
        for top, subdirs, names in os.walk(self.root):
            rel = os.path.relpath(top, self.root)
            if rel != "." and not rel.startswith("lock"):
                self.dirs.append(rel)
            self.files.extend(os.path.join(top, n) for n in names
                              if n not in ("ccache.conf", "stats", "CACHEDIR.TAG"))

    def path(self, rel):
        return os.path.join(self.root, rel)

    def some_dir(self):
        return self.rng.choice(self.dirs) if self.dirs else None

    def new_path(self, depth):
        return "/".join(self.rng.choice(NAMES) for _ in range(depth))

    def mkdir_tree(self):
        if len(self.dirs) > MAX_DIRS:
            return
        base = self.new_path(self.rng.randint(1, 3))
        fan = self.rng.choice([1, 1, 2, 5, 40])
        for i in range(fan):
            os.makedirs(self.path(f"{base}/{i}/s" if fan > 1 else base), exist_ok=True)

    def put(self):
        d = self.some_dir()
        if d is None:
            return
        shaped = all(c in HEX and len(c) == 1 for c in d.split("/")) and d.count("/") == 1
        name = entry_name(self.rng) if shaped or self.rng.random() < 0.3 else f"f{self.rng.randrange(1000)}"
        p = os.path.join(self.path(d), name)
        with open(p, "wb") as f:
            f.write(b"x" * self.rng.choice([0, 1, 100, 4097, 20000, 70000]))
        # Old entries: what a trim evicts first.
        t = time.time() - self.rng.randint(0, 30 * 86400)
        os.utime(p, (t, t))
        self.files.append(p)

    def rename_dir(self):
        d = self.some_dir()
        if d is None:
            return
        parent = self.rng.choice([""] + self.dirs)
        if parent == d or parent.startswith(d + "/"):
            return
        target = os.path.join(parent, self.rng.choice(NAMES)) if parent else self.rng.choice(NAMES)
        os.rename(self.path(d), self.path(target))

    def big_tree_swapped(self):
        # Big enough that its scan spans loop iterations, renamed meanwhile.
        base = self.new_path(self.rng.randint(1, 2))
        for i in range(1500):
            os.makedirs(self.path(f"{base}/t/{i}/s"), exist_ok=True)
        for _ in range(self.rng.randint(5, 40)):
            os.rename(self.path(f"{base}/t"), self.path(f"{base}/u"))
            os.rename(self.path(f"{base}/u"), self.path(f"{base}/t"))
        if self.rng.random() < 0.7:
            shutil.rmtree(self.path(f"{base}/t"))

    def swap_back_and_forth(self):
        d = self.some_dir()
        if d is None:
            return
        other = d + "~"
        for _ in range(self.rng.randint(1, 20)):
            os.rename(self.path(d), self.path(other))
            os.rename(self.path(other), self.path(d))

    def remove_dir(self):
        d = self.some_dir()
        if d is not None:
            shutil.rmtree(self.path(d))

    def remove_file(self):
        if self.files:
            os.unlink(self.files.pop(self.rng.randrange(len(self.files))))

    def rename_file(self):
        d = self.some_dir()
        if self.files and d is not None:
            src = self.files.pop(self.rng.randrange(len(self.files)))
            os.rename(src, os.path.join(self.path(d), os.path.basename(src)))

    def step(self):
        op = self.rng.choices(
            [self.mkdir_tree, self.put, self.rename_dir, self.swap_back_and_forth,
             self.remove_dir, self.remove_file, self.rename_file, self.big_tree_swapped],
            weights=[20, 30, 15, 8, 7, 10, 10, 1])[0]
        try:
            op()
        except OSError:
            pass


def main():
    root, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    ops = int(sys.argv[4]) if len(sys.argv) > 4 else 1000000
    churn = Churn(root, seed)
    deadline = time.monotonic() + seconds
    done = 0
    while done < ops and time.monotonic() < deadline:
        churn.step()
        done += 1
        if done % 50 == 0:
            churn.rescan()
    print(f"churn: {done} operations")


if __name__ == "__main__":
    main()
