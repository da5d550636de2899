"""Instants and time generations derived from a history, shared by the OCC and NBCC reports.

Pure functions over ``model.runtime.history.Event``: the store's ``object`` events name every timeline
file written (``<instant>.<action>.requested``, ``.inflight``, ``<instant>_<completion>.<action>``)
and, for the copy-on-write workload, carry the completed instant's body; the writers' ``time``
events record each generation of an instant or completion time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from model.timeline.commits import instant_body
from model.timeline.layout import format_instant, instant_to_ms, parse_instant_path
from reports.document import Clock, cell_text
from reports.interactive import Item


@dataclass(frozen=True)
class InstantSpan:
    """One instant as the store saw it: who wrote it, when (true ms) each state file appeared, and what
    the completed instant recorded (file group, merge base, the operation)."""

    writer: str
    instant: int
    action: str
    requested_at: int
    completed_at: int | None  # true time its completed file was written; None: never completed
    completion: int | None  # its completion time (v8 file name)
    fg: int | None
    merge: int | None  # the instant whose slice it merged (None: none)
    op: dict[str, Any] | None  # {key, kind, value}
    events: tuple[int, ...]  # the store events of its state files

    @property
    def completed(self) -> bool:
        return self.completed_at is not None


@dataclass(frozen=True)
class Generation:
    """One time generation: from its invoke to its return (true ms), and the time it returned."""

    writer: str
    kind: str  # instant or completion
    start: int
    end: int
    time: int  # epoch ms
    instant: str
    events: tuple[int, int]


def fmt_instant(instant: int | None) -> str:
    """An instant as a report shows it: ``t<ms since the run's start>`` (:func:`rel_ms`), Hudi's 17 digits
    when it is no date (the specification's instants are counters), ``-`` for none."""
    if instant is None:
        return "-"
    shown = rel_ms(instant)
    return shown if shown.startswith("t") else format_instant(instant)


def span_item(s: InstantSpan, lane: str, kind: str, label: str, details: Sequence[tuple[str, object]],
              cited: Sequence[Mapping[str, Any]], end: int, ident_prefix: str) -> Item:
    """One instant as an interactive timeline item, from its request to its completion (``end`` when it
    never completed), with the hover details every instant timeline shows: the instant's own, the
    report's ``details``, the violations that cite it and its events."""
    fields: list[tuple[str, object]] = [
        ("instant", fmt_instant(s.instant)),
        ("action", s.action),
        ("writer", s.writer),
        ("state", "completed" if s.completed else "never completed"),
        ("requested at", f"{s.requested_at} ms since start"),
        ("completed at", f"{s.completed_at} ms since start" if s.completed else "-"),
        ("completion time", fmt_instant(s.completion)),
        *details,
        *[("violation", f"{v['kind']}: {v['message']}") for v in cited],
        ("events", ", ".join(map(str, s.events))),
    ]
    return Item(
        lane,
        s.requested_at,
        end if s.completed_at is None else s.completed_at,
        kind,
        label,
        tuple(fields),
        dashed=not s.completed,
        ident=f"{ident_prefix}-i{format_instant(s.instant)}",
    )


def op_text(op: dict[str, Any] | None) -> str:
    """An operation recorded in a commit: ``upsert k1=w1.2``, ``delete k2``."""
    if not op:
        return ""
    value = op.get("value")
    return f"{op.get('kind')} {op.get('key')}" + ("" if value is None else f"={value}")


def rel_ms(instant: int) -> str:
    """An instant as ms since the run's start on its writer's clock (``t<ms>``, ``reports/times.py``), or
    its digits when it is no date."""
    try:
        return cell_text(Clock(instant_to_ms(instant) - EPOCH_MS))
    except ValueError:
        return str(instant)


def instant_spans(events: Sequence[Event], base: str, layout: str) -> list[InstantSpan]:
    """Every instant written to the store's timeline, in order of its requested file."""
    first: dict[int, dict[str, Any]] = {}
    for e in events:
        if e.process != "store" or e.f != "object" or not isinstance(e.value, dict) or "key" not in e.value:
            continue
        inst = parse_instant_path(e.value["key"], base, layout)
        if inst is None:
            continue
        rec = first.setdefault(
            inst.requested,
            {"writer": e.node, "action": inst.requested_action, "requested_at": e.time, "events": []},
        )
        rec["events"].append(e.index)
        if inst.is_completed and "completed_at" not in rec:
            rec["completed_at"], rec["completion"] = e.time, inst.completed
            body = instant_body(e.value["body"]) if "body" in e.value else {}
            rec["fg"], rec["op"] = body.get("fg"), body.get("aux")
            rec["merge"] = int(body["merge"]) if body.get("merge") else None
    return [
        InstantSpan(
            r["writer"],
            i,
            r["action"],
            r["requested_at"],
            r.get("completed_at"),
            r.get("completion"),
            r.get("fg"),
            r.get("merge"),
            r.get("op"),
            tuple(r["events"]),
        )
        for i, r in sorted(first.items(), key=lambda kv: (kv[1]["requested_at"], kv[0]))
    ]


def generations(events: Sequence[Event]) -> list[Generation]:
    """The writers' time generations that returned (``time`` invoke -> ok), in order of return."""
    open_: dict[str, Event] = {}
    out = []
    for e in events:
        if e.f != "time":
            continue
        if e.type == "invoke":
            open_[e.process] = e
        elif e.process in open_:
            inv = open_.pop(e.process)
            if e.type == "ok" and isinstance(e.value, dict):
                out.append(
                    Generation(
                        e.process,
                        str(e.value.get("kind", "")),
                        inv.time,
                        e.time,
                        int(e.value["time"]),
                        str(e.value.get("instant", "")),
                        (inv.index, e.index),
                    )
                )
    return out
