"""The local engine: every task in this process, one after another (the baseline for Spark)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from engines.cells import Task, run_task


class Progress:
    """Progress on one line on a terminal (a line per update elsewhere), at most every ``every`` s."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None, every: float = 1.0) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.every = every
        self.started = time.monotonic()
        self._last = -1.0
        self._state: tuple[int, int, int] | None = None
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, done: int, running: int = 0, failed_attempts: int = 0, force: bool = False) -> None:
        now = time.monotonic()
        state = (done, running, failed_attempts)
        if state == self._state or (not force and now - self._last < self.every and done < self.total):
            return
        self._last, self._state = now, state
        extra = f", {running} running" if running else ""
        extra += f", {failed_attempts} failed attempts retried" if failed_attempts else ""
        line = f"{self.label}: {done}/{self.total} runs{extra} ({now - self.started:.1f}s)"
        if self._tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class LocalEngine:
    """Runs tasks in this process."""

    name = "local"

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def run(self, tasks: Sequence[Task], label: str = "sweep") -> list[dict[str, Any]]:
        """One row per task, in task order."""
        progress = None if self.quiet else Progress(label, len(tasks))
        rows = []
        for i, task in enumerate(tasks, 1):
            rows.append(run_task(task))
            if progress:
                progress.update(i)
        return rows

    def close(self) -> None:
        """Nothing to release."""

    def describe(self) -> str:
        return "local (one process)"
