"""A failed write of Hudi's own writers is judged as Jepsen judges a failed call: aborted only when the run
or Hudi's exception says its instant never completed; committed (a note, not an anomaly) when its
instant completed and the call failed after, as tl-hudi-insert-overwrite-safe's w3 did (its
insert_overwrite's replacecommit completed, then commitStats's failed-writes clean threw
HoodieRollbackException); else indeterminate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyses.writers_differential import committed_failed_notes, judge, timeline_instants
from engines.hudi_spark.check import CONFLICT, check_run, commit_marks, main, with_failed_instants
from engines.hudi_spark.writer import MARK
from model.timeline.metadata import encode_commit_metadata

ROLLBACK = "org.apache.hudi.exception.HoodieRollbackException"
IO = "org.apache.hudi.exception.HoodieIOException"
# the instants (17 digits, as Hudi's): w1's upsert of k2=1002, then w3's insert_overwrite of k2=3003
W1, W1_DONE, W3, W3_DONE = "20261129100836651", "20261129100851619", "20261129101006922", "20261129101027007"
TIMELINE = [{"requested": W1, "completed": W1_DONE, "state": "completed", "action": "commit",
             "file": f"{W1}_{W1_DONE}.commit"},
            {"requested": W3, "completed": W3_DONE, "state": "completed", "action": "replacecommit",
             "file": f"{W3}_{W3_DONE}.replacecommit"}]


def _history(cls: str, **instant: Any) -> list[dict[str, Any]]:
    """w1 upserts k2=1002 (acknowledged); w3's insert_overwrite of k2=3003 fails with ``cls`` (its line
    recording ``instant`` when given); the final read returns k2=3003 from w3's instant."""
    ok = {"process": "w1", "f": "write", "type": "ok", "instant": f"{W1}_{W1_DONE}", "elapsed_s": 1.0,
          "time": 1.0, "value": {"batch": 1, "op": "upsert", "rows": [["k2", "p1", 1002]]}}
    fail = {"process": "w3", "f": "write", "type": "fail", "time": 2.0, "elapsed_s": 30.0,
            "value": {"batch": 2, "op": "insert_overwrite", "rows": [["k2", "p1", 3003]]},
            "error": {"class": cls, "message": "m", "root_class": IO if cls == ROLLBACK else None}, **instant}
    read = [{"process": "w1", "f": "read", "type": "invoke", "time": 3.0, "value": None},
            {"process": "w1", "f": "read", "type": "ok", "time": 4.0,
             "value": [["k2", "p1", 3003, W3, "f.parquet"]]}]
    return [ok, fail, *read]


def _kinds(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["kind"] for i in items)


def test_a_write_whose_call_failed_after_its_replacecommit_completed_is_a_note_not_an_anomaly() -> None:
    got = check_run(_history(ROLLBACK, instant=f"{W3}_{W3_DONE}"), TIMELINE)
    assert got["valid"], got["anomalies"]
    assert _kinds(got["notes"]) == ["committed-call-failed"]  # and no commit-without-ack
    assert got["notes"][0]["instant"] == f"{W3}_{W3_DONE}" and got["notes"][0]["root_class"] == IO
    assert got["aborted"] == 0


def test_a_committed_failed_write_counts_as_committed_so_its_missing_value_is_a_lost_update() -> None:
    events = _history(ROLLBACK, instant=f"{W3}_{W3_DONE}")
    events[-1] = {**events[-1], "value": [["k2", "p1", 1002, W1, "f.parquet"]]}  # w1's value, not w3's
    got = check_run(events, TIMELINE)
    assert [(a["kind"], a["value"], a["expected"]) for a in got["anomalies"]] == [("lost-update", 1002, 3003)]


@pytest.mark.parametrize("instant", [{}, {"instant": None}, {"instant": f"{W3}_{W3_DONE}"}])
def test_a_write_conflict_is_a_definite_abort_so_its_visible_value_is_an_anomaly(
        instant: dict[str, Any]) -> None:
    got = check_run(_history(CONFLICT, **instant), TIMELINE)
    assert not got["valid"]
    want = ["aborted-write-visible"] + (["abort-committed"] if instant.get("instant") else [])
    assert _kinds(got["anomalies"]) == sorted(want)


def test_a_failed_write_whose_line_records_no_completed_instant_is_aborted() -> None:
    got = check_run(_history(ROLLBACK, instant=None), TIMELINE)
    assert _kinds(got["anomalies"]) == ["aborted-write-visible"]


def test_a_failed_write_of_an_older_history_is_indeterminate_and_may_be_visible() -> None:
    got = check_run(_history(ROLLBACK), TIMELINE)  # no instant on the line: the history does not tell
    assert got["valid"], got["anomalies"]
    assert _kinds(got["notes"]) == ["commit-without-ack", "indeterminate-write-visible"]


def _table(root: Path) -> Path:
    """A ``.hoodie/timeline`` whose completed instants carry the writers' marks as Hudi stores them."""
    timeline = root / "table" / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    for (req, done, action), (writer, batch) in [((W1, W1_DONE, "commit"), ("w1", "1")),
                                                 ((W3, W3_DONE, "replacecommit"), ("w3", "2"))]:
        (timeline / f"{req}.{action}.requested").write_bytes(b"")
        md = {"extraMetadata": {f"{MARK}writer": writer, f"{MARK}batch": batch}, "operationType": "UPSERT"}
        (timeline / f"{req}_{done}.{action}").write_bytes(encode_commit_metadata("v8", md))
    return timeline


def test_the_tables_commit_marks_tie_a_failed_call_to_its_completed_instant(tmp_path: Path) -> None:
    marks = commit_marks(_table(tmp_path))
    assert marks == {f"{W1}_{W1_DONE}": ("w1", "1"), f"{W3}_{W3_DONE}": ("w3", "2")}
    events = with_failed_instants(_history(ROLLBACK), marks)
    assert events[1]["instant"] == f"{W3}_{W3_DONE}"
    other = with_failed_instants(_history(ROLLBACK), {f"{W1}_{W1_DONE}": ("w1", "1")})
    assert other[1]["instant"] is None  # the table holds no completed instant of w3's batch 2


def test_the_check_judges_a_run_folder_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _table(tmp_path)
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _history(ROLLBACK)))
    (tmp_path / "timeline.json").write_text(json.dumps(TIMELINE))
    assert main([str(tmp_path)]) == 0
    assert '"committed-call-failed"' in capsys.readouterr().out


def test_the_differential_counts_a_committed_failed_call_as_a_commit() -> None:
    names = [f"{W1}.commit.requested", f"{W1}_{W1_DONE}.commit",
             f"{W3}.replacecommit.requested", f"{W3}_{W3_DONE}.replacecommit"]
    instants = timeline_instants(names)
    events = _history(ROLLBACK, instant=f"{W3}_{W3_DONE}")
    mine = [a for a in judge(events, instants, {}) if a.process == "w3"]
    assert [(a.instant, a.hudi, a.model) for a in mine] == [(int(W3), "commit", "commit")]
    assert committed_failed_notes(events, instants)[0].startswith(f"w3 batch 2: committed as {W3}_{W3_DONE}")
    aborted = judge(_history(ROLLBACK, instant=None), instants, {})
    assert [a.process for a in aborted] == ["w1"]  # not a conflict decision: not judged
