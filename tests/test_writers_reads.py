"""Time travel and incremental reads of a Hudi run's table, Hudi's Spark reader against the model's reader
(analyses/writers_reads.py), without Spark: on a simulated NBCC table with overlapping deltacommits, Hudi's
answers made from the model's own readings agree; a Hudi whose time-travel read loses a row is a difference
naming NB23; Hudi's request-time time travel and its refusal at a pending commit are declared, a refusal
with no pending commit is not."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

import pytest

import analyses.writers_reads as wr
from engines.hudi_spark.reads import points_at
from model.nbcc.sim_table import run_table
from model.nbcc.slices import FileSlice, Rule
from model.nbcc.timeline_reader import HudiTable, ReadBytes, slice_records
from model.timeline.layout import Instant, State
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
