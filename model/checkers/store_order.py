"""Store events in the order the store applied them, where each write's version chain says so.

A simulated store records a write when it applies it, so its history is already in apply order.
A real-world run records a successful write when the client's reply arrives (``"observed":
"client"``), and replies can arrive out of order: a release applied before another writer's
acquisition may be replied to after it.  A conditional write there also records ``replaces``,
the version (ETag / generation) its precondition named (``None`` for a create), next to the
``version`` it produced.  Such a write was applied before the write that replaced its version,
so :func:`by_version_chain` moves it to just before that successor.  Events without
``replaces`` (every simulated event; unconditional writes) keep their places, and a version
seen twice on one object (two bodies with the same ETag) links nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from model.runtime.history import Event


def _object(e: Event) -> tuple[str, object]:
    """Which object a store event is of: the lock file and the register are one each, else the key."""
    return e.f, e.value.get("key") if isinstance(e.value, dict) else None


def _chained(e: Event) -> bool:
    return (e.process == "store" and isinstance(e.value, dict) and "replaces" in e.value
            and e.value.get("version") is not None)


def by_version_chain(events: Sequence[Event]) -> list[Event]:
    """``events`` with each chained store event moved to just before the event that replaced it.

    The result is ``events`` itself (same order) when no event records ``replaces``.
    """
    # the process first: most events are not the store's (the explorer judges a history at every decision)
    chained = [e for e in events if e.process == "store" and _chained(e)]
    if not chained:
        return list(events)
    seen = Counter((_object(e), e.value["version"]) for e in chained)
    by_version = {(_object(e), e.value["version"]): e for e in chained
                  if seen[(_object(e), e.value["version"])] == 1}
    pred: dict[int, Event] = {}  # event index -> the event whose version it replaced
    replaced = Counter((_object(e), e.value["replaces"]) for e in chained if e.value["replaces"] is not None)
    for e in chained:
        prev = e.value["replaces"]
        key = (_object(e), prev)
        if prev is not None and replaced[key] == 1 and key in by_version and by_version[key] is not e:
            pred[e.index] = by_version[key]
    out: list[Event] = []
    emitted: set[int] = set()
    for e in events:
        chain: list[Event] = []
        x: Event | None = e
        while x is not None and x.index not in emitted:
            emitted.add(x.index)
            chain.append(x)
            x = pred.get(x.index)
        out.extend(reversed(chain))
    return out
