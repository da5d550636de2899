"""``hcc gate RUN_DIR --baseline BASELINE.json [--format F[=PATH]] ... [--update]``: the regression gate.

RUN_DIR is one run directory or a folder of them (``hcc run --all --out DIR``); in the
store (``out/runs``, or one scenario's folder of it) the ``latest`` links are followed.  Exit 0 when
every check passes, 1 when one fails (an unexpected violation, a metric worse than its
tolerance, a scenario without a run or without a baseline), 2 for unreadable input.

``--format`` (repeatable) writes the result for a CI system (``reports/ci_formats.py``): ``junit``
(JUnit XML, default path ``gate-junit.xml``; ``--junit FILE`` is ``--format junit=FILE``), ``github``
(``::error`` annotations on stdout, the Markdown summary appended to ``$GITHUB_STEP_SUMMARY`` when it
is set, or written to PATH), ``gitlab`` (a Code Quality report, default ``gl-code-quality-report.json``)
and ``markdown`` (the summary, to PATH or stdout).  docs/ci.md wires them into a project's CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from engines.rundir import write_atomic


def register(subparsers: Any) -> None:
    """Add the ``gate`` subcommand."""
    p = subparsers.add_parser("gate", help="compare runs with a baseline; JUnit, GitHub, GitLab, Markdown")
    p.add_argument("run_dir", help="a run directory, a folder holding one run directory per scenario, or the "
                                   "store out/runs (the latest run of each scenario)")
    p.add_argument("--baseline", required=True, help="baseline JSON (one entry per scenario)")
    p.add_argument("--junit", help="write JUnit XML here (the same as --format junit=FILE)")
    p.add_argument("--format", action="append", default=[], metavar="F[=PATH]",
                   help="junit, github, gitlab or markdown, each optionally =PATH; repeatable (docs/ci.md)")
    p.add_argument("--update", action="store_true",
                   help="write the baseline from these runs instead of gating (on purpose only)")
    p.add_argument("--all-rows", action="store_true", help="print passing checks too")
    p.set_defaults(func=run)


DEFAULT_PATHS = {"junit": "gate-junit.xml", "gitlab": "gl-code-quality-report.json"}


def parse_formats(values: list[str], junit: str | None) -> dict[str, str | None]:
    """``--format`` values as {format: path or None}; ValueError names a bad one."""
    from reports.ci_formats import FORMATS

    out: dict[str, str | None] = {}
    for value in values:
        name, _, path = value.partition("=")
        if name not in FORMATS:
            raise ValueError(f"--format {value!r}: the format must be one of {', '.join(FORMATS)}")
        out[name] = path or DEFAULT_PATHS.get(name)
    if junit:
        out["junit"] = junit
    return out


def _write_formats(formats: dict[str, str | None], checks: list[Any], baseline_path: Path) -> None:
    from reports.ci_formats import (
        baseline_locations,
        github_annotations,
        gitlab_code_quality,
        markdown_summary,
    )
    from reports.junit import junit_xml

    text = baseline_path.read_text()
    where = baseline_locations(str(baseline_path), text, sorted({c.scenario for c in checks}))
    for name, path in formats.items():
        if name == "junit":
            write_atomic(Path(str(path)), junit_xml(checks))
        elif name == "gitlab":
            write_atomic(Path(str(path)), gitlab_code_quality(checks, where))
        elif name == "github":
            sys.stdout.write(github_annotations(checks, where))
            summary = path or os.environ.get("GITHUB_STEP_SUMMARY")
            if summary:  # GitHub's step summary file is appended to, one step after another
                with open(summary, "a", encoding="utf-8") as f:
                    f.write(markdown_summary(checks))
        elif path:
            write_atomic(Path(path), markdown_summary(checks))
        else:
            sys.stdout.write(markdown_summary(checks))


def run(args: argparse.Namespace) -> int:
    """Gate (or, with --update, record) the runs."""
    import pandas as pd

    from reports.gate import BaselineError, gate_missing, gate_run, load_baseline, update_baseline
    from reports.load import RunDirError, find_runs, is_one_run, load_run

    baseline_path = Path(args.baseline)
    try:
        formats = parse_formats(args.format, args.junit)
    except ValueError as e:
        print(f"hcc gate: error: {e}", file=sys.stderr)
        return 2
    try:
        runs = [load_run(p) for p in find_runs(Path(args.run_dir))]
        if args.update:
            old = load_baseline(baseline_path) if baseline_path.exists() else None
        else:
            baseline = load_baseline(baseline_path)
        checks = [] if args.update else [c for r in runs for c in gate_run(r, baseline)]
    except (RunDirError, BaselineError) as e:
        print(f"hcc gate: error: {e}", file=sys.stderr)
        return 2
    if args.update:
        unexpected = [r for r in runs if r.outcome != r.expect]
        for r in unexpected:
            print(f"hcc gate: refusing to record {r.name}: verdict {r.outcome}, expected {r.expect}",
                  file=sys.stderr)
        if unexpected:
            return 1
        write_atomic(baseline_path, json.dumps(update_baseline(runs, old), indent=2, sort_keys=True) + "\n")
        print(f"baseline {baseline_path}: recorded {', '.join(r.name for r in runs)}")
        return 0
    if len(runs) > 1 or not is_one_run(args.run_dir):
        checks += gate_missing(baseline, {r.name for r in runs})
    table = pd.DataFrame([{"scenario": c.scenario, "check": c.name, "baseline": c.baseline, "now": c.now,
                           "change": c.change, "limit": c.limit, "status": "ok" if c.ok else "FAIL"}
                          for c in checks if args.all_rows or not c.ok or c.name == "verdict"])
    # a format that writes to stdout (Markdown without a path, GitHub's annotations) gets stdout alone
    console = sys.stderr if any(n == "github" or (n == "markdown" and not p) for n, p in formats.items()) \
        else sys.stdout
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 40):
        print(table.to_string(index=False), file=console)
    failed = [c for c in checks if not c.ok]
    for c in failed:
        print(f"FAIL {c.scenario}: {c.message}", file=sys.stderr)
    _write_formats(formats, checks, baseline_path)
    print(summary_line(checks), file=console)
    return 1 if failed else 0


def summary_line(checks: list[Any]) -> str:
    """``gate: N of M checks passed (V of W verdicts, K of L metric checks ...)``: the table shows the
    verdict rows and the failures; the line counts the metric checks it does not show."""
    verdicts = [c for c in checks if c.name == "verdict"]
    metrics = [c for c in checks if c.name != "verdict"]
    failed = sum(not c.ok for c in checks)
    return (f"gate: {len(checks) - failed} of {len(checks)} checks passed"
            + (f", {failed} failed" if failed else "")
            + f" ({sum(c.ok for c in verdicts)} of {len(verdicts)} verdicts, {sum(c.ok for c in metrics)} of "
              f"{len(metrics)} metric checks; --all-rows lists every one)")
