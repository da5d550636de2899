"""The report of a model-checking run (``explore.json``: the object ``hcc explore --json`` prints for the
specification and for the model explorers of the lock, OCC and NBCC, with the same key names): the
configuration, the state counts and depth, and the counterexample as a step table (one row per state of
the shortest trace)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from model.checkers.mutex import check_overlaps
from model.protocols.explore import EXPLORE, explorer
from model.run_format import ViolationEntry
from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from reports.document import Report, Section
from reports.instants import generations, instant_spans
from reports.load import RunData
from reports.lock import HOLDERS_TEXT, holder_timeline
from reports.occ import INSTANTS_TEXT, instant_timeline, lost_updates
from reports.tables import flatten
from reports.times import NOTE, TIME, detail_text

# a root decision of the lock explorer: a node's clock offset (model/explore/run.py labels it so)
_OFFSET = re.compile(r"(\S+)'s clock offset ([+-]\d+) ms")
_INSTANT = re.compile(r"\d{17}")


def steps_table(steps: list[dict[str, Any]]) -> pd.DataFrame:
    """The counterexample as a table. The specification's explorer (cow) gives one row per state: its
    number, the writer, the action and the state after it; the model explorers (lock, OCC, NBCC) one row
    per event of the replayed run: its time, who acted, what, and whether it was one of the explorer's
    decisions."""
    if steps and "who" in steps[0]:
        return pd.DataFrame([{"event": n, TIME: s.get("time"), "who": s.get("who", ""),
                              "what": s.get("what", ""), "detail": detail_text(str(s.get("detail", ""))),
                              "decision": "yes" if s.get("decision") else ""}
                             for n, s in enumerate(steps, start=1)],
                            columns=["event", TIME, "who", "what", "detail", "decision"])
    return pd.DataFrame([{"state": s.get("state", n), "writer": s.get("writer", ""),
                          "action": s.get("action", ""), "step": s.get("step", ""),
                          "state after": s.get("snapshot", "")}
                         for n, s in enumerate(steps, start=1)],
                        columns=["state", "writer", "action", "step", "state after"])


def step_events(steps: Sequence[dict[str, Any]]) -> list[Event]:
    """The replayed run's history as a model explorer's step rows give it back (``explore.json`` keeps the
    rows, not the history): one event per row but the explorer's decisions, numbered from 0.

    What the rows do not say is filled in from what they do: the node of a writer's process is its name
    before ``/`` (``w2/heartbeat``: w2); a store write's node is the writer of the owner its lock file names
    or of the instant its key names; a fault's node is the one its value names; every node's clock reads
    ``EPOCH_MS + time`` plus its offset (the root decision ``wN's clock offset +X ms``).  Values are the
    rows' JSON (owner ids cut to 8 characters and store bodies over 80 characters digested, as the rows
    keep them; a digested body is left out)."""
    offsets = {m.group(1): int(m.group(2)) for s in steps if s.get("who") == "explorer"
               for m in [_OFFSET.search(str(s.get("detail", "")))] if m}
    rows: list[tuple[dict[str, Any], Any]] = []
    for s in steps:
        if s.get("who") == "explorer":
            continue
        detail = str(s.get("detail", ""))
        try:
            value = json.loads(detail) if detail.startswith("{") else (detail or None)
        except ValueError:
            value = detail
        if isinstance(value, dict) and str(value.get("body", "")).startswith("<"):
            value = {k: v for k, v in value.items() if k != "body"}  # a digest, not the body
        rows.append((s, value))
    writer_of: dict[str, str] = {}  # owner id or instant -> the node whose writer used it
    for s, value in rows:
        who = str(s["who"])
        if who not in ("store", "nemesis") and isinstance(value, dict):
            for k in ("owner", "instant"):
                if isinstance(value.get(k), str):
                    writer_of.setdefault(value[k], who.split("/")[0])
    events = []
    for i, (s, value) in enumerate(rows):
        who, (f, _, kind) = str(s["who"]), str(s["what"]).rpartition(" ")
        node = who.split("/")[0]
        if who == "nemesis":
            node = str(value.get("node", "-")) if isinstance(value, dict) else "-"
        elif who == "store":
            named = value.get("owner") if isinstance(value, dict) else None
            key = _INSTANT.search(str(value.get("key", ""))) if isinstance(value, dict) else None
            node = writer_of.get(str(named), writer_of.get(key.group(0) if key else "", "-"))
        clock = None if node == "-" else EPOCH_MS + int(s["time"]) + offsets.get(node, 0)
        events.append(Event(i, int(s["time"]), node, who, kind, f, value, clock))
    return events


def counterexample_figure(ex: dict[str, Any], name: str) -> tuple[str, str, bytes] | None:
    """The counterexample of a model explorer as a figure: (caption, HTML fragment, PNG).  A lock
    counterexample is the lock-holder timeline of the lock reports (its overlaps found again on the
    replayed events); an OCC or NBCC one the OCC report's instant timeline.  None for the specification's
    explorer (its steps are states, not events) or a counterexample with no events."""
    if explorer(ex["model"]).specification:
        return None
    events = step_events(ex.get("counterexample") or [])
    if not events:
        return None
    title = f"{name}: the counterexample"
    if ex["model"] == "lock":
        lanes = sorted({e.node for e in events if e.process == e.node and e.f == "acquire"})
        overlaps: list[ViolationEntry] = [
            {"kind": v.kind, "message": v.message, "events": list(v.events), "details": v.details}
            for v in check_overlaps(events)]
        fragment, png = holder_timeline("explore-holders", lanes, events, overlaps, title)
        return (f"Lock-holder timeline of the counterexample (hover a bar for its details). {HOLDERS_TEXT}",
                fragment, png)
    spans = instant_spans(events, "table", "v8")
    gens = generations(events)
    writers = sorted({s.writer for s in spans} | {g.writer for g in gens})
    end = events[-1].time + 1
    fragment, png = instant_timeline("explore-instants", writers, spans, gens, [], lost_updates(spans), end,
                                     title)
    return (f"Instant timeline of the counterexample (hover a bar for its details). {INSTANTS_TEXT}",
            fragment, png)


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
    if explorer(ex["model"]).specification:
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
        NOTE,
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
        if explorer(ex["model"]).specification:
            sec = Section(f"Counterexample: {len(steps)} states", [
                "The shortest trace to the violation: each row is one step of one writer and the state it "
                "leads to."])
        else:
            sec = Section(f"Counterexample: {length} decisions, {len(steps)} events", [
                f"The path to the violation: {length} decisions of the explorer (start times, faults, which "
                f"task moves next) and the {len(steps)} events of the run they make, replayed in simulation "
                "(decision: yes marks the explorer's choices)."])
        figure = counterexample_figure(ex, run.name)
        if figure is not None:
            sec.interactive.append(figure)
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
