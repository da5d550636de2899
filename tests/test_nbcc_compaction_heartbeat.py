"""The simulated compaction service's heartbeat (fidelity NB34): under Hudi's variants a compaction's
execution checks the instant's heartbeat and starts its own in one lock hold, as Hudi 1.2.0's
``BaseHoodieTableServiceClient#compact`` does under multi-writer (324-362, ``validateHeartBeat`` 1477-1485),
so a killed executor's plan is executed again only once its heartbeat expired (``HoodieHeartbeatClient``:
interval x tolerable misses)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.config import Crash, FaultPlan
from model.nbcc import sim_table
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_cleaner import heartbeat_key
from model.nbcc.sim_io import Gen
from model.nbcc.sim_table import (
    HEARTBEAT_REFUSED,
    BatchPlan,
    CompactionSlot,
    SimRun,
    TablePlan,
    WriterPlan,
    run_table,
)
from model.nbcc.variants import variant
from model.timeline.layout import parse_instant


def _killed_then_resumed(name: str = "hudi-1.2.0") -> SimRun:
    """Two deltacommits, then a compaction whose executor is killed before any base file (slot 2 s), the
    service again at 3.5 s (within the heartbeat's 1 s x 2 misses of the kill) and at 9 s (past it)."""
    plan = TablePlan(
        (WriterPlan((BatchPlan(((0, 1),), work_ms=100, think_ms=100), BatchPlan(((1, 2),), work_ms=100))),),
        (CompactionSlot(2000, fail_after=0), CompactionSlot(3500), CompactionSlot(9000)),
        buckets=1, heartbeat_interval_ms=1000, heartbeat_tolerable_misses=2, metadata_table=False,
        variant=name,
    )
    return run_table(plan, 1)


def _compactions(r: SimRun) -> list[tuple[int, str, str | None]]:
    return [(e.time, e.type, e.value.get("reason")) for e in r.events if e.f == "compaction"]


def test_a_killed_compactors_plan_is_refused_while_its_heartbeat_lives_and_executed_once_it_expired() -> None:
    r = _killed_then_resumed()
    (killed, refused, done) = _compactions(r)
    assert killed[1:] == ("fail", "injected") and refused[1:] == ("fail", HEARTBEAT_REFUSED)
    assert done[1] == "ok"
    expiry = r.plan.heartbeat_expiry_ms
    assert refused[0] - killed[0] <= expiry < done[0] - killed[0]
    # one plan throughout: the refused execution left it pending, the later one completed it
    (plan,) = {e.value["instant"] for e in r.events
               if e.f in ("compaction", "compaction-resume") or e.f == "compaction-plan" and e.type == "ok"}
    commits = [i.requested for i in r.table().timeline.completed() if i.action == "commit"]
    assert commits == [parse_instant(plan)]
    # the completed execution stopped its heartbeat and deleted the file
    assert heartbeat_key("table", parse_instant(plan)) not in r.objects
    assert check_history(r.events, r.objects, rule=r.plan.nbcc_variant.slicing).violations == ()


def test_without_the_heartbeat_check_the_plan_is_resumed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # the check removed (every heartbeat reads as expired): the test above would fail
    def expired(*_args: object) -> Gen:
        yield from ()
        return True

    monkeypatch.setattr(sim_table, "heartbeat_expired", expired)
    assert _compactions(_killed_then_resumed())[1][1:] == ("ok", None)


def test_the_hypothetical_variants_keep_a_service_without_a_compaction_heartbeat() -> None:
    assert [v for v in ("hudi", "hudi-1.2.0", "pr-19785", "pr-19786", "v6-instant-time")
            if variant(v).compaction_heartbeat] == ["hudi", "hudi-1.2.0", "pr-19785"]
    assert _compactions(_killed_then_resumed("pr-19786"))[1][1:] == ("ok", None)


def test_a_killed_executors_heartbeat_file_stays_and_the_refusal_writes_none() -> None:
    r = _killed_then_resumed()
    plan = replace(r.plan, compactions=r.plan.compactions[:2])  # the run ends before the heartbeat expired
    r = run_table(plan, 1)
    (instant,) = {e.value["instant"] for e in r.events if e.f == "compaction-plan" and e.type == "ok"}
    (killed,) = [e for e in r.events if e.f == "compaction" and e.value.get("reason") == "injected"]
    (refused,) = [e for e in r.events if e.f == "compaction" and e.value.get("reason") == HEARTBEAT_REFUSED]
    last_beat = int(r.objects[heartbeat_key("table", parse_instant(instant))])
    assert killed.clock is not None and refused.clock is not None
    assert last_beat <= killed.clock < refused.clock
    assert parse_instant(instant) in {i.requested for i in r.table().timeline.pending()}


def test_one_seed_reproduces_the_run() -> None:
    assert _killed_then_resumed().events == _killed_then_resumed().events


def test_a_compactor_crashed_inside_its_execution_resumes_only_after_the_heartbeat_expired() -> None:
    # the crash kills the heartbeat's timer with the node; the restart's resume finds the file live
    base = _killed_then_resumed().plan
    plan = replace(base, compactions=(CompactionSlot(2000, work_ms=2000), CompactionSlot(9000)),
                   faults=FaultPlan(crashes=(Crash("w2", 3500, 500),)))
    r = run_table(plan, 1)
    resumes = [e.time for e in r.events if e.f == "compaction-resume"]
    outcomes = [(e.type, e.value.get("reason")) for e in r.events if e.f == "compaction"]
    assert len(resumes) == 2 and resumes[0] < 4500 < 9000 <= resumes[1]
    assert outcomes == [("fail", HEARTBEAT_REFUSED), ("ok", None)]


def test_a_plan_scheduled_behind_a_refused_one_is_left_requested() -> None:
    # run_compaction executes the pending plans oldest first and throws at the refused one: the plan it
    # scheduled in the same call stays requested, executed (after the older one) once the heartbeat expired
    plan = TablePlan(
        (WriterPlan((BatchPlan(((0, 1),), work_ms=100, think_ms=100),
                     BatchPlan(((1, 2),), work_ms=100, think_ms=100),
                     BatchPlan(((4, 3),), work_ms=100))),),  # k0, k1 in bucket 1; k4 in bucket 0
        (CompactionSlot(2000, fail_after=0), CompactionSlot(3700), CompactionSlot(9000)),
        buckets=2, heartbeat_interval_ms=1000, heartbeat_tolerable_misses=2, metadata_table=False,
        variant="hudi-1.2.0",
    )
    r = run_table(plan, 1)
    planned = [e.value["instant"] for e in r.events if e.f == "compaction-plan" and e.type == "ok"]
    outcomes = [(e.value["instant"], e.type, e.value.get("reason")) for e in r.events if e.f == "compaction"]
    assert len(planned) == 2
    first, second = planned
    assert outcomes[:3] == [(first, "fail", "injected"), (first, "fail", HEARTBEAT_REFUSED),
                            (second, "fail", HEARTBEAT_REFUSED)]
    assert outcomes[3:] == [(first, "ok", None), (second, "ok", None)]
