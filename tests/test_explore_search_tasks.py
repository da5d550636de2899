"""Conflicts judged per task: two steps of one node's different tasks commute when neither writes what the
other read or wrote of the declared shared state (``model/explore/shared.py``), recorded as each step ran.

``RacyRenewal`` is a hypothetical protocol (a toy, not Hudi): a node's writer renews a lease in two steps at
one instant (it marks the provider's lease invalid, yields, marks it valid again) while its heartbeat, due at
that instant, reads the lease; the heartbeat seeing it invalid is a violation. Only the order writer,
heartbeat, writer shows it, so a relation that called the heartbeat's read independent of the writer's
write (as one that ignored what they share would) lets a sleep set prune it: the search would say "holds".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Hashable, Mapping
from typing import Any

import pytest

import model.explore.search as search
from model.checkers.verdict import Verdict, Violation
from model.config import Scenario
from model.explorable import Keyer
from model.explore import Bounds, explore
from model.explore.bounds import Reductions
from model.explore.run import StepInfo
from model.explore.shared import Footprint, UndeclaredShared
from model.runtime.effects import Record, Sleep, Spawn
from model.runtime.history import Event
from model.runtime.kernel import Workload, WriterContext
from model.runtime.objectstore import StoredObject
from model.runtime.sim import SimWorld
from model.workloads.lock import LockWorkload

BRUTE = Reductions(hashing=True, symmetry=False, por=False, lost_read_is_timeout=False, dominance=False)


class ToyProvider:
    """A provider reduced to the lease its writer and heartbeat share."""

    __explore_shared__ = {"valid": "r", "name": "c"}

    def __init__(self) -> None:
        self.name = "toy"
        self.valid = True
        self.note = ""  # the writer's own (undeclared): no other task may touch it

    def __explore_state__(self, k: Keyer) -> Hashable:
        return (self.name, self.valid, self.note)


def _heartbeat(p: ToyProvider, touch: str) -> Generator[Any, Any, None]:
    yield Sleep(1000)
    if touch == "undeclared":
        p.note = "heartbeat"  # refused: ``note`` is not declared shared
    elif touch == "constant":
        p.name = "renamed"  # refused: ``name`` is declared constant
    if not p.valid:
        yield Record("torn", "info", {"saw": "invalid"})


def _writer(touch: str) -> Any:
    def writer(ctx: WriterContext) -> Generator[Any, Any, None]:
        p = ToyProvider()
        p.note = "writer"
        yield Spawn("heartbeat", _heartbeat(p, touch))
        yield Sleep(1000)
        p.valid = False  # the renewal, in two steps of one instant with no effect in between
        yield Sleep(0)
        p.valid = True
    return writer


@dataclasses.dataclass(frozen=True)
class RacyWorkload(LockWorkload):
    @property
    def shared_state(self) -> tuple[type, ...] | None:
        return (ToyProvider,)


@dataclasses.dataclass(frozen=True)
class RacyRenewal(Bounds):
    """A hypothetical protocol (see the module doc): violated when the heartbeat sees the lease invalid."""

    writers: int = 1
    phases: bool = False
    touch: str = ""  # "undeclared" / "constant": the heartbeat also touches what it may not

    def kernel_workload(self, scenario: Scenario) -> Workload:
        return RacyWorkload(scenario, factory=_writer(self.touch))

    def verdict(self, events: list[Event], objects: Mapping[str, StoredObject]) -> Verdict:
        torn = [e for e in events if e.f == "torn"]
        return Verdict(tuple(Violation("torn-lease", f"{e.process} saw the lease invalid", (), {})
                             for e in torn[:1]), ())

    def simulate(self, replay: Any) -> list[Event]:
        return SimWorld(replay, workload=self.kernel_workload(replay)).run()


RACY = RacyRenewal()


def test_the_per_task_search_finds_the_race_on_a_provider_field() -> None:
    res = explore(RACY, shortest=True)
    assert res.verdict == "violated" and res.complete and res.found is not None
    assert res.found.violation.kind == "torn-lease" and res.replays_exactly
    steps = [r["step"].split(": ", 1)[1] for r in res.counterexample if r["decision"]]
    assert steps == ["decide step w1/writer wakes", "decide step w1/heartbeat wakes"]
    brute = explore(RACY, BRUTE, exact=True)
    assert brute.verdict == "violated" and brute.counterexample_length == res.counterexample_length


def _node_blind(a: StepInfo, b: StepInfo, relation: Any = search.independent) -> bool:
    """A wrong relation: every two local steps of one node's different tasks commute."""
    if a.op is None and b.op is None and a.owner == b.owner != "*" and a.sid[:4] != b.sid[:4]:
        return True
    return bool(relation(a, b))


def test_a_relation_blind_to_what_the_tasks_share_misses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "independent", _node_blind)
    res = explore(RACY)
    assert res.verdict == "holds"  # the sleep set pruned the heartbeat between the writer's two steps


def test_two_tasks_steps_commute_only_when_their_footprints_do_not_conflict() -> None:
    def step(task: str, reads: set[tuple[int, str]], writes: set[tuple[int, str]]) -> StepInfo:
        fp = Footprint(frozenset(reads), frozenset(writes))
        return StepInfo(("w1", task, 1, 0, "timer"), "w1", None, fp)

    writer = step("writer", {(3, "lock")}, {(3, "_monitor")})
    reader = step("heartbeat", {(3, "_monitor")}, set())
    other = step("heartbeat", {(3, "lock")}, {(4, "spawned")})
    assert not search.independent(writer, reader) and not search.independent(reader, writer)
    assert search.independent(writer, other) and search.independent(other, writer)
    assert not search.independent(writer, dataclasses.replace(other, footprint=None))  # unknown: dependent
    same_task = step("writer", set(), {(9, "x")})
    assert not search.independent(writer, same_task)
    assert search.independent(writer, dataclasses.replace(reader, owner="w2", sid=("w2", *reader.sid[1:])))


@pytest.mark.parametrize(("touch", "names"), [
    ("undeclared", ["ToyProvider.note", "__explore_shared__ does not declare", "w1/heartbeat"]),
    ("constant", ["ToyProvider.name is declared constant"]),
])
def test_an_undeclared_shared_field_is_refused_by_name(touch: str, names: list[str]) -> None:
    with pytest.raises(UndeclaredShared) as e:
        explore(RacyRenewal(touch=touch))
    for name in names:
        assert name in str(e.value)


def test_the_lock_rows_keep_their_verdicts_with_fewer_states() -> None:
    """The lock's provider and kernel objects declared: fenced N = 2, K = 1 holds in fewer states than with
    every two steps of one node dependent (the relation before; 1,751 states)."""
    res = explore(Bounds(variant="fenced", writers=2, faults=1))
    assert res.verdict == "holds" and res.complete and res.states < 1_751
