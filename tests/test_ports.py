"""Port reservation: below the ephemeral range, locked across processes, retried when a port is lost.

The retry is shown with a tiny real server (``python -m http.server``) whose first port is
taken by a listening socket between the reservation and the bind.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from backends.launchers import process
from backends.launchers.process import (
    HOST,
    LaunchError,
    PortReservation,
    ServerProcess,
    http_answers,
    port_lost,
    reserve_ports,
    start_server,
)
from backends.launchers.seaweedfs import SERVICES, grpc_sockets, server_argv

LOCK_ONE = """
import fcntl, sys
f = open(sys.argv[1], "ab")
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("locked")
except OSError:
    print("busy")
"""


@pytest.fixture(autouse=True)
def _lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HCC_PORT_LOCKS", str(tmp_path / "locks"))


def test_reserved_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    low = process._ephemeral_low()
    r = reserve_ports(8)
    try:
        assert len(set(r.ports)) == 8 and all(process.PORT_LOW <= p < low for p in r.ports)
        for p in r.ports:
            with socket.socket() as s:
                s.bind((HOST, p))  # nobody holds it
        other = reserve_ports(8)
        assert not set(other.ports) & set(r.ports)  # one process never hands a port out twice
        other.release()
    finally:
        r.release()


def test_another_process_cannot_take_a_reserved_port(tmp_path: Path) -> None:
    r = reserve_ports(1)
    lock = tmp_path / "locks" / f"{r.ports[0]}.lock"
    held = subprocess.run([sys.executable, "-c", LOCK_ONE, str(lock)], capture_output=True, text=True)
    r.release()
    freed = subprocess.run([sys.executable, "-c", LOCK_ONE, str(lock)], capture_output=True, text=True)
    assert (held.stdout.strip(), freed.stdout.strip()) == ("busy", "locked")


def test_port_lost_reads_the_usual_messages() -> None:
    assert port_lost("listen tcp 127.0.0.1:4443: bind: address already in use")
    assert port_lost("Error: listen EADDRINUSE: address already in use 127.0.0.1:10000")
    assert not port_lost("permission denied")


def _http_server(d: Path) -> tuple[list[ServerProcess], object]:
    made: list[ServerProcess] = []

    def make(ports: list[int]) -> ServerProcess:
        p = ServerProcess("http", [sys.executable, "-m", "http.server", str(ports[0]), "--bind", HOST],
                          d / "http.log", cwd=d)
        made.append(p)
        return p

    return made, make


def test_a_start_that_loses_its_port_retries_on_fresh_ports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    thief = socket.socket()
    thief.bind((HOST, 0))
    thief.listen()
    stolen = thief.getsockname()[1]
    real = process.reserve_ports
    calls: list[int] = []

    def first_one_stolen(n: int) -> PortReservation:
        calls.append(n)
        return PortReservation([stolen], []) if len(calls) == 1 else real(n)

    monkeypatch.setattr(process, "reserve_ports", first_one_stolen)
    made, make = _http_server(tmp_path)
    # an HTTP answer, not a TCP connect: the thief accepts connections but never answers
    proc = start_server("http", 1, make, lambda p: p.wait_ready(
        lambda: http_answers(f"http://{HOST}:{p.ports[0]}/"), 20))
    try:
        assert len(made) == 2 and proc is made[1] and proc.ports[0] != stolen and proc.alive()
        assert not made[0].alive()
        assert "lost one of its ports" in (tmp_path / "http.log").read_text()
        assert "retrying on fresh ports (attempt 2 of 3)" in capsys.readouterr().err
    finally:
        proc.stop()
        thief.close()


def test_a_start_that_keeps_losing_gives_up_naming_the_log(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    thief = socket.socket()
    thief.bind((HOST, 0))
    thief.listen()
    monkeypatch.setattr(process, "reserve_ports", lambda n: PortReservation([thief.getsockname()[1]], []))
    made, make = _http_server(tmp_path)
    try:
        with pytest.raises(LaunchError, match="http.log"):
            start_server("http", 1, make, lambda p: p.wait_ready(lambda: False, 20), attempts=2)
        assert len(made) == 2 and not any(p.alive() for p in made)
    finally:
        thief.close()


def test_seaweedfs_gets_every_grpc_port_explicitly(tmp_path: Path) -> None:
    ports = list(range(20001, 20009))
    argv, grpc = server_argv("weed", tmp_path, tmp_path / "s", ports, 100)
    for service, port in zip(SERVICES, ports[4:], strict=True):
        assert f"-{service}.port.grpc={port}" in argv and grpc[service] == port
    for service, port in zip(SERVICES[:3], ports[:3], strict=True):
        assert f"-{service}.port={port}" in argv
    assert f"-s3.port={ports[3]}" in argv
    assert grpc_sockets(grpc)[0] == Path(f"/tmp/seaweedfs-master-grpc-{ports[4]}.sock")
