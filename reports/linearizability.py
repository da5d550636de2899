"""A linearizability verdict as one self-contained HTML page with an SVG timeline per sub-history.

One row per process, each operation a bar from its invoke to its completion (an unknown outcome
runs to the right edge, dashed).  The x axis is the order of event times, not their scale, so
short operations stay readable; the real times are in each bar's tooltip.  Colours: the
linearization (or, for an illegal sub-history, the longest linearizable prefix) in green, with
its order number at a feasible linearization point; the operations that cannot be placed after
that prefix in red; the operation that made the state blocking them in orange; the rest grey.
Hovering a bar shows the operation, its interval, its status and its place in the order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from model.checkers.lin_models import INFO, Operation
from model.checkers.lin_search import ILLEGAL, OK_RESULT
from model.checkers.linearizable import LinVerdict, PartitionResult, describe_op, who
from reports.interactive import SVG_STYLE, fit_label, legend_html

MAX_DRAWN = 12  # sub-histories drawn when all are linearizable

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.2em; color: #222; }
h1 { font-size: 1.4em; } h3 { font-size: 0.95em; color: #555; margin: 0.8em 0 0.2em; }
h2 { font-size: 1.1em; border-bottom: 1px solid #ccc; margin-top: 1.4em; }
pre { background: #f6f6f6; padding: 0.6em; white-space: pre-wrap; font-size: 0.85em; }
svg g.op:hover rect { stroke: #000; stroke-width: 2; }
.scroll { overflow-x: auto; }
""" + SVG_STYLE

# a wide timeline opens scrolled to show the first operation that cannot be placed
SCROLL = ("for (const d of document.querySelectorAll('.whole')) { "
          "const b = d.querySelector('g.blocked rect'); if (!b) continue; "
          "const right = b.x.baseVal.value + b.width.baseVal.value + 40; "
          "if (right > d.clientWidth) d.scrollLeft = right - d.clientWidth / 2; }")
COLOURS = {"linearized": "#9be3a9", "blocked": "#ef7b7b", "setter": "#ffc36b", "other": "#e2e2e2"}
ROW, BAR, LEFT, TOP = 30, 20, 90, 24


def _points(order: Sequence[Operation], rank: Callable[[float], int]) -> dict[int, float]:
    """A linearization point per ordered operation: the earliest rank not before its call nor the
    previous point (inside its interval, as the order respects real time)."""
    pts: dict[int, float] = {}
    prev = -math.inf
    for op in order:
        p = max(float(rank(op.call)), prev)
        pts[op.index] = p
        prev = p
    return pts


def _window(part: PartitionResult, rank: dict[float, int], end_rank: int) -> tuple[float, float] | None:
    """The ranks around the conflict: from the state-setting operations to the blocked ones."""
    if part.result != ILLEGAL or not part.blocked:
        return None
    ops = [b.op for b in part.blocked] + list(part.setters[-2:])
    lo = min(rank[op.call] for op in ops)
    hi = max(rank[op.call] if math.isinf(op.ret) else rank[op.ret] for op in ops)
    return max(0, lo - 3), min(end_rank, hi + 3)


def _zooms(part: PartitionResult) -> bool:
    """True when the window around the conflict leaves out much of the sub-history."""
    times = sorted({op.call for op in part.ops} | {op.ret for op in part.ops if not math.isinf(op.ret)})
    window = _window(part, {t: i for i, t in enumerate(times)}, len(times))
    return window is not None and window[1] - window[0] < 0.6 * len(times)


def _partition_svg(verdict: LinVerdict, part: PartitionResult, locate: Callable[[Operation], str] | None,
                   zoom: bool = False) -> str:
    model = verdict.model
    times = sorted({op.call for op in part.ops} | {op.ret for op in part.ops if not math.isinf(op.ret)})
    rank = {t: i for i, t in enumerate(times)}
    end_rank = len(times)

    def rank_ret(op: Operation) -> int:
        return end_rank if math.isinf(op.ret) else rank[op.ret]

    window = _window(part, rank, end_rank) if zoom else None
    lo, hi = window if window is not None else (0, end_rank)
    ops = [op for op in part.ops if rank[op.call] <= hi and rank_ret(op) >= lo]
    step = max(14.0, min(90.0, 1100.0 / max(1.0, hi - lo + 1)))

    def x(r: float) -> float:
        return LEFT + 10 + (r - lo) * step

    procs: list[object] = []
    for op in sorted(ops, key=lambda o: (o.call, o.index)):
        if op.process not in procs:
            procs.append(op.process)
    row = {p: i for i, p in enumerate(procs)}
    pos = {op.index: i + 1 for i, op in enumerate(part.order)}
    blocked = {b.op.index: b.reason for b in part.blocked}
    setter = part.setters[-1].index if part.result == ILLEGAL and part.setters else None
    points = _points(part.order, lambda t: rank[t])
    width = x(hi + 1) + 20
    height = TOP + len(procs) * ROW + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'viewBox="0 0 {width:.0f} {height}">']
    for p, i in row.items():
        y = TOP + i * ROW
        out.append(f'<text x="4" y="{y + BAR / 2 + 4:.0f}">{escape(who(p))[:12]}</text>'
                   f'<line x1="{LEFT}" y1="{y + BAR / 2:.0f}" x2="{width - 10:.0f}" y2="{y + BAR / 2:.0f}" '
                   f'stroke="#f0f0f0"/>')
    for op in ops:
        y = TOP + row[op.process] * ROW
        x0 = x(max(rank[op.call], lo - 0.4))
        x1 = max(x(min(rank_ret(op), hi + 0.4)), x0 + 6)
        if op.index in blocked:
            kind = "blocked"
        elif op.index == setter:
            kind = "setter"
        elif op.index in pos:
            kind = "linearized"
        else:
            kind = "other"
        tip = [describe_op(model, op), f"interval {op.interval()}", f"status {op.status}"]
        if locate is not None:
            tip.append(locate(op))
        if op.index in pos:
            what = "linearization" if part.result == OK_RESULT else "longest prefix"
            tip.append(f"#{pos[op.index]} in the {what}")
        if op.index in blocked:
            tip.append(f"cannot be placed after the prefix: {blocked[op.index]}")
        if op.index == setter:
            tip.append(f"made the state the blocked operations meet ({part.state})")
        dash = ' stroke-dasharray="4 3"' if op.status == INFO else ""
        stroke = "#b00" if kind == "blocked" else "#555"
        text = escape(fit_label(model.describe_operation(op.input, op.output), x1 - x0))
        out.append(f'<g class="op {kind}"><title>{escape(chr(10).join(tip))}</title>'
                   f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="{BAR}" rx="3" '
                   f'fill="{COLOURS[kind]}" stroke="{stroke}"{dash}/>'
                   f'<text x="{x0 + 3:.1f}" y="{y + BAR / 2 + 4:.0f}">{text}</text></g>')
    # the order of the (partial) linearization, at feasible points
    stacked: dict[float, int] = {}
    for op in part.order:
        px = points[op.index]
        if op.process not in row or not lo <= px <= hi:
            continue
        k = stacked.get(px, 0)
        stacked[px] = k + 1
        cx = x(px) + 3 + 5 * k
        cy = TOP + row[op.process] * ROW - 3
        out.append(f'<g class="point"><title>#{pos[op.index]}: {escape(describe_op(model, op))}</title>'
                   f'<circle cx="{cx:.1f}" cy="{cy}" r="3" fill="#1b7a32"/>'
                   f'<text x="{cx + 4:.1f}" y="{cy + 1}" fill="#1b7a32">{pos[op.index]}</text></g>')
    out.append("</svg>")
    return "".join(out)


def render_timeline(verdict: LinVerdict, title: str, locate: Callable[[Operation], str] | None = None) -> str:
    """The whole page (no external resources).  ``locate`` names where an operation came from (e.g. its
    lines in the history file) for the tooltips."""
    parts = [p for p in verdict.partitions if p.result != OK_RESULT] or list(verdict.partitions[:MAX_DRAWN])
    legend = legend_html([(COLOURS[k], v) for k, v in (
        ("linearized", "linearized (order number at a feasible point)"),
        ("blocked", "cannot be placed after the longest prefix"),
        ("setter", "made the state that blocks them"),
        ("other", "not placed"))])
    sections = []
    for p in parts:
        head = f"{p.name}: {p.result} ({len(p.ops)} operations"
        head += f", longest prefix {len(p.order)})" if p.result != OK_RESULT else ")"
        sentence = p.sentence(verdict.model)
        html = f"<h2>{escape(head)}</h2>" + (f"<p>{escape(sentence)}</p>" if sentence else "")
        if p.result == ILLEGAL and p.blocked and _zooms(p):
            zoomed = _partition_svg(verdict, p, locate, zoom=True)
            html += (f'<h3>around the conflict</h3><div class="scroll">{zoomed}</div>'
                     "<h3>whole sub-history</h3>")
        sections.append(html + f'<div class="scroll whole">{_partition_svg(verdict, p, locate)}</div>')
    hidden = len(verdict.partitions) - len(parts)
    note = f"<p>{hidden} more linearizable sub-histories not drawn.</p>" if hidden > 0 else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body><h1>{escape(title)}</h1>\n"
            f"<pre>{escape(verdict.text(locate))}</pre>\n{legend}\n"
            + "\n".join(sections) + f"\n{note}<script>{SCROLL}</script></body></html>\n")
