"""The report of a model explorer's entry agrees with its explore.json, and reads as prose and tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli.main import main


def test_explorer_report_counts_agree_with_explore_json(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "explore-lock-hudi-long-pause", "--out", str(out)]) == 0
    ex = json.loads((out / "explore.json").read_text())
    md = (out / "report.md").read_text()
    steps, decisions = len(ex["counterexample"]), ex["counterexample_length"]
    assert f"## Counterexample: {decisions} decisions, {steps} events" in md
    table = md.split("**Steps**", 1)[1].split("\n\n", 2)[1]
    rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
    assert len(rows) >= min(steps, 20)  # the Markdown shows the first 20 rows
    every = [s for s in ex["counterexample"] if s.get("decision")]
    assert len(every) == decisions
    # each row names who acted and what: no empty columns
    assert all(re.match(r"\| \d+ \| \d+ \| \S+ \| \S", r) for r in rows)
    violation = ex["violation"]
    assert f"Violation [{violation['kind']}] at {violation['time_ms']} ms: {violation['message']}" in md
    assert "{'" not in md and "['" not in md  # no Python repr of a dict or a list
