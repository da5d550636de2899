"""Each simulated protocol as one plug-in: how it runs in the simulated world, its checkers, its metrics.

``lock`` (the RFC-91 lock guarding a register), ``occ`` (the timeline: time generation and
copy-on-write commits) and ``nbcc`` (a MERGE_ON_READ table under RFC-66) share one shape, so
one run-directory writer (``engines/rundir.py``) and one gate serve all three.  The metrics are
flat where the gate reads them (counts and ratios over simulated time, never wall-clock).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.history import Event
from model.kernel import Workload
from model.metrics import lock_metrics, percentile
from model.nbcc.config import NbccScenario
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_layout import load_table
from model.nbcc.sim_table import TablePlan, nbcc_workload, run_table
from model.nbcc.slicing import Rule
from model.nbcc.views import group_view
from model.objectstore import ObjectStore
from model.sim import SimWorld
from model.timeline.config import TimelineScenario
from model.timeline.run import check_timeline_run, simulate_timeline, timeline_workload
from model.workloads.lock import LockWorkload

Sink = Callable[[Event], None]


@dataclass(frozen=True)
class Simulated:
    """A finished simulated run: its history and the final store (key -> body) under ``table_prefix``."""

    events: list[Event]
    objects: Mapping[str, bytes] = field(hash=False)
    table_prefix: str = ""


class Plugin(Protocol):
    """What the run-directory writer and the Spark contention tasks need from a protocol."""

    name: str

    def workload(self, run_config: Any, scenario: Scenario) -> Workload: ...

    def simulate(self, config: Any, seed: int, sink: Sink | None) -> Simulated: ...

    def check(self, config: Any, sim: Simulated) -> Verdict: ...

    def metrics(self, config: Any, sim: Simulated) -> dict[str, Any]: ...


def _objects(world: SimWorld) -> dict[str, bytes]:
    store = world.store
    assert isinstance(store, ObjectStore)
    return {k: o.body for k, o in store.objects.items()}


class LockPlugin:
    """The RFC-91 lock (``model/storage_lock.py``) guarding a register."""

    name = "lock"

    def workload(self, run_config: Any, scenario: Scenario) -> Workload:
        """The lock workload of ``scenario`` (``run_config`` is not used)."""
        return LockWorkload(scenario)

    def simulate(self, config: Scenario, seed: int, sink: Sink | None) -> Simulated:
        """Run the scenario in the simulated world."""
        world = SimWorld(config, seed, sink)
        events = world.run()
        return Simulated(events, _objects(world), config.lock.base_path.rstrip("/") + "/")

    def check(self, config: Scenario, sim: Simulated) -> Verdict:
        """Overlap, stale write, lost update (and the findings) of the lock checkers."""
        return check_lock_history(sim.events, config.checkers)

    def metrics(self, config: Scenario, sim: Simulated) -> dict[str, Any]:
        """Hudi's lock metrics (``model/metrics.py``)."""
        return lock_metrics(sim.events)


class OccPlugin:
    """The timeline: instants, time generation and copy-on-write commits (``model/timeline/``)."""

    name = "occ"

    def workload(self, run_config: TimelineScenario, scenario: Scenario) -> Workload:
        """CowWriters of the timeline scenario on the nodes of ``scenario``."""
        return timeline_workload(run_config, scenario)

    def simulate(self, config: TimelineScenario, seed: int, sink: Sink | None) -> Simulated:
        """Run the timeline scenario in the simulated world."""
        run = simulate_timeline(config, seed, sink)
        return Simulated(run.events, run.objects, config.base_path + "/")

    def check(self, config: TimelineScenario, sim: Simulated) -> Verdict:
        """The scenario's ``timeline.checkers``."""
        return check_timeline_run(config, sim.events)

    def metrics(self, config: TimelineScenario, sim: Simulated) -> dict[str, Any]:
        """Commits, aborts (per reason; conflicts detected), time generations."""
        return occ_metrics(sim.events)


def occ_metrics(events: list[Event]) -> dict[str, Any]:
    """Counts of operations by outcome and abort reason, and of time generations (simulated ms)."""
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
    commits = ops["committed"]
    return {
        "commits": commits,
        "aborts": ops["aborted"],
        "aborts_per_commit": round(ops["aborted"] / commits, 4) if commits else None,
        "conflicts_detected": sum(n for r, n in reasons.items() if r.endswith("conflict")),
        "ops": ops,
        "abort_reasons": dict(sorted(reasons.items())),
        "time_generations": gens,
        "time_generation_ms": {"p50": percentile(gen_ms, 50), "max": max(gen_ms) if gen_ms else None},
    }


class NbccPlugin:
    """A MERGE_ON_READ table under NBCC (``model/nbcc/sim_table.py``), readers slicing by ``nbcc.rule``."""

    name = "nbcc"

    def workload(self, run_config: TablePlan, scenario: Scenario) -> Workload:
        """The NBCC writers and compaction service of a plan (``run_config``) on the nodes of ``scenario``."""
        return nbcc_workload(run_config, scenario)

    def simulate(self, config: NbccScenario, seed: int, sink: Sink | None) -> Simulated:
        """Draw the plan from ``seed`` and run it in the simulated world."""
        plan = config.plan(seed)
        run = run_table(plan, seed, sink)
        return Simulated(list(run.events), run.objects, plan.base + "/")

    def check(self, config: NbccScenario, sim: Simulated) -> Verdict:
        """Slices, compaction plans, durability, readers' views and incremental reads under the rule."""
        return check_history(sim.events, sim.objects, sim.table_prefix.rstrip("/"), config.nbcc.slicing_rule)

    def metrics(self, config: NbccScenario, sim: Simulated) -> dict[str, Any]:
        """Table size, and how many file groups with committed rows a reader of the final table cannot see."""
        return nbcc_metrics(sim.objects, sim.table_prefix.rstrip("/"), config.nbcc.slicing_rule,
                            config.nbcc.metadata_table)


def nbcc_metrics(objects: Mapping[str, bytes], base: str, rule: Rule, metadata_table: bool) -> dict[str, Any]:
    """Instants, compactions, file groups, log files; ``hidden_groups``: the file groups with a
    committed log that a reader of the final table does not see at all under ``rule`` and the run's
    listing (Hudi's committed-slice check hiding a group, issue #19774; 0 for a correct reader)."""
    table = load_table(objects, base)
    ct = table.timeline.completion_time
    instants = table.timeline.instants
    listed = table.listed_groups(metadata_table)
    hidden = sum(1 for g in listed if any(ct(lf.instant) is not None for lf in g.log_files)
                 and group_view(g, ct, rule, None, metadata_table) is None)
    return {
        "instants": len(instants),
        "completed": len(table.timeline.completed()),
        "compactions": sum(1 for i in instants if i.requested_action == "compaction"),
        "file_groups": len(table.groups),
        "log_files": sum(len(g.log_files) for g in table.groups),
        "hidden_groups": hidden,
    }


PLUGINS: dict[str, Plugin] = {p.name: p for p in (LockPlugin(), OccPlugin(), NbccPlugin())}
