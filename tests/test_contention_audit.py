"""A Spark contention run of the lock writes Hudi's audit trail as the simulated world does, and keeps it.

The run's prefix starts with the audit enable file (``backends.realworld.seed_lock_table``, the
``lock.audit`` seeding every world shares); each provider that acquired wrote its audit file; the
run directory keeps the prefix's objects under ``table/`` and Hudi's validator reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("google.cloud.storage")

from cli.main import main  # noqa: E402
from engines.spark import spark_available  # noqa: E402
from model.history import loads  # noqa: E402

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "contention" / "rfc91-safe-spark.toml"

_why = spark_available()
if _why:
    pytest.skip(_why, allow_module_level=True)


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
