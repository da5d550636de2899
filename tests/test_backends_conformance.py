"""The conformance suite on real servers: green on fake-gcs-server, Azurite and SeaweedFS,
graded honestly on moto, failing everywhere on s3rver (negative control), MinIO skipped here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from backends.conformance import Report, run_suite
from backends.endpoint import Endpoint
from backends.fixtures import (  # noqa: F401
    azurite_endpoint,
    fake_gcs_endpoint,
    minio_endpoint,
    moto_endpoint,
    s3rver_endpoint,
    seaweedfs_endpoint,
)

pytestmark = pytest.mark.backends

CONDITIONAL = ("create-existing", "replace-stale", "replace-missing", "create-race", "replace-race")


def _show(rep: Report) -> None:
    print()
    print(rep.table())


def _all_pass(rep: Report) -> None:
    failed = [f"{p.name}: {p.detail}" for p in rep.properties if not p.passed]
    assert not failed, "\n".join(failed)


def test_fake_gcs_conforms(fake_gcs_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("fake-gcs", fake_gcs_endpoint, rounds=5)
    _show(rep)
    _all_pass(rep)
    assert rep.dialect == "gcs"
    assert [p.name for p in rep.properties] == [*CONDITIONAL, "lost-reply-retry[google-cloud-storage]"]


def test_azurite_conforms_with_its_409_reported_as_a_deviation(azurite_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("azurite", azurite_endpoint, rounds=5)
    _show(rep)
    _all_pass(rep)
    devs = [d for d in rep.deviations if d.property == "create-existing"]
    assert devs and "409 BlobAlreadyExists" in devs[0].detail


def test_seaweedfs_conforms(seaweedfs_endpoint: Endpoint) -> None:  # noqa: F811
    # SeaweedFS serialises contended conditional writes: short races
    rep = run_suite("seaweedfs", seaweedfs_endpoint, rounds=2, clients=16)
    _show(rep)
    _all_pass(rep)
    # SeaweedFS 4.48 answers 412 where AWS documents 404 NoSuchKey for If-Match on a missing key
    assert any(d.property == "replace-missing" and "412" in d.detail for d in rep.deviations)


def test_moto_is_graded_honestly(moto_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("moto", moto_endpoint, rounds=3)
    _show(rep)
    # status codes follow AWS; the races are NOT asserted: moto's conditional writes are not atomic
    for name in ("create-existing", "replace-stale", "replace-missing"):
        assert rep.property(name).passed, rep.property(name).detail
    assert rep.property("replace-missing").detail.startswith("NOT_FOUND (404 NoSuchKey)")
    assert any("not atomic" in n for n in rep.notes)
    for name in ("create-race", "replace-race"):
        assert rep.property(name).detail  # graded, whatever the verdict


def test_s3rver_fails_every_conditional_property(s3rver_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("s3rver", s3rver_endpoint, rounds=1)
    _show(rep)
    assert not rep.passed
    for p in rep.properties:
        assert not p.passed, f"negative control passed {p.name}: {p.detail}"
    assert "NOT linearizable" in rep.property("create-race").detail
    assert "NOT linearizable" in rep.property("replace-race").detail
    # the failing round keeps its verdict: a second winner cannot follow the first
    for name in ("create-race", "replace-race"):
        verdict = rep.property(name).verdict
        assert verdict is not None and not verdict.valid
        assert "cannot be placed: the register holds" in rep.property(name).detail
        assert len(verdict.counterexample) >= 2 and all(op.status == "ok" for op in verdict.counterexample)
        assert rep.property(name).to_json()["counterexample"]["result"] == "illegal"


def test_minio_runs_or_is_skipped_with_the_reason(minio_endpoint: Endpoint) -> None:  # noqa: F811
    rep = run_suite("minio", minio_endpoint, rounds=3)
    _show(rep)
    _all_pass(rep)


def test_cli_json_against_a_running_server_by_url(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from cli.conformance import run

    url = fake_gcs_endpoint.url
    assert url is not None
    args = argparse.Namespace(backend=url.replace("http://", "gs+http://") + "/hcc-conformance", rounds=2,
                              clients=8, client=None, json=True, quiet=True)
    assert run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"].startswith("gs+http://")
    assert {"name", "passed", "detail"} <= set(out["properties"][0])
    assert all(p["passed"] for p in out["properties"])
    assert out["deviations"] == []


def test_cli_bad_input_names_the_value(capsys: pytest.CaptureFixture[str]) -> None:
    from cli.conformance import run

    base = dict(rounds=2, clients=8, client=None, json=False, quiet=True)
    assert run(argparse.Namespace(backend="nosuch", **base)) == 2
    assert "'nosuch'" in capsys.readouterr().err
    assert run(argparse.Namespace(backend="fake-gcs", **{**base, "rounds": 0})) == 2
    assert "--rounds" in capsys.readouterr().err


def test_cli_table_fails_on_the_negative_control(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from cli.conformance import run

    args = argparse.Namespace(backend="s3rver", rounds=1, clients=4, client=None, json=False, quiet=True,
                              timeline_dir=tmp_path)
    assert run(args) == 1
    out = capsys.readouterr().out
    assert "backend s3rver" in out and "FAIL" in out
    # each non-linearizable race is drawn, and the table names the file
    pages = sorted(tmp_path.glob("s3rver-*.html"))
    assert [p.name.split("-", 2)[2] for p in pages] == ["create-race.html", "replace-race.html"]
    for page in pages:
        assert f"timeline: {page}" in out
        html = page.read_text()
        assert "<svg" in html and 'class="op blocked"' in html and 'class="op setter"' in html
