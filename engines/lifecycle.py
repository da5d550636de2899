"""Signals as exceptions: SIGINT and SIGTERM unwind the main thread, so every ``finally`` runs.

The contract every command relies on: while :func:`signals_as_exceptions` is active (``hcc``
activates it around each command), SIGINT raises :class:`KeyboardInterrupt` and SIGTERM
(what ``timeout``, CI runners and schedulers send) raises :class:`Terminated` in the main
thread.  Servers are stopped, the fault proxy closed and the history flushed by the
``finally`` blocks and context managers on the way out; run-directory writers mark the run
``interrupted`` (:meth:`engines.rundir.RunWriter.marks_interrupted`); ``hcc`` exits 130 or 143.

Only the first signal raises: a second one while the first unwinds is reported and
ignored, so cleanup is not cut short (SIGKILL remains, and the launched servers die with
the harness even then: see :mod:`backends.launchers.process`).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}


class Terminated(BaseException):  # noqa: N818 - named for the signal, like KeyboardInterrupt
    """SIGTERM arrived: unwinds like KeyboardInterrupt (not caught by ``except Exception``)."""


def signal_name(exc: BaseException) -> str | None:
    """``SIGINT`` for KeyboardInterrupt, ``SIGTERM`` for Terminated, else None."""
    if isinstance(exc, Terminated):
        return "SIGTERM"
    if isinstance(exc, KeyboardInterrupt):
        return "SIGINT"
    return None


STOP_SIGNALS = (KeyboardInterrupt, Terminated)  # what SIGINT and SIGTERM raise: the run is stopped


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """SIGINT -> KeyboardInterrupt, SIGTERM -> Terminated in the main thread; the old handlers after.

    Outside the main thread (where Python cannot install handlers) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[str] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if fired:
            print(f"hcc: {name} while stopping after {fired[0]}: still cleaning up", file=sys.stderr,
                  flush=True)
            return
        fired.append(name)
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
