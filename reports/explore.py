"""The report of a model-checking run (``explore.json``: the object ``hcc explore --json`` prints for the
specification and for the model explorers of the lock, OCC and NBCC, with the same key names): the
configuration, the state counts and depth, and the counterexample as a step table (one row per state of
the shortest trace)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from model.protocols.explore import EXPLORE
from reports.document import Report, Section
from reports.load import RunData
from reports.tables import flatten


def steps_table(steps: list[dict[str, Any]]) -> pd.DataFrame:
    """The counterexample, one row per state: its number, the writer, the action, what it did and the
    state after it."""
    return pd.DataFrame([{"state": s.get("state", n), "writer": s.get("writer", ""),
                          "action": s.get("action", ""), "step": s.get("step", ""),
                          "state after": s.get("snapshot", "")}
                         for n, s in enumerate(steps, start=1)],
                        columns=["state", "writer", "action", "step", "state after"])


def search_counts(ex: dict[str, Any]) -> str:
    """What the search counted beside its distinct states: the copy-on-write explorer its generated states
    and whether symmetry reduced them, the model explorers (lock, OCC, NBCC) their transitions and runs."""
    if ex["model"] == "cow":
        return (f"{ex['generated']} generated, symmetry reduction "
                f"{'on' if ex['symmetry'] else 'off'}")
    return f"{ex['transitions']} transitions in {ex['runs']} runs from the start"


def shown(value: Any, none: str) -> str:
    """A value as a table cell; ``none`` says what None means here."""
    return none if value is None else str(value)


def build_explore_report(run: RunData) -> Report:
    """Every section of the report of an explorer run."""
    ex = run.files[EXPLORE]
    steps = ex.get("counterexample") or []
    config = ex["config"]
    violation = ex.get("violation")
    matches = run.outcome == run.expect
    text = [
        f"Exhaustive exploration {run.name}: verdict {ex['verdict']} (run verdict {run.outcome}, expected "
        f"{run.expect}: {'as expected' if matches else 'NOT as expected'}).",
        f"{ex['states']} distinct states, {search_counts(ex)}, depth {ex['depth']}, {ex['seconds']} s; "
        f"search {'complete' if ex['complete'] else 'stopped before the end (a budget)'}.",
    ]
    if violation:
        text.append(str(violation.get("text") or violation))
    head = Section("Run", text)
    head.tables.append(("Configuration", pd.DataFrame(
        [(k, shown(v, "not set")) for k, v in sorted(flatten(config).items())],
        columns=["setting", "value"])))
    sections = [head]
    if steps:
        sec = Section(f"Counterexample: {len(steps)} states", [
            f"The shortest trace to the violation ({ex.get('counterexample_length', len(steps))} states): "
            "each row is one step of one writer and the state it leads to."])
        sec.tables.append(("Steps", steps_table(steps)))
        if violation:
            sec.tables.append(("Violation", pd.DataFrame(
                [(k, shown(v, "none")) for k, v in sorted(flatten(violation).items())],
                columns=["field", "value"])))
        sections.append(sec)
    if run.verdict["violations"]:
        sections.append(Section("Violations", tables=[("Violations", pd.DataFrame(
            [{"kind": v["kind"], "message": v["message"]} for v in run.verdict["violations"]]))]))
    summary = {
        "protocol": "explore",
        "scenario": run.name,
        "seed": run.seed,
        "expect": run.expect,
        "verdict": run.outcome,
        "matches_expectation": matches,
        "explorer_verdict": ex["verdict"],
        "states": ex["states"],
        "generated": ex.get("generated"),
        "depth": ex["depth"],
        "config": config,
        "counterexample_length": ex.get("counterexample_length"),
        "violation": violation,
        "steps": len(steps),
    }
    return Report(f"hcc report: {run.name} (explorer)", sections, summary)
