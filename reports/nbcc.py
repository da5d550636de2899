"""The report of an NBCC run (``hcc nbcc run``): a MERGE_ON_READ table whose writers append logs to
shared file groups while a compaction service runs, read with one variant's slicing rule.

What it shows: the file groups with their file slices under the run's rule, the late logs (their
instant precedes a compaction of their group, their completion follows it) and the groups that
rule slices differently from completion-time slicing (RFC-66, Hudi 1.x, table version 8); each
compaction plan against the logs it should take; what each reader (snapshot and time travel as of
every completion) saw against what the committed writes say; the timeline of instants per writer
(interactive); the violations.

The table is read back from the run's ``table/`` folder with the harness's real-table reader
(``model/nbcc/sim_layout.load_table``); the written rows come from the history (``write-log``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from model.nbcc import checks
from model.nbcc.config import reader_configuration
from model.nbcc.findings import late_logs
from model.nbcc.sim_checks import latest_view, rel, rel_ms, spec_rows, written_logs
from model.nbcc.sim_layout import Row, load_table, parse_plan, read_slice_rows, requested_key, rows_reader
from model.nbcc.slicing import FileGroupId, FileSlice, Rule, slicer
from model.nbcc.timeline_reader import HudiTable
from model.nbcc.variants import VARIANTS, variant
from model.protocols.nbcc import PLAN
from model.run_format import ViolationEntry
from model.timeline.layout import LogFile
from reports import interactive, plots, tables
from reports.document import Report, Section
from reports.instants import InstantSpan, fmt_instant, instant_spans, span_item
from reports.interactive import Item
from reports.load import RunData, RunDirError
from reports.occ import violation_tables
from reports.times import NOTE

TABLE = "table"
COLOURS = {
    "committed": "#9be3a9",
    "aborted": "#e2e2e2",
    "late": "#ffc36b",
    "compaction": "#c39bd3",
    "violated": "#ef7b7b",
}
STROKES = {"violated": "#b00", "late": "#b35900"}
LEGEND = [
    (COLOURS["committed"], "completed deltacommit"),
    (COLOURS["compaction"], "compaction"),
    (COLOURS["late"], "deltacommit with a late log (completed after a compaction it precedes)"),
    (COLOURS["violated"], "cited by a violation"),
    (COLOURS["aborted"], "never completed"),
]


def read_objects(run_dir: Path, base: str) -> dict[str, bytes]:
    """The run's final store as ``{base/relative path: body}`` from its ``table/`` folder ({} without one)."""
    root = run_dir / TABLE
    if not root.is_dir():
        return {}
    return {
        f"{base}/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def log_text(lf: LogFile, completion: int | None) -> str:
    """A log as ``t<instant>.v<version> (done t<completion>)``."""
    return f"{rel(lf.instant)}.v{lf.version} (done {rel(completion)})"


def mis_sliced(
    table: HudiTable, rule: Rule
) -> dict[FileGroupId, list[tuple[LogFile, int | None, int | None]]]:
    """Per file group, the completed logs ``rule`` puts in another slice than completion-time slicing:
    (log, its slice's base instant under ``rule``, under completion time)."""
    ct = table.timeline.completion_time
    out: dict[FileGroupId, list[tuple[LogFile, int | None, int | None]]] = {}
    if rule is Rule.COMPLETION_TIME:
        return out

    def where(slices: Sequence[FileSlice]) -> dict[LogFile, int]:
        return {lf: s.base_instant for s in slices for lf in s.log_files}

    for g in table.groups:
        got, want = where(slicer(rule)(g, ct)), where(slicer(Rule.COMPLETION_TIME)(g, ct))
        moved = [
            (lf, got.get(lf), want.get(lf))
            for lf in sorted(set(got) | set(want), key=lambda x: x.sort_key)
            if got.get(lf) != want.get(lf)
        ]
        if moved:
            out[g.group_id] = moved
    return out


def slices_table(table: HudiTable, rule: Rule, moved: dict[FileGroupId, Any]) -> pd.DataFrame:
    """Every file slice of every group under ``rule``: base, logs (completion times), pending logs."""
    ct = table.timeline.completion_time
    rows = []
    for g in table.groups:
        moved_logs = {lf for lf, _, _ in moved.get(g.group_id, [])}
        for s in slicer(rule)(g, ct):
            rows.append(
                {
                    "file group": g.file_id,
                    "slice base": rel(s.base_instant),
                    "base file": "yes" if s.base_file else "no",
                    "logs": ", ".join(log_text(lf, ct(lf.instant)) for lf in s.log_files),
                    "pending logs": ", ".join(
                        f"{rel(lf.instant)}.v{lf.version}" for lf in s.pending_log_files
                    ),
                    "mis-sliced logs": ", ".join(
                        log_text(lf, ct(lf.instant)) for lf in s.log_files if lf in moved_logs
                    ),
                }
            )
    return pd.DataFrame(rows)


SLICE_COLOURS = {"slice": "#d6e4f0", "base": "#5b8fc7", "log": "#9be3a9", "mis-sliced": "#ffc36b",
                 "pending": "#e2e2e2"}
SLICE_LEGEND = [
    (SLICE_COLOURS["slice"], "a file slice (the rule's), from its base instant to the next slice's"),
    (SLICE_COLOURS["base"], "base file (a compaction: its instant to its completion)"),
    (SLICE_COLOURS["log"], "log file (its instant to its deltacommit's completion)"),
    (SLICE_COLOURS["mis-sliced"], "log the rule puts in another slice than completion time would"),
    (SLICE_COLOURS["pending"], "log whose deltacommit never completed"),
]


def slice_items(table: HudiTable, rule: Rule, moved: dict[FileGroupId, Any], end: int) -> list[Item]:
    """Each file group's slices, base files and logs over the table's time: one lane per group."""
    ct = table.timeline.completion_time
    items: list[Item] = []
    for g in table.groups:
        lane = g.file_id
        moved_logs = {lf for lf, _, _ in moved.get(g.group_id, [])}
        slices = sorted(slicer(rule)(g, ct), key=lambda sl: sl.base_instant)
        for n, sl in enumerate(slices):
            start = rel_ms(sl.base_instant)
            stop = rel_ms(slices[n + 1].base_instant) if n + 1 < len(slices) else end
            fields = (("slice base", rel(sl.base_instant)), ("base file", "yes" if sl.base_file else "no"),
                      ("logs", len(sl.log_files)), ("pending logs", len(sl.pending_log_files)))
            items.append(Item(lane, start, max(stop, start + 1), "slice", f"slice {rel(sl.base_instant)}",
                              fields, size=0.35))
            if sl.base_file:
                done = ct(sl.base_instant)
                items.append(Item(lane, start, rel_ms(done) if done is not None else start + 1, "base",
                                  "", (("base file", rel(sl.base_instant)),
                                       ("completed", rel(done) if done is not None else "-"))))
        for lf in g.log_files:
            done = ct(lf.instant)
            kind = "pending" if done is None else "mis-sliced" if lf in moved_logs else "log"
            stop = rel_ms(done) if done is not None else end
            items.append(Item(lane, rel_ms(lf.instant), max(stop, rel_ms(lf.instant) + 1), kind,
                              f"{rel(lf.instant)}.v{lf.version}",
                              (("log", lf.name), ("instant", rel(lf.instant)),
                               ("completed", rel(done) if done is not None else "never")),
                              size=0.6, dashed=done is None))
    return items


def static_slices(lanes: Sequence[str], items: Sequence[Item], end: int, title: str) -> bytes:
    """The PNG twin of the file-group figure: each group on two rows (its slices and base files; its logs),
    since a static image cannot show a thin bar under a thick one."""
    def row(it: Item) -> str:
        return f"{it.lane[:8]} {'slices' if it.kind in ('slice', 'base') else 'logs'}"

    rows = [f"{lane[:8]} {part}" for lane in lanes for part in ("slices", "logs")]
    return plots.bars(rows, [(row(it), it.start, it.end, SLICE_COLOURS[it.kind]) for it in items], (0, end),
                      title, SLICE_LEGEND, "instant and completion times (ms since start)")


def plans_table(table: HudiTable, objects: dict[str, bytes], base: str) -> pd.DataFrame:
    """Each compaction plan per file group: the logs it takes, those it should take (completed before the
    plan's instant, after the group's previous base), and the difference."""
    ct = table.timeline.completion_time
    rows = []
    for inst in table.timeline.instants:
        if inst.requested_action != "compaction":
            continue
        key = requested_key(base, inst.requested, "compaction")
        ops = {op.file_id: op for op in parse_plan(objects[key], key)} if key in objects else {}
        for g in table.groups:
            op = ops.get(g.file_id)
            taken = set(op.logs) if op else set()
            want = {lf.name for lf in checks.expected_plan_logs(g, ct, inst.requested)}
            if not taken and not want:
                continue
            by_name = {lf.name: lf for lf in g.log_files}

            def names(ns: set[str], by: dict[str, LogFile] = by_name) -> str:
                return ", ".join(
                    log_text(by[n], ct(by[n].instant)) if n in by else n
                    for n in sorted(ns, key=lambda n: by[n].sort_key if n in by else (0, 0, n, ""))
                )

            rows.append(
                {
                    "compaction": rel(inst.requested),
                    "state": inst.state.value,
                    "completed": rel(inst.completed),
                    "file group": g.file_id,
                    "takes": names(taken),
                    "should take": names(want),
                    "extra": names(taken - want),
                    "missing": names(want - taken),
                }
            )
    return pd.DataFrame(rows)


def _row_text(r: Row | None) -> str:
    return "absent" if r is None else r.rid


def readers_table(
    table: HudiTable, objects: dict[str, bytes], base: str, events: Sequence[Any], rule: Rule,
    metadata_table: bool = False,
) -> pd.DataFrame:
    """What each reader saw with ``rule``: the snapshot and time travel as of every completion (and just
    before it), the keys it read and those that differ from the committed writes."""
    ct = table.timeline.completion_time
    logs = written_logs(events)
    rows_of = rows_reader(objects, base)
    completions = sorted({i.completed for i in table.timeline.completed() if i.completed is not None})
    groups = table.listed_groups(metadata_table)
    out = []
    for t in [None, *sorted({x for c in completions for x in (c - 1, c)})]:
        got: dict[str, Row] = {}
        view = latest_view(groups, ct, rule, t, metadata_table)
        for s in view:
            got.update(read_slice_rows(s.base_file, s.log_files, ct, rows_of))
        want = spec_rows(logs.values(), ct, t)
        wrong = [
            f"{k}: should be {_row_text(want.get(k))}, read {_row_text(got.get(k))}"
            for k in sorted(set(want) | set(got))
            if want.get(k) != got.get(k)
        ]
        out.append(
            {
                "reader": "snapshot" if t is None else f"as of {rel(t)}",
                "slices": len(view),
                "files": sum(len(s.log_files) + (s.base_file is not None) for s in view),
                "keys read": len(got),
                "wrong keys": len(wrong),
                "differences": "; ".join(wrong),
            }
        )
    return pd.DataFrame(out)


def timeline_items(spans: Sequence[InstantSpan], late: set[int], violations: Sequence[ViolationEntry],
                   events: Sequence[Any], end: int) -> list[Item]:
    """The NBCC timeline as interactive items: one lane per writer (and the compactor)."""
    # a violation cites store writes or writer events (a log written, a deltacommit): both name an instant
    cites: dict[int, list[ViolationEntry]] = {}
    for v in violations:
        for i in v["events"]:
            cites.setdefault(int(i), []).append(v)
    by_instant: dict[int, list[ViolationEntry]] = {}
    for i, vs in cites.items():
        value = events[i].value if 0 <= i < len(events) else None
        if isinstance(value, dict) and str(value.get("instant", "")).isdigit():
            by_instant.setdefault(int(value["instant"]), []).extend(vs)
    items = []
    for s in spans:
        cited = [v for i in s.events for v in cites.get(i, [])] + by_instant.get(s.instant, [])
        kind = (
            "violated"
            if cited
            else "late"
            if s.instant in late
            else "compaction"
            if s.action == "compaction"
            else "committed"
            if s.completed
            else "aborted"
        )
        late_log = ("late log", "completed after a compaction requested after its instant")
        details = [late_log] if s.instant in late else []
        items.append(span_item(s, s.writer, kind, rel(s.instant), details, cited, end, "nbcc"))
    return items


def setting(run: RunData, name: str) -> str:
    """An NBCC setting of the run: its scenario's ``[nbcc]`` table; RunDirError when it is missing."""
    table = run.scenario.get("nbcc")
    if not isinstance(table, dict) or name not in table:
        raise RunDirError(run.path, f"scenario.toml: field nbcc.{name} is missing")
    return str(table[name])


def rule_of(run: RunData) -> Rule:
    """The readers' slicing rule of an NBCC run: its variant's (``[nbcc] variant``); RunDirError names the
    field of any other variant."""
    name = setting(run, "variant")
    if name not in VARIANTS:
        raise RunDirError(run.path, f"scenario.toml: field nbcc.variant = {name!r} is not one of "
                                    f"{', '.join(VARIANTS)}")
    return variant(name).slicing


def metadata_table_of(run: RunData) -> bool:
    """Whether the run's readers listed through the metadata table (``[nbcc] metadata_table``)."""
    return setting(run, "metadata_table").lower() == "true"


@dataclass(frozen=True)
class NbccRun:
    """What every section of an NBCC report derives from the run (once, for all of them)."""

    run: RunData
    base: str
    rule: Rule
    mdt: bool  # readers list through the metadata table
    chosen: str  # the variant
    generator: str  # the time generator
    objects: dict[str, bytes]
    table: HudiTable | None  # None: the run directory has no table/
    counts: dict[str, int]  # every violation found, per kind
    spans: list[InstantSpan]
    end: int  # the last thing a writer or the store did, + 1

    @classmethod
    def of(cls, run: RunData) -> NbccRun:
        """The settings, the table and the derivations of ``run``."""
        events = run.events
        base = str(run.files[PLAN].get("base", TABLE))
        objects = read_objects(run.path, base)
        table = load_table(objects, base) if objects else None
        # every violation found, per kind; verdict.json keeps the first few of each kind as examples
        counts: dict[str, int] = run.verdict.get("violation_counts") or dict(
            Counter(v["kind"] for v in run.verdict["violations"]))
        end = max([e.time for e in events if e.process != "nemesis"] or [events[-1].time]) + 1
        return cls(run, base, rule_of(run), metadata_table_of(run), setting(run, "variant"),
                   setting(run, "time_generator"), objects, table, counts, instant_spans(events, base, "v8"),
                   end)

    @property
    def matches(self) -> bool:
        return self.run.outcome == self.run.expect


def _head_section(n: NbccRun) -> Section:
    """The run: the rule, whose behaviour, the verdict, the final table's counts, violations by kind."""
    run, m, violations = n.run, n.run.metrics, n.run.verdict["violations"]
    total = sum(n.counts.values())
    head = Section(
        "Run",
        [
            f"NBCC run {run.name}, seed {run.seed}: readers and the compaction planner slice by the "
            f"{n.rule.value} rule of variant {n.chosen} ({variant(n.chosen).follows}); "
            f"{reader_configuration(n.mdt)}; instant times "
            f"from the {n.generator} generator; verdict {run.outcome}, expected "
            f"{run.expect} ({'as expected' if n.matches else 'NOT as expected'}).",
            f"{m['instants']} instants ({m['completed']} completed), {m['compactions']} compaction(s), "
            f"{m['file_groups']} file groups, {m['log_files']} log files in the final table; "
            f"{total} violation(s)" + (f" ({len(violations)} of them kept as examples, the first of each "
                                        "kind, in report.json)." if total > len(violations) else "."),
            "The writers and the compactor are this harness's model (model/nbcc/sim_table.py) writing a "
            "Hudi table version 8 (MERGE_ON_READ) layout. The hudi-1.2.0 and pr-19785 rules are Hudi's "
            "HoodieFileGroup (model/nbcc/filegroup.py: 1.2.0's, and PR #19785's, which 1.2.1 ships); "
            "completion-time is the harness's own rule (variant pr-19786, hypothetical) and instant-time is"
            " table version 6's (variant v6-instant-time, hypothetical), run to show what they would get "
            "wrong. The mis-sliced groups compare each rule with the harness's completion-time rule.",
            NOTE,
        ],
    )
    head.tables.append(
        (
            "Violations by kind",
            pd.DataFrame(
                [{"kind": k, "count": c, "examples kept": sum(v["kind"] == k for v in violations)}
                 for k, c in n.counts.items()],
                columns=["kind", "count", "examples kept"],
            ),
        )
    )
    if run.scenario:
        head.details.append(("Settings (resolved scenario)", tables.settings_table(run)))
    return head


def _slices_section(n: NbccRun, table: HudiTable, late: dict[FileGroupId, Any]) -> Section:
    """The file groups and their slices under the run's rule: late logs, mis-sliced groups, the figure."""
    run, rule = n.run, n.rule
    moved = mis_sliced(table, rule)
    ct = table.timeline.completion_time
    text = [
        f"{len(table.groups)} file group(s); {sum(len(v) for v in late.values())} late log(s) in "
        f"{len(late)} group(s) (instant before a compaction of the group, completion after it: where "
        "instant-time and completion-time slicing disagree)."
    ]
    for gid, logs in moved.items():
        for lf, got, want in logs:
            text.append(
                f"File group {gid.file_id} is mis-sliced: under {rule.value}, log {lf.name} (instant "
                f"{rel(lf.instant)}, completed {rel(ct(lf.instant))}) is in the slice based at "
                f"{rel(got)}; by completion time it belongs to the slice based at {rel(want)}."
            )
    if rule is not Rule.COMPLETION_TIME and not moved:
        text.append(f"No file group is sliced differently by {rule.value} and by completion time.")
    sec = Section("File groups and slices", text)
    fg_items = slice_items(table, rule, moved, n.end)
    fg_lanes = [g.file_id for g in table.groups]
    fg_end = max([n.end, *(int(it.end) for it in fg_items)])
    sec.interactive.append((
        "File groups over the table's time: slices, base files and logs (hover an element for details)",
        interactive.timeline_html("nbcc-slices", fg_lanes, fg_items, SLICE_COLOURS, (0, fg_end),
                                  "ms since start (instant and completion times)",
                                  SLICE_LEGEND),
        static_slices(fg_lanes, fg_items, fg_end, f"{run.name} (seed {run.seed}): file groups under the "
                      f"{rule.value} rule")))
    sec.tables.append((f"File slices under the {rule.value} rule", slices_table(table, rule, moved)))
    if late:
        sec.tables.append(("Late logs", pd.DataFrame(
            [{"file group": gid.file_id, "log": name} for gid, names in late.items() for name in names])))
    return sec


def _table_sections(n: NbccRun, table: HudiTable, late: dict[FileGroupId, Any]) -> list[Section]:
    """File groups and slices, compaction plans, what each reader saw."""
    slices = _slices_section(n, table, late)  # (its figure drawn first, as before the split)
    readers = readers_table(table, n.objects, n.base, n.run.events, n.rule, n.mdt)
    bad = readers[readers["wrong keys"] > 0]
    return [
        slices,
        Section(
            "Compaction plans",
            [
                "Each plan should take exactly the logs of its file group completed before the plan's "
                "instant (and at or after the group's previous base instant); extra or missing logs are "
                "violations (kind plan)."
            ],
            tables=[("Compaction plans per file group", plans_table(table, n.objects, n.base))],
        ),
        Section(
            "What each reader saw",
            [
                f"{len(readers)} readers (the snapshot, and time travel as of every completion and just "
                f"before it) with the {n.rule.value} rule; {len(bad)} read something other than the "
                "committed writes."
            ],
            tables=[("Readers that saw wrong rows", bad)] if len(bad) else [],
            details=[("Every reader", readers)],
        ),
    ]


def _timeline_section(n: NbccRun, late_instants: set[int]) -> Section:
    """The instants per writer and the compactor (interactive, and a static figure)."""
    run, end, violations = n.run, n.end, n.run.verdict["violations"]
    # the compaction service is a node of its own (w<writers + 1>): its lane says so
    compactor = f"w{len(run.files[PLAN].get('writers') or []) + 1}"
    label = {compactor: f"{compactor} (compactor)"}
    lanes = [label.get(w, w) for w in sorted({s.writer for s in n.spans})]
    items = [dataclasses.replace(it, lane=label.get(it.lane, it.lane))
             for it in timeline_items(n.spans, late_instants, violations, run.events, end)]
    static = plots.bars(
        lanes,
        [(it.lane, it.start, it.end, COLOURS[it.kind]) for it in items],
        (0, end),
        f"{run.name} (seed {run.seed}): instants per writer",
        LEGEND,
    )
    tsec = Section(
        "Timeline of instants",
        [
            "Per writer and the compactor, each instant from its .requested file to its "
            "completed file in the store (true time; dashed: never completed). Hover a bar for its instant "
            "and completion times."
        ],
    )
    tsec.interactive.append(
        (
            "Instant timeline (hover a bar for its details)",
            interactive.timeline_html(
                "nbcc-instants", lanes, items, COLOURS, (0, end), "ms since start (true time)", LEGEND,
                STROKES,
            ),
            static,
        )
    )
    return tsec


def _nbcc_summary(n: NbccRun) -> dict[str, Any]:
    """The report's JSON summary."""
    run, table, rule = n.run, n.table, n.rule
    moved_summary = (
        {}
        if table is None
        else {
            gid.file_id: [
                {"log": lf.name, "slice_by_rule": fmt_instant(got), "slice_by_completion": fmt_instant(want)}
                for lf, got, want in logs
            ]
            for gid, logs in mis_sliced(table, rule).items()
        }
    )
    return {
        "protocol": "nbcc",
        "scenario": run.name,
        "seed": run.seed,
        "rule": rule.value,
        "variant": n.chosen,
        "metadata_table": n.mdt,
        "time_generator": n.generator,
        "expect": run.expect,
        "verdict": run.outcome,
        "matches_expectation": n.matches,
        "violations": [
            {"kind": v["kind"], "message": v["message"], "events": v["events"]}
            for v in run.verdict["violations"]
        ],
        "mis_sliced_file_groups": moved_summary,
        "late_logs": {} if table is None else {g.file_id: list(x) for g, x in late_logs(table).items()},
        "instants": len(n.spans),
    }


def build_nbcc_report(run: RunData) -> Report:
    """Every section of the report of an NBCC run."""
    n = NbccRun.of(run)
    sections = [_head_section(n)]
    late_instants: set[int] = set()
    if n.table is None:
        sections.append(Section("File groups", [f"The run directory has no {TABLE}/ folder: the file groups, "
                                                "plans and readers cannot be shown."]))
    else:
        late = late_logs(n.table)
        late_instants = {lf.instant for g in n.table.groups for lf in g.log_files
                         if lf.name in late.get(g.group_id, ())}
        sections.extend(_table_sections(n, n.table, late))
    # right after the run: the figure to look at first
    sections.insert(1, _timeline_section(n, late_instants))
    violations = run.verdict["violations"]
    if violations:
        sections.append(Section("Violations", tables=violation_tables(violations, run.events)))
    if run.metrics:
        sections.append(Section("All metrics", ["metrics.json of the run."],
                                tables=[("Metrics", tables.metrics_table(run.metrics))]))
    return Report(f"hcc report: {run.name} (seed {run.seed}, NBCC, {n.rule.value} rule)", sections,
                  _nbcc_summary(n))
