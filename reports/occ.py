"""The report of a timeline run under optimistic concurrency control (``hcc timeline run``).

What it shows: commits, conflicts and aborts per writer over time; the timeline of instants
(per writer, each instant a bar from its ``.requested`` file to its completed file in the store,
true time) with the time-order violations (duplicate or backward instant times, completions out of
order) and lost updates highlighted; the time generations per writer; the verdict's violations
with the events that prove them.

The derivations (:func:`instant_spans`, :func:`generations`, :func:`outcomes`,
:func:`lost_updates`) are pure functions over the history: the store's ``object`` events (every
table file written, with its body) and the writers' ``op`` and ``time`` events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from model.run_format import ViolationEntry
from model.runtime.history import Event
from model.timeline.config import TIMELINE_CHECKERS
from model.timeline.layout import format_instant
from reports import interactive, plots, tables
from reports.document import MAX_ROWS, Report, Section
from reports.instants import (
    Generation,
    InstantSpan,
    fmt_instant,
    generations,
    instant_spans,
    op_text,
    rel_ms,
    span_item,
)
from reports.interactive import Item
from reports.load import RunData
from reports.times import NOTE, TIME, instant_text, run_epoch, value_text

# Violation kinds about the order of times, and the checker that finds each kind.
CHECKER_OF = {
    "duplicate-time": "unique-times",
    "time-not-increasing": "monotonic-times",
    "completion-order": "completion-order",
    "completed-before-requested": "completion-order",
    "completed-instant-changed": "completed-immutable",
    "consistent-read": "consistent-read",
    "duplicate-key": "duplicate-key",
    "requested-out-of-order": "requested-order",
}
TIME_ORDER = ("duplicate-time", "time-not-increasing", "completion-order", "completed-before-requested")
COLOURS = {
    "committed": "#9be3a9",
    "aborted": "#e2e2e2",
    "lost": "#ffc36b",
    "overwriter": "#c39bd3",
    "violated": "#ef7b7b",
    "generation": "#aec7e8",
    "generation-violated": "#ef7b7b",
}
STROKES = {"violated": "#b00", "generation-violated": "#b00", "lost": "#b35900", "overwriter": "#6c3483"}
LEGEND = [
    (COLOURS["committed"], "completed instant"),
    (COLOURS["aborted"], "never completed (aborted)"),
    (COLOURS["violated"], "cited by a violation (time order, read)"),
    (COLOURS["lost"], "lost update (its change is overwritten)"),
    (COLOURS["overwriter"], "the commit that overwrote it"),
    (COLOURS["generation"], "time generation (invoke to return)"),
]


def fg_name(fg: object) -> str:
    """A file group as the report names it: ``fg3`` (the specification's) or ``p0/<fileId>`` (Hudi's)."""
    return f"fg{fg}" if isinstance(fg, int) else str(fg)


@dataclass(frozen=True)
class Outcome:
    """How one operation of a writer ended."""

    writer: str
    time: int
    result: str  # committed, aborted (a conflict or another reason) or unknown
    reason: str
    index: int

    @property
    def conflict(self) -> bool:
        return "conflict" in self.reason


@dataclass(frozen=True)
class LostUpdate:
    """A completed instant whose change is not in the newer slice of its file group that ``by`` wrote:
    ``by`` merged an older slice (``by.merge``), so readers of the newer slice miss ``lost``."""

    lost: InstantSpan
    by: InstantSpan

    def sentence(self) -> str:
        op = self.lost.op or {}
        merged = "no slice" if self.by.merge is None else f"the slice of {fmt_instant(self.by.merge)}"
        return (
            f"{self.lost.writer}'s {op.get('kind', '?')} of {op.get('key', '?')} (instant "
            f"{fmt_instant(self.lost.instant)}, completed {fmt_instant(self.lost.completion)}) is lost: "
            f"{self.by.writer}'s commit {fmt_instant(self.by.instant)} (completed "
            f"{fmt_instant(self.by.completion)}) rewrote {fg_name(self.by.fg)} from {merged}, older than the "
            "lost instant, and its slice is newer, so every later read of the file group misses that change."
        )


def outcomes(events: Sequence[Event]) -> list[Outcome]:
    """The end of every operation (``op`` ok / fail / info), in time order."""
    out = []
    for e in events:
        if e.f != "op" or e.type == "invoke":
            continue
        v = e.value if isinstance(e.value, dict) else {}
        result = {"ok": "committed", "fail": "aborted"}.get(e.type, "unknown")
        out.append(Outcome(e.process, e.time, result, str(v.get("reason", "")), e.index))
    return out


MIN_OPS_FOR_CURVE = 10  # below this the per-writer table says all a cumulative plot would


def lost_updates(spans: Sequence[InstantSpan]) -> list[LostUpdate]:
    """Completed instants overwritten by a newer completed instant of the same file group that merged a
    slice older than them (so their change is missing from the newer slice).  An instant on the same key
    as the newer one is not counted: the newer value replaces it by design."""
    done = [s for s in spans if s.completed and s.fg is not None]
    out = []
    for by in done:
        base = by.merge or 0
        for lost in done:
            if (
                lost.fg == by.fg
                and base < lost.instant < by.instant
                and (lost.op or {}).get("key") != (by.op or {}).get("key")
            ):
                out.append(LostUpdate(lost, by))
    return out


def per_writer_table(outs: Sequence[Outcome]) -> pd.DataFrame:
    """Per writer: operations ended, committed, conflicts, other aborts, unknown, abort reasons."""
    rows = []
    for w in sorted({o.writer for o in outs}):
        mine = [o for o in outs if o.writer == w]
        reasons = Counter(o.reason for o in mine if o.result == "aborted")
        rows.append(
            {
                "writer": w,
                "ended": len(mine),
                "committed": sum(o.result == "committed" for o in mine),
                "conflicts": sum(o.result == "aborted" and o.conflict for o in mine),
                "other aborts": sum(o.result == "aborted" and not o.conflict for o in mine),
                "unknown": sum(o.result == "unknown" for o in mine),
                "abort reasons": ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["writer", "ended", "committed", "conflicts", "other aborts", "unknown", "abort reasons"],
    )


def _compact(e: Event, epoch: int) -> str:
    v = e.value
    if e.f == "object" and isinstance(v, dict):
        return f"writes {v.get('key')} ({v.get('size', '?')} bytes)"
    return value_text(v, epoch)[:200]


def violation_tables(violations: Sequence[ViolationEntry],
                     events: Sequence[Event]) -> list[tuple[str, pd.DataFrame]]:
    """The violations (the first ``MAX_ROWS``) and the events they cite, as two captioned tables."""
    shown = violations[:MAX_ROWS]
    table = pd.DataFrame([{"kind": v["kind"], "message": instant_text(v["message"]),
                           "events": ", ".join(map(str, v["events"]))} for v in shown])
    cited = sorted({i for v in shown for i in v["events"]})
    return [("Violations (each with the history events that prove it)", table),
            ("The events they cite", events_table(events, cited))]


def events_table(events: Sequence[Event], indices: Sequence[int]) -> pd.DataFrame:
    """The cited events, one row each; store writes by key and size (their bodies are large); times in ms
    since the run's start (``reports/times.py``)."""
    epoch = run_epoch(events)
    return pd.DataFrame(
        [
            {
                "index": e.index,
                TIME: e.time,
                "node": e.node,
                "process": e.process,
                "type": e.type,
                "f": e.f,
                "what": _compact(e, epoch),
            }
            for e in (events[i] for i in sorted(set(indices)))
        ]
    )


def checker_table(run: RunData) -> pd.DataFrame:
    """One row per timeline checker: whether it decides the verdict, and what it found."""
    deciding = list((run.scenario.get("timeline") or {}).get("checkers", TIMELINE_CHECKERS))
    found = Counter(CHECKER_OF.get(v["kind"], v["kind"]) for v in run.verdict["violations"])
    noted = Counter(CHECKER_OF.get(v["kind"], v["kind"]) for v in run.verdict["findings"])
    rows = []
    for name in dict.fromkeys([*TIMELINE_CHECKERS, *found, *noted]):
        decides = name in deciding
        n = found[name] + noted[name]
        rows.append(
            (
                name,
                "yes" if decides else "no (reported only)",
                ("violation" if decides else "finding") if n else "ok",
                n,
            )
        )
    return pd.DataFrame(rows, columns=["checker", "decides verdict", "result", "count"])


def _cites(violations: Sequence[ViolationEntry]) -> dict[int, list[ViolationEntry]]:
    out: dict[int, list[ViolationEntry]] = {}
    for v in violations:
        for i in v["events"]:
            out.setdefault(int(i), []).append(v)
    return out


def timeline_items(
    spans: Sequence[InstantSpan],
    gens: Sequence[Generation],
    violations: Sequence[ViolationEntry],
    lost: Sequence[LostUpdate],
    end: int,
) -> list[Item]:
    """The instant timeline as interactive items: per writer a lane of instants and one of generations."""
    cites = _cites(violations)
    lost_of = {u.lost.instant: u for u in lost}
    by_of: dict[int, list[LostUpdate]] = {}
    for u in lost:
        by_of.setdefault(u.by.instant, []).append(u)
    # a time-order violation cites the generation of an instant or completion time: mark that instant too
    gen_cites: dict[tuple[str, int], list[ViolationEntry]] = {}
    for g in gens:
        if g.instant.isdigit():
            named = gen_cites.setdefault((g.kind, int(g.instant)), [])
            named.extend(v for i in g.events for v in cites.get(i, []))
    items = []
    for s in spans:
        cited = [v for i in s.events for v in cites.get(i, [])] + gen_cites.get(("instant", s.instant), [])
        if s.completion is not None:
            cited += gen_cites.get(("completion", s.completion), [])
        kind = (
            "violated"
            if cited
            else "lost"
            if s.instant in lost_of
            else "overwriter"
            if s.instant in by_of
            else "committed"
            if s.completed
            else "aborted"
        )
        details: list[tuple[str, object]] = []
        if s.op:
            details.append(("operation", op_text(s.op)))
        if s.fg is not None:
            details += [("file group", fg_name(s.fg)), ("merged slice of", fmt_instant(s.merge))]
        if s.instant in lost_of:
            details.append(("LOST", f"overwritten by {fmt_instant(lost_of[s.instant].by.instant)}"))
        for u in by_of.get(s.instant, []):
            details.append(("overwrote", f"{fmt_instant(u.lost.instant)} ({u.lost.writer})"))
        lane = f"{s.writer} instants"
        items.append(span_item(s, lane, kind, rel_ms(s.instant), details, cited, end, "occ"))
    for g in gens:
        cited = [v for i in g.events for v in cites.get(i, [])]
        fields = [
            ("generated", f"{g.instant} ({g.kind})"),
            ("writer", g.writer),
            ("invoked at", f"{g.start} ms"),
            ("returned at", f"{g.end} ms"),
        ]
        fields += [("violation", f"{v['kind']}: {v['message']}") for v in cited]
        fields.append(("events", f"{g.events[0]}, {g.events[1]}"))
        items.append(
            Item(
                f"{g.writer} times",
                g.start,
                g.end,
                "generation-violated" if cited else "generation",
                "",
                tuple(fields),
                size=0.6,
                ident=f"occ-g{g.events[1]}",
            )
        )
    return items


INSTANTS_TEXT = ("Per writer, one lane of instants (a bar from its .requested file to its completed file in "
                 "the store; dashed: never completed) and one of time generations (invoke to return).")


def instant_timeline(uid: str, writers: Sequence[str], spans: Sequence[InstantSpan],
                     gens: Sequence[Generation], violations: Sequence[ViolationEntry],
                     lost: Sequence[LostUpdate], end: int, title: str) -> tuple[str, bytes]:
    """The instant timeline (per writer a lane of instants and one of time generations) from 0 to ``end``:
    the interactive HTML fragment (element ids prefixed ``uid``) and the static PNG titled ``title``."""
    lanes = [lane for w in writers for lane in (f"{w} instants", f"{w} times")]
    items = timeline_items(spans, gens, violations, lost, end)
    static = plots.bars(lanes, [(it.lane, it.start, it.end, COLOURS[it.kind]) for it in items], (0, end),
                        title, [(c, t) for c, t in LEGEND])
    fragment = interactive.timeline_html(uid, lanes, items, COLOURS, (0, end), "ms since start (true time)",
                                         LEGEND, STROKES)
    return fragment, static


@dataclass(frozen=True)
class OccRun:
    """What every section of an OCC report derives from the run (once, for all of them)."""

    run: RunData
    layout: str
    spans: list[InstantSpan]
    gens: list[Generation]
    outs: list[Outcome]
    lost: list[LostUpdate]
    violations: list[ViolationEntry]
    time_order: list[ViolationEntry]
    end: int  # the last thing a writer or the store did, + 1 (the run's nominal end can be far later)
    writers: list[str]

    @classmethod
    def of(cls, run: RunData) -> OccRun:
        """The derivations of ``run``'s history."""
        events = run.events
        tl = run.scenario.get("timeline") or {}
        base = str((run.scenario.get("lock") or {}).get("base_path", "table"))
        layout = str(tl.get("layout", "v8"))
        spans = instant_spans(events, base, layout)
        gens = generations(events)
        outs = outcomes(events)
        violations = run.verdict["violations"]
        time_order = [v for v in violations + run.verdict["findings"] if v["kind"] in TIME_ORDER]
        end = max([e.time for e in events if e.process != "nemesis"] or [events[-1].time]) + 1
        writers = sorted({s.writer for s in spans} | {g.writer for g in gens} | {o.writer for o in outs})
        return cls(run, layout, spans, gens, outs, lost_updates(spans), violations, time_order, end, writers)

    @property
    def matches(self) -> bool:
        return self.run.outcome == self.run.expect


def _head_section(o: OccRun) -> Section:
    """The run: scenario, variant, verdict, counts, whose writers; the checkers and the settings."""
    run, tl = o.run, o.run.scenario.get("timeline") or {}
    head = Section(
        "Run",
        [
            f"Timeline scenario {run.name} (variant {tl.get('variant', 'vanlightly-v5')}, "
            f"cc = {tl.get('cc', '?')}, time generator {tl.get('time_generator', '?')}, layout {o.layout}), "
            f"seed {run.seed}: "
            f"verdict {run.outcome}, "
            f"expected {run.expect} ({'as expected' if o.matches else 'NOT as expected'}).",
            *([str(run.scenario["description"])] if run.scenario.get("description") else []),
            f"{len(o.spans)} instants ({sum(s.completed for s in o.spans)} completed) by {len(o.writers)} "
            f"writers; {len(o.violations)} violation(s), {len(o.time_order)} about the order of times, "
            f"{len(o.lost)} lost update(s) of stored objects (the harness's lost-update checker: a commit's "
            f"change overwritten in the store; Elle's lost update, in the isolation section, is about a "
            f"record's reads and writes); {len(run.verdict['findings'])} finding(s). Times on the axes are "
            f"simulated true time (ms). {NOTE}",
            "The writers are this harness's sans-I/O models "
            "(model/timeline/hudi_writer.py for Hudi's commit path, model/timeline/v5.py for the "
            "specification), not Hudi's code; the violations are the checkers' (model/checkers/timeline.py) "
            "on what the store holds.",
        ],
    )
    head.tables.append(("Checkers", checker_table(run)))
    head.details.append(("Settings (resolved scenario)", tables.settings_table(run)))
    return head


def _timeline_section(o: OccRun) -> Section:
    """The instant timeline, the time-order violations and every instant."""
    run = o.run
    fragment, static = instant_timeline(
        "occ-instants", o.writers, o.spans, o.gens, o.violations + run.verdict["findings"], o.lost, o.end,
        f"{run.name} (seed {run.seed}): instants and time generations per writer")
    tsec = Section(
        "Timeline of instants",
        [
            f"{INSTANTS_TEXT} Red: cited by a violation (duplicate or backward times, completions out of "
            "order, an inconsistent read); orange: a lost update, purple: the commit that overwrote it. "
            "Hover a bar for the instant's times, operation and merge base."
        ],
    )
    tsec.interactive.append(("Instant timeline (hover a bar for its details)", fragment, static))
    if o.time_order:
        tsec.tables.append(("Time-order violations", pd.DataFrame(
            [{"kind": v["kind"], "message": v["message"], "events": ", ".join(map(str, v["events"]))}
             for v in o.time_order[:MAX_ROWS]])))
    tsec.details.append(("Every instant", pd.DataFrame(
        [
            {
                "instant": fmt_instant(s.instant),
                "writer": s.writer,
                "action": s.action,
                "requested (ms since start)": s.requested_at,
                "completed (ms since start)": s.completed_at,
                "completion": fmt_instant(s.completion),
                "fg": s.fg,
                "merged": fmt_instant(s.merge),
                "operation": op_text(s.op),
            }
            for s in o.spans
        ])))
    return tsec


def _lost_section(lost: Sequence[LostUpdate]) -> Section:
    """The lost updates of stored objects: each lost commit and the commit that overwrote it."""
    sec = Section("Lost updates", [u.sentence() for u in lost[:20]])
    sec.tables.append(("Lost updates", pd.DataFrame(
        [
            {
                "lost instant": fmt_instant(u.lost.instant),
                "lost by": u.lost.writer,
                "operation": f"{(u.lost.op or {}).get('kind')} {(u.lost.op or {}).get('key')}",
                "completed": fmt_instant(u.lost.completion),
                "overwritten by": fmt_instant(u.by.instant),
                "overwriter": u.by.writer,
                "its merge base": fmt_instant(u.by.merge),
                "file group": fg_name(u.by.fg),
                "events": ", ".join(map(str, (*u.lost.events[-1:], *u.by.events[-1:]))),
            }
            for u in lost[:MAX_ROWS]
        ])))
    return sec


def _writers_section(o: OccRun, per_writer: pd.DataFrame) -> Section:
    """Commits, conflicts and aborts per writer (with a cumulative plot when there are enough of them)."""
    # a cumulative plot says something only when there are enough operations to make a curve
    curve = plots.cumulative(
        [(w.writer, "conflict" if w.result == "aborted" and w.conflict else w.result, w.time)
         for w in o.outs],
        o.end) if len(o.outs) >= MIN_OPS_FOR_CURVE else None
    return Section(
        "Commits, conflicts and aborts per writer",
        [
            "How each operation ended (op events): committed, aborted by a conflict (a reason naming a "
            "conflict), aborted for another reason."
        ],
        tables=[("Per writer", per_writer)],
        images=[("Cumulative commits, conflicts and aborts per writer over time", curve)]
        if curve is not None else [],
    )


def _occ_summary(o: OccRun, per_writer: pd.DataFrame) -> dict[str, Any]:
    """The report's JSON summary."""
    run = o.run
    return {
        "protocol": "occ",
        "scenario": run.name,
        "models": run.verdict["models"],
        "seed": run.seed,
        "expect": run.expect,
        "verdict": run.outcome,
        "matches_expectation": o.matches,
        "checkers": checker_table(run).to_dict(orient="records"),
        "violations": [
            {"kind": v["kind"], "message": v["message"], "events": v["events"]} for v in o.violations
        ],
        "time_order_violations": len(o.time_order),
        "lost_updates": [
            {
                "lost": format_instant(u.lost.instant),
                "lost_writer": u.lost.writer,
                "operation": u.lost.op,
                "overwritten_by": format_instant(u.by.instant),
                "overwriter": u.by.writer,
                "merge_base": "-" if u.by.merge is None else format_instant(u.by.merge),  # Hudi's id
                "file_group": u.by.fg,
            }
            for u in o.lost
        ],
        "instants": len(o.spans),
        "completed": sum(s.completed for s in o.spans),
        "per_writer": per_writer.to_dict(orient="records"),
        "metrics": run.metrics,
    }


def build_occ_report(run: RunData) -> Report:
    """Every section of the report of an OCC timeline run."""
    o = OccRun.of(run)
    sections = [_head_section(o), _timeline_section(o)]
    if o.violations:
        sec = Section("Violations", [f"{v['kind']}: {instant_text(v['message'])}" for v in o.violations[:20]])
        sec.tables.extend(violation_tables(o.violations, run.events))
        sections.append(sec)
    if o.lost:
        sections.append(_lost_section(o.lost))
    per_writer = per_writer_table(o.outs)
    sections.append(_writers_section(o, per_writer))
    sections.append(Section("All metrics", ["metrics.json of the run."],
                            tables=[("Metrics", tables.metrics_table(run.metrics))]))
    return Report(f"hcc report: {run.name} (seed {run.seed}, OCC timeline)", sections,
                  _occ_summary(o, per_writer))
