"""One JVM per node of the ``hudi`` world: the lock driver (``backends/hudi/driver/``) over JSON lines.

:class:`LockJvm` starts ``java -cp <driver classes + pinned Hudi jars> hcc.driver.LockDriver`` in a
session of its own (killed by the kernel if the harness dies, and watched by the launchers' watchdog),
its log (Hudi's own, at INFO) in a file. :meth:`LockJvm.call` sends one command and waits for its
reply; calls are answered in order, by the node's one writer thread in the JVM. An ``interrupted``
event (Hudi's heartbeat interrupted the writer thread while it waited for its next command) goes to
``on_event``.

Faults act on the whole JVM: :meth:`pause` and :meth:`resume` are SIGSTOP / SIGCONT (every thread
stops, the heartbeat's too, as in a GC pause), :meth:`kill` is SIGKILL (no shutdown hook), and
:meth:`terminate` is SIGTERM (the JVM runs its shutdown hooks: Hudi's providers expire their locks).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from backends.hudi.artifacts import DRIVER_MAIN, ArtifactError, driver_classpath, require_tool
from backends.launchers.process import rss_kb, spawn, watchdog

HEAP = "-Xmx192m"  # a lock driver holds a few providers: its heap stays small (the report gives its RSS)
START_TIMEOUT_S = 60.0


class JvmGone(RuntimeError):
    """The node's JVM ended (killed by a fault, or it died) before answering."""


class LockJvm:
    """A lock-driver JVM for one node (see the module doc)."""

    def __init__(self, version: str, log_path: Path, *,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.version = version
        self.log_path = log_path
        self.on_event = on_event
        self._ids = itertools.count(1)
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()
        self.peak_rss_kb = 0

    def start(self) -> None:
        """Start the JVM and wait until the driver says it is ready (ArtifactError if it cannot)."""
        java = require_tool("java")
        cp = os.pathsep.join(map(str, driver_classpath(self.version)))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        try:
            self._proc = spawn([java, HEAP, "-XX:+UseSerialGC", "-Xss512k",
                                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                                "-cp", cp, DRIVER_MAIN],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        finally:
            log.close()
        watchdog.watch(self._proc.pid, [])
        threading.Thread(target=self._read, args=(self._proc.stdout,), name="hcc-jvm-reader",
                         daemon=True).start()
        if not self._ready.wait(START_TIMEOUT_S) or not self.alive:
            self.kill()
            raise ArtifactError(f"the lock driver's JVM did not start (log {self.log_path})")

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send ``op`` and wait for its reply (``ok``, ``result`` or ``error``/``message``); JvmGone if the
        JVM ends first."""
        proc = self._proc
        if proc is None or proc.stdin is None or not self.alive:
            raise JvmGone("the node's JVM is not running")
        msg_id = next(self._ids)
        line = json.dumps({"id": msg_id, "op": op, **fields}) + "\n"
        try:
            with self._send_lock:
                proc.stdin.write(line.encode())
                proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise JvmGone("the node's JVM is gone") from None
        with self._cond:
            while msg_id not in self._replies:
                if not self._cond.wait(0.5) and not self.alive:
                    raise JvmGone(f"the node's JVM ended (exit {proc.poll()}) during {op}")
            return self._replies.pop(msg_id)

    def _read(self, stdout: IO[bytes] | None) -> None:
        assert stdout is not None
        for raw in stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue  # not the protocol (the driver sends nothing else to stdout)
            if "event" in msg:
                if msg["event"] == "ready":
                    self._ready.set()
                elif self.on_event is not None:
                    self.on_event(msg["event"], msg)
                continue
            with self._cond:
                self._replies[int(msg["id"])] = msg
                self._cond.notify_all()
        self._ready.set()  # the JVM ended: a start waiting for it stops waiting
        with self._cond:
            self._cond.notify_all()

    def _signal(self, sig: signal.Signals) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, sig)

    def pause(self) -> None:
        """SIGSTOP: every thread of the JVM stops."""
        self.sample_memory()
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT."""
        self._signal(signal.SIGCONT)

    def terminate(self, timeout_s: float = 30.0) -> bool:
        """SIGTERM (the shutdown hooks run); True when the JVM exited within ``timeout_s``."""
        self.sample_memory()
        self._signal(signal.SIGCONT)  # a paused JVM could not run its hooks
        self._signal(signal.SIGTERM)
        return self._wait(timeout_s)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs."""
        self.sample_memory()
        self._signal(signal.SIGKILL)
        self._wait(10.0)

    def _wait(self, timeout_s: float) -> bool:
        if self._proc is None:
            return True
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        watchdog.forget(self._proc.pid)
        for pipe in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        return True

    def sample_memory(self) -> int:
        """The JVM's resident memory now (kB), also kept as its peak."""
        if self.alive and self._proc is not None:
            self.peak_rss_kb = max(self.peak_rss_kb, rss_kb(self._proc.pid))
        return self.peak_rss_kb

