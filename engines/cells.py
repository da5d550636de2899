"""Expand a grid into (cell, seed) tasks and run one simulated run per task, returning one row.

A row is a flat dict (the Parquet schema is :func:`row_schema`):

- ``grid``, ``scenario``, ``cell`` (index in the grid), one column per varied setting
  named by its dotted key, ``seed``;
- ``verdict``: ``ok``, ``violation`` or ``error`` (the model crashed; ``error`` holds the text);
- ``violations`` (total) and ``violations_<kind>`` per checker kind, ``findings``,
  ``first_violation_ms`` (true time at which the earliest violation was complete: its last event);
- the lock metrics of :func:`model.lock.metrics.lock_metrics` flattened: acquisitions,
  acquire-latency percentiles, retries, precondition failures, unknown outcomes, throughput, ...

Nothing in a row depends on the machine or the wall clock, so the same task gives the same
row in any process and under any engine.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from model.config import CHECKERS, Scenario
from model.lock.metrics import LockMetrics
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.runtime.history import Event
from model.runtime.sim import run_scenario
from scenarios.grid import Grid, column_value

VERDICTS = ("ok", "violation", "error")

# (column, kind) after the settings and the seed; kind is the Parquet type.
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("verdict", "str"),
    ("violations", "int"),
    *((f"violations_{k.replace('-', '_')}", "int") for k in CHECKERS),
    ("findings", "int"),
    ("first_violation_ms", "int"),
    ("acquisitions", "int"),
    ("acquisitions_per_s", "float"),
    ("acquire_latency_p50_ms", "int"),
    ("acquire_latency_p90_ms", "int"),
    ("acquire_latency_p99_ms", "int"),
    ("acquire_latency_max_ms", "int"),
    ("acquire_timeouts", "int"),
    ("retries", "int"),
    ("retries_per_acquisition", "float"),
    ("precondition_failures", "int"),
    ("unknown_outcomes", "int"),
    ("lock_lost", "int"),
    ("writes_ok", "int"),
    ("writes_rejected", "int"),
    ("writes_unknown", "int"),
    ("throughput_writes_per_s", "float"),
    ("fairness_jain", "float"),
    ("simulated_ms", "int"),
    ("error", "str"),
)


@dataclass(frozen=True)
class SweepRun:
    """One simulated run: a cell of a grid (its settings and built scenario) and a seed."""

    grid: str
    cell: int
    settings: tuple[tuple[str, Any], ...]  # (dotted key, stored column value)
    seed: int
    scenario: Scenario


def expand(grid: Grid, seeds: int | None = None, first_seed: int | None = None) -> list[SweepRun]:
    """Every (cell, seed) pair of the grid, cell-major, as tasks with their scenarios built."""
    kinds = grid.kinds()
    seed_list = grid.seed_list(seeds, first_seed)
    tasks: list[SweepRun] = []
    for i, cell in enumerate(grid.cells()):
        scenario = grid.build(cell)
        settings = tuple((k, column_value(kinds[k], v)) for k, v in cell.items())
        tasks.extend(SweepRun(grid.name, i, settings, seed, scenario) for seed in seed_list)
    return tasks


def column_names(keys: list[str]) -> list[str]:
    """The columns of a row, in order."""
    return ["grid", "scenario", "cell", *keys, "seed", *(c for c, _ in RESULT_COLUMNS)]


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    path = Path(last.filename)
    return f" (at {path.parent.name}/{path.name}:{last.lineno} in {last.name})"


def metrics_columns(m: LockMetrics, events: list[Event]) -> dict[str, Any]:
    """The metric columns of a row: the run's lock metrics ``m`` flattened, and its retries."""
    lat = m["acquire_latency_ms"]
    seconds = max(m["simulated_ms"] / 1000.0, 1e-9)
    retries = sum(1 for e in events if e.f == "try-lock" and e.type == "fail")
    return {
        "acquisitions": m["acquisitions"],
        "acquisitions_per_s": round(m["acquisitions"] / seconds, 6),
        "acquire_latency_p50_ms": lat["p50"],
        "acquire_latency_p90_ms": lat["p90"],
        "acquire_latency_p99_ms": lat["p99"],
        "acquire_latency_max_ms": lat["p100"],
        "acquire_timeouts": m["acquire_timeouts"],
        "retries": retries,
        "retries_per_acquisition": m["retries_per_acquisition"],
        "precondition_failures": m["acquire_precondition_failure"],
        "unknown_outcomes": m["unknown_outcomes"],
        "lock_lost": m["lock_lost"],
        "writes_ok": m["writes_ok"],
        "writes_rejected": m["writes_rejected"],
        "writes_unknown": m["writes_unknown"],
        "throughput_writes_per_s": m["throughput_writes_per_s"],
        "fairness_jain": m["fairness_jain"],
        "simulated_ms": m["simulated_ms"],
    }


def simulate(scenario: Scenario, seed: int) -> dict[str, Any]:
    """Run, check and measure one scenario with one seed: the result columns of a row."""
    lock = plugin("lock")  # a cell is judged and measured as every lock run is (model/protocols)
    run = ModelRun(run_scenario(scenario, seed))
    events = run.events
    verdict = lock.check(scenario, run)
    kinds = Counter(v.kind for v in verdict.violations)
    # A violation is established at its last event; the run's first violation is the earliest of those.
    first = min((max(events[i].time for i in v.events) for v in verdict.violations if v.events), default=None)
    return {
        "verdict": verdict.verdict,
        "violations": len(verdict.violations),
        **{f"violations_{k.replace('-', '_')}": kinds.get(k, 0) for k in CHECKERS},
        "findings": len(verdict.findings),
        "first_violation_ms": first,
        **metrics_columns(cast(LockMetrics, lock.metrics(scenario, run)), events),
        "error": None,
    }


def run_task(task: SweepRun,
             simulate_fn: Callable[[Scenario, int], dict[str, Any]] = simulate) -> dict[str, Any]:
    """One row for one task.  A model crash becomes a row with verdict ``error`` and the error text."""
    row: dict[str, Any] = {"grid": task.grid, "scenario": task.scenario.name, "cell": task.cell}
    row.update(task.settings)
    row["seed"] = task.seed
    try:
        result = simulate_fn(task.scenario, task.seed)
    except Exception as e:  # the model crashed: keep the cell, report the crash
        result = {c: None for c, _ in RESULT_COLUMNS}
        result["verdict"] = "error"
        result["error"] = f"{type(e).__name__}: {e}{_where(e)}"
    row.update((c, result.get(c)) for c, _ in RESULT_COLUMNS)
    return row
