#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The times a hit leaves on tmpfs when a tick of the coarse clock falls
inside its utimensat(NULL): atime and mtime at one instant, ctime one tick
later (shmem_setattr stamps ctime once more after setattr_copy set all
three; about one touch in 10^5 on Linux 6.18). Made from two calls:
utimensat(NULL), then, once the coarse clock has moved past that instant, a
chmod to the same mode, which moves ctime alone. While the daemon is
stopped, their two IN_ATTRIB events merge in the kernel's queue (the same
event as the last one queued) into one, as the hit's own would be. Tries
again, with the same events, until ctime is after mtime by at most a tick
(a preemption between the two calls may make it more: on a box loaded
with two busy loops beside the suite, 100 tries were not enough).

Usage: tick-ctime.py FILE
Prints "GAP_NS TICK_NS"; exits 1 if no try gave such times."""
import os
import sys
import time

CLOCK_REALTIME_COARSE = 5  # Linux's clock id; Python's time module lacks the name


def main():
    path = sys.argv[1]
    tick = round(time.clock_getres(CLOCK_REALTIME_COARSE) * 1e9)
    mode = os.stat(path).st_mode & 0o7777
    for _ in range(2000):  # under load most tries are preempted between the two calls: about 8 s at most
        os.utime(path)  # times None: utimensat(AT_FDCWD, path, NULL, 0), as ccache's hit
        touched = os.stat(path).st_ctime_ns
        while time.clock_gettime_ns(CLOCK_REALTIME_COARSE) <= touched:
            pass
        os.chmod(path, mode)
        st = os.stat(path)
        gap = st.st_ctime_ns - st.st_mtime_ns
        if st.st_atime_ns == st.st_mtime_ns and 0 < gap <= tick:
            print(gap, tick)
            return 0
    print(f"tick-ctime: ctime never within a tick ({tick} ns) after mtime", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
