"""The isolation section of OCC and NBCC run reports (``reports/isolation.py``): the run directory gets
``isolation.json`` and each view's history, the report a section naming the anomalies and the models
they rule out; a run without transaction records says so; other protocols get nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.rundir import execute_entry
from model.checkers.txn_history import read_txn_jsonl
from reports.isolation import ISOLATION, MODELS_SHOWN
from reports.load import load_run
from reports.report import render_run_report
from scenarios.catalogue import load


def test_an_occ_run_directory_gets_isolation_json_and_its_report_the_section(tmp_path: Path) -> None:
    out = tmp_path / "run"
    execute_entry(load("tl-hudi-occ-duplicate-key"), out=out)
    data = json.loads((out / ISOLATION).read_text())
    assert data["protocol"] == "occ" and data["recorded"] and data["claimed"] == ["strict-serializable"]
    views = {v["view"]: v for v in data["views"]}
    assert views["records"]["anomalies"] == ["G2-item", "lost-update"]
    assert views["records"]["ruled_out"]["snapshot-isolation"] is True
    assert views["records"]["ruled_out"]["read-committed"] is False
    assert set(views["records"]["ruled_out"]) == set(MODELS_SHOWN)
    assert "lost-update" in views["records"]["elle"]["anomalies"]
    for v in views.values():  # the histories hcc check-history reads
        read_txn_jsonl((out / v["history"]).read_text().splitlines(), "rw-register")
    md = (out / "report.md").read_text()
    assert "## Isolation (Elle's check of the run's transactions)" in md
    assert "Anomalies: G2-item, lost-update" in md
    summary = json.loads((out / "report.json").read_text())["isolation"]
    assert summary["records"]["anomalies"] == ["G2-item", "lost-update"]


def test_an_nbcc_run_reports_the_read_skew_of_issue_19774(tmp_path: Path) -> None:
    out = tmp_path / "run"
    execute_entry(load("nbcc-uncommitted-anchor-window"), out=out)
    data = json.loads((out / ISOLATION).read_text())
    assert [v["anomalies"] for v in data["views"]] == [["G-single-item"]]
    assert "blind" in data["sees"]
    assert "G-single-item" in (out / "report.md").read_text()


def test_the_report_checks_the_history_when_isolation_json_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    execute_entry(load("tl-hudi-occ-duplicate-key"), out=out, report=False)
    (out / ISOLATION).unlink()
    md = render_run_report(out, ["md"])["report.md"]
    assert "Anomalies: G2-item, lost-update" in md


def test_a_history_without_transaction_records_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    execute_entry(load("tl-hudi-occ-duplicate-key"), out=out, report=False)
    (out / ISOLATION).unlink()
    history = out / "history.jsonl"
    history.write_text("".join(line + "\n" for line in history.read_text().splitlines()
                               if '"f":"txn"' not in line))
    md = render_run_report(out, ["md"])["report.md"]
    assert "This run recorded no transactions" in md
    assert json.loads(render_run_report(out, ["json"])["report.json"])["isolation"] == {"recorded": False}


@pytest.mark.parametrize("name", ["rfc91-safe"])
def test_a_lock_run_has_no_isolation(name: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    execute_entry(load(name), out=out)
    assert not (out / ISOLATION).exists()
    assert "Isolation" not in (out / "report.md").read_text()
    assert "isolation" not in json.loads((out / "report.json").read_text())
    assert load_run(out).protocol == "lock"
