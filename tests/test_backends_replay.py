"""Replay: a simulated schedule re-run step by step on real servers, answers compared with the model's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import (  # noqa: F401
    fake_gcs_endpoint,
    moto_endpoint,
    s3rver_endpoint,
    seaweedfs_endpoint,
)
from backends.replay import ReplayStore, outcome_class, replay
from cli.main import main
from engines.rundir import execute_entry
from model.runtime.effects import CreateIfAbsent, Outcome, Read, ReplaceIfMatch
from model.runtime.sim import run_scenario
from reports.load import load_run
from scenarios import catalogue, loader

# the catalogue's long pause, scaled down (validity 60 s, pause 80 s) so a replay takes seconds;
# virtual time: the pause itself costs nothing
SHORT = ["duration_ms=120000", "lock.validity_secs=60", "lock.renew_interval_secs=6",
         "faults.pauses[0].at_ms=5000", "faults.pauses[0].duration_ms=80000"]


@pytest.mark.parametrize("server", ["fake_gcs_endpoint", "seaweedfs_endpoint", "moto_endpoint"])
@pytest.mark.parametrize("name,expect", [("rfc91-long-pause", "violation"),
                                         ("rfc91-fenced-long-pause", "ok")])
def test_violation_reproduces_and_the_fenced_variant_does_not(request: pytest.FixtureRequest, server: str,
                                                              name: str, expect: str) -> None:
    ep: Endpoint = request.getfixturevalue(server)
    sc = loader.load(name, SHORT)
    original = run_scenario(sc, sc.seed)
    with ep.backend("replay-" + name + "/", timeout_s=10) as b:
        report = replay(sc, sc.seed, b, original=original)
    assert report.original_verdict == expect
    assert report.verdict.verdict == expect and report.same_verdict
    assert len(report.steps) > 100 and report.all_agree, [s for s in report.steps if not s.agree][:3]
    assert report.schedule_divergence is None  # the same steps at the same virtual times
    if expect == "violation":
        assert {v.kind for v in report.verdict.violations} >= {"overlap", "stale-write", "lost-update"}


def test_negative_control_disagrees(s3rver_endpoint: Endpoint) -> None:  # noqa: F811
    """s3rver ignores conditions: the replay store must flag the step where it accepted a stale write."""
    with s3rver_endpoint.backend("neg/", timeout_s=10) as b:
        store = ReplayStore(b, "s3")
        first = store.apply(CreateIfAbsent("t/lock", b"a"))
        assert first.ok
        second = store.apply(CreateIfAbsent("t/lock", b"b"))  # the model refuses; s3rver accepts
        assert second.ok and not store.steps[-1].agree
        assert (store.steps[-1].model, store.steps[-1].real) == ("refused", "ok")
        # the model was re-synchronised from the backend, so the next read agrees
        assert store.apply(Read("t/lock")).body == b"b" and store.steps[-1].agree


def test_version_tags_are_translated(fake_gcs_endpoint: Endpoint) -> None:  # noqa: F811
    """GCS generations differ from the model's S3 ETags in value; the protocol uses the real ones."""
    with fake_gcs_endpoint.backend("tags/", timeout_s=10) as b:
        store = ReplayStore(b, "s3")
        created = store.apply(CreateIfAbsent("t/k", b"1"))
        assert created.version is not None and created.version.isdigit()  # a generation
        assert store.apply(ReplaceIfMatch("t/k", b"2", created.version)).ok
        assert store.steps[-1].agree
        stale = store.apply(ReplaceIfMatch("t/k", b"3", created.version))
        assert stale.outcome is Outcome.PRECONDITION_FAILED and store.steps[-1].agree
        assert store.peek("t/k") is not None and store.peek("t/k").body == b"2"  # type: ignore[union-attr]
        assert not store.version_notes


def test_outcome_classes() -> None:
    missing = ReplaceIfMatch("k", b"", "v")
    assert outcome_class(missing, Outcome.NOT_FOUND) == outcome_class(missing, Outcome.PRECONDITION_FAILED)
    assert outcome_class(Read("k"), Outcome.NOT_FOUND) == "not-found"
    assert outcome_class(Read("k"), Outcome.UNAVAILABLE) == "unknown"


def test_cli_run_then_replay(fake_gcs_endpoint: Endpoint, tmp_path: Path,  # noqa: F811
                             capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "lp"
    sets = [x for s in SHORT for x in ("--set", s)]
    assert main(["run", "rfc91-long-pause", "--out", str(run_dir), *sets]) == 0
    capsys.readouterr()
    url = f"gs+{fake_gcs_endpoint.url}/{fake_gcs_endpoint.bucket}"
    assert main(["replay", str(run_dir), "--backend", url, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdict"] == summary["original_verdict"] == "violation"
    assert summary["agreed"] == summary["steps"] and summary["first_disagreement"] is None
    out = Path(summary["out"])
    assert (out / "history.jsonl").is_file() and (out / "steps.jsonl").is_file()
    assert len((out / "steps.jsonl").read_text().splitlines()) == summary["steps"]
    # a run directory like every world's: metrics, scenario and report, read by the one reader
    run = load_run(out)
    assert run.verdict["world"] == "replay" and run.metrics["acquisitions"] > 0
    assert all((out / f).is_file() for f in ("metrics.json", "scenario.toml", "report.md"))
    assert main(["report", str(out)]) == 0


def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "missing"), "--backend", "fake-gcs"]) == 2
    assert "RUN_DIR" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["replay", str(tmp_path / "empty"), "--backend", "fake-gcs"]) == 2
    assert "missing verdict.json" in capsys.readouterr().err  # reports/load.py's reason
    occ = tmp_path / "occ"  # a complete run directory of another protocol
    execute_entry(catalogue.load("tl-v5-pk-check-unique-keys"), out=occ, report=False)
    assert main(["replay", str(occ), "--backend", "fake-gcs"]) == 2
    assert "holds a occ run; replay replays lock runs" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "empty"), "--backend", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
