"""The simulated store answers conditional writes exactly as S3 and GCS document."""

from __future__ import annotations

import hashlib

import pytest

from model.runtime.effects import CreateIfAbsent, FencedPut, Outcome, Put, Read, ReplaceIfMatch
from model.runtime.objectstore import ObjectStore


def test_s3_etag_is_md5_and_conditions_answer_412_or_404() -> None:
    s = ObjectStore("s3")
    first = s.apply(CreateIfAbsent("k", b"one"))
    assert first.ok and first.version == '"' + hashlib.md5(b"one").hexdigest() + '"'
    assert s.apply(CreateIfAbsent("k", b"two")).outcome is Outcome.PRECONDITION_FAILED
    assert s.apply(ReplaceIfMatch("k", b"two", '"stale"')).outcome is Outcome.PRECONDITION_FAILED
    assert s.apply(ReplaceIfMatch("absent", b"x", first.version or "")).outcome is Outcome.NOT_FOUND
    second = s.apply(ReplaceIfMatch("k", b"two", first.version or ""))
    assert second.ok and s.apply(Read("k")).body == b"two"


def test_gcs_generations_grow_and_a_missing_object_fails_the_precondition() -> None:
    s = ObjectStore("gcs")
    a = s.apply(CreateIfAbsent("k", b"same"))
    b = s.apply(Put("k", b"same"))
    assert int(b.version or 0) > int(a.version or 0)  # same body, new generation (unlike an ETag)
    assert s.apply(ReplaceIfMatch("absent", b"x", "1")).outcome is Outcome.PRECONDITION_FAILED


def test_fenced_put_rejects_a_stale_token() -> None:
    s = ObjectStore("s3")
    lock = s.apply(CreateIfAbsent("lock", b"a"))
    assert s.apply(FencedPut("reg", b"1", "lock", lock.version or "")).ok
    s.apply(Put("lock", b"b"))
    assert s.apply(FencedPut("reg", b"2", "lock", lock.version or "")).outcome is Outcome.PRECONDITION_FAILED


def test_unknown_flavor_is_rejected_with_its_name() -> None:
    with pytest.raises(ValueError, match="storage.flavor: 'swift'"):
        ObjectStore("swift")
