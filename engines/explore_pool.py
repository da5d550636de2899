"""Where the explorer's level-by-level search expands its levels: worker processes, or Spark.

The search (``model/explore/level.py``) hands a :class:`~model.explore.level.Pool` each level's nodes and
merges the expansions in the nodes' order, so what a pool changes is only where and how fast:

- :class:`ProcessPool` (``hcc explore --jobs N``): N worker processes forked from this one (Linux's
  ``fork`` start method: the workers inherit the imported code), kept for the whole search; a level is
  cut into contiguous batches (:data:`BATCHES_PER_JOB` per worker) to amortise the cost of a task;
- :class:`SparkPool` (``--master URL``: ``local[*]``, ``spark://host:7077``, ``yarn``, ``k8s://...``): one
  Spark job per level, a task per batch (:data:`engines.spark.TASKS_PER_CORE` per core), the session
  started and the project's code shipped as the sweeps do (:func:`engines.spark.start_session`).

Both expand a level smaller than ``min_nodes`` in this process (a job's fixed cost would exceed it).
Each worker keeps one ``Expander`` per search (``model.explore.level.expand_batch``).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from typing import Any

from model.explore.level import Expanded, FrontierNode, InProcess, Pool, SearchJob, expand_batch

BATCHES_PER_JOB = 4  # batches per worker process and level: evens out batches of unequal cost
SPARK_MIN_NODES = 64  # a level smaller than this runs on the driver (a Spark job costs ~0.1-0.5 s)


def split(nodes: Sequence[FrontierNode], batches: int) -> list[list[FrontierNode]]:
    """``nodes`` cut into at most ``batches`` contiguous batches of nearly equal size, in order."""
    count = max(1, min(batches, len(nodes)))
    size, extra = divmod(len(nodes), count)
    out, at = [], 0
    for b in range(count):
        end = at + size + (1 if b < extra else 0)
        out.append(list(nodes[at:end]))
        at = end
    return out


def joined(batches: Sequence[Sequence[FrontierNode]], results: Sequence[list[Expanded]]) -> list[Expanded]:
    """The batches' expansions in node order, up to the first batch the deadline cut short."""
    out: list[Expanded] = []
    for batch, got in zip(batches, results, strict=True):
        out.extend(got)
        if len(got) < len(batch) or any(e.stopped for e in got):
            break
    return out


class ProcessPool:
    """Expands levels in ``jobs`` forked worker processes (see the module doc); close it (or use ``with``)."""

    def __init__(self, jobs: int, min_nodes: int | None = None) -> None:
        if jobs < 1:
            raise ValueError(f"jobs: {jobs!r} must be at least 1")
        self.jobs = jobs
        self.min_nodes = 2 * jobs if min_nodes is None else min_nodes
        self._pool: Any = None

    def expand(self, task: SearchJob, nodes: list[FrontierNode], deadline: float | None) -> list[Expanded]:
        """The expansions of ``nodes`` in order, by the workers (a small level: here)."""
        if self.jobs == 1 or len(nodes) < self.min_nodes:
            return expand_batch(task, nodes, deadline)
        if self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(self.jobs)
        batches = split(nodes, BATCHES_PER_JOB * self.jobs)
        results = self._pool.starmap(expand_batch, [(task, b, deadline) for b in batches], chunksize=1)
        return joined(batches, results)

    def close(self) -> None:
        """Stop the workers."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SparkPool:
    """Expands levels as Spark jobs (see the module doc); ``session``: an existing SparkSession to use."""

    def __init__(self, master: str, session: Any = None, min_nodes: int = SPARK_MIN_NODES) -> None:
        from engines.spark import start_session

        self._own = session is None
        self.session = session if session is not None else start_session(master, app_name="hcc-explore")
        self.min_nodes = min_nodes

    def expand(self, task: SearchJob, nodes: list[FrontierNode], deadline: float | None) -> list[Expanded]:
        """The expansions of ``nodes`` in order: one Spark job, its results collected in partition order."""
        if len(nodes) < self.min_nodes:
            return expand_batch(task, nodes, deadline)
        from engines.spark import TASKS_PER_CORE

        sc = self.session.sparkContext
        batches = split(nodes, TASKS_PER_CORE * max(1, int(sc.defaultParallelism)))
        results = sc.parallelize(batches, len(batches)).map(
            lambda batch: expand_batch(task, batch, deadline)).collect()
        return joined(batches, results)

    def close(self) -> None:
        """Stop the session if this pool started it."""
        if self._own:
            self.session.stop()

    def __enter__(self) -> SparkPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_pool(jobs: int | None, master: str | None) -> ProcessPool | SparkPool | None:
    """The pool ``--jobs`` / ``--master`` ask for (``--master`` wins), or None (the depth-first search)."""
    if master is not None:
        return SparkPool(master)
    if jobs is not None:
        return ProcessPool(jobs)
    return None


__all__ = ["BATCHES_PER_JOB", "InProcess", "Pool", "ProcessPool", "SparkPool", "joined", "make_pool", "split"]
