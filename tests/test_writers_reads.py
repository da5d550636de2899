"""Time travel and incremental reads of a Hudi run's table, Hudi's Spark reader against the model's reader
(analyses/writers_reads.py), without Spark: on a simulated NBCC table with overlapping deltacommits, Hudi's
answers made from the model's own readings agree; a Hudi whose time-travel read loses a row is a difference
naming NB23; Hudi's request-time time travel and its refusal at a pending commit are declared, a refusal
with no pending commit is not."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

import analyses.writers_reads as wr
from engines.hudi_spark.reads import points_at
from model.nbcc.sim_table import run_table
from model.nbcc.slices import FileSlice, Rule
from model.nbcc.timeline_reader import HudiTable, ReadBytes, slice_records
from model.timeline.layout import BaseFile, Instant, State
from scenarios import catalogue


def _sim_rows(table: HudiTable, read: ReadBytes,
              slices: Iterable[FileSlice]) -> list[tuple[str, str, str, str]]:
    """slice_rows for the simulated table, whose records carry ``rid`` (the write), no key or value."""
    return sorted((k, s.partition, str(r["rid"]), str(r["_hoodie_commit_time"]))
                  for s in slices for k, r in slice_records(table, s, read).items())


@pytest.fixture(scope="module")
def sim() -> tuple[HudiTable, ReadBytes, list[dict[str, Any]]]:
    run = run_table(catalogue.load("nbcc-completion-time-safe").config.plan(1), 1)
    base = run.plan.base.rstrip("/")
    table = run.table()
    done = sorted((i for i in table.timeline.instants
                   if i.is_completed and i.action in ("commit", "deltacommit")),
                  key=lambda i: (i.completed, i.requested))
    return table, (lambda rel: run.objects[f"{base}/{rel}"]), [asdict(p) for p in points_at(done)]


def _answers(table: HudiTable, read: ReadBytes, points: list[dict[str, Any]]) -> dict[str, Any]:
    """Hudi's answers as the model reads (reads.json's shape)."""
    return {p["id"]: {"rows": [list(r) for r in wr.model_reading(table, read, p, Rule.HUDI_1_2_0, False)]}
            for p in points}


def test_a_hudi_that_reads_as_the_model_agrees_and_one_that_loses_a_row_differs(
        sim: tuple[HudiTable, ReadBytes, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wr, "slice_rows", _sim_rows)
    table, read, points = sim
    assert {p["kind"] for p in points} == {"as_of", "incremental"} and len(points) > 10
    answers = _answers(table, read, points)
    same = wr.compare_points(table, read, {"points": points, "answers": answers}, False, Rule.HUDI_1_2_0,
                             None)
    assert same["read_differences"] == [] and same["read_declared"] == []
    assert {r["outcome"] for r in same["reads"]} == {"agree"}
    # a Hudi whose time travel at the last point misses one row the model reads
    last = next(p for p in reversed(points) if p["kind"] == "as_of")
    lost = answers[last["id"]]["rows"][0]
    wrong = {**answers, last["id"]: {"rows": answers[last["id"]]["rows"][1:]}}
    got = wr.compare_points(table, read, {"points": points, "answers": wrong}, False, Rule.HUDI_1_2_0, None)
    assert [(d["point"], d["model_only"], d["hudi_only"]) for d in got["read_differences"]] == \
        [(last["id"], [tuple(lost)], [])]
    assert got["read_differences"][0]["fidelity"].startswith("NB23")
    # ... and an incremental read that returns a row twice
    inc = next(p for p in points if p["kind"] == "incremental" and answers[p["id"]]["rows"])
    twice = {**answers, inc["id"]: {"rows": answers[inc["id"]]["rows"] * 2}}
    got = wr.compare_points(table, read, {"points": points, "answers": twice}, False, Rule.HUDI_1_2_0, None)
    assert [d["fidelity"][:4] for d in got["read_differences"]] == ["NB24"]


def test_request_time_travel_is_declared_where_overlapping_writes_make_it_differ(
        sim: tuple[HudiTable, ReadBytes, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wr, "slice_rows", _sim_rows)
    table, read, points = sim
    answers = _answers(table, read, points)
    by_rt = {p["id"]: wr.request_time_rows(table, read, int(p["at"]), Rule.HUDI_1_2_0, False)
             for p in points if p["kind"] == "as_of"}
    apart = [i for i, rows in by_rt.items() if sorted(map(tuple, answers[i]["rows"])) != rows]
    assert apart  # a deltacommit requested before T and completed after it: the readings differ there
    rt = {**answers, **{i: {"rows": [list(r) for r in by_rt[i]]} for i in apart}}
    got = wr.compare_points(table, read, {"points": points, "answers": rt}, False, Rule.HUDI_1_2_0, None)
    assert got["read_differences"] == []
    assert [d["point"] for d in got["read_declared"]] == apart
    assert all(d["why"].startswith("request time") for d in got["read_declared"])


def test_a_time_travel_refusal_is_declared_only_after_a_pending_commit() -> None:
    point = {"id": "as_of 20260101000005000", "kind": "as_of", "at": "20260101000005000"}
    refusal = {"error": {"class": wr.TIME_TRAVEL_EXCEPTION, "message": "must be earlier than ..."}}
    assert wr.judge_point(point, refusal, [], None, 20260101000004000) == ("declared", wr.REFUSED)
    assert wr.judge_point(point, refusal, [], None, 20260101000005000)[0] == "declared"  # at T itself
    assert wr.judge_point(point, refusal, [], None, 20260101000006000)[0] == "differs"
    assert wr.judge_point(point, refusal, [], None, None)[0] == "differs"
    other = {"error": {"class": "org.apache.hudi.exception.HoodieIOException", "message": "x"}}
    assert wr.judge_point(point, other, [], None, 20260101000004000)[0] == "differs"
    pending = [Instant(1, "deltacommit", State.COMPLETED, completed=3),
               Instant(2, "deltacommit", State.INFLIGHT),
               Instant(0, "compaction", State.REQUESTED), Instant(4, "clustering", State.INFLIGHT)]
    assert wr.first_pending_commit(pending) == 2  # a pending compaction or clustering stops no time travel


def _straddling_table(tmp_path: Path, properties: str = "") -> HudiTable:
    """sf1's shape (nbcc-storage-faults on Hudi 1.2.0), names only: deltacommit A (requested 1, completed
    2) and B (requested 3, completed 6) write logs of group f0; a compaction of f0 requested at 4 stays
    pending (set by hand: its plan is not written)."""
    from backends.hudi_table_source import open_table

    hoodie = tmp_path / ".hoodie"
    (hoodie / "timeline").mkdir(parents=True)
    (tmp_path / "p0").mkdir()
    (hoodie / "hoodie.properties").write_text(
        "hoodie.table.version=9\nhoodie.timeline.layout.version=2\nhoodie.table.type=MERGE_ON_READ\n"
        "hoodie.timeline.path=timeline\nhoodie.table.name=t\n" + properties)
    t = "2026010100000{}000".format
    names = [f"{t(1)}.deltacommit.requested", f"{t(1)}.deltacommit.inflight", f"{t(1)}_{t(2)}.deltacommit",
             f"{t(3)}.deltacommit.requested", f"{t(3)}.deltacommit.inflight", f"{t(3)}_{t(6)}.deltacommit"]
    for n in names:  # a completed deltacommit's write stats name its log (what the metadata table lists)
        done = n.endswith("0.deltacommit")
        stats = {"partitionToWriteStats": {"p0": [{"path": f"p0/.f0_{n[:17]}.log.1_0-1-1"}]}}
        (hoodie / "timeline" / n).write_text(json.dumps(stats) if done else "")
    for i in (1, 3):
        (tmp_path / "p0" / f".f0_{t(i)}.log.1_0-1-1").write_text("")
    table, _read, _root = open_table(tmp_path)
    return dataclasses.replace(table, groups=tuple(
        dataclasses.replace(g, pending_compactions=(int(t(4)),)) for g in table.groups))


def _log_rows(table: HudiTable, read: ReadBytes,
              slices: Iterable[FileSlice]) -> list[tuple[str, str, int, str]]:
    """slice_rows of a table of empty logs: one row per log, its key the log's instant."""
    return sorted((str(lf.instant), s.partition, 0, str(lf.instant)) for s in slices for lf in s.log_files)


def test_an_incremental_read_missing_a_deltacommit_across_a_pending_compaction_is_declared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wr, "slice_rows", _log_rows)
    table = _straddling_table(tmp_path)
    a, b = "20260101000001000", "20260101000003000"
    first = {"id": "i1", "kind": "incremental", "start": "20260101000000000", "end": "20260101000002000"}
    second = {"id": "i2", "kind": "incremental", "start": "20260101000002000", "end": "20260101000006000"}
    got = {"points": [first, second],
           "answers": {"i1": {"rows": [[a, "p0", 0, a]]}, "i2": {"rows": []}}}  # Hudi 1.2.0's answers on sf1
    # RFC-66: B completed in the range
    assert wr.model_reading(table, _no_read, second, None, False) == [(b, "p0", 0, b)]
    assert wr.hudi_incremental_rows(table, _no_read, 20260101000002000, 20260101000006000, False) == []
    out = wr.compare_points(table, _no_read, got, False, None, None)
    assert [r["outcome"] for r in out["reads"]] == ["agree", "declared"]
    assert out["read_differences"] == []
    assert out["read_declared"] == [{"point": "i2", "why": wr.PENDING_COMPACTION}]
    # the declaration is that reading, not any shortfall: a Hudi that misses A is still a difference (NB24)
    lost = {**got, "answers": {**got["answers"], "i1": {"rows": []}}}
    missed = wr.compare_points(table, _no_read, lost, False, None, None)["read_differences"]
    assert [d["point"] for d in missed] == ["i1"]
    # without the pending compaction B's log is in A's slice and Hudi reads it as the model does
    plain = dataclasses.replace(table, groups=tuple(dataclasses.replace(g, pending_compactions=())
                                                    for g in table.groups))
    assert wr.hudi_incremental_rows(plain, _no_read, 20260101000002000, 20260101000006000, False) == \
        [(b, "p0", 0, b)]


def _no_read(rel: str) -> bytes:
    raise AssertionError(f"no file is read here: {rel}")


def test_hudi_rs_skips_the_log_only_groups_the_metadata_table_lists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sf1 on hudi-rs 0.5.0: 0 rows, every group logs only and listed through the metadata table."""
    import analyses.writers_differential as wd
    from backends.hudi_rs import SKIPS_LOG_ONLY_GROUPS, groups_hudi_rs_skips

    monkeypatch.setattr(wd, "slice_rows", _log_rows)
    storage = _straddling_table(tmp_path / "storage")
    assert groups_hudi_rs_skips(storage) == frozenset()  # no files partition: hudi-rs lists storage
    mdt_dir = tmp_path / "mdt"
    table = _straddling_table(mdt_dir, "hoodie.table.metadata.partitions=files\n")
    assert [str(g.file_id) for g in groups_hudi_rs_skips(table)] == ["f0"]
    why = wd.hudi_rs_skips(mdt_dir, False, None, [])
    assert why is not None and why.startswith(SKIPS_LOG_ONLY_GROUPS) and "p0/f0" in why
    # rows hudi-rs read that the skip does not explain: no explanation
    assert wd.hudi_rs_skips(mdt_dir, False, None, [("x", "p0", 0)]) is None
    # a group whose base file the metadata table lists is read
    base = BaseFile("f0", "0-1-1", 20260101000001000)
    with_base = dataclasses.replace(
        table, groups=tuple(dataclasses.replace(g, base_files=(base,)) for g in table.groups),
        written_files={20260101000001000: (base.name,)})
    assert groups_hudi_rs_skips(with_base) == frozenset()
    # the reads comparison's notes name it where hudi-rs read differently from Hudi
    point = {"id": "i1", "kind": "incremental", "start": "20260101000000000", "end": "20260101000002000"}
    a = "20260101000001000"
    got = {"points": [point], "answers": {"i1": {"rows": [[a, "p0", 0, a]]}}}
    monkeypatch.setattr(wr, "slice_rows", _log_rows)
    none = {"i1": {"rows": []}}  # hudi-rs 0.5.0's answer
    notes = wr.compare_points(table, _no_read, got, False, None, none)["read_notes"]
    assert len(notes) == 2 and notes[1].startswith(SKIPS_LOG_ONLY_GROUPS)
    assert len(wr.compare_points(storage, _no_read, got, False, None, none)["read_notes"]) == 1
