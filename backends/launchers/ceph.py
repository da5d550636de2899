"""Ceph RADOS Gateway: optional, never required by the default tests.

Not implemented yet beyond detection: a single-node Ceph (one monitor, one
OSD on memstore, no manager, cephx off, radosgw with ``ms mon client mode =
secure crc``) needs Debian's ``radosgw ceph-mon ceph-osd ceph-common``; until
the launcher exists, point the suite at a running RGW by URL
(``s3+http://HOST:PORT/BUCKET``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from backends.endpoint import Endpoint
from backends.launchers.process import Unavailable, which


@contextlib.contextmanager
def ceph(base: Path | None = None, **_: object) -> Iterator[Endpoint]:
    """Always raises Unavailable for now (see the module doc)."""
    missing = [b for b in ("radosgw", "ceph-mon", "ceph-osd") if which(b) is None]
    if missing:
        raise Unavailable(f"Ceph RGW skipped: {', '.join(missing)} not installed "
                          "(apt-get install radosgw ceph-mon ceph-osd ceph-common)")
    raise Unavailable("Ceph RGW launcher not implemented yet; run RGW yourself and pass its URL")
    yield  # pragma: no cover
