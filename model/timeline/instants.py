"""Instants as files on the store, as sans-I/O steps: write one, list the timeline, read what readers see.

Names, layouts and the :class:`~model.timeline.layout.Instant` class are in
:mod:`model.timeline.layout`; instant bodies are Hudi's commit metadata
(:mod:`model.timeline.metadata`).  Readers see only completed instants.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

from model.runtime.effects import CreateIfAbsent, Effect, ListPrefix, Put, Read, StoreResult
from model.timeline.layout import Instant, instant_path, parse_instant_path, timeline_dir
from model.timeline.metadata import decode_instant_metadata

Gen = Generator[Effect, Any, Any]


def completed_only(instants: Iterable[Instant]) -> list[Instant]:
    """What readers see: the completed instants, in instant-time order (snapshot isolation)."""
    return sorted(i for i in instants if i.is_completed)


def write_instant(base: str, layout: str, instant: Instant, body: bytes, put_if_absent: bool) -> Gen:
    """Write an instant file: create-if-absent (412 if it exists) or overwrite; returns StoreResult."""
    key = instant_path(base, layout, instant)
    result: StoreResult = yield (CreateIfAbsent(key, body) if put_if_absent else Put(key, body))
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
    """A reader's view: completed instants with their decoded metadata, ``[(instant, metadata)]``.

    In instant-time order.  Returns None when the listing or a read failed (the caller cannot
    tell what is on the timeline).
    """
    listed = yield from list_instants(base, layout)
    if listed is None:
        return None
    out: list[tuple[Instant, dict[str, Any]]] = []
    _over = completed_only(listed)
    for _at, inst in enumerate(_over):  # the loop's position
        key = instant_path(base, layout, inst)
        got: StoreResult = yield Read(key)
        if not got.ok or got.body is None:
            return None
        out.append((inst, decode_instant_metadata(got.body, key)))
    return out
