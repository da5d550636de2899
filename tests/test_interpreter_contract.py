"""The simulated and the real-world interpreter make the same client decisions and protocol steps.

See ``tests/interpreter_contract.py``: the same scripted answers through both worlds; the
writer must see the same outcomes, attempt counts and ambiguity, and record the same steps.
"""

from __future__ import annotations

from typing import Any

from interpreter_contract import SCRIPT, Answers, ScriptedBackend, ScriptedStore, scenario, steps, writer

from backends.realworld import RealWorld
from model.runtime.sim import SimWorld
from model.workloads.lock import LockWorkload


def _sim() -> tuple[dict[str, list[Any]], Answers]:
    answers = Answers()
    sc = scenario()
    events = SimWorld(sc, 1, workload=LockWorkload(sc, writer), store=ScriptedStore(answers)).run()
    return steps(events), answers


def _real() -> tuple[dict[str, list[Any]], Answers]:
    answers = Answers()
    sc = scenario()
    events = RealWorld(sc, {"w1": ScriptedBackend(answers)}, workload=LockWorkload(sc, writer),
                       duration_ms=1_500).run()
    return steps(events), answers


def test_both_worlds_decide_alike() -> None:
    sim, sim_answers = _sim()
    real, real_answers = _real()
    assert sim == real
    assert sim_answers.seen == real_answers.seen and not sim_answers.queue and not real_answers.queue


def test_the_decisions_are_the_client_policy() -> None:
    sim, _ = _sim()
    calls = [v for (_, f, v) in sim["w1"] if f == "call"]
    assert [c["op"] for c in calls] == [type(e).__name__ for e, _ in SCRIPT]
    assert [(c["outcome"], c["attempts"], c["ambiguous"]) for c in calls] == [
        ("PRECONDITION_FAILED", 2, True),  # a lost reply, then 412: maybe our own write
        ("UNAVAILABLE", 3, False),  # answered refusals, retries run out
        ("OK", 2, False),
        ("OK", 3, True),  # a timed-out write before the success
        ("TIMEOUT", 3, False),  # reads are never ambiguous
        ("OK", 1, False),
    ]
    by_f = {f: v for (_, f, v) in sim["w1"] if f in ("sleep", "cancel", "spawn")}
    assert by_f["spawn"] == {"started": True}
    assert by_f["sleep"] == {"interrupted": True}
    assert by_f["cancel"] == {"alive_before": True, "alive_after": False}


def test_the_contract_sees_a_different_policy() -> None:
    """Not vacuous: a world whose client retries less decides differently."""
    import dataclasses

    sim, _ = _sim()
    answers = Answers()
    sc = scenario()
    sc = dataclasses.replace(sc, storage=dataclasses.replace(sc.storage, sdk_retries=1))
    events = SimWorld(sc, 1, workload=LockWorkload(sc, writer), store=ScriptedStore(answers)).run()
    assert steps(events) != sim
