"""The gate's CI formats: a failing gate gives GitHub annotations, a Markdown summary and a GitLab Code
Quality file, one entry per failed check, each checked against the format's documented fields; a
passing gate gives none; exit codes do not change."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pandas")

from cli.main import main  # noqa: E402
from engines.rundir import execute  # noqa: E402
from reports.ci_formats import github_annotations  # noqa: E402
from reports.gate import Check  # noqa: E402
from scenarios import loader  # noqa: E402

# GitHub's workflow command: ::error file=F,line=L,title=T::MESSAGE (docs: "Setting an error message")
ANNOTATION = re.compile(
    r"^::error file=(?P<file>[^,]+),line=(?P<line>\d+),title=(?P<title>[^:]+)::(?P<msg>.+)$")
GITLAB_FIELDS = {"description", "check_name", "fingerprint", "severity", "location"}
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gate-formats") / "out"
    execute(loader.load("rfc91-long-pause"), None, root / "rfc91-long-pause", report=False)
    execute(loader.load("rfc91-safe", ["duration_ms=120000"]), None, root / "rfc91-safe", report=False)
    return root


@pytest.fixture()
def failing_baseline(runs: Path, tmp_path: Path) -> Path:
    """A baseline the runs fail twice: rfc91-safe's p99 halved, and a scenario with no run."""
    path = tmp_path / "baseline.json"
    assert main(["gate", str(runs), "--baseline", str(path), "--update"]) == 0
    data = json.loads(path.read_text())
    spec = data["scenarios"]["rfc91-safe"]["metrics"]["acquire_latency_ms.p99"]
    spec["baseline"] = spec["baseline"] // 2
    data["scenarios"]["rfc91-gone"] = dict(data["scenarios"]["rfc91-safe"])
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
    return path


def _gate(runs: Path, baseline: Path, *extra: str) -> int:
    return main(["gate", str(runs), "--baseline", str(baseline), *extra])


def test_a_failing_gate_writes_every_format(runs: Path, failing_baseline: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    quality, markdown, junit = tmp_path / "cq.json", tmp_path / "gate.md", tmp_path / "junit.xml"
    code = _gate(runs, failing_baseline, "--format", "github", "--format", f"gitlab={quality}",
                 "--format", f"markdown={markdown}", "--format", f"junit={junit}")
    assert code == 1
    out = capsys.readouterr().out
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    assert len(annotations) == 2, annotations
    text = failing_baseline.read_text().splitlines()
    for line in annotations:
        m = ANNOTATION.match(line)
        assert m, line
        assert m["file"] == str(failing_baseline)
        scenario = "rfc91-safe" if "rfc91-safe" in m["title"] else "rfc91-gone"
        assert text[int(m["line"]) - 1].strip().startswith(f'"{scenario}":')  # the entry's own line
    assert any("acquire_latency_ms.p99 got worse" in a for a in annotations)
    # the step summary is appended to, never replaced
    appended = summary.read_text()
    assert appended.startswith("earlier step\n") and "### hcc gate: FAILED" in appended
    table = [row for row in markdown.read_text().splitlines() if row.startswith("| rfc91")]
    assert len(table) == 2 and all(row.count("|") == 7 for row in table)
    issues = json.loads(quality.read_text())
    assert len(issues) == 2
    for issue in issues:
        assert set(issue) == GITLAB_FIELDS
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["location"]["path"] == str(failing_baseline)
        assert isinstance(issue["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == 2  # GitLab shows only the first of equal fingerprints
    assert "<failure" in junit.read_text()


def test_a_passing_gate_annotates_nothing(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    baseline = tmp_path / "baseline.json"
    assert _gate(runs, baseline, "--update") == 0
    quality = tmp_path / "cq.json"
    assert _gate(runs, baseline, "--format", "github", "--format", f"gitlab={quality}", "--format",
                 "markdown") == 0
    out = capsys.readouterr().out
    assert "::error" not in out and "### hcc gate: passed" in out
    assert json.loads(quality.read_text()) == []


def test_an_unknown_format_is_bad_input(runs: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(runs, tmp_path / "b.json", "--format", "teamcity") == 2
    assert "teamcity" in capsys.readouterr().err


def test_annotation_text_is_escaped_as_github_documents() -> None:
    check = Check("s,1", "p99:x", 1, 2, "", "", False, "100% worse\nsecond line")
    line = github_annotations([check], {}).strip()
    assert line == "::error title=hcc gate%3A s%2C1%3A p99%3Ax::100%25 worse%0Asecond line"


def test_the_ci_recipe_on_a_folder_of_scenario_files(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """docs/ci.md: run a project's own folder of scenario files, record a baseline, gate with the formats."""
    folder = tmp_path / "ci" / "scenarios"
    folder.mkdir(parents=True)
    for name in ("rfc91-long-pause", "rfc91-holder-crash"):
        text = (loader.CATALOGUE / f"{name}.toml").read_text()
        (folder / f"{name}.toml").write_text(text.replace(f'name = "{name}"', f'name = "mine-{name}"'))
    out, baseline = tmp_path / "out" / "scenarios", tmp_path / "ci" / "hcc-baseline.json"
    assert main(["run", "--all", "--catalogue", str(folder), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["mine-rfc91-holder-crash", "mine-rfc91-long-pause"]
    assert main(["gate", str(out), "--baseline", str(baseline), "--update"]) == 0
    assert main(["gate", str(out), "--baseline", str(baseline), "--format", "markdown"]) == 0
    assert "over 2 scenarios" in capsys.readouterr().out
    # --catalogue is a folder of --all only
    assert main(["run", "rfc91-safe", "--catalogue", str(folder)]) == 2
    assert main(["run", "--all", "--catalogue", str(tmp_path / "none")]) == 2


def test_markdown_to_stdout_is_markdown_alone(runs: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "baseline.json"
    assert _gate(runs, baseline, "--update") == 0
    capsys.readouterr()
    assert _gate(runs, baseline, "--format", "markdown") == 0
    out, err = capsys.readouterr()
    assert out.lstrip().startswith("### hcc gate") and " check  baseline " not in out
    assert "metric checks" not in out and " check  baseline " in err  # the text table and the line: stderr
    # the line counts the metric checks the table does not show
    m = re.search(r"gate: (\d+) of (\d+) checks passed \((\d+) of (\d+) verdicts, (\d+) of (\d+) "
                  r"metric checks", err)
    assert m and int(m[2]) == int(m[4]) + int(m[6]) and int(m[6]) > 0
    assert _gate(runs, baseline) == 0  # without a stdout format, the table and the line go to stdout
    assert "metric checks" in capsys.readouterr().out
