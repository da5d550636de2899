"""Run a timeline scenario in the simulated world (``model/sim.py``) and check its history."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.checkers.timeline import check_timeline_history
from model.checkers.verdict import Verdict
from model.effects import Effect
from model.history import Event
from model.objectstore import ObjectStore
from model.sim import SimWorld, WriterContext, WriterFactory
from model.timeline.commits import CowWriter
from model.timeline.config import TimelineScenario


def timeline_writer_factory(ts: TimelineScenario) -> WriterFactory:
    """Every node runs a :class:`CowWriter` (the monotonic generator's counter is in the store)."""
    scenario = ts.scenario

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        start = scenario.workload.node_start_ms.get(ctx.node) if ctx.incarnation == 1 else None
        writer = CowWriter(
            ctx.node,
            ctx.rng,
            ctx.new_id,
            ts.timeline,
            scenario.lock,
            scenario.workload,
            start_ms=start,
        )
        return writer.run()

    return make


@dataclass(frozen=True)
class TimelineRun:
    """A finished simulated run: its history and the final store (key -> body)."""

    events: list[Event]
    objects: Mapping[str, bytes] = field(hash=False)


def simulate_timeline(
    ts: TimelineScenario, seed: int | None = None, sink: Callable[[Event], None] | None = None
) -> TimelineRun:
    """Run one simulated timeline scenario; the history and the table the writers left in the store."""
    ts.validate()
    world = SimWorld(
        ts.scenario, seed, sink, timeline_writer_factory(ts), record_bodies_under=ts.base_path + "/"
    )
    events = world.run()
    store = world.store
    assert isinstance(store, ObjectStore)
    return TimelineRun(events, {k: o.body for k, o in store.objects.items()})


def run_timeline(
    ts: TimelineScenario, seed: int | None = None, sink: Callable[[Event], None] | None = None
) -> list[Event]:
    """Run one simulated timeline scenario and return its history."""
    return simulate_timeline(ts, seed, sink).events


def check_timeline_run(ts: TimelineScenario, events: list[Event]) -> Verdict:
    """The timeline checkers on a history of ``ts`` (its ``timeline.checkers`` decide the verdict)."""
    return check_timeline_history(events, ts.base_path, ts.timeline.layout, ts.timeline.checkers)


def timeline_metrics(events: list[Event]) -> dict[str, Any]:
    """Counts of operations by outcome and abort reason, and of time generations."""
    ops = {"invoked": 0, "committed": 0, "aborted": 0, "writer_failures": 0}
    reasons: dict[str, int] = {}
    gens = {"instant": 0, "completion": 0, "failed": 0}
    gen_started: dict[str, int] = {}
    gen_ms: list[int] = []
    for e in events:
        if e.f == "op":
            if e.type == "invoke":
                ops["invoked"] += 1
            elif e.type == "ok":
                ops["committed"] += 1
            elif e.type == "fail":
                ops["aborted"] += 1
                reason = str(e.value.get("reason"))
                reasons[reason] = reasons.get(reason, 0) + 1
            else:
                ops["writer_failures"] += 1
        elif e.f == "time":
            if e.type == "invoke":
                gen_started[e.process] = e.time
            elif e.type == "ok":
                gens[e.value["kind"]] += 1
                gen_ms.append(e.time - gen_started.get(e.process, e.time))
            elif e.type == "fail":
                gens["failed"] += 1
    gen_ms.sort()
    return {
        "ops": ops,
        "abort_reasons": dict(sorted(reasons.items())),
        "time_generations": gens,
        "time_generation_ms": {
            "p50": gen_ms[len(gen_ms) // 2] if gen_ms else None,
            "max": gen_ms[-1] if gen_ms else None,
        },
    }
