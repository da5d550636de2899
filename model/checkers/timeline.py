"""Timeline checkers: instant times, completed instants, completion order, ConsistentRead.

They read a history of ``model/timeline`` writers run in the simulated world: the writers'
``time`` events (what each generation returned, and when it started and ended in true
time) and the store's ``object`` events (every table file written, with its body; the
ground truth).

- ``unique-times``: no two generations return the same time.
- ``monotonic-times``: a generation that starts after another one has returned gets a
  larger time (the real-time order of generations; within one process this is Hudi's
  forced increase, across processes it is what the skew-adjusting generator promises).
- ``completed-immutable``: a completed instant file, once written, never changes.
- ``completion-order``: (v8) completed instants reach the store in increasing completion
  time, and each completes after it was requested.
- ``consistent-read``: replaying the store, after every write, every committed operation on a
  key stays readable with its value at every later compatible time, and no key is visible
  in two file groups with different values (the TLA+ invariant, evaluated by
  ``model/cow/invariants.py`` on the store's state).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from model.checkers.verdict import Verdict, Violation
from model.cow.invariants import consistent_read_violations
from model.cow.spec import COMPLETED, DELETE, INFLIGHT, INSERT, REQUESTED, UPDATE
from model.history import Event
from model.timeline.commits import instant_body
from model.timeline.config import TIMELINE_CHECKERS
from model.timeline.layout import Instant, format_instant, format_time, instant_to_ms, parse_instant_path

_STATE_CODE = {"requested": REQUESTED, "inflight": INFLIGHT, "completed": COMPLETED}


def _generations(events: Sequence[Event]) -> list[tuple[Event, Event]]:
    """(invoke, ok) pairs of time generations, per process."""
    open_: dict[str, Event] = {}
    out: list[tuple[Event, Event]] = []
    for e in events:
        if e.f != "time":
            continue
        if e.type == "invoke":
            open_[e.process] = e
        elif e.type == "ok" and e.process in open_:
            out.append((open_.pop(e.process), e))
        elif e.type == "fail":
            open_.pop(e.process, None)
    return out


def check_unique_times(events: Sequence[Event]) -> list[Violation]:
    """Every generated time is unique across all processes."""
    first: dict[int, Event] = {}
    found: list[Violation] = []
    for _, ok in _generations(events):
        t = ok.value["time"]
        if t in first:
            other = first[t]
            found.append(
                Violation(
                    "duplicate-time",
                    f"{other.process} and {ok.process} both generated "
                    f"{format_time(t)} ({other.value['kind']} / {ok.value['kind']})",
                    (other.index, ok.index),
                    {"time": t},
                )
            )
        else:
            first[t] = ok
    return found


def check_monotonic_times(events: Sequence[Event]) -> list[Violation]:
    """A generation that starts after another returned must return a strictly larger time."""
    gens = _generations(events)
    by_end = sorted(gens, key=lambda g: g[1].index)
    found: list[Violation] = []
    best: Event | None = None  # the returned generation with the largest time so far
    i = 0
    for inv, ok in sorted(gens, key=lambda g: g[0].index):
        while i < len(by_end) and by_end[i][1].index < inv.index:
            done = by_end[i][1]
            if best is None or done.value["time"] > best.value["time"]:
                best = done
            i += 1
        if best is not None and ok.value["time"] <= best.value["time"]:
            back = best.value["time"] - ok.value["time"]
            found.append(
                Violation(
                    "time-not-increasing",
                    f"{ok.process} generated {format_time(ok.value['time'])} after {best.process}'s "
                    f"{format_time(best.value['time'])} had returned ({back} ms earlier or equal)",
                    (best.index, inv.index, ok.index),
                    {"behind_ms": back},
                )
            )
    return found


def _table_writes(events: Sequence[Event], base: str, layout: str) -> list[tuple[Event, str, Any]]:
    """The store's writes of table files: (event, kind, parsed) with kind instant / slice / other."""
    out: list[tuple[Event, str, Any]] = []
    for e in events:
        if e.process != "store" or e.f != "object" or not isinstance(e.value, dict) or "body" not in e.value:
            continue
        key = e.value["key"]
        inst = parse_instant_path(key, base, layout)
        if inst is not None:
            out.append((e, "instant", inst))
        elif key.startswith(f"{base}/fg") and key.endswith(".parquet"):
            out.append((e, "slice", json.loads(e.value["body"])))
    return out


def check_completed_immutable(events: Sequence[Event], base: str, layout: str) -> list[Violation]:
    """A completed instant file is never rewritten with a different body."""
    first: dict[str, Event] = {}
    found: list[Violation] = []
    for e, kind, inst in _table_writes(events, base, layout):
        if kind != "instant" or inst.state != "completed":
            continue
        key = e.value["key"]
        if key not in first:
            first[key] = e
        elif e.value["body"] != first[key].value["body"]:
            found.append(
                Violation(
                    "completed-instant-changed",
                    f"completed instant {key.rsplit('/', 1)[-1]} rewritten by {e.node} "
                    f"(first written by {first[key].node})",
                    (first[key].index, e.index),
                    {"key": key},
                )
            )
    return found


def check_completion_order(events: Sequence[Event], base: str, layout: str) -> list[Violation]:
    """(v8) Completed instants appear in increasing completion time, each after its request time."""
    if layout != "v8":
        return []
    found: list[Violation] = []
    seen: set[str] = set()
    last: tuple[Event, Instant] | None = None
    for e, kind, inst in _table_writes(events, base, layout):
        if kind != "instant" or inst.state != "completed" or e.value["key"] in seen:
            continue
        seen.add(e.value["key"])
        assert inst.completed is not None
        if inst.completed <= inst.requested:
            found.append(
                Violation(
                    "completed-before-requested",
                    f"{inst.file_name(layout)}: completion time not after its instant time",
                    (e.index,),
                    {"instant": inst.id},
                )
            )
        if last is not None and last[1].completed is not None and inst.completed <= last[1].completed:
            prev = last[1]
            assert prev.completed is not None
            behind = instant_to_ms(prev.completed) - instant_to_ms(inst.completed)
            found.append(
                Violation(
                    "completion-order",
                    f"{inst.file_name(layout)} (by {e.node}) completed after {prev.file_name(layout)} "
                    f"(by {last[0].node}) with a completion time "
                    f"{behind} ms earlier or equal",
                    (last[0].index, e.index),
                    {"behind_ms": behind},
                )
            )
        if last is None or last[1].completed is None or inst.completed > last[1].completed:
            last = (e, inst)
    return found


class _Replay:
    """The store's table files as they stand after each write, encoded for ``check_consistent_read``."""

    def __init__(self) -> None:
        self.instants: dict[str, tuple[Instant, dict[str, Any]]] = {}  # path -> (instant, body)
        self.slices: dict[tuple[int, int, str], dict[str, str]] = {}  # (fg, time, salt) -> entries
        self.kv_log: dict[str, list[tuple[int, str, int]]] = {}  # key -> [(op, value, time)] in commit order

    def apply(self, e: Event, kind: str, parsed: Any) -> None:
        if kind == "slice":
            self.slices[(parsed["fg"], parsed["time"], parsed["salt"])] = dict(parsed["entries"])
            return
        body = instant_body(e.value["body"])
        self.instants[e.value["key"]] = (parsed, body)
        aux = body.get("aux")
        if parsed.state == "completed" and aux:
            op = {"delete": DELETE, "insert": INSERT}.get(aux["kind"], UPDATE)
            self.kv_log.setdefault(aux["key"], []).append((op, aux["value"] or "", parsed.requested))

    def check(self) -> list[tuple[Any, tuple[str, str, str], str]]:
        """Every violation of the store as it stands, by read time, then key.

        Each as (ReadViolation, identity, description); the identity (kind, key, expected value) names
        the violation by values, since the indices of the encoding move as the store grows.
        """
        times = sorted({inst.requested for inst, _ in self.instants.values()})
        rank = {t: i + 1 for i, t in enumerate(times)}
        salts = sorted({inst.salt for inst, _ in self.instants.values()} | {s for _, _, s in self.slices})
        srank = {s: i for i, s in enumerate(salts)}
        keys = sorted(set(self.kv_log) | {k for es in self.slices.values() for k in es})
        fgs = max(
            [fg for fg, _, _ in self.slices] + [b.get("fg", 0) for _, b in self.instants.values()], default=0
        )
        values = sorted(
            {v for es in self.slices.values() for v in es.values()}
            | {v for log in self.kv_log.values() for _, v, _ in log}
        )
        vidx = {v: i for i, v in enumerate(values)}
        timeline = []
        for inst, body in self.instants.values():
            fid = int(body.get("fg", 0)) if inst.state == "completed" else 0
            if inst.state == "completed" and (fid, inst.requested, inst.salt) not in self.slices:
                continue  # a completed instant of the "times" workload names no slice
            timeline.append((rank[inst.requested], _STATE_CODE[inst.state], srank[inst.salt], fid))
        files = tuple(
            tuple(
                sorted(
                    (rank.get(t, 0), srank[s], *(vidx[es[k]] + 1 if k in es else 0 for k in keys))
                    for (fg, t, s), es in self.slices.items()
                    if fg == f
                )
            )
            for f in range(1, fgs + 1)
        )
        kv = tuple(
            tuple((op, vidx[v] if v else 0, rank[t]) for op, v, t in self.kv_log.get(k, ())) for k in keys
        )
        described = []
        for bad in consistent_read_violations(tuple(sorted(timeline)), files, kv):
            exp = "nothing" if bad.expected is None else values[bad.expected]
            got = ", ".join(f"{values[v]} in fg{fg}" for fg, v in bad.found) or "nothing"
            identity = (bad.kind, keys[bad.key], exp)
            described.append((bad, identity, (
                f"read of {keys[bad.key]} at {format_instant(times[bad.ts - 1])} should return {exp} "
                f"but returns {got} ({bad.kind})"
            )))
        return described


def check_consistent_read_history(events: Sequence[Event], base: str, layout: str) -> list[Violation]:
    """ConsistentRead after every table write.

    Each violation (kind, key, expected value) is reported once, at the write that showed it first, for
    the earliest read that sees it: a lost value stays lost for every later read and after every later
    write, and each lost value is its own violation.
    """
    replay = _Replay()
    found: list[Violation] = []
    reported: set[tuple[str, str, str]] = set()
    last_commit: int | None = None
    for e, kind, parsed in _table_writes(events, base, layout):
        replay.apply(e, kind, parsed)
        if kind == "instant" and parsed.state == "completed":
            last_commit = e.index
        for bad, identity, text in replay.check():
            if identity in reported:
                continue
            reported.add(identity)
            cause = tuple(i for i in (last_commit, e.index) if i is not None)
            found.append(Violation("consistent-read", text, tuple(sorted(set(cause))), {"kind": bad.kind}))
    return found


def check_timeline_history(
    events: Sequence[Event], base: str, layout: str, checkers: Sequence[str] = TIMELINE_CHECKERS
) -> Verdict:
    """Every timeline checker; the violations of ``checkers`` decide, the others are findings."""
    by_checker = {
        "unique-times": check_unique_times(events),
        "monotonic-times": check_monotonic_times(events),
        "completed-immutable": check_completed_immutable(events, base, layout),
        "completion-order": check_completion_order(events, base, layout),
        "consistent-read": check_consistent_read_history(events, base, layout),
    }
    violations: list[Violation] = []
    findings: list[Violation] = []
    for name, found in by_checker.items():
        (violations if name in checkers else findings).extend(found)
    return Verdict(tuple(violations), tuple(findings))
