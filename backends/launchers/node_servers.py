"""Servers from npm, installed by backends/install.sh under ``.cache/npm``: Azurite and s3rver.

Azurite 3.35.0 is the newest that runs on Node 20; it runs with
``--disableTelemetry`` and in-memory persistence.  s3rver is the negative
control: it ignores conditional headers.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from backends.azure_blob import AZURITE_ACCOUNT, AZURITE_KEY
from backends.endpoint import Endpoint
from backends.launchers.process import HOST, ServerProcess, Unavailable, http_answers, start_server
from backends.launchers.workdir import npm_bin, server_dir


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node is not on PATH")
    return node


@contextlib.contextmanager
def azurite(base: Path | None = None, *, container: str = "hcc-conformance", debug_log: bool = False,
            ready_timeout_s: float = 30.0) -> Iterator[Endpoint]:
    """Run Azurite's blob service and yield its Endpoint with ``container`` created.

    ``debug_log`` adds Azurite's (large) debug log next to its access log.
    """
    script = npm_bin("azurite", "dist/src/blob/main.js")
    if script is None:
        raise Unavailable("azurite is not installed under .cache/npm (run backends/install.sh)")
    d = server_dir("azurite", base)

    def make(ports: list[int]) -> ServerProcess:
        argv = [_node(), str(script), "--blobHost", HOST, "--blobPort", str(ports[0]),
                "--inMemoryPersistence", "--disableTelemetry"]  # cwd is the server folder
        if debug_log:
            argv += ["--debug", str(d / "azurite-debug.log")]
        return ServerProcess("azurite", argv, d / "azurite.log", cwd=d)

    proc = start_server("azurite", 1, make, lambda p: p.wait_ready(lambda: http_answers(f"http://{HOST}:{p.ports[0]}/"),
                                                                   ready_timeout_s))
    try:
        ep = Endpoint("azurite", "azure", f"http://{HOST}:{proc.ports[0]}/{AZURITE_ACCOUNT}", container,
                      AZURITE_ACCOUNT, AZURITE_KEY, process=proc)
        ep.backend("hcc/").ensure_container()
        yield ep
    finally:
        proc.stop()


@contextlib.contextmanager
def s3rver(base: Path | None = None, *, bucket: str = "hcc-conformance",
           ready_timeout_s: float = 30.0) -> Iterator[Endpoint]:
    """Run s3rver (negative control: ignores If-None-Match and If-Match) and yield its Endpoint."""
    script = npm_bin("s3rver", "bin/s3rver.js")
    if script is None:
        raise Unavailable("s3rver is not installed under .cache/npm (run backends/install.sh)")
    d = server_dir("s3rver", base)

    def make(ports: list[int]) -> ServerProcess:
        (d / "data").mkdir(exist_ok=True)
        return ServerProcess("s3rver", [
            _node(), str(script), "-d", str(d / "data"), "-a", HOST, "-p", str(ports[0]),
            "--no-vhost-buckets", "--configure-bucket", bucket,
        ], d / "s3rver.log", cwd=d, scratch=[d / "data"])

    proc = start_server("s3rver", 1, make, lambda p: p.wait_ready(lambda: http_answers(f"http://{HOST}:{p.ports[0]}/"),
                                                                  ready_timeout_s))
    try:
        yield Endpoint("s3rver", "s3", f"http://{HOST}:{proc.ports[0]}", bucket, "S3RVER", "S3RVER",
                       process=proc, notes=["negative control: ignores conditional headers"])
    finally:
        proc.stop()
