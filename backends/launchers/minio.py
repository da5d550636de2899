"""MinIO: the binary ``backends/install.sh`` builds into the project's cache, else ``minio`` on PATH,
else testcontainers when a Docker engine answers.

With none, :class:`Unavailable` says why (Go missing or too old, as install.sh recorded it; no Docker
engine).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.hudi.artifacts import cache_root
from backends.launchers.process import HOST, ServerProcess, Unavailable, http_answers, start_server, which
from backends.launchers.workdir import server_dir

USER, PASSWORD = "hccadmin", "hccadmin-secret"
# the pinned pseudo-version backends/install.sh builds (the pin and why are in install.sh)
MINIO_VERSION = (Path(__file__).resolve().parent.parent / "minio.version").read_text().strip()


def cached_binary() -> tuple[str | None, str | None]:
    """(path of the minio install.sh built into the project's cache, None) or (None, why not)."""
    d = cache_root() / "minio" / MINIO_VERSION
    exe = d / "bin" / "minio"
    if exe.exists() and os.access(exe, os.X_OK):
        return str(exe), None
    if (d / "unavailable").exists():
        return None, f"MinIO not built by backends/install.sh: {(d / 'unavailable').read_text().strip()}"
    return None, f"MinIO {MINIO_VERSION} not built (run backends/install.sh)"


def _docker_reason() -> str | None:
    """None when a Docker engine answers, else why not."""
    try:
        import docker
    except ImportError:
        return "testcontainers/docker not installed"
    try:
        client = docker.from_env()
        client.ping()
        client.close()
        return None
    except Exception as e:  # noqa: BLE001 - any failure means no engine
        return f"no Docker engine ({type(e).__name__}: {str(e)[:120]})"


@contextlib.contextmanager
def minio(base: Path | None = None, *, bucket: str = "hcc-conformance",
          ready_timeout_s: float = 60.0) -> Iterator[Endpoint]:
    """Run MinIO (cached build, else PATH, else testcontainers) and yield its Endpoint with ``bucket``."""
    exe, why_not = cached_binary()
    if exe is None:
        exe = which("minio")
    if exe is not None:
        d = server_dir("minio", base)

        def make(ports: list[int]) -> ServerProcess:
            return ServerProcess("minio", [exe, "server", str(d / "data"), "--address", f"{HOST}:{ports[0]}",
                                           "--console-address", f"{HOST}:{ports[1]}"], d / "minio.log", cwd=d,
                                 env={"MINIO_ROOT_USER": USER, "MINIO_ROOT_PASSWORD": PASSWORD},
                                 scratch=[d / "data"])

        proc = start_server("minio", 2, make, lambda p: p.wait_ready(
            lambda: http_answers(f"http://{HOST}:{p.ports[0]}/minio/health/ready"), ready_timeout_s))
        try:
            url = f"http://{HOST}:{proc.ports[0]}"
            ep = Endpoint("minio", "s3", url, bucket, USER, PASSWORD, process=proc)
            ep.backend("hcc/").ensure_container()
            yield ep
        finally:
            proc.stop()
        return
    reason = _docker_reason()
    if reason is not None:
        raise Unavailable(f"MinIO skipped: {why_not}; no `minio` binary on PATH; and {reason}")
    from testcontainers.minio import MinioContainer

    with MinioContainer(access_key=USER, secret_key=PASSWORD) as c:
        host = c.get_container_host_ip()
        url = f"http://{host}:{c.get_exposed_port(9000)}"
        ep = Endpoint("minio", "s3", url, bucket, USER, PASSWORD, notes=["testcontainers"])
        ep.backend("hcc/").ensure_container()
        yield ep
