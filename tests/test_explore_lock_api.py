"""The lock explorer's public API and command: a configuration from plain data (bad values named),
the result's JSON keys, ``hcc explore-lock`` exit codes, and a counterexample scenario that
``hcc run`` replays to the same violation."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import pytest

from cli.main import main as hcc
from model.config import ConfigError
from model.explore import ALL_REDUCTIONS, Bounds, Reductions, config_from_dict, explore

# The smallest configuration that shows the long pause: 2 writers, both starting at 0.
PAUSE = {"variant": "hudi", "writers": 2, "faults": 1, "fault_kinds": ["pause"], "pause_ms": [5_000],
         "steps_per_hold": 1,
         "phases": False, "checkers": ["stale-write", "lost-update"]}


def test_config_from_a_table() -> None:
    cfg = config_from_dict({**PAUSE, "skew_ms": 250, "reductions": ["hashing", "por"]})
    assert cfg == Bounds(variant="hudi", writers=2, faults=1, fault_kinds=("pause",), pause_ms=(5_000,),
                         steps_per_hold=1,
                         phases=False, checkers=("stale-write", "lost-update"), skew_ms=250,
                         reductions=Reductions(hashing=True, symmetry=False, por=True, shifts=False,
                                               lost_read_is_timeout=False, dominance=False))
    assert config_from_dict({"reductions": {"symmetry": False}}).reductions == Reductions(symmetry=False)
    assert config_from_dict({}).reductions == ALL_REDUCTIONS
    assert config_from_dict({}).audit is False  # Hudi's lock audit is off while exploring, by default
    # what to_json writes, config_from_dict reads back
    back = config_from_dict(cfg.to_json())
    assert back == dataclasses.replace(cfg, tick_ms=cfg.tick(), liveness_ms=cfg.liveness_bound(),
                                       pause_ms=cfg.pause_durations())


@pytest.mark.parametrize(("data", "field", "value"), [
    ({"writers": "two"}, "explore.writers", "two"),
    ({"writers": True}, "explore.writers", True),
    ({"writers": 9}, "explore.writers", 9),
    ({"variant": "hudi-2"}, "explore.variant", "hudi-2"),
    ({"faults": -1}, "explore.faults", -1),
    ({"fault_kinds": ["pause", "gremlin"]}, "explore.fault_kinds", "gremlin"),
    ({"fault_kinds": "pause"}, "explore.fault_kinds", "pause"),
    ({"skew_ms": 60_000}, "explore.skew_ms", 60_000),
    ({"reductions": ["hashing", "magic"]}, "explore.reductions", "magic"),
    ({"reductions": {"por": "yes"}}, "explore.reductions.por", "yes"),
    ({"speed": 3}, "explore.speed", 3),
    ({"max_seconds": 0}, "explore.max_seconds", 0.0),
])
def test_bad_values_name_the_field_and_the_value(data: dict[str, object], field: str, value: object) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(data)
    assert err.value.field == field and err.value.value == value


def test_result_json_has_the_catalogue_keys() -> None:
    res = explore(config_from_dict(PAUSE))
    out = json.loads(json.dumps(res.to_json()))
    assert out["verdict"] == "violated" and out["states"] > 0 and out["depth"] > 0 and out["seconds"] >= 0
    assert out["counterexample_length"] == len(res.found.path) if res.found else False
    steps = out["counterexample"]
    assert steps and all(isinstance(s["step"], str) and s["step"] for s in steps)
    assert any(s["decision"] and "pauses" in s["step"] for s in steps)  # the one pause it takes
    assert any("register" in s["step"] for s in steps)
    assert out["violation"]["kind"] == "stale-write" and out["violation"]["replays_exactly_in_simulation"]
    assert out["config"]["variant"] == "hudi" and out["config"]["writers"] == 2
    holds = explore(config_from_dict({"writers": 2, "phases": False, "steps_per_hold": 1})).to_json()
    assert holds["verdict"] == "holds" and holds["counterexample_length"] is None
    assert holds["counterexample"] == []
    cut = explore(config_from_dict({**PAUSE, "max_states": 3})).to_json()
    assert cut["verdict"] == "incomplete" and not cut["complete"]


def _hcc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = hcc(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_exit_codes_and_the_counterexample_scenario(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    base = ["explore-lock", "--writers", "2", "--steps", "1", "--no-phases"]
    code, out, _ = _hcc(capsys, *base, "--json")
    assert code == 0 and json.loads(out)["verdict"] == "holds"
    scenario = tmp_path / "found.toml"
    code, out, _ = _hcc(capsys, *base, "--faults", "1", "--fault-kinds", "pause", "--pause-ms", "5000",
                        "--checkers", "stale-write,lost-update", "--out", str(scenario), "--json")
    got = json.loads(out)
    assert code == 1 and got["verdict"] == "violated" and got["violation"]["kind"] == "stale-write"
    assert got["violation"]["replays_exactly_in_simulation"] is True
    raw = tomllib.loads(scenario.read_text())
    assert raw["expect"] == "violation" and raw["schedule"]["ranks"] and raw["faults"]["pauses"]
    # hcc run replays it in the simulated world: the verdict is the expected violation (exit 0)
    code, out, _ = _hcc(capsys, "run", str(scenario), "--out", str(tmp_path / "run"))
    assert code == 0, out
    verdict = json.loads(next((tmp_path / "run").rglob("verdict.json")).read_text())
    assert "stale-write" in {v["kind"] for v in verdict["violations"]}
    code, out, err = _hcc(capsys, *base, "--faults", "1", "--fault-kinds", "pause", "--max-states", "2")
    assert code == 3 and "incomplete" in out


@pytest.mark.parametrize(("argv", "named"), [
    (["--writers", "two"], "--writers"),
    (["--variant", "nope"], "--variant"),
    (["--fault-kinds", "gremlin", "--faults", "1"], "--fault-kinds"),
    (["--max-seconds", "-1"], "--max-seconds"),
])
def test_cli_bad_input_is_exit_2_naming_the_option(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                   named: str) -> None:
    code, out, err = _hcc(capsys, "explore-lock", *argv)
    assert code == 2 and out == "" and named in err and "Traceback" not in err
