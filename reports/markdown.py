"""A report as a Markdown summary: tables, and the static image of each interactive timeline as a PNG file
beside it (``report-figure-N.png``, linked: a data: URI on one line is something terminals, diffs and
GitHub's Markdown do not show); the other figures are in the HTML page beside it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from reports.document import Report, cell_text

MAX_MD_ROWS = 20


def _cell(value: Any) -> str:
    return cell_text(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def md_table(df: pd.DataFrame, limit: int = MAX_MD_ROWS) -> str:
    """A GitHub-flavoured Markdown table of the first ``limit`` rows (cells escaped)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(_cell(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.head(limit).itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    if len(df) > limit:
        lines.append(f"\n({len(df) - limit} more rows in the HTML report)")
    return "\n".join(lines)


def _static_caption(caption: str) -> str:
    """A figure's caption for a static image: without the HTML page's "(hover ...)" instructions."""
    return re.sub(r"\s*\((?:hover|click)[^)]*\)", "", caption)


def _figures(report: Report) -> Iterator[tuple[int, str, str, bytes]]:
    """(section index, file name, caption, PNG) of each static figure, numbered in report order."""
    n = 0
    for i, sec in enumerate(report.sections):
        for caption, _, png in sec.interactive:
            if png is not None:
                n += 1
                yield i, f"report-figure-{n}.png", _static_caption(caption), png


def markdown_figures(report: Report) -> dict[str, bytes]:
    """The PNG files :func:`render_markdown` links to, by file name (written beside ``report.md``)."""
    return {name: png for _, name, _, png in _figures(report)}


def render_markdown(report: Report, html_name: str = "report.html") -> str:
    """Headline, checker verdicts, violation groups and the key tables; figures are in ``html_name``, and
    each timeline's static image in its own file (:func:`markdown_figures`)."""
    figures: dict[int, list[tuple[str, str]]] = {}
    for i, name, caption, _ in _figures(report):
        figures.setdefault(i, []).append((name, caption))
    out = [f"# {report.title}", "", f"Figures and every table: [{html_name}]({html_name}).", ""]
    for i, sec in enumerate(report.sections):
        if not sec.text and not sec.tables and not sec.interactive:
            continue
        out += [f"## {sec.title}", ""]
        out += [t + "\n" for t in sec.text]
        for name, caption in figures.get(i, []):
            out += [f"![{_cell(caption)}]({name})", ""]
        for caption, df in sec.tables:
            out += [f"**{caption}**", "", md_table(df), ""]
    return "\n".join(out).rstrip() + "\n"
