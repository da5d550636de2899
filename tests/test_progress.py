"""Progress on stderr (engines/progress.py): lines with elapsed times, a bar in a terminal only, part seconds.

The formats are tested, never the durations.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from cli.main import main
from engines.progress import Progress, Steps, is_terminal, seconds_text

LINE = re.compile(r"^(?P<cmd>.+?) \[ *(?P<elapsed>\d+\.\ds|\d+m\d\ds|\d+h\d\dm)\] (?P<text>.+)$")


def _no_times(text: str) -> str:
    """``T`` for every time in ``text``: the tests read formats, not durations."""
    return re.sub(r"\d+\.\ds|\d+m\d\ds|\d+h\d\dm", "T", text)


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def not_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)  # CI=true turns bars off everywhere: tested on its own
    monkeypatch.delenv("TERM", raising=False)


def test_a_bar_only_in_a_terminal() -> None:
    tty, log = Terminal(), io.StringIO()
    for stream in (tty, log):
        p = Progress("sweep smoke", 4, stream, every=0)
        for done in range(5):
            p.update(done)
    drawn = _no_times(tty.getvalue())
    assert drawn.count("\r") == 5 and drawn.endswith("4/4 runs (T)\n")
    assert "[######" in drawn and "] sweep smoke: 2/4 runs" in drawn
    plain = _no_times(log.getvalue())
    assert "\r" not in plain and "[" not in plain and "#" not in plain
    assert plain.splitlines()[-1] == "sweep smoke: 4/4 runs (T)"


def test_no_bar_under_ci_or_a_dumb_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_terminal(Terminal())
    monkeypatch.setenv("CI", "true")
    assert not is_terminal(Terminal())
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "dumb")
    assert not is_terminal(Terminal())
    assert not is_terminal(io.StringIO())


def test_plain_lines_are_few_the_last_always_shown() -> None:
    log = io.StringIO()
    p = Progress("sweep g", 1000, log)  # every LINE_EVERY seconds: none of these but the last
    for done in range(1001):
        p.update(done)
    assert _no_times(log.getvalue()).splitlines() == ["sweep g: 1000/1000 runs (T)"]


def test_steps_time_each_part_and_say_so_with_the_elapsed_time() -> None:
    err = io.StringIO()
    steps = Steps("hcc thing", err)
    with steps.part("start server"):
        pass
    with pytest.raises(ValueError), steps.part("run"):
        raise ValueError("boom")
    with steps.part("check", done=lambda: "pass"):
        steps.say("half way")
    assert list(steps.seconds) == ["start server", "run", "check"]
    assert all(isinstance(v, float) and v >= 0 for v in steps.seconds.values())
    lines = err.getvalue().splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [_no_times(m.group("text")) for m in parsed if m] == [
        "start server ...", "start server done in T", "run ...", "run failed in T", "check ...",
        "half way", "check pass in T"]
    quiet = Steps("hcc thing", err := io.StringIO(), quiet=True)
    with quiet.part("x"):
        pass
    assert err.getvalue() == "" and list(quiet.seconds) == ["x"]  # timed even when quiet


def test_seconds_text() -> None:
    shown = [seconds_text(s) for s in (0.04, 59.94, 61, 427, 3725)]
    assert shown == ["0.0s", "59.9s", "1m01s", "7m07s", "1h02m"]


def test_sweep_progress_on_stderr_not_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    assert main(["sweep", "smoke", "--engine", "local", "--jobs", "2", "--out", str(tmp_path / "s")]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0] == "sweep smoke: base rfc91-long-pause, 4 cells x 3 seeds = 12 runs"
    assert re.fullmatch(r"sweep smoke: 12/12 runs \(\d+\.\ds\)", err[-1])  # stderr is no terminal: no bar
    assert "\r" not in captured.err
    assert "runs (" not in captured.out and captured.out.splitlines()[0].startswith("cell  ")


def test_explore_lock_says_its_parts_and_times_them_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explore-lock", "--writers", "2", "--holds", "1", "--steps", "1", "--no-phases", "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["verdict"] == "holds" and set(out["timings"]) == {"search"}
    assert isinstance(out["timings"]["search"], float)
    texts = [m.group("text") for m in map(LINE.match, captured.err.splitlines()) if m]
    assert texts[0] == "search ..." and re.fullmatch(r"search holds in \d+\.\ds", texts[-1])
    assert main([a for a in args if a != "--json"] + ["--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and "\nholds: " in quiet.out
