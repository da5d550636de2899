"""pytest fixtures that launch storage servers for a test module and always stop them.

Import the ones a test module needs (``from backends.fixtures import fake_gcs_endpoint  # noqa: F401``).
A server that cannot run here (missing binary, no Docker engine) skips the
tests that need it, with the reason printed on stderr and in pytest's skip
summary (``-rs``).  Logs go to ``runs/tmp/servers`` (``$HCC_RUN_TMP``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from backends.endpoint import Endpoint
from backends.launchers.process import Unavailable
from backends.registry import open_endpoint


def launch(name: str) -> Iterator[Endpoint]:
    """Yield a launched server's Endpoint, or skip with the reason when it cannot run here."""
    try:
        cm = open_endpoint(name)
        ep = cm.__enter__()
    except Unavailable as e:
        print(f"\n[backends] {name} skipped: {e}", file=sys.stderr)
        pytest.skip(f"{name}: {e}")
    try:
        yield ep
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def fake_gcs_endpoint() -> Iterator[Endpoint]:
    """fake-gcs-server for the module."""
    yield from launch("fake-gcs")


@pytest.fixture(scope="module")
def azurite_endpoint() -> Iterator[Endpoint]:
    """Azurite (blob) for the module."""
    yield from launch("azurite")


@pytest.fixture(scope="module")
def seaweedfs_endpoint() -> Iterator[Endpoint]:
    """SeaweedFS (weed server -s3) for the module."""
    yield from launch("seaweedfs")


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[Endpoint]:
    """moto's threaded server for the module."""
    yield from launch("moto")


@pytest.fixture(scope="module")
def s3rver_endpoint() -> Iterator[Endpoint]:
    """s3rver (negative control) for the module."""
    yield from launch("s3rver")


@pytest.fixture(scope="module")
def minio_endpoint() -> Iterator[Endpoint]:
    """MinIO (binary on PATH or testcontainers) for the module; skipped here without either."""
    yield from launch("minio")


@pytest.fixture(scope="module")
def ceph_endpoint() -> Iterator[Endpoint]:
    """Ceph RGW (optional; never used by the default tests)."""
    yield from launch("ceph")
