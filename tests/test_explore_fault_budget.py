"""The two reductions of the fault budget (issue 36): a lost reply on a read is offered as its timeout only,
and a state dominated by one expanded with the same core and at least its budget is not expanded.

Their agreement with brute force is in ``tests/test_explore_brute_force.py`` (rows of reads' faults, one
and two faults); here what each one does and where it stops."""

from __future__ import annotations

import dataclasses

from model.explore import WHOLE_GRAPH, Bounds, Reductions, explore
from model.explore.deepen import deepen
from model.explore.level import search_levels
from model.explore.run import Run, covers, split_budget
from model.explore.search import Search, search_bounds

READS = Bounds(variant="hudi", writers=1, faults=2, fault_kinds=("lost-reply", "timeout", "412"))


def _read_faults(bounds: Bounds, reductions: Reductions) -> list[str]:
    return [kind for kind, _ in Run(bounds.plan(), reductions=reductions).fault_options[False]]


def test_a_read_is_offered_a_timeout_and_not_also_a_lost_reply() -> None:
    assert _read_faults(READS, Reductions()) == ["timeout"]
    assert _read_faults(READS, Reductions(lost_read_is_timeout=False)) == ["timeout", "lost-reply"]
    # a write's lost reply is not a timeout: the write was applied
    assert [k for k, _ in Run(READS.plan()).fault_options[True]] == ["412", "timeout", "lost-reply"]
    # without the timeout among the kinds, the lost reply is the only way to lose a read's answer
    alone = dataclasses.replace(READS, fault_kinds=("lost-reply",))
    assert _read_faults(alone, Reductions()) == ["lost-reply"]


def test_a_budget_covers_one_with_fewer_faults_left_no_earlier_end_and_more_classes_sent() -> None:
    a = ("w1", "lock", "read")
    b = ("w1", "lock", "write")
    assert covers((2, (), 0), (1, (), 0))
    assert not covers((1, (), 0), (2, (), 0))  # fewer faults left
    assert not covers((2, (), 500), (1, (), 0))  # its faults' effects end later: a liveness gap counts less
    assert covers((2, (), 0), (1, (), 500))
    assert covers((1, (a,), 0), (1, (a, b), 0))  # a fault can go on the first request of each class...
    assert not covers((1, (a, b), 0), (1, (a,), 0))  # ...so one that sent more has fewer places for it
    assert covers((1, (a, b), 0), (0, (), 0))  # with none left, where one could go does not matter


def test_the_budget_is_the_keys_faults_left_classes_sent_and_end_of_faults() -> None:
    key = ("head", "store", "hops", (1, ("window",), ("sent",), 250), "waiting", "progress", None)
    core, budget = split_budget(key)
    assert budget == (1, ("sent",), 250)
    assert core == ("head", "store", "hops", ("window",), "waiting", "progress", None)


def _dominated(bounds: Bounds, reductions: Reductions) -> tuple[str, int, int, list[str]]:
    search = Search(bounds, reductions, None, None, False, None)
    verdict = search.run()
    return verdict, len(search.seen), search.dominated, sorted(search.findings)


def test_dominance_leaves_states_unexpanded_and_keeps_the_verdict_and_findings() -> None:
    bounds = Bounds(variant="hudi", writers=2, faults=2, fault_kinds=("lost-reply", "timeout", "412"),
                    phases=False)
    verdict, states, dominated, findings = _dominated(bounds, Reductions())
    plain_verdict, plain_states, none, plain_findings = _dominated(bounds, Reductions(dominance=False))
    assert none == 0 and dominated > 0
    assert (verdict, findings) == (plain_verdict, plain_findings) and states < plain_states


def test_the_searches_that_need_every_state_run_without_dominance() -> None:
    # the depth-bounded search and the deepening (a state met with fewer decisions must be expanded again)
    assert deepen(READS, Reductions(), max_seconds=60).reductions == WHOLE_GRAPH
    bounded = search_bounds(READS, Reductions(), max_depth=4)
    assert bounded.verdict == "bounded"
    # the level search keeps no budgets; its result says dominance was off
    assert search_levels(READS, Reductions()).reductions.dominance is False
    # a complete search with it on proves no counterexample shortest (a dominated state may be the nearer)
    pause = Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",))
    found = explore(pause, Reductions(por=False))
    assert found.verdict == "violated" and not found.shortest_proved
    whole = explore(pause, WHOLE_GRAPH)
    assert whole.shortest_proved
