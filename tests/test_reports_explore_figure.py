"""An explorer entry's report draws its counterexample: a lock counterexample as the lock reports'
lock-holder timeline, an OCC or NBCC one as the instant timeline, a PNG beside report.md, linked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli.main import main
from model.checkers.mutex import check_overlaps, holds
from reports.explore import step_events
from reports.instants import instant_spans

FIGURE = re.compile(r"!\[([^\]]*)\]\((report-figure-\d+\.png)\)")


def _run(tmp_path: Path, *argv: str) -> tuple[Path, dict]:  # type: ignore[type-arg]
    out = tmp_path / "run"
    assert main(["run", *argv, "--out", str(out)]) == 0  # the entry's expected verdict: a violation
    return out, json.loads((out / "explore.json").read_text())


def _linked_png(out: Path) -> str:
    md = (out / "report.md").read_text()
    (caption, name), = [m for m in FIGURE.findall(md) if "counterexample" in m[0]]
    assert (out / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    return str(caption)


def test_a_lock_counterexample_is_drawn_as_its_lock_holders(tmp_path: Path) -> None:
    # only pauses as faults: the same shortest violation (one long pause), found in seconds
    out, ex = _run(tmp_path, "explore-lock-hudi-long-pause", "--set", 'explore.fault_kinds=["pause"]')
    assert "Lock-holder timeline of the counterexample" in _linked_png(out)
    # the figure's holds are the counterexample's: the overlap drawn is the violation the explorer found
    events = step_events(ex["counterexample"])
    assert {h.node for h in holds(events)} == {"w1", "w2"}
    (overlap,) = check_overlaps(events)
    assert f"[{overlap.details['start']}, {overlap.details['end']}) ms" in ex["violation"]["message"]
    html = (out / "report.html").read_text()
    assert 'class="ev overlap"' in html and "explore-holders" in html  # the interactive one, in the page


@pytest.mark.parametrize("entry,writers", [("explore-occ-hudi-duplicate-key", {"w1", "w2"}),
                                           ("explore-nbcc-uncommitted-anchor", {"w1"})])
def test_an_occ_or_nbcc_counterexample_is_drawn_as_its_instants(tmp_path: Path, entry: str,
                                                                writers: set[str]) -> None:
    out, ex = _run(tmp_path, entry)
    assert "Instant timeline of the counterexample" in _linked_png(out)
    spans = instant_spans(step_events(ex["counterexample"]), "table", "v8")
    # every instant of the counterexample, requested to completed, on its writer's lane
    assert {s.writer for s in spans} == writers and any(s.completed for s in spans)
    html = (out / "report.html").read_text()
    assert html.count('id="occ-i') == len(spans)


def test_the_steps_give_back_the_events_of_the_replayed_run() -> None:
    steps = [
        {"who": "explorer", "what": "decide root", "detail": "w2's clock offset +500 ms", "time": 0},
        {"who": "store", "what": "lock-file info", "time": 0,
         "detail": '{"owner":"d882b7a0","expired":false,"valid_until":1767225602000}'},
        {"who": "w2", "what": "try-lock ok", "time": 0, "detail": '{"owner":"d882b7a0","valid_until":1}'},
        {"who": "w2/heartbeat", "what": "renew invoke", "time": 1000, "detail": '{"owner":"d882b7a0"}'},
        {"who": "nemesis", "what": "pause-start info", "time": 1000, "detail": '{"node":"w2"}'},
        {"who": "store", "what": "object info", "time": 1500,
         "detail": '{"key":"table/.hoodie/timeline/x.commit","size":746,"body":"<746 chars sha256:d9011>"}'},
    ]
    events = step_events(steps)
    assert [(e.index, e.node, e.process, e.f, e.type) for e in events] == [
        (0, "w2", "store", "lock-file", "info"), (1, "w2", "w2", "try-lock", "ok"),
        (2, "w2", "w2/heartbeat", "renew", "invoke"), (3, "w2", "nemesis", "pause-start", "info"),
        (4, "-", "store", "object", "info")]
    assert events[0].clock == 1_767_225_600_500  # w2's clock, 500 ms ahead
    assert events[4].clock is None and "body" not in events[4].value  # a digest is no body
