"""``hcc realworld`` whose backend never starts ends its run folder with a ``not-started`` verdict, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main


def test_a_server_that_never_started_leaves_a_not_started_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HCC_NPM_PREFIX", str(tmp_path / "no-npm"))  # azurite's launcher finds no install
    out = tmp_path / "run"
    assert main(["realworld", "rfc91-safe", "--backend", "azurite", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "backend azurite did not start" in err and "Traceback" not in err
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["verdict"] == "not-started" and verdict["backend"] == "azurite"
    assert "not installed" in verdict["error"]
    assert verdict["matches_expectation"] is False and verdict["events"] == 0
    assert (out / "history.jsonl").read_text() == ""
    # the report and the gate refuse it by name, not as a malformed verdict
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert "never started" in err and "not installed" in err and not (out / "report.html").exists()


@pytest.mark.backends  # the S3 client (boto3) is in the backends extra, not in the tests environment
def test_a_url_that_does_not_answer_is_not_started_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    out = tmp_path / "run"
    url = "s3+http://127.0.0.1:9/bucket"  # the discard port: connection refused
    assert main(["realworld", "rfc91-safe", "--backend", url, "--out", str(out),
                 "--set", "storage.timeout_ms=500"]) == 2
    assert f"backend {url} did not start" in capsys.readouterr().err
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["verdict"] == "not-started" and "cannot be reached" in verdict["error"]
