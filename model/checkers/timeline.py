"""Timeline checkers: instant times, completed instants, completion order, ConsistentRead.

They read a history of ``model/timeline`` writers run in the simulated world: the writers'
``time`` events (what each generation returned, and when it started and ended in true
time), the store's ``object`` events (every table file written, with its body; the
ground truth) and the writers' ``delete`` ok events (the store records writes only).

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
  ``model/cow/invariants.py`` on the store's state).  Readers list files through the metadata
  table (a deleted committed file reads as empty) or storage (it is gone), as the run says.
- ``duplicate-key``: no record key in the newest committed slices of two file groups.

Both read as Hudi's readers do (``AbstractTableFileSystemView``, 1.2.0): a file group named by a
completed replacecommit's ``partitionToReplaceFileIds`` is hidden from the replacecommit's instant time on
(``#isFileGroupReplacedBeforeOrOn``), whatever slices it gets later, and the newest snapshot hides it
(``#isFileGroupReplaced``); an insert_overwrite deletes the keys of the groups it replaced that it does
not write.  A clustered row in the old and the new file group is one row to them.
- ``requested-order``: requested instants reach the store in instant-time order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from model.checkers.verdict import Verdict, Violation
from model.cow.invariants import consistent_read_violations
from model.cow.spec import COMPLETED, DELETE, INFLIGHT, INSERT, REQUESTED, UPDATE
from model.runtime.history import Event
from model.timeline.config import TIMELINE_CHECKERS
from model.timeline.layout import (
    Instant,
    format_instant,
    format_time,
    instant_to_ms,
    parse_instant_path,
)
from model.timeline.modeldata import instant_body

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
    """The store's writes of table files, and the files writers deleted: (event, kind, parsed) with kind
    ``instant`` / ``slice`` / ``deleted`` (a writer's ``delete`` ok record: the store records writes only)."""
    out: list[tuple[Event, str, Any]] = []
    prefix = base + "/"
    for e in events:
        if e.f == "delete" and e.type == "ok" and isinstance(e.value, dict):
            out.append((e, "deleted", e.value["key"]))
            continue
        if e.process != "store" or e.f != "object" or not isinstance(e.value, dict) or "body" not in e.value:
            continue
        key = e.value["key"]
        inst = parse_instant_path(key, base, layout)
        if inst is not None:
            out.append((e, "instant", inst))
        elif key.startswith(prefix) and not key.startswith(prefix + ".hoodie/") and key.endswith(".parquet"):
            # a base file (the specification's salted names are no Hudi base file names)
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


def _fg_name(fg: Any) -> str:
    """A file group as messages name it: ``fg3`` (the specification's) or ``p0/<fileId>`` (Hudi's)."""
    return f"fg{fg}" if isinstance(fg, int) else str(fg)


def _fg_order(fg: Any) -> tuple[bool, str, int]:
    return (isinstance(fg, str), str(fg), fg if isinstance(fg, int) else 0)


class _Replay:
    """The store's table files as they stand after each write, encoded for ``check_consistent_read``.

    ``metadata_table``: readers list files through the metadata table, so a committed base file that was
    deleted is still listed and reads as empty (its records lost); otherwise they list storage, where it
    is gone and the file group shows its previous committed slice.
    """

    def __init__(self, metadata_table: bool = False) -> None:
        self.metadata_table = metadata_table
        self.instants: dict[str, tuple[Instant, dict[str, Any]]] = {}  # path -> (instant, body)
        self.slices: dict[tuple[Any, int, str], dict[str, str]] = {}  # (fg, time, salt) -> entries
        self.slice_keys: dict[str, tuple[Any, int, str]] = {}  # store key -> its slice
        self.deleted: set[tuple[Any, int, str]] = set()  # committed-or-not slices whose file was deleted
        self.kv_log: dict[str, list[tuple[int, str, int]]] = {}  # key -> [(op, value, time)] in commit order

    def replaced(self) -> dict[Any, tuple[int, str]]:
        """The file groups replaced by a completed replacecommit on the store: fg -> (its instant time, salt);
        a group replaced twice keeps the later instant (``#resetFileGroupsReplaced``, lines 303-305)."""
        out: dict[Any, tuple[int, str]] = {}
        for inst, body in self.instants.values():
            if inst.state != "completed":
                continue
            for fg in body.get("replaced") or ():
                if fg not in out or inst.requested > out[fg][0]:
                    out[fg] = (inst.requested, inst.salt)
        return out

    def apply(self, e: Event, kind: str, parsed: Any) -> None:
        if kind == "deleted":
            # an instant file deleted (a rollback unpublishing a commit): readers no longer see it, while
            # the operation it committed stays in the commit log (a committed write that vanished)
            self.instants.pop(parsed, None)
            ident = self.slice_keys.pop(parsed, None)
            if ident is not None:
                self.slices.pop(ident, None)
                self.deleted.add(ident)
            return
        if kind == "slice":
            ident = (parsed["fg"], parsed["time"], parsed["salt"])
            self.slices[ident] = dict(parsed["entries"])
            self.slice_keys[e.value["key"]] = ident
            self.deleted.discard(ident)
            return
        body = instant_body(e.value["body"])
        if parsed.state == "completed" and body.get("replaced"):
            self._overwritten(parsed, body)
        self.instants[e.value["key"]] = (parsed, body)
        aux = body.get("aux")
        if parsed.state == "completed" and aux:
            op = {"delete": DELETE, "insert": INSERT}.get(aux["kind"], UPDATE)
            self.kv_log.setdefault(aux["key"], []).append((op, aux["value"] or "", parsed.requested))

    def _overwritten(self, inst: Instant, body: dict[str, Any]) -> None:
        """A replacecommit completes: each key of the groups it replaces that its own slice lacks is deleted
        at its instant time (an insert_overwrite's dropped rows; a clustering carries every row over)."""
        written = self.slices.get((body.get("fg"), inst.requested, inst.salt), {})
        before = self.latest()
        gone = sorted({k for fg in body["replaced"] for k in before.get(fg, {}) if k not in written})
        for key in gone:
            self.kv_log.setdefault(key, []).append((DELETE, "", inst.requested))

    def _visible(self, inst: Instant, body: dict[str, Any]) -> dict[str, str] | None:
        """The records a reader finds for a completed instant's slice (None: it sees no slice of it)."""
        ident = (body.get("fg"), inst.requested, inst.salt)
        if ident in self.slices:
            return self.slices[ident]
        if ident in self.deleted and self.metadata_table:
            return {}  # listed by the metadata table, unreadable
        return None

    def latest(self) -> dict[Any, dict[str, str]]:
        """What a reader of the newest snapshot sees: each file group's newest committed slice, replaced
        file groups left out."""
        newest: dict[Any, tuple[int, dict[str, str]]] = {}
        replaced = self.replaced()
        for inst, body in self.instants.values():
            if inst.state != "completed" or "fg" not in body or body["fg"] in replaced:
                continue
            entries = self._visible(inst, body)
            if entries is not None and (body["fg"] not in newest or inst.requested > newest[body["fg"]][0]):
                newest[body["fg"]] = (inst.requested, entries)
        return {fg: entries for fg, (_, entries) in newest.items()}

    def check(self) -> list[tuple[Any, tuple[str, str, str], str]]:
        """Every violation of the store as it stands, by read time, then key.

        Each as (ReadViolation, identity, description); the identity (kind, key, expected value) names
        the violation by values, since the indices of the encoding move as the store grows.
        """
        visible: dict[tuple[Any, int, str], dict[str, str]] = dict(self.slices)
        completed: list[tuple[Instant, Any]] = []
        replaced = self.replaced()
        for fg, (at, salt) in replaced.items():  # from its replacecommit on, the group reads as empty
            visible[(fg, at, salt)] = {}
        for inst, body in self.instants.values():
            if inst.state != "completed":
                continue
            fg = body.get("fg", 0)
            if fg in replaced and inst.requested > replaced[fg][0]:
                continue  # a slice committed to a group already replaced: hidden from every reader
            entries = self._visible(inst, body) if "fg" in body else None
            if entries is None:
                continue  # no slice a reader sees (the "times" workload, a deleted file on storage listing)
            visible[(fg, inst.requested, inst.salt)] = entries
            completed.append((inst, fg))
        times = sorted({inst.requested for inst, _ in self.instants.values()})
        rank = {t: i + 1 for i, t in enumerate(times)}
        salts = sorted({inst.salt for inst, _ in self.instants.values()} | {s for _, _, s in visible})
        srank = {s: i for i, s in enumerate(salts)}
        keys = sorted(set(self.kv_log) | {k for es in visible.values() for k in es})
        groups = sorted({fg for fg, _, _ in visible} | {fg for _, fg in completed}, key=_fg_order)
        gidx = {fg: i + 1 for i, fg in enumerate(groups)}
        values = sorted(
            {v for es in visible.values() for v in es.values()}
            | {v for log in self.kv_log.values() for _, v, _ in log}
        )
        vidx = {v: i for i, v in enumerate(values)}
        timeline = [(rank[inst.requested], COMPLETED, srank[inst.salt], gidx[fg]) for inst, fg in completed]
        timeline += [(rank[at], COMPLETED, srank[salt], gidx[fg]) for fg, (at, salt) in replaced.items()]
        timeline += [
            (rank[inst.requested], _STATE_CODE[inst.state], srank[inst.salt], 0)
            for inst, _ in self.instants.values() if inst.state != "completed"
        ]
        files = tuple(
            tuple(
                sorted(
                    (rank.get(t, 0), srank[s], *(vidx[es[k]] + 1 if k in es else 0 for k in keys))
                    for (g, t, s), es in visible.items()
                    if g == fg
                )
            )
            for fg in groups
        )
        kv = tuple(
            tuple((op, vidx[v] if v else 0, rank[t]) for op, v, t in self.kv_log.get(k, ())) for k in keys
        )
        described = []
        for bad in consistent_read_violations(tuple(sorted(timeline)), files, kv):
            exp = "nothing" if bad.expected is None else values[bad.expected]
            got = ", ".join(f"{values[v]} in {_fg_name(groups[fg - 1])}" for fg, v in bad.found) or "nothing"
            identity = (bad.kind, keys[bad.key], exp)
            described.append((bad, identity, (
                f"read of {keys[bad.key]} at {format_instant(times[bad.ts - 1])} should return {exp} "
                f"but returns {got} ({bad.kind})"
            )))
        return described


def check_consistent_read_history(events: Sequence[Event], base: str, layout: str,
                                  metadata_table: bool = False) -> list[Violation]:
    """ConsistentRead after every table write (and every file a writer deleted).

    Each violation (kind, key, expected value) is reported once, at the write that showed it first, for
    the earliest read that sees it: a lost value stays lost for every later read and after every later
    write, and each lost value is its own violation.
    """
    replay = _Replay(metadata_table)
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


def check_duplicate_keys(events: Sequence[Event], base: str, layout: str,
                         metadata_table: bool = False) -> list[Violation]:
    """No record key in the newest committed slices of two file groups (the table's primary key).

    Replayed after every table write; each key is reported once, at the write that first showed it.
    """
    replay = _Replay(metadata_table)
    found: list[Violation] = []
    reported: set[str] = set()
    where: dict[Any, int] = {}  # file group -> the index of the write that made its newest slice visible
    for e, kind, parsed in _table_writes(events, base, layout):
        replay.apply(e, kind, parsed)
        if kind != "instant" or parsed.state != "completed":
            continue
        body = replay.instants[e.value["key"]][1]
        if "fg" in body:
            where[body["fg"]] = e.index
        holders: dict[str, list[tuple[Any, str]]] = {}
        for fg, entries in replay.latest().items():
            for key, value in entries.items():
                holders.setdefault(key, []).append((fg, value))
        for key, held in sorted(holders.items()):
            if len(held) < 2 or key in reported:
                continue
            reported.add(key)
            held.sort(key=lambda h: _fg_order(h[0]))
            text = ", ".join(f"{v} in {_fg_name(fg)}" for fg, v in held)
            cause = tuple(sorted({where.get(fg, e.index) for fg, _ in held} | {e.index}))
            found.append(Violation("duplicate-key", f"key {key} is in the newest committed slices of "
                                   f"{len(held)} file groups: {text}", cause, {"key": key}))
    return found


def check_requested_order(events: Sequence[Event], base: str, layout: str) -> list[Violation]:
    """Requested instants reach the store in instant-time order (Hudi creates ``.requested`` in the lock
    hold that drew its time, so a later request has a later time while the lock and the clocks hold)."""
    found: list[Violation] = []
    seen: set[str] = set()
    best: tuple[Event, Instant] | None = None
    for e, kind, inst in _table_writes(events, base, layout):
        if kind != "instant" or inst.state != "requested" or e.value["key"] in seen:
            continue
        seen.add(e.value["key"])
        if best is not None and inst.requested <= best[1].requested:
            found.append(Violation(
                "requested-out-of-order",
                f"{inst.file_name(layout)} (by {e.node}) reached the store after {best[1].file_name(layout)} "
                f"(by {best[0].node}) with an instant time not later",
                (best[0].index, e.index),
                {"instant": inst.id, "after": best[1].id},
            ))
        if best is None or inst.requested > best[1].requested:
            best = (e, inst)
    return found


def check_timeline_history(
    events: Sequence[Event], base: str, layout: str, checkers: Sequence[str] = TIMELINE_CHECKERS,
    metadata_table: bool = False,
) -> Verdict:
    """Every timeline checker; the violations of ``checkers`` decide, the others are findings.

    ``metadata_table``: how readers list files (see :class:`_Replay`)."""
    by_checker = {
        "unique-times": check_unique_times(events),
        "monotonic-times": check_monotonic_times(events),
        "completed-immutable": check_completed_immutable(events, base, layout),
        "completion-order": check_completion_order(events, base, layout),
        "consistent-read": check_consistent_read_history(events, base, layout, metadata_table),
        "duplicate-key": check_duplicate_keys(events, base, layout, metadata_table),
        "requested-order": check_requested_order(events, base, layout),
    }
    violations: list[Violation] = []
    findings: list[Violation] = []
    for name, found in by_checker.items():
        (violations if name in checkers else findings).extend(found)
    return Verdict(tuple(violations), tuple(findings))
