"""Every storage effect of model/runtime/effects.py performed on each real server through each client."""

from __future__ import annotations

import pytest

from backends.base import Backend
from backends.client import call
from backends.endpoint import Endpoint
from backends.fixtures import azurite_endpoint, fake_gcs_endpoint, moto_endpoint, seaweedfs_endpoint  # noqa: F401
from model.runtime.client import RetryPolicy
from model.runtime.effects import (
    CreateIfAbsent,
    Delete,
    FencedPut,
    ListPrefix,
    Outcome,
    Put,
    Read,
    ReplaceIfMatch,
)

pytestmark = pytest.mark.backends

CASES = [
    ("fake_gcs_endpoint", None),
    ("azurite_endpoint", None),
    ("seaweedfs_endpoint", "boto3"),
    ("seaweedfs_endpoint", "minio"),
    ("moto_endpoint", "boto3"),
    ("moto_endpoint", "minio"),
]


@pytest.fixture(params=CASES, ids=[f"{e.split('_endpoint')[0]}-{c or 'sdk'}" for e, c in CASES])
def backend(request: pytest.FixtureRequest) -> Backend:
    fixture, client = request.param
    ep: Endpoint = request.getfixturevalue(fixture)
    prefix = f"effects/{request.node.name.replace('[', '-').rstrip(']')}/"
    b = ep.backend(prefix, client=client, timeout_s=10)
    request.addfinalizer(b.close)
    return b


def test_every_effect(backend: Backend) -> None:
    p = backend.prefix
    k, other, fence = f"{p}a/obj", f"{p}b/obj", f"{p}fence"
    assert backend.perform(Read(k)).outcome is Outcome.NOT_FOUND

    created = backend.perform(CreateIfAbsent(k, b"one"))
    assert created.ok and created.version and created.attempts == 1 and not created.ambiguous
    if backend.dialect == "gcs":
        assert created.version.isdigit()
    read = backend.perform(Read(k))
    assert read.ok and read.body == b"one" and read.version == created.version

    replaced = backend.perform(ReplaceIfMatch(k, b"two", created.version))
    assert replaced.ok and replaced.version and replaced.version != created.version
    assert backend.perform(Read(k)).body == b"two"

    put = backend.perform(Put(other, b"three"))
    assert put.ok and put.version
    assert backend.perform(Put(other, b"four")).version != put.version

    listed = backend.perform(ListPrefix(p))
    assert listed.ok and listed.body == f"{k}\n{other}".encode()
    assert backend.perform(ListPrefix(f"{p}b/")).body == other.encode()
    assert backend.perform(ListPrefix(f"{p}none/")).body == b""

    f1 = backend.perform(CreateIfAbsent(fence, b"token-1"))
    assert backend.perform(FencedPut(other, b"fenced", fence, f1.version or "")).ok
    assert backend.perform(Read(other)).body == b"fenced"
    f2 = backend.perform(ReplaceIfMatch(fence, b"token-2", f1.version or ""))
    assert f2.ok
    stale = backend.perform(FencedPut(other, b"late", fence, f1.version or ""))
    assert stale.outcome is Outcome.PRECONDITION_FAILED
    assert backend.perform(Read(other)).body == b"fenced"

    assert backend.perform(Delete(k)).ok
    assert backend.perform(Read(k)).outcome is Outcome.NOT_FOUND
    again = backend.perform(Delete(k))
    # S3 answers 204 to deleting a missing key; GCS and Azure answer 404
    expected = Outcome.OK if backend.dialect == "s3" else Outcome.NOT_FOUND
    assert again.outcome is expected


def test_a_412_is_not_retried(backend: Backend) -> None:
    k = f"{backend.prefix}retry"
    assert backend.perform(CreateIfAbsent(k, b"x")).ok
    lost = call(backend, CreateIfAbsent(k, b"y"), RetryPolicy(3))
    assert lost.outcome is Outcome.PRECONDITION_FAILED
    assert lost.attempts == 1 and not lost.ambiguous
