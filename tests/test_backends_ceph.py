"""Ceph RGW graded by the conformance suite: optional, only with HCC_CEPH=1 and Debian's Ceph packages.

Run: ``bash backends/install_ceph.sh && HCC_CEPH=1 pytest -m backends -rs tests/test_backends_ceph.py``.
"""

from __future__ import annotations

import os

import pytest

from backends.conformance import run_suite
from backends.endpoint import Endpoint
from backends.fixtures import ceph_endpoint  # noqa: F401

pytestmark = [
    pytest.mark.backends,
    pytest.mark.skipif(os.environ.get("HCC_CEPH") != "1", reason="Ceph RGW is optional: set HCC_CEPH=1"),
]


def test_ceph_rgw_is_graded_with_its_deviations_listed(ceph_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("ceph", ceph_endpoint, rounds=2, clients=16)
    print()
    print(rep.table())
    for name in ("create-existing", "replace-missing", "create-race"):
        assert rep.property(name).passed, rep.property(name).detail
    # Ceph 16.2 compares If-Match literally: the quoted ETag it returned is refused (412)
    stale = rep.property("replace-stale")
    if not stale.passed:
        assert any("refused a valid precondition" in d.detail for d in rep.deviations)
