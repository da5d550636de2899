"""The model's object store against the store contract (``tests/store_contract.py``), per flavor."""

from __future__ import annotations

import pytest
from store_contract import trace

from model.runtime.objectstore import ObjectStore


def test_s3_flavor() -> None:
    got = dict((s[0], s[1:]) for s in trace(ObjectStore("s3").apply, "t/"))
    assert got["read missing"][0] == "NOT_FOUND"
    assert got["replace missing"][0] == "NOT_FOUND"  # S3: If-Match on a missing key is 404
    assert got["delete missing"][0] == "OK"  # S3 answers 204 to deleting a missing key
    assert got["create again"][0] == "PRECONDITION_FAILED"
    assert got["replace stale"][0] == "PRECONDITION_FAILED"
    assert got["replace same body"][2] == got["replace"][2]  # an ETag is the body's MD5
    assert got["list all"][1] == "a/obj\nb/obj"
    assert got["fenced put stale"][0] == "PRECONDITION_FAILED"
    assert got["read fenced"][1] == "fenced"
    assert got["delete again"][0] == "OK"


def test_gcs_flavor() -> None:
    got = dict((s[0], s[1:]) for s in trace(ObjectStore("gcs").apply, "t/"))
    assert got["replace missing"][0] == "PRECONDITION_FAILED"  # ifGenerationMatch on a missing object
    assert got["delete missing"][0] == "NOT_FOUND"
    assert got["replace same body"][2] != got["replace"][2]  # every write is a new generation
    assert got["delete again"][0] == "NOT_FOUND"


def test_the_trace_sees_a_wrong_store() -> None:
    """The contract is not vacuous: a store that forgets preconditions gives another trace."""

    class Careless(ObjectStore):
        def _precondition(self, key: str, expected: str) -> None:  # type: ignore[override]
            return None

    assert trace(Careless("s3").apply, "t/") != trace(ObjectStore("s3").apply, "t/")


def test_azure_flavor() -> None:
    got = dict((s[0], s[1:]) for s in trace(ObjectStore("azure").apply, "t/"))
    assert got["replace missing"][0] == "PRECONDITION_FAILED"
    assert got["create again"][0] == "PRECONDITION_FAILED"
    assert got["delete missing"][0] == "NOT_FOUND"
    assert got["replace same body"][2] != got["replace"][2]  # a new ETag on every write


@pytest.mark.parametrize("flavor", ["s3", "gcs", "azure"])
def test_the_trace_is_deterministic(flavor: str) -> None:
    assert trace(ObjectStore(flavor).apply, "t/") == trace(ObjectStore(flavor).apply, "x/y/")
