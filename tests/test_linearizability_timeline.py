"""The linearizability timeline (reports/linearizability.py): what it draws, and that it renders in a browser.

The browser test needs Debian's chromium (``apt-get install -y --no-install-recommends chromium``);
it is skipped when absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from model.checkers.lin_models import INFO, OK, KVModel, Operation
from model.checkers.linearizable import check_operations
from reports.linearizability import render_timeline

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _race(n: int = 40, winners: tuple[int, ...] = (3, 30)) -> list[Operation]:
    """n clients race create-if-absent in waves of 4 (8 processes); two of them win."""
    ops = []
    for i in range(n):
        call = (i // 4) * 3.0 + i % 4 * 0.1
        status = OK if i in winners else "fail"
        ops.append(Operation(i, f"c{i % 8}", "cas", (None, f"v{i}"), status, None, call, call + 2.5))
    return ops


def test_timeline_marks_prefix_blocked_and_setter() -> None:
    verdict = check_operations(_race())
    part = verdict.failed[0]
    assert [op.index for op in part.setters] == [3] and [b.op.index for b in part.blocked] == [30]
    html = render_timeline(verdict, "race")
    # one row per process, every operation a bar with its details on hover (no zoom: the conflict is wide)
    assert len(re.findall(r'<g class="op ', html)) == 40 and "around the conflict" not in html
    assert [f">c{i}</text>" in html for i in range(8)] == [True] * 8
    assert html.count('<g class="op blocked"><title>cas(none-&gt;&#x27;v30&#x27;) by c6') == 1
    assert html.count('<g class="op setter"><title>cas(none-&gt;&#x27;v3&#x27;) by c3') == 1
    assert "cannot be placed after the prefix: the register holds &#x27;v3&#x27;, not absent" in html
    # the prefix numbered at its points
    n = len(part.order)
    assert f'<g class="point"><title>#{n}: ' in html and f'<g class="point"><title>#{n + 1}: ' not in html
    assert len(re.findall(r'<g class="point">', html)) == n


def _waves(n: int = 120, bad: int = 101) -> list[Operation]:
    """Waves of 4 operations: a write of the wave's number, then 3 reads of it; read ``bad`` sees 99."""
    ops = []
    for i in range(n):
        wave, call = i // 4, (i // 4) * 3.0 + i % 4 * 0.1
        if i % 4 == 0:
            ops.append(Operation(i, f"c{i % 8}", "write", wave, OK, None, call, call + 2.5))
        else:
            seen = 99 if i == bad else wave
            ops.append(Operation(i, f"c{i % 8}", "read", None, OK, seen, call, call + 2.5))
    return ops


def test_a_local_conflict_in_a_long_history_gets_a_zoomed_view() -> None:
    verdict = check_operations(_waves())
    expected = "after ... write(24) by c0 and write(25) by c4, read()=99 by c5 cannot be placed"
    assert expected in verdict.explain()
    html = render_timeline(verdict, "waves")
    zoom, whole = html.split("whole sub-history")
    assert "around the conflict" in zoom
    assert zoom.count('<g class="op ') < 20 and whole.count('<g class="op ') == 120
    assert zoom.count('class="op blocked"') == whole.count('class="op blocked"') == 1
    assert zoom.count('class="op setter"') == whole.count('class="op setter"') == 1


def test_linearizable_kv_history_draws_each_key() -> None:
    ops = [Operation(0, 0, "put", ("x", "a"), OK, None, 0, 1),
           Operation(1, 1, "get", ("x", None), OK, "a", 2, 3),
           Operation(2, 2, "append", ("y", "b"), INFO, None, 0, float("inf"))]
    html = render_timeline(check_operations(ops, model=KVModel()), "kv")
    assert "key &#x27;x&#x27;: ok" in html and "key &#x27;y&#x27;: ok" in html
    assert 'stroke-dasharray="4 3"' in html  # the unknown append runs open-ended
    assert "blocked" not in html.split("<body>")[1].replace("g.blocked", "")


def test_conformance_report_attaches_the_timeline_of_a_non_linearizable_race(tmp_path: Path) -> None:
    from backends.conformance import PropertyResult, Report
    from cli.conformance import write_timelines

    verdict = check_operations(_race())
    rep = Report("gs+http://h:1/b", "endpoint", "gcs", run_id="abc123",
                 properties=[PropertyResult("create-race", False, verdict.explain(), verdict=verdict),
                             PropertyResult("replace-race", True, "fine")])
    [page] = write_timelines(rep, tmp_path)
    assert page.name == "gs_http_h_1_b-abc123-create-race.html"
    assert 'class="op blocked"' in page.read_text()
    assert f"timeline: {page}" in rep.table()
    data = rep.to_json()["properties"]
    assert data[0]["timeline"] == str(page) and data[0]["counterexample"]["result"] == "illegal"
    assert "timeline" not in data[1] and "counterexample" not in data[1]


def _count(png: Path, rgb: tuple[int, int, int], tol: int = 10) -> int:
    np = pytest.importorskip("numpy")
    image = pytest.importorskip("PIL.Image")
    pixels = np.asarray(image.open(png).convert("RGB"), dtype=int)
    return int((np.abs(pixels - np.array(rgb)).max(axis=2) <= tol).sum())


def test_timeline_renders_in_headless_chromium(tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y --no-install-recommends chromium)")
    page = tmp_path / "timeline.html"
    page.write_text(render_timeline(check_operations(_waves()), "waves"))
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900", f"--screenshot={shot}",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line for line in proc.stderr.splitlines() if ":CONSOLE" in line] == []
    # the conflict is on the first screen: blocked bars red, the winner orange, the prefix green
    assert _count(shot, (0xEF, 0x7B, 0x7B)) > 500, "no blocked operation drawn"
    assert _count(shot, (0xFF, 0xC3, 0x6B)) > 300, "no state-setting operation drawn"
    assert _count(shot, (0x9B, 0xE3, 0xA9)) > 1000, "no linearized operation drawn"
