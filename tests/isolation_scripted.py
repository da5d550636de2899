"""Scripted copy-on-write writers whose runs record transactions, for the isolation tests.

As ``tests/occ_scripted.py`` scripts the variant's writer (each operation's key and kind from a
script), with a transaction log: the run's history ends with its ``txn`` events
(``model/timeline/run.py`` ``record_txns``), so ``model/checkers/txn_from_runs.py`` maps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from occ_scripted import Script, scripted_world

from model.checkers.txn_check import TxnVerdict
from model.checkers.txn_from_runs import occ_views
from model.config import FaultPlan
from model.runtime.history import Event
from model.timeline.config import TimelineConfig
from model.timeline.run import record_txns


def run_scripted(tl: TimelineConfig, script: Script, starts: dict[str, int], work_ms: int = 1_000,
                 think_ms: int = 0, duration_ms: int = 30_000, seed: int = 1,
                 faults: FaultPlan | None = None) -> list[Event]:
    """Run ``script`` (every writer's operations in order, ``think_ms`` apart; a restarted writer starts
    it again) under ``faults`` and return the history, its transaction records appended."""
    log: list[dict[str, Any]] = []
    world, _ = scripted_world(tl, script, starts, work_ms=work_ms, think_ms=think_ms,
                              duration_ms=duration_ms, seed=seed, faults=faults, txn_log=log)
    world.run()
    record_txns(world, log)
    return list(world.kernel.events)


def checked(events: Sequence[Event]) -> dict[str, TxnVerdict]:
    """Each view of an OCC history, checked claiming strict serializability."""
    return {v.view: v.check() for v in occ_views(events)}


def anomalies(events: Sequence[Event]) -> dict[str, list[str]]:
    """The anomaly kinds of each view (``empty-transaction-graph`` left out: nothing inferred)."""
    return {view: [a for a in v.anomaly_types if a != "empty-transaction-graph"]
            for view, v in checked(events).items()}


def outcomes(events: Sequence[Event]) -> list[tuple[str, str, str]]:
    """(process, type, reason or result) of each operation, in completion order."""
    return [(e.process, e.type, str(e.value.get("reason") or e.value.get("result")))
            for e in events if e.f == "op" and e.type != "invoke"]
