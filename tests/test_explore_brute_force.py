"""The explorer's reductions are sound on small bounds of every protocol: the reduced search (hashing,
symmetry, partial-order reduction: ample and sleep sets) agrees with brute force on the verdict, the
violation's kind, the findings and the shortest counterexample's length (the reduced search's proved by
iterative deepening).

Brute force is a search that merges only identical states (exact keys, no fingerprints) and explores every
order (no symmetry, no sleep or ample sets); where the tree of runs is small enough, also the search with
every reduction off (``TREE``: no state merged either, so the state key is checked too). With two
writers the tree does not finish within minutes (58,488 states of the lock's in 60 s against 730 with
hashing), nor with one writer and a pause (19,312 in 60 s), so those rows merge identical states.

And the dependence that a sleep set relies on: a listing conflicts with every write and delete under its
prefix. It once compared keys exactly, so a sleep set could prune the order in which a listing saw a new
file (NBCC storage listing 258 states, now 278; OCC v5 1,184, now 1,330). No row of the real protocols'
tables changed its verdict, so ``TornListing`` below is a hypothetical protocol (a toy, not Hudi) built to
need that order: one node lists ``t/`` while its writer task puts ``t/1`` then ``t/2`` at the same instant,
and a listing that shows ``t/1`` without ``t/2`` is a violation. On the old relation the reduced search
said "holds" there (3 states) where brute force finds the violation in 3 decisions. Its twin for conflicts
judged per task (``tests/test_explore_search_tasks.py``): a writer and its heartbeat racing on a provider
field, which a relation blind to what a node's tasks share would prune the same way."""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from typing import Any

import pytest
from test_explore_search_tasks import RACY

from model.checkers.verdict import Verdict, Violation
from model.config import Scenario
from model.explore import NO_REDUCTION, Bounds, ExploreResult, explore
from model.explore.bounds import Reductions
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.explore.run import StepInfo
from model.explore.search import independent
from model.runtime.effects import ListPrefix, Put, Record, Spawn
from model.runtime.history import Event
from model.runtime.kernel import Workload, WriterContext
from model.runtime.objectstore import StoredObject
from model.runtime.sim import SimWorld
from model.workloads.lock import LockWorkload

BRUTE = Reductions(hashing=True, symmetry=False, por=False, lost_read_is_timeout=False, dominance=False)
# the tree of runs: no state merged; roots stay taken up to a time shift, as in the reduced search, since
# that changes the number of root decisions (tests/test_explore_time_shift.py compares it with every root)
TREE = dataclasses.replace(NO_REDUCTION, shifts=True)


def _lister() -> Generator[Any, Any, None]:
    listed = yield ListPrefix("t/")
    yield Record("listed", "ok", sorted((listed.body or b"").decode().split()))


def _torn_writer(ctx: WriterContext) -> Generator[Any, Any, None]:
    """A node's lister task and its writer's two puts, all due at time 0 (zero latency)."""
    yield Spawn("lister", _lister())
    yield Put("t/1", b"1")
    yield Put("t/2", b"2")


@dataclasses.dataclass(frozen=True)
class TornListing(Bounds):
    """A hypothetical protocol (see the module doc): violated when a listing shows ``t/1`` but not ``t/2``."""

    writers: int = 1
    phases: bool = False

    def kernel_workload(self, scenario: Scenario) -> Workload:
        return LockWorkload(scenario, factory=_torn_writer)

    def verdict(self, events: list[Event], objects: Mapping[str, StoredObject]) -> Verdict:
        torn = [e for e in events if e.f == "listed" and "t/1" in e.value and "t/2" not in e.value]
        return Verdict(tuple(Violation("torn-listing", f"{e.process} listed {e.value}", (), {})
                             for e in torn[:1]), ())

    def simulate(self, replay: Any) -> list[Event]:
        return SimWorld(replay, workload=self.kernel_workload(replay)).run()


def _agree(reduced: ExploreResult, brute: ExploreResult) -> None:
    assert reduced.complete and brute.complete
    assert reduced.verdict == brute.verdict
    assert sorted(reduced.findings) == sorted(brute.findings)
    if brute.found is None:
        assert reduced.found is None
        return
    assert reduced.found is not None and reduced.found.violation.kind == brute.found.violation.kind
    # without sleep sets the Dijkstra path is a shortest one; the deepening proves the reduced search's
    assert brute.shortest_proved and reduced.shortest_proved
    assert reduced.counterexample_length == brute.counterexample_length


TORN = TornListing()
ANCHOR = dict(variant="hudi-1.2.0", writers=1, batches=2, buckets=2, failed_attempts=1)
LOST_REPLY = dict(faults=1, fault_kinds=("lost-reply",))
READ_FAULTS = dict(faults=2, fault_kinds=("lost-reply", "timeout", "412"))
# (bounds, whether the tree of runs with every reduction off is small enough to search too)
CASES = [
    pytest.param(TORN, True, id="toy-listing-sees-a-concurrent-write"),
    pytest.param(RACY, True, id="toy-writer-and-heartbeat-race-on-a-provider-field"),
    pytest.param(Bounds(variant="hudi", writers=2), False, id="lock-hudi-K0"),
    pytest.param(Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",)), False,
                 id="lock-hudi-pause"),
    pytest.param(Bounds(variant="hudi", writers=1, **LOST_REPLY), True, id="lock-1-writer-lost-reply"),
    # a read's lost reply taken as its timeout, and states dominated by one with more faults left
    pytest.param(Bounds(variant="hudi", writers=1, **READ_FAULTS), True,
                 id="lock-1-writer-2-faults-of-reads"),
    pytest.param(Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("lost-reply", "timeout"),
                        phases=False), False, id="lock-2-writers-lost-reply-or-timeout"),
    pytest.param(OccBounds(variant="hudi", writers=1), False, id="occ-hudi-metadata-table"),
    pytest.param(OccBounds(variant="hudi", writers=1, metadata_table=False), False,
                 id="occ-hudi-storage-listing"),
    pytest.param(OccBounds(variant="hudi", writers=1, metadata_table=False, phases=False, **LOST_REPLY),
                 False, id="occ-hudi-storage-listing-lost-reply", marks=pytest.mark.slow),
    pytest.param(OccBounds(variant="vanlightly-v5", writers=1, **LOST_REPLY), True, id="occ-v5-lost-reply"),
    pytest.param(NbccBounds(**ANCHOR, metadata_table=False), False, id="nbcc-anchor-storage-listing"),
    pytest.param(NbccBounds(**ANCHOR, metadata_table=True), False, id="nbcc-anchor-metadata-table"),
    pytest.param(NbccBounds(variant="hudi", writers=1, metadata_table=False, **LOST_REPLY), False,
                 id="nbcc-storage-listing-lost-reply"),
    pytest.param(NbccBounds(variant="hudi", writers=1, metadata_table=True, **LOST_REPLY), False,
                 id="nbcc-metadata-table-lost-reply"),
    pytest.param(OccBounds(variant="vanlightly-v5", writers=2, cc="none", phases=False), False,
                 id="occ-v5-2-writers-no-cc", marks=pytest.mark.slow),
    pytest.param(NbccBounds(variant="hudi", writers=2, metadata_table=False), False,
                 id="nbcc-2-writers-storage-listing", marks=pytest.mark.slow),
    pytest.param(OccBounds(variant="vanlightly-v5", writers=2, cc="pessimistic", file_groups=2,
                           pk_check=False), False, id="occ-v5-pessimistic", marks=pytest.mark.slow),
    pytest.param(OccBounds(variant="hudi", writers=1), True, id="occ-hudi-tree", marks=pytest.mark.slow),
    pytest.param(NbccBounds(variant="hudi", writers=1, metadata_table=False, faults=1,
                            fault_kinds=("lost-reply", "timeout")), False,
                 id="nbcc-storage-listing-lost-reply-or-timeout", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("bounds", "tree"), CASES)
def test_the_reduced_search_agrees_with_brute_force(bounds: Bounds, tree: bool) -> None:
    reduced = explore(bounds, shortest=True, shortest_seconds=600)  # a loaded machine: the slow rows need it
    brute = explore(bounds, BRUTE, exact=True)
    _agree(reduced, brute)
    assert reduced.states <= brute.states
    if tree:
        _agree(reduced, explore(bounds, TREE))


def test_the_toy_is_violated_only_where_the_listing_runs_between_the_puts() -> None:
    res = explore(TORN, shortest=True)
    assert res.verdict == "violated" and res.found is not None and res.replays_exactly
    steps = [r["step"] for r in res.counterexample if r["decision"]]
    assert [s.split(": ", 1)[1] for s in steps] == [
        "decide step Put(t/1) of w1/writer reaches the store",
        "decide step ListPrefix(t/) of w1/lister reaches the store",
        "decide step the reply to w1/lister's ListPrefix(t/) arrives"]
    assert res.found.violation.message == "w1/lister listed ['t/1']"


def _arrival(key: str, write: bool, listing: bool = False, owner: str = "w1") -> StepInfo:
    return StepInfo(("req", owner, key), owner, (key, write, "", listing))


def test_a_listing_depends_on_every_write_under_its_prefix() -> None:
    listing = _arrival("table/.hoodie/timeline/", False, listing=True, owner="w1")
    write = _arrival("table/.hoodie/timeline/0001.deltacommit", True, owner="w2")
    elsewhere = _arrival("table/data/f1.log", True, owner="w2")
    read = _arrival("table/.hoodie/timeline/0001.deltacommit", False, owner="w2")
    assert not independent(listing, write) and not independent(write, listing)
    assert independent(listing, elsewhere) and independent(listing, read)
