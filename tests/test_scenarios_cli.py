"""Scenario files and the hcc command line: overrides, defaults, exit codes, clear errors."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cli.main import main
from model.config import ConfigError
from scenarios import loader


def test_every_catalogue_entry_loads_and_states_why_in_a_comment() -> None:
    names = loader.catalogue_names()
    for required in (
        "rfc91-safe",
        "rfc91-long-pause",
        "rfc91-throttled-renewal",
        "rfc91-renewals-fail",
        "rfc91-renewals-fail-skew",
        "rfc91-hypothetical-careful-writer",
        "rfc91-hypothetical-careful-margin",
        "rfc91-lost-reply",
        "rfc91-lost-reply-hudi-1.1",
        "rfc91-fenced-long-pause",
    ):
        assert required in names
    for name in names:
        text = loader.resolve(name).read_text()
        assert text.lstrip().startswith("#"), f"{name}: the expected verdict needs its reason in a comment"
        loader.load(name)


def test_show_fills_every_default_and_round_trips(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["show", "rfc91-long-pause"]) == 0
    text = capsys.readouterr().out
    raw = tomllib.loads(text)
    assert raw["lock"]["validity_secs"] == 300 and raw["lock"]["renew_interval_secs"] == 30
    assert raw["lock"]["wait_time_ms"] == 60_000
    path = tmp_path / "copy.toml"
    path.write_text(text)
    assert loader.load(str(path)) == loader.load("rfc91-long-pause")


@pytest.mark.parametrize(
    ("override", "field", "value"),
    [
        ("lock.validity_secs=20", "lock.validity_secs", 20),
        ('lock.variant="zookeeper"', "lock.variant", "zookeeper"),
        ("workload.writers=0", "workload.writers", 0),
        ('faults.pauses[0].trigger="soon"', "faults.pauses[0].trigger", "soon"),
        ("lock.colour=3", "lock.colour", 3),
        ('storage.timeout_ms="fast"', "storage.timeout_ms", "fast"),
    ],
)
def test_bad_values_name_the_field_and_the_value(
    override: str, field: str, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as err:
        loader.load("rfc91-long-pause", [override])
    assert err.value.field == field and err.value.value == value
    assert main(["run", "rfc91-long-pause", "--set", override]) == 2
    message = capsys.readouterr().err
    assert field in message and repr(value) in message


def test_run_json_exit_codes_and_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", "rfc91-long-pause", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdict"] == "violation" and summary["violations"] and summary["seed"] == 1
    assert summary["scenario"] == "rfc91-long-pause"
    for name in ("history.jsonl", "verdict.json", "metrics.json", "scenario.toml"):
        assert (out / name).exists()
    # The same scenario with the pause made short no longer violates: the expectation fails, exit 1.
    assert (
        main(
            [
                "run",
                "rfc91-long-pause",
                "--out",
                str(tmp_path / "run2"),
                "--set",
                "faults.pauses[0].duration_ms=2000",
                "--json",
            ]
        )
        == 1
    )
    assert json.loads(capsys.readouterr().out)["verdict"] == "ok"
    assert main(["run", "no-such-scenario"]) == 2
