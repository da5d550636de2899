"""Sweep reports: violation rate per cell with its interval, heat map over two settings, input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from cli.main import main  # noqa: E402
from reports.sweep import SweepError, build_sweep_report, cell_table, load_rows, rate_grid, wilson  # noqa: E402


def _rows() -> list[dict[str, object]]:
    rows = []
    for pause in (3000, 15000, 400000):
        for variant in ("hudi", "fenced"):
            for seed in range(4):
                bad = variant == "hudi" and (pause == 400000 or (pause == 15000 and seed < 2))
                rows.append({"grid": "g", "scenario": "rfc91-long-pause",
                             "faults.pauses[0].duration_ms": pause,
                             "lock.variant": variant, "workload.writers": 3, "seed": seed,
                             "verdict": "violation" if bad else "ok", "violations": 2 if bad else 0,
                             "acquire_latency_p99_ms": 1000 + seed, "error": None})
    rows[0].update(verdict="error", error="RuntimeError: boom")
    return rows


@pytest.fixture()
def sweep_dir(tmp_path: Path) -> Path:
    """The layout 'hcc sweep --out DIR' writes: rows/ (Parquet) and sweep.json naming the setting keys."""
    pytest.importorskip("pyarrow")
    out = tmp_path / "sweep"
    (out / "rows").mkdir(parents=True)
    pd.DataFrame(_rows()).to_parquet(out / "rows" / "part-00000.parquet")
    keys = ["faults.pauses[0].duration_ms", "lock.variant", "workload.writers"]
    (out / "sweep.json").write_text(json.dumps({"keys": keys, "grid": "g"}))
    return out


def test_cells_count_rates_without_errors_and_give_wilson_intervals(sweep_dir: Path) -> None:
    cells = cell_table(load_rows(sweep_dir / "rows"))
    cells = cells.set_index(["faults.pauses[0].duration_ms", "lock.variant"])
    assert len(cells) == 6
    first = cells.loc[(3000, "hudi")]
    got = (first["runs"], first["errors"], first["violating_runs"], first["violation_rate"])
    assert got == (4, 1, 0, 0.0)
    half = cells.loc[(15000, "hudi")]
    assert half["violation_rate"] == 0.5 and (half["ci95_low"], half["ci95_high"]) == wilson(2, 4)
    assert cells.loc[(400000, "fenced")]["violation_rate"] == 0.0
    lo, hi = wilson(4, 4)
    assert hi == 1.0 and 0.4 < lo < 0.6  # 4 of 4 does not prove a rate of 1


def test_heat_map_over_the_two_varying_settings(sweep_dir: Path, tmp_path: Path) -> None:
    assert main(["report", str(sweep_dir)]) == 0
    summary = json.loads((sweep_dir / "report.json").read_text())
    # workload.writers does not vary, so the first two varying settings are chosen.
    assert (summary["x"], summary["y"]) == ("faults.pauses[0].duration_ms", "lock.variant")
    assert summary["heatmap"]["hudi"] == {"3000": 0.0, "15000": 0.5, "400000": 1.0}
    html = (sweep_dir / "report.html").read_text()
    assert 'src="data:image/png;base64,' in html and "RuntimeError: boom" in html
    assert main(["report", str(sweep_dir), "--x", "lock.variant", "--y", "faults.pauses[0].duration_ms"]) == 0
    summary = json.loads((sweep_dir / "report.json").read_text())
    assert summary["heatmap"]["400000"] == {"fenced": 0.0, "hudi": 1.0}


def test_standalone_csv_with_setting_prefix(tmp_path: Path) -> None:
    rows = [{("setting." + k if "." in k else k): v for k, v in r.items()} for r in _rows()]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    df = load_rows(path)
    grid = rate_grid(df, "setting.lock.variant", "setting.faults.pauses[0].duration_ms")
    assert grid.loc[15000, "hudi"] == 0.5
    assert build_sweep_report(path).summary["rows"] == 24


def test_bad_sweep_input_names_the_column_or_value(sweep_dir: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(sweep_dir), "--x", "lock.nope"]) == 2
    assert "'lock.nope' is not a setting of the sweep" in capsys.readouterr().err
    path = tmp_path / "bad.csv"
    pd.DataFrame([{"setting.a": 1, "seed": 1, "verdict": "maybe", "violations": 0}]).to_csv(path, index=False)
    with pytest.raises(SweepError, match=r"column verdict has value\(s\) \['maybe'\]"):
        load_rows(path)
    pd.DataFrame([{"setting.a": 1, "seed": 1}]).to_csv(path, index=False)
    with pytest.raises(SweepError, match="missing column\\(s\\) verdict, violations"):
        load_rows(path)
    assert main(["report", str(path)]) == 2
    assert not (tmp_path / "report.html").exists()


def test_a_sweep_of_one_setting_gets_a_one_row_heat_map() -> None:
    df = pd.DataFrame([
        {"setting.lock.validity_secs": v, "seed": s, "verdict": "violation" if v < 20 else "ok"}
        for v in (10, 20, 30) for s in range(2)])
    grid = rate_grid(df, "setting.lock.validity_secs", "setting.lock.validity_secs")
    assert list(grid.index) == ["all"] and grid.loc["all"].tolist() == [1.0, 0.0, 0.0]
