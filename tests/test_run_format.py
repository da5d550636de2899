"""The run directory's format is declared once (``model/run_format.py``): the published JSON Schema is the
generated one; every world's run directory validates against it (here the simulated and explored ones,
read as one JSON object, with jsonschema as well as the harness's own check); a directory whose file is
missing a field or has one of the wrong type is refused by ``hcc report`` and ``hcc gate`` with exit 2,
naming the file and the field."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from engines.rundir import RunFileError, RunWriter
from model.protocols import NAMES
from model.run_format import (
    HISTORY,
    METRICS,
    SCENARIO,
    VERDICT,
    EventLine,
    FormatError,
    VerdictFile,
    check,
    files_of,
    isolation_view_file,
    json_schema,
    schema_text,
)
from model.runtime.history import Event

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "docs" / "run-directory.schema.json"
ENTRIES = {"lock": "rfc91-safe", "occ": "tl-occ-put-if-absent", "nbcc": "nbcc-completion-time-safe",
           "explore": "explore-lock-hudi-three-writers", "explore-cow": "explore-cow-nom-nocc-salt"}


def _quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def as_object(run: Path) -> dict[str, Any]:
    """A run directory as the schema reads it: file name -> parsed content."""
    out: dict[str, Any] = {}
    for p in sorted(run.iterdir()):
        if p.suffix == ".json" and not p.name.startswith("report"):
            out[p.name] = json.loads(p.read_text())
    for p in sorted(run.glob("*.jsonl")):  # the history, and the transactions views' histories
        out[p.name] = [json.loads(line) for line in p.read_text().splitlines() if line]
    out[SCENARIO] = (run / SCENARIO).read_text()
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("format")
    out = {}
    for key, name in ENTRIES.items():
        out[key] = root / key
        sets = ["duration_ms=60000"] if key == "lock" else []
        assert _quiet(["run", name, "--out", str(out[key]), *sum((["--set", s] for s in sets), [])]) == 0
    return out


def test_the_published_schema_is_the_generated_one() -> None:
    assert PUBLISHED.read_text() == schema_text(), (
        "docs/run-directory.schema.json is stale: "
        "python3 -m model.run_format > docs/run-directory.schema.json")


def test_the_history_line_is_the_event() -> None:
    assert list(EventLine.__annotations__) == list(Event._fields)


def test_every_protocols_run_directory_validates(runs: dict[str, Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())
    for key, run in runs.items():
        doc = as_object(run)
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        assert errors == [], (key, errors[:5])
        protocol = doc[VERDICT]["protocol"]
        for name, declared in files_of(protocol).items():
            if name in doc:
                check(doc[name], declared)
    assert {json.loads((r / VERDICT).read_text())["protocol"] for r in runs.values()} == set(NAMES)


def test_a_transactions_views_history_is_checked_line_by_line_as_it_is_written(runs: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    views = sorted(p.name for p in runs["occ"].glob("isolation-*.jsonl"))
    assert views == [isolation_view_file("file-groups"), isolation_view_file("records")]
    good = (runs["occ"] / views[1]).read_text()
    shutil.copytree(runs["occ"], tmp_path / "run")
    writer = RunWriter(tmp_path / "run", "occ")
    writer.write_text(views[1], good)  # as the run wrote it
    line = json.loads(good.splitlines()[0])
    with pytest.raises(RunFileError, match=r"isolation-records.jsonl.*line 2.*type"):
        writer.write_text(views[1], good.splitlines()[0] + "\n" + json.dumps({**line, "type": "done"}) + "\n")


def test_schema_and_check_refuse_the_same_broken_files(runs: dict[str, Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())
    doc = as_object(runs["lock"])
    broken: list[tuple[str, dict[str, Any]]] = [
        (VERDICT, {**doc[VERDICT], "seed": "7"}),
        (VERDICT, {k: v for k, v in doc[VERDICT].items() if k != "world"}),
        (VERDICT, {**doc[VERDICT], "world": "moon"}),
        (VERDICT, {**doc[VERDICT], "undeclared": 1}),
        (VERDICT, {**doc[VERDICT], "violations": [{"kind": "overlap", "message": "m", "events": ["x"],
                                                    "details": {}}]}),
        (METRICS, {**doc[METRICS], "acquisitions": 1.5}),
        (METRICS, {k: v for k, v in doc[METRICS].items() if k != "writers"}),
    ]
    for name, content in broken:
        assert not validator.is_valid({**doc, name: content}), (name, content)
        declared = VerdictFile if name == VERDICT else files_of("lock")[METRICS]
        with pytest.raises(FormatError):
            check(content, declared)


@pytest.mark.parametrize("file,change,said", [
    (VERDICT, lambda v: {**v, "seed": "seven"}, "verdict.json: field seed = 'seven' is not an integer"),
    (VERDICT, lambda v: {k: x for k, x in v.items() if k != "expect"},
     "verdict.json: field expect is missing"),
    (VERDICT, lambda v: {**v, "violations": [{"kind": 1}]}, "verdict.json: field violations[0].details is "
                                                           "missing"),
    (METRICS, lambda m: {**m, "acquire_latency_ms": {**m["acquire_latency_ms"], "p99": "slow"}},
     "metrics.json: field acquire_latency_ms.p99 = 'slow' is not an integer or null"),
    (METRICS, lambda m: {k: x for k, x in m.items() if k != "acquisitions"},
     "metrics.json: field acquisitions is missing"),
])
def test_report_and_gate_refuse_a_file_that_does_not_match_naming_it(
        runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, change: Any,
        said: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["lock"], run, ignore=shutil.ignore_patterns("report.*"))
    (run / file).write_text(json.dumps(change(json.loads((run / file).read_text()))))
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(runs["lock"]), "--baseline", str(baseline), "--update"]) == 0
    capsys.readouterr()
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and said in err, err
    assert not list(run.glob("report.*"))
    assert main(["gate", str(run), "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and said in err, err


def test_a_history_without_its_header_is_refused(runs: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["occ"], run, ignore=shutil.ignore_patterns("report.*"))
    lines = (run / HISTORY).read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "value": {"scenario": first["value"]["scenario"]}}) + "\n"
    (run / HISTORY).write_text("".join(lines))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "history.jsonl: line 1: the value of a run-start event: field seed is missing" in err, err


PLACEHOLDER = re.compile(r"(?<![\w`])\?(?![\w`])|\bNone\b")


def test_no_report_table_shows_none_a_float_count_or_an_unrounded_number(runs: dict[str, Path]) -> None:
    # one cell renderer for both formats (reports.document.cell_text): absent is empty, 360.0 is 360,
    # 0.9770218925275919 is 0.977
    for key, run in runs.items():
        html = (run / "report.html").read_text()
        cells = re.findall(r"<td>([^<]*)</td>", html)
        md_cells = [c.strip() for line in (run / "report.md").read_text().splitlines()
                    if line.startswith("|") for c in line.strip("|").split("|")]
        for cell in cells + md_cells:
            assert cell not in ("None", "nan", "NaN", "nil", "null"), (key, cell)
            assert not re.fullmatch(r"-?\d+\.0+", cell), (key, cell)
            assert not re.fullmatch(r"-?\d*\.\d{5,}", cell), (key, cell)


def test_no_report_prints_a_placeholder_for_a_value_the_run_produced(runs: dict[str, Path]) -> None:
    for key, run in runs.items():
        md = (run / "report.md").read_text()
        text = md
        shown = [ln for ln in text.splitlines() if PLACEHOLDER.search(ln)]
        assert not shown, (key, shown)
    metrics = json.loads((runs["nbcc"] / METRICS).read_text())
    assert (f"{metrics['instants']} instants ({metrics['completed']} completed), {metrics['compactions']} "
            f"compaction(s), {metrics['file_groups']} file groups, {metrics['log_files']} log files"
            in (runs["nbcc"] / "report.md").read_text())
    explored = json.loads((runs["explore"] / "explore.json").read_text())
    assert f"{explored['transitions']} transitions in {explored['runs']} runs" in (
        runs["explore"] / "report.md").read_text()
    cow = json.loads((runs["explore-cow"] / "explore.json").read_text())
    assert f"{cow['generated']} generated" in (runs["explore-cow"] / "report.md").read_text()
