"""Reports read as prose and tables: an explorer entry's agrees with its explore.json; an OCC run draws
only the figures its operations make meaningful."""

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


def test_the_occ_cumulative_plot_is_drawn_only_for_enough_operations(tmp_path: Path) -> None:
    # two operations make no curve: the per-writer table says it all
    for entry, drawn in (("tl-hudi-occ-duplicate-key", False), ("tl-skew-adjusting-safe", True)):
        out = tmp_path / entry
        main(["run", entry, "--out", str(out)])
        ops = json.loads((out / "metrics.json").read_text())["ops"]["invoked"]
        assert ("Cumulative commits" in (out / "report.html").read_text()) is drawn, (entry, ops)


def test_the_nbcc_report_draws_each_file_groups_slices_and_logs(tmp_path: Path) -> None:
    out = tmp_path / "nbcc"
    main(["run", "nbcc-instant-time-rule", "--out", str(out)])
    html = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    figure = html.split('id="nbcc-slices"', 1)[1].split("</svg>", 1)[0]
    logs = sum(1 for p in (out / "table").rglob("*.log.*"))
    # every log file of the table is one element of the figure (its name in the tooltip)
    assert figure.count("log: .") == logs > 0
    assert figure.count('class="ev slice"') >= 3 and 'class="ev base"' in figure
    (png,) = re.findall(r"!\[File groups over the table's time[^\]]*\]\((report-figure-\d+\.png)\)", md)
    assert (out / png).read_bytes().startswith(b"\x89PNG")
