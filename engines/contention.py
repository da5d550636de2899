"""Contention workloads: M Spark tasks are M writers against a real backend launched by the harness.

Each task runs one node of a lock scenario with :func:`backends.realworld.run_node` (the
real-world interpreter of the same protocol generators) for a given duration; all tasks
share a ``start_epoch`` so their true times share one zero.  The histories come back to
the driver, are merged, checked with the simulated world's checkers and measured with
:func:`model.metrics.lock_metrics`: acquisitions per second, acquire latency, precondition
failures and unknown outcomes per acquisition, and Jain's fairness between writers.

Spark runs every writer at once only if it has a core per writer: ``local[M]`` or more
(:func:`run_contention` checks ``defaultParallelism``).

Other workloads (timeline commits under OCC, NBCC deltacommits and compaction: see
:mod:`engines.contention_commits`) ship a :class:`Workload` with each task and go
through the same :func:`run_tasks`.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from backends.launchers.workdir import server_dir
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import ConfigError, Scenario
from model.history import Event
from model.metrics import lock_metrics
from model.sim import WriterFactory

START_MARGIN_S = 5.0  # the shared start lies this far in the future, so every task is ready by then


class Workload(Protocol):
    """What a task runs instead of the lock workload: built again inside the Spark task (picklable)."""

    def writer_factory(self) -> WriterFactory: ...

    @property
    def bodies_under(self) -> str | None: ...


@dataclass(frozen=True)
class WriterTask:
    """One writer (node) of a contention run, as shipped to a Spark task."""

    scenario: Scenario
    node: str
    url: str
    prefix: str
    duration_ms: int
    seed: int
    start_epoch: float
    log_dir: str
    workload: Workload | None = None  # None: the lock workload


@dataclass(frozen=True)
class ContentionResult:
    scenario: Scenario
    backend: str
    events: list[Event]
    verdict: Verdict
    metrics: dict[str, Any]


def endpoint_url(ep: Any) -> str:
    """A launched endpoint as a URL that :func:`backends.endpoint.from_url` reads back in another process."""
    if not ep.url:
        raise ConfigError("backend", ep.name, "contention runs need a server with an http endpoint")
    if ep.kind == "s3":
        return f"s3+{ep.url}/{ep.bucket}"
    if ep.kind == "gcs":
        return f"gs+{ep.url}/{ep.bucket}"
    if ep.kind == "azure":
        return f"az+{ep.url}/{ep.access_key}/{ep.bucket}"
    raise ConfigError("backend", ep.name, f"unknown endpoint kind {ep.kind}")


def run_writer(task: WriterTask) -> list[Event]:
    """The body of one Spark task: run one node against the backend until the duration is over."""
    from backends.realworld import run_node

    w = task.workload
    return run_node(task.scenario, task.node, task.url, prefix=task.prefix, duration_ms=task.duration_ms,
                    seed=task.seed, start_epoch=task.start_epoch, log_dir=Path(task.log_dir) / task.node,
                    writer_factory=w.writer_factory() if w is not None else None,
                    record_bodies_under=w.bodies_under if w is not None else None)


def _ready(i: int) -> int:
    """A no-op task: the first job of a session starts the Python workers, which Spark then reuses."""
    return i


def check_parallelism(engine: Any, writers: int) -> None:
    """Every writer needs a task slot of its own, or some would only start after others finished."""
    parallelism = engine.session.sparkContext.defaultParallelism
    if parallelism < writers:
        raise ConfigError("--master", engine.session.sparkContext.master,
                          f"runs {parallelism} tasks at once; {writers} writers need "
                          f"local[{writers}] or more")


@dataclass(frozen=True)
class TaskRun:
    """What :func:`run_tasks` brings back: merged history and, if asked, the final store under the prefix."""

    events: list[Event]
    prefix: str
    start_epoch: float
    objects: dict[str, bytes]


def run_tasks(backend: str, engine: Any, count: int,
              make_tasks: Callable[[str, str, float], list[WriterTask]], *,
              label: str, read_back: bool = False,
              prepare: Callable[[Any, str], None] | None = None) -> TaskRun:
    """Launch ``backend``, clear a fresh prefix, run ``make_tasks(url, prefix, start_epoch)`` as Spark tasks.

    ``count`` tasks first warm the Python workers up; the shared start is then a little ahead.

    The histories are merged on the driver; with ``read_back`` every object under the prefix is read
    back before the server stops (for checkers that need the final store).  ``prepare(endpoint,
    prefix)`` puts what the table holds before the run (Hudi's audit enable file) under the prefix.
    """
    from backends.realworld import clear_prefix, merge_histories, read_prefix
    from backends.registry import open_endpoint

    prefix = f"hcc-contention/{uuid.uuid4().hex[:8]}/"
    with open_endpoint(backend) as ep:
        clear_prefix(ep, prefix)
        if prepare is not None:
            prepare(ep, prefix)
        url = endpoint_url(ep)
        engine.map(list(range(count)), _ready, label="starting Python workers")
        start = time.time() + START_MARGIN_S
        tasks = make_tasks(url, prefix, start)
        histories = engine.map(tasks, run_writer, label=label)
        objects = read_prefix(ep, prefix) if read_back else {}
    return TaskRun(merge_histories(histories), prefix, start, objects)


def run_contention(scenario: Scenario, backend: str, engine: Any, *, duration_ms: int,
                   seed: int | None = None, log_dir: Path | None = None) -> ContentionResult:
    """Launch ``backend``, run every writer of ``scenario`` as one Spark task, merge, check and measure."""
    nodes = scenario.workload.nodes()
    check_parallelism(engine, len(nodes))
    seed = scenario.seed if seed is None else seed
    log_dir = log_dir or server_dir("contention")

    def make_tasks(url: str, prefix: str, start: float) -> list[WriterTask]:
        return [WriterTask(scenario, n, url, prefix, duration_ms, seed, start, str(log_dir)) for n in nodes]

    def prepare(ep: Any, prefix: str) -> None:
        from backends.realworld import map_scenario_keys, seed_audit_enable_file

        if scenario.lock.audit:  # the table has Hudi's lock audit enabled, as in the other worlds
            seed_audit_enable_file(ep, prefix, map_scenario_keys(scenario, prefix))

    events = run_tasks(backend, engine, len(nodes), make_tasks, prepare=prepare,
                       label=f"contention {scenario.name} on {backend}").events
    run_scenario = dataclasses.replace(scenario, duration_ms=duration_ms)
    return ContentionResult(run_scenario, backend, events, check_lock_history(events, scenario.checkers),
                            lock_metrics(events))


def run_spark_world(scenario: Scenario, backend: str, duration_ms: int, *, master: str | None = None,
                    seed: int | None = None, out: Path | None = None) -> dict[str, Any]:
    """Run a scenario's writers as Spark tasks against ``backend``; write the run dir; return its summary.

    This is ``hcc contention`` and ``hcc run`` of a scenario with ``world = "spark"``.
    """
    from engines.contention import run_contention
    from engines.rundir import (
        HISTORY,
        METRICS,
        SCENARIO,
        VERDICT,
        link_latest,
        marks_interrupted,
        new_run_dir,
        write_atomic,
        write_json,
    )
    from engines.spark import SparkEngine, SparkUnavailable, start_for_tasks
    from scenarios import loader

    if duration_ms <= 0:
        raise ConfigError("--duration-ms", duration_ms, "must be > 0")
    writers = scenario.workload.writers
    try:
        session = start_for_tasks(master, writers)
    except SparkUnavailable as e:
        raise ConfigError("--master", master, str(e)) from e
    out = out or new_run_dir(f"{scenario.name}-{backend}", seed)
    head = {"scenario": scenario.name, "backend": backend, "expect": scenario.expect, "seed": seed,
            "writers": writers, "duration_ms": duration_ms}
    try:
        engine = SparkEngine(session=session)
        with marks_interrupted(out, head):
            result = run_contention(scenario, backend, engine, seed=seed, duration_ms=duration_ms,
                                    log_dir=out / "logs")
    finally:
        session.stop()
    write_atomic(out / HISTORY, "".join(e.to_json() + "\n" for e in result.events))
    write_atomic(out / SCENARIO, loader.to_toml(result.scenario))
    write_json(out / METRICS, result.metrics)
    summary = {"scenario": scenario.name, "backend": backend, "expect": scenario.expect,
               "matches_expectation": result.verdict.verdict == scenario.expect, "seed": seed,
               "writers": writers, "duration_ms": duration_ms, "out": str(out),
               **result.verdict.to_dict()}
    write_json(out / VERDICT, summary)
    from reports.report import write_report

    write_report(out, write_atomic, required=False)  # every contention run of the lock gets its report
    link_latest(out)
    return {**summary, "metrics": result.metrics}
