"""Shortest counterexamples proved by depth-bounded search: the least violating depth found with state
hashing and symmetry is the plain tree's, a known counterexample is found at its length and not one
below, partial-order reduction is shown to lengthen paths, and ``--shortest`` says what it proved."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from cli.main import main as hcc
from model.explore import NO_REDUCTION, WHOLE_GRAPH, Bounds, Reductions, explore
from model.explore.counterexample import replay, replays_exactly, scenario_of
from model.explore.deepen import deepen
from model.explore.search import Search, search_bounds

SMALL = Bounds(writers=2, holds=1, steps_per_hold=1, work_ms=1000, phases=False)
TABLE = Bounds(holds=1, steps_per_hold=1, work_ms=1_000)  # the README table's bounds (start phases on)
# the plain tree (no state merged), roots up to a time shift as in the reduced search: the shift changes how
# many root decisions a path has (tests/test_explore_time_shift.py compares it with every root)
TREE = dataclasses.replace(NO_REDUCTION, shifts=True)
LOST_REPLY = dataclasses.replace(SMALL, faults=1, fault_kinds=("lost-reply",), liveness_ms=2_000)

GRID = [
    dataclasses.replace(SMALL, faults=1, fault_kinds=("pause",)),
    dataclasses.replace(SMALL, faults=1, fault_kinds=("pause",), phases=True),
    LOST_REPLY,
]


@pytest.mark.parametrize("bounds", GRID, ids=lambda b: f"{','.join(b.fault_kinds)}-phases={b.phases}")
def test_hashing_and_symmetry_keep_the_least_violating_depth_of_the_plain_tree(bounds: Bounds) -> None:
    reduced = deepen(bounds, Reductions())  # partial-order reduction is switched off by deepen itself
    brute = deepen(bounds, TREE)  # every run up to each depth, no state merged
    assert reduced.reductions == WHOLE_GRAPH and brute.reductions == TREE
    for d in (reduced, brute):
        assert d.found is not None and d.found.found is not None
        # every level below the one that found it finished with nothing found
        assert [lv["complete"] for lv in d.levels] == [True] * len(d.levels)
        assert [lv["found"] for lv in d.levels[:-1]] == [None] * (len(d.levels) - 1)
        assert d.lower_bound == len(d.found.found.path) == d.levels[-1]["depth"]
    assert reduced.lower_bound == brute.lower_bound
    assert reduced.found.found.violation.kind == brute.found.found.violation.kind  # type: ignore[union-attr]


def test_the_one_pause_overlap_takes_6_decisions_and_not_5() -> None:
    bounds = dataclasses.replace(TABLE, faults=1)  # N = 2, K = 1, skew 0, the default fault kinds
    # 7 with every root: up to a time shift the second writer's start is no decision when the first's is not 0
    for red, least in ((Reductions(por=False), 6), (TREE, 6), (NO_REDUCTION, 7)):
        below = search_bounds(bounds, red, max_depth=least - 1)
        assert below.verdict == "bounded" and below.complete and below.cut and below.found is None, red
        at = search_bounds(bounds, red, max_depth=least)
        assert at.verdict == "violated" and at.complete and at.found is not None, red
        assert len(at.found.path) == least and at.found.violation.kind == "overlap", red
    deep = deepen(bounds, Reductions())
    assert deep.lower_bound == 6 and deep.found is not None and deep.found.found is not None
    replayed = replay(bounds.plan(), deep.found.found.path)
    assert replayed.violation is not None and replayed.violation.kind == "overlap"
    assert [what for what, _spec in replayed.run.injected] == ["pause"]
    assert replays_exactly(scenario_of(replayed, bounds.decisive_checkers()), replayed) == (True, None)


def test_partial_order_reduction_lengthens_a_counterexample_and_deepening_proves_the_shorter() -> None:
    # hudi's lost acquire reply against a 2 s liveness bound: the full search's shortest path in the graph
    # that sleep and ample sets leave is 8 decisions; the whole graph has one of 6
    full = explore(LOST_REPLY)
    assert full.verdict == "violated" and full.complete and full.counterexample_length == 8
    assert not full.shortest_proved and full.lower_bound is None  # reduced graph: no proof
    res = explore(LOST_REPLY, shortest=True)
    assert res.counterexample_length == 6 and res.shortest_proved and res.lower_bound == 6
    assert res.found is not None and res.found.violation.kind == "liveness" and res.replays_exactly
    assert [lv["depth"] for lv in res.deepening] == list(range(7))
    # without partial-order reduction the complete search's Dijkstra path is the proof itself
    plain = explore(LOST_REPLY, WHOLE_GRAPH)
    assert plain.shortest_proved and plain.lower_bound == plain.counterexample_length == 6
    assert plain.deepening == []


class _FirstDepthOnly(dict):  # type: ignore[type-arg]
    """Depths of expansion that claim every state was expanded at depth -1: never expanded again."""

    reads = 0

    def __getitem__(self, key: object) -> int:
        _FirstDepthOnly.reads += 1
        return -1


def test_a_state_reached_again_with_more_budget_is_expanded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # with the depth bound, a state first expanded deep must be searched again when met shallower.  This
    # configuration: hudi, one 412 answered (not applied) to a conditional write of the lock file, against a
    # 1.5 s liveness bound.  Its least violation takes 15 decisions: the holder's expire write gets the 412,
    # unlock throws FAILED_TO_RELEASE and the lock file still names it, so the other writer waits 2 s for
    # the lease to lapse (validity + drift allowance).  Keeping each state's first expansion misses it.
    bounds = dataclasses.replace(SMALL, faults=1, fault_kinds=("412",), liveness_ms=1_500)
    below = search_bounds(bounds, Reductions(por=False), max_depth=14)
    assert below.verdict == "bounded" and below.complete and below.cut and below.found is None
    res = search_bounds(bounds, Reductions(por=False), max_depth=15)
    assert res.verdict == "violated" and res.complete
    assert res.found is not None and len(res.found.path) == 15 and res.found.violation.kind == "liveness"
    replayed = replay(bounds.plan(), res.found.path, res.reductions)
    assert [what for what, _spec in replayed.run.injected] == ["error"]
    assert any(e.f == "release-acquired-by-others" for e in replayed.events)
    init = Search.__init__

    def first_depth_only(self: Search, *args: Any, **kw: Any) -> None:
        init(self, *args, **kw)
        self.seen_at = _FirstDepthOnly()

    monkeypatch.setattr(Search, "__init__", first_depth_only)
    monkeypatch.setattr(_FirstDepthOnly, "reads", 0)
    broken = search_bounds(bounds, Reductions(por=False), max_depth=15)
    assert _FirstDepthOnly.reads > 0  # states were reached again...
    assert broken.complete and broken.found is None  # ...and without expanding them again, it is missed


def test_deepening_after_the_full_search_stops_at_its_budget() -> None:
    bounds = dataclasses.replace(SMALL, faults=1, fault_kinds=("pause",), max_states=3)
    cut = explore(bounds)
    assert cut.verdict == "incomplete" and not cut.complete and not cut.shortest_proved
    res = explore(bounds, shortest=True)
    assert res.verdict == "violated" and not res.complete  # the full search did not finish...
    assert res.shortest_proved and res.lower_bound == res.counterexample_length == 10  # ...the proof did
    assert res.replays_exactly
    out = res.to_json()
    assert out["shortest_proved"] is True and out["lower_bound"] == 10 and out["deepening"][-1]["found"] == 10


def test_cli_shortest(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore-lock", "--writers", "2", "--steps", "1", "--no-phases", "--faults", "1",
            "--fault-kinds", "lost-reply", "--liveness-ms", "2000", "--json"]
    assert hcc([*argv, "--shortest"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"] == "violated" and got["shortest_proved"] is True and got["lower_bound"] == 6
    assert got["counterexample_length"] == 6 and got["violation"]["replays_exactly_in_simulation"] is True
    assert hcc(argv) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["shortest_proved"] is False and got["lower_bound"] is None
    assert got["counterexample_length"] == 8  # the reduced graph's shortest
    code = hcc([*argv, "--shortest", "--shortest-seconds", "zero"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "--shortest-seconds" in err and "zero" in err
