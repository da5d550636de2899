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
    """The counterexample as a table. The specification's explorer (cow) gives one row per state: its
    number, the writer, the action and the state after it; the model explorers (lock, OCC, NBCC) one row
    per event of the replayed run: its time, who acted, what, and whether it was one of the explorer's
    decisions."""
    if steps and "who" in steps[0]:
        return pd.DataFrame([{"event": n, "time (ms)": s.get("time"), "who": s.get("who", ""),
                              "what": s.get("what", ""), "detail": s.get("detail", ""),
                              "decision": "yes" if s.get("decision") else ""}
                             for n, s in enumerate(steps, start=1)],
                            columns=["event", "time (ms)", "who", "what", "detail", "decision"])
    return pd.DataFrame([{"state": s.get("state", n), "writer": s.get("writer", ""),
                          "action": s.get("action", ""), "step": s.get("step", ""),
                          "state after": s.get("snapshot", "")}
                         for n, s in enumerate(steps, start=1)],
                        columns=["state", "writer", "action", "step", "state after"])


def violation_text(violation: dict[str, Any]) -> str:
    """The violation in one sentence (the specification's explorer writes its own ``text``)."""
    if violation.get("text"):
        return str(violation["text"])
    replays = violation.get("replays_exactly_in_simulation")
    tail = "" if replays is None else (f"; replayed in simulation: "
                                       f"{'the same history' if replays else 'a different history'}")
    at = f" at {violation['time_ms']} ms" if violation.get("time_ms") is not None else ""
    return f"Violation [{violation.get('kind', '?')}]{at}: {violation.get('message', '')}{tail}."


def search_counts(ex: dict[str, Any]) -> str:
    """What the search counted beside its distinct states: the copy-on-write explorer its generated states
    and whether symmetry reduced them, the model explorers (lock, OCC, NBCC) their transitions and runs."""
    if ex["model"] == "cow":
        return (f"{ex['generated']} generated, symmetry reduction "
                f"{'on' if ex['symmetry'] else 'off'}")
    return f"{ex['transitions']} transitions in {ex['runs']} runs from the start"


def shown(value: Any, none: str) -> str:
    """A value as a table cell; ``none`` says what None means here; a list as its items."""
    if value is None:
        return none
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "(none)"
    return str(value)


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
        text.append(violation_text(violation))
    head = Section("Run", text)
    head.tables.append(("Configuration", pd.DataFrame(
        [(k, shown(v, "not set")) for k, v in sorted(flatten(config).items())],
        columns=["setting", "value"])))
    sections = [head]
    if steps:
        length = ex.get("counterexample_length", len(steps))
        if ex["model"] == "cow":
            sec = Section(f"Counterexample: {len(steps)} states", [
                "The shortest trace to the violation: each row is one step of one writer and the state it "
                "leads to."])
        else:
            sec = Section(f"Counterexample: {length} decisions, {len(steps)} events", [
                f"The path to the violation: {length} decisions of the explorer (start times, faults, which "
                f"task moves next) and the {len(steps)} events of the run they make, replayed in simulation "
                "(decision: yes marks the explorer's choices)."])
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
