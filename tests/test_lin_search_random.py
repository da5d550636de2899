"""The search against itself and against brute force on many random small histories.

- memoisation (the (linearized, state) cache) changes no verdict;
- on tiny histories the verdict equals a brute-force checker that tries every subset of the
  unknown operations and every order of the rest allowed by real time (no search, no pruning);
- partitioning the key-value model by key changes no verdict (against one model over all keys);
- every counterexample is a real dead end: its prefix is a legal sequence in real-time order and
  every blocked operation is illegal after it.

Histories are drawn from a seeded generator (seed printed on failure): operations on a true
register at random instants, then a few outcomes corrupted, so both verdicts occur.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Hashable, Sequence
from typing import Any

from model.checkers.lin_models import FAIL, INFO, OK, KVModel, Model, Operation, RegisterModel
from model.checkers.lin_search import search
from model.checkers.linearizable import check_operations

VALUES = [None, 1, 2, 3]


def _random_register_history(rng: random.Random, n_ops: int, n_procs: int) -> list[Operation]:
    """Operations of a true register at random linearization points, some outcomes then corrupted."""
    spans: list[tuple[int, float, float]] = []
    clock = dict.fromkeys(range(n_procs), 0.0)
    for _ in range(n_ops):
        p = rng.randrange(n_procs)
        call = clock[p] + rng.uniform(0, 2)
        ret = call + rng.uniform(0.1, 4)
        clock[p] = ret
        spans.append((p, call, ret))
    spans.sort(key=lambda s: s[1])
    drafts = []
    for p, call, ret in spans:
        f = rng.choice(["read", "read", "write", "cas", "cas"])
        arg: Any = None
        if f == "write":
            arg = rng.choice(VALUES[1:])
        elif f == "cas":
            arg = (rng.choice(VALUES), rng.choice(VALUES[1:]))
        drafts.append((p, f, arg, call, ret, rng.uniform(call, ret)))
    state: Hashable = None
    outcome: dict[int, tuple[str, Any]] = {}
    unknown = {i for i in range(len(drafts)) if rng.random() < 0.15}
    for i in sorted(range(len(drafts)), key=lambda i: drafts[i][5]):
        _, f, arg, *_ = drafts[i]
        if i in unknown and rng.random() < 0.5:
            outcome[i] = (INFO, None)  # never took effect
            continue
        if f == "read":
            outcome[i] = (OK, state)
        elif f == "write":
            state = arg
            outcome[i] = (OK, None)
        elif state == arg[0]:
            state = arg[1]
            outcome[i] = (OK, None)
        else:
            outcome[i] = (FAIL, None)
        if i in unknown:
            outcome[i] = (INFO, None)  # took effect, outcome not known
    for _ in range(rng.choice([0, 0, 1, 2])):  # corruptions
        i = rng.randrange(len(drafts))
        status, result = outcome[i]
        if drafts[i][1] == "read" and status == OK:
            outcome[i] = (OK, rng.choice(VALUES))
        elif status in (OK, FAIL):
            outcome[i] = (FAIL if status == OK else OK, None)
    ops = []
    for i, (p, f, arg, call, ret, _) in enumerate(drafts):
        status, result = outcome[i]
        ops.append(Operation(i, p, f, arg, status, result, call, math.inf if status == INFO else ret))
    return ops


def brute_force(model: Model[Any], ops: Sequence[Operation]) -> bool:
    """Some subset of the unknown operations and some order of the kept ones, respecting real time
    (a before b when a returned before b was invoked), is legal step by step."""
    unknown = [op for op in ops if op.status == INFO]
    known = [op for op in ops if op.status != INFO]
    for k in range(len(unknown) + 1):
        for chosen in itertools.combinations(unknown, k):
            kept = known + list(chosen)
            for perm in itertools.permutations(kept):
                if any(perm[j].ret < perm[i].call for i in range(len(perm)) for j in range(i + 1, len(perm))):
                    continue
                state = model.init()
                for op in perm:
                    legal, state = model.step(state, op.input, op.output)
                    if not legal:
                        break
                else:
                    return True
    return False


def _assert_dead_end(model: Model[Any], ops: Sequence[Operation], seed: int) -> None:
    verdict = check_operations(ops, model=model)
    for part in verdict.failed:
        state = model.init()
        for i, op in enumerate(part.order):
            assert all(not later.ret < op.call for later in part.order[i + 1:]), f"seed {seed}: order"
            legal, state = model.step(state, op.input, op.output)
            assert legal, f"seed {seed}: the prefix is not legal at {op}"
        assert part.blocked, f"seed {seed}: an illegal history with nothing blocked"
        for b in part.blocked:
            assert not model.step(state, b.op.input, b.op.output)[0], f"seed {seed}: {b.op} is legal"


def test_memoisation_changes_no_verdict_and_matches_brute_force() -> None:
    model = RegisterModel()
    verdicts = {True: 0, False: 0}
    for seed in range(600):
        rng = random.Random(seed)
        tiny = seed % 2 == 0
        size = rng.randint(2, 6) if tiny else rng.randint(6, 11)
        ops = _random_register_history(rng, size, rng.randint(2, 4))
        with_memo = search(model, ops).result
        without = search(model, ops, memo=False).result
        assert with_memo == without, f"seed {seed}: memo {with_memo}, no memo {without}\n{ops}"
        if tiny:
            expect = "ok" if brute_force(model, ops) else "illegal"
            assert with_memo == expect, f"seed {seed}: search {with_memo}, brute force {expect}\n{ops}"
        verdicts[with_memo == "ok"] += 1
        _assert_dead_end(model, ops, seed)
    # the generator exercises both verdicts
    assert verdicts[True] > 100 and verdicts[False] > 100, verdicts


class WholeKV(Model[tuple[tuple[str, str], ...]]):
    """The key-value store as one object (sorted (key, value) pairs): no partitioning."""

    def init(self) -> tuple[tuple[str, str], ...]:
        return ()

    def step(self, state: tuple[tuple[str, str], ...], input: tuple[str, Any],
             output: tuple[str, Any]) -> tuple[bool, tuple[tuple[str, str], ...]]:
        f, (key, value) = input
        d = dict(state)
        ok, new = KVModel().step(d.get(key, ""), (f, (key, value)), output)
        d[key] = new
        return ok, tuple(sorted((k, v) for k, v in d.items() if v != ""))


def test_partitioning_by_key_changes_no_verdict() -> None:
    verdicts = {True: 0, False: 0}
    for seed in range(300):
        rng = random.Random(10_000 + seed)
        reg = _random_register_history(rng, rng.randint(3, 9), rng.randint(2, 4))
        ops = []
        for op in reg:  # reuse the shapes: read -> get, write -> put, cas -> append on one of two keys
            key = rng.choice("xy")
            f = {"read": "get", "write": "put", "cas": "append"}[op.f]
            value = None if f == "get" else rng.choice("ab")
            result = rng.choice(["", "a", "b", "ab"]) if f == "get" and op.status == OK else None
            ops.append(Operation(op.index, op.process, f, (key, value), op.status, result, op.call, op.ret))
        split = check_operations(ops, model=KVModel(), counterexample=False).valid
        whole = check_operations(ops, model=WholeKV(), counterexample=False).valid
        assert split == whole, f"seed {10_000 + seed}: by key {split}, whole {whole}\n{ops}"
        verdicts[split] += 1
        _assert_dead_end(KVModel(), ops, 10_000 + seed)
    assert verdicts[True] > 20 and verdicts[False] > 20, verdicts


def test_a_search_paused_and_resumed_finds_the_same() -> None:
    from model.checkers.lin_search import PartitionSearch

    model = RegisterModel()
    # 12 concurrent writes and a read of a value none wrote: thousands of backtracks, many pauses
    hard = [Operation(i, i, "write", i, OK, None, 0, 10) for i in range(12)]
    hard.append(Operation(12, "r", "read", None, OK, 99, 20, 21))
    cases = [hard] + [_random_register_history(random.Random(seed), 24, 4) for seed in range(40)]
    pauses = 0
    for ops in cases:
        whole = PartitionSearch(model, ops, partial=True)
        assert whole.run() is not None
        resumed = PartitionSearch(model, ops, partial=True)
        while resumed.run(deadline=0.0) is None:  # the deadline has always passed: pause at each look
            pauses += 1
        assert (resumed.result, resumed.order, resumed.steps) == (whole.result, whole.order, whole.steps)
    assert pauses > 10
