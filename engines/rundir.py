"""Run directories: the history (streamed as it happens), verdicts, metrics, the resolved scenario, the table.

The history is appended and flushed line by line, so a run that crashes keeps
every event written so far; every other file is written atomically (a
temporary file, then a rename), so a reader never sees half of one.  A
simulated lock run also leaves its final store under ``table/`` (the lock file,
the register and Hudi's lock audit trail in ``table/.hoodie/.locks/audit/``),
and its verdict says, per violation, whether Hudi's audit validator
(``hcc check-audit`` on that trail) would have seen it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.hudi_audit import AuditFormatError, read_local, validate, violation_owners, visible_to_audit
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.history import Event
from model.metrics import lock_metrics
from model.objectstore import ObjectStore
from model.sim import SimWorld
from model.timeline.config import TimelineScenario
from model.timeline.run import check_timeline_run, run_timeline, timeline_metrics
from reports.report import write_report
from scenarios.loader import to_toml
from scenarios.timeline_loader import to_toml as timeline_toml

HISTORY = "history.jsonl"
VERDICT = "verdict.json"
METRICS = "metrics.json"
SCENARIO = "scenario.toml"
TABLE = "table"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Atomically write pretty, key-sorted JSON."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_table(out: Path, objects: Mapping[str, bytes], prefix: str = "") -> Path:
    """Write a run's final store (key -> body) under ``out/table``, keys relative to ``prefix``.

    Keys outside ``prefix`` are skipped; a key that would leave the folder raises ValueError.
    Returns the folder (the table's files as a reader such as hudi-rs or ``hcc check-audit`` sees them).
    """
    root = out / TABLE
    for key, body in sorted(objects.items()):
        if not key.startswith(prefix):
            continue
        rel = Path(key[len(prefix):].lstrip("/"))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"store key {key!r} does not name a file under the table folder")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    root.mkdir(parents=True, exist_ok=True)
    return root


@dataclass(frozen=True)
class RunResult:
    scenario: Scenario
    seed: int
    out: Path
    verdict: Verdict
    metrics: dict[str, Any]
    # Hudi's audit validator on the run's own audit trail (None: the run left no audit files).
    audit: dict[str, Any] | None = None
    audit_visible: tuple[bool, ...] = ()  # per violation: would the audit validator have seen it?

    @property
    def matches_expectation(self) -> bool:
        return self.verdict.verdict == self.scenario.expect

    def summary(self) -> dict[str, Any]:
        """The object ``hcc run --json`` prints (violations carry ``audit_visible`` when there is a trail)."""
        verdict = self.verdict.to_dict()
        for v, seen in zip(verdict["violations"], self.audit_visible, strict=False):
            v["audit_visible"] = seen
        return {
            "scenario": self.scenario.name,
            "seed": self.seed,
            "expect": self.scenario.expect,
            "matches_expectation": self.matches_expectation,
            "out": str(self.out),
            **verdict,
            "audit": self.audit,
            "metrics": self.metrics,
        }


def default_out(scenario: Scenario, seed: int) -> Path:
    return Path("out") / "runs" / f"{scenario.name}-seed{seed}"


def execute(scenario: Scenario, seed: int | None = None, out: Path | None = None,
            report: bool = True) -> RunResult:
    """Run a simulated scenario, streaming its history to ``out``, then check it and write the verdicts
    (and, with ``report``, report.html/md/json)."""
    seed = scenario.seed if seed is None else seed
    out = out or default_out(scenario, seed)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SCENARIO, to_toml(scenario))
    with open(out / HISTORY, "w") as history:

        def sink(event: Event) -> None:
            history.write(event.to_json() + "\n")
            history.flush()

        world = SimWorld(scenario, seed, sink)
        events = world.run()
    verdict = check_lock_history(events, scenario.checkers)
    metrics = lock_metrics(events)
    shutil.rmtree(out / TABLE, ignore_errors=True)  # a rerun into the same folder leaves no stale files
    assert isinstance(world.store, ObjectStore)
    table = write_table(out, {k: o.body for k, o in world.store.objects.items()},
                        prefix=scenario.lock.base_path.rstrip("/") + "/")
    audit, seen = audit_of_run(table, verdict)
    result = RunResult(scenario, seed, out, verdict, metrics, audit, seen)
    write_json(out / METRICS, metrics)
    write_json(out / VERDICT, {k: v for k, v in result.summary().items() if k != "metrics"})
    if report:
        write_report(out, write_atomic, required=False)
    return result


def audit_of_run(table: Path, verdict: Verdict) -> tuple[dict[str, Any] | None, tuple[bool, ...]]:
    """Hudi's audit validator on a run's own ``table/`` and, per violation, whether it would have seen it."""
    try:
        result = validate(read_local(table))
    except AuditFormatError:
        return None, ()
    seen = tuple(visible_to_audit(result, v.details) for v in verdict.violations)
    real = {violation_owners(v.details) for v in verdict.violations}
    false_alarms = sum(1 for pair in result.overlapping_owner_pairs() if pair not in real)
    summary = {"validator": result.result, "windows": len(result.windows), "overlaps": len(result.overlaps),
               "without_end": len(result.unfinished), "violations_visible": sum(seen),
               "violations_invisible": len(seen) - sum(seen), "overlaps_without_violation": false_alarms}
    return summary, seen


def execute_timeline(ts: TimelineScenario, seed: int | None, out: Path) -> dict[str, Any]:
    """Run, stream the history to ``out``, check, write verdict and metrics; returns the summary."""
    seed = ts.scenario.seed if seed is None else seed
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SCENARIO, timeline_toml(ts))
    with open(out / HISTORY, "w") as history:

        def sink(event: Event) -> None:
            history.write(event.to_json() + "\n")
            history.flush()

        events = run_timeline(ts, seed, sink)
    verdict = check_timeline_run(ts, events)
    metrics = timeline_metrics(events)
    summary = {
        "scenario": ts.name,
        "seed": seed,
        "expect": ts.scenario.expect,
        "matches_expectation": verdict.verdict == ts.scenario.expect,
        "out": str(out),
        **verdict.to_dict(),
    }
    write_json(out / METRICS, metrics)
    write_json(out / VERDICT, summary)
    return {**summary, "metrics": metrics}
