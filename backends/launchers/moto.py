"""moto's threaded server (``moto[server]``), run as a child process so its log goes to a file.

Emulator only: moto's conditional writes are not atomic (it checks for the
object and writes it later with no lock between), so it serves status-code
semantics and step-by-step replay, never as the reference for races.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.launchers.process import HOST, ServerProcess, Unavailable, http_answers, start_server
from backends.launchers.workdir import server_dir


@contextlib.contextmanager
def moto(base: Path | None = None, *, bucket: str = "hcc-conformance",
         ready_timeout_s: float = 30.0) -> Iterator[Endpoint]:
    """Run ``python -m moto.server`` (threaded werkzeug) and yield its Endpoint with ``bucket`` created."""
    try:
        import flask  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as e:
        raise Unavailable(f"moto[server] is not installed ({e}); run backends/install.sh") from e
    d = server_dir("moto", base)

    def make(ports: list[int]) -> ServerProcess:
        return ServerProcess("moto", [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(ports[0])],
                             d / "moto.log", cwd=d)

    proc = start_server("moto", 1, make, lambda p: p.wait_ready(
        lambda: http_answers(f"http://{HOST}:{p.ports[0]}/moto-api/"), ready_timeout_s))
    try:
        ep = Endpoint("moto", "s3", f"http://{HOST}:{proc.ports[0]}", bucket, "hcc", "hcc-secret",
                      process=proc, notes=["emulator: conditional writes are not atomic"])
        ep.backend("hcc/").ensure_container()
        yield ep
    finally:
        proc.stop()
