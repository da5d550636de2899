"""Start a server process with its log in a file, wait until it answers, always stop it.

Ports are on 127.0.0.1 only, reserved before the server binds them (:func:`reserve_ports`:
below the kernel's ephemeral range, so no outgoing connection takes them, and locked
against other harness processes); a start that still loses a port to someone else is
retried on fresh ports (:func:`start_server`).  Readiness is polled with a bounded
timeout; a server that exits or never answers raises :class:`LaunchError` naming the log
file and quoting its last lines.

Every server dies with the harness: it runs in a process group of its own (a signal to the
harness's group does not reach it, :meth:`ServerProcess.stop` signals the whole group), it
gets a parent-death signal (Linux ``PR_SET_PDEATHSIG``, SIGKILL, set in the child before
exec; forked from a thread that lives as long as the process, since the signal fires when
the forking *thread* exits), and the :mod:`watchdog <backends.launchers.watchdog>` kills its
group and deletes its scratch folders when the harness is gone, even after a SIGKILL.  Its
pid is written to ``<name>.pid`` in its server folder.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import fcntl
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from backends.secrets import server_env

HOST = "127.0.0.1"
PORT_LOW = 15000  # reserved ports lie in [PORT_LOW, start of the ephemeral range)
START_ATTEMPTS = 3


class LaunchError(RuntimeError):
    """A server did not start (or its software is missing)."""


class Unavailable(LaunchError):
    """The server cannot run on this machine (missing binary, no Docker engine); a reason to skip."""


# ---- ports ------------------------------------------------------------------------------------


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def port_lock_dir() -> Path:
    """Where reserved ports are locked, shared by every harness process of the machine."""
    return Path(os.environ.get("HCC_PORT_LOCKS") or Path(tempfile.gettempdir()) / "hcc-ports")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


class PortReservation:
    """Ports held for one server until :meth:`release`: other harness processes skip them.

    Each port has a lock file under :func:`port_lock_dir` locked with ``flock`` (per open file,
    so two reservations of one process exclude each other too); the kernel drops the lock
    when this process dies, so a killed harness leaves no stale reservation.
    """

    def __init__(self, ports: list[int], files: list[IO[bytes]]) -> None:
        self.ports = ports
        self._files = files

    def release(self) -> None:
        """Unlock the ports (after the server stopped)."""
        for f in self._files:
            with contextlib.suppress(OSError):
                f.close()
        self._files = []


def reserve_ports(n: int, tries: int = 2000) -> PortReservation:
    """``n`` distinct free ports on 127.0.0.1, locked against other harness processes.

    The ports lie below the kernel's ephemeral range (``ip_local_port_range``), which the
    clients' own connections draw from.  A port is taken when no other process of the
    harness holds it and it can be bound now; the server may still lose it to an unrelated
    process before it binds it (see :func:`start_server`).
    """
    high = _ephemeral_low()
    low = PORT_LOW if high - PORT_LOW > 1000 else 1024
    lock_dir = port_lock_dir()
    lock_dir.mkdir(parents=True, exist_ok=True)
    rng = random.SystemRandom()
    ports: list[int] = []
    files: list[IO[bytes]] = []
    for _ in range(tries):
        port = rng.randrange(low, high)
        if port in ports:
            continue
        f = open(lock_dir / f"{port}.lock", "ab")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            locked = True
        except OSError:
            locked = False
        if locked and _bindable(port):
            ports.append(port)
            files.append(f)
            if len(ports) == n:
                return PortReservation(ports, files)
            continue
        f.close()
    PortReservation(ports, files).release()
    raise LaunchError(f"no {n} free ports in {low}..{high - 1} after {tries} tries")


def port_lost(log_text: str) -> bool:
    """True when a server's log says it could not bind a port someone else holds."""
    text = log_text.lower()
    return "address already in use" in text or "eaddrinuse" in text


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


def rss_kb(pid: int) -> int:
    """Resident memory of process ``pid`` (kB, its ``VmRSS``); 0 when it is gone."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def which(name: str, extra: Sequence[Path] = ()) -> str | None:
    """Find an executable on PATH or in ``extra`` folders."""
    for d in extra:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return shutil.which(name)


# ---- processes that die with the harness ------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
# Children are forked from this executor's one thread, which lives until the process exits
# (PR_SET_PDEATHSIG fires when the forking thread ends, not the process).
_spawner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hcc-spawner")


def _child_setup(parent: int) -> Callable[[], None]:
    def setup() -> None:  # runs in the child between fork and exec: no locks, no imports
        if _libc is not None:
            _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the harness died before prctl took effect
            os._exit(1)

    return setup


def spawn(argv: Sequence[str], **popen_kw: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv)`` in a new session, killed by the kernel when the harness dies (Linux)."""
    parent = os.getpid()

    def popen() -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = subprocess.Popen(
            list(argv), start_new_session=True, preexec_fn=_child_setup(parent), **popen_kw)
        return proc

    return _spawner.submit(popen).result()


class _Watchdog:
    """The harness's one watchdog process (started at the first server), fed through a pipe."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _send(self, cmd: dict[str, object]) -> None:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                # Not spawn(): the watchdog must outlive the harness.  Its stdin pipe is not
                # inherited by the servers (close_fds), so only the harness's exit closes it.
                script = Path(__file__).with_name("watchdog.py")
                self._proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                              start_new_session=True, close_fds=True)
            assert self._proc.stdin is not None
            with contextlib.suppress(OSError, ValueError):
                self._proc.stdin.write((json.dumps(cmd) + "\n").encode())
                self._proc.stdin.flush()

    def watch(self, pgid: int, paths: Sequence[Path]) -> None:
        """Kill group ``pgid`` and delete ``paths`` if the harness dies before :meth:`forget`."""
        self._send({"watch": pgid, "paths": [str(p) for p in paths]})

    def forget(self, pgid: int) -> None:
        """The harness stopped group ``pgid`` itself."""
        self._send({"forget": pgid})

    @property
    def pid(self) -> int | None:
        """The watchdog's pid, once started."""
        return self._proc.pid if self._proc is not None else None


watchdog = _Watchdog()


class ServerProcess:
    """One server process: log to ``log_path``, own process group, stopped by :meth:`stop`.

    ``ports`` (a :class:`PortReservation`) are released and ``scratch`` paths (data
    folders, sockets) deleted once the process has stopped; the watchdog does both if the
    harness dies first.  The pid and the ports go to ``<log folder>/<name>.pid``.
    """

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, *, cwd: Path | None = None,
                 env: dict[str, str] | None = None, ports: PortReservation | None = None,
                 scratch: Sequence[Path] = ()) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.cwd = cwd
        self.env = env
        self.reservation = ports
        self.scratch = list(scratch)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_offset = 0
        self._stopped = False

    @property
    def ports(self) -> list[int]:
        """The reserved ports this server binds."""
        return self.reservation.ports if self.reservation is not None else []

    @property
    def pid_file(self) -> Path:
        """Where the pid (line 1; the process group id is the same number) and the ports (line 2) are."""
        return self.log_path.parent / f"{self.name}.pid"

    def start(self) -> None:
        """Spawn the process with stdout and stderr going to the log file."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            log.write(f"# {' '.join(self.argv)}\n".encode())
            log.flush()
            self.proc = spawn(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              cwd=self.cwd, env=server_env(self.env))
        self.pid_file.write_text(f"{self.proc.pid}\n{' '.join(map(str, self.ports))}\n")
        watchdog.watch(self.proc.pid, self.scratch)

    def log_since_start(self) -> str:
        """What the process wrote to its log since :meth:`start`."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

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
        """Terminate the process group (SIGTERM, then SIGKILL after ``grace_s``), free its ports and scratch.

        Safe to call twice, and from a ``finally`` while a signal unwinds the harness.
        """
        if self.proc is None or self._stopped:
            return
        self._stopped = True
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=grace_s)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                self.kill()
            with contextlib.suppress(ProcessLookupError):  # whatever the server left in its group
                os.killpg(self.proc.pid, signal.SIGKILL)
        for p in self.scratch:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        if self.reservation is not None:
            self.reservation.release()
        watchdog.forget(self.proc.pid)


def start_server(name: str, n_ports: int, make: Callable[[list[int]], ServerProcess],
                 ready: Callable[[ServerProcess], None], attempts: int = START_ATTEMPTS) -> ServerProcess:
    """Reserve ``n_ports``, ``make`` the server for them, start it and wait until ``ready``.

    A server that could not bind one of its ports (another process took it between the
    reservation and the bind) is stopped and started again on fresh ports, up to
    ``attempts`` times; each retry is said in the server's log and on stderr.
    """
    for attempt in range(1, attempts + 1):
        ports = reserve_ports(n_ports)
        try:
            proc = make(ports.ports)
        except BaseException:
            ports.release()
            raise
        proc.reservation = ports
        proc.start()
        try:
            ready(proc)
            return proc
        except LaunchError:
            lost = port_lost(proc.log_since_start())
            proc.stop(grace_s=2)
            if not lost or attempt == attempts:
                raise
            note = (f"# hcc: {name} lost one of its ports {ports.ports} to another process; "
                    f"retrying on fresh ports (attempt {attempt + 1} of {attempts})")
            with open(proc.log_path, "a") as log:
                log.write(note + "\n")
            print(note[2:], file=sys.stderr, flush=True)
        except BaseException:
            proc.stop(grace_s=2)
            raise
    raise AssertionError("unreachable")
