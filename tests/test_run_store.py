"""Runs are never overwritten; the store's latest links; SIGTERM / SIGINT mark a run interrupted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.main import main
from model.runtime.history import loads

SHORT = ["--set", "duration_ms=60000"]


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_a_used_out_is_refused_and_left_untouched_unless_force(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", "rfc91-safe", "--out", str(out), *SHORT]) == 0
    before = _files(out)
    assert "report.html" in before and "history.jsonl" in before
    capsys.readouterr()
    assert main(["run", "rfc91-long-pause", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(out) in err and "--force" in err and "Traceback" not in err
    assert _files(out) == before  # the first run's history, verdict and report are intact
    assert main(["run", "rfc91-long-pause", "--out", str(out), "--force"]) == 0
    after = _files(out)
    assert 'name = "rfc91-long-pause"' in after["scenario.toml"].decode()
    assert after["history.jsonl"] != before["history.jsonl"]
    assert main(["timeline", "run", "tl-occ-put-if-absent", "--out", str(out)]) == 2  # every command
    assert main(["nbcc", "run", "--out", str(out)]) == 2


def test_force_replaces_runs_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    assert main(["run", "rfc91-safe", "--out", str(notes), "--force", *SHORT]) == 2
    assert "holds no run" in capsys.readouterr().err
    assert (notes / "todo.txt").read_text() == "mine" and len(list(notes.iterdir())) == 1
    assert main(["run", "--all", "--out", str(notes)]) == 2  # --all too wants a fresh folder


def test_default_runs_get_folders_of_their_own_and_latest_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("rfc91-safe", "rfc91-safe", "rfc91-long-pause"):
        assert main(["run", name, *([] if name == "rfc91-long-pause" else SHORT)]) == 0
    store = tmp_path / "out" / "runs"
    safe = sorted(p for p in (store / "rfc91-safe").iterdir() if p.name != "latest")
    assert len(safe) == 2 and all(p.name.startswith("seed7-") for p in safe)
    assert (store / "rfc91-safe" / "latest").resolve() == safe[1].resolve()
    assert (store / "latest").resolve() == next((store / "rfc91-long-pause").glob("seed1-*")).resolve()
    capsys.readouterr()
    (safe[1] / "report.md").unlink()
    assert main(["report", str(store / "rfc91-safe"), "--format", "md"]) == 0  # the latest run only
    assert (safe[1] / "report.md").exists() and capsys.readouterr().out.count("report.md") == 1
    baseline = tmp_path / "baseline.json"
    assert main(["gate", str(store), "--baseline", str(baseline), "--update"]) == 0  # the latest of each
    assert sorted(json.loads(baseline.read_text())["scenarios"]) == ["rfc91-long-pause", "rfc91-safe"]
    assert main(["gate", str(store), "--baseline", str(baseline)]) == 0
    assert main(["gate", str(store / "rfc91-safe"), "--baseline", str(baseline)]) == 0  # one scenario
    assert main(["report", "--format", "json"]) == 0  # default: out/runs/latest
    assert (store / "latest" / "report.json").exists()
    assert main(["timeline", "run", "tl-occ-put-if-absent", "--set", "duration_ms=5000"]) == 0
    assert main(["nbcc", "run", "--seed", "2"]) == 0
    assert list((store / "tl-occ-put-if-absent").glob("seed1-*/verdict.json"))
    assert (store / "nbcc-hudi" / "latest" / "table").is_dir()


@pytest.mark.parametrize(("sig", "name", "code"), [(signal.SIGTERM, "SIGTERM", 143),
                                                   (signal.SIGINT, "SIGINT", 130)])
def test_a_signal_marks_the_run_interrupted_and_keeps_its_history(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], sig: int, name: str, code: int) -> None:
    # In a process of its own (as a user's or a CI runner's signal finds it), with the default
    # dispositions: whatever the test process's own signal state is does not leak in.
    out = tmp_path / "run"
    argv = ["run", "rfc91-safe", "--out", str(out), "--set", "duration_ms=1000000000"]  # days: still running
    code_line = f"import sys; from cli.main import main; sys.exit(main({argv!r}))"
    proc = subprocess.Popen([sys.executable, "-c", code_line], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, restore_signals=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out / "history.jsonl").is_file():
            time.sleep(0.05)
        time.sleep(0.5)  # some events on disk
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert f"interrupted by {name}" in err and "Traceback" not in err
    text = (out / "history.jsonl").read_text()
    events = loads(text)
    assert text.endswith("\n") and events and [e.index for e in events] == list(range(len(events)))
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["verdict"] == "interrupted" and verdict["signal"] == name
    assert verdict["events"] == len(events) and verdict["scenario"] == "rfc91-safe" and verdict["seed"] == 7
    assert not (out / "report.html").exists()
    assert main(["report", str(out)]) == 2
    assert main(["gate", str(out), "--baseline", str(tmp_path / "b.json"), "--update"]) == 2
    assert f"interrupted by {name}" in capsys.readouterr().err


def test_the_cli_restores_the_signal_handlers_it_installs(tmp_path: Path) -> None:
    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert main(["run", "rfc91-safe", "--out", str(tmp_path / "run"), *SHORT]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
