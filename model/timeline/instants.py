"""Instants as files on the store: ``(time, action, state)`` moving requested -> inflight -> completed.

Two layouts, as Hudi writes them:

- ``v6`` (table versions 6 and below), in ``<base>/.hoodie/``: ``<ts>.<action>.requested``,
  ``<ts>.<action>.inflight`` and the completed ``<ts>.<action>``;
- ``v8`` (table version 8+), in ``<base>/.hoodie/timeline/``: the same pending files and the
  completed ``<ts>_<completion>.<action>``.

Instant times are Hudi's 17-digit ``yyyyMMddHHmmssSSS`` strings (UTC here); in the
model a time is an int of epoch milliseconds and is formatted only in names.  With
a salt (the TLA+ specification's unique suffix, not a Hudi feature) the id in a
name is ``<ts>-<salt>``.  Readers see only completed instants.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import Any

from model.effects import CreateIfAbsent, Effect, ListPrefix, Put, Read, StoreResult

Gen = Generator[Effect, Any, Any]

ACTIONS = ("commit", "deltacommit", "compaction", "replacecommit", "clean", "rollback")
STATES = ("requested", "inflight", "completed")
LAYOUTS = ("v6", "v8")

_ID = r"(?P<ts>\d{17})(?:-(?P<salt>[0-9a-z]+))?"
_ACTION = r"(?P<action>" + "|".join(ACTIONS) + ")"
_PENDING_RE = re.compile(rf"{_ID}\.{_ACTION}\.(?P<state>requested|inflight)")
_DONE_V6_RE = re.compile(rf"{_ID}\.{_ACTION}")
_DONE_V8_RE = re.compile(rf"{_ID}_(?P<done>\d{{17}})\.{_ACTION}")


def format_time(ms: int) -> str:
    """Epoch milliseconds as Hudi's instant time ``yyyyMMddHHmmssSSS`` (UTC)."""
    if ms < 0:
        raise ValueError(f"instant time before the epoch: {ms}")
    secs, milli = divmod(ms, 1000)
    stamp = dt.datetime.fromtimestamp(secs, dt.UTC)
    return stamp.strftime("%Y%m%d%H%M%S") + f"{milli:03d}"


def parse_time(text: str) -> int:
    """Hudi's ``yyyyMMddHHmmssSSS`` (UTC) back to epoch milliseconds; ValueError names the text."""
    if not re.fullmatch(r"\d{17}", text):
        raise ValueError(f"not a 17-digit instant time: {text!r}")
    stamp = dt.datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(stamp.timestamp()) * 1000 + int(text[14:])


@dataclass(frozen=True, order=True)
class Instant:
    """One instant file: ``time`` and ``completion`` are epoch ms; ``completion`` only for completed v8."""

    time: int
    salt: str
    action: str
    state: str
    completion: int | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"instant action {self.action!r} is not one of {', '.join(ACTIONS)}")
        if self.state not in STATES:
            raise ValueError(f"instant state {self.state!r} is not one of {', '.join(STATES)}")

    @property
    def id(self) -> str:
        """The id in file names: the instant time, with ``-salt`` when salted."""
        ts = format_time(self.time)
        return f"{ts}-{self.salt}" if self.salt else ts

    @property
    def key(self) -> tuple[int, str]:
        """Identity of the action across its states."""
        return (self.time, self.salt)

    def file_name(self, layout: str) -> str:
        """The file name of this instant in ``layout``."""
        if self.state != "completed":
            return f"{self.id}.{self.action}.{self.state}"
        if layout == "v6":
            return f"{self.id}.{self.action}"
        if self.completion is None:
            raise ValueError(f"a completed v8 instant needs a completion time: {self.id}.{self.action}")
        return f"{self.id}_{format_time(self.completion)}.{self.action}"


def timeline_dir(base: str, layout: str) -> str:
    """The folder (with trailing slash) holding the instant files of ``layout``."""
    if layout not in LAYOUTS:
        raise ValueError(f"timeline layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    return f"{base}/.hoodie/" if layout == "v6" else f"{base}/.hoodie/timeline/"


def instant_path(base: str, layout: str, instant: Instant) -> str:
    """The store key of an instant file."""
    return timeline_dir(base, layout) + instant.file_name(layout)


def parse_instant_name(name: str, layout: str) -> Instant | None:
    """An instant from a file name of ``layout``; None for any other file (locks, properties, ...)."""
    if m := _PENDING_RE.fullmatch(name):
        return Instant(parse_time(m["ts"]), m["salt"] or "", m["action"], m["state"])
    if layout == "v8" and (m := _DONE_V8_RE.fullmatch(name)):
        return Instant(parse_time(m["ts"]), m["salt"] or "", m["action"], "completed", parse_time(m["done"]))
    if layout == "v6" and (m := _DONE_V6_RE.fullmatch(name)):
        return Instant(parse_time(m["ts"]), m["salt"] or "", m["action"], "completed")
    return None


def parse_instant_path(path: str, base: str, layout: str) -> Instant | None:
    """An instant from a store key, when the key is directly inside the timeline folder of ``layout``."""
    folder = timeline_dir(base, layout)
    if not path.startswith(folder) or "/" in path[len(folder) :]:
        return None
    return parse_instant_name(path[len(folder) :], layout)


def completed_only(instants: Iterable[Instant]) -> list[Instant]:
    """What readers see: the completed instants, in instant-time order (snapshot isolation)."""
    return sorted(i for i in instants if i.state == "completed")


# ---- sans-I/O steps ------------------------------------------------------------------------


def write_instant(base: str, layout: str, instant: Instant, body: dict[str, Any], put_if_absent: bool) -> Gen:
    """Write an instant file: create-if-absent (412 if it exists) or overwrite; returns StoreResult."""
    data = json.dumps(body, sort_keys=True).encode()
    key = instant_path(base, layout, instant)
    result: StoreResult = yield (CreateIfAbsent(key, data) if put_if_absent else Put(key, data))
    return result


def list_instants(base: str, layout: str) -> Gen:
    """List the timeline folder; returns every instant file (all states), or None if the listing failed."""
    folder = timeline_dir(base, layout)
    result: StoreResult = yield ListPrefix(folder)
    if not result.ok or result.body is None:
        return None
    found = (parse_instant_path(k, base, layout) for k in result.body.decode().split("\n") if k)
    return sorted(i for i in found if i is not None)


def read_completed(base: str, layout: str) -> Gen:
    """A reader's view: completed instants with their metadata, ``[(instant, body)]`` in time order.

    Returns None when the listing or a read failed (the caller cannot tell what is on the timeline).
    """
    listed = yield from list_instants(base, layout)
    if listed is None:
        return None
    out: list[tuple[Instant, dict[str, Any]]] = []
    for inst in completed_only(listed):
        got: StoreResult = yield Read(instant_path(base, layout, inst))
        if not got.ok or got.body is None:
            return None
        out.append((inst, json.loads(got.body)))
    return out
