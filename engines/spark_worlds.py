"""The Spark world: a protocol's writers as Spark tasks against a launched server, and the run directory
they leave (``hcc contention``, and ``hcc run`` of an entry with ``world = "spark"``).

:data:`SPARK_WORLDS` is the Spark world's part of each protocol that has one (``model/protocols``), keyed
by its name: ``lock`` (:mod:`engines.contention`), ``occ`` and ``nbcc`` (:mod:`engines.contention_commits`).
Every run directory is written as every other world's is (:class:`engines.rundir.RunWriter`): the merged
history, the resolved scenario, the table the run left, ``verdict.json``, ``metrics.json`` and the report.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import tomli_w

from backends.realworld import map_scenario_keys
from engines.contention import run_contention
from engines.contention_commits import NbccSettings, run_nbcc, run_occ
from engines.oracle import write_run_table
from engines.rundir import RunWriter, new_run_dir, with_audit, write_table
from engines.spark import SparkEngine, SparkUnavailable, start_for_tasks
from model.config import ConfigError
from model.nbcc.variants import variant
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.protocols.nbcc import PLAN
from model.run_format import RunHead, verdict_file
from scenarios import loader, timeline_loader
from scenarios.catalogue import Entry


@dataclass(frozen=True)
class SparkRequest:
    """What a Spark run is asked for; None: the entry's own (backend, duration) or the protocol's default."""

    backend: str | None = None
    duration_ms: int | None = None
    master: str | None = None
    seed: int | None = None
    out: Path | None = None
    writers: int | None = None  # NBCC: deltacommit writers (a compaction service is added)


class SparkWorld(Protocol):
    """One protocol's writers as Spark tasks."""

    @property
    def takes_scenario(self) -> bool:
        """Whether a run is of a catalogue entry (a scenario file), or of the request alone."""
        ...

    def run(self, entry: Entry | None, request: SparkRequest) -> dict[str, Any]:
        """Run, write the run directory, return ``verdict.json`` with the metrics (``--json``)."""
        ...

    def describe(self, summary: dict[str, Any]) -> list[str]:
        """The run in a few lines of text."""
        ...


def _session(master: str | None, tasks: int) -> Any:
    try:
        return start_for_tasks(master, tasks)
    except SparkUnavailable as e:
        raise ConfigError("--master", master, str(e)) from e


def _positive(duration_ms: int) -> int:
    if duration_ms <= 0:
        raise ConfigError("--duration-ms", duration_ms, "must be > 0")
    return duration_ms


def _head(entry_name: str, protocol: str, seed: int, expect: str, models: str, backend: str,
          writers: int, duration_ms: int) -> RunHead:
    return {"scenario": entry_name, "protocol": protocol, "world": "spark", "seed": seed, "expect": expect,
            "models": models, "backend": backend, "writers": writers, "duration_ms": duration_ms,
            "workload": protocol}


class LockSpark:
    """Every node of a lock scenario as one Spark task (:func:`engines.contention.run_contention`)."""

    takes_scenario = True

    def run(self, entry: Entry | None, request: SparkRequest) -> dict[str, Any]:
        """Run the writers, keep the table and Hudi's audit trail they left, write the run directory."""
        assert entry is not None
        scenario = entry.config
        backend = request.backend or scenario.backend
        duration_ms = _positive(request.duration_ms or scenario.duration_ms)
        writers = scenario.workload.writers
        seed = scenario.seed if request.seed is None else request.seed  # the run directory records it
        session = _session(request.master, writers)
        out = request.out or new_run_dir(f"{scenario.name}-{backend}", seed)
        head = _head(scenario.name, "lock", seed, scenario.expect, entry.models, backend, writers,
                     duration_ms)
        writer = RunWriter(out, "lock")
        try:
            engine = SparkEngine(session=session)
            with writer.marks_interrupted(head):
                result = run_contention(scenario, backend, engine, seed=seed, duration_ms=duration_ms,
                                        log_dir=out / "logs")
        finally:
            session.stop()
        writer.history_of(result.events)
        writer.scenario(loader.to_toml(result.scenario))
        # the table the run left under its prefix, and what Hudi's audit validator sees of it
        base = map_scenario_keys(scenario, result.prefix).lock.base_path
        found, audit = writer.keep_lock_table(result.objects, base, result.verdict)
        verdict = verdict_file(head, found, matches=result.verdict.verdict == scenario.expect, out=str(out))
        verdict["audit"] = audit
        writer.finish(verdict, result.metrics)
        return {**verdict, "metrics": result.metrics}

    def describe(self, summary: dict[str, Any]) -> list[str]:
        """Verdict, acquisitions, latency, per-acquisition failures, writes."""
        m = summary["metrics"]
        seconds = max(m["simulated_ms"], 1) / 1000
        lat = m["acquire_latency_ms"]
        return [
            f"contention {summary['scenario']} on {summary['backend']}: {summary['writers']} writers for "
            f"{summary['duration_ms']} ms: verdict {summary['verdict']} (expected {summary['expect']}) "
            f"-> {summary['out']}",
            *(f"  violation [{v['kind']}] {v['message']}" for v in summary["violations"][:10]),
            f"  acquisitions {m['acquisitions']} ({m['acquisitions'] / seconds:.2f}/s), per writer "
            f"{m['acquisitions_per_writer']}, Jain fairness {m['fairness_jain']}",
            f"  acquire latency p50 {lat['p50']} p90 {lat['p90']} p99 {lat['p99']} max {lat['p100']} ms",
            f"  per acquisition: precondition failures {m['acquire_precondition_failure_per_acquisition']}, "
            f"unknown outcomes {m['unknown_outcomes_per_acquisition']}, "
            f"retries {m['retries_per_acquisition']}",
            f"  writes ok {m['writes_ok']} ({m['throughput_writes_per_s']}/s)",
        ]


def _commit_lines(summary: dict[str, Any]) -> list[str]:
    m = summary["metrics"]
    lat = m["commit_latency_ms"]
    return [
        f"contention {summary['protocol']} {summary['scenario']} on {summary['backend']}: "
        f"{summary['writers']} tasks for {summary['duration_ms']} ms: verdict {summary['verdict']} "
        f"(expected {summary['expect']}) -> {summary['out']}",
        *(f"  violation [{v['kind']}] {v['message']}" for v in summary["violations"][:10]),
        f"  commits {m['commits']} ({m['commits_per_s']}/s), per writer {m['commits_per_writer']}, "
        f"Jain fairness {m['fairness_jain']}",
        f"  commit latency p50 {lat['p50']} p90 {lat['p90']} p99 {lat['p99']} max {lat['p100']} ms",
    ]


class OccSpark:
    """Every node of a timeline scenario commits as one Spark task (``engines/contention_commits.run_occ``);
    the run leaves its COPY_ON_WRITE table, in Hudi's encoding and read back by hudi-rs as in simulation."""

    takes_scenario = True

    def run(self, entry: Entry | None, request: SparkRequest) -> dict[str, Any]:
        """Run the writers, keep the table they left, write the run directory."""
        assert entry is not None
        ts = entry.config
        backend = request.backend or ts.scenario.backend
        duration_ms = _positive(request.duration_ms or ts.scenario.duration_ms)
        tasks = ts.scenario.workload.writers
        seed = ts.scenario.seed if request.seed is None else request.seed
        session = _session(request.master, tasks)
        out = request.out or new_run_dir(f"{ts.name}-{backend}", seed)
        head = _head(ts.name, "occ", seed, ts.scenario.expect, entry.models, backend, tasks, duration_ms)
        writer = RunWriter(out, "occ")
        try:
            engine = SparkEngine(session=session)
            with writer.marks_interrupted(head):
                result = run_occ(ts, backend, engine, duration_ms=duration_ms, seed=seed,
                                 log_dir=out / "logs")
        finally:
            session.stop()
        writer.history_of(result.events)
        # the scenario as it ran: its keys under the run's prefix, as the history names them
        writer.scenario(timeline_loader.to_toml(result.config))
        run = ModelRun(result.events, result.objects, result.table_prefix)
        _, table = write_run_table(out, plugin("occ").hudi_table, result.config, run, write_table,
                                   writer.write_json)
        matches = result.verdict.verdict == ts.scenario.expect
        verdict = verdict_file(head, with_audit(result.verdict), matches=matches, out=str(out))
        if table:
            verdict["table_encoding"] = table["table_encoding"]
            verdict["oracle"] = table["oracle"]
        writer.finish(verdict, result.metrics)
        return {**verdict, "metrics": result.metrics}

    def describe(self, summary: dict[str, Any]) -> list[str]:
        """Verdict, commits, latency, aborts and OCC conflicts."""
        m = summary["metrics"]
        return [*_commit_lines(summary), f"  aborts {m['aborts']} ({m['aborts_per_commit']} per commit), OCC "
                                         f"conflicts {m['conflicts']}; reasons {m['abort_reasons']}"]


class NbccSpark:
    """NBCC deltacommit writers and a compaction service as Spark tasks
    (:func:`engines.contention_commits.run_nbcc`); no scenario file: ``--writers`` and ``--seed``."""

    takes_scenario = False

    def run(self, entry: Entry | None, request: SparkRequest) -> dict[str, Any]:
        """Run the writers and the compactor, keep the table and the plan, write the run directory."""
        if request.backend is None:
            raise ConfigError("--backend", None, "an NBCC contention run needs a backend")
        backend = request.backend
        duration_ms = _positive(request.duration_ms or 30_000)
        seed = 1 if request.seed is None else request.seed
        settings = NbccSettings(writers=3 if request.writers is None else request.writers, seed=seed)
        settings.validate()
        tasks, name = settings.writers + 1, f"nbcc-{settings.writers}w"
        session = _session(request.master, tasks)
        out = request.out or new_run_dir(f"{name}-{backend}", seed)
        models = (f"{variant(settings.variant).follows}: file slicing of the final table, on this harness's "
                  "NBCC writers and compaction service on real storage")
        head = _head(name, "nbcc", seed, "ok", models, backend, tasks, duration_ms)
        writer = RunWriter(out, "nbcc")
        try:
            engine = SparkEngine(session=session)
            with writer.marks_interrupted(head):
                result = run_nbcc(settings, backend, engine, duration_ms=duration_ms, log_dir=out / "logs")
        finally:
            session.stop()
        plan = result.config
        writer.history_of(result.events)
        # what ran, as the NBCC report reads it: the [nbcc] settings, and the contention's own
        writer.scenario(tomli_w.dumps({
            "protocol": "nbcc", "name": name, "seed": seed, "expect": "ok",
            "nbcc": {"variant": plan.variant, "metadata_table": plan.metadata_table,
                     "time_generator": settings.time_generator, "writers": settings.writers,
                     "buckets": settings.buckets},
            "contention": {"duration_ms": duration_ms, **dataclasses.asdict(settings)}}))
        writer.write_json(PLAN, dataclasses.asdict(plan))
        writer.table(result.objects, prefix=result.table_prefix)
        verdict = verdict_file(head, with_audit(result.verdict), matches=result.verdict.verdict == "ok",
                               out=str(out))
        writer.finish(verdict, result.metrics)
        return {**verdict, "metrics": result.metrics}

    def describe(self, summary: dict[str, Any]) -> list[str]:
        """Verdict, deltacommits, latency, aborts and compactions."""
        m = summary["metrics"]
        return [*_commit_lines(summary), f"  aborts {m['aborts']} ({m['aborts_per_commit']} per commit); "
                                         f"reasons {m['abort_reasons']}",
                f"  compactions {m['compaction_outcomes']}"]


# The Spark world's part of each protocol that has one, keyed by the protocol's name (model/protocols).
SPARK_WORLDS: dict[str, SparkWorld] = {"lock": LockSpark(), "occ": OccSpark(), "nbcc": NbccSpark()}
