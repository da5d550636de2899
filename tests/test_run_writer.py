"""The one run-directory writer (engines/rundir.py's RunWriter): every file it writes is checked against
model/run_format.py first, and a file that breaks it is refused by name (file, field, value) with nothing
written; the history is appended line by line, so a run killed mid-way keeps what it had written, and the
one loader (reports/load.py) reads it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engines.rundir import RunFileError, RunWriter, count_events
from model.lock.metrics import lock_metrics
from model.run_format import HISTORY, METRICS, SCENARIO, VERDICT, RunHead, verdict_file
from model.runtime.history import Event
from reports.load import RunDirError, load_history, load_run

ROOT = Path(__file__).resolve().parent.parent
HEAD: RunHead = {"scenario": "s", "protocol": "lock", "world": "sim", "seed": 1, "expect": "ok",
                 "models": "m"}


def start(index: int = 0) -> Event:
    return Event(index, 0, "harness", "harness", "info", "run-start", {"scenario": "s", "seed": 1}, None)


def lock_file(index: int, value: object) -> Event:
    return Event(index, 5, "store", "store", "info", "lock-file", value, None)


def test_a_history_is_appended_and_read_back(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, "lock")
    events = [start(), lock_file(1, {"owner": "w1", "expired": False, "valid_until": 100}),
              Event(2, 7, "w1", "w1", "ok", "acquire", {"n": (1, 2)}, 3)]
    with w.history(HEAD) as sink:
        for e in events:
            sink(e)
    assert (tmp_path / HISTORY).read_text() == "".join(e.to_json() + "\n" for e in events)
    assert [e.to_json() for e in load_history(tmp_path)] == [e.to_json() for e in events]


@pytest.mark.parametrize("events, said", [
    ([Event(0, 0, "w1", "w1", "ok", "acquire", None, 0)],
     "line 1 is acquire, not run-start"),
    ([start(), start(2)], "event 1 has index 2 (events missing or out of order)"),
    ([start(), Event(1, 3, "w1", "w1", "done", "acquire", None, 0)], "line 2: field type = 'done'"),
    ([start(), Event(1, "3", "w1", "w1", "ok", "acquire", None, 0)], "line 2: field time = '3'"),  # type: ignore[arg-type]
    ([start(), lock_file(1, {"owner": "w1", "expired": "no", "valid_until": 100})],
     "line 2: the value of a lock-file event: field expired = 'no'"),
    ([Event(0, 0, "harness", "harness", "info", "run-start", {"scenario": "s"}, None)],
     "line 1: the value of a run-start event: field seed"),
])
def test_a_history_line_that_breaks_the_format_is_refused(tmp_path: Path, events: list[Event],
                                                          said: str) -> None:
    w = RunWriter(tmp_path, "lock")
    with pytest.raises(RunFileError) as e, w.history(HEAD) as sink:
        for ev in events:
            sink(ev)
    assert e.value.file == HISTORY and said in str(e.value) and str(tmp_path) in str(e.value)
    # the lines before the bad one were written; the bad one was not
    assert count_events(tmp_path / HISTORY) == len(events) - 1
    with pytest.raises(ValueError, match="appended line by line"):
        w.write_text(HISTORY, start().to_json() + "\n")


def test_verdict_and_metrics_that_break_the_format_are_refused_and_not_written(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, "lock")
    found = {"verdict": "ok", "violations": [], "findings": []}
    verdict = verdict_file(HEAD, found, matches=True, out=str(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(RunFileError) as e:
        w.finish(verdict, {"acquisitions": 1}, report=False)
    assert e.value.file == METRICS and "field" in str(e.value) and METRICS in str(e.value)
    bad = {**verdict, "verdict": "maybe"}
    with pytest.raises(RunFileError) as e:
        w.finish(bad, lock_metrics([]), report=False)  # type: ignore[arg-type]
    assert e.value.file == VERDICT and e.value.field == "verdict" and e.value.value == "maybe"
    assert "verdict.json: field verdict = 'maybe'" in str(e.value)
    with pytest.raises(RunFileError, match="field protocol = 'occ'"):
        w.finish({**verdict, "protocol": "occ"}, lock_metrics([]), report=False)  # type: ignore[typeddict-item]
    assert not (tmp_path / METRICS).exists() and not (tmp_path / VERDICT).exists()
    w.finish(verdict, lock_metrics([]), report=False)  # as declared: written
    assert json.loads((tmp_path / VERDICT).read_text())["verdict"] == "ok"


def test_declared_files_are_checked_by_name(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, "nbcc")
    with pytest.raises(RunFileError, match=r"plan.json: field writers = 'three'") as e:
        w.write_json("plan.json", {"writers": "three"})
    assert e.value.file == "plan.json" and not (tmp_path / "plan.json").exists()
    with pytest.raises(RunFileError, match=r"oracle.json: field status = 'fine'"):
        w.write_json(tmp_path / "oracle.json", {"status": "fine"})
    with pytest.raises(RunFileError, match=r"isolation.json: field claimed = 1"):
        w.write_text(tmp_path / "isolation.json", json.dumps({"protocol": "nbcc", "recorded": True,
                                                              "claimed": 1, "sees": "", "views": []}))
    with pytest.raises(RunFileError, match="scenario.toml: not valid TOML"):
        w.scenario("name = \n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing of any of them was written
    with pytest.raises(ValueError, match="not in the run directory"):
        w.write_json(tmp_path.parent / "elsewhere.json", {})
    w.scenario('name = "x"\n')
    w.write_json("oracle.json", {"status": "skipped", "reason": "no hudi-rs"})
    assert (tmp_path / SCENARIO).read_text() == 'name = "x"\n'


def test_a_killed_run_keeps_its_history_readable_by_the_loader(tmp_path: Path) -> None:
    """SIGKILL (no handler runs) while the simulated run streams its history: the lines written so far
    are on disk and reports/load.py reads them; no verdict was written."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "run", "rfc91-safe", "--set",
                             "duration_ms=3000000", "--out", str(out)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while count_events(out / HISTORY) < 1000:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run wrote no history"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / VERDICT).exists()
    events = load_history(out)
    assert len(events) >= 1000 and len(events) == count_events(out / HISTORY)
    assert events[0].f == "run-start" and events[0].value["scenario"] == "rfc91-safe"
    with pytest.raises(RunDirError, match="missing verdict.json"):  # not a complete run: no report
        load_run(out)
