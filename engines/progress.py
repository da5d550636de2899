"""What a long command is doing, on stderr: a line per part with elapsed times, a bar where a count is known.

Every long command (``hcc sweep``, ``hcc boundary``, ``hcc conformance``, ``hcc realworld``,
``hcc explore-lock``) reports through this module, never on stdout (tests and scripts parse stdout):

- :class:`Steps`: a command's parts (a phase, a property, a row), one line as each starts and one as
  it ends with its seconds; ``Steps.seconds`` keeps each part's seconds for the command's JSON.
  Every line carries the time since the command started: ``hcc conformance [  12.3s] create-race ...``.
- :class:`Progress`: a count that is known (runs of a sweep, seconds of a real-world run).  In a
  terminal it is a bar redrawn in place; when stderr is not a terminal (a file, a pipe, a CI log),
  or ``CI`` is set, or ``TERM=dumb``, it is a plain line at most every ``every`` seconds (default
  :data:`LINE_EVERY`) and at the end: never a bar, never a carriage return.

Times are wall-clock (``time.monotonic``) and only ever printed or reported, never compared by a test.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

BAR_WIDTH = 24
BAR_EVERY = 0.2  # seconds between redraws of a bar
LINE_EVERY = 5.0  # seconds between plain progress lines (logs: a line a second is noise)


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an interactive terminal that may get a bar (not CI, not TERM=dumb)."""
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def seconds_text(seconds: float) -> str:
    """``4.2s``, ``3m07s``, ``1h02m``: short and readable at any length."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


class Progress:
    """A known count (``done`` of ``total`` ``unit``): a bar in a terminal, else a line now and then.

    ``update`` may be called as often as wanted; it draws at most every :data:`BAR_EVERY` seconds
    (terminal) or ``every`` seconds (elsewhere), always when ``force`` is set or the count is complete.
    """

    def __init__(self, label: str, total: int, stream: TextIO | None = None, every: float | None = None,
                 unit: str = "runs") -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = is_terminal(self.stream)
        self.every = every if every is not None else (BAR_EVERY if self.tty else LINE_EVERY)
        self.started = time.monotonic()
        # a bar is drawn at once; a plain line only after ``every`` seconds (a short count says nothing)
        self._last = -1.0e9 if self.tty else self.started
        self._state: tuple[int, int, int] | None = None
        self._width = 0  # of the bar last drawn, to blank what a shorter one leaves

    def text(self, done: int, running: int = 0, failed_attempts: int = 0) -> str:
        """The progress line without a bar: ``label: 12/40 runs, 2 running (3.2s)``."""
        extra = f", {running} running" if running else ""
        extra += f", {failed_attempts} failed attempts retried" if failed_attempts else ""
        return (f"{self.label}: {done}/{self.total} {self.unit}{extra} "
                f"({seconds_text(time.monotonic() - self.started)})")

    def update(self, done: int, running: int = 0, failed_attempts: int = 0, force: bool = False) -> None:
        """Show ``done`` (and what is running or was retried) if it is time to."""
        now = time.monotonic()
        state = (done, running, failed_attempts)
        complete = done >= self.total
        if state == self._state or (not force and not complete and now - self._last < self.every):
            return
        self._last, self._state = now, state
        line = self.text(done, running, failed_attempts)
        if self.tty:
            filled = BAR_WIDTH * min(done, self.total) // max(self.total, 1)
            bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {line}"
            pad = " " * max(0, self._width - len(bar))
            self._width = len(bar)
            self.stream.write("\r" + bar + pad + ("\n" if complete else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class Steps:
    """The parts of one command, each announced on stderr and timed; ``seconds`` maps part -> seconds.

    ``quiet`` prints nothing but still times the parts (the JSON carries them either way).
    """

    def __init__(self, command: str, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.started = time.monotonic()
        self.seconds: dict[str, float] = {}
        self._said = -1.0e9  # when :meth:`status` last printed

    def elapsed(self) -> float:
        """Seconds since the command started."""
        return time.monotonic() - self.started

    def say(self, text: str) -> None:
        """One line: the command, the time since it started, ``text``."""
        if self.quiet:
            return
        self.stream.write(f"{self.command} [{seconds_text(self.elapsed()):>6}] {text}\n")
        self.stream.flush()

    def status(self, text: str, every: float = LINE_EVERY) -> None:
        """A line on how a part goes where no count is known; at most one every ``every`` seconds."""
        now = time.monotonic()
        if now - self._said >= every:
            self._said = now
            self.say(text)

    @contextlib.contextmanager
    def part(self, name: str, done: Callable[[], str] | None = None) -> Iterator[None]:
        """Announce ``name``, time it, and say how long it took (``done()`` adds a word on the outcome).

        The part's seconds are kept even when it raises (then it ends with ``failed``).
        """
        self.say(f"{name} ...")
        t0 = time.monotonic()
        ok = False
        try:
            yield
            ok = True
        finally:
            took = time.monotonic() - t0
            self.seconds[name] = round(took, 3)
            outcome = (done() if done is not None else "done") if ok else "failed"
            self.say(f"{name} {outcome} in {seconds_text(took)}")

    def progress(self, label: str, total: int, unit: str = "runs") -> Progress | None:
        """A :class:`Progress` on the same stream, or None when quiet."""
        if self.quiet:
            return None
        return Progress(f"{self.command}: {label}", total, self.stream, unit=unit)
