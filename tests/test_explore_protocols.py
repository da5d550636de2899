"""One explorer for the model's code of the lock, OCC and NBCC (issue 25 item 1): ``hcc explore --protocol
lock|occ|nbcc`` with one set of bound options, ``hcc explore-lock`` its alias with the README table's
defaults, each protocol's bounds picked by name, and a counterexample that ``hcc run FILE`` replays."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from model.config import ConfigError
from model.explore import Bounds, config_from_dict
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.explore.protocols import BOUNDS, bounds_class


def _hcc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _hcc(capsys, *argv, "--quiet", "--json")
    assert code in (0, 1), err
    result: dict[str, Any] = json.loads(out)
    return code, result


def test_each_protocol_has_its_bounds_by_name() -> None:
    assert dict(BOUNDS) == {"lock": Bounds, "occ": OccBounds, "nbcc": NbccBounds}
    assert all(cls.protocol == name for name, cls in BOUNDS.items())
    assert type(config_from_dict({})) is Bounds  # the lock's, by default
    assert type(config_from_dict({"protocol": "occ"})) is OccBounds
    assert type(config_from_dict({"model": "nbcc"})) is NbccBounds
    with pytest.raises(ConfigError) as err:
        bounds_class("cow", "--protocol")
    assert err.value.field == "--protocol" and err.value.value == "cow"
    with pytest.raises(ConfigError) as err:
        config_from_dict({"protocol": "occ", "model": "lock"})
    assert err.value.field == "explore.protocol"
    for cls in BOUNDS.values():  # what to_json writes names its protocol, and reads back as the same class
        assert type(config_from_dict(cls().to_json())) is cls
    assert Bounds().to_json()["variant"] == "hudi" and OccBounds().to_json()["variant"] == "hudi"


def test_explore_lock_is_explore_protocol_lock_with_the_readme_tables_bounds(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the README table's bounds: one hold of one read-modify-write per writer, start phases on
    assert (Bounds().holds, Bounds().steps_per_hold, Bounds().work_ms, Bounds().phases) == (1, 1, 1_000, True)
    code, alias = _json(capsys, "explore-lock", "--writers", "2")
    code2, same = _json(capsys, "explore", "--protocol", "lock", "--writers", "2")
    assert code == code2 == 0 and alias["verdict"] == same["verdict"] == "holds"
    for key in ("states", "depth", "runs", "transitions", "config"):
        assert alias[key] == same[key], key
    assert alias["config"]["protocol"] == "lock"
    assert alias["config"]["holds"] == 1 and alias["config"]["steps_per_hold"] == 1


def test_occ_counterexample_replays_with_hcc_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Hudi 1.2.1's writer under OCC, two writers of one key: the key inserted into two file groups, read with
    # two values (its duplicate key); the simulated history has transaction records after run-end, which
    # the explored one has not
    found = tmp_path / "occ.toml"
    code, got = _json(capsys, "explore", "--protocol", "occ", "--no-phases", "--out", str(found))
    assert code == 1 and got["verdict"] == "violated" and got["config"]["protocol"] == "occ"
    assert got["violation"]["kind"] == "consistent-read"
    assert got["violation"]["replays_exactly_in_simulation"] is True
    raw = tomllib.loads(found.read_text())
    assert raw["protocol"] == "occ" and raw["expect"] == "violation" and raw["schedule"]["ranks"]
    code, out, _ = _hcc(capsys, "run", str(found), "--out", str(tmp_path / "run"))
    assert code == 0, out  # the simulated run meets its expected violation


def test_nbcc_explores_the_tables_writers(capsys: pytest.CaptureFixture[str]) -> None:
    code, got = _json(capsys, "explore", "--protocol", "nbcc", "--writers", "2")
    assert code == 0 and got["verdict"] == "holds" and got["complete"] and got["states"] > 0
    assert got["config"]["protocol"] == "nbcc"


@pytest.mark.parametrize(("argv", "named"), [
    (["--protocol", "occ", "--holds", "2"], "--holds"),  # a bound of the lock's only
    (["--protocol", "lock", "--batches", "2"], "--batches"),  # NBCC's
    (["--protocol", "occ", "--scenario", "rfc91-long-pause"], "--scenario"),  # only the lock takes one
    (["--protocol", "gremlin"], "--protocol"),
])
def test_an_option_another_protocols_bounds_have_is_exit_2(capsys: pytest.CaptureFixture[str],
                                                           argv: list[str], named: str) -> None:
    code, out, err = _hcc(capsys, "explore", *argv)
    assert code == 2 and out == "" and named in err and "Traceback" not in err
