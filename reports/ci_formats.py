"""Gate results in the native formats of CI systems, beside JUnit XML (``reports/junit.py``).

* **GitHub Actions**: one ``::error`` workflow command per failed check (an annotation on the line of
  the baseline file where the scenario's entry starts) and a Markdown step summary, appended to the
  file named by ``$GITHUB_STEP_SUMMARY`` (GitHub's documented workflow commands: data escapes ``%``,
  CR and LF; property values also ``:`` and ``,``).
* **GitLab**: a Code Quality report, a JSON array of issues with ``description``, ``check_name``,
  ``fingerprint``, ``severity`` and ``location.path`` / ``location.lines.begin`` (GitLab's code
  quality report format); GitLab reads JUnit XML for its test report.
* **Markdown**: the summary alone, for any system that shows Markdown.

Every format lists exactly the failed checks; passing ones are counted in the summary only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reports.gate import Check

FORMATS = ("junit", "github", "gitlab", "markdown")


@dataclass(frozen=True)
class Location:
    """Where a scenario's failures are attached: a file of the repository and a 1-based line."""

    path: str
    line: int = 1


def baseline_locations(path: str, text: str, scenarios: Sequence[str]) -> dict[str, Location]:
    """Each scenario's location in the baseline file: the line holding its entry's key (line 1 when
    the text does not show it, e.g. a baseline written on one line)."""
    out = {}
    lines = text.splitlines()
    for name in scenarios:
        key = json.dumps(name) + ":"
        line = next((i for i, row in enumerate(lines, start=1) if row.strip().startswith(key)), 1)
        out[name] = Location(path, line)
    return out


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _title(c: Check) -> str:
    return f"hcc gate: {c.scenario}: {c.name}"


def github_annotations(checks: Sequence[Check], where: Mapping[str, Location]) -> str:
    """One ``::error`` workflow command per failed check (empty when every check passed)."""
    lines = []
    for c in checks:
        if c.ok:
            continue
        props = [f"title={_escape_property(_title(c))}"]
        loc = where.get(c.scenario)
        if loc is not None:
            props = [f"file={_escape_property(loc.path)}", f"line={loc.line}", *props]
        lines.append(f"::error {','.join(props)}::{_escape_data(c.message or c.name)}")
    return "".join(line + "\n" for line in lines)


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(checks: Sequence[Check]) -> str:
    """A Markdown summary: the totals, then a table of the failed checks."""
    failed = [c for c in checks if not c.ok]
    scenarios = sorted({c.scenario for c in checks})
    head = (f"### hcc gate: {'FAILED' if failed else 'passed'}\n\n"
            f"{len(checks) - len(failed)} of {len(checks)} checks passed over {len(scenarios)} "
            f"scenario{'s' if len(scenarios) != 1 else ''}"
            + (f"; {len(failed)} failed.\n" if failed else ".\n"))
    if not failed:
        return head
    rows = ["| scenario | check | baseline | now | limit | why |", "|---|---|---|---|---|---|"]
    rows += [f"| {_cell(c.scenario)} | {_cell(c.name)} | {_cell(c.baseline)} | {_cell(c.now)} | "
             f"{_cell(c.limit)} | {_cell(c.message)} |" for c in failed]
    return head + "\n" + "\n".join(rows) + "\n"


def _severity(c: Check) -> str:
    # a verdict or a new violation kind is a safety regression; a metric drift is a major one
    return "critical" if c.name in ("verdict", "violation kinds", "run", "baseline") else "major"


def gitlab_code_quality(checks: Sequence[Check], where: Mapping[str, Location]) -> str:
    """GitLab's Code Quality report (JSON array, one issue per failed check)."""
    issues = []
    for c in checks:
        if c.ok:
            continue
        loc = where.get(c.scenario, Location("."))
        fingerprint = hashlib.sha256(f"{c.scenario}\0{c.name}".encode()).hexdigest()[:32]
        issues.append({
            "description": f"{c.scenario}: {c.message or c.name}",
            "check_name": f"hcc-gate/{c.name}",
            "fingerprint": fingerprint,
            "severity": _severity(c),
            "location": {"path": loc.path, "lines": {"begin": loc.line}},
        })
    return json.dumps(issues, indent=2) + "\n"
