"""Write the report of a run directory: report.html, report.md and report.json, each atomically.

Everything is rendered in memory first, so a run directory that cannot be read,
or a report that fails to render, leaves no partial report behind.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

FORMATS = ("html", "md", "json")
FILES = {"html": "report.html", "md": "report.md", "json": "report.json"}

Writer = Callable[[Path, str | bytes], None]


def parse_formats(text: str) -> tuple[str, ...]:
    """``html,md,json`` -> a tuple; ValueError names an unknown format."""
    formats = tuple(f.strip() for f in text.split(",") if f.strip())
    for f in formats:
        if f not in FORMATS:
            raise ValueError(f"--format: {f!r} is not one of {', '.join(FORMATS)}")
    if not formats:
        raise ValueError(f"--format: {text!r} names no format (choose from {', '.join(FORMATS)})")
    return formats


def render_run_report(run_dir: Path, formats: Sequence[str] = FORMATS) -> dict[str, str | bytes]:
    """File name -> text of the report of ``run_dir`` (RunDirError when the directory is bad).

    Files that parse but hold values of the wrong type somewhere the report reads them (a
    list where a number belongs, a count too large for an integer column) are a RunDirError too,
    naming the files and the error.
    """
    from model.run_format import HISTORY, METRICS
    from reports.build import build_report
    from reports.load import RunDirError, load_run

    run = load_run(run_dir)
    try:
        return render(build_report(run), formats)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as e:
        if isinstance(e, RunDirError):
            raise
        raise RunDirError(Path(run_dir), f"{HISTORY} or {METRICS} holds a value the report cannot use "
                                         f"({type(e).__name__}: {e})") from None


def render_sweep_report(rows: Path, formats: Sequence[str] = FORMATS, x: str | None = None,
                        y: str | None = None) -> dict[str, str | bytes]:
    """File name -> text of the report of sweep rows (SweepError when they are bad)."""
    from reports.sweep import build_sweep_report

    return render(build_sweep_report(rows, x, y), formats)


def write_sweep_report(rows: Path, write: Writer, formats: Sequence[str] = FORMATS, x: str | None = None,
                       y: str | None = None) -> list[Path]:
    """Render then write the report of sweep rows beside them (in the sweep folder) with ``write``."""
    folder = rows.parent
    paths = []
    for name, text in render_sweep_report(rows, formats, x, y).items():
        write(folder / name, text)
        paths.append(folder / name)
    return paths


def render(report: Any, formats: Sequence[str]) -> dict[str, str | bytes]:
    """A built report as the files of the requested formats (text; the Markdown's figures as PNG bytes)."""
    from reports.html import render_html
    from reports.markdown import markdown_figures, render_markdown

    texts: dict[str, str | bytes] = {}
    if "html" in formats:
        texts[FILES["html"]] = render_html(report)
    if "md" in formats:
        texts[FILES["md"]] = render_markdown(report, FILES["html"])
        texts.update(markdown_figures(report))
    if "json" in formats:
        texts[FILES["json"]] = json.dumps(report.summary, indent=2, sort_keys=True, default=str) + "\n"
    return texts


def write_report(run_dir: Path, write: Writer, formats: Sequence[str] = FORMATS,
                 required: bool = True) -> list[Path]:
    """Render then write the report files of ``run_dir`` with ``write`` (an atomic writer).

    With ``required=False`` (the default report at the end of ``hcc run``) a missing
    ``reports`` extra (pandas, matplotlib) is a note on stderr instead of an error.
    """
    try:
        texts = render_run_report(run_dir, formats)
    except ModuleNotFoundError as e:
        if required or e.name not in ("pandas", "matplotlib"):
            raise
        print(f"hcc: no report for {run_dir}: {e.name} is missing "
              "(pip install 'hudi-cc-harness[reports]')", file=sys.stderr)
        return []
    paths = []
    for name, text in texts.items():
        write(run_dir / name, text)
        paths.append(run_dir / name)
    return paths
