"""The HTML report opens in headless Chromium with no console message, and the screenshot shows the timeline.

Needs Debian's chromium (CI: ``apt-get install -y --no-install-recommends chromium``); skipped when absent.
"""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

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
