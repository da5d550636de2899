"""What each commit variant prevents, over many seeds: random runs (writers, keys, partitions or file
groups, timing, listing, strategy, deletes) checked by Elle (``model/checkers/txn_from_runs.py``).

- Hudi 1.2.1 under OCC: on file groups at most write skew (G2-item); on records at most the lost update
  of a key inserted into two file groups (G2-item, lost-update), and only in runs where a key was
  written into two file groups; with one file group per partition (a preloaded table whose file
  groups take every insert) nothing at all.
- The v5 specification with its primary-key check under OCC: nothing at all; pessimistic (whose
  primary-key check takes no table lock: ``tests/test_isolation_v5.py``) or without the check: on
  records only where a key went into two file groups, never on file groups.
- NBCC (Hudi 1.2.1's and 1.2.0's ``HoodieFileGroup``, PR #19785): with the metadata table or #19785
  nothing; with storage listing the #19774 reader misses rows, which Elle sees as read skew
  (G-single-item) or a stale read (G-single-item-realtime), only in runs where the harness's own
  reader checker finds the missed rows.

A claim that can never fail is worthless: the last tests show each detector firing on these
variants' runs (at least once in a fixed sweep of seeds).
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.checkers.txn_from_runs import nbcc_views, occ_views, txn_records
from model.config import Dist, Scenario, WorkloadConfig
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_table import run_table
from model.runtime.history import Event
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.run import simulate_timeline
from scenarios.catalogue import load

SWEEP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(min_value=0, max_value=2**31 - 1)


def hudi(r: random.Random, **kw: object) -> TimelineConfig:
    fields = dict(variant="hudi", keys=r.randint(1, 4), partitions=r.randint(1, 2), preload=r.random() < 0.4,
                  small_file_records=r.choice([0, 1, 2]), delete_prob=r.choice([0.0, 0.2]),
                  metadata_table=r.random() < 0.6, conflict_strategy=r.choice(["simple", "prefer-writer"]),
                  ops_per_writer=r.randint(2, 5))
    return TimelineConfig(**{**fields, **kw})  # type: ignore[arg-type]


def v5(r: random.Random, cc: str, pk: bool) -> TimelineConfig:
    return TimelineConfig(variant="vanlightly-v5", keys=r.randint(1, 4), file_groups=r.randint(1, 3),
                          delete_prob=r.choice([0.0, 0.2]),
                          time_generator=r.choice(["monotonic", "skew-adjusting"]), cc=cc, pk_check=pk,
                          put_if_absent=r.choice([None, True]), ops_per_writer=r.randint(2, 5))


def occ_run(tl: TimelineConfig, r: random.Random, seed: int) -> tuple[list[Event], dict[str, list[str]]]:
    wl = WorkloadConfig(writers=r.randint(2, 4), work_ms=Dist("uniform", 0, 1500),
                        think_ms=Dist("uniform", 0, 800), start_ms=Dist("uniform", 0, 1000))
    ts = TimelineScenario(Scenario(name="sweep", duration_ms=60_000, workload=wl), tl)
    events = simulate_timeline(ts, seed).events
    return events, {v.view: [a for a in v.check().anomaly_types if a != "empty-transaction-graph"]
                    for v in occ_views(events)}


def key_in_two_file_groups(events: Sequence[Event]) -> bool:
    """Some key was written into two file groups by committed operations (or the preload)."""
    fgs: dict[str, set[str]] = defaultdict(set)
    for _, rec in txn_records(events):
        if rec.get("kind") == "preload":
            for v in rec["versions"]:
                fgs[v["key"]].add(v["fg"])
        elif rec.get("outcome") == "ok" and isinstance(rec.get("write"), dict):
            fgs[rec["write"]["key"]].add(rec["write"]["fg"])
    return any(len(s) > 1 for s in fgs.values())


@SWEEP
@given(SEEDS)
def test_hudi_admits_only_write_skew_on_file_groups_and_the_duplicate_key_on_records(seed: int) -> None:
    r = random.Random(seed)
    events, found = occ_run(hudi(r), r, seed)
    assert set(found["file-groups"]) <= {"G2-item"}, found
    assert set(found["records"]) <= {"G2-item", "lost-update"}, found
    if found["records"]:
        assert key_in_two_file_groups(events), found


@SWEEP
@given(SEEDS)
def test_hudi_with_one_file_group_per_partition_has_no_anomaly(seed: int) -> None:
    r = random.Random(seed)
    _, found = occ_run(hudi(r, preload=True, small_file_records=0), r, seed)
    assert found == {"records": [], "file-groups": []}


@SWEEP
@given(SEEDS)
def test_v5_with_its_primary_key_check_under_occ_has_no_anomaly(seed: int) -> None:
    r = random.Random(seed)
    _, found = occ_run(v5(r, "optimistic", True), r, seed)
    assert found == {"records": [], "file-groups": []}


@SWEEP
@given(SEEDS, st.sampled_from([("optimistic", False), ("pessimistic", False), ("pessimistic", True)]))
def test_v5_errs_only_on_keys_in_two_file_groups(seed: int, how: tuple[str, bool]) -> None:
    r = random.Random(seed)
    events, found = occ_run(v5(r, how[0], how[1]), r, seed)
    assert found["file-groups"] == []
    if found["records"]:
        assert key_in_two_file_groups(events), found


def nbcc_run(variant: str, metadata_table: bool, seed: int) -> tuple[list[str], list[str]]:
    """Elle's anomalies and the harness's violation kinds of a random NBCC run with a snapshot reader."""
    base = load("nbcc-uncommitted-anchor-window").config
    r = random.Random(seed)
    nb = dataclasses.replace(base.nbcc, variant=variant, metadata_table=metadata_table,
                             buckets=r.randint(2, 6), fail_prob=r.choice([0.25, 0.5]),
                             writers=r.randint(2, 4), compactions=r.randint(0, 2))
    cfg = dataclasses.replace(base, nbcc=nb)
    plan = cfg.plan(seed)
    run = run_table(plan, seed)
    events = list(run.events)
    elle = [a for a in nbcc_views(events)[0].check().anomaly_types if a != "empty-transaction-graph"]
    harness = sorted({v.kind for v in check_history(events, run.objects, plan.base, cfg.nbcc.slicing_rule)
                      .violations})
    return elle, harness


@SWEEP
@given(SEEDS, st.sampled_from([("hudi", True), ("hudi", False), ("hudi-1.2.0", True), ("pr-19785", False),
                               ("pr-19785", True)]))
def test_nbcc_readers_that_see_every_committed_log_show_no_anomaly(seed: int, how: tuple[str, bool]) -> None:
    elle, _ = nbcc_run(how[0], how[1], seed)
    assert elle == []


@SWEEP
@given(SEEDS, st.sampled_from(["hudi-1.2.0"]))
def test_nbcc_issue_19774_is_read_skew_and_only_where_rows_were_missed(seed: int, variant: str) -> None:
    elle, harness = nbcc_run(variant, False, seed)
    assert set(elle) <= {"G-single-item", "G-single-item-realtime"}
    if elle:
        assert "read" in harness


# ---- each detector fires: fixed sweeps ------------------------------------------------------------


def test_the_sweeps_find_what_they_claim_is_admitted() -> None:
    hudi_found: set[str] = set()
    fg_found: set[str] = set()
    for seed in range(30):
        r = random.Random(seed)
        _, found = occ_run(hudi(r), r, seed)
        hudi_found |= set(found["records"])
        fg_found |= set(found["file-groups"])
    assert hudi_found == {"G2-item", "lost-update"} and fg_found == {"G2-item"}
    nopk: set[str] = set()
    for seed in range(30):
        r = random.Random(seed)
        nopk |= set(occ_run(v5(r, "optimistic", False), r, seed)[1]["records"])
    assert "lost-update" in nopk
    none: set[str] = set()
    for seed in range(10):
        r = random.Random(seed)
        none |= set(occ_run(v5(r, "none", True), r, seed)[1]["file-groups"])
    assert "lost-update" in none
    nbcc = set()
    for seed in range(20):
        nbcc |= set(nbcc_run("hudi-1.2.0", False, seed)[0])
    assert nbcc == {"G-single-item", "G-single-item-realtime"}
