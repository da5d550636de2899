"""Violations, findings and verdicts shared by every checker."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Violation:
    """A safety violation with the smallest set of events (history indices) that proves it."""

    kind: str
    message: str
    events: tuple[int, ...]
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["events"] = list(self.events)
        return d


@dataclass(frozen=True)
class Verdict:
    """What the checkers found.  ``violations`` decide the verdict; ``findings`` are reported beside it."""

    violations: tuple[Violation, ...]
    findings: tuple[Violation, ...]
    # how many violations of each kind were found, where a checker keeps only the first few of a kind as
    # examples (empty: ``violations`` is all of them)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return "violation" if self.violations else "ok"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "verdict": self.verdict,
            "violations": [v.to_dict() for v in self.violations],
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.counts:
            d["violation_counts"] = dict(self.counts)
        return d
