"""The OCC and NBCC explorers reach their checkers on known-unsafe configurations (issue 25), each found path
replays byte for byte in simulation, and the README tables' commands explore their rows' bounds.

Known unsafe: Hudi 1.2.1's OCC writer (one new key inserted into two file groups by two writers: the
duplicate key, read with two values); Vanlightly's v5 writer without concurrency control (a lost update);
Hudi 1.2.1's NBCC ``HoodieFileGroup`` with storage listing and a failed first log (issue #19774's anchor).
Each search stops at its first violation (``first=True``) or is small enough to finish in a second.
"""

from __future__ import annotations

import dataclasses
import json
import shlex

import pytest

from cli.explore import parse_bounds
from cli.explore_command import command_of
from cli.main import build_parser, main
from model.explore import Bounds, ExploreResult, explore
from model.explore.counterexample import abbreviate, replay, step_table
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.nbcc.sim_checks import check_history

# one writer, two deltacommits into two file groups, the second failing once after its log, readers listing
# storage: the failed log is the first of the log-only second group (#19774, Hudi 1.2.0's HoodieFileGroup)
ANCHOR = NbccBounds(variant="hudi-1.2.0", writers=1, batches=2, buckets=2, failed_attempts=1,
                    metadata_table=False)


def _replays_byte_for_byte(bounds: Bounds, res: ExploreResult) -> None:
    """The found path's history, as JSON lines, is the simulated history of the scenario it became (up to
    where the explored path stopped, when it stopped at a decision point)."""
    assert res.found is not None and res.scenario is not None
    replayed = replay(bounds.plan(), res.found.path)
    mine = [json.dumps(e.to_json(), sort_keys=True) for e in replayed.events]
    theirs = [json.dumps(e.to_json(), sort_keys=True) for e in bounds.simulate(res.scenario)]
    assert mine == (theirs if replayed.ended else theirs[:len(mine)])
    assert len(mine) > 10 and res.replays_exactly


@pytest.mark.parametrize(("bounds", "kind", "says"), [
    # Hudi 1.2.1: SimpleConcurrentFileWritesConflictResolutionStrategy#hasConflict compares (partition,
    # fileId) sets only, so two inserts of one new key into two new file groups both commit
    (OccBounds(variant="hudi", phases=False, checkers=("duplicate-key",)), "duplicate-key", "2 file groups"),
    (OccBounds(variant="hudi", phases=False, checkers=("consistent-read",)), "consistent-read",
     "two file groups"),
    # v5 without concurrency control: the second commit overwrites the first writer's committed value
    (OccBounds(variant="vanlightly-v5", cc="none", phases=False), "consistent-read", "lost update"),
])
def test_each_occ_checker_is_reached_and_its_path_replays(bounds: OccBounds, kind: str, says: str) -> None:
    res = explore(bounds, first=True)
    assert res.verdict == "violated" and res.found is not None
    assert res.found.violation.kind == kind and says in res.found.violation.message
    _replays_byte_for_byte(bounds, res)


def test_occ_with_concurrency_control_holds_where_none_loses_an_update() -> None:
    # the same two v5 writers and one key with pessimistic file-group locks: no run of these bounds loses it
    res = explore(OccBounds(variant="vanlightly-v5", cc="pessimistic", phases=False))
    assert res.verdict == "holds" and res.complete and res.states > 0


def test_nbcc_anchor_bug_is_reached_under_storage_listing_and_replays() -> None:
    res = explore(ANCHOR)
    assert res.verdict == "violated" and res.complete and res.found is not None
    assert res.found.violation.kind == "membership"  # a completed log in no shown slice
    _replays_byte_for_byte(ANCHOR, res)
    # every NBCC check judges the same history: the hidden slice also breaks coverage, the snapshot and time
    # travel (the committed row is missing from both)
    replayed = replay(ANCHOR.plan(), res.found.path)
    plan = ANCHOR.table_plan()
    verdict = check_history(replayed.events, {k: o.body for k, o in replayed.run.objects.items()}, plan.base,
                            plan.nbcc_variant.slicing)
    assert {"membership", "coverage", "snapshot", "time-travel"} <= {v.kind for v in verdict.violations}


@pytest.mark.parametrize("safe", [
    dataclasses.replace(ANCHOR, variant="pr-19785"),  # PR #19785: the earliest completed log opens the slice
    dataclasses.replace(ANCHOR, metadata_table=True),  # the metadata table never lists the failed log
    dataclasses.replace(ANCHOR, failed_attempts=0),  # no failed log
])
def test_nbcc_anchor_needs_the_failed_log_storage_listing_and_the_1_2_0_file_group(safe: NbccBounds) -> None:
    res = explore(safe)
    assert res.verdict == "holds" and res.complete


@pytest.mark.parametrize("bounds", [
    OccBounds(variant="vanlightly-v5", writers=2, cc="pessimistic", file_groups=2, pk_check=False),
    OccBounds(writers=2, checkers=("duplicate-key",), metadata_table=False, phases=False),
    NbccBounds(variant="pr-19785", writers=2, metadata_table=False, faults=1,
               fault_kinds=("lost-reply", "timeout", "throttle-503")),
    NbccBounds(variant="hudi", writers=2, batches=2, buckets=2, failed_attempts=1),
    Bounds(variant="fenced", writers=3, faults=2, skew_ms=250, pause_ms=(1500,)),
])
def test_a_tables_command_explores_its_rows_bounds(bounds: Bounds) -> None:
    argv = shlex.split(command_of(bounds))
    assert argv[:2] == ["hcc", "explore"] and argv[-1] == "--shortest"
    args = build_parser().parse_args(argv[1:])
    assert parse_bounds(args, args.protocol) == bounds


def test_the_step_table_abbreviates_store_bodies() -> None:
    bounds = OccBounds(variant="hudi", phases=False, checkers=("duplicate-key",))
    res = explore(bounds, first=True)
    assert res.found is not None
    details = [r["detail"] for r in step_table(replay(bounds.plan(), res.found.path))]
    assert max(len(d) for d in details) < 400  # hoodie.properties alone is 742 characters
    assert any("chars sha256:" in d for d in details)
    assert [r["detail"] for r in res.counterexample] == details  # the JSON's counterexample alike
    assert abbreviate({"body": "x" * 81, "n": [3, "y" * 90]}) == {"body": abbreviate("x" * 81),
                                                                  "n": [3, abbreviate("y" * 90)]}
    assert abbreviate("x" * 80) == "x" * 80 and abbreviate("x" * 81) != abbreviate("y" * 81)


def test_an_nbcc_option_given_to_occ_is_named_as_not_its_bound(capsys: pytest.CaptureFixture[str]) -> None:
    # an integer option of another protocol's bounds: refused as such (it once read "is not an integer")
    code = main(["explore", "--protocol", "occ", "--failed-attempts", "1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--failed-attempts" in err and "is not a bound of --protocol occ" in err
