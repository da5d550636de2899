"""Check a lock-model history: which checkers decide the verdict, which only report."""

from __future__ import annotations

from collections.abc import Sequence

from model.checkers.mutex import check_lost_updates, check_overlaps, check_stale_writes, find_dangling_locks
from model.checkers.verdict import Verdict, Violation
from model.config import CHECKERS
from model.runtime.history import Event


def check_lock_history(events: Sequence[Event], checkers: Sequence[str] = CHECKERS) -> Verdict:
    """Run every lock checker; violations of the selected checkers decide, the rest are findings.

    Checkers: ``overlap`` (two holders at once), ``stale-write`` (a write under
    a lock that had passed on), ``lost-update`` (the register).  Dangling locks
    are always findings (liveness, not safety).
    """
    by_checker: dict[str, list[Violation]] = {
        "overlap": check_overlaps(events),
        "stale-write": check_stale_writes(events),
        "lost-update": check_lost_updates(events),
    }
    violations: list[Violation] = []
    findings: list[Violation] = find_dangling_locks(events)
    for name, found in by_checker.items():
        (violations if name in checkers else findings).extend(found)
    return Verdict(tuple(violations), tuple(findings))
