"""``hcc timeline run``: the timeline catalogue, run directories, JSON output and field-naming errors.

About 15 s (every catalogue scenario runs once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.hudi_table_source import load_table
from cli.main import main
from scenarios import timeline_loader as cmd_timeline


@pytest.mark.parametrize("name", cmd_timeline.timeline_names())
def test_every_timeline_scenario_states_why_and_meets_its_expectation(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # hcc run NAME gives the verdict the entry states, and says whose behaviour the run is
    assert cmd_timeline.resolve(name).read_text().lstrip().startswith("#")
    assert main(["run", name, "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    ts = cmd_timeline.load(name)
    assert summary["verdict"] == ts.scenario.expect and summary["matches_expectation"]
    assert summary["scenario"] == name and summary["models"] == ts.models()
    for f in ("history.jsonl", "verdict.json", "metrics.json", "scenario.toml"):
        assert (tmp_path / f).exists()
    # the run leaves its table: a Hudi COPY_ON_WRITE table, read back by the real-table reader
    table = load_table(tmp_path / "table")
    assert table.table_type == "COPY_ON_WRITE" and table.timeline.completed()
    # the resolved scenario round-trips
    assert cmd_timeline.load(str(tmp_path / "scenario.toml")) == cmd_timeline.load(name)


def test_catalogue_covers_both_failure_modes_of_the_generator() -> None:
    names = set(cmd_timeline.timeline_names())
    assert {
        "tl-skew-adjusting-safe",
        "tl-skew-beyond-setting",
        "tl-lock-long-pause",
        "tl-local-clock-skew",
        "tl-cc-none-lost-update",
        "tl-occ-put-if-absent",
        "tl-hudi-occ-duplicate-key",
        "tl-v5-pk-check-unique-keys",
    } <= names


def test_a_changed_expectation_exits_1(tmp_path: Path) -> None:
    assert (
        main(["timeline", "run", "tl-cc-none-lost-update", "--set", 'expect="ok"', "--out", str(tmp_path)])
        == 1
    )


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ('timeline.cc="sometimes"', "timeline.cc"),
        ('timeline.time_generator="ntp"', "timeline.time_generator"),
        ("timeline.keys=0", "timeline.keys"),
        ('timeline.layout="v7"', "timeline.layout"),
        ('timeline.checkers=["overlap"]', "timeline.checkers"),
        ("timeline.colour=1", "timeline.colour"),
        ("workload.writers=0", "workload.writers"),
    ],
)
def test_bad_fields_exit_2_naming_field_and_value(
    override: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["timeline", "run", "tl-cc-none-lost-update", "--set", override, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert field in err


def test_unknown_scenario_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["timeline", "run", "no-such-scenario"]) == 2
    assert "tl-lock-long-pause" in capsys.readouterr().err
