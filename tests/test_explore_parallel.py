"""The level-by-level search (issue 25 item 3): the same verdict, distinct states and counterexample in one
process, in worker processes (``--jobs``) and on Spark (``--master``); with partial-order reduction off, the
depth-first search's states and proved shortest counterexample."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.main import main
from engines.explore_pool import ProcessPool, joined, split
from model.explore import Bounds, ExploreResult, explore
from model.explore.bounds import WHOLE_GRAPH, Reductions
from model.explore.level import Expanded, FrontierNode, InProcess, Pool, search_levels
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.explore.search import search_bounds

# small configurations: the lock's fenced variant (holds), Hudi's provider with one pause (violated: a writer
# paused while it holds the lock loses it and writes anyway), OCC of one writer, NBCC of two (both hold)
FENCED = Bounds(variant="fenced", writers=2, faults=0)
HUDI_PAUSE = Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",), phases=False)
CONFIGS = [pytest.param(FENCED, id="lock-fenced"), pytest.param(HUDI_PAUSE, id="lock-hudi-pause"),
           pytest.param(OccBounds(phases=False, writers=1), id="occ-1-writer"),
           pytest.param(OccBounds(phases=False, cc="none"), id="occ-cc-none"),
           pytest.param(NbccBounds(), id="nbcc")]


def _same(a: ExploreResult, b: ExploreResult) -> None:
    """Two searches of one configuration agree on everything but time and where they ran."""
    assert (a.verdict, a.states, a.complete, a.counterexample_length) == \
        (b.verdict, b.states, b.complete, b.counterexample_length)
    assert (a.found and a.found.path) == (b.found and b.found.path)  # the very same path, not only its length
    assert sorted(a.findings) == sorted(b.findings)
    assert (a.runs, a.transitions, a.depth) == (b.runs, b.transitions, b.depth)


@pytest.mark.parametrize("bounds", CONFIGS)
def test_jobs_1_and_2_agree_and_the_verdict_is_the_depth_first_searchs(bounds: Bounds) -> None:
    one = search_levels(bounds, pool=InProcess())
    with ProcessPool(2, min_nodes=1) as two:  # every level goes to the workers, in batches
        _same(one, search_levels(bounds, pool=two))
    assert one.complete and one.verdict == search_bounds(bounds).verdict


@pytest.mark.parametrize("bounds", [pytest.param(FENCED, id="lock-fenced"),
                                    pytest.param(HUDI_PAUSE, id="lock-hudi-pause")])
def test_without_partial_order_reduction_the_states_and_shortest_path_are_the_depth_first_searchs(
        bounds: Bounds) -> None:
    # both search the whole graph of hashed states: the same set, and Dijkstra over it proves one shortest
    level, dfs = search_levels(bounds, WHOLE_GRAPH), search_bounds(bounds, WHOLE_GRAPH)
    assert (level.verdict, level.states, level.counterexample_length, level.shortest_proved) == \
        (dfs.verdict, dfs.states, dfs.counterexample_length, dfs.shortest_proved)
    if dfs.found is not None:
        assert level.shortest_proved and level.lower_bound == dfs.lower_bound


@pytest.mark.slow
def test_hudis_provider_with_one_fault_is_violated_at_the_proved_shortest_6_decisions() -> None:
    # the README table's row hudi N = 2, K = 1: the level-by-level search without partial-order reduction
    # proves 6 itself (7 with every root: one root decision is gone up to a time shift), and its path
    # replays (counterexample.replay) into the same history in simulation
    with ProcessPool(2) as pool:
        res = explore(Bounds(variant="hudi", writers=2, faults=1), WHOLE_GRAPH, pool=pool)
    assert res.verdict == "violated" and res.complete and res.shortest_proved
    assert res.counterexample_length == 6 and res.lower_bound == 6
    assert res.replays_exactly is True and res.counterexample


def test_a_budget_stops_it_at_the_same_state_for_any_pool() -> None:
    one = search_levels(FENCED, WHOLE_GRAPH, max_states=100)  # of 498
    with ProcessPool(2, min_nodes=1) as two:
        cut = search_levels(FENCED, WHOLE_GRAPH, two, max_states=100)
    assert one.verdict == cut.verdict == "incomplete" and not one.complete
    assert one.states == cut.states == 100


def test_it_needs_state_hashing() -> None:
    with pytest.raises(ValueError, match="hashing"):
        search_levels(FENCED, Reductions(hashing=False))


def test_batches_keep_the_order_of_the_nodes_and_stop_at_one_cut_short() -> None:
    nodes = [FrontierNode((i,)) for i in range(7)]
    batches = split(nodes, 3)
    assert [len(b) for b in batches] == [3, 2, 2] and [n for b in batches for n in b] == nodes
    assert split(nodes[:2], 8) == [[nodes[0]], [nodes[1]]]
    whole = [[Expanded(runs=n.path[0]) for n in b] for b in batches]
    assert [e.runs for e in joined(batches, whole)] == list(range(7))
    whole[1] = whole[1][:1]  # the deadline cut the second batch after its first node
    assert [e.runs for e in joined(batches, whole)] == [0, 1, 2, 3]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    try:
        code = main(["explore", "--protocol", "lock", "--variant", "hudi", "--writers", "2", "--faults", "1",
                     "--fault-kinds", "pause", "--no-phases", *argv])
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.startswith("{") else {}, err


def test_hcc_explore_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    code1, one, _ = _cli(capsys, "--jobs", "1", "--json", "--quiet")
    code2, two, _ = _cli(capsys, "--jobs", "2", "--json", "--quiet")
    assert code1 == code2 == 1 and one["verdict"] == two["verdict"] == "violated"
    for key in ("states", "counterexample_length", "counterexample", "runs"):
        assert one[key] == two[key], key
    assert two["violation"]["replays_exactly_in_simulation"] is True
    code, _, err = _cli(capsys, "--jobs", "0")
    assert code == 2 and "--jobs" in err and "'0'" in err
    code, _, err = _cli(capsys, "--jobs", "2", "--no-hashing")
    assert code == 2 and "--jobs" in err and "hashing" in err
    assert main(["explore", "--protocol", "cow", "--jobs", "2"]) == 2
    assert "--jobs: is not an option of --protocol cow" in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.slow
def test_spark_local_gives_what_one_process_gives() -> None:
    pytest.importorskip("pyspark")
    from engines.explore_pool import SparkPool

    with SparkPool("local[2]", min_nodes=1) as spark:  # every level is a Spark job
        pool: Pool = spark
        for bounds in (FENCED, HUDI_PAUSE, NbccBounds()):
            _same(search_levels(bounds, pool=InProcess()), search_levels(bounds, pool=pool))
