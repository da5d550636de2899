"""The regression gate: a worsened metric or an unexpected violation exits 1 and names it; bad input is 2."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("pandas")

from cli.main import main  # noqa: E402
from engines.rundir import execute, execute_entry  # noqa: E402
from scenarios import catalogue, loader  # noqa: E402


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two runs, as 'hcc run --all --out DIR' writes them (no reports: not needed here)."""
    root = tmp_path_factory.mktemp("gate") / "out"
    execute(loader.load("rfc91-long-pause"), None, root / "rfc91-long-pause", report=False)
    execute(loader.load("rfc91-safe", ["duration_ms=120000"]), None, root / "rfc91-safe", report=False)
    return root


@pytest.fixture()
def baseline(runs: Path, tmp_path: Path) -> Path:
    path = tmp_path / "baseline.json"
    assert main(["gate", str(runs), "--baseline", str(path), "--update"]) == 0
    return path


def _edit(path: Path, scenario: str, fn: object) -> None:
    data = json.loads(path.read_text())
    fn(data["scenarios"][scenario])  # type: ignore[operator]
    path.write_text(json.dumps(data))


def test_runs_pass_against_their_own_baseline(runs: Path, baseline: Path, tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    assert main(["gate", str(runs), "--baseline", str(baseline), "--junit", str(junit)]) == 0
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0" and int(root.get("tests", "0")) > 20
    assert main(["gate", str(runs / "rfc91-safe"), "--baseline", str(baseline)]) == 0


def test_a_worsened_metric_fails_and_is_named(runs: Path, baseline: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def tighten(entry: dict[str, object]) -> None:
        metrics = entry["metrics"]
        assert isinstance(metrics, dict)
        spec = metrics["acquire_latency_ms.p99"]
        spec["baseline"] = spec["baseline"] // 2  # the run is now twice as slow as the baseline

    _edit(baseline, "rfc91-safe", tighten)
    junit = tmp_path / "gate.xml"
    assert main(["gate", str(runs), "--baseline", str(baseline), "--junit", str(junit)]) == 1
    captured = capsys.readouterr()
    assert "acquire_latency_ms.p99 got worse" in captured.err and "rfc91-safe" in captured.err
    assert "FAIL" in captured.out and "acquire_latency_ms.p99" in captured.out
    failures = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    names = [(c.get("classname"), c.get("name")) for c in failures]
    assert names == [("gate.rfc91-safe", "acquire_latency_ms.p99")]


def test_within_tolerance_passes(runs: Path, baseline: Path) -> None:
    def nudge(entry: dict[str, object]) -> None:
        metrics = entry["metrics"]
        assert isinstance(metrics, dict)
        spec = metrics["acquire_latency_ms.p99"]
        spec["baseline"] = spec["baseline"] - 10  # worse by 10 ms, inside abs 50

    _edit(baseline, "rfc91-safe", nudge)
    assert main(["gate", str(runs), "--baseline", str(baseline)]) == 0


def test_an_unexpected_safety_violation_fails(runs: Path, baseline: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # The baseline recorded no violation kind for the long pause: any overlap is now unexpected.
    _edit(baseline, "rfc91-long-pause", lambda e: e.update(violation_kinds=[]))
    assert main(["gate", str(runs), "--baseline", str(baseline)]) == 1
    assert "unexpected safety violation(s): lost-update, overlap, stale-write" in capsys.readouterr().err
    # A scenario that expects ok but finds a violation fails on its verdict.
    out = tmp_path / "expects-ok"
    execute(loader.load("rfc91-long-pause", ["expect=ok", "duration_ms=480000"]), None, out, report=False)
    assert main(["gate", str(out), "--baseline", str(baseline)]) == 1
    assert "expected ok, got violation" in capsys.readouterr().err


def test_update_refuses_a_run_that_missed_its_expectation(tmp_path: Path) -> None:
    out = tmp_path / "expects-ok"
    execute(loader.load("rfc91-long-pause", ["expect=ok", "duration_ms=480000"]), None, out, report=False)
    path = tmp_path / "b.json"
    assert main(["gate", str(out), "--baseline", str(path), "--update"]) == 1
    assert not path.exists()


def test_missing_scenario_run_or_baseline_entry_fails(runs: Path, baseline: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    only_one = tmp_path / "partial"
    shutil.copytree(runs / "rfc91-safe", only_one / "rfc91-safe")
    assert main(["gate", str(only_one), "--baseline", str(baseline)]) == 1
    assert "no run directory for scenario rfc91-long-pause" in capsys.readouterr().err
    data = json.loads(baseline.read_text())
    del data["scenarios"]["rfc91-safe"]
    baseline.write_text(json.dumps(data))
    assert main(["gate", str(runs / "rfc91-safe"), "--baseline", str(baseline)]) == 1
    assert "no baseline entry for scenario rfc91-safe" in capsys.readouterr().err


def test_bad_input_exits_2_naming_the_problem(runs: Path, baseline: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", str(tmp_path / "nope"), "--baseline", str(baseline)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["gate", str(runs), "--baseline", str(tmp_path / "absent.json")]) == 2
    assert "absent.json: does not exist" in capsys.readouterr().err
    data = json.loads(baseline.read_text())
    data["scenarios"]["rfc91-safe"]["metrics"]["fairness_jain"]["worse"] = "sideways"
    baseline.write_text(json.dumps(data))
    assert main(["gate", str(runs), "--baseline", str(baseline)]) == 2
    assert "scenarios.rfc91-safe.metrics.fairness_jain.worse = 'sideways'" in capsys.readouterr().err
    broken = tmp_path / "broken"
    shutil.copytree(runs / "rfc91-safe", broken)
    (broken / "verdict.json").write_text("{")
    assert main(["gate", str(broken), "--baseline", str(baseline)]) == 2
    assert "verdict.json is not valid JSON" in capsys.readouterr().err


def test_a_new_isolation_anomaly_kind_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Elle finds a lost update in the duplicate-key entry's records view (both inserts read k1 absent)
    out = tmp_path / "runs"
    execute_entry(catalogue.load("tl-hudi-occ-duplicate-key"), None, out / "tl-hudi-occ-duplicate-key",
                  report=False)
    metrics = json.loads((out / "tl-hudi-occ-duplicate-key" / "metrics.json").read_text())
    assert metrics["isolation"]["records"]["lost-update"] >= 1
    path = tmp_path / "baseline.json"
    assert main(["gate", str(out), "--baseline", str(path), "--update"]) == 0
    assert "lost-update" in json.loads(path.read_text())["scenarios"]["tl-hudi-occ-duplicate-key"][
        "isolation_kinds"]["records"]
    assert main(["gate", str(out), "--baseline", str(path)]) == 0
    # a baseline that recorded no anomaly in that view: the run's lost update is new
    _edit(path, "tl-hudi-occ-duplicate-key", lambda e: e["isolation_kinds"].update(records=[]))
    assert main(["gate", str(out), "--baseline", str(path)]) == 1
    assert "a new isolation anomaly in view records: G2-item, lost-update" in capsys.readouterr().err
