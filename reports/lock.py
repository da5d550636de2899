"""The report of a lock run: its verdict, the lock-holder timeline (whole run and per group of
violations), latency, throughput, retries per acquisition, fairness and every metric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from model.lock.metrics import acquire_latencies
from model.run_format import AuditSummary, ViolationEntry
from model.runtime.history import Event
from reports import interactive, plots, tables
from reports.document import MAX_ROWS, Report, Section, cell_text
from reports.interactive import Item
from reports.load import RunData
from reports.lock_holders import (
    Fault,
    Group,
    Hold,
    Lease,
    fault_windows,
    group_violations,
    holds,
    owner_nodes,
    store_leases,
)
from reports.times import NOTE

MAX_GROUP_FIGURES = 6


def _short(owner: str) -> str:
    return owner[:8]


def _audit_text(audit: AuditSummary | None) -> list[str]:
    """One sentence on what Hudi's audit validator makes of the run's own audit trail."""
    if not audit:
        return []
    word = audit["validator"]
    if word == "WARNING" and not audit["overlaps"]:  # the validator's word when a window has no END
        word = f"WARNING (its word for {audit['without_end']} window(s) without an END record; no overlap)"
    return [f"Hudi's audit validator ('locks audit validate' rule, hcc check-audit) on this run's own audit "
            f"trail (table/.hoodie/.locks/audit): {word}, {audit['overlaps']} overlap(s) in "
            f"{audit['windows']} window(s); of the violations, {audit['violations_visible']} are "
            f"audit-visible and {audit['violations_invisible']} are not (column audit-visible); "
            f"{audit.get('overlaps_without_violation', 0)} owner pair(s) it flags overlap in no violation "
            "(timestamps are each writer's own clock)."]


def _group_summary(g: Group, nodes: dict[str, str]) -> dict[str, Any]:
    lo, hi = g.span
    common = g.common_owner
    others = sorted(g.owners - {common}) if common else sorted(g.owners)
    return {
        "count": len(g.violations),
        "kinds": dict(sorted(g.kinds.items())),
        "owners": sorted(g.owners),
        "owner_nodes": {o: nodes.get(o, "?") for o in sorted(g.owners)},
        "common_owner": common,
        "other_owners": len(others),
        "start_ms": lo,
        "end_ms": hi,
        "overlap_ms_total": g.overlap_ms,
        "overlap_ms_max": max((int(v["details"].get("overlap_ms", 0)) for v in g.violations), default=0),
        "first": g.violations[0]["message"],
    }


def _group_text(s: dict[str, Any]) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in s["kinds"].items())
    where = f"during [{s['start_ms']}, {s['end_ms']}] ms"
    # owner ids are per acquisition (a provider each): say writers, and count acquisitions apart
    writers = sorted(set(s["owner_nodes"].values()))
    if s["common_owner"]:
        owner = s["common_owner"]
        lead = (f"{s['owner_nodes'][owner]} (owner {_short(owner)}) is in every violation of this group; "
                f"it met {s['other_owners']} other acquisition(s) of {len(writers) - 1} other writer(s)")
    else:
        lead = (f"{len(writers)} writer(s) ({', '.join(writers)}) are involved, in {len(s['owners'])} "
                "acquisition(s) (an owner id is one provider's)")
    extra = (f"; {s['overlap_ms_total']} ms of double holding in all, longest {s['overlap_ms_max']} ms"
             if s["overlap_ms_total"] else "")
    return f"{kinds}. {lead} {where}{extra}."


def _group_section(run: RunData, n: int, g: Group, summary: dict[str, Any], lanes: list[str],
                   all_holds: list[Any], leases: list[Any], faults: list[Any], draw: bool) -> Section:
    sec = Section(f"Violation group {n}: {', '.join(summary['kinds'])}", [_group_text(summary)])
    sec.tables.append(("Violations (each with the history events that prove it)",
                       tables.group_table(g, MAX_ROWS)))
    if len(g.violations) > MAX_ROWS:
        sec.text.append(f"The table shows the first {MAX_ROWS} of {len(g.violations)}; report.json and "
                        "verdict.json hold all of them.")
    first = g.violations[0]
    sec.tables.append((f"Minimal events of the first violation ({first['kind']})",
                       tables.events_table(run.events, first["events"])))
    cited = sorted({i for v in g.violations[:MAX_ROWS] for i in v["events"]})
    sec.details.append((f"All {len(cited)} events cited by this group",
                        tables.events_table(run.events, cited)))
    if not draw:
        sec.text.append(f"(Timelines are drawn for the first {MAX_GROUP_FIGURES} groups only.)")
        return sec
    overlaps = [(int(v["details"]["start"]), int(v["details"]["end"])) for v in g.violations
                if v["kind"] == "overlap"]
    marks = [(t, v["kind"]) for v in g.violations if v["kind"] != "overlap"
             for t in ([v["details"]["time"]] if "time" in v["details"] else v["details"].get("times", []))]
    lo, hi = g.span
    involved = [h for h in all_holds if h.owner in g.owners and h.end >= lo and h.start <= hi]
    window = (min([lo, *(h.start for h in involved)]), max([hi, *(h.end for h in involved)]))
    common = summary["common_owner"]
    label = {o: f"{summary['owner_nodes'][o]} owner {_short(o)}" for o in g.owners}
    focus = {common: label[common]} if common and len(g.owners) > 6 else label
    sec.images.append((
        f"Lock-holder timeline of group {n}: every owner involved, faults shaded, overlaps in red",
        plots.timeline(lanes, all_holds, leases, faults, overlaps, window,
                       f"{run.name}: group {n} ({len(g.violations)} violations, {len(g.owners)} owners)",
                       focus, marks[:20])))
    if overlaps:
        v = max((v for v in g.violations if v["kind"] == "overlap"), key=lambda v: v["details"]["overlap_ms"])
        s, e = int(v["details"]["start"]), int(v["details"]["end"])
        margin = max(3 * (e - s), 3000)
        pair = {o: label[o] for o in v["details"]["owners"]}
        sec.images.append((
            f"Zoom on the longest overlap: {v['message']}",
            plots.timeline(lanes, all_holds, leases, faults, [(s, e)], (s - margin, e + margin),
                           f"longest overlap: [{s}, {e}) ms, {e - s} ms", pair)))
    return sec


def _translucent(colour: str, alpha: float = 0.3) -> str:
    """``#rrggbb`` as an rgba() colour with ``alpha``."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


LOCK_COLOURS = {"hold": plots.HOLD_COLOUR, "lease": plots.LEASE_COLOUR, "overlap": "#f0aaaa",
                "violation": plots.OVERLAP_COLOUR,
                # fault windows are translucent: the holds and leases inside them stay visible
                **{f"fault-{k}": _translucent(c) for k, c in plots.FAULT_COLOURS.items()}}
LOCK_LEGEND = [(plots.HOLD_COLOUR, "writer believes it holds the lock"),
               (plots.LEASE_COLOUR, "lock file names it (store)"),
               ("#f0aaaa", "overlap (two holders)"), (plots.OVERLAP_COLOUR, "other violation (a point)"),
               (_translucent(plots.FAULT_COLOURS["pause"]), "fault (pause, crash, cutoff, writer death)")]


def lock_items(all_holds: list[Hold], leases: list[Lease], faults: list[Fault],
               violations: Sequence[ViolationEntry], nodes: dict[str, str]) -> list[Item]:
    """The lock-holder timeline as interactive items: holds, leases, fault windows, violations (overlaps on
    both owners' lanes, other violations as points on their owner's lane)."""
    items = [Item(f.node, f.start, f.end, f"fault-{f.kind}", f.kind,
                  (("fault", f.kind), ("node", f.node), ("start ms", f.start), ("end ms", f.end)), size=1.35)
             for f in faults]
    items += [Item(le.node, le.start, le.end, "lease", "",
                   (("lock file names", le.owner), ("node", le.node), ("from ms", le.start),
                    ("until ms", le.end),
                    ("ended", "validity ran out" if le.lapsed else "overwritten or end of run")), size=0.3)
              for le in leases]
    items += [Item(h.node, h.start, h.end, "hold", _short(h.owner),
                   (("holder", h.owner), ("node", h.node), ("from ms", h.start), ("until ms", h.end),
                    ("events", f"{h.start_event} .. "
                               f"{'end of history' if h.end_event is None else h.end_event}")),
                   size=0.6) for h in all_holds]
    for n, v in enumerate(violations):
        d = v.get("details", {})
        fields: tuple[tuple[str, object], ...] = (("violation", v["kind"]), ("message", v["message"]),
                                                  ("events", ", ".join(map(str, v["events"]))))
        if v["kind"] == "overlap":
            for owner in d.get("owners", []):
                items.append(Item(nodes.get(owner, "?"), int(d["start"]), int(d["end"]), "overlap", "",
                                  fields, size=1.2, ident=f"lock-v{n}-{owner[:8]}"))
            continue
        times = [d["time"]] if "time" in d else list(d.get("times", []))
        owners = [o for k in ("writer", "holder", "owner") if isinstance(o := d.get(k), str)]
        for t in times[:20]:
            lane = nodes.get(owners[0], "?") if owners else "?"
            items.append(Item(lane, int(t), int(t), "violation", "", fields, size=1.0))
    return items


HOLDERS_TEXT = ("One lane per writer: the thin light bar is the store's lock file naming that writer's owner "
                "(until overwritten or its validity ran out), the thick bar the time the writer believed it "
                "held the lock; shaded windows are faults on that node; red is two holders at once.")


def holder_timeline(uid: str, lanes: list[str], events: Sequence[Event], violations: Sequence[ViolationEntry],
                    title: str) -> tuple[str, bytes]:
    """The lock-holder timeline of a history from its start to its last event: the interactive HTML
    fragment (element ids prefixed ``uid``) and the static PNG titled ``title``.  Holds, the store's
    leases and fault windows come from ``events`` (``reports/lock_holders.py``); an overlap of
    ``violations`` (``details``: owners, start, end) is drawn in red on both owners' lanes."""
    all_holds, leases, faults = holds(events), store_leases(events), fault_windows(events)
    window = (0, events[-1].time if events else 0)
    overlaps = [(int(v["details"]["start"]), int(v["details"]["end"])) for v in violations
                if v["kind"] == "overlap"]
    static = plots.timeline(lanes, all_holds, leases, faults, overlaps, window, title)
    fragment = interactive.timeline_html(
        uid, [*lanes, *sorted({f.node for f in faults} - set(lanes))],
        lock_items(all_holds, leases, faults, violations, owner_nodes(events)), LOCK_COLOURS, window,
        "ms since start (true time)", LOCK_LEGEND, stroke={"lease": "none", "overlap": "#d62728"})
    return fragment, static


def build_lock_report(run: RunData) -> Report:
    """The report of a lock run (``hcc run``)."""
    events = run.events
    metrics = run.metrics
    lanes = list(metrics.get("writers") or sorted(owner_nodes(events).values()))
    all_holds = holds(events)
    leases = store_leases(events)
    faults = fault_windows(events)
    nodes = owner_nodes(events)
    groups = group_violations(run.verdict["violations"])
    group_summaries = [_group_summary(g, nodes) for g in groups]
    samples = acquire_latencies(events)
    per_acq = tables.per_acquisition_table(run)
    matches = run.outcome == run.expect
    # a run on real threads (hcc realworld, the hudi world) counts the harness's own clock from its start
    clock = "simulated" if run.verdict.get("world", "sim") == "sim" else "real"

    head = Section("Run", [
        f"Scenario {run.name}, seed {run.seed}: verdict {run.outcome}, expected {run.expect} "
        f"({'as expected' if matches else 'NOT as expected'}).",
        *([str(run.scenario["description"])] if run.scenario.get("description") else []),
        f"{len(run.verdict['violations'])} violation(s) in {len(groups)} group(s); "
        f"{len(run.verdict['findings'])} finding(s). All times are {clock} (true) time. {NOTE}",
        *_audit_text(run.verdict.get("audit")),
    ])
    head.tables.append(("Checkers", tables.checker_table(run)))
    head.details.append(("Settings (resolved scenario)", tables.settings_table(run)))
    sections = [head]

    overview = Section("Lock-holder timeline", [HOLDERS_TEXT])
    fragment, static = holder_timeline("lock-holders", lanes, events, run.verdict["violations"],
                                       f"{run.name} (seed {run.seed}): whole run")
    overview.interactive.append(("Lock-holder timeline of the whole run (hover a bar for its details)",
                                 fragment, static))
    if faults:
        overview.tables.append(("Fault windows", pd.DataFrame(
            [{"node": f.node, "fault": f.kind, "start (ms since start)": f.start,
              "end (ms since start)": f.end} for f in faults])))
    sections.append(overview)

    for n, (g, s) in enumerate(zip(groups, group_summaries, strict=True), start=1):
        sections.append(_group_section(run, n, g, s, lanes, all_holds, leases, faults,
                                       draw=n <= MAX_GROUP_FIGURES))

    if run.verdict["findings"]:
        sections.append(Section("Findings (reported, not deciding the verdict)", tables=[(
            "Findings", pd.DataFrame([{"kind": f["kind"], "message": f["message"],
                                       "events": ", ".join(map(str, f["events"]))}
                                      for f in run.verdict["findings"][:MAX_ROWS]]))]))

    lat = Section("Acquire latency", [f"Latency from acquire invoke to acquire ok, {clock} time."],
                  tables=[("Percentiles per writer (ms)", tables.latency_table(samples))],
                  images=[("Acquire latency CDF per writer", plots.latency_cdf(samples))])
    thr = Section("Throughput", images=[("Throughput over time, fault windows shaded",
                                         plots.throughput(tables.throughput_frame(events, lanes), faults))])
    acq = Section("Retries, precondition failures, unknown outcomes, conflicts (per acquisition)",
                  tables=[("Per acquisition, per writer", per_acq.reset_index())],
                  images=[("Per-acquisition counts per writer", plots.per_acquisition(per_acq))])
    jain = cell_text(metrics.get("fairness_jain"))
    fair = Section("Fairness", [f"Jain's index over acquisitions per writer: {jain} "
                                "(1 = equal shares, 1/n = one writer got everything)."],
                   images=[("Acquisitions per writer", plots.fairness(
                       dict(metrics.get("acquisitions_per_writer", {})), metrics.get("fairness_jain")))])
    sections += [lat, thr, acq, fair,
                 Section("All metrics", [f"metrics.json of the run ({clock} time)."],
                         tables=[("Metrics", tables.metrics_table(metrics))])]

    summary = {
        "scenario": run.name,
        "seed": run.seed,
        "expect": run.expect,
        "verdict": run.outcome,
        "matches_expectation": matches,
        "checkers": tables.checker_table(run).to_dict(orient="records"),
        "violation_groups": group_summaries,
        "audit": run.verdict.get("audit"),
        "findings": len(run.verdict["findings"]),
        "metrics": metrics,
        "per_acquisition": per_acq.reset_index().to_dict(orient="records"),
        "acquire_latency_ms_per_writer": tables.latency_table(samples).to_dict(orient="records"),
        "fault_windows": [{"node": f.node, "fault": f.kind, "start_ms": f.start, "end_ms": f.end}
                          for f in faults],
    }
    return Report(f"hcc report: {run.name} (seed {run.seed})", sections, summary)
