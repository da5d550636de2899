"""Killing ``hcc`` mid-run leaves nothing behind; two runs at once do not collide.

Each command runs as a subprocess in a session of its own, with ``HCC_RUN_TMP`` pointing at a
folder of this test: a launched server records its pid and ports there (``<name>.pid``), and
every process the harness starts inherits that variable, so "no process remains" is checked
over every process of the machine whose environment carries it (servers, the watchdog).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.launchers.process import HOST
from model.runtime.history import loads

REPO = Path(__file__).resolve().parents[1]
SHORT = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=400", "lock.wait_time_ms=10000"]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HCC_RUN_TMP"] = str(tmp_path / "servers")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def hcc(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """``hcc ARGS`` as a subprocess in its own session, cwd ``tmp_path``."""
    return subprocess.Popen([sys.executable, "-m", "cli.main", *args], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def started_by(tmp_path: Path) -> list[int]:
    """Live processes whose environment carries this test's HCC_RUN_TMP (what the harness started)."""
    marker = f"HCC_RUN_TMP={tmp_path / 'servers'}".encode()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if marker in (d / "environ").read_bytes().split(b"\0") and _alive(int(d.name)):
                found.append(int(d.name))
        except OSError:
            continue
    return found


def wait_for_server(tmp_path: Path, proc: subprocess.Popen[str],
                    timeout_s: float = 90) -> tuple[int, list[int]]:
    """The pid and ports of the first server the command launched, once it answers on its first port."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"hcc exited early ({proc.returncode}): {proc.communicate()}"
        for pid_file in (tmp_path / "servers").glob("*/*.pid"):
            lines = pid_file.read_text().splitlines()
            if len(lines) >= 2 and lines[1]:
                pid, ports = int(lines[0]), [int(p) for p in lines[1].split()]
                try:
                    socket.create_connection((HOST, ports[3] if len(ports) == 8 else ports[0]), 0.5).close()
                    return pid, ports
                except OSError:
                    pass
        time.sleep(0.2)
    raise AssertionError("the server did not come up")


def port_free(port: int) -> bool:
    """Nobody listens on ``port`` (a server could bind it again)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def assert_nothing_left(tmp_path: Path, pid: int, ports: list[int], timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and (_alive(pid) or started_by(tmp_path)):
        time.sleep(0.2)
    assert not _alive(pid), f"server {pid} still runs"
    assert started_by(tmp_path) == [], "processes started by the harness remain"
    assert all(port_free(p) for p in ports), f"a port of {ports} is still bound"


def wait_for_events(history: Path, proc: subprocess.Popen[str], pattern: str, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"hcc exited early ({proc.returncode}): {proc.communicate()}"
        if history.exists() and pattern in history.read_text():
            return
        time.sleep(0.2)
    raise AssertionError(f"no {pattern} in {history}")


@pytest.mark.parametrize("backend", ["fake-gcs", "seaweedfs"])
def test_sigterm_stops_conformance_and_its_server(tmp_path: Path, backend: str) -> None:
    proc = hcc(tmp_path, "conformance", backend, "--rounds", "1000", "--clients", "4")
    pid, ports = wait_for_server(tmp_path, proc)
    time.sleep(1.0)  # the suite is running
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err and "Traceback" not in err
    assert_nothing_left(tmp_path, pid, ports, timeout_s=5)  # stopped on the way out, not by a watchdog
    if backend == "seaweedfs":
        assert not list((tmp_path / "servers").glob("seaweedfs-*/data"))  # its data folder went with it
        assert not [p for p in ports if Path(f"/tmp/seaweedfs-master-grpc-{p}.sock").exists()]


@pytest.mark.parametrize("backend", ["fake-gcs", "seaweedfs"])
def test_sigkill_of_conformance_kills_its_server(tmp_path: Path, backend: str) -> None:
    proc = hcc(tmp_path, "conformance", backend, "--rounds", "1000", "--clients", "4")
    pid, ports = wait_for_server(tmp_path, proc)
    time.sleep(1.0)
    proc.kill()
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert_nothing_left(tmp_path, pid, ports)
    if backend == "seaweedfs":  # the watchdog deletes what the server left: data and /tmp sockets
        deadline = time.monotonic() + 10
        sockets = [Path(f"/tmp/seaweedfs-{s}-grpc-{p}.sock") for s in ("master", "volume", "filer", "s3")
                   for p in ports]
        while time.monotonic() < deadline and (any(s.exists() for s in sockets)
                                               or list((tmp_path / "servers").glob("seaweedfs-*/data"))):
            time.sleep(0.2)
        assert not [s for s in sockets if s.exists()]
        assert not list((tmp_path / "servers").glob("seaweedfs-*/data"))


def test_sigterm_of_realworld_keeps_the_history_and_marks_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = hcc(tmp_path, "realworld", "rfc91-safe", "--backend", "fake-gcs", "--out", str(out),
               *[x for s in [*SHORT, "duration_ms=120000"] for x in ("--set", s)])
    pid, ports = wait_for_server(tmp_path, proc)
    wait_for_events(out / "history.jsonl", proc, '"acquire"')
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    assert_nothing_left(tmp_path, pid, ports, timeout_s=5)
    events = loads((out / "history.jsonl").read_text())
    assert [e.index for e in events] == list(range(len(events)))
    assert events[0].f == "run-start" and events[-1].f == "run-end"
    assert events[-1].value == {"interrupted": "Terminated"}
    assert any(e.f == "acquire" and e.type == "ok" for e in events)
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["verdict"] == "interrupted" and verdict["signal"] == "SIGTERM"
    assert verdict["events"] == len(events) and verdict["matches_expectation"] is False
    report = hcc(tmp_path, "report", str(out))
    _, err = report.communicate(timeout=120)
    assert report.returncode == 2 and "interrupted by SIGTERM" in err and "Traceback" not in err
    assert not (out / "report.html").exists()


def test_sigkill_of_realworld_leaves_no_server_and_an_intact_history(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = hcc(tmp_path, "realworld", "rfc91-safe", "--backend", "fake-gcs", "--out", str(out),
               *[x for s in [*SHORT, "duration_ms=120000"] for x in ("--set", s)])
    pid, ports = wait_for_server(tmp_path, proc)
    wait_for_events(out / "history.jsonl", proc, '"acquire"')
    time.sleep(1.0)
    proc.kill()
    proc.communicate(timeout=30)
    assert_nothing_left(tmp_path, pid, ports)
    text = (out / "history.jsonl").read_text()
    assert text.endswith("\n")  # whole lines only: each event is written and flushed at once
    events = loads(text)
    assert events[0].f == "run-start" and [e.index for e in events] == list(range(len(events)))
    assert not (out / "verdict.json").exists()  # SIGKILL leaves no verdict, only the history


def test_two_conformance_runs_at_once_do_not_collide(tmp_path: Path) -> None:
    runs = [tmp_path / "a", tmp_path / "b"]
    for r in runs:
        r.mkdir()
    procs = [hcc(r, "conformance", "seaweedfs", "--rounds", "3", "--clients", "8", "--json") for r in runs]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err[-2000:]
        assert json.loads(out)["passed"] is True
    pid_files = [next((r / "servers").glob("seaweedfs-*/seaweedfs.pid")) for r in runs]
    ports = [set(map(int, f.read_text().splitlines()[1].split())) for f in pid_files]
    assert len(ports[0]) == len(ports[1]) == 8 and not ports[0] & ports[1]
    assert pid_files[0].parent != pid_files[1].parent
