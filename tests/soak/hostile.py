#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The soak's hostile user, run as nobody from a world-readable copy:

  hostile.py plant CACHE OUTSIDE... SECONDS SEED
      until SECONDS have passed or SIGTERM comes: symlinks with entry names
      planted in ccache's level directories, pointing at files and
      directories outside the cache (OUTSIDE...); hard links to nobody's own
      files outside; regular files with entry names; all with old mtimes,
      so that trims pick them first; renames of what it planted across the
      level directories; a level directory swapped for a symlink to an
      OUTSIDE directory and back; and churn.py's renames, deletions and
      recreations of directories in a tree of its own in the cache
      (removed at the end). Prints "planted N churn N" at its end.
  hostile.py steal CACHE STASH SECONDS SEED
      until SECONDS have passed or SIGTERM comes (at most 40 times): a
      level-2 directory of CACHE (its parents 0777, not sticky, as in every
      shared cache) renamed into STASH, a directory of nobody's own on the
      same volume, as STASH/N; what it holds listed at once into STASH/N.list.
      Never put back: whatever a process that held the directory open wrote
      into it later (a merge into CACHE) shows as a file not in the list.
      Prints "stole N" at its end.
  hostile.py drip SOCKET N SECONDS TICK
      holds up to N connections, one byte on each every TICK seconds, never
      a newline (tests/lib/cktest.py's drip, as hostile-socket.bats's dripper)"""
import os
import random
import shutil
import signal
import sys
import time

# tests/lib/cktest.py: beside this file in a world-readable copy, else in tests/lib/.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), d) for d in (".", "../lib")]
import cktest  # noqa: E402

B32 = "0123456789abcdefghijklmnopqrstuv"
HEX = "0123456789abcdef"
OLD = 1000000000                         # 2001: older than anything ccache wrote
stop = False


def on_term(signum, frame):
    global stop
    stop = True


def entry_name(rng):
    """As ccache names an entry (writer.py's entry_name)."""
    return ("".join(rng.choice(HEX) for _ in range(2)) + "".join(rng.choice(B32) for _ in range(28))
            + rng.choice(B32[::2]) + rng.choice("RM"))


def level_dir(cache, rng):
    return os.path.join(cache, rng.choice(HEX), rng.choice(HEX))


def outside_files(dirs):
    files, subdirs = [], []
    for d in dirs:
        subdirs.append(d)
        for top, ds, names in os.walk(d):
            files.extend(os.path.join(top, n) for n in names)
            subdirs.extend(os.path.join(top, x) for x in ds)
    return files, subdirs


def put_back(away, d):
    """Renames level directory away back to d; if the daemon made d again
    meanwhile (and a writer wrote in it), moves away's files into it."""
    try:
        os.rename(away, d)
        return
    except OSError:
        pass
    for _ in range(50):
        try:
            for n in os.listdir(away):
                os.rename(os.path.join(away, n), os.path.join(d, n))
            os.rmdir(away)
            return
        except OSError:
            time.sleep(0.01)


def plant(cache, outside, seconds, seed):
    rng = random.Random(seed)
    churn_mod = cktest.load_helper("churn.py")
    # churn.py in a tree of nobody's own: moving ccache's level directories
    # (0777, not sticky) into a foreign tree parks root's entries where no
    # trim may take them, and the cap could not hold; that is said apart
    own = os.path.join(cache, f"h{seed}")
    os.makedirs(own, exist_ok=True)
    churn = churn_mod.Churn(own, seed)
    files, dirs = outside_files(outside)
    mine = [f for f in files if os.stat(f).st_uid == os.getuid()]
    planted = []
    n_planted = n_churn = 0
    deadline = time.monotonic() + seconds
    while not stop and time.monotonic() < deadline:
        op = rng.choices(["symlink", "dirlink", "hardlink", "file", "rename", "swap", "churn"],
                         weights=[20, 5, 10, 10, 15, 2, 20])[0]
        try:
            p = os.path.join(level_dir(cache, rng), entry_name(rng))
            if op == "symlink" and files:
                os.symlink(rng.choice(files), p)
                os.utime(p, (OLD, OLD), follow_symlinks=False)
            elif op == "dirlink" and dirs:
                os.symlink(rng.choice(dirs), p)
            elif op == "hardlink" and mine:
                os.link(rng.choice(mine), p)
            elif op == "file":
                with open(p, "wb") as f:
                    f.write(b"h" * rng.choice([0, 1, 4096, 30000]))
                os.utime(p, (OLD, OLD))
            elif op == "rename" and planted:
                src = planted.pop(rng.randrange(len(planted)))
                os.rename(src, p)
            elif op == "swap" and dirs:
                # ccache's level directory for a moment a symlink to a
                # directory outside: a walk or a trim following it would
                # reach files it must never touch
                d = level_dir(cache, rng)
                os.rename(d, d + ".away")
                try:
                    os.symlink(rng.choice(dirs), d)
                    time.sleep(0.02)
                    os.unlink(d)
                finally:
                    put_back(d + ".away", d)
                continue
            elif op == "churn":
                for _ in range(5):
                    churn.step()
                n_churn += 5
                if n_churn % 100 == 0:
                    churn.rescan()
                continue
            else:
                continue
            planted.append(p)
            n_planted += 1
            if len(planted) > 500:
                planted = planted[250:]
        except OSError:
            pass                        # a race with the daemon or a writer: go on
        time.sleep(0.002)
    shutil.rmtree(own, ignore_errors=True)
    print(f"planted {n_planted} churn {n_churn}", flush=True)


def steal(cache, stash, seconds, seed):
    rng = random.Random(seed)
    n = 0
    deadline = time.monotonic() + seconds
    while not stop and time.monotonic() < deadline and n < 40:
        away = os.path.join(stash, str(n))
        try:
            os.rename(level_dir(cache, rng), away)
        except OSError:
            time.sleep(0.01)
            continue
        with open(away + ".list", "w") as f:
            f.write("".join(x + "\n" for x in sorted(os.listdir(away))))
        n += 1
        time.sleep(rng.uniform(0.05, 0.3))
    print(f"stole {n}", flush=True)


def main(argv):
    signal.signal(signal.SIGTERM, on_term)
    if len(argv) >= 6 and argv[1] == "plant":
        plant(argv[2], argv[3:-2], float(argv[-2]), int(argv[-1]))
    elif len(argv) == 6 and argv[1] == "steal":
        steal(argv[2], argv[3], float(argv[4]), int(argv[5]))
    elif len(argv) == 6 and argv[1] == "drip":
        cktest.drip(argv[2], int(argv[3]), float(argv[4]), float(argv[5]), stopped=lambda: stop)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
