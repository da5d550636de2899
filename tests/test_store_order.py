"""Store events ordered by the version chain: a late reply no longer makes a false stale write."""

from __future__ import annotations

import json

from model.checkers.lock_run import check_lock_history
from model.checkers.mutex import check_stale_writes, find_dangling_locks
from model.checkers.store_order import by_version_chain
from model.runtime.history import Event


class RealHistory:
    """A real-world-shaped history: store events in reply order, with ``version`` and ``replaces``."""

    def __init__(self, chained: bool = True) -> None:
        self.events: list[Event] = []
        self.chained = chained

    def add(self, time: int, node: str, process: str, type_: str, f: str, value: object) -> int:
        self.events.append(Event(len(self.events), time, node, process, type_, f, value, None))
        return len(self.events) - 1

    def lock_file(self, time: int, node: str, owner: str, version: str, replaces: str | None,
                  expired: bool = False) -> int:
        value: dict[str, object] = {"owner": owner, "expired": expired, "valid_until": time + 5000,
                                    "version": version, "observed": "client"}
        if self.chained:
            value["replaces"] = replaces
        return self.add(time, node, "store", "info", "lock-file", value)

    def register(self, time: int, node: str, owner: str, value: int) -> int:
        body = json.dumps({"value": value, "by": owner})
        return self.add(time, node, "store", "info", "register",
                        {"body": body, "observed": "client", "version": f"r{value}"})


def late_release(chained: bool, writer: str) -> RealHistory:
    """w3 releases (v3 -> v4), w2 acquires over it (v4 -> v5); w3's reply comes 55 ms after w2's.

    Then ``writer`` writes the register.  As in the SeaweedFS soak that reported a false stale write.
    """
    h = RealHistory(chained)
    h.add(0, "w3", "w3", "ok", "acquire", {"owner": "o3"})
    h.lock_file(0, "w3", "o3", "v3", "v2")
    h.add(90, "w3", "w3", "invoke", "release", {"owner": "o3"})
    h.add(95, "w2", "w2", "ok", "acquire", {"owner": "o2"})  # w2 read v4 (expired) and replaced it
    h.lock_file(100, "w2", "o2", "v5", "v4")
    h.lock_file(155, "w3", "o3", "v4", "v3", expired=True)  # applied before v5, replied after it
    h.add(156, "w3", "w3", "ok", "release", {"owner": "o3"})
    h.register(160, "w2" if writer == "o2" else "w1", writer, 1)
    return h


def test_reply_order_gives_a_false_stale_write_and_the_version_chain_does_not() -> None:
    unchained = late_release(chained=False, writer="o2").events
    found = check_stale_writes(unchained)
    assert [v.kind for v in found] == ["stale-write"]  # the old ordering: the lock file "named" o3
    assert found[0].details["holder"] == "o3"
    chained = late_release(chained=True, writer="o2").events
    assert check_stale_writes(chained) == []
    assert check_lock_history(chained).violations == ()


def test_a_real_stale_write_in_the_same_shape_is_still_caught() -> None:
    events = late_release(chained=True, writer="o1").events  # o1 never held the lock
    found = check_stale_writes(events)
    assert len(found) == 1
    assert found[0].details["writer"] == "o1" and found[0].details["holder"] == "o2"


def test_a_stale_write_by_the_previous_holder_after_the_handover_is_caught() -> None:
    h = late_release(chained=True, writer="o2")
    h.register(170, "w3", "o3", 2)  # o3 writes after w2 took the lock over: stale
    found = check_stale_writes(h.events)
    assert [(v.details["writer"], v.details["holder"]) for v in found] == [("o3", "o2")]


def test_the_late_event_moves_to_just_before_its_successor() -> None:
    events = late_release(chained=True, writer="o2").events
    order = [e.value["version"] for e in by_version_chain(events) if e.f == "lock-file"]
    assert order == ["v3", "v4", "v5"]
    assert sorted(e.index for e in by_version_chain(events)) == [e.index for e in events]


def test_histories_without_replaces_keep_their_order() -> None:
    events = late_release(chained=False, writer="o2").events
    assert by_version_chain(events) == events


def test_a_repeated_version_links_nothing() -> None:
    h = RealHistory()
    h.lock_file(0, "w1", "o1", "same", None)
    h.lock_file(10, "w2", "o2", "v2", "same")
    h.lock_file(20, "w1", "o1", "same", "v2")  # an ETag seen twice: the chain is ambiguous, keep reply order
    assert by_version_chain(h.events) == h.events


def test_dangling_locks_follow_the_chain_too() -> None:
    # w3's release is told failed while its late-replied expire (applied first) is superseded by w2's lock
    h = RealHistory()
    h.lock_file(0, "w3", "o3", "v3", "v2")
    h.lock_file(100, "w2", "o2", "v5", "v4")
    h.lock_file(155, "w3", "o3", "v4", "v3", expired=True)
    h.add(160, "w2", "w2", "info", "release-failed", {"owner": "o2", "error": "FAILED_TO_RELEASE"})
    found = find_dangling_locks(h.events)
    assert [v.details["owner"] for v in found] == ["o2"]  # the file names o2 (v5), not o3's expired v4
    unchained = RealHistory(chained=False)
    unchained.lock_file(0, "w3", "o3", "v3", "v2")
    unchained.lock_file(100, "w2", "o2", "v5", "v4")
    unchained.lock_file(155, "w3", "o3", "v4", "v3", expired=True)
    unchained.add(160, "w2", "w2", "info", "release-failed", {"owner": "o2", "error": "FAILED_TO_RELEASE"})
    assert find_dangling_locks(unchained.events) == []  # reply order hid it behind o3's expired file
