"""Backend names for the CLI and tests: a name launches a server, a URL points at a running one."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from backends.endpoint import Endpoint, from_url

NAMES = ("fake-gcs", "seaweedfs", "ceph", "moto", "azurite", "s3rver", "minio")


def _launcher(name: str) -> Callable[..., contextlib.AbstractContextManager[Endpoint]]:
    if name == "fake-gcs":
        from backends.launchers.fake_gcs import fake_gcs

        return fake_gcs
    if name == "seaweedfs":
        from backends.launchers.seaweedfs import seaweedfs

        return seaweedfs
    if name == "moto":
        from backends.launchers.moto import moto

        return moto
    if name == "azurite":
        from backends.launchers.node_servers import azurite

        return azurite
    if name == "s3rver":
        from backends.launchers.node_servers import s3rver

        return s3rver
    if name == "minio":
        from backends.launchers.minio import minio

        return minio
    if name == "ceph":
        from backends.launchers.ceph import ceph

        return ceph
    raise ValueError(f"unknown backend {name!r}: expected one of {', '.join(NAMES)} or a URL")


def is_url(name: str) -> bool:
    """True when ``name`` looks like a storage URL rather than a backend name."""
    return "://" in name


def validate(name: str) -> None:
    """Raise ValueError naming ``name`` when it is neither a known backend nor a parseable URL."""
    if is_url(name):
        from_url(name)
    elif name not in NAMES:
        raise ValueError(f"unknown backend {name!r}: expected one of {', '.join(NAMES)} or a URL")


@contextlib.contextmanager
def open_endpoint(name: str, base: Path | None = None, **kw: Any) -> Iterator[Endpoint]:
    """Launch the named server (always stopped afterwards) or wrap a URL; yield its Endpoint."""
    if is_url(name):
        yield from_url(name)
        return
    with _launcher(name)(base, **kw) as ep:
        yield ep
