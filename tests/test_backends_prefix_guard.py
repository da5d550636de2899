"""Every key is confined under the table prefix: hostile keys are refused before any request."""

from __future__ import annotations

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint, moto_endpoint  # noqa: F401
from backends.keys import KeyGuard, PrefixViolation
from model.runtime.effects import CreateIfAbsent, Delete, FencedPut, ListPrefix, Put, Read, ReplaceIfMatch

PREFIX = "tables/t1/"
HOSTILE = [
    "..",
    "../x",
    "tables/t1/../t2/x",
    "tables/t1/a/../../t2/x",
    "/tables/t1/x",
    "/etc/passwd",
    "tables/t2/x",
    "tables/t1x/y",
    "tables/t1\\..\\t2\\x",
    "tables\\t1\\x",
    "",
    "tables/t1/",
    "tables/t1",
    "tables/t1//x",
    "tables/t1/./x",
    "tables/t1/x\n",
    "other/tables/t1/x",
]


def _effects(key: str) -> list[object]:
    return [Read(key), CreateIfAbsent(key, b"x"), ReplaceIfMatch(key, b"x", "1"), Put(key, b"x"), Delete(key),
            FencedPut(key, b"x", "tables/t1/fence", "1"), FencedPut("tables/t1/ok", b"x", key, "1")]


@pytest.mark.parametrize("key", HOSTILE)
def test_guard_refuses_hostile_keys(key: str) -> None:
    guard = KeyGuard(PREFIX)
    with pytest.raises(PrefixViolation) as err:
        guard.key(key)
    assert repr(key) in str(err.value) and PREFIX in str(err.value)


def test_guard_accepts_keys_under_the_prefix() -> None:
    guard = KeyGuard("tables/t1")
    assert guard.prefix == PREFIX
    assert guard.key("tables/t1/.hoodie/.locks/table_lock.json") == "tables/t1/.hoodie/.locks/table_lock.json"
    assert guard.list_prefix("tables/t1/") == "tables/t1/"
    assert guard.list_prefix("tables/t1/.hoodie/") == "tables/t1/.hoodie/"
    for bad in ("tables/", "", "tables/t1/../", "/tables/t1/", "tables/t2/"):
        with pytest.raises(PrefixViolation):
            guard.list_prefix(bad)


@pytest.mark.parametrize("prefix", ["", "/", "/abs/", "a/../b", "a\\b", "a//b"])
def test_bad_table_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(PrefixViolation):
        KeyGuard(prefix)


@pytest.mark.backends
@pytest.mark.parametrize("endpoint_fixture", ["fake_gcs_endpoint", "moto_endpoint"])
def test_backend_refuses_hostile_keys_and_writes_nothing(endpoint_fixture: str,
                                                         request: pytest.FixtureRequest) -> None:
    ep: Endpoint = request.getfixturevalue(endpoint_fixture)
    with ep.backend(PREFIX) as b, ep.backend("tables/") as wide:
        for key in HOSTILE:
            for effect in _effects(key):
                with pytest.raises(PrefixViolation):
                    b.perform(effect)  # type: ignore[arg-type]
                assert b.last_answers() == [], f"a request went out for {effect!r}"
        for prefix in ("tables/", "tables/t2/", "", "tables/t1/../"):
            with pytest.raises(PrefixViolation):
                b.perform(ListPrefix(prefix))
        listed = wide.perform(ListPrefix("tables/"))
        assert listed.ok and listed.body is not None
        outside = [k for k in listed.body.decode().splitlines() if k and not k.startswith(PREFIX)]
        assert outside == [], f"objects written outside the prefix: {outside}"
