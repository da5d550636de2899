"""Parked runs (``model/explore/parked.py``): the depth-first search gives the same result when it resumes
runs from forked copies parked at their decisions as when it replays every run from the start (verdict,
distinct states, counts, the shortest counterexample's path, the findings and their paths), on small rows of
every protocol; and no run process outlives a search, finished, interrupted or failed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_local_jobs import _session

from cli.main import main
from model.explore.bounds import NO_PARKING, Bounds, ParkedRuns
from model.explore.deepen import deepen
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds
from model.explore.parked import Parking, RunFailed
from model.explore.run import Run
from model.explore.search import ExploreResult, Search, search_bounds

LOST_REPLY: dict[str, Any] = {"faults": 1, "fault_kinds": ("lost-reply",)}
# a copy at every decision while fewer than 3 are parked: resumes from a frame above (replaying the decisions
# between), from the root, and by the parked process itself for a frame's last option all happen
FEW = ParkedRuns(limit=3, spacing_ms=0)
EVERY = ParkedRuns(limit=200, spacing_ms=0)
ANCHOR = NbccBounds(variant="hudi-1.2.0", writers=1, batches=2, buckets=2, failed_attempts=1,
                    metadata_table=False)
ROWS = [
    pytest.param(Bounds(variant="hudi", writers=2), id="lock-hudi-K0"),
    pytest.param(Bounds(variant="hudi", writers=1, **LOST_REPLY), id="lock-hudi-lost-reply"),
    pytest.param(OccBounds(variant="hudi", writers=1), id="occ-hudi-metadata-table"),
    pytest.param(ANCHOR, id="nbcc-anchor-storage-violated"),
    pytest.param(NbccBounds(variant="hudi", writers=1, metadata_table=False, **LOST_REPLY),
                 id="nbcc-storage-lost-reply"),
]


def _plain(res: ExploreResult) -> dict[str, Any]:
    out = res.to_json()
    del out["seconds"]
    out["path"] = None if res.found is None else res.found.path
    out["finding_paths"] = {k: f.path for k, f in res.findings.items()}
    return out


@pytest.mark.parametrize("bounds", ROWS)
def test_parked_and_replayed_searches_agree(bounds: Bounds) -> None:
    replayed = search_bounds(bounds, parked=NO_PARKING)
    assert replayed.complete
    assert _plain(search_bounds(bounds, parked=FEW)) == _plain(replayed)


def test_the_anchor_row_is_violated_with_a_copy_at_every_decision() -> None:
    """The agreement is not of two searches that find nothing: this row's violation (issue #19774's anchor) is
    found parked, with its shortest path, also with no limit binding."""
    replayed, parked = search_bounds(ANCHOR, parked=NO_PARKING), search_bounds(ANCHOR, parked=EVERY)
    assert parked.verdict == "violated" and parked.found is not None
    assert parked.found.violation.kind == "membership"
    assert _plain(parked) == _plain(replayed)


def _groups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    groups: list[int] = []
    init = Parking.__init__

    def recording(self: Parking, *args: Any) -> None:
        init(self, *args)
        groups.append(self.pgid)

    monkeypatch.setattr(Parking, "__init__", recording)
    return groups


def _gone(group: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


SMALL = NbccBounds(variant="hudi", writers=1, metadata_table=False)


def test_no_run_process_outlives_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = _groups(monkeypatch)
    assert search_bounds(SMALL, parked=EVERY).verdict == "holds"
    assert len(groups) == 1 and _gone(groups[0])


def test_no_run_process_outlives_an_interrupted_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C in the search (KeyboardInterrupt at its 30th decision, many runs parked by then)."""
    groups = _groups(monkeypatch)
    decide, calls = Search.decide, [0]

    def interrupted(self: Search, *args: Any) -> int:
        calls[0] += 1
        if calls[0] == 30:
            assert self.parking is not None and self.parking.parked
            raise KeyboardInterrupt
        return decide(self, *args)

    monkeypatch.setattr(Search, "decide", interrupted)
    with pytest.raises(KeyboardInterrupt):
        search_bounds(ANCHOR, parked=EVERY)
    assert len(groups) == 1 and _gone(groups[0])


def test_a_failing_run_process_fails_the_search_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = _groups(monkeypatch)

    def broken(self: Run) -> Any:
        raise ValueError("a key that cannot be made")

    monkeypatch.setattr(Run, "key", broken)  # the run processes fork after this
    with pytest.raises(RunFailed, match="ValueError: a key that cannot be made"):
        search_bounds(SMALL, parked=EVERY)
    assert len(groups) == 1 and _gone(groups[0])


def test_bad_settings_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="parked.limit"):
        search_bounds(SMALL, parked=ParkedRuns(limit=-1))
    with pytest.raises(ValueError, match="parked.spacing_ms"):
        search_bounds(SMALL, parked=ParkedRuns(spacing_ms=-5))


def test_hcc_explore_parked(capsys: pytest.CaptureFixture[str]) -> None:
    """``--parked N`` on the command line: the same result as ``--parked 0``; bad values named."""
    base = ["explore", "--protocol", "nbcc", "--writers", "1", "--metadata-table", "no", "--json", "--quiet"]
    outs = []
    for n in ("0", "2"):
        assert main([*base, "--parked", n]) == 0
        out = json.loads(capsys.readouterr().out)
        outs.append({k: out[k] for k in ("verdict", "states", "runs", "points", "transitions", "depth")})
    assert outs[0] == outs[1] and outs[0]["verdict"] == "holds"
    for bad, why in (("-1", "must be >= 0"), ("x", "is not a whole number")):
        assert main([*base, "--parked", bad]) == 2
        err = capsys.readouterr().err
        assert "--parked" in err and why in err
    assert main([*base, "--parked", "4", "--jobs", "2"]) == 2
    assert "parks no run" in capsys.readouterr().err


def test_ctrl_c_on_a_parked_search_exits_130_and_leaves_no_process() -> None:
    """A terminal's Ctrl-C (SIGINT to the command's process group) while runs are parked: the run processes
    are in a group of their own, which the search ends as it exits."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "explore", "--protocol", "nbcc", "--writers", "2", "--faults", "1",
         "--metadata-table", "no", "--parked", "8"], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_session(proc.pid)) < 4:  # the search, the root process and two run processes or more
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "interrupted by SIGINT" in err and "Traceback" not in err
    deadline = time.monotonic() + 10
    while (left := _session(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


def test_iterative_deepening_parks_no_run_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A level's runs end a few decisions in, where a replay costs less than a fork (``deepen``)."""
    groups = _groups(monkeypatch)
    assert deepen(SMALL, SMALL.reductions, below=2).levels
    assert groups == []
    assert deepen(SMALL, SMALL.reductions, below=1, parked=FEW).levels and len(groups) == 1
