"""The NBCC model against Hudi's own Spark writers on an NBCC entry's plan: ``hcc differential writers`` for
``nbcc-*`` entries.

A run of Hudi's writers (:mod:`engines.hudi_spark.run` with :mod:`engines.hudi_spark.nbcc_plans`) leaves a
merge-on-read table, its timeline, the history and ``fsview.json``: the file slices Hudi 1.2.0's and 1.2.1's
own ``HoodieTableFileSystemView`` build of the table (storage listing, :mod:`engines.hudi_spark.fsview`). On
that table the model is asked:

- **Deltacommits.** NBCC resolves no write conflict (``needResolveWriteConflict``, fidelity NB4): every
  deltacommit the harness did not kill must commit. A failed one is a difference; a planned kill that did
  not happen is a note (the plan did not run as the entry's simulation did).
- **Refusals.** An attempt the model refuses (its outcome in the run's plans): a deltacommit a pending
  clustering plan refuses must fail with ``HoodieClusteringUpdateException`` (fidelity NBC3), a clustering
  must fail with ``UnsupportedOperationException`` and leave its plan requested on the timeline (NBC1,
  NBC2), a compaction the model refused for a killed executor's live heartbeat must fail with Hudi's
  ``... due to heartbeat by concurrent writer/job`` (NB34); such an attempt is not judged by NB4 (a compaction
  Hudi refused so that the model executed is a difference).
- **File slices.** Per release, the model's transcription of ``HoodieFileGroup`` (:mod:`model.nbcc.filegroup`:
  1.2.0's, :attr:`~model.nbcc.slices.Rule.HUDI_1_2_0`; 1.2.1's, PR #19785's ``addLogFiles``,
  :attr:`~model.nbcc.slices.Rule.PR_19785`) builds every file group of the listed table: every slice (keyed
  by its base instant, with its base file and its logs, pending ones included), the slices Hudi calls
  committed, and the slice the snapshot reader reads (committed logs only). Each must be Hudi's.
- **Rows.** The final rows of Hudi's Spark reader, of the model's reader (the entry's listing, 1.2.0's
  slicing) and of hudi-rs (:func:`analyses.writers_differential.hudi_rs_rows`) must be the same; where
  hudi-rs reads the rows of 1.2.1's slicing (a group 1.2.0 hides read), that is a note about hudi-rs and
  Hudi 1.2.0, not a difference of the model.

Each difference names the fidelity rows it contradicts (docs/fidelity.md, NBCC section).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from analyses.writers_differential import compare_final_rows, compare_run, model_rows
from analyses.writers_reads import compare_reads
from model.nbcc.config import NbccScenario
from model.nbcc.filegroup import build_group
from model.nbcc.slices import FileSlice, Rule
from model.nbcc.timeline_reader import HudiTable
from model.timeline.layout import format_instant
from reports.load import load_writers_run
from scenarios.catalogue import Entry

# each release whose hudi-common fsview.json reads, and the model's rule for its HoodieFileGroup
RELEASES = {"1.2.0": Rule.HUDI_1_2_0, "1.2.1": Rule.PR_19785}
# the fidelity rows each compared view rests on (docs/fidelity.md, NBCC)
SLICE_ROWS = {
    ("1.2.0", "all_slices"): "NB12-NB15 (building a group; 1.2.0: a pending first log keys a slice)",
    ("1.2.1", "all_slices"): "NB12-NB14, NB16 (building a group; PR #19785's addLogFiles in 1.2.1)",
    ("1.2.0", "committed_slices"): "NB17, NB18 (the committed-slice check)",
    ("1.2.1", "committed_slices"): "NB17, NB18 (the committed-slice check)",
    ("1.2.0", "reader_slices"): "NB19, NB21, NB22 (the latest merged slice, storage listing)",
    ("1.2.1", "reader_slices"): "NB19, NB21, NB22 (the latest merged slice, storage listing)",
}
# the fault proxy's actions that are not a fault it injected (backends/fault_proxy.py)
NOT_INJECTED = frozenset({"forward", "bad-request", "upstream-failed"})
COMMIT_ROWS = "NB4 (NBCC resolves no write conflict: every deltacommit commits)"
# Hudi 1.2.0 refuses to execute a compaction while another executor's heartbeat of it lives (multi-writer:
# BaseHoodieTableServiceClient#compact 334-339, #validateHeartBeat 1477-1485); so does the model (NB34)
COMPACTION_HEARTBEAT = "due to heartbeat by concurrent writer/job"
COMPACTION_HEARTBEAT_ROW = ("NB34 (a compaction's execution is refused while another executor's heartbeat of "
                            "it lives: BaseHoodieTableServiceClient#compact 334-339, #validateHeartBeat "
                            "1477-1485)")
# what a refusal's exception message must also hold (a HoodieLockException is also a lock not acquired)
REFUSAL_MESSAGES = {"heartbeat-refused": COMPACTION_HEARTBEAT}
# the model's refusals: its outcome in a run's plan -> the exception Hudi must fail with, the fidelity rows
REFUSALS = {
    "rejected": ("HoodieClusteringUpdateException",
                 "NBC3 (a pending clustering plan refuses every update of its file groups)"),
    "refused": ("UnsupportedOperationException",
                "NBC1, NBC2 (a clustering of an NBCC table is planned, its execution refused)"),
    "heartbeat-refused": ("HoodieLockException", COMPACTION_HEARTBEAT_ROW),
}
Slice = tuple[str, str | None, tuple[str, ...]]  # base instant, base file, log file names (sorted)


def _slice(s: FileSlice, pending: bool = True) -> Slice:
    """A slice as FsViewDump prints it: ``HoodieFileGroup``'s slices hold its pending files too (a pending
    compaction's base file, pending logs); a reader's slice (``pending`` False) shows neither."""
    logs = s.log_files + (s.pending_log_files if pending else ())
    base = s.base_file or (s.pending_base_file if pending else None)
    return (format_instant(s.base_instant), base.name if base else None,
            tuple(sorted(lf.name for lf in logs)))


def model_view(table: HudiTable, rule: Rule) -> dict[str, dict[str, dict[str, list[Slice]]]]:
    """The model's view of ``table`` (storage listing) under ``rule``, as FsViewDump prints Hudi's: per
    partition, view (``all_slices``, ``committed_slices``, ``reader_slices``) and file id, its slices."""
    ct = table.completion_lookup()
    out: dict[str, dict[str, dict[str, list[Slice]]]] = {}
    for g in table.groups:
        built = build_group(g, ct, fix_19785=rule is Rule.PR_19785)
        part = out.setdefault(g.partition, {"all_slices": {}, "committed_slices": {}, "reader_slices": {}})
        part["all_slices"][g.file_id] = [_slice(s) for s in built.raw]
        part["committed_slices"][g.file_id] = [_slice(s) for s in built.committed]
    for s in table.snapshot(rule):
        part = out.setdefault(s.partition, {"all_slices": {}, "committed_slices": {}, "reader_slices": {}})
        part["reader_slices"][s.file_id] = [_slice(s, pending=False)]
    return out


def hudi_view(view: Mapping[str, Any]) -> dict[str, dict[str, dict[str, list[Slice]]]]:
    """One release's ``fsview.json`` entry in :func:`model_view`'s shape."""
    def norm(s: Mapping[str, Any]) -> Slice:
        return (str(s["base_instant"]), s["base_file"], tuple(sorted(s["log_files"])))

    out: dict[str, dict[str, dict[str, list[Slice]]]] = {}
    for p, v in view["partitions"].items():
        part = out.setdefault(p, {"all_slices": {}, "committed_slices": {}, "reader_slices": {}})
        for g in v["file_groups"]:
            for which in ("all_slices", "committed_slices"):
                part[which][g["file_id"]] = sorted(norm(s) for s in g[which])
        for s in v["reader_slices"]:
            part["reader_slices"].setdefault(s["file_id"], []).append(norm(s))
    return out


def compare_slices(table: HudiTable, views: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The differences between each release's file slices in ``views`` (``fsview.json``) and the model's
    for that release, and notes (a release whose view could not be built)."""
    differences: list[dict[str, Any]] = []
    notes: list[str] = []
    for version, rule in RELEASES.items():
        view = views.get(version)
        if view is None or "error" in view:
            notes.append(f"Hudi {version}'s file slices not compared: "
                         f"{'not built' if view is None else view['error'][:300]}")
            continue
        hudi, ours = hudi_view(view), model_view(table, rule)
        for p in sorted(set(hudi) | set(ours)):
            for which in ("all_slices", "committed_slices", "reader_slices"):
                h = hudi.get(p, {}).get(which, {})
                m = ours.get(p, {}).get(which, {})
                for fid in sorted(set(h) | set(m)):
                    hs, ms = sorted(h.get(fid, [])), sorted(m.get(fid, []))
                    if hs != ms:
                        differences.append({"kind": "file-slices", "version": version, "view": which,
                                            "partition": p, "file_id": fid, "hudi": hs, "model": ms,
                                            "fidelity": SLICE_ROWS[(version, which)]})
    return differences, notes


def hidden_groups(views: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per release, the file groups its view holds no committed slice of (its reader hides them)."""
    return {v: sorted(fid for part in x["summary"].values() for fid in part["hidden"])
            for v, x in views.items() if "summary" in x}


def judge_deltacommits(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every write attempt and its outcome: ``commit``, ``fail`` (Hudi's exception in ``error``), ``killed``
    (by the harness: a ``kill`` of its writer follows its invoke) or None (no outcome: cut at the timeout)."""
    attempts: list[dict[str, Any]] = []
    open_: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("f") == "write" and e.get("type") == "invoke":
            open_[e["process"]] = {"process": e["process"], "batch": e["value"]["batch"], "outcome": None}
            attempts.append(open_[e["process"]])
        elif e.get("f") == "write" and e.get("type") in ("ok", "fail") and e["process"] in open_:
            a = open_.pop(e["process"])
            a["outcome"] = "commit" if e["type"] == "ok" else "fail"
            a["instant"] = e.get("instant")
            if e["type"] == "fail":
                a["error"] = e["error"].get("root_class") or e["error"]["class"]
                a["message"] = str(e["error"].get("root_message") or e["error"].get("message") or "")[:300]
        elif e.get("type") == "info" and e.get("f") == "kill" and e["process"] in open_:
            open_.pop(e["process"])["outcome"] = "killed"
    return attempts


def compare_nbcc_run(run_dir: Path, *, metadata_table: bool = False) -> dict[str, Any]:
    """The differences between Hudi's NBCC run in ``run_dir`` and the model (see the module)."""
    from backends.hudi_table_source import load_table

    run = load_writers_run(run_dir)
    events = list(run.events)
    attempts = judge_deltacommits(events)
    rest, differences, notes = judge_refusals(attempts, run.scenario.get("hudi", {}).get("plans", {}),
                                              run_dir / "table")
    more, more_notes = judge_failures(rest, storage_faults(run.metrics))
    differences, notes = differences + more, notes + more_notes
    planned = _planned_kills(run.scenario)
    kills = sum(1 for e in events if e.get("type") == "info" and e.get("f") == "kill")
    if kills != planned:
        notes.append(f"{planned} kills planned, {kills} injected: the plan did not run as the simulation did")
    views = run.file_slices or {}
    table = load_table(run_dir / "table")
    slice_diffs, slice_notes = compare_slices(table, views)
    differences += slice_diffs
    notes += slice_notes
    # a killed attempt ends at its kill: the final read must follow it (its log may open a group)
    ends = [{"f": "write", "type": "fail", "time": e["time"], "process": e["process"]}
            for e in events if e.get("type") == "info" and e.get("f") == "kill"]
    rows, row_differences, row_notes = compare_final_rows(
        [*events, *ends], run_dir / "table", metadata_table, Rule.HUDI_1_2_0,
        "NB20-NB22 (the snapshot reader: listing, latest merged slice)")
    rs_differs = [d for d in row_differences if d["kind"] == "final-rows-hudi-rs"]
    if rs_differs and rows["hudi_rs_rows"] == model_rows(run_dir / "table", metadata_table, Rule.PR_19785):
        # hudi-rs against Hudi 1.2.0's reader, not against the model: it reads the groups 1.2.0 hides
        row_differences.remove(rs_differs[0])
        row_notes.append("hudi-rs 0.5.0 reads the rows of Hudi 1.2.1's slicing (PR #19785), not 1.2.0's: "
                         f"{rs_differs[0]['hudi_rs_only']} beside Hudi 1.2.0's reader")
        rows["hudi_rs_reads_as"] = "1.2.1"
    differences += row_differences
    return {"attempts": attempts, "notes": notes + row_notes, "hidden": hidden_groups(views), **rows,
            "differences": differences, "agree": not differences}


def judge_failures(attempts: Sequence[Mapping[str, Any]],
                   faulted: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """NB4's differences among ``attempts`` (a deltacommit that failed or never ended) and notes: under
    storage faults the proxy injected (``faulted``), a failure other than a write conflict is the fault's, as
    the model's writer fails a batch on a fault, not a conflict NB4 rules out. A compaction Hudi refused for
    another executor's live heartbeat the model did not refuse (:func:`judge_refusals` takes those it did) is
    a difference whatever the faults (:data:`COMPACTION_HEARTBEAT`)."""
    differences: list[dict[str, Any]] = []
    notes: list[str] = []
    for a in attempts:
        if a["outcome"] == "fail" and COMPACTION_HEARTBEAT in str(a.get("message")):  # not a storage fault
            differences.append({"kind": "compaction-failed", "process": a["process"], "batch": a["batch"],
                                "error": a.get("error"), "message": a.get("message"),
                                "fidelity": COMPACTION_HEARTBEAT_ROW})
        elif a["outcome"] == "fail" and faulted and "WriteConflict" not in str(a.get("error")):
            notes.append(f"{a['process']} batch {a['batch']} failed under the run's storage faults: "
                         f"{a.get('error')}")
        elif a["outcome"] in ("fail", None):
            differences.append({"kind": "deltacommit-failed", "process": a["process"], "batch": a["batch"],
                                "error": a.get("error"), "fidelity": COMMIT_ROWS})
    return differences, notes


def judge_refusals(attempts: Sequence[Mapping[str, Any]], plans: Mapping[str, Sequence[Mapping[str, Any]]],
                   table: Path) -> tuple[list[Mapping[str, Any]], list[dict[str, Any]], list[str]]:
    """The attempts the model does not refuse (for NB4), and the differences and notes of those it refuses
    (:data:`REFUSALS`, by the ``model`` outcome of each batch in ``plans``, scenario.toml's ``[hudi] plans``):
    each must fail with Hudi's exception for it, and a refused clustering leave its plan requested in
    ``table``'s timeline."""
    rest: list[Mapping[str, Any]] = []
    differences: list[dict[str, Any]] = []
    notes: list[str] = []
    pending = sorted(p.name for p in (table / ".hoodie" / "timeline").glob("*.clustering.requested")
                     if not any(table.glob(f".hoodie/timeline/{p.name.split('.')[0]}_*")))
    refused = 0
    for a in attempts:
        batches = plans.get(a["process"]) or []
        model = (batches[a["batch"]].get("model") or {}) if a["batch"] < len(batches) else {}
        if model.get("outcome") not in REFUSALS:
            rest.append(a)
            continue
        exception, rows = REFUSALS[model["outcome"]]
        refused += model["outcome"] == "refused"
        if (a["outcome"] == "fail" and exception in str(a.get("error"))
                and REFUSAL_MESSAGES.get(model["outcome"], "") in str(a.get("message"))):
            notes.append(f"{a['process']} batch {a['batch']} failed with {exception}, as the model ({rows})")
        else:
            differences.append({"kind": "refusal", "process": a["process"], "batch": a["batch"],
                                "outcome": a["outcome"], "error": a.get("error"), "expected": exception,
                                "fidelity": rows})
    if len(pending) < refused:
        differences.append({"kind": "clustering-plan", "pending": pending, "expected": refused,
                            "fidelity": REFUSALS["refused"][1]})
    return rest, differences, notes


def storage_faults(metrics: Mapping[str, Any]) -> bool:
    """Whether the fault proxy injected a storage fault in the run: an action of its own count (the run's
    ``metrics.json``'s ``proxy_actions``, none in runs before it) other than a request it forwarded or
    could not (``error-503``, ``timeout``, ``lost-reply``, ...)."""
    actions = metrics.get("proxy_actions") or {}
    return any(n and a not in NOT_INJECTED for a, n in actions.items())


def _planned_kills(scenario: Mapping[str, Any]) -> int:
    """How many writer kills the run's ``scenario.toml`` (as parsed) planned."""
    return sum(1 for f in scenario.get("hudi", {}).get("faults", []) if f.get("fault") == "kill")


def judge_run(entry: Entry, run_dir: Path) -> dict[str, Any]:
    """The model's judgement of ``run_dir``, a hudi run of catalogue ``entry``: an NBCC entry's by
    :func:`compare_nbcc_run`, an OCC entry's by :func:`analyses.writers_differential.compare_run`; then the
    time-travel and incremental reads of ``reads.json`` (:func:`analyses.writers_reads.compare_reads`: the
    model's reader with 1.2.0's slicing under NBCC, the table version's rule under OCC)."""
    if isinstance(entry.config, NbccScenario):
        metadata_table, rule = entry.config.nbcc.metadata_table, Rule.HUDI_1_2_0
        result = compare_nbcc_run(run_dir, metadata_table=metadata_table)
    else:
        tl = entry.config.timeline
        metadata_table, rule = tl.metadata_table_on, None
        result = compare_run(run_dir, strategy=tl.strategy, metadata_table=metadata_table)
    reads = compare_reads(run_dir, metadata_table, rule)
    differences = result["differences"] + reads["read_differences"]
    return {**result, **reads, "differences": differences, "agree": not differences}
