"""Interactive SVG timelines for the self-contained HTML reports: lanes of bars that zoom and show
an event's details on hover (as Porcupine's visualiser does), with no external resource.

One lane per writer (or node); each :class:`Item` is a bar from ``start`` to ``end`` (a point when
they are equal) whose fields appear in a tooltip when the pointer is over it.  The page draws
the whole window at first (readable with scripts off); the inline script then zooms with the
mouse wheel or the + / - buttons around the pointer (or the centre), pans by dragging, and
"reset" returns to the whole window.  Bars keep their data times (``data-s``/``data-e``) and are
laid out again at each zoom, so text and bar heights never stretch.

Shared with :mod:`reports.linearizability` (the ``hcc check-history`` page): the legend, the
label fitting and the SVG text style.

For headless browsers (tests), the page obeys ``#hover=ID`` (hover the element with that id)
and ``#click=ID1,ID2`` (click those elements, e.g. a zoom button) in its address.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

# The SVG look shared by every timeline page and section.
SVG_STYLE = """
.legend span { display: inline-block; margin-right: 1.2em; font-size: 0.85em; }
.legend i { display: inline-block; width: 1.2em; height: 0.8em; margin-right: 0.3em; vertical-align: middle;
  border: 1px solid #555; }
svg text { font-size: 11px; font-family: ui-monospace, monospace; }
"""

STYLE = SVG_STYLE + """
.itl { margin: 0.5em 0 1.2em; } .itl svg { display: block; border: 1px solid #eee; cursor: grab; }
.itl svg g.ev:hover rect, .itl svg g.ev.hover rect { stroke: #000; stroke-width: 2; }
.itl .bar { font-size: 0.8em; margin: 0.2em 0; } .itl .bar button { font-size: 0.85em; margin-right: 0.3em; }
.itl .bar .win { color: #555; margin-left: 0.6em; }
.hcc-tip { position: absolute; display: none; background: #fffbe6; border: 1px solid #999; padding: 4px 6px;
  font: 12px ui-monospace, monospace; white-space: pre; pointer-events: none; z-index: 10;
  box-shadow: 1px 1px 4px rgba(0,0,0,0.25); max-width: 60em; overflow: hidden; }
"""

WIDTH, LEFT, RIGHT, TOP, ROW, BAR, AXIS = 1100, 120, 12, 8, 30, 20, 26


@dataclass(frozen=True)
class Item:
    """One bar on a lane: ``kind`` picks its colour (and CSS class); ``fields`` are its hover details;
    ``size`` is its height as a fraction of a full bar (a thin lease under a thick hold)."""

    lane: str
    start: float
    end: float
    kind: str
    label: str = ""
    fields: tuple[tuple[str, object], ...] = ()
    size: float = 1.0
    dashed: bool = False
    ident: str | None = None  # an element id (for links and tests); ``UID-eN`` when None


def legend_html(entries: Sequence[tuple[str, str]]) -> str:
    """A legend: (colour, text) pairs as swatches."""
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{c}"></i>{escape(t)}</span>' for c, t in entries) + "</div>"


def fit_label(label: str, width: float) -> str:
    """``label`` cut (with an ellipsis) to what fits ``width`` pixels of 11 px monospace; "" when nothing
    useful fits."""
    room = int((width - 6) / 6.6)
    return label if len(label) <= room else (label[:room - 1] + "…" if room > 3 else "")


def tip_text(fields: Sequence[tuple[str, object]]) -> str:
    """The tooltip text of an item: one ``name: value`` line per field."""
    return "\n".join(f"{k}: {v}" for k, v in fields)


def timeline_html(uid: str, lanes: Sequence[str], items: Sequence[Item], colours: Mapping[str, str],
                  window: tuple[float, float], unit: str = "ms",
                  legend: Sequence[tuple[str, str]] = (), stroke: Mapping[str, str] | None = None) -> str:
    """An interactive timeline as an HTML fragment (a toolbar, the SVG and its script).

    ``uid`` is the element id of the figure (unique in the page; the buttons are ``UID-in``,
    ``UID-out``, ``UID-reset``); ``colours`` maps each item kind to its fill, ``stroke`` optionally to
    its outline (grey else); ``window`` is the (start, end) shown first and on reset; ``unit`` names
    the axis.
    """
    stroke = stroke or {}
    lo, hi = window
    if hi <= lo:
        hi = lo + 1
    inner = WIDTH - LEFT - RIGHT

    def x(t: float) -> float:
        return LEFT + (t - lo) / (hi - lo) * inner

    row = {lane: i for i, lane in enumerate(lanes)}
    height = TOP + len(lanes) * ROW + AXIS
    out = [f'<div class="itl" id="{uid}" data-lo="{lo}" data-hi="{hi}" data-unit="{escape(unit)}">',
           f'<div class="bar"><button type="button" id="{uid}-in">+ zoom in</button>'
           f'<button type="button" id="{uid}-out">- zoom out</button>'
           f'<button type="button" id="{uid}-reset">reset</button>'
           f'<span class="win"></span> (wheel: zoom, drag: pan, hover: details)</div>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}"><defs><clipPath id="{uid}-clip"><rect x="{LEFT}" y="0" '
           f'width="{inner}" height="{height}"/></clipPath></defs>']
    for lane, i in row.items():
        y = TOP + i * ROW + BAR / 2
        out.append(f'<text x="4" y="{y + 4:.0f}">{escape(fit_label(lane, LEFT - 4))}</text>'
                   f'<line x1="{LEFT}" y1="{y:.0f}" x2="{WIDTH - RIGHT}" y2="{y:.0f}" stroke="#f0f0f0"/>')
    out.append(f'<g class="axis" transform="translate(0,{TOP + len(lanes) * ROW})"></g>'
               f'<g clip-path="url(#{uid}-clip)">')
    order = sorted(range(len(items)), key=lambda n: (-items[n].size, items[n].start, n))
    for n in order:  # thin bars drawn over thick ones
        it = items[n]
        if it.lane not in row:
            continue
        h = max(4.0, BAR * it.size)
        y = TOP + row[it.lane] * ROW + (BAR - h) / 2
        x0, x1 = x(it.start), x(it.end)
        w = max(x1 - x0, 3.0)
        ident = it.ident or f"{uid}-e{n}"
        dash = ' stroke-dasharray="4 3"' if it.dashed else ""
        text = escape(fit_label(it.label, w)) if it.label else ""
        out.append(f'<g class="ev {escape(it.kind)}" id="{escape(ident)}" data-s="{it.start}" '
                   f'data-e="{it.end}" data-tip="{escape(tip_text(it.fields))}">'
                   f'<rect x="{x0:.1f}" y="{y:.1f}" width="{w:.1f}" '
                   f'height="{h:.1f}" rx="2" fill="{colours.get(it.kind, "#ccc")}" '
                   f'stroke="{stroke.get(it.kind, "#555")}"{dash}/>'
                   + (f'<text x="{x0 + 3:.1f}" y="{y + h / 2 + 4:.1f}" data-label="{escape(it.label)}">'
                      f"{text}</text>" if it.label else "") + "</g>")
    out.append("</g></svg></div>")
    head = legend_html(legend) if legend else ""
    return head + "".join(out) + f"<script>hccTimeline({_js_str(uid)});</script>"


def _js_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


# One copy per page (the HTML renderer puts it in <head>): lays bars out for a window, zooms, pans,
# shows the tooltip, and obeys #hover= / #click= in the address.
SCRIPT = """
(function () {
  const W = @W@, LEFT = @LEFT@, RIGHT = @RIGHT@, INNER = W - LEFT - RIGHT;
  let tip = null;
  function showTip(g, cx, cy) {
    if (!tip) {
      tip = document.createElement('div'); tip.className = 'hcc-tip'; document.body.appendChild(tip);
    }
    tip.textContent = g.getAttribute('data-tip') || '';
    tip.style.display = 'block';
    place(cx, cy);
    g.classList.add('hover');
  }
  function place(cx, cy) {
    tip.style.left = (Math.max(0, Math.min(cx + 14, window.innerWidth - 420)) + window.scrollX) + 'px';
    tip.style.top = (cy + 14 + window.scrollY) + 'px';
  }
  function hideTip(g) { if (tip) tip.style.display = 'none'; if (g) g.classList.remove('hover'); }
  function step(span) {
    const raw = Math.max(span / 8, 1e-9), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  function fmt(v) { return Math.abs(v) >= 1e15 ? v.toFixed(0) : (+v.toFixed(3)).toString(); }
  window.hccTimeline = function (id) {
    const root = document.getElementById(id), svg = root.querySelector('svg');
    const NS = 'http://www.w3.org/2000/svg';
    const lo0 = +root.dataset.lo, hi0 = +root.dataset.hi, unit = root.dataset.unit;
    let lo = lo0, hi = hi0;
    const axis = svg.querySelector('g.axis'), label = root.querySelector('.win');
    function x(t) { return LEFT + (t - lo) / (hi - lo) * INNER; }
    function layout() {
      for (const g of svg.querySelectorAll('g.ev')) {
        const r = g.querySelector('rect'), s = +g.dataset.s, e = +g.dataset.e;
        const x0 = x(s), w = Math.max(x(e) - x0, 3);
        r.setAttribute('x', x0.toFixed(1)); r.setAttribute('width', w.toFixed(1));
        const t = g.querySelector('text');
        if (t) {
          const full = t.dataset.label, room = Math.floor((w - 6) / 6.6);
          t.setAttribute('x', (x0 + 3).toFixed(1));
          t.textContent = full.length <= room ? full : (room > 3 ? full.slice(0, room - 1) + '\\u2026' : '');
        }
      }
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      const st = step(hi - lo);
      for (let v = Math.ceil(lo / st) * st; v <= hi; v += st) {
        const l = document.createElementNS(NS, 'line'), tx = document.createElementNS(NS, 'text');
        l.setAttribute('x1', x(v)); l.setAttribute('x2', x(v));
        l.setAttribute('y1', 0); l.setAttribute('y2', 5);
        l.setAttribute('stroke', '#888');
        tx.setAttribute('x', x(v) - 10); tx.setAttribute('y', 17); tx.textContent = fmt(v);
        axis.appendChild(l); axis.appendChild(tx);
      }
      label.textContent = 'showing [' + fmt(lo) + ', ' + fmt(hi) + '] ' + unit;
    }
    function zoom(f, at) {
      const c = at === undefined ? (lo + hi) / 2 : at, span = Math.max((hi - lo) * f, 1e-3);
      lo = c - (c - lo) * span / (hi - lo); hi = lo + span; layout();
    }
    function timeAt(clientX) {
      const b = svg.getBoundingClientRect();
      return lo + (clientX - b.left - LEFT) / INNER * (hi - lo);
    }
    root.querySelector('#' + id + '-in').addEventListener('click', () => zoom(0.5));
    root.querySelector('#' + id + '-out').addEventListener('click', () => zoom(2));
    root.querySelector('#' + id + '-reset').addEventListener('click', () => {
      lo = lo0; hi = hi0; layout();
    });
    svg.addEventListener('wheel', (ev) => {
      ev.preventDefault(); zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(ev.clientX));
    }, {passive: false});
    let drag = null;
    svg.addEventListener('mousedown', (ev) => { drag = {x: ev.clientX, lo: lo, hi: hi}; });
    window.addEventListener('mouseup', () => { drag = null; });
    svg.addEventListener('mousemove', (ev) => {
      if (drag) {
        const d = (ev.clientX - drag.x) / INNER * (drag.hi - drag.lo);
        lo = drag.lo - d; hi = drag.hi - d; layout();
      } else if (tip && tip.style.display === 'block') {
        place(ev.clientX, ev.clientY);
      }
    });
    for (const g of svg.querySelectorAll('g.ev')) {
      g.addEventListener('mouseover', (ev) => showTip(g, ev.clientX, ev.clientY));
      g.addEventListener('mouseout', () => hideTip(g));
    }
    layout();
  };
  window.addEventListener('load', () => {
    const h = decodeURIComponent(location.hash.slice(1));
    for (const part of h.split('&')) {
      const [k, v] = part.split('=');
      if (k === 'click') for (const id of v.split(',')) document.getElementById(id).click();
      if (k === 'hover') {
        const el = document.getElementById(v), c = el.getBoundingClientRect();
        el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true, clientX: c.left + c.width / 2,
                                                      clientY: c.top + c.height / 2}));
      }
    }
  });
})();
""".replace("@W@", str(WIDTH)).replace("@LEFT@", str(LEFT)).replace("@RIGHT@", str(RIGHT))
