"""The linearizability checker (model/checkers/linearizable.py) on hand-made histories of both models."""

from __future__ import annotations

import math

import pytest

from model.checkers.lin_models import (
    INFO,
    OK,
    KVModel,
    NondeterministicModel,
    Operation,
    RegisterModel,
)
from model.checkers.linearizable import OpEvent, check, check_operations, pair


def _race(winners: set[int], n: int = 32, initial_expected: object = None) -> list[OpEvent]:
    events = [OpEvent(p, "invoke", "cas", (initial_expected, f"v{p}"), p * 0.01) for p in range(n)]
    events += [OpEvent(p, "ok" if p in winners else "fail", "cas", None, 10 + p * 0.01) for p in range(n)]
    return events


def _op(i: int, p: object, f: str, arg: object, status: str, result: object, call: float,
        ret: float) -> Operation:
    return Operation(i, p, f, arg, status, result, call, math.inf if status == INFO else ret)


# ---- register: the conformance races --------------------------------------------------------------


def test_two_winners_of_one_create_race_are_rejected_naming_both() -> None:
    verdict = check(_race({3, 7}))
    assert not verdict.valid and verdict.result == "illegal"
    # the conflict: the winner that set the state, and the other winner that cannot follow it
    assert {(op.process, op.status) for op in verdict.counterexample} == {(3, "ok"), (7, "ok")}
    assert "NOT linearizable" in verdict.explain()
    assert "cas(none->'v7') by p7 cannot be placed: the register holds 'v3'" in verdict.explain()


def test_one_winner_is_accepted() -> None:
    verdict = check(_race({5}))
    assert verdict.valid and verdict.result == "ok"
    # the linearization is the winner first, then every 412
    assert verdict.linearization[0].process == 5 and len(verdict.linearization) == 32


def test_no_winner_with_definite_failures_is_rejected() -> None:
    # every create answered 412 although the object never existed
    verdict = check(_race(set()))
    assert not verdict.valid
    part = verdict.failed[0]
    assert part.order == () and len(part.blocked) == 32
    assert all("so the cas would have succeeded" in b.reason for b in part.blocked)


def test_unknown_outcome_may_be_the_winner() -> None:
    events = [OpEvent(1, "invoke", "cas", (None, "x"), 0), OpEvent(1, "info", "cas", None, 5),
              OpEvent(2, "invoke", "cas", (None, "y"), 1), OpEvent(2, "fail", "cas", None, 6),
              OpEvent("r", "invoke", "read", None, 7), OpEvent("r", "ok", "read", "x", 8)]
    assert check(events).valid


def test_unknown_outcome_may_never_take_effect() -> None:
    events = [OpEvent(1, "invoke", "write", "x", 0), OpEvent(1, "info", "write", None, 1),
              OpEvent(2, "invoke", "read", None, 2), OpEvent(2, "ok", "read", None, 3)]
    assert check(events).valid
    # ... but it cannot take effect before its invoke
    early = [OpEvent(2, "invoke", "read", None, 0), OpEvent(2, "ok", "read", "x", 1),
             OpEvent(1, "invoke", "write", "x", 2), OpEvent(1, "info", "write", None, 3)]
    assert not check(early).valid


def test_pending_invoke_is_unknown() -> None:
    events = [OpEvent(1, "invoke", "write", "x", 0),
              OpEvent(2, "invoke", "read", None, 2), OpEvent(2, "ok", "read", "x", 3)]
    ops = pair(events)
    assert [op.status for op in ops] == ["info", "ok"] and math.isinf(ops[0].ret)
    assert check(events).valid


def test_timed_out_read_claims_nothing() -> None:
    events = [OpEvent(1, "invoke", "write", 1, 0), OpEvent(1, "ok", "write", None, 1),
              OpEvent(2, "invoke", "read", None, 2), OpEvent(2, "fail", "read", None, 3),
              OpEvent(3, "invoke", "read", None, 4), OpEvent(3, "info", "read", None, 5)]
    assert check(events).valid


def test_412_before_the_winner_started_is_rejected() -> None:
    events = [OpEvent(1, "invoke", "cas", (None, "x"), 0), OpEvent(1, "fail", "cas", None, 1),
              OpEvent(2, "invoke", "cas", (None, "y"), 2), OpEvent(2, "ok", "cas", None, 3)]
    verdict = check(events)
    assert not verdict.valid
    assert [op.process for op in verdict.counterexample] == [1]


def test_replace_race_two_winners_rejected_and_final_read_checked() -> None:
    assert not check(_race({1, 2}, initial_expected="base"), initial="base").valid
    ok = _race({4}, initial_expected="base") + [OpEvent("r", "invoke", "read", None, 20),
                                                OpEvent("r", "ok", "read", "v4", 21)]
    assert check(ok, initial="base").valid
    wrong = ok[:-1] + [OpEvent("r", "ok", "read", "v5", 21)]
    verdict = check(wrong, initial="base")
    assert not verdict.valid
    assert "read()='v5' by r cannot be placed: the register holds 'v4'" in verdict.explain()


def test_real_time_order_is_respected() -> None:
    # write x completes, then a later read still sees the initial value: stale read
    events = [OpEvent(1, "invoke", "write", "x", 0), OpEvent(1, "ok", "write", None, 1),
              OpEvent(2, "invoke", "read", None, 2), OpEvent(2, "ok", "read", None, 3)]
    assert not check(events).valid
    # overlapping, the read may come first; touching intervals are concurrent (closed intervals)
    touching = [OpEvent(1, "invoke", "write", "x", 0), OpEvent(1, "ok", "write", None, 2),
                OpEvent(2, "invoke", "read", None, 2), OpEvent(2, "ok", "read", None, 3)]
    assert check(touching).valid


def test_counterexample_names_the_writes_and_the_value() -> None:
    # the brief's example: write(2) by p3, then cas(2->5) by p1, then read()=1 by p4
    ops = [_op(0, 3, "write", 2, OK, None, 0, 1), _op(1, 1, "cas", (2, 5), OK, None, 2, 3),
           _op(2, 4, "read", None, OK, 1, 4, 5)]
    verdict = check_operations(ops)
    assert verdict.explain() == ("NOT linearizable: after write(2) by p3 and cas(2->5) by p1, read()=1 by p4 "
                                 "cannot be placed: the register holds 5")
    assert [op.index for op in verdict.counterexample] == [1, 2]
    data = verdict.to_json()
    part = data["partitions"][0]
    assert [op["description"] for op in part["prefix"]] == ["write(2) by p3", "cas(2->5) by p1"]
    assert part["state"] == "5"
    assert part["blocked"][0]["reason"] == "the register holds 5"
    text = verdict.text()
    assert "longest linearizable prefix 2 of 3" in text and "read()=1 by p4 [4, 5]" in text


def test_longest_prefix_is_kept_beyond_a_linearizable_start() -> None:
    # 10 good reads, then a read of a value never written: the prefix has the write and 10 reads
    ops = [_op(0, 0, "write", "a", OK, None, 0, 1)]
    ops += [_op(i, i % 3 + 1, "read", None, OK, "a", 2 * i, 2 * i + 1) for i in range(1, 11)]
    ops.append(_op(11, 9, "read", None, OK, "zz", 100, 101))
    part = check_operations(ops).failed[0]
    assert len(part.order) == 11 and [b.op.index for b in part.blocked] == [11]
    assert [op.index for op in part.setters] == [0]


def test_verdict_without_counterexample_stops_early_and_agrees() -> None:
    events = _race({3, 7})
    quick = check(events, counterexample=False)
    assert quick.result == "illegal" and quick.failed[0].blocked == ()


# ---- the time limit --------------------------------------------------------------------------------


def _hard(n: int = 22) -> list[Operation]:
    """n concurrent writes of distinct values, then a read of a value none wrote: every subset of the
    writes is a configuration to refute (more than 2^n)."""
    ops = [_op(i, i, "write", i, OK, None, 0, 10) for i in range(n)]
    ops.append(_op(n, "r", "read", None, OK, "never", 20, 21))
    return ops


def test_time_limit_gives_unknown_not_an_exception() -> None:
    verdict = check_operations(_hard(), timeout=0.2)
    assert verdict.result == "unknown" and not verdict.valid
    assert "UNKNOWN: time limit of 0.2 s" in verdict.explain()
    assert verdict.seconds < 5


def test_small_instance_of_the_hard_history_is_decided() -> None:
    verdict = check_operations(_hard(6), timeout=30)
    assert verdict.result == "illegal"
    assert "read()='never' by r cannot be placed" in verdict.explain()


# ---- key-value model -------------------------------------------------------------------------------


def _kv(i: int, p: int, f: str, key: str, value: str | None, status: str, result: str | None, call: float,
        ret: float) -> Operation:
    return _op(i, p, f, (key, value), status, result, call, ret)


def test_kv_linearizable_with_appends_and_unknown_put() -> None:
    ops = [_kv(0, 0, "put", "x", "a", OK, None, 0, 1),
           _kv(1, 1, "append", "x", "b", OK, None, 2, 5),
           _kv(2, 2, "get", "x", None, OK, "a", 3, 4),   # before the append took effect
           _kv(3, 0, "get", "x", None, OK, "ab", 6, 7),
           _kv(4, 3, "put", "y", "q", INFO, None, 0, 0),  # unknown: may take effect ...
           _kv(5, 4, "get", "y", None, OK, "q", 8, 9),    # ... and did
           _kv(6, 5, "get", "z", None, OK, "", 1, 2)]     # a key never written reads ""
    verdict = check_operations(ops, model=KVModel())
    assert verdict.valid
    assert sorted(p.name for p in verdict.partitions) == ["key 'x'", "key 'y'", "key 'z'"]


def test_kv_illegal_partition_is_named_with_its_counterexample() -> None:
    ops = [_kv(0, 0, "put", "x", "a", OK, None, 0, 1),
           _kv(1, 1, "append", "x", "b", OK, None, 2, 3),
           _kv(2, 2, "get", "x", None, OK, "ba", 4, 5),    # appends go at the end
           _kv(3, 0, "put", "y", "q", OK, None, 0, 1),
           _kv(4, 3, "get", "y", None, OK, "q", 2, 3)]
    verdict = check_operations(ops, model=KVModel())
    assert verdict.result == "illegal"
    assert [(p.name, p.result) for p in verdict.partitions] == [("key 'x'", "illegal"), ("key 'y'", "ok")]
    assert ("after put('x', 'a') by p0 and append('x', 'b') by p1, get('x')='ba' by p2 cannot be placed: "
            "key 'x' holds 'ab'") in verdict.explain()


def test_kv_partitions_are_independent() -> None:
    # one key alone is fine whichever order; each key's own real-time order is all that matters
    ops = [_kv(0, 0, "put", "x", "1", OK, None, 0, 1), _kv(1, 1, "put", "y", "1", OK, None, 2, 3),
           _kv(2, 2, "get", "y", None, OK, "", 0, 1.5), _kv(3, 3, "get", "x", None, OK, "1", 4, 5)]
    assert check_operations(ops, model=KVModel()).valid


# ---- nondeterministic models -----------------------------------------------------------------------


class LossyRegister(NondeterministicModel[object]):
    """A register whose ``info`` write, known to have finished, took effect or not."""

    def init(self) -> list[object]:
        return [0]

    def step(self, state: object, input: tuple[str, object], output: tuple[str, object]) -> list[object]:
        f, arg = input
        status, result = output
        if f == "read":
            return [state] if result == state else []
        return [arg] if status == OK else [state, arg]


@pytest.mark.parametrize(("value", "linearizable"), [(1, True), (0, True), (2, False)])
def test_powerset_model_of_a_nondeterministic_write(value: int, linearizable: bool) -> None:
    # a write of 1 whose outcome is unknown but which is over at time 2 (finite interval)
    ops = [Operation(0, 0, "write", 1, INFO, None, 0, 2), _op(1, 1, "read", None, OK, value, 3, 4)]
    verdict = check_operations(ops, model=LossyRegister().as_model())
    assert verdict.valid is linearizable
    if not linearizable:
        assert "possible: {0, 1}" in verdict.explain()


def test_register_model_semantics() -> None:
    m = RegisterModel()
    assert m.step(None, ("cas", (None, "a")), (OK, None)) == (True, "a")
    assert m.step("a", ("cas", (None, "b")), (OK, None)) == (False, "a")
    assert m.step("a", ("cas", (None, "b")), ("fail", None)) == (True, "a")
    assert m.step(None, ("cas", (None, "b")), ("fail", None)) == (False, None)
    assert m.step("a", ("cas", ("a", "b")), (INFO, None)) == (True, "b")
    assert m.step("c", ("cas", ("a", "b")), (INFO, None)) == (True, "c")
    assert m.read_only(("cas", (1, 2)), ("fail", None)) and not m.read_only(("cas", (1, 2)), (OK, None))


@pytest.mark.parametrize("counterexample", [False, True])
def test_a_quickly_illegal_key_is_found_beside_a_hard_one(counterexample: bool) -> None:
    # key 'a' would need more than 2^22 configurations; key 'b' is illegal at once.  The keys share
    # the time, so the verdict comes from 'b' (sequentially, 'a' would use up the whole limit).
    ops = [_kv(i, i, "put", "a", str(i), OK, None, 0, 10) for i in range(22)]
    ops.append(_kv(22, 30, "get", "a", None, OK, "never", 20, 21))
    ops += [_kv(23, 31, "put", "b", "x", OK, None, 0, 1), _kv(24, 32, "get", "b", None, OK, "y", 2, 3)]
    verdict = check_operations(ops, model=KVModel(), timeout=60, counterexample=counterexample)
    assert verdict.result == "illegal"
    results = [(p.name, p.result) for p in verdict.partitions]
    assert results == [("key 'a'", "unknown"), ("key 'b'", "illegal")]
    if counterexample:
        expected = "key 'b': after put('b', 'x') by p31, get('b')='y' by p32 cannot be placed"
        assert expected in verdict.explain()


def test_counterexample_spells_out_what_unknown_writes_could_have_done() -> None:
    # the read of 1 fails whether or not the unknown write of 9 took effect: both are said
    ops = [_op(0, 1, "write", 2, OK, None, 0, 1), _op(1, 2, "cas", (2, 5), OK, None, 2, 3),
           _op(2, 3, "cas", (2, 7), "fail", None, 2.5, 3.5), _op(3, 4, "write", 9, INFO, None, 4, 0),
           _op(4, 5, "read", None, OK, 1, 5, 6)]
    verdict = check_operations(ops)
    part = verdict.failed[0]
    # the prefix holds the operations that returned; the unknown write is not needed to explain
    assert [op.index for op in part.order] == [0, 1, 2]
    assert verdict.explain() == (
        "NOT linearizable: after write(2) by p1 and cas(2->5) by p2, read()=1 by p5 cannot be placed: "
        "the register holds 5 (or 9 if write(9) info by p4 took effect)")
    # reading 9 is fine: the unknown write took effect
    assert check_operations(ops[:4] + [_op(4, 5, "read", None, OK, 9, 5, 6)]).valid


def test_a_failed_write_or_put_did_not_take_effect() -> None:
    ops = [_op(0, 1, "write", "x", "fail", None, 0, 1), _op(1, 2, "read", None, OK, None, 2, 3)]
    assert check_operations(ops).valid
    assert not check_operations(ops[:1] + [_op(1, 2, "read", None, OK, "x", 2, 3)]).valid
    kv = [_kv(0, 1, "append", "k", "a", "fail", None, 0, 1), _kv(1, 2, "get", "k", None, OK, "", 2, 3)]
    assert check_operations(kv, model=KVModel()).valid
    assert not check_operations(kv[:1] + [_kv(1, 2, "get", "k", None, OK, "a", 2, 3)], model=KVModel()).valid
