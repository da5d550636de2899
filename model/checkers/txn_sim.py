"""A tiny multi-version store that runs random transactions under a known isolation level, for
tests and benchmarks of the transactional checker.

Processes run transactions concurrently, one step at a time in a seeded random interleaving (a
step: begin, one micro-op, commit).  The store keeps every committed version of every key with
its commit timestamp.  Isolation levels:

- ``serializable``: a transaction runs whole at its commit step (reads and writes at one
  instant, between its invoke and its completion): strict serializable;
- ``snapshot-isolation``: reads see the snapshot taken at begin (plus the transaction's own
  writes); writes are buffered and installed at commit unless another transaction committed a
  write to the same key after the snapshot (first committer wins; the loser fails);
- ``read-committed``: each read sees the latest committed version at that step; a write takes
  the key's write lock (a transaction that finds it taken by another fails: no-wait locking),
  builds on the latest committed version and is installed at commit (lost updates, write skew,
  non-repeatable reads, ...);
- ``read-uncommitted``: as read committed (write locks), but writes are installed at once (the
  latest write, committed or not, is read) and an aborted transaction's writes stay.

``abort`` is the chance a transaction aborts by itself (its completion ``fail``; under read
uncommitted its writes may still be seen); ``lost_reply`` the chance that a committed
transaction's completion is ``info``.  The output is a list of JSON-able events in the format of
docs/check-history.md.  Deterministic: the same arguments give the same history.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

LEVELS = ("serializable", "snapshot-isolation", "read-committed", "read-uncommitted")


@dataclass
class _Active:
    txn: list[list[Any]]  # micro-ops: [f, k, v]
    pc: int
    snapshot: int
    local: dict[Any, Any]
    done: list[list[Any]]
    invoked: int


def simulate(n: int, *, kind: str = "list-append", level: str = "serializable", keys: int = 10,
             processes: int = 5, max_len: int = 4, seed: int = 0, abort: float = 0.0,
             lost_reply: float = 0.0, write_ratio: float = 0.5, lag: int = 0) -> list[dict[str, Any]]:
    """``n`` transactions of ``kind`` (``list-append`` or ``rw-register``) run under ``level``
    over ``keys`` keys by ``processes`` processes; returns the history's events.  ``lag``: under
    snapshot isolation, a snapshot is taken up to that many commits in the past (a lagging
    replica: still snapshot isolation, no longer strong snapshot isolation)."""
    if level not in LEVELS:
        raise ValueError(f"unknown isolation level {level!r} (known: {', '.join(LEVELS)})")
    rng = random.Random(seed)
    write_f = "append" if kind == "list-append" else "w"
    versions: dict[int, list[tuple[int, Any]]] = {}  # key -> [(commit ts, state)]
    clock = 0
    events: list[dict[str, Any]] = []
    active: dict[int, _Active] = {}
    next_value: dict[int, int] = {}
    started = 0
    time = 0
    locks: dict[int, int] = {}  # key -> process holding its write lock (read committed)

    def latest(k: int, at: int | None = None) -> Any:
        vs = versions.get(k, [])
        for ts, state in reversed(vs):
            if at is None or ts <= at:
                return state
        return () if kind == "list-append" else None

    def apply(state: Any, v: Any) -> Any:
        return (*state, v) if kind == "list-append" else v

    def new_txn() -> list[list[Any]]:
        mops = []
        for _ in range(rng.randint(1, max_len)):
            k = rng.randrange(keys)
            if rng.random() < write_ratio:
                next_value[k] = next_value.get(k, 0) + 1
                mops.append([write_f, k, next_value[k]])
            else:
                mops.append(["r", k, None])
        return mops

    def out(v: Any) -> Any:
        return list(v) if isinstance(v, tuple) else v

    def read(a: _Active, k: int) -> Any:
        if k in a.local:
            return a.local[k]
        if level == "snapshot-isolation":
            return latest(k, a.snapshot)
        return latest(k)

    def commit(a: _Active) -> bool:
        nonlocal clock
        if level == "snapshot-isolation":
            for k in a.local:
                if any(ts > a.snapshot for ts, _ in versions.get(k, [])):
                    return False
        clock += 1
        if level == "read-uncommitted":
            return True
        for k in sorted(a.local):
            versions.setdefault(k, []).append((clock, a.local[k]))
        return True

    def release(p: int) -> None:
        for k in [k for k, holder in locks.items() if holder == p]:
            del locks[k]

    while started < n or active:
        p = rng.randrange(processes)
        time += 1
        a = active.get(p)
        if a is None:
            if started >= n:
                continue
            started += 1
            txn = new_txn()
            events.append({"process": p, "type": "invoke", "value": [list(m) for m in txn], "time": time})
            active[p] = _Active(txn, 0, max(0, clock - rng.randint(0, lag)) if lag else clock, {}, [], time)
            continue
        aborted = False
        if a.pc < len(a.txn) and level != "serializable":
            f, k, v = a.txn[a.pc]
            a.pc += 1
            if f == "r":
                a.done.append(["r", k, out(read(a, k))])
                continue
            aborted = level in ("read-committed", "read-uncommitted") and locks.setdefault(k, p) != p
            if not aborted:
                state = apply(read(a, k), v)
                a.local[k] = state
                a.done.append([f, k, v])
                if level == "read-uncommitted":
                    clock += 1
                    versions.setdefault(k, []).append((clock, state))
                continue
        if level == "serializable":
            for f, k, v in a.txn:
                if f == "r":
                    a.done.append(["r", k, out(read(a, k))])
                else:
                    a.local[k] = apply(read(a, k), v)
                    a.done.append([f, k, v])
        del active[p]
        ok = not aborted and rng.random() >= abort and commit(a)
        release(p)
        if not ok:
            events.append({"process": p, "type": "fail", "value": [list(m) for m in a.txn], "time": time})
            continue
        if rng.random() < lost_reply:
            events.append({"process": p, "type": "info", "value": [list(m) for m in a.txn], "time": time})
            continue
        events.append({"process": p, "type": "ok", "value": a.done, "time": time})
    return events
