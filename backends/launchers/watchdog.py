"""The watchdog: a small process that kills the harness's servers when the harness is gone.

The harness starts one watchdog (:func:`backends.launchers.process.watchdog`) in a session of
its own, with a pipe on its stdin, and tells it each server's process group and the
scratch paths to delete (``watch``), and which it stopped itself (``forget``).  When the
pipe reaches end of file, the harness has exited, however it died (``SIGKILL`` included:
the kernel closes its end of the pipe): the watchdog sends SIGTERM to every process group
still watched, SIGKILL to what is left after a grace period, deletes the scratch paths,
and exits.  This catches what the parent-death signal of the server itself cannot: the
server's own children, and its data folders and sockets.

Standard library only: it runs as ``python watchdog.py`` without the project on the path.
Protocol: one JSON object per line, ``{"watch": PGID, "paths": [...]}`` or ``{"forget": PGID}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time

GRACE_S = 3.0


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def reap(watched: dict[int, list[str]], grace_s: float = GRACE_S) -> None:
    """SIGTERM each watched group, SIGKILL what is left after ``grace_s``, delete the scratch paths."""
    for pgid in watched:
        _signal(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(g) for g in watched):
        time.sleep(0.05)
    for pgid in watched:
        if _alive(pgid):
            _signal(pgid, signal.SIGKILL)
    time.sleep(0.2)  # let the kernel release the ports and files of the killed processes
    for paths in watched.values():
        for p in paths:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(p)


def main() -> int:
    """Read commands until end of file, then reap what is still watched."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the end of the pipe ends the watchdog
    watched: dict[int, list[str]] = {}
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
            if "watch" in cmd:
                watched[int(cmd["watch"])] = [str(p) for p in cmd.get("paths", [])]
            elif "forget" in cmd:
                watched.pop(int(cmd["forget"]), None)
        except (ValueError, TypeError, KeyError):
            continue
    reap(watched)
    return 0


if __name__ == "__main__":
    sys.exit(main())
