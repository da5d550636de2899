"""Contention workloads: M Spark tasks are M writers against a real backend launched by the harness.

Each task runs one node of a lock scenario with :func:`backends.realworld.run_node` (the
real-world interpreter of the same protocol generators) for a given duration; all tasks
share a ``start_epoch`` so their true times share one zero.  The histories come back to
the driver, are merged, checked with the simulated world's checkers and measured with
:func:`model.lock.metrics.lock_metrics`: acquisitions per second, acquire latency, precondition
failures and unknown outcomes per acquisition, and Jain's fairness between writers.

Spark runs every writer at once only if it has a core per writer: ``local[M]`` or more
(:func:`run_contention` checks ``defaultParallelism``).

Other protocols (timeline commits under OCC, NBCC deltacommits and compaction: see
:mod:`engines.contention_commits`) ship their protocol's name and run configuration with each
task, which builds the protocol's workload plug-in (``model/protocols``) inside the task,
and go through the same :func:`run_tasks`.  :mod:`engines.spark_worlds` runs each protocol this way
and writes its run directory.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from backends.launchers.workdir import server_dir
from model.checkers.verdict import Verdict
from model.config import ConfigError, Scenario
from model.lock.metrics import LockMetrics
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.runtime.history import Event

START_MARGIN_S = 5.0  # the shared start lies this far in the future, so every task is ready by then


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
    protocol: str = "lock"  # whose workload plug-in the task builds (model/protocols)
    run_config: Any = None  # that plug-in's run configuration (occ: TimelineScenario; nbcc: TablePlan)


@dataclass(frozen=True)
class ContentionResult:
    scenario: Scenario
    backend: str
    events: list[Event]
    verdict: Verdict
    metrics: LockMetrics
    objects: dict[str, bytes] = dataclasses.field(default_factory=dict)  # the prefix's final store
    prefix: str = ""


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
    from model.protocols import plugin as protocol

    plugin = protocol(task.protocol)
    return run_node(task.scenario, task.node, task.url, prefix=task.prefix, duration_ms=task.duration_ms,
                    seed=task.seed, start_epoch=task.start_epoch, log_dir=Path(task.log_dir) / task.node,
                    workload_for=lambda scenario: plugin.workload(task.run_config, scenario))


def _ready(i: int) -> int:
    """A no-op task: the first job of a session starts the Python workers, which Spark then reuses."""
    return i


def check_parallelism(engine: Any, writers: int, wait_s: float = 60.0) -> None:
    """Every writer needs a task slot of its own, or some would only start after others finished.

    On a cluster the executors register after the session starts, so their cores are waited for
    (up to ``wait_s``; ``spark.default.parallelism``, when set, is taken as it is)."""
    sc = engine.session.sparkContext
    deadline = time.monotonic() + (0 if sc.master.startswith("local") else wait_s)
    while (parallelism := sc.defaultParallelism) < writers and time.monotonic() < deadline:
        time.sleep(0.5)
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
        from backends.realworld import seed_lock_table

        seed_lock_table(ep, prefix, scenario)  # the table as the other worlds start it (audit enable file)

    ran = run_tasks(backend, engine, len(nodes), make_tasks, prepare=prepare, read_back=True,
                    label=f"contention {scenario.name} on {backend}")
    run = ModelRun(ran.events)
    run_scenario = dataclasses.replace(scenario, duration_ms=duration_ms)
    lock = plugin("lock")  # the verdict and metrics as every world's lock run gets them (model/protocols)
    return ContentionResult(run_scenario, backend, ran.events, lock.check(scenario, run),
                            cast(LockMetrics, lock.metrics(scenario, run)), ran.objects, ran.prefix)
