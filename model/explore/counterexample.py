"""A path found by the search, replayed: its step table, and the scenario that replays it in simulation.

The search keeps paths as :class:`~model.explore.search.Choice` lists whose step
decisions name steps as in the state keys (nodes renamed by symmetry).  :func:`replay`
runs the path again and translates each decision back to this run's own step; the
run it returns knows every step it fired and every fault it injected, so
:func:`scenario_of` writes the scenario the simulated world replays exactly: the
root decisions become ``workload.node_start_ms``, ``clocks`` and crashes; the faults a
fault plan (one-request error rules, windows of errors, triggered pauses); the order
of the steps and the latencies of the hops a ``schedule`` (``model.config.Schedule``).
:func:`replays_exactly` checks that the simulated world records the same history.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from model.checkers.verdict import Violation
from model.config import Schedule
from model.explore.bounds import ALL_REDUCTIONS, Plan, Reductions
from model.explore.run import End, Run, StepInfo, Stop, Unbounded
from model.explore.search import Choice, judge
from model.runtime.history import Event

UNFIRED = 1_000_000_000  # the rank of a timer that never fired in the explored run (it never counts)


class ReplayError(Exception):
    """A path could not be followed (a step it names is not there): a bug, or a hash collision."""


class _Translate:
    """The driver of a replay: takes the path's decisions, mapping named steps to this run's steps."""

    def __init__(self, path: Sequence[Choice], symmetry: bool) -> None:
        self.path = list(path)
        self.symmetry = symmetry
        self.pos = 0
        self.names: dict[str, str] = {}  # this run's names -> the path's (identity until a hashed point)

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        if self.pos >= len(self.path):
            raise Stop()
        choice = self.path[self.pos]
        self.pos += 1
        if choice.kind != kind:
            raise ReplayError(f"decision {self.pos}: the path takes a {choice.kind} decision, "
                              f"the run has a {kind} decision")
        if kind != "step" or choice.step is None:
            return choice.index
        if choice.anchor and self.symmetry:
            _key, self.names = run.key()
        names = self.names
        matches = [i for i, s in enumerate(steps) if (s.renamed(names) if names else s) == choice.step]
        if not matches:
            raise ReplayError(f"decision {self.pos}: no step {choice.step.sid} "
                              f"among {[s.sid for s in steps]}")
        return matches[0]


@dataclass
class Replayed:
    """A path run again: the run, its history, and what the checkers say of it."""

    run: Run
    events: list[Event]
    violation: Violation | None
    findings: list[Violation]
    ended: bool  # the run reached its end (else it stopped where the path ends)


def replay(plan: Plan, path: Sequence[Choice], reductions: Reductions = ALL_REDUCTIONS) -> Replayed:
    """Run ``path`` again and judge the history where it ends."""
    driver = _Translate(path, reductions.symmetry and reductions.hashing)
    run = Run(plan, (), driver, reductions, record=True)
    try:
        end = run.go()
    except Unbounded as e:
        events = list(run.events)
        return Replayed(run, events, Violation("liveness", str(e), (), {"guard_ms": run.guard}), [], False)
    events = list(run.events)
    ended = isinstance(end, End)
    violation, findings = judge(plan, events, run.objects, run.gap(run.now()),
                                run.stuck() if ended else ())
    return Replayed(run, events, violation, findings, ended)


# ---- the scenario ----------------------------------------------------------------------------------


def schedule_of(run: Run) -> Schedule:
    """The ranks and latencies that make the simulated world take the run's steps in its order."""
    world = run.world
    ranks = [UNFIRED + i for i in range(world.made)]
    latencies = [0] * world.hops
    for order, fired in enumerate(world.fired):
        step = fired.pending
        ranks[step.created] = order
        if step.latency_slot is not None:
            latencies[step.latency_slot] = fired.time - step.lo
    return Schedule(tuple(ranks), tuple(latencies))


def scenario_of(replayed: Replayed, checkers: tuple[str, ...]) -> Any:
    """The scenario that replays ``replayed`` in the simulated world (``hcc run``), as far as it went: the
    protocol's own (``Bounds.replay_scenario``: a lock scenario, a timeline one, an NBCC one).

    It keeps the explored run's name (the history's first event names it).
    """
    run = replayed.run
    sc = run.scenario
    root_faults = sc.faults
    plan = run.fault_plan()
    faults = replace(plan, crashes=root_faults.crashes)
    # the simulated run stops where the explored one did (just after, when it stopped at a decision)
    until = run.now() + (0 if replayed.ended else run.tick)
    verdict = "violation" if replayed.violation is not None else "ok"
    what = replayed.violation.message if replayed.violation is not None else "no violation"
    about = f"found by hcc explore --protocol {run.bounds.protocol} ({run.bounds.describe()}): {what}"
    world = replace(sc, description=about, duration_ms=until, expect=verdict, checkers=checkers,
                    faults=faults, schedule=schedule_of(run))
    return run.bounds.replay_scenario(world)


def replays_exactly(scenario: Any, replayed: Replayed) -> tuple[bool, int | None]:
    """Run ``scenario`` (a :func:`scenario_of`) in the simulated world; True when it records the explored
    history (and where not)."""
    sim = replayed.run.bounds.simulate(scenario)
    mine = [e.to_json() for e in replayed.events]
    theirs = [e.to_json() for e in sim]
    if not replayed.ended:
        theirs = theirs[:len(mine)]
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return False, i
    return len(mine) == len(theirs), None if len(mine) == len(theirs) else min(len(mine), len(theirs))


# ---- the step table ----------------------------------------------------------------------------------


LONG = 80  # a string in an event's value longer than this (a store body: Avro, JSON, properties) is digested


def abbreviate(value: Any) -> Any:
    """``value`` with every string longer than :data:`LONG` characters replaced by its length and a digest
    (``<742 chars sha256:1a2b3c4d5e6f>``), in nested lists and dicts too: a counterexample's step table
    stays readable, and two bodies that differ still read differently.  The whole bodies are in the
    history of the scenario that replays the path (``hcc explore --out FILE``, then ``hcc run FILE``)."""
    if isinstance(value, str) and len(value) > LONG:
        return f"<{len(value)} chars sha256:{hashlib.sha256(value.encode()).hexdigest()[:12]}>"
    if isinstance(value, dict):
        return {k: abbreviate(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [abbreviate(v) for v in value]
    return value


def _short(value: Any) -> str:
    if not isinstance(value, dict):
        return "" if value is None else str(abbreviate(value))
    keep = {k: (v[:8] if isinstance(v, str) and len(v) == 36 else abbreviate(v)) for k, v in value.items()
            if k not in ("version", "token", "attempts", "ambiguous")}
    return json.dumps(keep, separators=(",", ":"))


def step_table(replayed: Replayed) -> list[dict[str, Any]]:
    """The history of a replayed path with the explorer's decisions between its events.

    Each row: ``time`` (true ms), ``who`` (process), ``what`` (the event, or ``decide`` with the
    option taken) and ``detail`` (the event's value, store bodies abbreviated by :func:`abbreviate`: the step
    table printed by ``hcc explore`` and its ``--json`` counterexample alike).
    """
    rows: list[dict[str, Any]] = []
    decisions = list(replayed.run.decisions)
    d = 0
    for i, e in enumerate(replayed.events):
        while d < len(decisions) and decisions[d].at <= i:
            rows.append({"time": decisions[d].time, "who": "explorer", "what": f"decide {decisions[d].kind}",
                         "detail": decisions[d].label})
            d += 1
        if e.f == "run-start":
            continue
        rows.append({"time": e.time, "who": e.process, "what": f"{e.f} {e.type}", "detail": _short(e.value)})
    for dec in decisions[d:]:
        rows.append({"time": dec.time, "who": "explorer", "what": f"decide {dec.kind}", "detail": dec.label})
    return rows


def key_of(run: Run) -> Hashable:
    """The run's state key now (for tests)."""
    return run.key()[0]
