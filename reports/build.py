"""Assemble the contents of a run report (sections of text, tables and figures) and its JSON summary.

The HTML and Markdown renderers only lay out what is built here, so both show the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from model.metrics import acquire_latencies
from reports import plots, tables
from reports.load import RunData
from reports.timeline import Group, fault_windows, group_violations, holds, owner_nodes, store_leases

MAX_GROUP_FIGURES = 6
MAX_ROWS = 200


@dataclass
class Section:
    """One titled part of a report."""

    title: str
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (caption, PNG)
    details: list[tuple[str, pd.DataFrame]] = field(default_factory=list)  # collapsed tables


@dataclass
class Report:
    """A built report: a title, its sections, and the machine-readable summary."""

    title: str
    sections: list[Section]
    summary: dict[str, Any]


def _short(owner: str) -> str:
    return owner[:8]


def _audit_text(audit: dict[str, Any] | None) -> list[str]:
    """One sentence on what Hudi's audit validator makes of the run's own audit trail."""
    if not audit:
        return []
    return [f"Hudi's audit validator ('locks audit validate' rule, hcc check-audit) on this run's own audit "
            f"trail (table/.hoodie/.locks/audit): {audit['validator']}, {audit['overlaps']} overlap(s) in "
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
    if s["common_owner"]:
        owner = s["common_owner"]
        lead = (f"{s['owner_nodes'][owner]} (owner {_short(owner)}) is in every violation of this group; "
                f"it met {s['other_owners']} other owner(s)")
    else:
        lead = f"{len(s['owners'])} owners are involved"
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


def build_report(run: RunData) -> Report:
    """Every section of the report of one run, with its figures rendered."""
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

    head = Section("Run", [
        f"Scenario {run.name}, seed {run.seed}: verdict {run.outcome}, expected {run.expect} "
        f"({'as expected' if matches else 'NOT as expected'}).",
        *([str(run.scenario["description"])] if run.scenario.get("description") else []),
        f"{len(run.verdict['violations'])} violation(s) in {len(groups)} group(s); "
        f"{len(run.verdict['findings'])} finding(s). All times are simulated (true) time.",
        *_audit_text(run.verdict.get("audit")),
    ])
    head.tables.append(("Checkers", tables.checker_table(run)))
    head.details.append(("Settings (resolved scenario)", tables.settings_table(run)))
    sections = [head]

    overlaps_all = [(int(v["details"]["start"]), int(v["details"]["end"])) for v in run.verdict["violations"]
                    if v["kind"] == "overlap"]
    end = events[-1].time
    overview = Section("Lock-holder timeline", [
        "One lane per writer: the thin light bar is the store's lock file naming that writer's owner "
        "(until overwritten or its validity ran out), the thick bar the time the writer believed it held "
        "the lock; hatched windows are faults on that node; red is two holders at once."])
    overview.images.append(("Lock-holder timeline of the whole run",
                            plots.timeline(lanes, all_holds, leases, faults, overlaps_all, (0, end),
                                           f"{run.name} (seed {run.seed}): whole run")))
    if faults:
        overview.tables.append(("Fault windows", pd.DataFrame(
            [{"node": f.node, "fault": f.kind, "start_ms": f.start, "end_ms": f.end} for f in faults])))
    sections.append(overview)

    for n, (g, s) in enumerate(zip(groups, group_summaries, strict=True), start=1):
        sections.append(_group_section(run, n, g, s, lanes, all_holds, leases, faults,
                                       draw=n <= MAX_GROUP_FIGURES))

    if run.verdict["findings"]:
        sections.append(Section("Findings (reported, not deciding the verdict)", tables=[(
            "Findings", pd.DataFrame([{"kind": f["kind"], "message": f["message"],
                                       "events": ", ".join(map(str, f["events"]))}
                                      for f in run.verdict["findings"][:MAX_ROWS]]))]))

    lat = Section("Acquire latency", ["Latency from acquire invoke to acquire ok, simulated time."],
                  tables=[("Percentiles per writer (ms)", tables.latency_table(samples))],
                  images=[("Acquire latency CDF per writer", plots.latency_cdf(samples))])
    thr = Section("Throughput", images=[("Throughput over time, fault windows shaded",
                                         plots.throughput(tables.throughput_frame(events, lanes), faults))])
    acq = Section("Retries, precondition failures, unknown outcomes, conflicts (per acquisition)",
                  tables=[("Per acquisition, per writer", per_acq.reset_index())],
                  images=[("Per-acquisition counts per writer", plots.per_acquisition(per_acq))])
    fair = Section("Fairness", [f"Jain's index over acquisitions per writer: {metrics.get('fairness_jain')} "
                                "(1 = equal shares, 1/n = one writer got everything)."],
                   images=[("Acquisitions per writer", plots.fairness(
                       dict(metrics.get("acquisitions_per_writer", {})), metrics.get("fairness_jain")))])
    sections += [lat, thr, acq, fair,
                 Section("All metrics", ["metrics.json of the run (simulated time)."],
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
