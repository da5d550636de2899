"""Every launched server against the store contract: the same trace as the model's store of its dialect.

A difference is either a bug in the model (fix the model) or a deviation of the server from the
service it emulates (listed in ``DEVIATIONS`` with the reason, and still asserted step by step).
"""

from __future__ import annotations

import pytest
from store_contract import trace

from backends.endpoint import Endpoint
from backends.fixtures import azurite_endpoint, fake_gcs_endpoint, moto_endpoint, seaweedfs_endpoint  # noqa: F401
from model.runtime.objectstore import ObjectStore

pytestmark = pytest.mark.backends

CASES = [
    ("fake_gcs_endpoint", None, "gcs"),
    ("seaweedfs_endpoint", "boto3", "s3"),
    ("seaweedfs_endpoint", "minio", "s3"),
    ("moto_endpoint", "boto3", "s3"),
    ("azurite_endpoint", None, "azure"),
]

# (server, step) -> (outcome the server gives, why); every other step must equal the model's.
DEVIATIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("seaweedfs", "replace missing"): (
        "PRECONDITION_FAILED",
        "If-Match on a missing key answers 412 where AWS S3 answers 404 NoSuchKey (both refuse the write)"),
}


@pytest.mark.parametrize(("fixture", "client", "flavor"), CASES,
                         ids=[f"{f.split('_endpoint')[0]}-{c or 'sdk'}" for f, c, _ in CASES])
def test_server_answers_like_the_model(fixture: str, client: str | None, flavor: str,
                                       request: pytest.FixtureRequest) -> None:
    ep: Endpoint = request.getfixturevalue(fixture)
    server = fixture.split("_endpoint")[0]
    prefix = f"contract/{server}-{client or 'sdk'}/"
    with ep.backend(prefix, client=client, timeout_s=10) as b:
        real = trace(b.perform, b.prefix)
    model = trace(ObjectStore(flavor).apply, b.prefix)
    assert [s[0] for s in real] == [s[0] for s in model]
    for r, m in zip(real, model, strict=True):
        step = r[0]
        if (server, step) in DEVIATIONS:
            outcome, why = DEVIATIONS[(server, step)]
            assert r[1] == outcome, f"{server} {step}: {r} (expected the listed deviation: {why})"
            continue
        # versions by equality structure; the real version of a step may differ only in its value
        assert r == m, f"{server} {step}: server {r}, model ({flavor}) {m}"
