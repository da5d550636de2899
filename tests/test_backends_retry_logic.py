"""Outcome mapping, the client policy over a backend (attempts / ambiguous) and URL parsing, no server."""

from __future__ import annotations

import pytest

from backends.base import Backend, StorageError, outcome_for_status
from backends.client import call
from backends.endpoint import from_url
from model.runtime.client import RetryPolicy
from model.runtime.effects import CreateIfAbsent, Outcome, Read, StoreResult


class Scripted(Backend):
    """A backend whose create answers are scripted HTTP statuses (None: no reply)."""

    dialect = "s3"
    client = "scripted"

    def __init__(self, statuses: list[int | None]) -> None:
        super().__init__("t/")
        self.statuses = list(statuses)
        self.calls = 0

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        self.calls += 1
        return StoreResult(self._answer(self.statuses.pop(0), "scripted"))

    def _read(self, key: str) -> StoreResult:
        return StoreResult(self._answer(404, "NoSuchKey"))

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        raise NotImplementedError

    def _put(self, key: str, body: bytes) -> StoreResult:
        raise NotImplementedError

    def _list_prefix(self, prefix: str) -> StoreResult:
        raise NotImplementedError

    def _delete(self, key: str) -> StoreResult:
        raise NotImplementedError


@pytest.mark.parametrize(("status", "outcome"), [
    (200, Outcome.OK), (204, Outcome.OK), (404, Outcome.NOT_FOUND), (409, Outcome.CONFLICT),
    (412, Outcome.PRECONDITION_FAILED), (429, Outcome.THROTTLED), (500, Outcome.UNAVAILABLE),
    (503, Outcome.UNAVAILABLE), (400, None), (403, None), (304, None),
])
def test_status_mapping(status: int, outcome: Outcome | None) -> None:
    assert outcome_for_status(status) is outcome


def test_perform_makes_one_attempt() -> None:
    b = Scripted([None, 200])
    res = b.perform(CreateIfAbsent("t/k", b"x"))
    assert res.outcome is Outcome.TIMEOUT and res.attempts == 1 and not res.ambiguous and b.calls == 1


def test_lost_reply_then_412_is_flagged_ambiguous() -> None:
    b = Scripted([None, 412])
    res = call(b, CreateIfAbsent("t/k", b"x"), RetryPolicy(2))
    assert res.outcome is Outcome.PRECONDITION_FAILED and res.attempts == 2 and res.ambiguous
    assert b.calls == 2 and [a.status for a in b.last_answers()] == [412]


def test_5xx_and_429_are_retried_until_the_budget_runs_out() -> None:
    b = Scripted([503, 429, 500])
    res = call(b, CreateIfAbsent("t/k", b"x"), RetryPolicy(2))
    # answered refusals, not a lost reply: the write was not applied, so the result is not ambiguous
    assert res.outcome is Outcome.UNAVAILABLE and res.attempts == 3 and not res.ambiguous and b.calls == 3


def test_409_is_retried_like_the_simulated_client() -> None:
    b = Scripted([409, 200])
    res = call(b, CreateIfAbsent("t/k", b"x"), RetryPolicy(3))
    assert res.outcome is Outcome.OK and res.attempts == 2 and not res.ambiguous


def test_a_definite_answer_is_not_retried() -> None:
    for status, outcome in ((412, Outcome.PRECONDITION_FAILED), (200, Outcome.OK)):
        b = Scripted([status, 200])
        res = call(b, CreateIfAbsent("t/k", b"x"), RetryPolicy(3))
        assert res.outcome is outcome and res.attempts == 1 and not res.ambiguous and b.calls == 1


def test_a_non_protocol_answer_raises() -> None:
    b = Scripted([403])
    with pytest.raises(StorageError, match="403"):
        b.perform(CreateIfAbsent("t/k", b"x"))


def test_read_not_found() -> None:
    assert Scripted([]).perform(Read("t/k")).outcome is Outcome.NOT_FOUND


def test_urls() -> None:
    ep = from_url("s3+http://127.0.0.1:9000/bkt")
    assert (ep.kind, ep.url, ep.bucket) == ("s3", "http://127.0.0.1:9000", "bkt")
    ep = from_url("http://127.0.0.1:9000/bkt")
    assert (ep.kind, ep.url, ep.bucket) == ("s3", "http://127.0.0.1:9000", "bkt")
    ep = from_url("gs+http://127.0.0.1:4443/b2")
    assert (ep.kind, ep.url, ep.bucket) == ("gcs", "http://127.0.0.1:4443", "b2")
    ep = from_url("az+http://127.0.0.1:10000/devstoreaccount1/c1")
    assert (ep.kind, ep.url, ep.bucket, ep.access_key) == (
        "azure", "http://127.0.0.1:10000/devstoreaccount1", "c1", "devstoreaccount1")
    assert ep.secret_key  # Azurite's well-known key
    ep = from_url("s3://my-bucket")
    assert (ep.kind, ep.bucket) == ("s3", "my-bucket")
    for bad in ("ftp://x", "s3://", "nope+http://h:1/b"):
        with pytest.raises(ValueError):
            from_url(bad)
