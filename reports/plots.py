"""matplotlib figures of a run, rendered to PNG bytes (Agg backend, no display needed)."""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from reports.lock_holders import Fault, Hold, Lease  # noqa: E402

FAULT_COLOURS = {"pause": "#7f7f7f", "crash": "#8c564b", "cutoff": "#9467bd", "writer-death": "#d62728"}
LEASE_COLOUR = "#aec7e8"
HOLD_COLOUR = "#1f77b4"
FOCUS_COLOUR = "#ff7f0e"
OVERLAP_COLOUR = "#d62728"


TIME_AXIS = "true time (ms since start)"


def _ms_ticks(ax: Axes) -> None:
    """Label the x axis, drawn in seconds, in ms: the unit of every time in the report's text and tables
    (``reports/times.py``); matplotlib still places its ticks at round seconds."""
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x * 1000:.0f}"))


def png(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _shade_faults(ax: Axes, faults: Sequence[Fault], lo: float, hi: float) -> None:
    for f in faults:
        if f.end < lo or f.start > hi:
            continue
        colour = FAULT_COLOURS.get(f.kind, "#7f7f7f")
        if f.start == f.end:
            ax.axvline(f.start / 1000, color=colour, linestyle=":", linewidth=1.2)
        else:
            ax.axvspan(f.start / 1000, f.end / 1000, color=colour, alpha=0.15, linewidth=0)


def timeline(lanes: Sequence[str], holds: Sequence[Hold], leases: Sequence[Lease], faults: Sequence[Fault],
             overlaps: Sequence[tuple[int, int]], window: tuple[int, int], title: str,
             focus_owners: dict[str, str] | None = None, marks: Sequence[tuple[int, str]] = ()) -> bytes:
    """Lock-holder timeline: one lane per writer with its store leases (thin, light) and the intervals it
    believed it held the lock (thick); fault windows shaded on their lane; overlaps in red.

    ``focus_owners`` maps owner ids to labels drawn on their holds; ``marks`` are (time, label) points
    such as stale writes, drawn as red ticks.
    """
    lo, hi = window
    focus_owners = focus_owners or {}
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.75 * len(lanes)))
    y = {lane: i for i, lane in enumerate(lanes)}
    for f in faults:
        if f.node in y and f.end >= lo and f.start <= hi:
            colour = FAULT_COLOURS.get(f.kind, "#7f7f7f")
            if f.start == f.end:
                ax.plot([f.start / 1000], [y[f.node]], marker="X", color=colour, markersize=10)
            else:
                ax.broken_barh([(f.start / 1000, (f.end - f.start) / 1000)], (y[f.node] - 0.45, 0.9),
                               facecolors=colour, alpha=0.25, hatch="//", edgecolor=colour, linewidth=0)
    if overlaps:
        ax.broken_barh([(s / 1000, max(e - s, 1) / 1000) for s, e in overlaps], (-0.6, len(lanes) + 0.5),
                       facecolors=OVERLAP_COLOUR, alpha=0.35, linewidth=0)
    # One collection per lane and style: hundreds of separate bars make matplotlib crawl.
    lease_bars: dict[str, list[tuple[float, float]]] = {}
    for lease in leases:
        if lease.node in y and lease.end >= lo and lease.start <= hi:
            lease_bars.setdefault(lease.node, []).append(
                (lease.start / 1000, max(lease.end - lease.start, 1) / 1000))
    hold_bars: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for h in holds:
        if h.node not in y or h.end < lo or h.start > hi:
            continue
        focus = h.owner in focus_owners
        hold_bars.setdefault((h.node, focus), []).append((h.start / 1000, max(h.end - h.start, 1) / 1000))
        if focus:
            ax.text(max(h.start, lo) / 1000, y[h.node] + 0.4, focus_owners[h.owner], fontsize=8,
                    va="bottom", ha="left", clip_on=True)
    for node, bars in lease_bars.items():
        ax.broken_barh(bars, (y[node] - 0.38, 0.22), facecolors=LEASE_COLOUR, edgecolor="none")
    for (node, focus), bars in hold_bars.items():
        ax.broken_barh(bars, (y[node] - 0.1, 0.45), facecolors=FOCUS_COLOUR if focus else HOLD_COLOUR,
                       edgecolor="black", linewidth=0.3)
    labelled: list[str] = []
    for t, label in marks:
        ax.axvline(t / 1000, color=OVERLAP_COLOUR, linewidth=1.5)
        if label not in labelled:  # one label per kind, stacked, so labels at one instant stay legible
            ax.text(t / 1000, len(lanes) - 0.35 + 0.3 * len(labelled), f" {label}", color=OVERLAP_COLOUR,
                    fontsize=8, ha="left", va="bottom", clip_on=True)
            labelled.append(label)
    pad = max((hi - lo) * 0.02, 50)
    ax.set_xlim((lo - pad) / 1000, (hi + pad) / 1000)
    ax.set_ylim(-0.6, len(lanes) - 0.4 + 0.3 * len({m[1] for m in marks}) + (0.1 if marks else 0))
    ax.set_yticks(range(len(lanes)), list(lanes))
    ax.invert_yaxis()
    ax.set_xlabel(TIME_AXIS)
    _ms_ticks(ax)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    legend: list[Artist] = [Patch(facecolor=HOLD_COLOUR, label="writer believes it holds the lock"),
              Patch(facecolor=LEASE_COLOUR, label="lock file names it (store)"),
              Patch(facecolor=OVERLAP_COLOUR, alpha=0.35, label="overlap (two holders)")]
    if focus_owners:
        legend.insert(1, Patch(facecolor=FOCUS_COLOUR, label="owners of this violation"))
    if marks:
        legend.append(Line2D([], [], color=OVERLAP_COLOUR, label="stale write / lost update (store)"))
    kinds = sorted({f.kind for f in faults if f.end >= lo and f.start <= hi})
    legend += [Patch(facecolor=FAULT_COLOURS.get(k, "#7f7f7f"), alpha=0.3, hatch="//", label=k)
               for k in kinds]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.1 / max(len(lanes), 1)),
              ncol=min(len(legend), 4), fontsize=8, frameon=False)
    return png(fig)


def latency_cdf(samples: dict[str, list[int]]) -> bytes:
    """Empirical CDF of acquire latency per writer, with p50/p90/p99 guides."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for writer, values in sorted(samples.items()):
        if values:
            ax.ecdf([v / 1000 for v in values], label=f"{writer} (n={len(values)})")
    for q in (0.5, 0.9, 0.99):
        ax.axhline(q, color="grey", linewidth=0.6, linestyle="--")
        ax.text(0, q, f"p{round(q * 100)}", fontsize=7, color="grey", va="bottom")
    ax.set_xlabel("acquire latency (ms, simulated time)")
    _ms_ticks(ax)
    ax.set_ylabel("fraction of acquisitions")
    ax.set_title("Acquire latency distribution per writer", fontsize=10)
    ax.grid(alpha=0.3)
    if samples:
        ax.legend(fontsize=8)
    return png(fig)


def throughput(rates: pd.DataFrame, faults: Sequence[Fault]) -> bytes:
    """Applied writes per simulated second per writer over time, fault windows shaded."""
    fig, ax = plt.subplots(figsize=(10, 3.4))
    if not rates.empty:
        rates.plot.area(ax=ax, stacked=True, linewidth=0.5, alpha=0.8)
    lo, hi = (0.0, 1.0) if rates.empty else (0.0, float(rates.index.max()) * 1000 * 1.01)
    _shade_faults(ax, faults, lo, hi)
    kinds = sorted({f"{f.kind} {f.node}" for f in faults})
    handles, labels = ax.get_legend_handles_labels()
    handles += [Patch(facecolor="#7f7f7f", alpha=0.3, label=k) for k in kinds]
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    ax.set_xlabel(TIME_AXIS)
    _ms_ticks(ax)
    ax.set_ylabel("writes / s")
    ax.set_title("Throughput (applied register writes), fault windows shaded", fontsize=10)
    ax.grid(alpha=0.3)
    return png(fig)


def per_acquisition(table: pd.DataFrame) -> bytes:
    """Grouped bars: retries, 412s, unknown outcomes and conflicts per acquisition, per writer."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    # a writer with no acquisition has None ratios: the column is object-typed until made numeric
    table.drop(columns=["acquisitions"]).apply(pd.to_numeric).fillna(0).plot.bar(ax=ax, rot=0)
    ax.set_ylabel("per acquisition")
    ax.set_title("Retries, precondition failures (412), unknown outcomes, conflicts", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return png(fig)


def fairness(acquisitions: dict[str, int], jain: float | None) -> bytes:
    """Acquisitions per writer, with Jain's fairness index in the title."""
    fig, ax = plt.subplots(figsize=(6, 3))
    pd.Series(acquisitions, dtype="int64").plot.bar(ax=ax, rot=0, color=HOLD_COLOUR)
    ax.set_ylabel("acquisitions")
    ax.set_title(f"Acquisitions per writer (Jain fairness {jain:.3f})" if jain is not None
                 else "Acquisitions per writer (no acquisitions)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return png(fig)


def heatmap(rates: pd.DataFrame, x: str, y: str, title: str) -> bytes:
    """Violation rate over two settings (``rates``: index = y values, columns = x values)."""
    size = (1.6 + 1.1 * max(len(rates.columns), 2), 1.4 + 0.6 * max(len(rates.index), 2))
    fig, ax = plt.subplots(figsize=size)
    im = ax.imshow(rates.to_numpy(dtype=float), cmap="Reds", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(rates.columns)), [str(c) for c in rates.columns], rotation=30, ha="right")
    ax.set_yticks(range(len(rates.index)), [str(i) for i in rates.index])
    for (i, j), value in pd.DataFrame(rates.to_numpy()).stack().items():
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                color="white" if value > 0.6 else "black")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label="violation rate")
    return png(fig)


def bars(lanes: Sequence[str], bars: Sequence[tuple[str, float, float, str]], window: tuple[int, int],
         title: str, legend: Sequence[tuple[str, str]] = (),
         xlabel: str = TIME_AXIS) -> bytes:
    """A static timeline: (lane, start ms, end ms, colour) bars on one row per lane (the PNG twin of an
    interactive timeline, for the Markdown report)."""
    lo, hi = window
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.4 * len(lanes)))
    y = {lane: i for i, lane in enumerate(lanes)}
    by_style: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for lane, start, end, colour in bars:
        if lane in y:
            width = max(end - start, (hi - lo) / 800)  # a point stays visible
            by_style.setdefault((lane, colour), []).append((start / 1000, width / 1000))
    # the widest first: a short bar on a lane (an instant that completed) stays visible over a long one
    # (one never completed, drawn to the end)
    for (lane, colour), spans in sorted(by_style.items(), key=lambda kv: -max(w for _, w in kv[1])):
        ax.broken_barh(spans, (y[lane] - 0.35, 0.7), facecolors=colour, edgecolor="#555", linewidth=0.3)
    ax.set_xlim(lo / 1000, max(hi, lo + 1) / 1000)
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    ax.set_yticks(range(len(lanes)), list(lanes))
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    _ms_ticks(ax)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    if legend:
        ax.legend(handles=[Patch(facecolor=c, edgecolor="#555", label=t) for c, t in legend],
                  loc="upper center", bbox_to_anchor=(0.5, -0.35 - 0.5 / max(len(lanes), 1)), ncol=3,
                  fontsize=8, frameon=False)
    return png(fig)


def cumulative(points: Sequence[tuple[str, str, int]], end: int) -> bytes:
    """Step lines of running counts over time: one per (writer, outcome) from (writer, outcome, ms) points."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    series: dict[tuple[str, str], list[int]] = {}
    for writer, outcome, t in sorted(points, key=lambda p: p[2]):
        series.setdefault((writer, outcome), []).append(t)
    styles = {"committed": "-", "conflict": "--", "aborted": ":", "unknown": "-."}
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    writers = sorted({w for w, _ in series})
    for (writer, outcome), times in sorted(series.items()):
        xs = [0.0] + [t / 1000 for t in times] + [end / 1000]
        ys = [0] + list(range(1, len(times) + 1)) + [len(times)]
        ax.step(xs, ys, where="post", linestyle=styles.get(outcome, "-"),
                color=colours[writers.index(writer) % len(colours)], label=f"{writer} {outcome}")
    ax.set_xlabel(TIME_AXIS)
    _ms_ticks(ax)
    ax.set_ylabel("operations (cumulative)")
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=8, ncol=2)
    return png(fig)
