"""The mutual-exclusion checkers on hand-written histories: they catch what they must, and only that."""

from __future__ import annotations

import json

import pytest

from model.checkers.lock_run import check_lock_history
from model.checkers.mutex import check_lost_updates, check_overlaps, check_stale_writes, holds
from model.runtime.history import Event, dumps, loads


class H:
    """A tiny history builder."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(
        self, time: int, node: str, type_: str, f: str, value: object = None, process: str | None = None
    ) -> int:
        self.events.append(Event(len(self.events), time, node, process or node, type_, f, value, None))
        return len(self.events) - 1

    def hold(self, node: str, owner: str, start: int, end: int) -> None:
        self.add(start, node, "ok", "acquire", {"owner": owner})
        self.add(end, node, "invoke", "release", {"owner": owner})

    def lock_file(self, time: int, owner: str) -> int:
        return self.add(
            time,
            "-",
            "info",
            "lock-file",
            {"owner": owner, "expired": False, "valid_until": 0},
            process="store",
        )

    def register(self, time: int, owner: str, value: int) -> int:
        return self.add(
            time,
            "-",
            "info",
            "register",
            {"body": json.dumps({"value": value, "by": owner})},
            process="store",
        )


def test_sequential_holds_are_not_an_overlap() -> None:
    h = H()
    h.hold("w1", "a", 0, 100)
    h.hold("w2", "b", 100, 200)
    h.hold("w1", "c", 250, 300)
    assert check_overlaps(h.events) == []


def test_overlapping_holds_are_reported_with_both_owners_and_the_interval() -> None:
    h = H()
    h.hold("w1", "a", 0, 150)
    h.hold("w2", "b", 100, 200)
    (v,) = check_overlaps(h.events)
    assert v.details["owners"] == ["a", "b"] and (v.details["start"], v.details["end"]) == (100, 150)
    assert set(v.events) == {0, 1, 2}  # both acquisitions and the first release


def test_belief_ends_at_interrupt_crash_and_failed_self_check() -> None:
    h = H()
    h.add(0, "w1", "ok", "acquire", {"owner": "a"})
    h.add(50, "w1", "info", "interrupted", {"owner": "a"})
    h.add(60, "w2", "ok", "acquire", {"owner": "b"})
    h.add(70, "w2", "info", "crash", None, process="nemesis")
    h.add(80, "w3", "ok", "acquire", {"owner": "c"})
    h.add(90, "w3", "fail", "check", {"owner": "c"})
    assert [(x.owner, x.start, x.end) for x in holds(h.events)] == [
        ("a", 0, 50),
        ("b", 60, 70),
        ("c", 80, 90),
    ]
    assert check_overlaps(h.events) == []


def test_stale_write_is_a_write_while_the_lock_file_names_another_owner() -> None:
    h = H()
    h.lock_file(0, "a")
    h.register(10, "a", 1)
    h.lock_file(20, "b")
    late = h.register(30, "a", 2)
    (v,) = check_stale_writes(h.events)
    assert v.details["writer"] == "a" and v.details["holder"] == "b" and late in v.events


def test_lost_update_is_two_writes_of_the_same_value() -> None:
    h = H()
    h.add(0, "w1", "ok", "read", {"owner": "a", "value": 0})
    h.add(1, "w2", "ok", "read", {"owner": "b", "value": 0})
    h.register(5, "a", 1)
    h.register(6, "b", 1)
    (v,) = check_lost_updates(h.events)
    assert v.details["owners"] == ["a", "b"] and v.details["value"] == 1
    assert set(v.events) == {0, 1, 2, 3}
    h2 = H()
    h2.register(5, "a", 1)
    h2.register(6, "b", 2)
    assert check_lost_updates(h2.events) == []


def test_a_write_applied_twice_by_a_retry_is_one_update() -> None:
    h = H()
    h.add(0, "w1", "ok", "read", {"owner": "a", "value": 0})
    h.add(1, "w1", "invoke", "write", {"owner": "a", "read": 0, "write": 1})
    h.register(2, "a", 1)  # applied; its reply is lost, the SDK sends it again
    h.register(9, "a", 1)
    assert check_lost_updates(h.events) == []
    # the same owner writing 1 twice from two writes of its own is still caught
    h.add(10, "w1", "ok", "read", {"owner": "a", "value": 0})
    h.add(11, "w1", "invoke", "write", {"owner": "a", "read": 0, "write": 1})
    h.register(12, "a", 1)
    assert [v.details["value"] for v in check_lost_updates(h.events)] == [1]


def test_unselected_checkers_become_findings() -> None:
    h = H()
    h.hold("w1", "a", 0, 150)
    h.hold("w2", "b", 100, 200)
    verdict = check_lock_history(h.events, ["lost-update"])
    assert verdict.verdict == "ok" and [f.kind for f in verdict.findings] == ["overlap"]


def test_history_round_trip_and_a_truncated_last_line_is_kept_up_to_the_cut() -> None:
    h = H()
    h.hold("w1", "a", 0, 100)
    text = dumps(h.events)
    assert loads(text) == h.events
    assert loads(text + '{"index": 2, "ti') == h.events  # a run that died mid-line
    with pytest.raises(ValueError, match="line 1: field type"):
        loads('{"index":0,"time":0,"node":"w","process":"w","type":"done","f":"x"}\n')
