"""The lock model against Hudi's own StorageBasedLockProvider (hcc differential lock), on SeaweedFS.

Generated schedules run on both sides and must agree (the model's fidelity, checked by Hudi's bytecode);
a deliberately broken model (its S3 client reading a missing lock file as an unknown error) must diverge,
so the comparison is shown to see something; the CLI keeps the smallest divergent schedule and replays it.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyses import lock_differential as ld
from backends.endpoint import Endpoint
from backends.fixtures import azurite_endpoint, seaweedfs_endpoint  # noqa: F401
from backends.hudi.artifacts import default_version
from cli.main import main
from model.lock import storage_clients as lock_client
from model.runtime.effects import Outcome

EXAMPLES = 10  # schedules per CI run (about a minute); benchmarks/bench_differential.py runs more


def _url(ep: Endpoint) -> str:
    assert ep.url is not None
    host = ep.url.split("://", 1)[1]
    return f"http://{ep.access_key}:{ep.secret_key}@{host}/{ep.bucket}"


@pytest.fixture
def broken_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A known-unsafe model: its lock client reads a missing lock file (404) as UNKNOWN_ERROR, so it
    never creates one (Hudi's S3StorageLockClient#readCurrentLockFile: 404 is NOT_EXISTS)."""
    real = lock_client.read_result

    def broken(flavor: str, outcome: Outcome) -> lock_client.GetResult:
        if outcome is Outcome.NOT_FOUND:
            return lock_client.GetResult.UNKNOWN_ERROR
        return real(flavor, outcome)

    monkeypatch.setattr("model.lock.provider.read_result", broken)
    yield


# w1 takes the lock while its first lock write is answered 412, holds across a renewal, w2 waits for it
CONTENDED = ld.Schedule(
    ("w1", "w2"),
    (ld.Step("w1", "acquire", 1_500, 1_500), ld.Step("w2", "acquire", 1, 0), ld.Step("w1", "release"),
     ld.Step("w2", "acquire", 1_500, 300), ld.Step("w2", "release"), ld.Step("w1", "close"),
     ld.Step("w2", "close")),
    (ld.Fault("w1", "lock", "write", "412", 1),), (0, 200))


def test_generated_schedules_agree_with_hudi(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                             tmp_path: Path) -> None:
    """A divergence that comes back when its schedule runs again fails the test; one that does not (a
    timing window real time opened once) is reported as a warning with both step tables, not hidden."""
    result = ld.search(seaweedfs_endpoint, version=default_version(), examples=EXAMPLES, seed=0,
                       log_dir=tmp_path, shrink_seconds=120)
    assert result.examples >= 1
    if result.found is None:
        assert result.examples >= EXAMPLES
        return
    f = result.found
    report = "\n".join([*f.schedule.lines(), *ld.step_table(f.schedule, f.model),
                        *ld.step_table(f.schedule, f.hudi), *(d.line() for d in f.divergences)])
    if result.flaky:
        warnings.warn(f"a divergence that did not come back on a rerun (a timing window):\n{report}",
                      stacklevel=1)
    else:
        pytest.fail(report)


def test_the_same_schedule_agrees_and_exercises_the_fault(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                                          tmp_path: Path) -> None:
    found = ld.replay(CONTENDED, seaweedfs_endpoint, version=default_version(), log_dir=tmp_path)
    assert found.divergences == []
    # the 412 reached both sides' first acquisition, which polled again and took the lock
    for obs in (found.model, found.hudi):
        assert obs.outcomes[0][3] == "acquired"
        assert any("-> error-412" in r for r in obs.requests[0]), obs.requests[0]
        assert obs.outcomes[1][3] == "refused"  # w2 finds w1's valid lock
        assert obs.lock_file.endswith("expired True")


def test_azure_schedules_agree_with_hudi(azurite_endpoint: Endpoint,  # noqa: F811
                                         tmp_path: Path) -> None:
    """The same on Azurite, Hudi's provider over the harness's Azure lock client (AzureStorageLockClient's
    transcription): the contended schedule, then a few generated ones."""
    found = ld.replay(CONTENDED, azurite_endpoint, version=default_version(), log_dir=tmp_path)
    assert found.divergences == [], [d.line() for d in found.divergences]
    assert all(o[3] == "acquired" for o in (found.model.outcomes[0], found.hudi.outcomes[0]))
    result = ld.search(azurite_endpoint, version=default_version(), examples=4, seed=1, log_dir=tmp_path,
                       shrink_seconds=60)
    if result.found is not None and not result.flaky:
        pytest.fail("\n".join(d.line() for d in result.found.divergences))


def test_a_broken_model_diverges(seaweedfs_endpoint: Endpoint, tmp_path: Path,  # noqa: F811
                                 broken_model: None) -> None:
    found = ld.replay(CONTENDED, seaweedfs_endpoint, version=default_version(), log_dir=tmp_path)
    step0 = [d for d in found.divergences if d.where.startswith("step 0")]
    assert {d.what for d in step0} == {"outcome", "requests"}, [d.line() for d in found.divergences]
    outcome = next(d for d in step0 if d.what == "outcome")
    assert (outcome.model, outcome.hudi) == ("refused", "acquired")


def test_the_cli_keeps_the_divergent_schedule_and_replays_it(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                                             tmp_path: Path, broken_model: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    schedule = tmp_path / "in.json"
    schedule.write_text(CONTENDED.to_json())
    out = tmp_path / "out"
    code = main(["differential", "lock", "--backend", _url(seaweedfs_endpoint), "--replay", str(schedule),
                 "--out", str(out), "--json"])
    assert code == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["divergent"] and summary["divergences"]
    assert ld.Schedule.from_json((out / "schedule.json").read_text()) == CONTENDED
    assert "DIVERGENT" in (out / "report.txt").read_text()


def test_bad_input_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["differential", "lock", "--hudi-version", "9.9", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "9.9" in err and "Traceback" not in err
    assert main(["differential", "lock", "--examples", "0", "--out", str(tmp_path / "b")]) == 2
    assert main(["differential", "lock", "--backend", "nosuch", "--out", str(tmp_path / "c")]) == 2
