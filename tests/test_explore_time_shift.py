"""States up to a shift in time: runs that differ only by a uniform shift of every writer's start, or of
every clock, reach the same state keys once the writers have started, so the explorer enumerates root
decisions up to such a shift (the least start and the least clock offset are 0) where nothing reads
absolute time (``run.time_shift_breaks``), and keeps every root where something does, naming it."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import pytest

from model.explore import Bounds, Reductions, explore
from model.explore.bounds import Plan
from model.explore.nbcc import NbccBounds
from model.explore.run import Run, StepInfo, time_shift_breaks

FENCED = Bounds(variant="fenced", writers=2, faults=1, skew_ms=250)


class KeysAtPoints:
    """A driver that takes a fixed, varied sequence of options and keeps the state key at each step decision
    once every writer has started (a started writer forgets its start)."""

    def __init__(self) -> None:
        self.keys: list[Hashable] = []
        self.taken = 0

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        if kind == "step" and _all_started(run):
            self.keys.append(run.key()[0])
        self.taken += 1
        return (self.taken * 7) % options  # the same choices for both runs: they meet the same decisions


def _all_started(run: Run) -> bool:
    assert run.kernel is not None
    for node in run.kernel.nodes.values():
        task = node.tasks.get("writer")
        frame = task.body.gi_frame if task is not None else None
        if frame is not None and not frame.f_locals["self"].started:
            return False
    return True


def _keys(plan: Plan) -> list[Hashable]:
    driver = KeysAtPoints()
    Run(plan, (), driver).go()
    return driver.keys


@pytest.mark.parametrize(("shifted", "what"), [
    ({"phases": (500,)}, "every writer starts 500 ms later"),
    ({"offsets": (250,)}, "every clock is 250 ms ahead"),
])
def test_runs_shifted_alike_reach_the_same_keys(shifted: dict[str, tuple[int, ...]], what: str) -> None:
    plan = FENCED.plan()
    base = dataclasses.replace(plan, phases=(0,), offsets=(0,), roots={})
    moved = dataclasses.replace(base, **shifted, roots={})
    mine, theirs = _keys(base), _keys(moved)
    assert len(mine) > 5, what
    assert mine == theirs, what


@pytest.mark.parametrize("bounds", [
    pytest.param(Bounds(variant="fenced", writers=2, skew_ms=250), id="fenced-skew-250"),
    pytest.param(Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",)), id="hudi-pause",
                 marks=pytest.mark.slow),
    pytest.param(Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",), skew_ms=250),
                 id="hudi-pause-skew-250", marks=pytest.mark.slow),
])
def test_roots_up_to_a_shift_keep_the_verdict_findings_and_shortest(bounds: Bounds) -> None:
    """Against every root (``shifts`` off): the same verdict, kind and findings; the shortest counterexample
    is as long, or shorter by the root decisions the shift removes (the last writer's start and offset)."""
    every = Reductions(hashing=True, symmetry=False, por=False, shifts=False, dominance=False)
    up_to = dataclasses.replace(every, shifts=True)
    a, b = explore(bounds, every), explore(bounds, up_to)
    assert a.complete and b.complete and a.verdict == b.verdict
    assert sorted(a.findings) == sorted(b.findings)
    assert b.states < a.states
    if a.found is None:
        assert b.found is None
        return
    assert b.found is not None and a.found.violation.kind == b.found.violation.kind
    assert a.shortest_proved and b.shortest_proved
    removed = a.counterexample_length - b.counterexample_length  # type: ignore[operator]
    assert 0 <= removed <= 2


def test_what_reads_absolute_time_is_named_and_keeps_every_root() -> None:
    assert time_shift_breaks(FENCED.plan()) == ()
    nbcc = NbccBounds(writers=1)
    assert time_shift_breaks(nbcc.plan()) == ("absolute_time: the nbcc plan names absolute instants",)
    crash = Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("crash",))
    assert time_shift_breaks(crash.plan()) == ("crash: the crash instants are absolute times",)
