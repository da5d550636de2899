"""Failed writes in the simulated NBCC table: heartbeats, the clean that rolls failed deltacommits
back (Hudi's LAZY failed-writes policy), the window in which Hudi 1.2.0 readers that list storage
miss committed rows, and the metadata table's listing that never shows a failed write's logs.

Java followed (apache/hudi): ``HoodieHeartbeatClient`` at ``b1e11af9`` (start 162-179, stop 187-194,
isHeartbeatExpired 235-252), ``BaseHoodieTableServiceClient#getInstantsToRollbackForLazyCleanPolicy``
and ``#rollbackFailedWrites``, ``BaseRollbackActionExecutor#finishRollback`` (1.x stored texts, commit
not shown), ``TestHoodieHeartbeatClient#testStartHeartbeat`` (one heartbeat file per started instant).
"""

from __future__ import annotations

from model.config import ErrorRule, FaultPlan
from model.nbcc.config import NbccConfig, NbccScenario
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_cleaner import heartbeat_key, is_expired
from model.nbcc.sim_layout import data_key, instant_key
from model.nbcc.sim_table import BatchPlan, SimRun, TablePlan, WriterPlan, run_table
from model.nbcc.slicing import Rule
from model.timeline.layout import State, format_instant, parse_instant, parse_log_file_name
from scenarios import catalogue


def _heartbeat_keys(objects: dict[str, bytes] | object) -> list[str]:
    return sorted(k for k in objects if "/.hoodie/.heartbeat/" in k)  # type: ignore[union-attr]


def _failed_then_committed(**settings: object) -> SimRun:
    """One writer: batch 0's first attempt fails after its log, the retry commits; batch 1 commits
    3 s later, after the failed attempt's heartbeat (1 s x 1 miss) expired."""
    plan = TablePlan(
        (WriterPlan((BatchPlan(((0, 1),), work_ms=100, think_ms=3000, failures=(1,)),
                     BatchPlan(((1, 2),), work_ms=100))),),
        buckets=1, heartbeat_interval_ms=1000, heartbeat_tolerable_misses=1, metadata_table=False,
        variant="hudi-1.2.0", **settings,  # type: ignore[arg-type]
    )
    return run_table(plan, 1)


def test_is_expired_follows_hoodie_heartbeat_client() -> None:
    # isHeartbeatExpired: now - last > interval x misses; a missing file reads as time 0
    assert not is_expired(10_000, 8_000, 2_000) and is_expired(10_001, 8_000, 2_000)
    assert is_expired(10_000, None, 2_000)


def test_a_started_instant_has_one_heartbeat_file_and_a_commit_deletes_it() -> None:
    # TestHoodieHeartbeatClient#testStartHeartbeat: start(instant) writes .hoodie/.heartbeat/<instant>
    r = _failed_then_committed()
    puts = [e for e in r.events if e.f == "object" and "/.hoodie/.heartbeat/" in str(e.value.get("key"))]
    started = {e.value["instant"] for e in r.events if e.f == "deltacommit" and e.type == "invoke"}
    assert {k.rsplit("/", 1)[1] for k in (e.value["key"] for e in puts)} == started
    committed = {e.value["instant"] for e in r.events if e.f == "deltacommit" and e.type == "ok"}
    assert not any(k.rsplit("/", 1)[1] in committed for k in _heartbeat_keys(r.objects))


def test_the_clean_rolls_back_an_expired_failed_deltacommit() -> None:
    r = _failed_then_committed()
    (failed,) = [e.value["instant"] for e in r.events
                 if e.f == "deltacommit" and e.value.get("reason") == "injected"]
    rollbacks = [e for e in r.events if e.f == "rollback" and e.type == "ok"]
    assert [e.value["instant"] for e in rollbacks] == [failed]
    t = parse_instant(failed)
    # its log files, its requested and inflight instant files and its heartbeat are gone
    (invoke,) = [e for e in r.events if e.f == "rollback" and e.type == "invoke"]
    assert invoke.value["files"] and all(data_key("table", parse_log_file_name(n)) not in r.objects
                                         for n in invoke.value["files"])
    for state in (State.REQUESTED, State.INFLIGHT):
        assert instant_key("table", t, "deltacommit", state) not in r.objects
    assert heartbeat_key("table", t) not in r.objects
    table = r.table()
    (rb,) = table.rollbacks
    assert rb.rolled_back == (t,) and set(rb.deleted_files) == set(invoke.value["files"])
    assert table.timeline.get(t) is None and not table.timeline.pending()
    assert check_history(r.events, r.objects, rule=Rule.HUDI_1_2_0).violations == ()


def test_no_rollback_before_the_heartbeat_expires_or_without_the_clean() -> None:
    # Hudi's default heartbeat (60 s x misses) outlives this run: the failed attempt stays pending
    r = run_table(TablePlan((WriterPlan((BatchPlan(((0, 1),), think_ms=3000, failures=(1,)),
                                         BatchPlan(((1, 2),)))),), buckets=1), 1)
    assert not [e for e in r.events if e.f == "rollback"]
    assert [i.requested for i in r.table().timeline.pending()]
    r = _failed_then_committed(auto_clean=False)
    assert not [e for e in r.events if e.f in ("rollback", "clean")]
    assert r.table().timeline.pending()


def test_a_writer_whose_heartbeat_expired_aborts_its_commit() -> None:
    # HeartbeatUtils#abortIfHeartbeatExpired: a writer whose last heartbeat is older than interval x
    # misses gives its attempt up at commit; the batch is retried as a new deltacommit
    # (a pause alone does not show it: after the pause the heartbeat's timer may beat first, and the
    # commit then sees a fresh heartbeat, in Hudi as here; so the heartbeat's writes fail instead)
    failing = ErrorRule(node="w1", key="table/.hoodie/.heartbeat/", status="503", start_ms=1000, end_ms=4000)
    plan = TablePlan((WriterPlan((BatchPlan(((0, 1),), work_ms=3000),)),), buckets=1,
                     heartbeat_interval_ms=1000, heartbeat_tolerable_misses=1,
                     faults=FaultPlan(errors=(failing,)))
    r = run_table(plan, 1)
    reasons = [e.value.get("reason") for e in r.events if e.f == "deltacommit" and e.type == "fail"]
    assert "heartbeat expired" in reasons
    assert [e for e in r.events if e.f == "deltacommit" and e.type == "ok"]
    assert check_history(r.events, r.objects).violations == ()


def _window_run(variant: str, metadata_table: bool) -> tuple[SimRun, set[str]]:
    entry = catalogue.load("nbcc-uncommitted-anchor-window",
                           [f'nbcc.variant="{variant}"',
                            f"nbcc.metadata_table={str(metadata_table).lower()}"])
    config = entry.config
    plan = config.plan(entry.seed)
    r = run_table(plan, entry.seed)
    return r, {v.kind for v in check_history(r.events, r.objects, rule=config.nbcc.slicing_rule).violations}


def test_hudi_1_2_0_readers_listing_storage_miss_rows_only_until_the_rollback() -> None:
    r, kinds = _window_run("hudi-1.2.0", False)
    assert kinds == {"read"}  # the final table reads right: the failed first logs were rolled back
    rolled = {e.value["instant"] for e in r.events if e.f == "rollback" and e.type == "ok"}
    bad_reads = [e for e in r.events if e.f == "read" and e.type == "ok" and e.value["hidden"]]
    assert rolled and bad_reads
    # every hidden group was hidden by a log whose instant was later rolled back
    # a hidden group shows again in a later read, once the failed log that hid it was rolled back
    for bad in bad_reads:
        group = bad.value["hidden"][0]
        rolled_back_at = [
            e.time for e in r.events
            if e.f == "rollback" and e.type == "ok" and e.time > bad.time
            and any(n.startswith("." + group) for n in _rolled_files(r, e.value["rollback"]))
        ]
        assert rolled_back_at, (bad.time, group)
        shown = [e for e in r.events if e.f == "read" and e.type == "ok" and e.time > min(rolled_back_at)]
        assert shown and group not in shown[0].value["hidden"]


def _rolled_files(r: SimRun, rollback: str) -> list[str]:
    return [n for e in r.events
            if e.f == "rollback" and e.type == "invoke" and e.value["rollback"] == rollback
            for n in e.value["files"]]


def test_the_fix_and_the_metadata_table_close_the_window() -> None:
    for variant, mdt in (("pr-19785", False), ("hudi-1.2.0", True)):
        r, kinds = _window_run(variant, mdt)
        assert kinds == set(), (variant, mdt)
        reads = [e for e in r.events if e.f == "read" and e.type == "ok"]
        assert reads and not any(e.value["hidden"] for e in reads)


def test_the_metadata_table_lists_only_files_of_completed_instants() -> None:
    r = _failed_then_committed(auto_clean=False)
    table = r.table()
    ct = table.timeline.completion_time
    (group,) = table.groups
    assert any(ct(lf.instant) is None for lf in group.log_files)  # storage lists the failed log
    (listed,) = table.listed_groups(metadata_table=True)
    assert listed.log_files and all(ct(lf.instant) is not None for lf in listed.log_files)
    names = {n for files in table.written_files.values() for n in files}
    assert {lf.name for lf in listed.log_files} == names & {lf.name for lf in group.log_files}


def test_the_scenario_says_whose_behaviour_it_runs() -> None:
    s = NbccScenario(nbcc=NbccConfig(variant="hudi-1.2.0", metadata_table=False))
    line = s.models()
    assert line.startswith("Hudi 1.2.0") and "50fc937e" in line
    assert "readers list storage (hoodie.metadata.enable=false)" in line
    assert "60000 ms x 2 misses" in line
    default = NbccScenario().models()
    assert "hoodie.metadata.enable=true" in default and "x 10 misses" in default
    assert format_instant(parse_instant("20260101000000001")) == "20260101000000001"
