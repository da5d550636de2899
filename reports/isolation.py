"""The isolation section of an OCC or NBCC run: Elle's check of the run's transactions.

A simulated OCC or NBCC run records each commit as a transaction (``txn`` events after ``run-end``);
``model/checkers/txn_from_runs.py`` maps them to rw-register histories (OCC: a ``records`` view, keys
being record keys, and a ``file-groups`` view, keys being file groups and values their base files; NBCC:
``records``), and ``model/checkers/txn_check.py`` checks each as Elle does, claiming strict
serializability (so real-time edges are inferred too): the anomalies found, one cycle or case each,
and the consistency models they rule out.

:func:`write_isolation` writes ``isolation.json`` (and each view's history as ``hcc check-history``
reads it, ``isolation-<view>.jsonl``) into the run directory with the run directory's atomic writer,
and :func:`anomaly_counts` its anomalies by kind, which the run records in ``metrics.json`` and the gate
gates (a kind its baseline did not record fails); :func:`add_isolation` adds the section to a built
report (``reports/build.py``), reading ``isolation.json`` when the run has one, else checking the history
it was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from model.checkers.txn_anomalies import known_model
from model.checkers.txn_from_runs import DEFAULT_MODELS, RunView, txn_records
from model.protocols import plugin
from model.run_format import ISOLATION, isolation_view_file
from model.runtime.history import Event
from reports.document import Report, Section
from reports.load import RunData

# the models the section names, weakest first (Elle's names)
MODELS_SHOWN = ("read-committed", "cursor-stability", "repeatable-read", "snapshot-isolation",
                "serializable", "strong-snapshot-isolation", "strict-serializable")


def models_table(not_models: Sequence[str], also_not: Sequence[str]) -> dict[str, bool]:
    """For each model of :data:`MODELS_SHOWN`: True when the anomalies found rule it out."""
    out = set(not_models) | set(also_not)
    return {m: m in out for m in MODELS_SHOWN}


def view_summary(v: RunView, models: Sequence[str] = DEFAULT_MODELS) -> dict[str, Any]:
    """One view checked: its transactions, anomalies, the models ruled out, Elle's whole answer."""
    verdict = v.check(models)
    types = [t.type for t in v.history.txns]
    return {
        "view": v.view,
        "about": v.about,
        "notes": v.notes,
        "options": {"wfr_keys": v.wfr_keys},
        "transactions": len(types),
        "ok": types.count("ok"), "fail": types.count("fail"), "info": types.count("info"),
        "result": verdict.result,
        "anomalies": verdict.anomaly_types,
        "not": verdict.not_models,
        "also_not": verdict.also_not,
        "ruled_out": models_table(verdict.not_models, verdict.also_not),
        "history": isolation_view_file(v.view),
        "recheck": (f"hcc check-history {isolation_view_file(v.view)} --model rw-register"
                    + (" --wfr-keys" if v.wfr_keys else "") + " --consistency-model " + " ".join(models)),
        "elle": verdict.to_json(v.history.locate),
        "text": verdict.text(v.history.locate),
    }


def isolation_of_run(protocol: str, events: Sequence[Event]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """``isolation.json``'s object and the views' histories (file name -> text) of a run; None for a
    protocol without transactions (lock, explore)."""
    transactions = plugin(protocol).transactions
    if transactions is None:
        return None
    views = transactions.views(list(events))
    recorded = bool(txn_records(events))
    summary = {
        "protocol": protocol,
        "recorded": recorded,
        "claimed": list(DEFAULT_MODELS),
        "sees": transactions.sees,
        "views": [view_summary(v) for v in views],
    }
    return summary, {isolation_view_file(v.view): v.jsonl() for v in views}


def write_isolation(protocol: str, events: Sequence[Event],
                    write: Callable[[str, str], None]) -> dict[str, Any] | None:
    """Write ``isolation.json`` and the views' histories with ``write`` (the run directory's writer, by file
    name); the summary written, None for a protocol without transactions."""
    found = isolation_of_run(protocol, events)
    if found is None:
        return None
    summary, files = found
    for name, text in files.items():
        write(name, text)
    write(ISOLATION, json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    return summary


# what Elle reports beside anomalies: no dependency to judge, a search cut short (not anomalies)
NOT_ANOMALIES = frozenset({"empty-transaction-graph", "cycle-search-timeout"})


def anomaly_counts(summary: dict[str, Any]) -> dict[str, dict[str, int]]:
    """``metrics.json``'s ``isolation``: for each view, each anomaly kind Elle found and its cases."""
    return {v["view"]: {k: len(v["elle"]["anomalies"].get(k) or ()) or 1
                        for k in v["anomalies"] if k not in NOT_ANOMALIES}
            for v in summary["views"]}


def load_isolation(run: RunData) -> dict[str, Any] | None:
    """The run's ``isolation.json`` (validated by ``reports/load.py``), else the check of its history."""
    if ISOLATION in run.files:
        return dict(run.files[ISOLATION])
    found = isolation_of_run(run.protocol, run.events)
    return None if found is None else found[0]


def _sentence(v: dict[str, Any]) -> str:
    head = (f"View {v['view']} ({v['about']}): {v['transactions']} transactions ({v['ok']} ok, {v['fail']} "
            f"failed, {v['info']} unknown).")
    if v["result"] == "unknown" and v["anomalies"] == ["empty-transaction-graph"]:
        return head + " No dependency between them could be inferred: nothing to say."
    real = [a for a in v["anomalies"] if a not in ("empty-transaction-graph", "cycle-search-timeout")]
    if not real:
        return head + " No anomaly: nothing found rules out strict serializability."
    also = f" (and so {', '.join(v['also_not'])})" if v["also_not"] else ""
    return head + f" Anomalies: {', '.join(real)}; ruled out: {', '.join(v['not'])}{also}."


def add_isolation(report: Report, run: RunData) -> None:
    """Append the isolation section to ``report`` (OCC and NBCC runs) and its summary to report.json."""
    if plugin(run.protocol).transactions is None:
        return
    import pandas as pd

    data = load_isolation(run)
    if data is None:
        return
    sec = Section("Isolation (Elle's check of the run's transactions)")
    if not data.get("recorded") or not data["views"]:
        sec.text.append("This run recorded no transactions (only simulated OCC runs of the commits workload "
                        "and NBCC runs do, from the version that added them).")
        report.sections.append(sec)
        report.summary["isolation"] = {"recorded": False}
        return
    sec.text.append("Each commit of the run is a transaction (what it read, what it wrote, how it ended), "
                    "checked as Elle checks an rw-register history, claiming strict serializability: the "
                    "anomalies found and the consistency models they rule out.  " + str(data["sees"]))
    for v in data["views"]:
        sec.text.append(_sentence(v))
        for note in v.get("notes") or ():
            sec.text.append(f"({v['view']}: {note})")
    sec.text.append("isolation.json holds every cycle explained step by step; "
                    + "; ".join(f"`{v['recheck']}` checks the {v['view']} view again" for v in data["views"])
                    + ".")
    sec.tables.append(("Consistency models ruled out (yes) or not (no) by the anomalies found", pd.DataFrame(
        [{"model": m, **{v["view"]: "yes" if v["ruled_out"].get(m) else "no" for v in data["views"]}}
         for m in MODELS_SHOWN if known_model(m)])))
    rows = []
    for v in data["views"]:
        for kind, cases in (v.get("elle") or {}).get("anomalies", {}).items():
            for case in cases[:1]:
                if "steps" in case:
                    why = " ".join(f"{s['from']} < {s['to']} ({s['type']}): {s['explanation']}."
                                   for s in case["steps"])
                    who = "; ".join(f"{t['name']} = txn {t['id']} by {t['process']} ({t.get('at', '')})"
                                    for t in case["txns"])
                    rows.append({"view": v["view"], "anomaly": kind, "transactions": who, "why": why})
                else:
                    rows.append({"view": v["view"], "anomaly": kind, "transactions": "",
                                 "why": str(case.get("explanation", ""))})
    if rows:
        sec.tables.append(("One cycle or case per anomaly (lines are the history's)", pd.DataFrame(rows)))
    report.sections.append(sec)
    report.summary["isolation"] = {
        v["view"]: {"anomalies": v["anomalies"], "not": v["not"], "also_not": v["also_not"],
                    "transactions": v["transactions"]} for v in data["views"]}


__all__ = ["ISOLATION", "MODELS_SHOWN", "add_isolation", "isolation_of_run", "load_isolation",
           "models_table", "view_summary", "write_isolation"]
