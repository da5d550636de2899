"""A MOR table under NBCC in the simulated world: Hypothesis plans (writers, overlapping
deltacommits, compactions mid-flight, failures, crashes and retries), the checkers over their
histories, and the known-bad rules found and shrunk to minimal cases."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import find as hfind
from hypothesis import strategies as st

from cli import main as cli
from model.config import ConfigError, ErrorRule, FaultPlan, Pause
from model.nbcc.sim_checks import (
    check_history,
    check_same_outcome,
    snapshot_rows,
    spec_rows,
    written_logs,
)
from model.nbcc.sim_layout import data_key, parse_plan, plan_body, requested_key
from model.nbcc.sim_table import (
    BatchPlan,
    CompactionSlot,
    CrashSpec,
    SimRun,
    TablePlan,
    TableSettings,
    WriterPlan,
    describe_plan,
    random_plan,
    run_table,
)
from model.nbcc.slicing import Rule
from model.runtime.history import dumps

# --- strategies ---------------------------------------------------------------------------------

# Times are drawn in steps of 100 ms so that shrinking has few values to try.
ms = st.integers(0, 15).map(lambda x: x * 100)
rows_st = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), min_size=1, max_size=3).map(tuple)
batch_st = st.builds(
    BatchPlan,
    rows=rows_st,
    work_ms=ms,
    think_ms=st.integers(0, 3).map(lambda x: x * 100),
    failures=st.lists(st.integers(0, 2), max_size=2).map(tuple),
    logs_per_group=st.integers(1, 2),
)
slot_st = st.builds(
    CompactionSlot,
    at_ms=st.integers(0, 50).map(lambda x: x * 100),
    fail_after=st.none() | st.integers(0, 2),
    work_ms=st.integers(0, 3).map(lambda x: x * 100),
)


writer_sts = {
    most: st.builds(WriterPlan, batches=st.lists(batch_st, min_size=1, max_size=most).map(tuple), start_ms=ms)
    for most in (2, 3)
}


@st.composite
def plans(draw: st.DrawFn, crashes: bool = True, most: int = 3, variant: str = "hudi",
          metadata_table: bool = True) -> TablePlan:
    writers = tuple(draw(st.lists(writer_sts[most], min_size=1, max_size=most)))
    slots = tuple(sorted(draw(st.lists(slot_st, max_size=most)), key=lambda c: c.at_ms))
    crash_list: tuple[CrashSpec, ...] = ()
    if crashes:
        crash = st.builds(
            CrashSpec,
            node=st.integers(1, len(writers) + 1),
            at_ms=st.integers(0, 50).map(lambda x: x * 100),
            restart_after_ms=ms,
        )
        crash_list = tuple(draw(st.lists(crash, max_size=1)))
    gap = draw(st.sampled_from([0, 100]))
    return TablePlan(writers, slots, draw(st.integers(1, 3)), "skew-adjusting", crash_list, commit_gap_ms=gap,
                     variant=variant, metadata_table=metadata_table)


@dataclasses.dataclass(frozen=True)
class Case:
    plan: TablePlan
    seed: int


cases = st.builds(Case, plans(), st.integers(0, 3))
small_cases = st.builds(Case, plans(crashes=False, most=2), st.integers(0, 1))
# Hudi 1.2.0 with readers and the planner listing storage: failed attempts' logs are listed
small_fs_cases = st.builds(Case, plans(crashes=False, most=2, variant="hudi-1.2.0", metadata_table=False),
                           st.integers(0, 1))
fixed_fs_cases = st.builds(Case, plans(variant="pr-19785", metadata_table=False), st.integers(0, 3))

SIM = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
runs: dict[Case, SimRun] = {}


def run(case: Case) -> SimRun:
    if case not in runs:
        runs[case] = run_table(case.plan, case.seed)
    return runs[case]


def kinds(case: Case, rule: Rule, stop_early: bool = False) -> set[str]:
    r = run(case)
    return {v.kind for v in check_history(r.events, r.objects, case.plan.base, rule, stop_early).violations}


def bad(rule: Rule) -> Callable[[Case], bool]:
    return lambda c: bool(kinds(c, rule, stop_early=True))


# --- the correct protocol passes every checker -------------------------------------------------


@SIM
@given(cases)
def test_completion_time_slicing_passes_every_checker(case: Case) -> None:
    r = run(case)
    verdict = check_history(r.events, r.objects, case.plan.base, Rule.COMPLETION_TIME)
    assert verdict.violations == (), [v.message for v in verdict.violations]
    # every batch of every writer eventually committed exactly its rows
    done = [e for e in r.events if e.f == "deltacommit" and e.type == "ok"]
    assert len(done) >= sum(len(w.batches) for w in case.plan.writers) - len(case.plan.crashes)


@SIM
@given(fixed_fs_cases)
def test_pr_19785_passes_every_checker_with_storage_listing(case: Case) -> None:
    # PR #19785's HoodieFileGroup#addLogFiles, failed attempts' logs listed: nothing hides committed data
    r = run(case)
    verdict = check_history(r.events, r.objects, case.plan.base, Rule.PR_19785)
    assert verdict.violations == (), [v.message for v in verdict.violations]


def test_same_seed_same_history_bytes() -> None:
    plan = random_plan(random.Random(7))
    a, b = run_table(plan, 7), run_table(plan, 7)
    assert dumps(a.events) == dumps(b.events) and a.objects == b.objects


def test_failed_attempt_leaves_an_uncommitted_log_that_no_reader_shows() -> None:
    plan = TablePlan((WriterPlan((BatchPlan(((0, 1),), failures=(1,)),)),), buckets=1)
    r = run_table(plan, 1)
    table = r.table()
    (group,) = table.groups
    pending = [lf for lf in group.log_files if table.timeline.completion_time(lf.instant) is None]
    assert len(pending) == 1 and len(group.log_files) == 2
    assert check_history(r.events, r.objects).violations == ()
    assert snapshot_rows(r.events, r.objects) == {"k0": (1, "w1/0/0")}


def test_crashed_writer_resumes_from_the_timeline() -> None:
    batches = tuple(BatchPlan(((k, k),), work_ms=200) for k in range(4))
    plan = TablePlan((WriterPlan(batches),), (CompactionSlot(900),), crashes=(CrashSpec(1, 1500, 500),))
    r = run_table(plan, 2)
    resumed = [e for e in r.events if e.f == "resume"]
    assert resumed and resumed[0].value["committed_batches"]
    assert check_history(r.events, r.objects).violations == ()
    assert snapshot_rows(r.events, r.objects) == {f"k{k}": (k, f"w1/{k}/0") for k in range(4)}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(crashes=False, most=2))
def test_snapshot_does_not_depend_on_the_interleaving(plan: TablePlan) -> None:
    # distinct ordering values per key, so merging by the ordering field is order-independent
    uid = iter(range(10**6))
    writers = tuple(
        dataclasses.replace(
            w,
            batches=tuple(
                dataclasses.replace(b, rows=tuple((k, ts * 1000 + next(uid)) for k, ts in b.rows))
                for b in w.batches
            ),
        )
        for w in plan.writers
    )
    plan = dataclasses.replace(plan, writers=writers)
    snaps = []
    for seed in (1, 2, 3):
        r = run_table(plan, seed)
        table = r.table()
        snaps.append((seed, snapshot_rows(r.events, r.objects)))
        want = spec_rows(written_logs(r.events).values(), table.timeline.completion_time, None)
        assert snaps[-1][1] == {k: (row.ts, row.rid) for k, row in want.items()}
    assert check_same_outcome(snaps) == []


def test_interleaving_checker_catches_different_outcomes() -> None:
    v = check_same_outcome([(1, {"k0": (5, "w1/0/0")}), (2, {"k0": (5, "w2/0/0")})])
    assert [x.kind for x in v] == ["interleaving"]


# --- every checker catches a violation on a known-unsafe configuration -------------------------


def _one_late_log() -> SimRun:
    # w1 commits k0, starts a second deltacommit that stays in flight across a compaction
    plan = TablePlan(
        (WriterPlan((BatchPlan(((0, 1),), work_ms=0, think_ms=0), BatchPlan(((0, 2),), work_ms=2000))),),
        (CompactionSlot(2500),),
        buckets=1,
    )
    return run_table(plan, 1)


def test_golden_late_log_lands_in_the_compaction_slice() -> None:
    r = _one_late_log()
    table = r.table()
    ct = table.timeline.completion_time
    (group,) = table.groups
    (base,) = group.base_files
    late = max(group.log_files, key=lambda lf: lf.instant)
    tc = ct(late.instant)
    assert tc is not None and late.instant < base.instant < tc  # requested before, completed after
    assert check_history(r.events, r.objects).violations == ()
    assert snapshot_rows(r.events, r.objects) == {"k0": (2, "w1/1/0")}
    assert {"coverage", "snapshot"} <= {
        v.kind for v in check_history(r.events, r.objects, rule=Rule.INSTANT_TIME).violations
    }


def test_tampered_plan_and_lost_log_are_caught() -> None:
    r = _one_late_log()
    table = r.table()
    (group,) = table.groups
    (base,) = group.base_files
    late = max(group.log_files, key=lambda lf: lf.instant)
    objects = dict(r.objects)
    key = requested_key("table", base.instant, "compaction")
    (op,) = parse_plan(objects[key], key)
    objects[key] = plan_body(
        [dataclasses.replace(op, logs=(*op.logs, late.name))]
    )  # a log completed after it
    assert "plan" in {v.kind for v in check_history(r.events, objects).violations}
    objects = dict(r.objects)
    del objects[data_key("table", late)]  # a committed log vanished from the store
    found = {v.kind for v in check_history(r.events, objects).violations}
    assert {"membership", "snapshot", "incremental"} <= found


def test_monotonic_times_without_the_lock_break_the_plan_rule() -> None:
    # the race needs a plan that takes some log of a group and misses one that drew an earlier
    # completion time but had not written its completed file: rare enough to need ten seeds
    found = set()
    for seed in range(1, 11):
        lock = random_plan(random.Random(seed))
        r = run_table(lock, seed)
        assert check_history(r.events, r.objects).violations == ()
        mono = dataclasses.replace(lock, time_generator="monotonic")
        r = run_table(mono, seed)
        found |= {v.kind for v in check_history(r.events, r.objects).violations}
    assert "plan" in found


def test_plan_validation_names_field_and_value() -> None:
    with pytest.raises(ConfigError, match=r"time_generator = 'clock'"):
        TablePlan((WriterPlan((BatchPlan(((0, 1),)),)),), time_generator="clock").validate()
    with pytest.raises(ConfigError, match=r"writers\[0\]\.batches\[0\]\.rows"):
        TablePlan((WriterPlan((BatchPlan(()),)),)).validate()


# --- storage faults: the scenario's fault plan -------------------------------------------------

# Faults the table's protocol must survive: errors on any request (503, 429, lost replies; timeouts
# on table files), pauses of up to 3 s, crashes.  Left out: faults that break the RFC-91 lock
# itself (a holder stalled past the lock's validity by timeouts on its renewals or a long pause):
# the lock model's catalogue covers those, and here they would break the RFC's atomicity.
NODES = ("w1", "w2", "w3", "w4")


@st.composite
def fault_plans(draw: st.DrawFn, nodes: tuple[str, ...]) -> FaultPlan:
    rule = st.builds(
        ErrorRule,
        node=st.sampled_from(("any", *nodes)),
        key=st.sampled_from(("any", "lock", "table/.hoodie/timeline/", "table/p0/")),
        method=st.sampled_from(("any", "read", "write")),
        status=st.sampled_from(("503", "429", "lost-reply")),
        prob=st.sampled_from((0.05, 0.1, 0.25)),
    )
    timeouts = st.builds(
        ErrorRule,
        node=st.sampled_from(("any", *nodes)),
        key=st.sampled_from(("table/.hoodie/timeline/", "table/p0/")),
        status=st.just("timeout"),
        prob=st.sampled_from((0.05, 0.1)),
    )
    pause = st.builds(
        Pause,
        node=st.sampled_from(nodes),
        at_ms=st.integers(0, 50).map(lambda x: x * 100),
        duration_ms=st.integers(1, 30).map(lambda x: x * 100),
    )
    errors = draw(st.lists(rule | timeouts, min_size=1, max_size=3))
    return FaultPlan(pauses=tuple(draw(st.lists(pause, max_size=2))), errors=tuple(errors))


@st.composite
def faulty_cases(draw: st.DrawFn) -> Case:
    plan = draw(plans())
    nodes = tuple(f"w{i}" for i in range(1, len(plan.writers) + 2))
    return Case(dataclasses.replace(plan, faults=draw(fault_plans(nodes))), draw(st.integers(0, 3)))


@SIM
@given(faulty_cases())
def test_completion_time_slicing_passes_every_checker_under_storage_faults(case: Case) -> None:
    r = run(case)
    verdict = check_history(r.events, r.objects, case.plan.base, Rule.COMPLETION_TIME)
    assert verdict.violations == (), (case.seed, [v.message for v in verdict.violations])
    done = {(e.value["instant"]) for e in r.events if e.f == "deltacommit" and e.type == "ok"}
    assert len(done) >= sum(len(w.batches) for w in case.plan.writers) - len(case.plan.crashes)


# A run with late logs (deltacommits requested before a compaction, completed after it) and
# faults on every kind of request: lost replies, throttling, unavailability, timeouts, a pause.
FAULTS = FaultPlan(
    pauses=(Pause("w4", 900, 2_000),),
    errors=(
        ErrorRule(key="table/", status="lost-reply", prob=0.1),
        ErrorRule(key="lock", status="503", prob=0.1),
        ErrorRule(key="table/.hoodie/timeline/", method="write", status="timeout", prob=0.1),
        ErrorRule(node="w2", key="table/p0/", status="429", prob=0.3),
    ),
)


def _faulty_runs(settings: TableSettings | None = None, buckets: int = 3, compactions: int = 3,
                 fail_prob: float = 0.25) -> list[SimRun]:
    out = []
    for seed in (1, 2, 3):
        plan = random_plan(random.Random(seed), buckets=buckets, compactions=compactions, fail_prob=fail_prob,
                           faults=FAULTS, settings=settings)
        out.append(run_table(plan, seed))
    return out


def test_faults_are_injected_and_survived() -> None:
    runs = _faulty_runs()
    for r in runs:
        assert check_history(r.events, r.objects).violations == (), r.seed
        assert len(r.table().timeline.completed()) >= 8, r.seed
    # (a compaction slot may come before any log is committed: the lock client does not retry a 503,
    # as Hudi 1.2.0's, so lock hand-overs under faults take longer)
    assert any(r.table().compactions for r in runs)
    # the faults did happen: replies lost (and the ambiguous 412s resolved), requests that failed
    fails = [e for r in runs for e in r.events if e.f in ("deltacommit", "compaction") and e.type == "fail"]
    assert any(
        "requested" in str(e.value.get("reason")) or "write" in str(e.value.get("reason")) for e in fails
    )
    pauses = [e for r in runs for e in r.events if e.f == "pause-start"]
    assert len(pauses) == len(runs)


def test_instant_time_rule_is_still_caught_under_faults() -> None:
    found = set()
    for r in _faulty_runs():
        assert check_history(r.events, r.objects, rule=Rule.COMPLETION_TIME).violations == ()
        found |= {v.kind for v in check_history(r.events, r.objects, rule=Rule.INSTANT_TIME).violations}
    assert "coverage" in found and found & {"snapshot", "time-travel"}, found


def test_hudi_1_2_0_anchor_bug_is_still_caught_under_faults_and_pr_19785_passes() -> None:
    found = set()
    storage = TableSettings(variant="hudi-1.2.0", metadata_table=False)
    for r in _faulty_runs(storage, buckets=6, compactions=1, fail_prob=0.5):
        found |= {v.kind for v in check_history(r.events, r.objects, rule=Rule.HUDI_1_2_0).violations}
        assert check_history(r.events, r.objects, rule=Rule.PR_19785).violations == ()
    assert found & {"snapshot", "time-travel", "membership", "coverage"}, found


def test_fault_plan_nodes_are_checked() -> None:
    plan = TablePlan((WriterPlan((BatchPlan(((0, 1),)),)),), faults=FaultPlan(pauses=(Pause("w9", 0, 10),)))
    with pytest.raises(ConfigError, match="faults.pauses"):
        plan.validate()


# --- the known bugs, found by Hypothesis over simulated runs and shrunk ------------------------

# No explain phase: it reruns the simulation for every part of the counterexample.
FIND = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
)


def _print_case(title: str, case: Case, rule: Rule) -> None:
    r = run(case)
    print(f"\n{title} (seed {case.seed}):")
    for line in describe_plan(case.plan):
        print("   ", line)
    for v in check_history(r.events, r.objects, case.plan.base, rule).violations[:3]:
        print(f"    -> {v.kind}: {v.message}")


def test_instant_time_slicing_is_found_and_shrunk() -> None:
    case = hfind(small_cases, bad(Rule.INSTANT_TIME), settings=FIND)
    _print_case("minimal run broken by instant-time slicing", case, Rule.INSTANT_TIME)
    assert kinds(case, Rule.COMPLETION_TIME) == set()
    # small: one compaction, one bucket, a few one-row deltacommits, one of them in flight across
    # the compaction (the smallest possible has two)
    assert len(case.plan.compactions) == 1 and case.plan.buckets == 1
    assert 2 <= sum(len(w.batches) for w in case.plan.writers) <= 3
    # (an attempt that fails before writing any log only delays its batch: the shrinker may keep it)
    assert all(len(b.rows) == 1 and set(b.failures) <= {0} for w in case.plan.writers for b in w.batches)
    table = run(case).table()
    ct = table.timeline.completion_time
    (comp,) = [i.requested for i in table.timeline.instants if i.requested_action == "compaction"]
    assert any(lf.instant < comp < (ct(lf.instant) or 0) for g in table.groups for lf in g.log_files)


def test_hudi_1_2_0_uncommitted_first_log_bug_is_found_and_shrunk() -> None:
    # Hudi 1.2.0 (HoodieFileGroup at 50fc937e), storage listing: issue #19774
    case = hfind(small_fs_cases, bad(Rule.HUDI_1_2_0), settings=FIND)
    _print_case("minimal run broken by Hudi 1.2.0's uncommitted first log", case, Rule.HUDI_1_2_0)
    assert kinds(case, Rule.PR_19785) == set() and kinds(case, Rule.COMPLETION_TIME) == set()
    assert "membership" in kinds(case, Rule.HUDI_1_2_0)
    # minimal: no compaction; a group whose first log never completed, a later log of the group that
    # did, and another group's instant completed before that first log (else the slice's key precedes
    # the timeline and counts as committed, containsOrBeforeTimelineStarts): two buckets
    assert case.plan.compactions == () and case.plan.buckets >= 2
    table = run(case).table()
    ct = table.timeline.completion_time
    hidden = [g for g in table.groups
              if ct(min(g.log_files, key=lambda lf: lf.sort_key).instant) is None
              and any(ct(lf.instant) is not None for lf in g.log_files)]
    assert len(hidden) == 1
    first = min(hidden[0].log_files, key=lambda lf: lf.sort_key)
    assert any(i.requested < first.instant for i in table.timeline.completed())


# --- the command line --------------------------------------------------------------------------


def test_cli_nbcc_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli.main(["nbcc", "run", "--seed", "1", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdict"] == "ok" and summary["compactions"] >= 1
    assert (out / "history.jsonl").stat().st_size > 0 and (
        out / "table" / ".hoodie" / "hoodie.properties"
    ).exists()
    bad = ["nbcc", "run", "--seed", "1", "--variant", "v6-instant-time", "--out", str(tmp_path / "bad")]
    assert cli.main(bad) == 0
    printed = capsys.readouterr().out
    assert "VIOLATION" in printed and "hypothetical" in printed
    # the deprecated flag maps an old rule name to its variant
    assert cli.main(["nbcc", "run", "--seed", "1", "--rule", "instant", "--out", str(tmp_path / "old")]) == 0
    assert "--variant v6-instant-time" in capsys.readouterr().err
    assert cli.main(["nbcc", "run", "--writers", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--writers = 0" in capsys.readouterr().err


def test_cli_nbcc_run_with_a_fault_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = tmp_path / "faults.toml"
    faults.write_text(
        '[[faults.errors]]\nkey = "table/"\nstatus = "lost-reply"\nprob = 0.2\n'
        '[[faults.pauses]]\nnode = "w4"\nat_ms = 1000\nduration_ms = 2000\n'
    )
    out = tmp_path / "run"
    assert cli.main(["nbcc", "run", "--seed", "2", "--faults", str(faults), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "ok"
    plan = json.loads((out / "plan.json").read_text())
    assert plan["faults"]["errors"][0]["status"] == "lost-reply"
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert any(e["f"] == "pause-start" for e in history)
    for text, field in (
        ('[[faults.pauses]]\nnode = "w9"\n', "faults.pauses[0].node"),
        ("[[faults.errors]]\ncolour = 1\n", "faults.errors[0].colour"),
        ("[faults\n", str(faults)),
    ):
        faults.write_text(text)
        assert cli.main(["nbcc", "run", "--faults", str(faults), "--out", str(tmp_path / "bad")]) == 2
        assert field in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()  # bad input: no partial output
