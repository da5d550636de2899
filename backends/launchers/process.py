"""Start a server process with its log in a file, wait until it answers, always stop it.

Ports are on 127.0.0.1 only.  Readiness is polled with a bounded timeout; a
server that exits or never answers raises :class:`LaunchError` naming the log
file and quoting its last lines.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

HOST = "127.0.0.1"


class LaunchError(RuntimeError):
    """A server did not start (or its software is missing)."""


class Unavailable(LaunchError):
    """The server cannot run on this machine (missing binary, no Docker engine); a reason to skip."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (there is a small race until the server binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file, for error messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def http_answers(url: str, timeout: float = 1.0) -> bool:
    """True when ``url`` answers with any HTTP status."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def tcp_answers(port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def which(name: str, extra: Sequence[Path] = ()) -> str | None:
    """Find an executable on PATH or in ``extra`` folders."""
    for d in extra:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return shutil.which(name)


class ServerProcess:
    """One server process: log to ``log_path``, own process group, stopped by :meth:`stop`."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, *, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.cwd = cwd
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Spawn the process with stdout and stderr going to the log file."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"# {' '.join(self.argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.cwd, env={**os.environ, **(self.env or {})}, start_new_session=True,
            )

    @property
    def pid(self) -> int | None:
        """The process id, while started."""
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, ready: Callable[[], bool], timeout_s: float) -> None:
        """Poll ``ready`` until it is true; raise LaunchError on exit or timeout, pointing at the log."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise LaunchError(f"{self.name} exited with code {self.proc.returncode} before it was ready; "
                                  f"log {self.log_path}:\n{tail(self.log_path)}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise LaunchError(f"{self.name} not ready after {timeout_s:g}s; log {self.log_path}:\n"
                                  f"{tail(self.log_path)}")
            time.sleep(0.1)

    def kill(self) -> None:
        """Kill the process group at once (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, grace_s: float = 5.0) -> None:
        """Terminate the process group (SIGTERM, then SIGKILL after ``grace_s``)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.kill()
