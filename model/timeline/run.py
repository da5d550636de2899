"""Run a timeline scenario in the simulated world (``model/runtime/sim.py``) and check its history."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.checkers.timeline import check_timeline_history
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.runtime.effects import Effect
from model.runtime.history import Event
from model.runtime.objectstore import ObjectStore
from model.runtime.sim import SimWorld, WriterContext, WriterFactory
from model.timeline.commits import writer_class
from model.timeline.config import TimelineScenario
from model.workloads.lock import LockWorkload


def timeline_writer_factory(ts: TimelineScenario,
                            txn_log: list[dict[str, Any]] | None = None) -> WriterFactory:
    """Every node runs the variant's writer (:class:`~model.timeline.hudi_writer.HudiWriter` or the
    specification's :class:`~model.timeline.v5.CowWriter`); ``txn_log`` collects their transaction
    records (none when None)."""
    scenario = ts.scenario
    cls = writer_class(ts.timeline.spec.writer)

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        start = scenario.workload.node_start_ms.get(ctx.node) if ctx.incarnation == 1 else None
        writer = cls(
            ctx.node,
            ctx.rng,
            ctx.new_id,
            ts.timeline,
            scenario.lock,
            scenario.workload,
            start_ms=start,
            txn_log=txn_log,
        )
        return writer.run()

    return make


def timeline_workload(ts: TimelineScenario, scenario: Scenario | None = None,
                      txn_log: list[dict[str, Any]] | None = None) -> LockWorkload:
    """The variant's writers on every node, the bodies of the table's files recorded (``scenario``: the run's
    own, its keys mapped under a prefix in the real world; default ``ts.scenario``; ``txn_log``: see
    :func:`timeline_writer_factory`)."""
    return LockWorkload(scenario or ts.scenario, timeline_writer_factory(ts, txn_log), ts.base_path + "/")


@dataclass(frozen=True)
class TimelineRun:
    """A finished simulated run: its history and the final store (key -> body)."""

    events: list[Event]
    objects: Mapping[str, bytes] = field(hash=False)


def simulate_timeline(
    ts: TimelineScenario, seed: int | None = None, sink: Callable[[Event], None] | None = None
) -> TimelineRun:
    """Run one simulated timeline scenario; the history and the table the writers left in the store.

    The writers' transaction records follow the run's ``run-end`` event (:func:`record_txns`)."""
    ts.validate()
    txn_log: list[dict[str, Any]] = []
    world = SimWorld(ts.scenario, seed, sink, workload=timeline_workload(ts, txn_log=txn_log))
    events = world.run()
    record_txns(world, txn_log)
    store = world.store
    assert isinstance(store, ObjectStore)
    return TimelineRun(events, {k: o.body for k, o in store.objects.items()})


def record_txns(world: SimWorld, records: list[dict[str, Any]]) -> None:
    """Append the writers' transaction records to the history, after ``run-end``: one ``txn`` event per
    record, by the harness (process ``nemesis``, as ``run-start`` and ``run-end``) at the run's end, on the
    writer's node, typed by the record's outcome (``info`` when it has none: cut off by a crash).  Added
    after the run, they leave every other event of the history as it was (the same index and bytes)."""
    for rec in records:
        outcome = rec.get("outcome") or "info"
        world.kernel.record(str(rec["process"]), "nemesis", outcome, "txn",
                            {k: v for k, v in rec.items() if k != "completing"})


def run_timeline(
    ts: TimelineScenario, seed: int | None = None, sink: Callable[[Event], None] | None = None
) -> list[Event]:
    """Run one simulated timeline scenario and return its history."""
    return simulate_timeline(ts, seed, sink).events


def check_timeline_run(ts: TimelineScenario, events: list[Event]) -> Verdict:
    """The timeline checkers on a history of ``ts`` (its ``timeline.checkers`` decide the verdict)."""
    return check_timeline_history(events, ts.base_path, ts.timeline.layout, ts.timeline.checkers,
                                  metadata_table=ts.timeline.metadata_table_on)
