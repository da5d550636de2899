"""``hcc realworld`` on MinIO, short: rfc91-safe keeps one holder at a time, rfc91-long-pause is caught.

Both run with ``--time-scale 30`` (Hudi's smallest lease, 10 s renewed every 1 s, within Hudi's limits)
and a duration cut to 12-16 s, on one MinIO (``backends/install.sh`` builds it into the cache); without
the binary the module is skipped with the reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import minio_endpoint  # noqa: F401
from cli.main import main
from model.runtime.history import loads


def _url(ep: Endpoint) -> str:
    """The endpoint as ``--backend`` takes it: ``s3+http://KEY:SECRET@HOST:PORT/BUCKET``."""
    assert ep.url is not None and ep.url.startswith("http://")
    return f"s3+http://{ep.access_key}:{ep.secret_key}@{ep.url.removeprefix('http://')}/{ep.bucket}"


def _run(ep: Endpoint, out: Path, scenario: str, *sets: str) -> tuple[int, dict, list]:  # type: ignore[type-arg]
    """``hcc realworld SCENARIO --time-scale 30`` with ``sets`` (in the entry's units) on MinIO."""
    code = main(["realworld", scenario, "--backend", _url(ep), "--prefix", f"rw-minio-{scenario}/",
                 "--time-scale", "30", *[x for s in sets for x in ("--set", s)],
                 "--out", str(out), "--quiet"])
    verdict = json.loads((out / "verdict.json").read_text())
    return code, verdict, loads((out / "history.jsonl").read_text())


def test_rfc91_safe_on_minio_never_has_two_holders(minio_endpoint: Endpoint,  # noqa: F811
                                                   tmp_path: Path) -> None:
    code, verdict, events = _run(minio_endpoint, tmp_path / "safe", "rfc91-safe",
                                 "duration_ms=360000")  # 12 s
    assert verdict["verdict"] == "ok", [v["message"] for v in verdict["violations"]]
    assert code == 0 and verdict["matches_expectation"] and verdict["error"] is None
    assert "times / 30" in verdict["models"]
    scenario = (tmp_path / "safe" / "scenario.toml").read_text()
    assert "validity_secs = 10" in scenario and "renew_interval_secs = 1" in scenario
    # the lock was contended: writers held it one after another
    holders = [e for e in events if e.f == "acquire" and e.type == "ok"]
    assert len({e.node for e in holders}) >= 2 and len(holders) >= 5
    assert verdict["proxy"].get("forward", 0) > 0  # the plan's 503s and timeouts went through the proxy
    # its report counts real time from the run's start, the clocks' readings too (t<ms>, not epoch ms)
    md = (tmp_path / "safe" / "report.md").read_text()
    assert "All times are real (true) time" in md and not re.search(r"\b17\d{11}\b", md)


def test_a_pause_longer_than_the_lease_is_caught_on_minio(minio_endpoint: Endpoint,  # noqa: F811
                                                          tmp_path: Path) -> None:
    # w1 pauses at its first write after 0.5 s for 13.3 s; its 10 s lease runs out and another writer
    # acquires while w1 still believes it holds the lock.  w1 runs alone until 1 s and thinks for no
    # time, so it holds the lock when the pause comes, before anyone else starts.  Times are the
    # entry's, divided by 30.
    code, verdict, events = _run(minio_endpoint, tmp_path / "pause", "rfc91-long-pause", "duration_ms=480000",
                                 "faults.pauses[0].at_ms=15000", "workload.think_ms.hi=0",
                                 "workload.node_start_ms.w1=0", "workload.node_start_ms.w2=30000",
                                 "workload.node_start_ms.w3=30000")
    assert verdict["verdict"] == "violation" and code == 0
    overlaps = [v for v in verdict["violations"] if v["kind"] == "overlap"]
    assert overlaps, verdict["violations"]
    pause = next(e for e in events if e.f == "pause-start")
    assert pause.node == "w1"
    # it paused holding the lock, before the others started
    assert not any(e.f == "acquire" and e.type == "ok" and e.node != "w1" and e.time < pause.time
                   for e in events)
    assert all("w1" in v["message"] for v in overlaps)


def test_a_time_scale_below_hudis_lease_is_refused_before_a_server_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["realworld", "rfc91-safe", "--backend", "minio", "--time-scale", "60",
                 "--out", str(tmp_path / "r")])
    assert code == 2 and not (tmp_path / "r").exists()
    assert "--time-scale = 60" in capsys.readouterr().err
