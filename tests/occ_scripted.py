"""Copy-on-write writers run on a script (each operation's key and kind given), for the OCC tests.

A test sets up exactly the interleaving a Java test does: every writer runs its script's operations
in order, each ``work_ms`` long and ``think_ms`` apart, started at its ``starts`` time.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from model.config import Dist, FaultPlan, Scenario, WorkloadConfig
from model.runtime.effects import Effect
from model.runtime.history import Event
from model.runtime.objectstore import ObjectStore
from model.runtime.sim import SimWorld, WriterContext
from model.timeline.commits import writer_class
from model.timeline.config import TimelineConfig, TimelineScenario
from model.workloads.lock import LockWorkload

Script = dict[str, Sequence[tuple[str, str]]]  # node -> [(key, kind)]


def scripted(cls: type, script: Sequence[tuple[str, str]]) -> type:
    """The variant's writer class with its operations taken from ``script`` (then it stops)."""

    def draw_op(self: Any) -> dict[str, Any]:
        key, kind = script[self.ops - 1]
        return {"key": key, "kind": kind, "value": f"{self.node}.{self.ops}"}

    return type(f"Scripted{cls.__name__}", (cls,), {"_draw_op": draw_op})


def scripted_world(tl: TimelineConfig, script: Script, starts: dict[str, int], work_ms: int = 1_000,
                   think_ms: int = 0, duration_ms: int = 30_000, seed: int = 1,
                   faults: FaultPlan | None = None,
                   txn_log: list[dict[str, Any]] | None = None) -> tuple[SimWorld, TimelineScenario]:
    """The simulated world of ``script`` under ``faults``, not yet run (a ``txn_log`` list given,
    the writers append their transaction records to it), and its scenario."""
    workload = WorkloadConfig(writers=len(script), node_start_ms=starts,
                              work_ms=Dist("uniform", work_ms, work_ms),
                              think_ms=Dist("uniform", think_ms, think_ms))
    scenario = Scenario(name="scripted", duration_ms=duration_ms, workload=workload,
                        faults=faults or FaultPlan())
    ops = max(len(s) for s in script.values())
    ts = TimelineScenario(scenario, TimelineConfig(**{**tl.__dict__, "ops_per_writer": ops}))
    ts.validate()

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        cls = scripted(writer_class(ts.timeline.spec.writer), script[ctx.node])
        extra = {} if txn_log is None else {"txn_log": txn_log}
        writer = cls(ctx.node, ctx.rng, ctx.new_id, ts.timeline, scenario.lock, scenario.workload,
                     start_ms=starts.get(ctx.node), **extra)
        gen: Generator[Effect, Any, Any] = writer.run()
        return gen

    return SimWorld(scenario, seed, None, workload=LockWorkload(scenario, make, ts.base_path + "/")), ts


def run_scripted(tl: TimelineConfig, script: Script, starts: dict[str, int], work_ms: int = 1_000,
                 duration_ms: int = 30_000,
                 seed: int = 1) -> tuple[list[Event], dict[str, bytes], TimelineScenario]:
    """Run ``script`` (every writer's operations in order); the history, the store and the scenario."""
    world, ts = scripted_world(tl, script, starts, work_ms=work_ms, duration_ms=duration_ms, seed=seed)
    events = world.run()
    store = world.store
    assert isinstance(store, ObjectStore)
    return events, {k: o.body for k, o in store.objects.items()}, ts


def outcomes(events: list[Event]) -> dict[str, list[tuple[str, str]]]:
    """Per writer, how each operation ended: (type, reason or result)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for e in events:
        if e.f == "op" and e.type != "invoke":
            out.setdefault(e.process, []).append(
                (e.type, str(e.value.get("reason") or e.value.get("result")))
            )
    return out


def stored(events: list[Event], suffix: str) -> list[Event]:
    """The store's object events whose key ends with ``suffix``."""
    return [e for e in events if e.process == "store" and e.f == "object" and e.value["key"].endswith(suffix)]
