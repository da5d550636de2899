"""A transactional verdict as one self-contained HTML page: each cycle drawn as a timeline.

For each anomaly class with a cycle, an SVG timeline of the cycle's transactions, in the style of
the linearizability timeline (reports/linearizability.py): one row per process, each transaction
a bar from its invoke to its completion (an unknown outcome runs to the right edge, dashed),
labelled with its name in the cycle (T1, T2, ...) and its micro-ops; the x axis is the order of
the event times, not their scale, and the real times are in each bar's tooltip.  The cycle's
steps are arrows from bar to bar, coloured by relation (ww, wr, rw, process, realtime) and
labelled with the key; the table under it says why each step holds.  The other anomalies
(aborted and intermediate reads, lost updates, ...) follow as lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape
from typing import Any

from model.checkers.txn_check import CycleCase, TxnVerdict
from model.checkers.txn_history import INFO, show, show_txn
from reports.interactive import SVG_STYLE, fit_label, legend_html

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; border-bottom: 1px solid #ccc; margin-top: 1.4em; }
pre { background: #f6f6f6; padding: 0.6em; white-space: pre-wrap; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { border: 1px solid #ddd; padding: 2px 6px; }
th { text-align: left; background: #f2f2f2; }
svg g.txn:hover rect { stroke: #000; stroke-width: 2; }
.scroll { overflow-x: auto; }
.forbidden { color: #b00; font-weight: bold; }
""" + SVG_STYLE

REL_COLOURS = {"ww": "#1f6fd1", "wr": "#1b7a32", "rw": "#d1491f", "process": "#7a4fb0", "realtime": "#8a8a8a"}
FILL = {"ok": "#cfe3fb", "info": "#f3e3b8"}
ROW, BAR, LEFT, TOP = 46, 22, 90, 30


def _cycle_svg(verdict: TxnVerdict, case: CycleCase, locate: Callable[[int], str] | None) -> str:
    names = verdict.names(case)
    txns = [verdict.txns[a] for a, _, _ in case.steps]
    times = sorted({t.invoke for t in txns} | {t.complete for t in txns if not math.isinf(t.complete)})
    rank = {t: i for i, t in enumerate(times)}
    end = len(times)
    step = max(70.0, min(150.0, 1100.0 / max(1, end)))

    def x(r: float) -> float:
        return LEFT + 10 + r * step

    procs: list[Any] = []
    for t in sorted(txns, key=lambda t: (t.invoke, t.id)):
        if t.process not in procs:
            procs.append(t.process)
    row = {p: i for i, p in enumerate(procs)}
    width = x(end + 0.5) + 30
    height = TOP + len(procs) * ROW + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'viewBox="0 0 {width:.0f} {height}">',
           '<defs>' + "".join(
               f'<marker id="arrow-{rel}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
               f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/>'
               f'</marker>' for rel, c in REL_COLOURS.items()) + "</defs>"]
    for p, i in row.items():
        y = TOP + i * ROW
        out.append(f'<text x="4" y="{y + BAR / 2 + 4:.0f}">p{escape(str(p))[:10]}</text>'
                   f'<line x1="{LEFT}" y1="{y + BAR / 2:.0f}" x2="{width - 10:.0f}" y2="{y + BAR / 2:.0f}" '
                   f'stroke="#f0f0f0"/>')
    centre: dict[int, tuple[float, float]] = {}
    for t in txns:
        y = TOP + row[t.process] * ROW
        x0 = x(rank[t.invoke])
        x1 = max(x(end) if math.isinf(t.complete) else x(rank[t.complete]), x0 + 40)
        centre[t.id] = ((x0 + x1) / 2, y + BAR / 2)
        tip = [f"{names[t.id]} = txn {t.id} by p{t.process} ({t.type})", show_txn(t),
               f"invoked {t.invoke:g}, " + ("no completion" if math.isinf(t.complete)
                                             else f"completed {t.complete:g}")]
        if locate is not None:
            tip.append(locate(t.id))
        dash = ' stroke-dasharray="4 3"' if t.type == INFO else ""
        label = escape(fit_label(f"{names[t.id]} {show_txn(t)}", x1 - x0))
        out.append(f'<g class="txn"><title>{escape(chr(10).join(tip))}</title>'
                   f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="{BAR}" rx="3" '
                   f'fill="{FILL.get(t.type, "#e2e2e2")}" stroke="#555"{dash}/>'
                   f'<text x="{x0 + 3:.1f}" y="{y + BAR / 2 + 4:.0f}">{label}</text></g>')
    for i, s in enumerate(case.steps):
        info = verdict.explain_step(s, names)
        (ax, ay), (bx, by) = centre[s[0]], centre[s[1]]
        colour = REL_COLOURS[info["type"]]
        # a curve bowing upwards (downwards for odd steps) so arrows between the same bars differ
        bow = (-1 if i % 2 == 0 else 1) * (18 + 6 * (i // 2))
        mx, my = (ax + bx) / 2, min(ay, by) + bow if bow < 0 else max(ay, by) + bow
        rel_label = info["type"] + (f" {show(info['key'])}" if "key" in info else "")
        step_tip = f'{info["from"]} < {info["to"]}: {info["explanation"]}'
        y0 = ay - BAR / 2 if bow < 0 else ay + BAR / 2
        y1 = by - BAR / 2 if bow < 0 else by + BAR / 2
        out.append(f'<g class="step"><title>{escape(step_tip)}</title><path d="M {ax:.1f} {y0:.1f} '
                   f'Q {mx:.1f} {my:.1f} {bx:.1f} {y1:.1f}" fill="none" '
                   f'stroke="{colour}" stroke-width="1.6" marker-end="url(#arrow-{info["type"]})"/>'
                   f'<text x="{mx:.1f}" y="{my + (-3 if bow < 0 else 11):.1f}" fill="{colour}" '
                   f'text-anchor="middle">{escape(rel_label)}</text></g>')
    out.append("</svg>")
    return "".join(out)


def _steps_table(verdict: TxnVerdict, case: CycleCase) -> str:
    names = verdict.names(case)
    rows = "".join(
        f'<tr><td>{escape(s["from"])} &lt; {escape(s["to"])}</td>'
        f'<td style="color:{REL_COLOURS[s["type"]]}">{escape(s["type"])}</td>'
        f'<td>{escape(s["explanation"])}</td></tr>'
        for s in (verdict.explain_step(st, names) for st in case.steps))
    return f"<table><tr><th>step</th><th>relation</th><th>why</th></tr>{rows}</table>"


def render_txn_report(verdict: TxnVerdict, title: str, locate: Callable[[int], str] | None = None) -> str:
    """The whole page (no external resources).  ``locate`` names where a transaction came from (its
    lines in the history file) for the tooltips."""
    legend = legend_html([(c, r) for r, c in REL_COLOURS.items()]
                         + [(FILL["ok"], "committed"), (FILL["info"], "unknown outcome (info)")])
    sections = []
    for kind in verdict.anomaly_types:
        cls = ' class="forbidden"' if kind in verdict.forbidden else ""
        mark = " (forbidden by the claimed model)" if kind in verdict.forbidden else ""
        if kind in verdict.cycles:
            case = verdict.cycles[kind]
            sections.append(f"<h2{cls}>{escape(kind)}{escape(mark)}: a cycle of {len(case.steps)} "
                            f"transactions</h2>"
                            f'<div class="scroll">{_cycle_svg(verdict, case, locate)}</div>'
                            + _steps_table(verdict, case))
            continue
        cases = verdict.anomalies[kind]
        items = "".join(f"<li>{escape(verdict.case_text(kind, c, locate))}</li>" for c in cases[:50])
        more = f"<p>... and {len(cases) - 50} more</p>" if len(cases) > 50 else ""
        sections.append(f"<h2{cls}>{escape(kind)}{escape(mark)}: {len(cases)} "
                        f"case{'s' if len(cases) != 1 else ''}</h2><ul>{items}</ul>{more}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body><h1>{escape(title)}</h1>\n"
            f"<pre>{escape(verdict.text(locate))}</pre>\n{legend}\n"
            + "\n".join(sections) + "\n</body></html>\n")
