"""A scenario with world = "spark" runs through ``hcc run``: Spark tasks as writers on fake-gcs-server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("google.cloud.storage")

from cli.main import main  # noqa: E402
from engines.spark import spark_available  # noqa: E402
from model.runtime.history import loads  # noqa: E402

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "contention" / "rfc91-safe-spark.toml"

_why = spark_available()
if _why:
    pytest.skip(_why, allow_module_level=True)


def test_hcc_run_of_a_spark_world_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", str(SCENARIO), "--out", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, summary["violations"][:2]
    assert summary["verdict"] == "ok" and summary["backend"] == "fake-gcs" and summary["writers"] == 4
    per_writer = summary["metrics"]["acquisitions_per_writer"]
    assert set(per_writer) == {"w1", "w2", "w3", "w4"} and all(n > 0 for n in per_writer.values())
    for name in ("history.jsonl", "verdict.json", "metrics.json", "scenario.toml", "report.html"):
        assert (out / name).exists()


def test_a_spark_world_needs_a_known_world_name() -> None:
    assert main(["run", str(SCENARIO), "--set", 'world="cluster"']) == 2


def test_timeline_scenario_with_a_spark_world_runs_occ_writers_on_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["timeline", "run", "tl-occ-put-if-absent", "--out", str(tmp_path / "occ"), "--json",
                 "--set", 'world="spark"', "--set", "duration_ms=8000", "--set", "workload.writers=3",
                 "--set", "clocks.w1.offset_ms=0", "--set", "lock.poll_ms=100"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, summary["violations"][:2]
    assert summary["verdict"] == "ok" and summary["metrics"]["commits"] > 0


# A Spark contention run of the lock writes Hudi's audit trail as the simulated world does, and keeps it:
# the prefix starts with the audit enable file (backends.realworld.seed_lock_table, the lock.audit seeding
# every world shares); each provider that acquired wrote its audit file; the run directory keeps the
# prefix's objects under table/ and Hudi's validator reads them.
@pytest.mark.parametrize("audit", [True, False])
def test_a_spark_contention_run_writes_and_keeps_hudis_audit_trail(
        audit: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", str(SCENARIO), "--out", str(out), "--json", "--set", "workload.writers=2",
                 "--set", "duration_ms=6000", "--set", f"lock.audit={'true' if audit else 'false'}"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, summary["violations"][:2]
    locks = out / "table" / ".hoodie" / ".locks"
    assert (locks / "table_lock.json").is_file()
    owners = {e.value["owner"] for e in loads((out / "history.jsonl").read_text())
              if e.f == "acquire" and e.type == "ok"}
    assert owners
    trail = {p.stem.split("_", 1)[1] for p in (locks / "audit").glob("*.jsonl")}
    if audit:
        assert (locks / "audit_enabled.json").is_file()
        assert trail == owners  # one audit file per provider that acquired, as in simulation
        assert summary["audit"]["windows"] == len(owners)
    else:  # without the enable file, Hudi's providers write no audit trail
        assert not (locks / "audit_enabled.json").exists() and trail == set()
