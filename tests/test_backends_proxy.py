"""The fault proxy: each fault of the plan on the wire, by node port, against real servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.client import call
from backends.endpoint import Endpoint
from backends.fault_proxy import FaultProxy, ProxyError, object_key
from backends.fixtures import fake_gcs_endpoint, moto_endpoint  # noqa: F401
from model.config import Cutoff, Dist, ErrorRule
from model.runtime.client import RetryPolicy
from model.runtime.effects import CreateIfAbsent, Outcome, Put, Read, ReplaceIfMatch

ENDPOINTS = ["fake_gcs_endpoint", "moto_endpoint"]


@pytest.fixture(params=ENDPOINTS)
def ep(request: pytest.FixtureRequest) -> Endpoint:
    endpoint: Endpoint = request.getfixturevalue(request.param)
    return endpoint


def _proxy(ep: Endpoint, tmp_path: Path, **kw: object) -> FaultProxy:
    assert ep.url is not None
    dialect = "gcs" if ep.kind == "gcs" else ep.kind
    return FaultProxy(ep.url, ["w1", "w2"], dialect=dialect, log_path=tmp_path / "proxy.log",
                      **kw)  # type: ignore[arg-type]


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> Iterator[str]:
    yield f"px-{request.node.name.replace('[', '-').replace(']', '')}/"


def test_lost_reply_is_applied_and_the_sdk_retry_sees_412(ep: Endpoint, tmp_path: Path, prefix: str) -> None:
    rule = ErrorRule(node="w1", key=prefix + "lock", method="write", status="lost-reply", count=1)
    with _proxy(ep, tmp_path, errors=[rule]) as p:
        b = ep.backend(prefix, url=p.url("w1"), timeout_s=3)
        res = call(b, CreateIfAbsent(prefix + "lock", b"mine"), RetryPolicy(1, 10))
        assert res.outcome is Outcome.PRECONDITION_FAILED and res.ambiguous and res.attempts == 2
        assert [a.outcome for a in b.last_answers()] == [Outcome.PRECONDITION_FAILED]
        got = b.perform(Read(prefix + "lock"))
        assert got.ok and got.body == b"mine"  # the server applied the first attempt
        assert p.stats.actions["lost-reply"] == 1
        # without an SDK retry the client is left with an unknown outcome
        p.matcher.hits.clear()
        b0 = ep.backend(prefix, url=p.url("w1"), timeout_s=3)
        res = b0.perform(ReplaceIfMatch(prefix + "lock", b"again", got.version or ""))
        assert res.outcome is Outcome.TIMEOUT
        assert b0.perform(Read(prefix + "lock")).body == b"again"


@pytest.mark.parametrize("status,outcome", [("503", Outcome.UNAVAILABLE), ("429", Outcome.THROTTLED),
                                            ("409", Outcome.CONFLICT), ("412", Outcome.PRECONDITION_FAILED)])
def test_error_answers_are_not_forwarded(ep: Endpoint, tmp_path: Path, prefix: str, status: str,
                                         outcome: Outcome) -> None:
    rule = ErrorRule(node="w1", key=prefix + "x", method="write", status=status)
    with _proxy(ep, tmp_path, errors=[rule]) as p:
        b = ep.backend(prefix, url=p.url("w1"), timeout_s=3)
        assert b.perform(Put(prefix + "x", b"1")).outcome is outcome
        assert b.last_answers()[0].status == int(status)
        direct = ep.backend(prefix, timeout_s=3)
        assert direct.perform(Read(prefix + "x")).outcome is Outcome.NOT_FOUND  # never applied
        # the rule names w1 only: w2's port forwards
        b2 = ep.backend(prefix, url=p.url("w2"), timeout_s=3)
        assert b2.perform(Put(prefix + "x", b"2")).ok
        assert p.stats.actions[f"error-{status}"] == 1

def test_s3_409_window_answers_a_write_that_follows_a_write_closely(ep: Endpoint, tmp_path: Path,
                                                                     prefix: str) -> None:
    # storage.conflict_*: prob 1 inside a 10 s window, so on S3 the second write of a key is a 409,
    # unapplied; a write of another key, and a read, pass. Other dialects' 409s mean other things: no window
    with _proxy(ep, tmp_path, conflict_window_ms=10_000, conflict_prob=1.0) as p:
        b = ep.backend(prefix, url=p.url("w1"), timeout_s=3)
        assert b.perform(CreateIfAbsent(prefix + "k", b"1")).ok
        again = ep.backend(prefix, url=p.url("w2"), timeout_s=3)
        second = again.perform(Put(prefix + "k", b"2"))
        if ep.kind != "s3":
            assert second.ok and "conflict" not in p.stats.actions
            return
        assert second.outcome is Outcome.CONFLICT
        assert again.perform(Read(prefix + "k")).body == b"1"  # not applied
        assert again.perform(Put(prefix + "other", b"3")).ok
        assert p.stats.actions["conflict"] == 1
    # without a window nothing is refused
    with _proxy(ep, tmp_path) as p:
        b = ep.backend(prefix, url=p.url("w1"), timeout_s=3)
        assert b.perform(Put(prefix + "k", b"4")).ok and b.perform(Put(prefix + "k", b"5")).ok


def test_cutoff_times_out_unapplied_then_heals(ep: Endpoint, tmp_path: Path, prefix: str) -> None:
    t0 = time.monotonic()
    with _proxy(ep, tmp_path, cutoffs=[Cutoff("w2", 0, 1500)], hold_s=5,
                clock_ms=lambda: int((time.monotonic() - t0) * 1000)) as p:
        b = ep.backend(prefix, url=p.url("w2"), timeout_s=0.5)
        assert b.perform(Put(prefix + "c", b"1")).outcome is Outcome.TIMEOUT
        assert ep.backend(prefix).perform(Read(prefix + "c")).outcome is Outcome.NOT_FOUND
        ok = ep.backend(prefix, url=p.url("w1"), timeout_s=2)  # w1 is not cut off
        assert ok.perform(Read(prefix + "c")).outcome is Outcome.NOT_FOUND
        time.sleep(max(0.0, 1.6 - (time.monotonic() - t0)))
        assert b.perform(Put(prefix + "c", b"1")).ok
        assert "cutoff" in p.log_path.read_text()


def test_timeout_rule_and_count(ep: Endpoint, tmp_path: Path, prefix: str) -> None:
    rule = ErrorRule(node="any", key=prefix + "t", method="read", status="timeout", count=2)
    with _proxy(ep, tmp_path, errors=[rule], hold_s=5) as p:
        b = ep.backend(prefix, url=p.url("w1"), timeout_s=0.5)
        assert [b.perform(Read(prefix + "t")).outcome for _ in range(3)] == [
            Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.NOT_FOUND]
        assert b.perform(Put(prefix + "t", b"1")).ok  # method=read: writes pass


def test_latency_is_added_both_ways(fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    with _proxy(fake_gcs_endpoint, tmp_path, latency=Dist("fixed", 150)) as p:
        b = fake_gcs_endpoint.backend("lat/", url=p.url("w1"), timeout_s=5)
        b.perform(Read("lat/x"))  # connection set-up
        t = time.monotonic()
        assert b.perform(Read("lat/x")).outcome is Outcome.NOT_FOUND
        assert time.monotonic() - t >= 0.3  # a lower bound: 150 ms before forwarding and before replying


def test_probability_draws_are_seeded(fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    def pattern(seed: int) -> list[str]:
        rule = ErrorRule(key="any", status="503", prob=0.5)
        with _proxy(fake_gcs_endpoint, tmp_path, errors=[rule], seed=seed) as p:
            return [p.decide("w1", "GET", "k") for _ in range(40)]

    a, b = pattern(3), pattern(3)
    assert a == b and 5 < a.count("503") < 35
    assert pattern(4) != a


def test_object_keys_of_each_dialect() -> None:
    assert object_key("PUT", "/bucket/t/.hoodie/a%20b.json", b"", "s3") == "t/.hoodie/a b.json"
    assert object_key("GET", "/bucket?list-type=2&prefix=t%2F", b"", "s3") == "t/"
    assert object_key("PUT", "/devstoreaccount1/c/t/k", b"", "azure") == "t/k"
    assert object_key("GET", "/download/storage/v1/b/bk/o/t%2Fk?alt=media", b"", "gcs") == "t/k"
    body = b'--x\r\ncontent-type: application/json\r\n\r\n{"name": "t/lock.json"}\r\n--x\r\n'
    assert object_key("POST", "/upload/storage/v1/b/bk/o?uploadType=multipart", body, "gcs") == "t/lock.json"
    assert object_key("GET", "/storage/v1/b/bk/o?prefix=t%2F", b"", "gcs") == "t/"


def test_bad_settings_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ProxyError, match="upstream"):
        FaultProxy("https://x:1", ["w1"], dialect="s3", log_path=tmp_path / "l")
    with pytest.raises(ProxyError, match="dialect"):
        FaultProxy("http://127.0.0.1:1", ["w1"], dialect="ftp", log_path=tmp_path / "l")
    with pytest.raises(ProxyError, match=r"errors\[0\].node"):
        FaultProxy("http://127.0.0.1:1", ["w1"], dialect="s3", log_path=tmp_path / "l",
                   errors=[ErrorRule(node="w9")])


def test_chunked_upload_with_100_continue_through_the_proxy_reaches_the_server(
        fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    """A GCS media upload sent chunked, after waiting for 100 Continue, then a pipelined read of it:
    h11 on both sides of the proxy, Go's net/http behind it."""
    import socket

    from http_reader import read_response

    ep = fake_gcs_endpoint
    upload = f"/upload/storage/v1/b/{ep.bucket}/o?uploadType=media&name=px-chunked/k"
    with _proxy(ep, tmp_path) as p, socket.create_connection(("127.0.0.1", p.ports["w1"]), 10) as sock:
        f = sock.makefile("rb")
        sock.sendall(f"POST {upload} HTTP/1.1\r\n"
                     "Host: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n"
                     "Expect: 100-continue\r\n\r\n".encode())
        assert read_response(f)[0] == 100
        sock.sendall(b"6\r\nchunk-\r\n4\r\ned!!\r\n0\r\n\r\n"
                     + f"GET /download/storage/v1/b/{ep.bucket}/o/px-chunked%2Fk?alt=media HTTP/1.1\r\n"
                       "Host: x\r\n\r\n".encode())
        uploaded, read = read_response(f), read_response(f)
    assert uploaded[0] == 200 and b'"name": "px-chunked/k"' in uploaded[2].replace(b'":"', b'": "')
    assert read[0] == 200 and read[2] == b"chunk-ed!!"
    assert p.stats.actions == {"forward": 2}
    assert ep.backend("px-chunked/").perform(Read("px-chunked/k")).body == b"chunk-ed!!"
