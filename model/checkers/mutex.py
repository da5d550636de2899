"""Mutual exclusion over a lock history: overlapping holders, stale writes, lost updates, dangling locks.

The checker reads only the history, so it works the same on a simulated run,
a real-world run or a replay:

- ``overlap``: two owners that both believed they held the lock at the same
  true time.  A writer believes from its ``acquire ok`` until it starts to
  release, learns it was interrupted, fails its own validity check, dies, or
  its node crashes.
- ``stale-write``: a write of the protected register applied at the store
  while the lock file named another owner (the lock had passed on).  The lock
  file's writes are taken in the store's apply order where their version chain
  is recorded (:mod:`model.checkers.store_order`), not in reply order.
- ``lost-update``: two writes applied at the store that both wrote the same
  value, so both read the same old one (Jepsen's lock-set idea).  One write the
  client sent again (an SDK retry after a lost reply) is applied twice with the
  same body: that is one update, not a lost one.
- ``dangling-lock`` (a liveness finding): the lock file names an owner whose
  writer was told its acquisition failed (a lost reply) or whose release
  failed; reported with the time the others waited for it to expire.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from model.checkers.store_order import by_version_chain
from model.checkers.verdict import Violation
from model.runtime.history import Event

_CLOSING = {("release", "invoke"), ("interrupted", "info"), ("check", "fail"), ("thread-died", "info")}


@dataclass(frozen=True)
class Hold:
    """An interval of true time during which ``owner`` believed it held the lock."""

    owner: str
    node: str
    start: int
    end: int
    start_event: int
    end_event: int | None  # None: held until the history ended


def holds(events: Sequence[Event]) -> list[Hold]:
    """Every interval during which a writer believed it held the lock."""
    open_: dict[str, tuple[str, Event]] = {}  # writer process -> (owner, acquire ok event)
    out: list[Hold] = []

    def close(process: str, end: Event | None, time: int) -> None:
        owner, start = open_.pop(process)
        out.append(Hold(owner, start.node, start.time, time, start.index, end.index if end else None))

    last_time = events[-1].time if events else 0
    for e in events:
        if e.process == e.node and e.f == "acquire" and e.type == "ok":
            open_[e.process] = (e.value["owner"], e)
        elif e.process in open_ and (e.f, e.type) in _CLOSING:
            close(e.process, e, e.time)
        elif e.process == "nemesis" and e.f in ("crash", "shutdown-stop") and e.node in open_:
            close(e.node, e, e.time)
    for process in list(open_):
        close(process, None, last_time)
    return sorted(out, key=lambda h: (h.start, h.start_event))


def check_overlaps(events: Sequence[Event]) -> list[Violation]:
    """Pairs of different owners whose belief intervals intersect."""
    hs = holds(events)
    found: list[Violation] = []
    for i, a in enumerate(hs):
        for b in hs[i + 1 :]:
            if b.start >= a.end:
                break
            if a.owner == b.owner or b.start == b.end:
                continue
            lo, hi = b.start, min(a.end, b.end)
            if lo >= hi:
                continue
            first_end = a.end_event if a.end <= b.end else b.end_event
            evidence = tuple(sorted({x for x in (a.start_event, b.start_event, first_end) if x is not None}))
            found.append(
                Violation(
                    "overlap",
                    f"{a.node} (owner {a.owner[:8]}) and {b.node} (owner {b.owner[:8]}) both held the lock "
                    f"during [{lo}, {hi}) ms ({hi - lo} ms)",
                    evidence,
                    {
                        "owners": [a.owner, b.owner],
                        "nodes": [a.node, b.node],
                        "start": lo,
                        "end": hi,
                        "overlap_ms": hi - lo,
                    },
                )
            )
    return found


def check_stale_writes(events: Sequence[Event]) -> list[Violation]:
    """Register writes applied while the lock file named someone else."""
    found: list[Violation] = []
    current: Event | None = None
    for e in by_version_chain(events):
        if e.process != "store":
            continue
        if e.f == "lock-file":
            current = e
        elif e.f == "register" and current is not None:
            writer = json.loads(e.value["body"])["by"]
            holder = current.value["owner"]
            if holder != writer:
                found.append(
                    Violation(
                        "stale-write",
                        f"register written by owner {writer[:8]} at {e.time} ms while the lock file named "
                        f"{holder[:8]} (since {current.time} ms)",
                        (current.index, e.index),
                        {"writer": writer, "holder": holder, "time": e.time},
                    )
                )
    return found


def check_lost_updates(events: Sequence[Event]) -> list[Violation]:
    """Two applied register writes with the same new value: one update was lost."""
    by_value: dict[int, Event] = {}
    found: list[Violation] = []
    for e in events:
        if e.process != "store" or e.f != "register":
            continue
        body = json.loads(e.value["body"])
        value, owner = body["value"], body["by"]
        first = by_value.get(value)
        if first is None:
            by_value[value] = e
            continue
        first_owner = json.loads(first.value["body"])["by"]
        retried = first.value["body"] == e.value["body"] and _sent_once(events, owner, value, e)
        if first_owner == owner and retried:
            continue  # the same request applied again (a retry), not a second update
        reads = [
            r.index
            for r in events
            if r.f == "read"
            and r.type == "ok"
            and r.value.get("value") == value - 1
            and r.value.get("owner") in (owner, first_owner)
            and r.time <= e.time
        ]
        found.append(
            Violation(
                "lost-update",
                f"owners {first_owner[:8]} (at {first.time} ms) and {owner[:8]} (at {e.time} ms) both wrote "
                f"{value} over {value - 1}: one update was lost",
                tuple(sorted({*reads[-2:], first.index, e.index})),
                {"value": value, "owners": [first_owner, owner], "times": [first.time, e.time]},
            )
        )
    return found


def _sent_once(events: Sequence[Event], owner: str, value: int, upto: Event) -> bool:
    """True when ``owner`` invoked one write of ``value`` before ``upto`` (its client may send it twice)."""
    invokes = [x for x in events[:upto.index]
               if x.f == "write" and x.type == "invoke" and isinstance(x.value, dict)
               and x.value.get("owner") == owner and x.value.get("write") == value]
    return len(invokes) == 1


_WRITE_FAILURES = ("precondition-failed", "throttled", "write-unknown")


def _told_failed(e: Event) -> bool:
    """A try-lock failure of a write of the lock file, or a failed release.

    Hudi's own provider (the hudi world, phase ``hudi``) says only that ``tryLock`` returned false or
    threw, not which request failed: any such failure counts, and the lock file decides (it must name
    the owner and be unexpired).
    """
    if e.f == "release-failed" and e.type == "info":
        return True
    if not (e.f == "try-lock" and e.type == "fail" and isinstance(e.value, dict) and e.value.get("owner")):
        return False
    reason, phase = e.value.get("reason"), e.value.get("phase")
    if reason in _WRITE_FAILURES or phase == "hudi":
        return True
    return reason == "exception" and phase in ("create", "write")


def find_dangling_locks(events: Sequence[Event]) -> list[Violation]:
    """Lock files naming an owner whose writer was told it failed to acquire, or failed to release (liveness).

    At the failure, the lock file as last written names that owner and is not expired: nobody renews
    it (or, after a failed release, it stays until the owner's next try) and the others wait for it
    to expire.  One finding per lock-file version.
    """
    found: list[Violation] = []
    current: Event | None = None
    seen: set[tuple[str, object]] = set()
    for e in by_version_chain(events):
        if e.process == "store" and e.f == "lock-file":
            current = e
            continue
        if current is None or not _told_failed(e):
            continue
        owner = e.value.get("owner")
        stale = current.value["owner"] != owner or current.value["expired"]
        if stale or (owner, current.value["version"]) in seen:
            continue
        seen.add((owner, current.value["version"]))
        nxt = next((x for x in events if x.index > e.index and x.f == "acquire" and x.type == "ok"
                    and x.value.get("owner") != owner), None)
        waited = (nxt.time if nxt else events[-1].time) - current.time
        cause = "release" if e.f == "release-failed" else "acquire"
        told = e.value.get("error") or e.value.get("reason")
        evidence = tuple(i for i in (current.index, e.index, nxt.index if nxt else None) if i is not None)
        found.append(
            Violation(
                "dangling-lock",
                f"{e.node} was told its {cause} failed ({told}) but the lock file names it "
                f"(owner {owner[:8]}); others waited {waited} ms",
                evidence,
                {
                    "owner": owner,
                    "cause": cause,
                    "written_at": current.time,
                    "told_failed_at": e.time,
                    "next_acquired_at": nxt.time if nxt else None,
                    "waited_ms": waited,
                },
            )
        )
    return found
