"""An NBCC run keeps the first 5 violations of each kind as examples, and counts them all: verdict.json's
``violation_counts``, the report's total and its table, ``hcc run``'s line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from model.nbcc.sim_checks import MAX_PER_KIND


def test_every_violation_is_counted_and_the_examples_are_capped(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    main(["run", "nbcc-instant-time-rule", "--out", str(out)])
    printed = capsys.readouterr().out
    verdict = json.loads((out / "verdict.json").read_text())
    counts = verdict["violation_counts"]
    kept = verdict["violations"]
    assert max(counts.values()) > MAX_PER_KIND  # a kind with more violations than examples kept
    for kind, n in counts.items():
        assert sum(v["kind"] == kind for v in kept) == min(n, MAX_PER_KIND)
    total = sum(counts.values())
    report = (out / "report.md").read_text()
    assert f"{total} violation(s) ({len(kept)} of them kept as examples" in report
    for kind, n in counts.items():
        assert f"| {kind} | {n} | {min(n, MAX_PER_KIND)} |" in report
    assert f"... and {total - 10} more ({len(kept)} kept as examples in verdict.json)" in printed


def test_a_run_without_violations_has_no_counts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "nbcc-completion-time-safe", "--out", str(out)]) == 0
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["violations"] == [] and "violation_counts" not in verdict
