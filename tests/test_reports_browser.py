"""The HTML report opens in headless Chromium with no console message, and the screenshot shows the timeline.

Needs Debian's chromium (CI: ``apt-get install -y --no-install-recommends chromium``); skipped when absent.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reports.times import instant_text

pytest.importorskip("matplotlib")
np = pytest.importorskip("numpy")
Image = pytest.importorskip("PIL.Image")

from engines.rundir import execute  # noqa: E402
from scenarios import loader  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0")


def _count(img: object, rgb: tuple[int, int, int], tol: int = 12) -> int:
    pixels = np.asarray(img.convert("RGB"), dtype=int)  # type: ignore[attr-defined]
    return int((np.abs(pixels - np.array(rgb)).max(axis=2) <= tol).sum())


def test_report_opens_in_headless_chromium_and_shows_the_timeline(tmp_path: Path) -> None:
    if CHROMIUM is None:
        print("SKIP reason: chromium is not installed (apt-get install -y --no-install-recommends chromium)")
        pytest.skip("chromium is not installed (apt-get install -y --no-install-recommends chromium)")
    out = tmp_path / "run"
    execute(loader.load("rfc91-long-pause", ["duration_ms=480000"]), None, out)
    html = (out / "report.html").read_text()
    # Every embedded figure is a PNG that decodes (a broken data: URI logs nothing in the console).
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(images) >= 6
    for data in images:
        Image.open(io.BytesIO(base64.b64decode(data))).verify()
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1400",
         f"--screenshot={shot}", (out / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    img = Image.open(shot)
    assert img.size == (1280, 1400)
    # The whole-run timeline is on the first screen: writer bars (blue) and the overlap (light red).
    assert _count(img, (31, 119, 180)) > 2000, "no lock-holder bars in the screenshot"
    assert _count(img, (240, 170, 170), tol=20) > 1000, "no overlap highlight in the screenshot"


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run on ``url`` (scripts get 3 s of virtual time); asserts no console message."""
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1600",
         "--virtual-time-budget=3000", *args, url], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    return proc


def _occ_run(out: Path) -> tuple[str, str]:
    from cli.main import main

    assert main(["timeline", "run", "tl-cc-none-lost-update", "--out", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    lost = json.loads((out / "report.json").read_text())["lost_updates"][0]["lost"]
    return f"occ-i{lost}", "occ-instants"  # hover the lost update


def _nbcc_run(out: Path) -> tuple[str, str]:
    from cli.main import main

    assert main(["nbcc", "run", "--rule", "instant", "--out", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    m = re.search(r'class="ev violated" id="(nbcc-i\d+)"', (out / "report.html").read_text())
    assert m, "no instant marked as cited by a violation"
    return m.group(1), "nbcc-instants"


@pytest.mark.parametrize("make", [_occ_run, _nbcc_run], ids=["occ-lost-update", "nbcc-instant-time"])
def test_protocol_report_loads_hovers_and_zooms_in_headless_chromium(tmp_path: Path, make: object) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y --no-install-recommends chromium)")
    out = tmp_path / "run"
    target, figure = make(out)  # type: ignore[operator]
    html = (out / "report.html").read_text()
    before = re.search(rf'id="{figure}" data-lo="([\d.]+)" data-hi="([\d.]+)"', html)
    assert before
    lo, hi = float(before.group(1)), float(before.group(2))
    url = f"{(out / 'report.html').as_uri()}#hover={target}&click={figure}-in"
    dom = _chromium(tmp_path, url, "--dump-dom").stdout
    # the hover shows the instant's details in the tooltip (the page's own mouseover handler)
    tip = re.search(r'<div class="hcc-tip" style="display: block;[^"]*">([^<]*)</div>', dom)
    assert tip, "no tooltip shown"
    instant = instant_text(target.split("-i", 1)[1])  # the id keeps Hudi's instant, the tip t<ms since start>
    assert tip.group(1).startswith(f"instant: {instant}\n") and "completion time: " in tip.group(1)
    assert "violation: " in tip.group(1) or "LOST: overwritten by " in tip.group(1)
    assert re.search(rf'class="ev [a-z-]+ hover" id="{target}"', dom)
    # "+ zoom in" halved the window around its centre, and the bars were laid out again
    shown = re.search(r'<span class="win">showing \[([\d.]+), ([\d.]+)\]', dom)
    assert shown
    assert float(shown.group(2)) - float(shown.group(1)) == pytest.approx((hi - lo) / 2)
    shot = tmp_path / "hover.png"
    _chromium(tmp_path, f"{(out / 'report.html').as_uri()}#hover={target}", f"--screenshot={shot}")
    img = Image.open(shot)
    assert img.size == (1280, 1600)
    assert _count(img, (255, 251, 230), tol=3) > 2000, "the tooltip is not in the screenshot"
