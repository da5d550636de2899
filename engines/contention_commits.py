"""Contention workloads of table commits: Spark tasks as writers of a timeline under OCC, or under NBCC.

Both run through :func:`engines.contention.run_tasks` (one Spark task per node, a
shared start, histories merged on the driver) with the simulated world's writers, interpreted
on real threads against a launched backend by :func:`backends.realworld.run_node`:

- ``occ``: a timeline scenario (a catalogue entry of protocol ``occ``): every node runs the
  variant's writer (``timeline.variant``: :class:`model.timeline.hudi_writer.HudiWriter`, Hudi
  1.2.1's commit path, by default; :class:`model.timeline.v5.CowWriter` for the specification),
  committing copy-on-write under the scenario's ``timeline.cc``.  The table files' bodies are
  recorded from the client's view, and the timeline checkers
  (:func:`model.timeline.run.check_timeline_run`) judge the merged history.  Metrics: commits,
  conflicts the OCC check detected (each one an abort), aborts by reason and per commit, commits
  per second, per-writer commits and Jain's fairness, the variant and whose behaviour it is.
- ``nbcc``: writers ``w1..wN`` append deltacommits of a merge-on-read table under RFC-66's
  non-blocking concurrency control, and ``w{N+1}`` runs the compaction service
  (:mod:`model.nbcc.sim_table`).  After the run the driver reads the final store back and the
  NBCC checkers (:func:`model.nbcc.sim_checks.check_history`) judge it.  Metrics: deltacommits
  per second, per writer and their fairness, aborted deltacommits (writers do not block each
  other, so ~0), table-lock timeouts (the lock is held only to draw a time and create its file),
  compactions.

Both write Hudi tables (COPY_ON_WRITE for OCC, MERGE_ON_READ for NBCC) under the run's prefix.  The
specification's monotonic time generator works here as in simulation: its counter is an object on
the server, taken by compare-and-swap (:mod:`model.timeline.timegen`).  Not modelled here: wire faults (no
fault proxy).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from backends.launchers.workdir import server_dir
from engines.contention import WriterTask, check_parallelism, run_tasks
from model.checkers.verdict import Verdict
from model.config import ConfigError
from model.lock.metrics import jain_index, percentiles
from model.nbcc.config import NbccConfig, NbccScenario
from model.nbcc.sim_table import BatchPlan, CompactionSlot, TablePlan, WriterPlan
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.protocols.nbcc import NbccMetrics
from model.protocols.occ import OccMetrics
from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from model.timeline.config import TimelineScenario


@dataclass(frozen=True)
class CommitsResult:
    """A finished commit-contention run: its history, the checkers' verdict and the metrics, the final store
    with the table under ``table_prefix``, and what ran (``config``: OCC's timeline scenario with its keys
    under the run's prefix, NBCC's plan)."""

    workload: str
    name: str
    backend: str
    events: list[Event]
    verdict: Verdict
    metrics: Mapping[str, Any]
    objects: dict[str, bytes] = field(default_factory=dict)
    table_prefix: str = ""
    config: Any = None


def _per_writer(writers: list[str], counts: dict[str, int]) -> dict[str, int]:
    return {w: counts.get(w, 0) for w in writers}


# ---- OCC: copy-on-write commits of a timeline scenario --------------------------------------------


def judge_occ(ts: TimelineScenario, events: list[Event], writers: list[str],
              duration_ms: int) -> tuple[Verdict, OccMetrics]:
    """An OCC run's verdict and metrics as the occ protocol gives every world's run (``model/protocols``),
    and the metrics of the contention (:func:`occ_metrics`)."""
    occ, run = plugin("occ"), ModelRun(events)
    base = cast(OccMetrics, occ.metrics(ts, run))
    return occ.check(ts, run), occ_metrics(base, events, writers, duration_ms)


def occ_metrics(base: OccMetrics, events: list[Event], writers: list[str], duration_ms: int) -> OccMetrics:
    """The protocol's metrics of the run (``base``) and, per writer in real time: commits, OCC conflicts
    (aborts), aborts, throughput, fairness, commit latency."""
    commits: dict[str, int] = {}
    aborts: dict[str, int] = {}
    conflicts: dict[str, int] = {}
    started: dict[str, int] = {}
    commit_ms: list[int] = []
    for e in events:
        if e.f == "op" and e.process in writers:
            if e.type == "invoke":
                started[e.process] = e.time
            elif e.type == "ok":
                commits[e.process] = commits.get(e.process, 0) + 1
                commit_ms.append(e.time - started.get(e.process, e.time))
            elif e.type == "fail":
                aborts[e.process] = aborts.get(e.process, 0) + 1
                if e.value.get("reason") == "occ-conflict":
                    conflicts[e.process] = conflicts.get(e.process, 0) + 1
    n_commits = sum(commits.values())
    reasons = base["abort_reasons"]
    return {
        **base,
        "workload": "occ",
        "writers": writers,
        "duration_ms": duration_ms,
        "commits_per_s": round(n_commits / max(duration_ms, 1) * 1000, 3),
        "commits_per_writer": _per_writer(writers, commits),
        "fairness_jain": jain_index([commits.get(w, 0) for w in writers]),
        "conflicts": sum(conflicts.values()),
        "conflicts_per_writer": _per_writer(writers, conflicts),
        "aborts_per_writer": _per_writer(writers, aborts),
        "put_if_absent_collisions": sum(n for r, n in reasons.items() if r.endswith("precondition_failed")),
        "commit_latency_ms": percentiles(commit_ms),
    }


def run_occ(ts: TimelineScenario, backend: str, engine: Any, *, duration_ms: int, seed: int | None = None,
            log_dir: Path | None = None) -> CommitsResult:
    """Every node of timeline scenario ``ts`` commits as one Spark task on ``backend``; check, measure."""
    from backends.realworld import map_scenario_keys

    ts.validate()
    nodes = ts.scenario.workload.nodes()
    check_parallelism(engine, len(nodes))
    seed = ts.scenario.seed if seed is None else seed
    log_dir = log_dir or server_dir("contention")
    mapped: list[TimelineScenario] = []

    def make_tasks(url: str, prefix: str, start: float) -> list[WriterTask]:
        scenario = map_scenario_keys(dataclasses.replace(ts.scenario, duration_ms=duration_ms), prefix)
        mapped[:] = [TimelineScenario(scenario, ts.timeline)]
        return [WriterTask(scenario, n, url, prefix, duration_ms, seed, start, str(log_dir), "occ", mapped[0])
                for n in nodes]

    run = run_tasks(backend, engine, len(nodes), make_tasks, read_back=True,
                    label=f"occ {ts.name} on {backend}")
    verdict, measured = judge_occ(mapped[0], run.events, nodes, duration_ms)
    metrics: OccMetrics = {**measured, "cc": ts.timeline.cc, "variant": ts.timeline.variant,
                           "models": ts.models()}
    return CommitsResult("occ", ts.name, backend, run.events, verdict, metrics, run.objects,
                         mapped[0].base_path + "/", mapped[0])


# ---- NBCC: deltacommits of a merge-on-read table, and the compaction service ------------------------


@dataclass(frozen=True)
class NbccSettings:
    """An NBCC contention run: ``writers`` deltacommit writers and one compaction service."""

    writers: int = 3
    buckets: int = 2
    keys: int = 8
    compaction_every_ms: int = 3_000
    time_generator: str = "skew-adjusting"
    variant: str = "hudi"  # whose slicing and defaults run (model/nbcc/variants.py)
    seed: int = 1

    def validate(self) -> None:
        """Raise ConfigError naming the first bad setting."""
        if not 1 <= self.writers <= 15:
            raise ConfigError("--writers", self.writers, "must be between 1 and 15 (plus the compactor)")
        if self.keys < 1:
            raise ConfigError("keys", self.keys, "must be >= 1")
        if self.compaction_every_ms < 0:
            raise ConfigError("compaction_every_ms", self.compaction_every_ms, "must be >= 0 (0: none)")


def nbcc_plan(s: NbccSettings, duration_ms: int, start_epoch: float, base: str) -> TablePlan:
    """Random batches to keep every writer busy past the end, compactions every ``compaction_every_ms``.

    The compaction service's slots are times of its clock since the model's epoch; on real clocks
    that epoch is far behind, so the slots are shifted to start at ``start_epoch``.
    """
    rng = random.Random(f"{s.seed}/nbcc-plan")
    batches = max(1, duration_ms // 40)  # more than a writer can commit: the run's end cuts them off
    writers = tuple(
        WriterPlan(tuple(
            BatchPlan(tuple((rng.randrange(s.keys), rng.randrange(1_000_000))
                            for _ in range(rng.randint(1, 3))),
                      work_ms=rng.randint(10, 100), think_ms=rng.randint(0, 50))
            for _ in range(batches)))
        for _ in range(s.writers))
    shift = int(start_epoch * 1000) - EPOCH_MS
    every = s.compaction_every_ms
    slots = tuple(CompactionSlot(shift + at, work_ms=50) for at in range(every, duration_ms - 500, every)) \
        if every > 0 else ()
    plan = TablePlan(writers, slots, s.buckets, s.time_generator, duration_ms=duration_ms, base=base,
                     variant=s.variant)
    plan.validate()
    return plan


def nbcc_metrics(events: list[Event], writers: list[str], compactor: str, duration_ms: int,
                 table: NbccMetrics) -> NbccMetrics:
    """The final table's counts (``table``: :func:`model.protocols.nbcc.nbcc_metrics`) and, in real time:
    deltacommits per second and per writer, aborts (~0 under NBCC), lock timeouts, compaction outcomes."""
    commits: dict[str, int] = {}
    aborts: dict[str, int] = {}
    reasons: dict[str, int] = {}
    timeouts: dict[str, int] = {}  # "lock-wait": a try_lock gave up after wait_time_ms (and is retried)
    started: dict[str, int] = {}
    commit_ms: list[int] = []
    compactions = {"committed": 0, "failed": 0, "planned": 0, "nothing_to_compact": 0}
    for e in events:
        if e.f == "lock-wait":
            timeouts[e.node] = timeouts.get(e.node, 0) + 1
        elif e.f == "deltacommit" and e.process in writers:
            if e.type == "invoke":
                started[e.process] = e.time
            elif e.type == "ok":
                commits[e.process] = commits.get(e.process, 0) + 1
                commit_ms.append(e.time - started.get(e.process, e.time))
            else:  # fail, or info: the completed file could not be created
                aborts[e.process] = aborts.get(e.process, 0) + 1
                reason = str(e.value.get("reason", e.value.get("status")))
                reasons[reason] = reasons.get(reason, 0) + 1
        elif e.f == "compaction-plan":
            compactions["planned" if e.type == "ok" else "nothing_to_compact"] += 1
        elif e.f == "compaction":
            compactions["committed" if e.type == "ok" else "failed"] += 1
    n = sum(commits.values())
    return {
        **table,
        "workload": "nbcc",
        "writers": writers,
        "compactor": compactor,
        "duration_ms": duration_ms,
        "commits": n,
        "commits_per_s": round(n / max(duration_ms, 1) * 1000, 3),
        "commits_per_writer": _per_writer(writers, commits),
        "fairness_jain": jain_index([commits.get(w, 0) for w in writers]),
        "aborts": sum(aborts.values()),
        "aborts_per_writer": _per_writer(writers, aborts),
        "aborts_per_commit": round(sum(aborts.values()) / n, 3) if n else None,
        "abort_reasons": dict(sorted(reasons.items())),
        "lock_timeouts_per_node": dict(sorted(timeouts.items())),
        "commit_latency_ms": percentiles(commit_ms),
        "compaction_outcomes": compactions,
    }


def nbcc_config(settings: NbccSettings, plan: TablePlan) -> NbccScenario:
    """The nbcc protocol's configuration of a contention run: its settings and the plan that ran (what the
    protocol's checks and metrics read: the variant's slicing rule, the metadata table)."""
    return NbccScenario(name=f"nbcc-{settings.writers}w", seed=settings.seed, nbcc=NbccConfig(
        writers=settings.writers, buckets=settings.buckets, variant=plan.variant,
        metadata_table=plan.metadata_table, time_generator=settings.time_generator), plan_given=plan)


def run_nbcc(settings: NbccSettings, backend: str, engine: Any, *, duration_ms: int,
             log_dir: Path | None = None) -> CommitsResult:
    """NBCC writers and the compaction service as Spark tasks against ``backend``; check the final store."""
    settings.validate()
    nodes = [f"w{i}" for i in range(1, settings.writers + 2)]
    check_parallelism(engine, len(nodes))
    log_dir = log_dir or server_dir("contention")
    plans: list[TablePlan] = []

    def make_tasks(url: str, prefix: str, start: float) -> list[WriterTask]:
        plan = nbcc_plan(settings, duration_ms, start, prefix + "table")
        plans[:] = [plan]
        scenario = plan.scenario(settings.seed)
        return [WriterTask(scenario, n, url, prefix, duration_ms, settings.seed, start, str(log_dir), "nbcc",
                           plan) for n in nodes]

    run = run_tasks(backend, engine, len(nodes), make_tasks, read_back=True,
                    label=f"nbcc {settings.writers} writers on {backend}")
    plan = plans[0]
    # judged as every world's nbcc run is (model/protocols): readers slice as the variant's Hudi does
    nbcc, config = plugin("nbcc"), nbcc_config(settings, plan)
    ran = ModelRun(run.events, run.objects, plan.base + "/")
    verdict = nbcc.check(config, ran)
    table = cast(NbccMetrics, nbcc.metrics(config, ran))
    metrics = {**nbcc_metrics(run.events, nodes[:-1], plan.compactor_node, duration_ms, table),
               "objects": len(run.objects)}
    return CommitsResult("nbcc", f"nbcc-{settings.writers}w", backend, run.events, verdict, metrics,
                         run.objects, plan.base + "/", plan)
