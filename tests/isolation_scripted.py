"""Scripted copy-on-write writers whose runs record transactions, for the isolation tests.

As ``tests/test_occ_hudi_writer.py`` scripts the variant's writer (each operation's key and kind from a
script), with a transaction log: the run's history ends with its ``txn`` events
(``model/timeline/run.py`` ``record_txns``), so ``model/checkers/txn_from_runs.py`` maps it.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from model.checkers.txn_check import TxnVerdict
from model.checkers.txn_from_runs import occ_views
from model.config import Dist, FaultPlan, Scenario, WorkloadConfig
from model.effects import Effect
from model.history import Event
from model.sim import SimWorld, WriterContext
from model.timeline.commits import writer_class
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.run import record_txns
from model.workloads.lock import LockWorkload

Script = dict[str, Sequence[tuple[str, str]]]  # node -> [(key, kind)]


def scripted(cls: type, script: Sequence[tuple[str, str]]) -> type:
    """The variant's writer class with its operations taken from ``script`` (then it stops)."""

    def draw_op(self: Any) -> dict[str, Any]:
        key, kind = script[self.ops - 1]
        return {"key": key, "kind": kind, "value": f"{self.node}.{self.ops}"}

    return type(f"Scripted{cls.__name__}", (cls,), {"_draw_op": draw_op})


def run_scripted(tl: TimelineConfig, script: Script, starts: dict[str, int], work_ms: int = 1_000,
                 think_ms: int = 0, duration_ms: int = 30_000, seed: int = 1,
                 faults: FaultPlan | None = None) -> list[Event]:
    """Run ``script`` (every writer's operations in order, ``think_ms`` apart; a restarted writer starts
    it again) under ``faults`` and return the history, its transaction records appended."""
    workload = WorkloadConfig(writers=len(script), node_start_ms=starts,
                              work_ms=Dist("uniform", work_ms, work_ms),
                              think_ms=Dist("uniform", think_ms, think_ms))
    scenario = Scenario(name="scripted", duration_ms=duration_ms, workload=workload,
                        faults=faults or FaultPlan())
    ops = max(len(s) for s in script.values())
    ts = TimelineScenario(scenario, TimelineConfig(**{**tl.__dict__, "ops_per_writer": ops}))
    ts.validate()
    log: list[dict[str, Any]] = []

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        cls = scripted(writer_class(ts.timeline.spec.writer), script[ctx.node])
        writer = cls(ctx.node, ctx.rng, ctx.new_id, ts.timeline, scenario.lock, scenario.workload,
                     start_ms=starts.get(ctx.node), txn_log=log)
        gen: Generator[Effect, Any, Any] = writer.run()
        return gen

    world = SimWorld(scenario, seed, None, workload=LockWorkload(scenario, make, ts.base_path + "/"))
    world.run()
    record_txns(world, log)
    return list(world.kernel.events)


def checked(events: Sequence[Event]) -> dict[str, TxnVerdict]:
    """Each view of an OCC history, checked claiming strict serializability."""
    return {v.view: v.check() for v in occ_views(events)}


def anomalies(events: Sequence[Event]) -> dict[str, list[str]]:
    """The anomaly kinds of each view (``empty-transaction-graph`` left out: nothing inferred)."""
    return {view: [a for a in v.anomaly_types if a != "empty-transaction-graph"]
            for view, v in checked(events).items()}


def outcomes(events: Sequence[Event]) -> list[tuple[str, str, str]]:
    """(process, type, reason or result) of each operation, in completion order."""
    return [(e.process, e.type, str(e.value.get("reason") or e.value.get("result")))
            for e in events if e.f == "op" and e.type != "invoke"]
