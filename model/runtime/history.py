"""Histories: Jepsen-style events, serialised as JSON Lines.

An event has a process, a type (``invoke``, ``ok``, ``fail``, ``info`` — info
means the outcome is unknown, or a fact observed), an operation ``f``, a
value, the true time and the node's own clock reading.  Histories can be
checked again later without rerunning anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, is_dataclass
from typing import Any, NamedTuple

EVENT_TYPES = ("invoke", "ok", "fail", "info")
_new_tuple = tuple.__new__


def _dataclass_as_dict(obj: Any) -> Any:
    """A dataclass inside an event's value is written as its fields (as ``dataclasses.asdict`` does)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    raise TypeError(f"history value {obj!r} is not JSON serialisable")


# one encoder for every line (json.dumps with options builds a new one per call)
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_dataclass_as_dict)


class Event(NamedTuple):
    """One history event.  ``time`` is true time (ms since the run started); ``clock`` the node's reading.

    A named tuple: immutable, and the cheapest record Python makes (a run records one for every step of
    every task; a frozen dataclass took twice as long to make, and a tuple of plain values costs the
    garbage collector nothing after its first pass).
    """

    index: int  # type: ignore[assignment]  # the field hides tuple.index (events are never searched)
    time: int
    node: str
    process: str
    type: str
    f: str
    value: Any = None
    clock: int | None = None

    def to_json(self) -> str:
        """One JSON line, keys in a fixed order, so equal histories give equal bytes."""
        return _ENCODER.encode({"index": self.index, "time": self.time, "node": self.node,
                                "process": self.process, "type": self.type, "f": self.f,
                                "value": self.value, "clock": self.clock})

    @classmethod
    def make(cls, index: int, time: int, node: str, process: str, type_: str, f: str, value: Any,
             clock: int | None) -> Event:
        """``Event(...)`` for the kernel's hot path, without the named tuple's ``__new__`` in Python."""
        return _new_tuple(cls, (index, time, node, process, type_, f, value, clock))

    @staticmethod
    def from_dict(raw: dict[str, Any], line: int = 0) -> Event:
        """Build an event from a parsed JSON object; ValueError names the line and the field."""
        for name, kind in (
            ("index", int),
            ("time", int),
            ("node", str),
            ("process", str),
            ("type", str),
            ("f", str),
        ):
            if not isinstance(raw.get(name), kind):
                raise ValueError(
                    f"history line {line}: field {name} = {raw.get(name)!r} is not {kind.__name__}"
                )
        if raw["type"] not in EVENT_TYPES:
            raise ValueError(f"history line {line}: field type = {raw['type']!r} is not one of {EVENT_TYPES}")
        return Event(
            raw["index"],
            raw["time"],
            raw["node"],
            raw["process"],
            raw["type"],
            raw["f"],
            raw.get("value"),
            raw.get("clock"),
        )


def dumps(events: Iterable[Event]) -> str:
    """Serialise events as JSON Lines."""
    return "".join(e.to_json() + "\n" for e in events)


def loads(text: str) -> list[Event]:
    """Parse JSON Lines; a truncated last line (a crashed writer) is ignored, other bad lines raise."""
    events: list[Event] = []
    lines = text.split("\n")
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as e:
            if n == len(lines) and not text.endswith("\n"):
                break  # the run died while writing this line: keep what came before
            raise ValueError(f"history line {n}: not JSON: {line[:80]!r}") from e
        if not isinstance(raw, dict):
            raise ValueError(f"history line {n}: not an object: {line[:80]!r}")
        events.append(Event.from_dict(raw, n))
    return events
