"""What the lock-holder timeline shows, derived from a history: holds, store leases, fault windows, groups.

Pure functions over ``model.runtime.history.Event``; the plotting lives in ``reports.plots``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.mutex import Hold, holds
from model.run_format import ViolationEntry
from model.runtime.history import Event

__all__ = ["Hold", "holds", "Lease", "Fault", "Group", "store_leases", "fault_windows", "owner_nodes",
           "group_violations", "violation_window"]


@dataclass(frozen=True)
class Lease:
    """The lock file named ``owner`` (unexpired) from ``start`` until ``end`` (true ms)."""

    owner: str
    node: str
    start: int
    end: int
    lapsed: bool  # ended because its validity ran out (by the writing node's clock), not by a new write


@dataclass(frozen=True)
class Fault:
    """A nemesis window on one node; ``start == end`` for instantaneous faults (writer death)."""

    node: str
    kind: str  # pause, crash, cutoff, writer-death
    start: int
    end: int


@dataclass
class Group:
    """Violations that share an owner, reported together (a long pause overlaps every later owner)."""

    violations: list[ViolationEntry] = field(default_factory=list)
    owners: set[str] = field(default_factory=set)

    @property
    def kinds(self) -> Counter[str]:
        return Counter(v["kind"] for v in self.violations)

    @property
    def span(self) -> tuple[int, int]:
        windows = [violation_window(v) for v in self.violations]
        return min(w[0] for w in windows), max(w[1] for w in windows)

    @property
    def common_owner(self) -> str | None:
        """The owner named by every violation of the group, if one is."""
        common = set.intersection(*(set(_owners(v)) for v in self.violations))
        return sorted(common)[0] if common else None

    @property
    def overlap_ms(self) -> int:
        return sum(int(v["details"].get("overlap_ms", 0)) for v in self.violations if v["kind"] == "overlap")


def owner_nodes(events: Sequence[Event]) -> dict[str, str]:
    """Owner id -> the node whose writer used it."""
    out: dict[str, str] = {}
    for e in events:
        if e.process == e.node and e.f in ("acquire", "try-lock") and e.type == "ok":
            out.setdefault(e.value["owner"], e.node)
    return out


def store_leases(events: Sequence[Event]) -> list[Lease]:
    """Intervals during which the store's lock file named an owner and had not yet expired."""
    nodes = owner_nodes(events)
    end_of_run = events[-1].time if events else 0
    out: list[Lease] = []
    cur: tuple[str, int, int] | None = None  # owner, start, estimated true-time expiry

    def close(at: int) -> None:
        assert cur is not None
        owner, start, expiry = cur
        end = min(at, expiry)
        out.append(Lease(owner, nodes.get(owner, "?"), start, max(end, start), expiry < at))

    for e in events:
        if not (e.process == "store" and e.f == "lock-file"):
            continue
        v = e.value
        # valid_until is on the writing node's clock; map it to true time through that node's reading.
        expiry = e.time + (v["valid_until"] - e.clock) if e.clock is not None else end_of_run
        if cur is not None and not v["expired"] and v["owner"] == cur[0] and cur[2] >= e.time:
            cur = (cur[0], cur[1], expiry)  # renewal
            continue
        if cur is not None:
            close(e.time)
            cur = None
        if not v["expired"]:
            cur = (v["owner"], e.time, expiry)
    if cur is not None:
        close(end_of_run)
    return out


_WINDOWS = {"pause-start": ("pause", "pause-end"), "crash": ("crash", "restart"),
            "cutoff-start": ("cutoff", "cutoff-end")}


def fault_windows(events: Sequence[Event]) -> list[Fault]:
    """Nemesis windows per node: pause-start/end, crash/restart, cutoff-start/end, writer deaths."""
    end_of_run = events[-1].time if events else 0
    open_: dict[tuple[str, str], int] = {}
    closers = {end: (kind, start) for start, (kind, end) in _WINDOWS.items()}
    out: list[Fault] = []
    for e in events:
        if e.process != "nemesis":
            continue
        node = (e.value or {}).get("node", e.node)
        if e.f in _WINDOWS:
            open_.setdefault((node, _WINDOWS[e.f][0]), e.time)
        elif e.f in closers:
            kind = closers[e.f][0]
            start = open_.pop((node, kind), None)
            if start is not None:
                out.append(Fault(node, kind, start, e.time))
        elif e.f == "writer-death":
            out.append(Fault(node, "writer-death", e.time, e.time))
    out.extend(Fault(node, kind, start, end_of_run) for (node, kind), start in open_.items())
    return sorted(out, key=lambda f: (f.start, f.node, f.kind))


def _owners(v: Mapping[str, Any]) -> list[str]:
    d = v.get("details", {})
    if "owners" in d:
        return list(d["owners"])
    return [d[k] for k in ("writer", "holder", "owner") if k in d]


def violation_window(v: Mapping[str, Any]) -> tuple[int, int]:
    """The true-time interval a violation covers (a point for a write)."""
    d = v.get("details", {})
    if "start" in d and "end" in d:
        return int(d["start"]), int(d["end"])
    if "times" in d:
        return int(min(d["times"])), int(max(d["times"]))
    if "time" in d:
        return int(d["time"]), int(d["time"])
    if "written_at" in d:
        return int(d["written_at"]), int(d.get("next_acquired_at") or d["told_failed_at"])
    return 0, 0


def group_violations(violations: Sequence[ViolationEntry]) -> list[Group]:
    """Connected groups of violations that share an owner, in order of their first time."""
    groups: list[Group] = []
    for v in violations:
        owners = set(_owners(v))
        touching = [g for g in groups if g.owners & owners] if owners else []
        merged = Group([v], owners)
        for g in touching:
            merged.violations[:0] = g.violations
            merged.owners |= g.owners
            groups.remove(g)
        groups.append(merged)
    for g in groups:
        g.violations.sort(key=lambda v: (violation_window(v), v["kind"]))
    return sorted(groups, key=lambda g: g.span)
