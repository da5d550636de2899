"""Long commands on real servers say what they do: conformance's per-property seconds and client timeouts,
realworld's parts; lines on stderr with elapsed times, no bar off a terminal, stdout unchanged.

Formats are tested, never durations.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from backends.conformance import run_suite
from backends.endpoint import Endpoint
from backends.fault_proxy import FaultProxy
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from cli.main import main
from model.config import ErrorRule

LINE = re.compile(r"^(?P<cmd>.+?) \[ *\d+\.\ds\] (?P<text>.+)$")


@pytest.fixture(autouse=True)
def not_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


def test_conformance_counts_the_requests_that_waited_out_the_client_timeout(
        fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    # the first write through the proxy is held: the client (timeout 0.5 s) waits it out
    rule = ErrorRule(node="w1", key="any", method="write", status="timeout", count=1)
    assert fake_gcs_endpoint.url is not None
    lines: list[str] = []
    with FaultProxy(fake_gcs_endpoint.url, ["w1"], dialect="gcs", log_path=tmp_path / "proxy.log",
                    errors=[rule], hold_s=5) as proxy:
        slow = dataclasses.replace(fake_gcs_endpoint, url=proxy.url("w1"))
        rep = run_suite("fake-gcs", slow, only={"create-existing", "replace-stale"}, timeout_s=0.5,
                        log=lines.append)
    first, second = rep.properties
    assert (first.name, first.timeouts, second.timeouts) == ("create-existing", 1, 0)
    assert not first.passed and "TIMEOUT" in first.detail  # its setup write never got an answer
    out = rep.to_json()
    assert out["timeout_s"] == 0.5 and isinstance(out["seconds"], float)
    for p in out["properties"]:
        assert isinstance(p["seconds"], float) and isinstance(p["timeout_seconds"], float)
    assert [p["timeouts"] for p in out["properties"]] == [1, 0]
    note = re.compile(r"  note: create-existing: 1 request waited out the 0\.5 s client timeout "
                      r"\(\d+\.\d s of its \d+\.\d s\)")
    assert [line for line in rep.table().splitlines() if note.fullmatch(line)]
    assert lines[0] == "create-existing ..."
    assert re.fullmatch(r"create-existing FAIL in \d+\.\ds; 1 request waited out the 0\.5 s client timeout "
                        r"\(\d+\.\d s of its \d+\.\d s\)", lines[1])
    assert re.fullmatch(r"replace-stale pass in \d+\.\ds", lines[3])


def test_conformance_cli_lines_on_stderr_and_seconds_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "fake-gcs", "--rounds", "2", "--clients", "3", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert set(out["phases"]) == {"start fake-gcs", "suite"}
    assert all(isinstance(v, float) for v in out["phases"].values())
    props = out["properties"]
    assert [p["name"] for p in props][:5] == ["create-existing", "replace-stale", "replace-missing",
                                             "create-race", "replace-race"]
    assert all(isinstance(p["seconds"], float) and p["timeouts"] == 0 for p in props)
    assert "\r" not in captured.err  # stderr is not a terminal: lines, no bar
    texts = [m.group("text") for m in map(LINE.match, captured.err.splitlines()) if m]
    for p in props:
        assert f"{p['name']} ..." in texts
        assert any(re.fullmatch(rf"{re.escape(p['name'])} pass in \d+\.\ds", t) for t in texts), texts
    assert texts[0] == "start fake-gcs ..." and re.fullmatch(r"suite done in \d+\.\ds", texts[-1])


def test_realworld_says_its_parts_and_times_them(fake_gcs_endpoint: Endpoint, tmp_path: Path,  # noqa: F811
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    ep = fake_gcs_endpoint
    out = tmp_path / "run"
    short = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
             "storage.timeout_ms=400", "duration_ms=3000"]
    assert main(["realworld", "rfc91-safe", "--backend", f"gs+{ep.url}/{ep.bucket}", "--prefix",
                 "rw-progress/", "--out", str(out), "--json", *[x for s in short for x in ("--set", s)]]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    parts = ["start gs+" + f"{ep.url}/{ep.bucket}", "run", "read the table", "check"]
    assert set(printed["timings"]) == set(parts)  # printed with sorted keys; stderr has the order
    assert all(isinstance(v, float) for v in printed["timings"].values())
    assert json.loads((out / "verdict.json").read_text())["timings"] == printed["timings"]
    texts = [m.group("text") for m in map(LINE.match, captured.err.splitlines()) if m]
    assert [t for t in texts if t.endswith(" ...")] == [f"{p} ..." for p in parts]
    assert "\r" not in captured.err
