"""A report as one self-contained HTML page: tables from pandas, figures embedded as base64 PNG, interactive
timelines as inline SVG with their script (reports/interactive.py)."""

from __future__ import annotations

import base64
from html import escape

import pandas as pd

from reports import interactive
from reports.document import Report, Section, cell_text

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table.dataframe { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
table.dataframe td, table.dataframe th { border: 1px solid #ddd; padding: 2px 6px; text-align: left;
  vertical-align: top; max-width: 60em; overflow-wrap: anywhere; }
table.dataframe th { background: #f3f3f3; }
figure { margin: 0.5em 0 1.2em; } figure img { max-width: 100%; }
figcaption { font-size: 0.85em; color: #555; }
.caption { font-weight: 600; margin: 0.8em 0 0.2em; }
"""


def _table(df: pd.DataFrame) -> str:
    shown = df.map(cell_text)  # one way to show a cell in both renderers (reports.document.cell_text)
    return str(shown.to_html(index=False, escape=True, border=0))


def _section(sec: Section) -> str:
    parts = [f"<section><h2>{escape(sec.title)}</h2>"]
    parts += [f"<p>{escape(t)}</p>" for t in sec.text]
    for caption, fragment, _ in sec.interactive:
        parts.append(f'<figure class="interactive">{fragment}'
                     f"<figcaption>{escape(caption)}</figcaption></figure>")
    for caption, df in sec.tables:
        parts.append(f'<div class="caption">{escape(caption)}</div>{_table(df)}')
    for caption, data in sec.images:
        b64 = base64.b64encode(data).decode("ascii")
        parts.append(f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{b64}">'
                     f"<figcaption>{escape(caption)}</figcaption></figure>")
    for caption, df in sec.details:
        parts.append(f"<details><summary>{escape(caption)}</summary>{_table(df)}</details>")
    parts.append("</section>")
    return "\n".join(parts)


def render_html(report: Report) -> str:
    """The whole page: no external resources, so it opens offline."""
    body = "\n".join(_section(s) for s in report.sections)
    live = any(s.interactive for s in report.sections)
    style = STYLE + (interactive.STYLE if live else "")
    script = f"<script>{interactive.SCRIPT}</script>" if live else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(report.title)}</title><style>{style}</style>{script}</head>\n"
            f"<body><h1>{escape(report.title)}</h1>\n{body}\n</body></html>\n")
