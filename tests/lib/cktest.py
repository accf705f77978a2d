# SPDX-License-Identifier: MIT
"""What the soak (tests/soak/*.py), the test helpers (tests/helpers/*.py) and
the bats files share, one copy each: a request over the daemon's socket, one
per connection as cachectl asks; two asked at the same moment, each timed;
the dripper that holds connections open a byte at a time; an entry stored
through a temporary; a helper script loaded as a module by its file name. Its users find it beside them (a
world-readable copy made for another user holds them all in one folder) or
in tests/lib/.

  python3 cktest.py drip SOCKET N SECONDS TICK
      holds up to N connections to SOCKET for SECONDS, one byte on each
      every TICK seconds (never a newline), a new one for each the daemon
      closes or refuses; prints "opened N refused N" each tick"""
import importlib.util
import os
import select
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STATUS = b'{"cmd":"status"}\n'


def connect_send(path, line, timeout):
    """A connection to the Unix socket at path that has sent line, left
    non-blocking for select; connect and send bounded by timeout."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(line)
        s.setblocking(False)
    except OSError:
        s.close()
        raise
    return s


def ask_at_once(requests, timeout):
    """Sends each (path, line) of requests at the same moment, one
    connection each, and reads each reply line; returns [(ms, reply)] in
    the order asked, ms from the first send to that reply's end. OSError
    when one cannot connect, closes early or is not done within timeout."""
    t0 = time.monotonic()
    socks, pending, took = [], {}, {}
    try:
        for path, line in requests:
            s = connect_send(path, line, timeout)
            socks.append(s)
            pending[s] = bytearray()
        while pending:
            ready, _, _ = select.select(list(pending), [], [], timeout)
            if not ready:
                raise OSError(f"no reply within {timeout:g} s")
            for s in ready:
                chunk = s.recv(1 << 16)
                if not chunk:
                    raise OSError("connection closed before the reply ended")
                pending[s] += chunk
                if pending[s].endswith(b"\n"):
                    took[s] = ((time.monotonic() - t0) * 1000, bytes(pending.pop(s)))
    finally:
        for s in socks:
            s.close()
    return [took[s] for s in socks]


def request(path, line=STATUS, timeout=30):
    """One request on a connection of its own; the reply line (bytes)."""
    return ask_at_once([(path, line)], timeout)[0][1]


def drip(path, n, seconds, tick, stopped=lambda: False, report=None):
    """Holds up to n connections to path, one "{" on each every tick
    seconds, until seconds have passed or stopped() is true; opens a new
    one for each the daemon closes or refuses. report(opened, refused), if
    given, is called each tick (refused: the replies that said "too many
    connections")."""
    socks, opened, refused = [], 0, 0
    end = time.monotonic() + seconds
    while not stopped() and time.monotonic() < end:
        while len(socks) < n:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(0.5)
            try:
                s.connect(path)
            except OSError:
                s.close()
                break
            s.setblocking(False)
            socks.append(s)
            opened += 1
        for s in list(socks):
            try:
                data = s.recv(4096)
                if not data:
                    raise ConnectionError
                if b"too many connections" in data:
                    refused += 1
            except BlockingIOError:
                pass
            except OSError:
                socks.remove(s)
                s.close()
                continue
            try:
                s.send(b"{")
            except OSError:
                socks.remove(s)
                s.close()
        if report:
            report(opened, refused)
        time.sleep(tick)
    for s in socks:
        s.close()


def store(path, data, tmp):
    """Writes data to path as ccache stores an entry: into tmp, then renamed
    over path. On OSError tmp is gone and the error raised again."""
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_helper(file_name):
    """The Python helper file_name (ccache-entry.py, churn.py) as a module:
    from this folder (a copy holding them all), tests/helpers/ or
    tests/soak/."""
    for d in (HERE, os.path.join(HERE, "..", "helpers"), os.path.join(HERE, "..", "soak")):
        p = os.path.join(d, file_name)
        if os.path.exists(p):
            spec = importlib.util.spec_from_file_location(file_name[:-3].replace("-", "_"), p)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    raise ImportError(f"no helper {file_name} beside {HERE}")


def main(argv):
    if len(argv) == 6 and argv[1] == "drip":
        drip(argv[2], int(argv[3]), float(argv[4]), float(argv[5]),
             report=lambda o, r: print(f"opened {o} refused {r}", flush=True))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
