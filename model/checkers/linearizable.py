"""Linearizability checking of recorded histories, with counterexamples a person can read.

A history (Jepsen style: ``invoke`` then ``ok``/``fail``/``info`` per process) is paired into
:class:`Operation` s and checked against a model (:mod:`model.checkers.lin_models`: the
register with conditional writes by default, or the key-value model) by the Wing-Gong-Lowe
search of :mod:`model.checkers.lin_search`, one independent sub-history (partition) at a time.

Real-time order: an operation that completed before another was invoked is linearized first.
The history is accepted when every operation can be placed at one instant inside its interval
so that the model's sequential semantics hold (``info`` operations: at any instant after their
invoke, or never).

The result is ``ok``, ``illegal`` or ``unknown`` (the time limit passed: a result, never an
exception).  For an illegal sub-history the counterexample is the longest linearizable prefix
the search found, the state it leaves, and the operations that may come next but cannot, each
with the reason, e.g. ``after write(2) by p3 and cas(2->5) by p1, read()=1 by p4 cannot be
placed: the register holds 5``.  It costs no second search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.lin_models import (
    FAIL,
    INFO,
    INVOKE,
    OK,
    KVModel,
    Model,
    NondeterministicModel,
    Operation,
    PowersetModel,
    RegisterModel,
)
from model.checkers.lin_search import ILLEGAL, OK_RESULT, UNKNOWN, PartitionSearch

__all__ = ["INVOKE", "OK", "FAIL", "INFO", "OpEvent", "Operation", "LinVerdict", "PartitionResult", "Blocked",
           "pair", "check", "check_operations", "Model", "RegisterModel", "KVModel", "NondeterministicModel",
           "PowersetModel", "OK_RESULT", "ILLEGAL", "UNKNOWN", "describe_op", "who", "jsonable"]

_FIRST_SLICE_S = 0.01  # time slice of each undecided sub-history in the first round (doubling)
_MAX_UNKNOWN_EXPLORED = 12  # unknown operations whose effects a counterexample spells out
_MAX_STATES_EXPLORED = 20_000
_SHOWN_SETTERS = 2  # state-changing operations named before a blocked one
_SHOWN_BLOCKED = 3  # blocked operations named per reason in one line


@dataclass(frozen=True)
class OpEvent:
    """One invoke or completion of an operation, as the linearizability checker takes it (Jepsen
    style; a run's history line is ``model.runtime.history.Event``).

    ``f`` is ``cas``, ``write`` or ``read`` (register) or ``get``, ``put``, ``append`` (kv).  For
    an invoke, ``value`` is the argument: ``(expected, new)`` for cas, ``new`` for write, ``None``
    for read, ``(key, value)`` for kv (``value`` ``None`` for get).  For an ok read or get,
    ``value`` is the value read.  ``time`` is true time (any monotonic unit); events of one
    process alternate invoke/completion.
    """

    process: Any
    type: str
    f: str
    value: Any
    time: float


def pair(events: Iterable[OpEvent]) -> list[Operation]:
    """Pair invoke events with their completions (in time order).  An invoke with no completion,
    or completed by ``info``, becomes an ``info`` operation; ``ValueError`` for a completion
    without an invoke or an invoke while one is pending for the same process."""
    pending: dict[Any, tuple[int, OpEvent]] = {}
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


def who(process: Any) -> str:
    """A process as text: ``p3`` for the integer 3, else as given."""
    return f"p{process}" if isinstance(process, int) and not isinstance(process, bool) else str(process)


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``1 operation``, ``2 operations``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe_op(model: Model[Any], op: Operation) -> str:
    """``<operation> by <process>``, e.g. ``read()=1 by p4``."""
    return f"{model.describe_operation(op.input, op.output)} by {who(op.process)}"


@dataclass(frozen=True)
class Blocked:
    """An operation that may follow the longest prefix but cannot: ``reason`` says why."""

    op: Operation
    reason: str


@dataclass(frozen=True)
class PartitionResult:
    """The verdict on one independent sub-history.

    ``order`` is a full linearization (``ok``) or the longest linearizable prefix found;
    ``state`` describes the state after it; for ``illegal``, ``blocked`` are the operations
    that may come next and cannot, ``setters`` the prefix's operations that changed the state
    (the last of them made the state that blocks).
    """

    name: str
    result: str
    ops: tuple[Operation, ...]
    order: tuple[Operation, ...] = ()
    state: str = ""
    blocked: tuple[Blocked, ...] = ()
    setters: tuple[Operation, ...] = ()
    steps: int = 0

    def sentence(self, model: Model[Any]) -> str:
        """The counterexample in one sentence (empty unless illegal with a prefix found)."""
        if self.result != ILLEGAL or not self.blocked:
            return ""
        shown = [describe_op(model, op) for op in self.setters[-_SHOWN_SETTERS:]]
        if not shown:
            where = f"at the start ({self.state})" if self.order else "at the start"
            if self.order:
                where = f"after {count(len(self.order), 'operation')} that leave the state unchanged"
        else:
            more = len(self.setters) - len(shown)
            where = "after " + ("... " if more else "") + " and ".join(shown)
        by_reason: dict[str, list[str]] = {}
        for blk in self.blocked:
            by_reason.setdefault(blk.reason, []).append(describe_op(model, blk.op))
        parts = []
        for reason, names in by_reason.items():
            shown = names[:_SHOWN_BLOCKED] + ([f"{len(names) - _SHOWN_BLOCKED} more"]
                                             if len(names) > _SHOWN_BLOCKED else [])
            who_ = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
            parts.append(f"{who_} cannot be placed: {reason}")
        return f"{where}, " + "; ".join(parts)


@dataclass(frozen=True)
class LinVerdict:
    """Result of a check: ``result`` is ``ok``, ``illegal`` or ``unknown`` (time limit)."""

    result: str
    operations: int
    model: Model[Any] = field(repr=False, compare=False)
    partitions: tuple[PartitionResult, ...] = ()
    seconds: float = 0.0
    timeout: float | None = None

    @property
    def valid(self) -> bool:
        """True when linearizable (``unknown`` is not)."""
        return self.result == OK_RESULT

    @property
    def failed(self) -> tuple[PartitionResult, ...]:
        """The illegal sub-histories."""
        return tuple(p for p in self.partitions if p.result == ILLEGAL)

    @property
    def counterexample(self) -> tuple[Operation, ...]:
        """The conflicting operations of the first illegal sub-history: the operation that made
        the blocking state (if any) and the operations that cannot follow it."""
        for p in self.failed:
            return tuple(p.setters[-1:]) + tuple(b.op for b in p.blocked)
        return ()

    @property
    def linearization(self) -> tuple[Operation, ...]:
        """A linearization of every sub-history, one after the other (when ``ok``)."""
        return tuple(op for p in self.partitions for op in p.order) if self.valid else ()

    def explain(self) -> str:
        """One line for a report."""
        if self.result == OK_RESULT:
            return f"linearizable ({count(self.operations, 'operation')})"
        if self.result == UNKNOWN:
            limit = f"time limit of {self.timeout:g} s" if self.timeout is not None else "time limit"
            return f"UNKNOWN: {limit} reached before a verdict ({count(self.operations, 'operation')})"
        lines = [f"{p.name}: {p.sentence(self.model)}" if len(self.partitions) > 1 else p.sentence(self.model)
                 for p in self.failed if p.blocked]
        more = len(lines) - 1
        return "NOT linearizable" + (f": {lines[0]}" if lines else "") + (
            f" (and {more} more {'sub-history' if more == 1 else 'sub-histories'})" if more > 0 else "")

    def text(self, locate: Callable[[Operation], str] | None = None) -> str:
        """Several lines: the verdict, then per illegal sub-history its prefix, state and blocked ops
        (``locate`` says where an operation came from, e.g. ``lines 3-7``)."""
        def at(op: Operation) -> str:
            return f"{describe_op(self.model, op)} {op.interval()}" + (f" ({locate(op)})" if locate else "")

        head = self.explain()
        if self.result == ILLEGAL:
            head = f"NOT linearizable ({count(self.operations, 'operation')}"
            if len(self.partitions) > 1:
                head += f", {len(self.failed)} of {len(self.partitions)} sub-histories illegal"
                undecided = sum(p.result == UNKNOWN for p in self.partitions)
                head += f", {undecided} undecided (not needed for the verdict)" if undecided else ""
            head += ")"
        out = [head]
        for p in self.failed:
            out.append(f"{p.name}: longest linearizable prefix {len(p.order)} of "
                       f"{count(len(p.ops), 'operation')}, leaving {p.state}")
            for op in p.setters[-_SHOWN_SETTERS:]:
                out.append(f"  state set by {at(op)}")
            for b in p.blocked:
                out.append(f"  cannot be placed next: {at(b.op)}: {b.reason}")
            if p.blocked:
                out.append(f"  => {p.sentence(self.model)}")
        return "\n".join(out)

    def to_json(self, locate: Callable[[Operation], str] | None = None) -> dict[str, Any]:
        """The verdict as JSON-able data (operations with their descriptions, and ``at``: ``locate(op)``)."""
        def op_json(op: Operation) -> dict[str, Any]:
            return {**({"at": locate(op)} if locate else {}),
                    "index": op.index, "process": jsonable(op.process), "f": op.f, "value": jsonable(op.arg),
                    "type": op.status, "result": jsonable(op.result), "call": op.call,
                    "return": None if math.isinf(op.ret) else op.ret,
                    "description": describe_op(self.model, op)}

        parts = []
        for p in self.partitions:
            d: dict[str, Any] = {"name": p.name, "result": p.result, "operations": len(p.ops),
                                 "configurations": p.steps}
            if p.result == ILLEGAL:
                d.update(prefix=[op_json(op) for op in p.order], state=p.state,
                         state_set_by=[op_json(op) for op in p.setters[-_SHOWN_SETTERS:]],
                         blocked=[{**op_json(b.op), "reason": b.reason} for b in p.blocked],
                         explanation=p.sentence(self.model))
            elif p.result == OK_RESULT:
                d["linearization"] = [op.index for op in p.order]
            parts.append(d)
        return {"result": self.result, "linearizable": self.valid, "model": self.model.name,
                "operations": self.operations, "seconds": round(self.seconds, 6), "timeout": self.timeout,
                "explanation": self.explain(), "partitions": parts}


def jsonable(v: Any) -> Any:
    """``v`` with tuples as lists and bytes as text, for JSON."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, tuple | list):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return v


def _reachable(model: Model[Any], state: Hashable,
               unknown: Sequence[Operation]) -> dict[Hashable, list[Operation]]:
    """The states ``state`` may become when some of the ``unknown`` operations (always legal) take
    effect, each with the first sequence found that leads there (only ``state`` when there are
    too many to explore)."""
    reach: dict[Hashable, list[Operation]] = {state: []}
    if len(unknown) > _MAX_UNKNOWN_EXPLORED:
        return reach
    seen = {(0, state)}
    frontier: list[tuple[int, Hashable, list[Operation]]] = [(0, state, [])]
    while frontier and len(seen) < _MAX_STATES_EXPLORED:
        nxt = []
        for used, s, via in frontier:
            for j, op in enumerate(unknown):
                if used >> j & 1:
                    continue
                _, s2 = model.step(s, op.input, op.output)
                key = (used | 1 << j, s2)
                if key not in seen:
                    seen.add(key)
                    reach.setdefault(s2, via + [op])
                    nxt.append((used | 1 << j, s2, via + [op]))
        frontier = nxt
    return reach


def _explain_failure(model: Model[Any], name: str, ops: Sequence[Operation], order: Sequence[int],
                     steps: int) -> PartitionResult:
    """Replay the longest prefix: the state it leaves, who set it, and which next operations fail
    (in that state and in every state the unknown operations that may come next could make)."""
    state: Hashable = model.init()
    setters: list[Operation] = []
    done = set(order)
    for i in order:
        _, new = model.step(state, ops[i].input, ops[i].output)
        if new != state:
            setters.append(ops[i])
        state = new
    rest = [op for i, op in enumerate(ops) if i not in done]
    deadline = min((op.ret for op in rest), default=math.inf)
    # the operations that may come next: invoked before the first pending one returned
    nexts = [op for op in rest if op.call <= deadline]
    reach = _reachable(model, state, [op for op in nexts if math.isinf(op.ret)])
    blocked = []
    for op in sorted(nexts, key=lambda o: (o.ret, o.call, o.index)):
        if math.isinf(op.ret) or any(model.step(s, op.input, op.output)[0] for s in reach):
            continue
        reason = model.why_not(state, op.input, op.output)
        others = [f"{model.describe_state(s)} if {' and '.join(describe_op(model, u) for u in via)} "
                  "took effect" for s, via in reach.items() if via]
        if others:
            shown = others[:_SHOWN_BLOCKED] + ([f"{len(others) - _SHOWN_BLOCKED} more"]
                                               if len(others) > _SHOWN_BLOCKED else [])
            reason += f" (or {'; or '.join(shown)})"
        blocked.append(Blocked(op, reason))
    return PartitionResult(name, ILLEGAL, tuple(ops), tuple(ops[i] for i in order),
                           model.describe_state(state), tuple(blocked), tuple(setters), steps)


def check_operations(ops: Sequence[Operation], initial: Any = None, *, model: Model[Any] | None = None,
                     timeout: float | None = None, counterexample: bool = True,
                     memo: bool = True) -> LinVerdict:
    """Check paired operations under ``model`` (default: a register starting at ``initial``).

    The sub-histories share the time in rounds of doubling slices (Porcupine checks them in
    parallel): one that is quickly illegal is found although another would take long.  Without
    ``counterexample`` the check stops at the first illegal sub-history and records no prefix;
    with it, the round in which one is found is finished (the others get as long) and the rest
    stay undecided (``unknown``: not needed for the verdict).  ``timeout`` (seconds, for the
    whole check) makes the result ``unknown`` unless a sub-history was found illegal.
    """
    model = model if model is not None else RegisterModel(initial)
    t0 = time.monotonic()
    deadline = None if timeout is None else t0 + timeout
    parts = model.partition(ops)
    searches = [PartitionSearch(model, part, memo=memo, partial=counterexample) for part in parts]
    undecided = [i for i, s in enumerate(searches) if s.result is None]
    slice_s = _FIRST_SLICE_S
    found = timed_out = False
    while undecided and not (found or timed_out):
        for i in list(undecided):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                timed_out = True
                break
            end = now + slice_s if len(undecided) > 1 else None
            if deadline is not None:
                end = deadline if end is None else min(end, deadline)
            r = searches[i].run(end)
            if r is None:
                continue
            undecided.remove(i)
            if r == ILLEGAL:
                found = True
                if not counterexample:
                    break
        slice_s *= 2
    results: list[PartitionResult] = []
    for part, srch in zip(parts, searches, strict=True):
        name = model.partition_name(part)
        if srch.result == ILLEGAL and counterexample:
            results.append(_explain_failure(model, name, part, srch.order, srch.steps))
        else:
            order = tuple(part[i] for i in srch.order) if srch.result != ILLEGAL else ()
            results.append(PartitionResult(name, srch.result or UNKNOWN, tuple(part), order,
                                           steps=srch.steps))
    overall = ILLEGAL if found else (UNKNOWN if undecided else OK_RESULT)
    return LinVerdict(overall, len(ops), model, tuple(results), time.monotonic() - t0, timeout)


def check(events: Iterable[OpEvent], initial: Any = None, *, model: Model[Any] | None = None,
          timeout: float | None = None, counterexample: bool = True) -> LinVerdict:
    """Check a history of events for linearizability (see the module docstring)."""
    return check_operations(pair(events), initial, model=model, timeout=timeout,
                            counterexample=counterexample)
