"""Start Hudi Spark writer processes and make sure none outlives the command.

Each writer is ``python -m engines.hudi_spark.writer PLAN`` in its own process group (:func:`spawn`: the
kernel kills it if the harness dies), registered with the harness's watchdog (which kills the group if
the harness is killed outright), and killed in ``finally`` when it is still running at the deadline.

Writer faults (:class:`WriterFault`, injected by :class:`FaultInjector`): a writer is paused (SIGSTOP of its
process group, SIGCONT ``resume_after_s`` later) or killed (SIGKILL) when the fault proxy handles its
request matching a method and a key pattern (requests the server handled: one the proxy failed with a storage
fault is not counted). The injector is the proxy's ``on_exchange``, which the proxy
calls after the server answered the request and before it relays the reply: a writer killed on its PUT of
a log file dies with the file written and before it learns so (mid-commit, before its completed instant).
Each fault is an ``info`` line of the history (``f``: ``pause``, ``resume`` or ``kill``). A kill with
``restart_at`` restarts the writer (a new process under the same name, :attr:`FaultInjector.restart`) from
that batch of its plan, as a Spark job that died is run again. A fault with ``batch`` counts the writer's
requests only once the history shows that batch begun (its ``invoke`` line) or ended (``since = "end"``: its
``ok`` or ``fail`` line, or a kill during it), read by :class:`Progress` as the history grows: the first
request (``method = "ANY"``, ``key = "."``) after a batch ended is one the writer makes before its next batch,
between two of its commits.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backends.fault_proxy import Exchange
from backends.launchers.process import rss_kb, spawn, watchdog
from model.run_format import WRITER_LOG, process_file

if TYPE_CHECKING:
    from engines.rundir import RunWriter

FAULTS = ("kill", "pause")
APPLIED = ("forward", "lost-reply")  # the proxy's actions of a request the server handled
ANY = "ANY"  # a fault's method matching every request
METHODS = ("GET", "HEAD", "PUT", "POST", "DELETE")
SINCE = ("invoke", "end")  # a ``batch`` fault counts from the batch's invoke line, or from its end
ENDED = "in-commit"  # the history field ``ended`` of a ``then`` fault's kill or spared line


def _heartbeat_of(instant_key: str) -> str:
    """The heartbeat file's key of the instant an instant file's key (``<table>/.hoodie/timeline/<file>``)
    names: Hudi's ``<table>/.hoodie/.heartbeat/<instant>``, deleted when a write client releases an attempt it
    aborted (not the metadata table's of the same instant, deleted in the commit)."""
    hoodie, _, name = instant_key.rpartition("/timeline/")
    return f"{hoodie}/.heartbeat/{name.split('.', 1)[0]}"


@dataclass
class WriterProcess:
    """A running writer: its name, process, log and plan file."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    plan: Path
    started: float
    peak_rss_kb: int = 0


def _group_rss_kb(pid: int) -> int:
    """Resident memory (kB) of ``pid``'s process group: the Python driver and its JVM."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.getpgid(int(entry.name)) == pid:
                total += rss_kb(int(entry.name))
    return total


def start_writer(name: str, plan: dict[str, Any], run: RunWriter, *,
                 python: str | None = None) -> WriterProcess:
    """Write ``plan`` to the run directory's ``plan-<name>.json`` (through its writer ``run``, checked) and
    start its writer process (log ``writer-<name>.log``)."""
    plan_path = run.writer_plan(name, plan)
    log = run.log_path(process_file(WRITER_LOG, name))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYSPARK_PYTHON": python or sys.executable}
    with log.open("ab") as f:
        proc = spawn([python or sys.executable, "-m", "engines.hudi_spark.writer", str(plan_path)],
                     stdout=f, stderr=subprocess.STDOUT, env=env, cwd=Path(__file__).resolve().parents[2])
    watchdog.watch(proc.pid, [])
    return WriterProcess(name, proc, log, plan_path, time.monotonic())


def kill(w: WriterProcess) -> None:
    """Kill the writer's process group (its JVM too) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(w.proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        w.proc.wait(timeout=10)
    watchdog.forget(w.proc.pid)


def wait_all(writers: list[WriterProcess], timeout_s: float) -> dict[str, int | None]:
    """Wait for every writer until ``timeout_s``, sampling RSS; the exit codes (None: killed at the
    deadline). Every writer is dead when this returns, whatever happens."""
    deadline = time.monotonic() + timeout_s
    try:
        while any(w.proc.poll() is None for w in writers) and time.monotonic() < deadline:
            for w in writers:
                if w.proc.poll() is None:
                    w.peak_rss_kb = max(w.peak_rss_kb, _group_rss_kb(w.proc.pid))
            time.sleep(0.5)
        return {w.name: w.proc.poll() for w in writers}
    finally:
        for w in writers:
            if w.proc.poll() is None:
                kill(w)
            else:
                watchdog.forget(w.proc.pid)


@dataclass(frozen=True)
class WriterFault:
    """Pause or kill ``writer`` at the ``nth`` (1-based) request of its matching ``method`` and ``key``
    (a regular expression searched in the object key); a pause lasts ``resume_after_s``; a kill with
    ``restart_at`` restarts the writer from that batch of its plan. With ``then``, the nth match only arms
    the fault, which fires at the writer's next ``then`` request of that same key (its own instant file:
    the PUT of its n-th ``.inflight``, then its HEAD of it in the commit); when the writer deletes that
    instant's heartbeat first (Hudi aborted the attempt, a write conflict) it is spared (an ``info`` line
    ``spared``). Both lines carry ``ended``, which a batch's ``after_info`` waits for. With ``batch``, the
    writer's requests count only once its history shows that batch begun (``since = "invoke"``) or ended
    (``since = "end"``): the nth match is then the nth within (or after) that batch."""

    writer: str
    fault: str
    key: str
    method: str = "PUT"
    nth: int = 1
    resume_after_s: float = 5.0
    restart_at: int | None = None
    then: str | None = None  # fire at the writer's next request of this method on the nth match's key
    batch: int | None = None  # count only from this batch's invoke (or end) line on
    since: str = "invoke"

    def check(self, writers: list[str]) -> None:
        """ValueError naming the field and value of a fault that cannot be injected."""
        if self.fault not in FAULTS:
            raise ValueError(f"fault={self.fault!r}: one of {', '.join(FAULTS)}")
        if self.method not in (*METHODS, ANY):
            raise ValueError(f"fault method={self.method!r}: one of {', '.join((*METHODS, ANY))}")
        if self.since not in SINCE or (self.batch is not None and self.batch < 0):
            raise ValueError(f"fault batch={self.batch!r} since={self.since!r}: a batch 0 or more, since one "
                             f"of {', '.join(SINCE)}")
        if self.writer not in writers:
            raise ValueError(f"fault writer={self.writer!r}: one of {', '.join(writers)}")
        if self.nth < 1:
            raise ValueError(f"fault nth={self.nth}: must be 1 or more")
        if self.restart_at is not None and (self.fault != "kill" or self.restart_at < 0):
            raise ValueError(f"fault restart_at={self.restart_at}: a kill's batch, 0 or more")
        if self.then is not None and self.then not in METHODS:
            raise ValueError(f"fault then={self.then!r}: one of {', '.join(METHODS)}")
        try:
            re.compile(self.key)
        except re.error as e:
            raise ValueError(f"fault key={self.key!r}: {e}") from None


@dataclass
class Progress:
    """Each writer's batches begun and ended, read from the history file (JSON lines) as it grows: a batch
    ends with its ``ok`` or ``fail`` line, or with a ``kill`` of its writer during it."""

    path: Path
    begun: dict[str, set[int]] = field(default_factory=dict)
    ended: dict[str, set[int]] = field(default_factory=dict)
    _pos: int = 0
    _open: dict[str, int] = field(default_factory=dict)  # writer -> the batch it invoked last, not ended

    def update(self) -> None:
        """Read the lines appended since the last call (a line not yet whole is read next time)."""
        try:
            with self.path.open("rb") as f:
                f.seek(self._pos)
                data = f.read()
        except OSError:
            return
        whole = data[:data.rfind(b"\n") + 1]
        self._pos += len(whole)
        for raw in whole.splitlines():
            try:
                e = json.loads(raw)
            except ValueError:
                continue
            w = e.get("process")
            if e.get("f") == "write" and isinstance(e.get("value"), dict):
                b = int(e["value"].get("batch", -1))
                if e.get("type") == "invoke":
                    self.begun.setdefault(w, set()).add(b)
                    self._open[w] = b
                elif e.get("type") in ("ok", "fail"):
                    self.ended.setdefault(w, set()).add(b)
                    self._open.pop(w, None)
            elif e.get("type") == "info" and e.get("f") == "kill" and w in self._open:
                self.ended.setdefault(w, set()).add(self._open.pop(w))

    def reached(self, writer: str, batch: int, since: str) -> bool:
        """Whether ``writer``'s history shows ``batch`` begun (``since = "invoke"``) or ended."""
        seen = self.begun if since == "invoke" else self.ended
        if batch not in seen.get(writer, ()):
            self.update()
        return batch in seen.get(writer, ())


@dataclass
class FaultInjector:
    """The fault proxy's ``on_exchange``: injects ``faults`` into the writers registered with :meth:`add`
    and appends each to ``history`` as an ``info`` line. ``restart(writer, batch)`` starts a writer again
    from a batch (a kill's ``restart_at``) and returns its process, registered here in the killed one's
    place; it is started before the kill, so that whoever waits for the writers sees it."""

    faults: list[WriterFault]
    history: Path
    restart: Callable[[str, int], WriterProcess] | None = None
    writers: dict[str, WriterProcess] = field(default_factory=dict)
    _seen: dict[int, int] = field(default_factory=dict)  # fault index -> matching requests so far
    _armed: dict[int, str] = field(default_factory=dict)  # fault index -> the key its ``then`` waits for
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _progress: Progress | None = None

    def add(self, w: WriterProcess) -> None:
        """Make ``w`` a target of its faults."""
        self.writers[w.name] = w

    def __call__(self, ex: Exchange) -> None:
        if ex.action not in APPLIED:  # a request the proxy failed (a storage fault) is not the n-th
            return
        for i, f in enumerate(self.faults):
            if ex.node != f.writer:
                continue
            with self._lock:
                if i in self._armed:
                    if ex.method == "DELETE" and ex.key == _heartbeat_of(self._armed[i]):
                        del self._armed[i]  # the attempt ended short of the point (Hudi aborted it)
                        self._record("spared", f, ex)
                        continue
                    if ex.method != f.then or ex.key != self._armed[i]:
                        continue
                    del self._armed[i]
                elif (f.method not in (ANY, ex.method) or not re.search(f.key, ex.key)
                      or f.batch is not None and not self._reached(f)):
                    continue
                else:
                    self._seen[i] = self._seen.get(i, 0) + 1
                    if self._seen[i] != f.nth:
                        continue
                    if f.then is not None:
                        self._armed[i] = ex.key
                        continue
            w = self.writers.get(f.writer)
            if w is None or w.proc.poll() is not None:
                continue
            sig = signal.SIGKILL if f.fault == "kill" else signal.SIGSTOP
            if f.restart_at is not None and self.restart is not None:
                self.writers[f.writer] = self.restart(f.writer, f.restart_at)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(w.proc.pid, sig)
            self._record(f.fault, f, ex)
            if f.fault == "pause":
                t = threading.Timer(f.resume_after_s, self._resume, args=(w, f, ex))
                t.daemon = True  # a writer still stopped at the deadline is killed by wait_all
                t.start()

    def _reached(self, f: WriterFault) -> bool:
        if self._progress is None:
            self._progress = Progress(self.history)
        assert f.batch is not None
        return self._progress.reached(f.writer, f.batch, f.since)

    def _resume(self, w: WriterProcess, f: WriterFault, ex: Exchange) -> None:
        if w.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(w.proc.pid, signal.SIGCONT)
            self._record("resume", f, ex)

    def _record(self, what: str, f: WriterFault, ex: Exchange) -> None:
        line = json.dumps({"process": f.writer, "type": "info", "f": what, "time": time.time(),
                           "value": {"method": ex.method, "key": ex.key, "status": ex.status,
                                     "proxy_ms": ex.at_ms, "pattern": f.key, "nth": f.nth},
                           # a `then` fault's attempt is over, killed or spared: what waiters wait for
                           **({"ended": ENDED} if f.then is not None else {})},
                          sort_keys=True) + "\n"
        fd = os.open(self.history, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())  # one append: the writers append to the same file
            os.fsync(fd)
        finally:
            os.close(fd)
