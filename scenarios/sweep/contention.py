"""Contention workloads: M Spark tasks are M writers against a real backend launched by the harness.

Each task runs one node of a lock scenario with :func:`backends.realworld.run_node` (the
real-world interpreter of the same protocol generators) for a given duration; all tasks
share a ``start_epoch`` so their true times share one zero.  The histories come back to
the driver, are merged, checked with the simulated world's checkers and measured with
:func:`model.metrics.lock_metrics`: acquisitions per second, acquire latency, precondition
failures and unknown outcomes per acquisition, and Jain's fairness between writers.

Spark runs every writer at once only if it has a core per writer: ``local[M]`` or more
(:func:`run_contention` checks ``defaultParallelism``).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import ConfigError, Scenario
from model.history import Event
from model.metrics import lock_metrics

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

    return run_node(task.scenario, task.node, task.url, prefix=task.prefix, duration_ms=task.duration_ms,
                    seed=task.seed, start_epoch=task.start_epoch, log_dir=Path(task.log_dir) / task.node)


def _ready(i: int) -> int:
    """A no-op task: the first job of a session starts the Python workers, which Spark then reuses."""
    return i


def run_contention(scenario: Scenario, backend: str, engine: Any, *, duration_ms: int,
                   seed: int | None = None, log_dir: Path | None = None) -> ContentionResult:
    """Launch ``backend``, run every writer of ``scenario`` as one Spark task, merge, check and measure."""
    from backends.realworld import clear_prefix, merge_histories
    from backends.registry import open_endpoint

    nodes = scenario.workload.nodes()
    parallelism = engine.session.sparkContext.defaultParallelism
    if parallelism < len(nodes):
        raise ConfigError("--master", engine.session.sparkContext.master,
                          f"runs {parallelism} tasks at once; {len(nodes)} writers need "
                          f"local[{len(nodes)}] or more")
    seed = scenario.seed if seed is None else seed
    prefix = f"hcc-contention/{uuid.uuid4().hex[:8]}/"
    log_dir = log_dir or Path("runs") / "tmp" / "contention"
    with open_endpoint(backend) as ep:
        clear_prefix(ep, prefix)
        url = endpoint_url(ep)
        engine.map(list(range(len(nodes))), _ready, label="starting Python workers")
        start = time.time() + START_MARGIN_S
        tasks = [WriterTask(scenario, n, url, prefix, duration_ms, seed, start, str(log_dir)) for n in nodes]
        histories = engine.map(tasks, run_writer, label=f"contention {scenario.name} on {backend}")
    events = merge_histories(histories)
    run_scenario = dataclasses.replace(scenario, duration_ms=duration_ms)
    return ContentionResult(run_scenario, backend, events, check_lock_history(events, scenario.checkers),
                            lock_metrics(events))
