"""A report as a Markdown summary: tables, and the static image of each interactive timeline (embedded as a
data: URI); the other figures are in the HTML page beside it."""

from __future__ import annotations

import base64
from typing import Any

import pandas as pd

from reports.document import Report

MAX_MD_ROWS = 20


def _cell(value: Any) -> str:
    text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def md_table(df: pd.DataFrame, limit: int = MAX_MD_ROWS) -> str:
    """A GitHub-flavoured Markdown table of the first ``limit`` rows (cells escaped)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(_cell(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.head(limit).itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    if len(df) > limit:
        lines.append(f"\n({len(df) - limit} more rows in the HTML report)")
    return "\n".join(lines)


def render_markdown(report: Report, html_name: str = "report.html") -> str:
    """Headline, checker verdicts, violation groups and the key tables; figures are in ``html_name``."""
    out = [f"# {report.title}", "", f"Figures and every table: [{html_name}]({html_name}).", ""]
    for sec in report.sections:
        if not sec.text and not sec.tables and not sec.interactive:
            continue
        out += [f"## {sec.title}", ""]
        out += [t + "\n" for t in sec.text]
        for caption, _, png in sec.interactive:
            if png is not None:
                data = base64.b64encode(png).decode("ascii")
                out += [f"![{_cell(caption)}](data:image/png;base64,{data})", ""]
        for caption, df in sec.tables:
            out += [f"**{caption}**", "", md_table(df), ""]
    return "\n".join(out).rstrip() + "\n"
