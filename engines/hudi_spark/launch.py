"""Start Hudi Spark writer processes and make sure none outlives the command.

Each writer is ``python -m engines.hudi_spark.writer PLAN`` in its own process group (:func:`spawn`: the
kernel kills it if the harness dies), registered with the harness's watchdog (which kills the group if
the harness is killed outright), and killed in ``finally`` when it is still running at the deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.launchers.process import rss_kb, spawn, watchdog


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


def start_writer(name: str, plan: dict[str, Any], out: Path, *, python: str | None = None) -> WriterProcess:
    """Write ``plan`` to ``out/plan-<name>.json`` and start its writer process (log ``writer-<name>.log``)."""
    plan_path = out / f"plan-{name}.json"
    plan_path.write_text(json.dumps(plan, indent=1))
    log = out / f"writer-{name}.log"
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
