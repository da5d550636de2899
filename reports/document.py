"""A built report: titled sections of text, tables and figures, and the machine-readable summary.

Every protocol's report module (``reports/lock.py``, ``occ.py``, ``nbcc.py``, ``explore.py``) builds one;
the HTML and Markdown renderers (``reports/html.py``, ``markdown.py``) only lay it out, so both show the
same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

MAX_ROWS = 200  # rows of a violation or finding table; report.json keeps them all


@dataclass(frozen=True)
class Clock:
    """A clock reading or a Hudi instant in a table cell, as ms since the run's start on that clock
    (``reports/times.py`` says why one format): shown as ``t<ms>``."""

    ms: int


def cell_text(value: Any) -> str:
    """A table cell as both renderers show it: nothing for an absent value (None, NaN), a whole number
    without ``.0`` (a count in a column pandas made float), other numbers to 3 significant digits (at
    least one decimal from 100 up), a :class:`Clock` as ``t<ms>``, everything else as ``str``."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, Clock):
        return f"t{value.ms}"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


@dataclass
class Section:
    """One titled part of a report."""

    title: str
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (caption, PNG)
    details: list[tuple[str, pd.DataFrame]] = field(default_factory=list)  # collapsed tables
    # (caption, HTML fragment of reports.interactive, static PNG or None): the HTML page shows the
    # interactive figure, the Markdown the static image
    interactive: list[tuple[str, str, bytes | None]] = field(default_factory=list)


@dataclass
class Report:
    """A built report: a title, its sections, and the machine-readable summary."""

    title: str
    sections: list[Section]
    summary: dict[str, Any]
