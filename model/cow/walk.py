"""Random walks through the same transition relation, for configurations too large to enumerate.

The walk takes its choices from a callable (a seeded generator, or Hypothesis'
data), so it stays pure and reproducible: ``choose(n)`` returns an index in
``range(n)`` among the enabled transitions, in the fixed order of
:meth:`CowSpec.successors`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model.cow.config import CowConfig
from model.cow.invariants import ReadViolation, consistent_read
from model.cow.render import describe_transition
from model.cow.spec import CowSpec, State


@dataclass(frozen=True)
class WalkResult:
    """The steps taken, the final state and the first violation met (if any).

    ``length`` counts states, the initial one included, like a TLC trace.
    """

    steps: tuple[str, ...]
    final: State
    violation: ReadViolation | None

    @property
    def length(self) -> int:
        """Number of states visited, the initial one included."""
        return len(self.steps) + 1


def random_walk(cfg: CowConfig, choose: Callable[[int], int], max_steps: int = 200) -> WalkResult:
    """Walk from the initial state, checking ConsistentRead after every step.

    Stops at the first violation, at a state without successors, or after ``max_steps``.
    """
    spec = CowSpec(cfg)
    s = spec.initial()
    steps: list[str] = []
    violation = consistent_read(s)
    while violation is None and len(steps) < max_steps:
        succ = spec.successors(s)
        if not succ:
            break
        i = choose(len(succ))
        if not 0 <= i < len(succ):
            raise ValueError(f"choose({len(succ)}) returned {i}, outside the enabled transitions")
        action, w, t = succ[i]
        steps.append(describe_transition(s, action, w, t, cfg.salt))
        s = t
        violation = consistent_read(s)
    return WalkResult(tuple(steps), s, violation)
