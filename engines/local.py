"""The local engine: sweep runs in this process, or in ``jobs`` worker processes (every core, no Spark).

A row depends only on its task (:mod:`engines.cells`), so the rows are the same in one process,
in worker processes and on Spark, and come back in task order whatever order they finish in.

Workers (``jobs`` > 1) are started once per engine, from a fork server (a clean process, so nothing
of the parent's threads is forked; ``spawn`` where there is no fork server), and stopped by
:meth:`LocalEngine.close`.  Each worker holds at most :data:`IN_FLIGHT` tasks and runs them in the
order given, so when one dies the task it was running is known exactly: it is tried once more in
a fresh worker (as Spark retries a lost task), and a second death gives an ``error`` row naming the
task's cell and seed, while the other runs go on.  A function that raises in a worker (a row
function other than :func:`engines.cells.run_task`, which turns a model crash into an error row)
stops the run with :class:`TaskFailed`, naming the cell and seed, as one process would stop.

Signals: workers ignore SIGINT (a Ctrl-C in a terminal reaches the whole process group); the
parent alone turns it, and SIGTERM, into an exception (:mod:`engines.lifecycle`), and on the way
out terminates its workers.  A worker whose parent is gone reads end-of-file and exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.cells import RESULT_COLUMNS, SweepRun, run_task
from engines.progress import Progress

__all__ = ["IN_FLIGHT", "LocalEngine", "Progress", "TaskFailed", "WorkersFailed", "default_jobs",
           "describe_task"]

IN_FLIGHT = 2  # tasks sent ahead to a worker: one running, one waiting, so a worker never idles
READY = "ready"
ATTEMPTS = 2  # a task whose worker died is tried once more in a fresh worker
STOP_WAIT_S = 5.0  # how long a terminated worker may take before it is killed


def default_jobs() -> int:
    """The machine's cores (``os.cpu_count()``; 1 when unknown)."""
    return os.cpu_count() or 1


def describe_task(task: Any) -> str:
    """``grid smoke cell 3 (lock.variant=fenced) seed 2``: enough to rerun one task alone."""
    settings = ", ".join(f"{k}={v}" for k, v in getattr(task, "settings", ()))
    where = f"grid {getattr(task, 'grid', '?')} cell {getattr(task, 'cell', '?')}"
    return f"{where}{f' ({settings})' if settings else ''} seed {getattr(task, 'seed', '?')}"


class TaskFailed(RuntimeError):
    """The row function raised in a worker; the message names the task and carries the traceback."""


class WorkersFailed(RuntimeError):
    """A worker process died before it started (its error is on stderr): no task is to blame."""


def _context() -> Any:
    """A fork server where there is one (POSIX), else spawn; never a bare fork of a threaded parent."""
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["engines.cells"])  # each worker forks with the model imported
        _start_forkserver_ignoring_sigint()
        return ctx
    return multiprocessing.get_context("spawn")


def _start_forkserver_ignoring_sigint() -> None:
    """Start the fork server with SIGINT ignored, which it keeps across its exec: it ignores SIGINT itself
    only once its preload (the whole model) is imported, and a Ctrl-C to the process group during that
    import killed it with a traceback (seen on a loaded 2-core machine)."""
    if threading.current_thread() is not threading.main_thread():
        multiprocessing.forkserver.ensure_running()  # signal handlers can only be set from the main thread
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


def _work(conn: Any) -> None:
    """A worker: ``(index, fn, task)`` in, ``(index, row, None)`` or ``(index, None, error)`` out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop (it terminates us)
    try:
        conn.send(READY)  # started: a death from now on is a task's, not the start's
    except (EOFError, OSError):
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if message is None:
            return
        index, fn, task = message
        reply: tuple[int, Any, str | None]
        try:
            reply = (index, fn(task), None)
        except Exception as e:  # noqa: BLE001 - reported to the parent, which names the task
            reply = (index, None, "".join(traceback.format_exception(e)).rstrip())
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as e:  # noqa: BLE001 - a row that does not pickle
            conn.send((index, None, f"the row could not be sent back: {type(e).__name__}: {e}"))


@dataclass
class _Worker:
    process: Any
    conn: Any
    queue: deque[int] = field(default_factory=deque)  # task indices sent, in the order they run
    ready: bool = False  # it said it started (a worker that dies before failed to start)


class LocalEngine:
    """Runs tasks in this process (``jobs=1``) or in ``jobs`` worker processes; rows in task order."""

    name = "local"

    def __init__(self, quiet: bool = False, jobs: int = 1) -> None:
        if jobs < 1:
            raise ValueError(f"jobs = {jobs}: must be >= 1")
        self.quiet = quiet
        self.jobs = jobs
        self._ctx: Any = None
        self._workers: list[_Worker] = []

    def run(self, tasks: Sequence[SweepRun], label: str = "sweep",
            fn: Callable[[SweepRun], dict[str, Any]] = run_task) -> list[dict[str, Any]]:
        """One row per task (``fn(task)``, :func:`run_task` by default), in task order."""
        progress = None if self.quiet else Progress(label, len(tasks))
        if self.jobs == 1 or len(tasks) < 2:
            rows = []
            for i, task in enumerate(tasks, 1):
                rows.append(fn(task))
                if progress:
                    progress.update(i)
            return rows
        try:
            return self._run_pool(tasks, fn, progress)
        except BaseException:
            self.close()  # workers may hold tasks of this run: never reuse them (SIGINT, a raise)
            raise

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (for tests and diagnostics)."""
        return [w.process.pid for w in self._workers if w.process.is_alive()]

    # ---- the pool ----------------------------------------------------------------------

    def _start_worker(self) -> _Worker:
        if self._ctx is None:
            self._ctx = _context()
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=_work, args=(child,), name="hcc-local-worker", daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _run_pool(self, tasks: Sequence[SweepRun], fn: Callable[[SweepRun], dict[str, Any]],
                  progress: Progress | None) -> list[dict[str, Any]]:
        while len(self._workers) < min(self.jobs, len(tasks)):
            self._workers.append(self._start_worker())
        rows: list[dict[str, Any] | None] = [None] * len(tasks)
        todo: deque[int] = deque(range(len(tasks)))
        deaths: dict[int, int] = {}
        done = 0

        def feed(w: _Worker) -> None:
            while todo and len(w.queue) < IN_FLIGHT:
                i = todo.popleft()
                w.queue.append(i)
                try:
                    w.conn.send((i, fn, tasks[i]))
                except OSError:  # it died: its sentinel says so, and _bury puts the task back
                    return

        def receive(w: _Worker) -> None:
            nonlocal done
            message = w.conn.recv()
            if message == READY:
                w.ready = True
                return
            index, row, error = message
            assert w.queue and w.queue[0] == index, "a worker answers in the order it was given"
            w.queue.popleft()
            if error is not None:
                raise TaskFailed(f"{describe_task(tasks[index])} failed in a worker process:\n{error}")
            rows[index] = row
            done += 1

        for w in self._workers:
            feed(w)
        while done < len(tasks):
            busy = [w for w in self._workers if w.queue]
            ready = multiprocessing.connection.wait(
                [w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=0.5)
            for w in busy:
                if w.conn in ready:
                    with contextlib.suppress(EOFError, OSError):  # it died: its sentinel says so, below
                        receive(w)
                if w.process.sentinel in ready or not w.process.is_alive():
                    with contextlib.suppress(EOFError, OSError):
                        while w.queue and w.conn.poll():  # rows it sent before dying
                            receive(w)
                    done += self._bury(w, tasks, rows, todo, deaths)
            for w in self._workers:
                feed(w)
            if progress:
                progress.update(done, running=sum(min(len(w.queue), 1) for w in self._workers))
        return [row if row is not None else {} for row in rows]

    def _bury(self, dead: _Worker, tasks: Sequence[SweepRun], rows: list[dict[str, Any] | None],
              todo: deque[int], deaths: dict[int, int]) -> int:
        """Replace a dead worker; its running task is retried or becomes an error row (returns rows made)."""
        dead.process.join(STOP_WAIT_S)
        code = dead.process.exitcode
        dead.conn.close()
        if not dead.ready:
            raise WorkersFailed(f"a worker process failed to start (exit code {code}; its error is above): "
                                "a script that runs sweeps needs if __name__ == '__main__'")
        self._workers[self._workers.index(dead)] = self._start_worker()
        if not dead.queue:
            return 0
        running, *waiting = dead.queue
        todo.extendleft(reversed(waiting))  # never started: they go to the next free worker
        deaths[running] = deaths.get(running, 0) + 1
        if deaths[running] < ATTEMPTS:
            todo.appendleft(running)
            return 0
        dying = code is not None and code < 0
        how = f"killed by {signal.Signals(-code).name}" if dying else f"exit code {code}"
        rows[running] = _died_row(tasks[running], f"worker process died ({how}) running "
                                                  f"{describe_task(tasks[running])}, {ATTEMPTS} times")
        return 1

    def close(self) -> None:
        """Stop the workers (if any): ask, then terminate, then kill what is left."""
        workers, self._workers = self._workers, []
        for w in workers:
            try:
                if not w.queue:
                    w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in workers:
            if w.queue or not _joined(w.process, 1.0):
                w.process.terminate()
                if not _joined(w.process, STOP_WAIT_S):
                    w.process.kill()
                    w.process.join()
            w.conn.close()

    def describe(self) -> str:
        """``local (one process)`` or ``local (N worker processes)``."""
        return "local (one process)" if self.jobs == 1 else f"local ({self.jobs} worker processes)"


def _joined(process: Any, seconds: float) -> bool:
    process.join(seconds)
    return not process.is_alive()


def _died_row(task: SweepRun, why: str) -> dict[str, Any]:
    """The error row of a task whose worker died (the row :func:`run_task` makes for a model crash)."""
    row: dict[str, Any] = {"grid": task.grid, "scenario": task.scenario.name, "cell": task.cell}
    row.update(task.settings)
    row["seed"] = task.seed
    row.update((c, None) for c, _ in RESULT_COLUMNS)
    row["verdict"], row["error"] = "error", why
    return row
