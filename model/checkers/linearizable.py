"""Linearizability checker for one register written with conditional writes.

A pure Wing-Gong search (as in Knossos and Porcupine) over a recorded history of
one object.  The register holds a value or ``None`` (absent).  Operations:

- ``cas(expected, new)``: conditional write.  ``expected is None`` is a
  create-if-absent (S3 ``If-None-Match: *``, GCS ``ifGenerationMatch=0``);
  otherwise a replace-if-match, with the version tag already resolved by the
  caller to the value that tag names.  ``ok`` means it took effect; ``fail``
  means the service answered that the condition was false (412), which is a
  claim about the state at some instant of the call and is checked too;
  ``info`` means unknown (it may take effect at any time after its invoke, or
  never).
- ``write(new)``: unconditional write.
- ``read()``: ``ok`` with the value read (``None`` for not found).

Real-time order: an operation that completed before another was invoked must
be linearized first.  A history is accepted when every ``ok`` and ``fail``
operation can be placed at one instant inside its interval so that the
register's sequential semantics hold.

Read-only steps (reads and failed conditional writes) that are consistent with
the current state are placed greedily as soon as they may be: placing such a
step early never removes a linearization, and it keeps the search small for the
typical race (one winner, many 412s).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"


@dataclass(frozen=True)
class Event:
    """One history event (Jepsen style) of a register operation.

    ``f`` is ``cas``, ``write`` or ``read``.  For an invoke, ``value`` is the
    argument: ``(expected, new)`` for cas, ``new`` for write, ``None`` for read.
    For an ok read, ``value`` is the value read.  ``time`` is true time
    (any monotonic unit); events of one process alternate invoke/completion.
    """

    process: Any
    type: str
    f: str
    value: Any
    time: float


@dataclass(frozen=True)
class Operation:
    """A call paired from its invoke and completion events."""

    index: int
    process: Any
    f: str
    arg: Any
    status: str  # ok, fail or info
    result: Any
    call: float
    ret: float  # math.inf for info

    def describe(self) -> str:
        """Short human-readable form, e.g. ``p3 cas(None->'a') ok [1.0, 2.0]``."""
        if self.f == "cas":
            expected, new = self.arg
            what = f"cas({expected!r}->{new!r})"
        elif self.f == "write":
            what = f"write({self.arg!r})"
        else:
            what = f"read()={self.result!r}" if self.status == OK else "read()"
        end = "..." if math.isinf(self.ret) else f"{self.ret:g}"
        return f"{self.process} {what} {self.status} [{self.call:g}, {end}]"


@dataclass(frozen=True)
class Verdict:
    """Result of a check: ``valid``, and for an invalid history the smallest
    set of operations found that is still not linearizable (``counterexample``)."""

    valid: bool
    operations: int
    counterexample: tuple[Operation, ...] = field(default=())
    linearization: tuple[Operation, ...] = field(default=())

    def explain(self) -> str:
        """One line for a report."""
        if self.valid:
            return f"linearizable ({self.operations} operations)"
        ops = "; ".join(op.describe() for op in self.counterexample)
        return f"NOT linearizable; smallest non-linearizable subset: {ops}"


def pair(events: Iterable[Event]) -> list[Operation]:
    """Pair invoke events with their completions.  An invoke with no
    completion, or completed by ``info``, becomes an ``info`` operation."""
    pending: dict[Any, tuple[int, Event]] = {}
    ops: list[Operation] = []
    order = 0
    for ev in sorted(events, key=lambda e: e.time):
        if ev.type == INVOKE:
            if ev.process in pending:
                raise ValueError(f"process {ev.process!r} invoked twice without completion")
            pending[ev.process] = (order, ev)
            order += 1
            continue
        if ev.type not in (OK, FAIL, INFO):
            raise ValueError(f"unknown event type {ev.type!r}")
        if ev.process not in pending:
            raise ValueError(f"completion without invoke for process {ev.process!r}")
        idx, inv = pending.pop(ev.process)
        ret = math.inf if ev.type == INFO else ev.time
        ops.append(Operation(idx, inv.process, inv.f, inv.value, ev.type, ev.value, inv.time, ret))
    for idx, inv in pending.values():
        ops.append(Operation(idx, inv.process, inv.f, inv.value, INFO, None, inv.time, math.inf))
    ops.sort(key=lambda o: o.index)
    return ops


def _step(op: Operation, state: Any) -> tuple[bool, Any]:
    """Apply ``op`` to ``state``: (legal, new state)."""
    if op.f == "read":
        return (op.status != OK or op.result == state), state
    if op.f == "write":
        return True, op.arg
    if op.f == "cas":
        expected, new = op.arg
        if op.status == FAIL:
            return state != expected, state
        return state == expected, (new if state == expected else state)
    raise ValueError(f"unknown operation {op.f!r}")


def _read_only(op: Operation) -> bool:
    return op.f == "read" or op.status == FAIL


def _search(ops: Sequence[Operation], initial: Any, budget: int) -> tuple[bool | None, tuple[int, ...]]:
    """DFS over linearizations.  Returns (valid, order); None when the budget ran out."""
    n = len(ops)
    required = 0
    for i, op in enumerate(ops):
        if op.status != INFO:
            required |= 1 << i
    seen: set[tuple[int, Any]] = set()
    steps = 0

    def candidates(done: int) -> list[int]:
        # op i may go next if no other open op returned before i was invoked
        open_ops = [i for i in range(n) if not done >> i & 1]
        if not open_ops:
            return []
        min_ret = min(ops[i].ret for i in open_ops)
        return [i for i in open_ops if ops[i].call <= min_ret]

    def absorb(done: int, state: Any, order: list[int]) -> int:
        # greedily place consistent read-only candidates
        changed = True
        while changed:
            changed = False
            for i in candidates(done):
                op = ops[i]
                if _read_only(op) and op.status != INFO and _step(op, state)[0]:
                    done |= 1 << i
                    order.append(i)
                    changed = True
        return done

    def dfs(done: int, state: Any, order: list[int]) -> bool | None:
        nonlocal steps
        steps += 1
        if steps > budget:
            return None
        mark = len(order)
        done = absorb(done, state, order)
        if done & required == required:
            return True
        key = (done, state)
        if key in seen:
            del order[mark:]
            return False
        seen.add(key)
        for i in candidates(done):
            op = ops[i]
            legal, nxt = _step(op, state)
            if not legal:
                continue
            order.append(i)
            res = dfs(done | 1 << i, nxt, order)
            if res is None:
                return None
            if res:
                return True
            order.pop()
        del order[mark:]
        return False

    order: list[int] = []
    res = dfs(0, initial, order)
    return res, tuple(order)


def check_operations(ops: Sequence[Operation], initial: Any = None, budget: int = 200_000,
                     minimise: bool = True) -> Verdict:
    """Check paired operations; on failure shrink to a 1-minimal counterexample."""
    valid, order = _search(ops, initial, budget)
    if valid is None:
        raise RuntimeError(f"linearizability search gave up after {budget} steps ({len(ops)} operations)")
    if valid:
        return Verdict(True, len(ops), linearization=tuple(ops[i] for i in order))
    core = list(ops)
    if minimise:
        # drop reads first, so that the counterexample prefers the writes that conflict
        for drop_reads in (True, False):
            i = 0
            while i < len(core):
                if drop_reads and core[i].f != "read":
                    i += 1
                    continue
                trial = core[:i] + core[i + 1:]
                res, _ = _search(trial, initial, budget)
                if res is False:
                    core = trial
                else:
                    i += 1
    return Verdict(False, len(ops), counterexample=tuple(core))


def check(events: Iterable[Event], initial: Any = None, budget: int = 200_000) -> Verdict:
    """Check a history of register events for linearizability (see module doc)."""
    return check_operations(pair(events), initial, budget)
