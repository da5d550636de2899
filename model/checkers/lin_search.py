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
(``time.monotonic()``) passes.  With ``partial`` the longest linearizable prefix met is kept:
when the search fails, every operation that may follow that prefix is illegal there (a legal
one would have made a longer prefix), which is the counterexample.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.lin_models import Model, Operation

OK_RESULT, ILLEGAL, UNKNOWN = "ok", "illegal", "unknown"

_CHECK_EVERY = 1 << 11  # backtracks between two looks at the clock


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


def search(model: Model[Any], ops: Sequence[Operation], *, deadline: float | None = None,
           memo: bool = True, partial: bool = False) -> SearchResult:
    """Decide whether ``ops`` (one sub-history) is linearizable under ``model``.

    ``memo=False`` turns the (linearized, state) cache off (for testing that it changes no
    verdict); ``partial`` keeps the longest linearizable prefix for a counterexample.
    """
    n = len(ops)
    if n == 0:
        return SearchResult(OK_RESULT)
    # entries: call of op i is node i, its return node n + i; head 2n, tail 2n + 1
    order_key = sorted(range(2 * n), key=lambda e: (ops[e].call, 0, e) if e < n else (ops[e - n].ret, 1, e))
    head, tail = 2 * n, 2 * n + 1
    nxt = [0] * (2 * n + 2)
    prv = [0] * (2 * n + 2)
    last = head
    for e in order_key:
        nxt[last] = e
        prv[e] = last
        last = e
    nxt[last] = tail
    prv[tail] = last

    step = model.step
    inputs = [op.input for op in ops]
    outputs = [op.output for op in ops]
    read_only = [model.read_only(op.input, op.output) for op in ops]
    trans: list[dict[Hashable, Any]] = [{} for _ in range(n)]
    bits = [1 << i for i in range(n)]

    cache: set[tuple[int, Hashable]] = set()
    cache_add = cache.add
    stack: list[tuple[int, Hashable, int]] = []
    push = stack.append
    pop = stack.pop
    best: list[int] = []
    best_len = -1
    state: Hashable = model.init()
    lin = 0
    steps = backtracks = 0
    def first(entry: int, state: Hashable) -> int:
        """The first legal read-only candidate (the only branch worth trying), else ``entry``."""
        e = entry
        while e < n:
            if read_only[e]:
                t = trans[e]
                r = t.get(state, _MISSING)
                if r is _MISSING:
                    legal, s2 = step(state, inputs[e], outputs[e])
                    r = t[state] = s2 if legal else _ILLEGAL
                if r is not _ILLEGAL:
                    return e
            e = nxt[e]
        return entry

    entry = first(nxt[head], state)
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
                        return SearchResult(OK_RESULT, [s[0] for s in stack], steps, backtracks)
                    entry = first(entry, state)
                    continue
                if not read_only[entry]:
                    entry = nxt[entry]
                    continue
                # a legal read-only step into an explored configuration: this one fails too
            else:
                entry = nxt[entry]
                continue
        # a return (its operation cannot be linearized next), or a failed read-only step: backtrack
        if partial and len(stack) > best_len:
            best_len = len(stack)
            best = [s[0] for s in stack]
        backtracks += 1
        if deadline is not None and not backtracks % _CHECK_EVERY and time.monotonic() > deadline:
            return SearchResult(UNKNOWN, best, steps, backtracks)
        while True:
            if not stack:
                return SearchResult(ILLEGAL, best, steps, backtracks)
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
