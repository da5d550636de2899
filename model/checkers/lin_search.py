"""The Wing-Gong-Lowe linearizability search over one sub-history (Porcupine's ``checkSingle``).

The history is a doubly linked list of call and return entries in time order (at equal times a
call comes before a return: intervals are closed).  Walking the list from its head, every call
met before the first return is an operation that may be linearized next.  Linearizing one
*lifts* its call and return out of the list (pushed on a stack with the state before it);
meeting a return means the operation it closes has to come next and cannot: backtrack (pop,
*unlift*, try the next call).  A cache of (bitset of linearized operations, state) prunes every
configuration already explored (Lowe's memoisation).

Two prunings beyond Porcupine's, both exact:

- a *read-only* operation (the model says it never changes the state) that is legal where it
  may be linearized is linearized there and nowhere else: when its subtree fails, the whole
  configuration fails (moving an identity step earlier, to where it is legal, preserves any
  linearization), and so does meeting one whose configuration is already in the cache;
- the result of ``step`` is memoised per operation and state.

No step budget: the search ends with a verdict, or with ``UNKNOWN`` when ``deadline``
(``time.monotonic()``) passes.  With ``partial`` the longest linearizable prefix met is kept,
"longest" counting the operations with a known outcome (unknown ones may always be placed, so
they would lengthen any prefix without explaining anything).  When the search fails, every
operation with a known outcome that may follow that prefix is illegal there, and after any of
the unknown operations that may follow it (a legal one would have made a longer prefix): the
counterexample.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.lin_models import Model, Operation

OK_RESULT, ILLEGAL, UNKNOWN = "ok", "illegal", "unknown"

_CHECK_EVERY = 1 << 11  # backtracks between two looks at the clock
_PRESCAN_TRIAL, _PRESCAN_WORTH = 1024, 64  # look-aheads tried; kept if 1 in 64 jumps ahead


@dataclass
class SearchResult:
    """Outcome of one sub-history: ``result`` is ``ok``, ``illegal`` or ``unknown``.

    ``order`` is a full linearization (``ok``) or the longest linearizable prefix found, as
    positions in the sub-history; ``steps`` counts the configurations entered.
    """

    result: str
    order: list[int] = field(default_factory=list)
    steps: int = 0
    backtracks: int = 0


_MISSING = object()
_ILLEGAL = object()


class PartitionSearch:
    """The search over one sub-history, resumable: :meth:`run` works until a verdict or until
    ``deadline`` passes, and a later call continues where it stopped (so several sub-histories
    can share the time, as Porcupine checks them in parallel).

    ``memo=False`` turns the (linearized, state) cache off (for testing that it changes no
    verdict); ``partial`` keeps the longest linearizable prefix for a counterexample.
    """

    def __init__(self, model: Model[Any], ops: Sequence[Operation], *, memo: bool = True,
                 partial: bool = False) -> None:
        n = self.n = len(ops)
        self.model = model
        self.ops = ops
        self.memo = memo
        self.partial = partial
        self.result: str | None = OK_RESULT if n == 0 else None
        self.order: list[int] = []
        self.steps = self.backtracks = 0
        # entries: call of op i is node i, its return node n + i; head 2n, tail 2n + 1
        by_time = sorted(range(2 * n), key=lambda e: (ops[e].call, 0, e) if e < n else (ops[e - n].ret, 1, e))
        # Within a run of calls (no return between them) the order only says which is tried first:
        # unknown outcomes go last, so a prefix takes them only when it needs them.
        runs: list[list[int]] = [[]]
        for e in by_time:
            if e < n:
                runs[-1].append(e)
            else:
                runs.append([e])
                runs.append([])
        by_time = [e for run in runs for e in sorted(run, key=lambda e: e < n and math.isinf(ops[e].ret))]
        self.head, self.tail = 2 * n, 2 * n + 1
        self.nxt = [0] * (2 * n + 2)
        self.prv = [0] * (2 * n + 2)
        last = self.head
        for e in by_time:
            self.nxt[last] = e
            self.prv[e] = last
            last = e
        self.nxt[last] = self.tail
        self.prv[self.tail] = last
        self.inputs = [op.input for op in ops]
        self.outputs = [op.output for op in ops]
        self.read_only = [model.read_only(op.input, op.output) for op in ops]
        self.trans: list[dict[Hashable, Any]] = [{} for _ in range(n)]
        self.cache: set[tuple[int, Hashable]] = set()
        self.stack: list[tuple[int, Hashable, int]] = []
        # the longest prefix counts the operations that returned (the others may always be placed,
        # so a prefix could always be lengthened with them), then is the shortest
        self.best: list[int] = []
        self.best_score = -1
        self.known = sum(1 << i for i, op in enumerate(ops) if not math.isinf(op.ret))
        self.state: Hashable = model.init()
        self.lin = 0
        self.scans = self.jumps = 0
        self.prescan = True
        self.entry = self._first(self.nxt[self.head], self.state) if n else self.tail

    def _legal(self, e: int, state: Hashable) -> Any:
        """The state after op ``e`` in ``state`` (memoised), or ``_ILLEGAL``."""
        t = self.trans[e]
        r = t.get(state, _MISSING)
        if r is _MISSING:
            legal, s2 = self.model.step(state, self.inputs[e], self.outputs[e])
            r = t[state] = s2 if legal else _ILLEGAL
        return r

    def _first(self, entry: int, state: Hashable) -> int:
        """The first legal read-only candidate (the only branch worth trying), else ``entry``.

        Where this look-ahead seldom finds one past ``entry`` (e.g. reads of a key appended to by
        many writers: almost never legal), it costs more than it saves, and is turned off."""
        e, n, nxt, read_only, trans = entry, self.n, self.nxt, self.read_only, self.trans
        self.scans += 1
        if self.scans == _PRESCAN_TRIAL and self.jumps * _PRESCAN_WORTH < self.scans:
            self.prescan = False
        while e < n:
            if read_only[e]:
                r = trans[e].get(state, _MISSING)
                if r is _MISSING:
                    r = self._legal(e, state)
                if r is not _ILLEGAL:
                    if e != entry:
                        self.jumps += 1
                    return e
            e = nxt[e]
        return entry

    def run(self, deadline: float | None = None) -> str | None:
        """Search until a verdict (``ok`` or ``illegal``, also kept in :attr:`result`) or until
        ``deadline`` (``time.monotonic()``) passes: then ``None``, and a later call resumes."""
        if self.result is not None:
            return self.result
        n, head, tail, nxt, prv = self.n, self.head, self.tail, self.nxt, self.prv
        inputs, outputs, read_only, trans, bits = self.inputs, self.outputs, self.read_only, self.trans, None
        step, first, memo, partial = self.model.step, self._first, self.memo, self.partial
        prescan = self.prescan
        cache = self.cache
        cache_add = cache.add
        stack = self.stack
        push = stack.append
        pop = stack.pop
        best, best_score, known, width = self.best, self.best_score, self.known, 2 * n + 2
        entry, state, lin = self.entry, self.state, self.lin
        steps, backtracks = self.steps, self.backtracks
        bits = _bits(n)
        while True:
            if entry < n:  # a call: try to linearize its operation now
                t = trans[entry]
                new = t.get(state, _MISSING)
                if new is _MISSING:
                    legal, s2 = step(state, inputs[entry], outputs[entry])
                    new = s2 if legal else _ILLEGAL
                    t[state] = new
                if new is not _ILLEGAL:
                    nl = lin | bits[entry]
                    key = (nl, new)
                    if key not in cache:
                        if memo:
                            cache_add(key)
                        push((entry, state, lin))
                        state = new
                        lin = nl
                        steps += 1
                        # lift the call and its return out of the list
                        p = prv[entry]
                        q = nxt[entry]
                        nxt[p] = q
                        prv[q] = p
                        m = entry + n
                        p = prv[m]
                        q = nxt[m]
                        nxt[p] = q
                        prv[q] = p
                        entry = nxt[head]
                        if entry == tail:
                            self.result = OK_RESULT
                            self.order = [s[0] for s in stack]
                            self.steps, self.backtracks = steps, backtracks
                            return OK_RESULT
                        if prescan:
                            entry = first(entry, state)
                            prescan = self.prescan
                        continue
                    if not read_only[entry]:
                        entry = nxt[entry]
                        continue
                    # a legal read-only step into an explored configuration: this one fails too
                else:
                    entry = nxt[entry]
                    continue
            # a return (its operation cannot be linearized next), or a failed read-only step: backtrack
            if partial:
                score = (lin & known).bit_count() * width + n - len(stack)
                if score > best_score:
                    best_score = score
                    best = [s[0] for s in stack]
            backtracks += 1
            if deadline is not None and not backtracks % _CHECK_EVERY and time.monotonic() > deadline:
                # pause here; resuming meets the same entry and backtracks from it (counted twice)
                self.entry, self.state, self.lin = entry, state, lin
                self.steps, self.backtracks = steps, backtracks
                self.best, self.best_score = best, best_score
                self.order = best
                return None
            while True:
                if not stack:
                    self.result = ILLEGAL
                    self.order = best
                    self.steps, self.backtracks = steps, backtracks
                    return ILLEGAL
                entry, state, lin = pop()
                # unlift: put the return back, then the call
                m = entry + n
                p = prv[m]
                nxt[p] = m
                prv[nxt[m]] = m
                p = prv[entry]
                nxt[p] = entry
                prv[nxt[entry]] = entry
                if not read_only[entry]:
                    break
            entry = nxt[entry]


_BITS: list[int] = []


def _bits(n: int) -> list[int]:
    """``[1 << i for i in range(n)]``, shared."""
    while len(_BITS) < n:
        _BITS.append(1 << len(_BITS))
    return _BITS


def search(model: Model[Any], ops: Sequence[Operation], *, deadline: float | None = None,
           memo: bool = True, partial: bool = False) -> SearchResult:
    """Decide whether ``ops`` (one sub-history) is linearizable under ``model``: ``unknown`` when
    ``deadline`` (``time.monotonic()``) passes first."""
    s = PartitionSearch(model, ops, memo=memo, partial=partial)
    result = s.run(deadline)
    return SearchResult(result or UNKNOWN, s.order, s.steps, s.backtracks)
