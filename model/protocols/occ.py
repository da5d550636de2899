"""The ``occ`` protocol: Hudi's timeline under optimistic concurrency control, copy-on-write commits
(``model/timeline/``: time generation, instants, Hudi 1.2.1's writer or Vanlightly's specification);
its run leaves a COPY_ON_WRITE Hudi table that the second oracle reads back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, cast

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (model/typed.py)

from model.checkers.txn_from_runs import occ_views
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.lock.metrics import Percentiles, percentile
from model.oracle import occ as oracle
from model.oracle.points import ReadPoint
from model.protocols.base import EntryHead, GateMetric, ModelRun, Plugin, Sink, Transactions, World
from model.runtime.history import Event
from model.runtime.kernel import Workload
from model.timeline.config import TimelineScenario
from model.timeline.run import check_timeline_run, simulate_timeline, timeline_workload

GATE_METRICS: Mapping[str, GateMetric] = {
    "commits": GateMetric("lower", 0.10, 0),
    "aborts_per_commit": GateMetric("higher", 0.10, 0.02),
    "conflicts_detected": GateMetric("either", 0.10, 1),
    "ops.writer_failures": GateMetric("higher", 0.10, 1),
    "time_generations.failed": GateMetric("higher", 0.10, 1),
}


class OpCounts(TypedDict):
    """Commit operations by outcome."""

    invoked: int
    committed: int
    aborted: int
    writer_failures: int  # the writer crashed or died, or the outcome is unknown


class TimeGenerations(TypedDict):
    """Instant and completion times generated, and generations that failed."""

    instant: int
    completion: int
    failed: int


class GenerationMs(TypedDict):
    """How long a time generation took, simulated ms (None: none happened)."""

    p50: int | None
    max: int | None


class OccMetrics(TypedDict):
    """``metrics.json`` of an OCC run (:func:`occ_metrics`); a Spark contention run adds the rest."""

    commits: int
    aborts: int
    aborts_per_commit: float | None
    conflicts_detected: int  # aborts whose reason is a conflict the writer's check detected
    ops: OpCounts
    abort_reasons: dict[str, int]
    time_generations: TimeGenerations
    time_generation_ms: GenerationMs
    # a Spark contention run (engines/contention_commits.py): real time, per writer
    workload: NotRequired[str]
    writers: NotRequired[list[str]]
    duration_ms: NotRequired[int]
    commits_per_s: NotRequired[float]
    commits_per_writer: NotRequired[dict[str, int]]
    fairness_jain: NotRequired[float | None]
    conflicts: NotRequired[int]  # aborts of reason occ-conflict
    conflicts_per_writer: NotRequired[dict[str, int]]
    aborts_per_writer: NotRequired[dict[str, int]]
    put_if_absent_collisions: NotRequired[int]
    commit_latency_ms: NotRequired[Percentiles]
    cc: NotRequired[str]
    variant: NotRequired[str]
    models: NotRequired[str]
    # Elle's check of the run's transactions (engines/rundir.py): view -> anomaly kind -> cases
    isolation: NotRequired[dict[str, dict[str, int]]]


def occ_metrics(events: Sequence[Event]) -> OccMetrics:
    """Counts of operations by outcome and abort reason, and of time generations (simulated ms)."""
    ops: OpCounts = {"invoked": 0, "committed": 0, "aborted": 0, "writer_failures": 0}
    reasons: dict[str, int] = {}
    gens: TimeGenerations = {"instant": 0, "completion": 0, "failed": 0}
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
                kind = e.value["kind"]
                if kind == "instant":
                    gens["instant"] += 1
                elif kind == "completion":
                    gens["completion"] += 1
                else:
                    raise ValueError(f"event {e.index}: a time generation of kind {kind!r}")
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


class OccTable:
    """The read points of an OCC run's copy-on-write table (``model/oracle/occ.py``)."""

    def points(self, config: TimelineScenario, run: ModelRun) -> list[ReadPoint]:
        """Snapshot, time travel at every completed commit, incremental reads (table version 8)."""
        tl = config.timeline
        return oracle.occ_points(run.events, run.objects, run.base, tl.layout,
                                 tl.metadata_table_on, tl.partition_count)

    def reading(self, rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """hudi-rs's rows as key -> value."""
        return oracle.hudi_reading(rows)


class OccPlugin:
    """The timeline: instants, time generation and copy-on-write commits (``model/timeline/``)."""

    name = "occ"
    config_type = TimelineScenario
    history = True
    files: Mapping[str, type] = {}
    metrics_type = OccMetrics
    gate_metrics = GATE_METRICS
    hudi_table = OccTable()
    transactions = Transactions(occ_views, (
        "Each operation of a copy-on-write writer is one transaction: it reads the key it looked up "
        "and the records of the base file it merges (its file group's version) and writes one key in "
        "one file group.  Versions are ordered only by the initial state and by what a transaction "
        "read before writing the same key (wfr-keys); no order from instant or completion times, the "
        "process order or real time is assumed.  Real-time edges (checked for strict serializability) "
        "use the operations' true invoke and completion times."))
    audit_trail = False

    def head(self, config: TimelineScenario) -> EntryHead:
        """The lock-model scenario's name, seed, expectation, description and world."""
        s = config.scenario
        world = cast(World, s.world)  # validated: sim or spark
        return EntryHead(s.name, s.seed, s.expect, s.description, world)

    def models(self, config: TimelineScenario) -> str:
        """The variant's writers (and Hudi's concurrency mode), and how readers list files."""
        return config.models()

    def run(self, config: TimelineScenario, seed: int, sink: Sink | None) -> ModelRun:
        """Run the timeline scenario in the simulated world."""
        run = simulate_timeline(config, seed, sink)
        return ModelRun(run.events, run.objects, config.base_path + "/")

    def check(self, config: TimelineScenario, run: ModelRun) -> Verdict:
        """The scenario's ``timeline.checkers``."""
        return check_timeline_run(config, run.events)

    def metrics(self, config: TimelineScenario, run: ModelRun) -> OccMetrics:
        """Commits, aborts (per reason; conflicts detected), time generations."""
        return occ_metrics(run.events)

    def workload(self, run_config: TimelineScenario, scenario: Scenario) -> Workload:
        """The variant's writers of the timeline scenario on the nodes of ``scenario``."""
        return timeline_workload(run_config, scenario)


PLUGIN: Plugin[TimelineScenario, TimelineScenario] = OccPlugin()
