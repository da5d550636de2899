"""Exhaustive and random exploration of Hudi's v5 copy-on-write commit protocol.

A Python rendering of Jack Vanlightly's TLA+ specification ``hudi/v5_spec/basic_cow``
(github.com/Vanlightly/table-formats-tlaplus): the same variables, actions and
ConsistentRead invariant, explored breadth-first like TLC.
"""

from model.cow.config import CC, CowConfig, CowConfigError
from model.cow.explorer import CowExploreResult, TraceStep, explore
from model.cow.invariants import ReadViolation, check_consistent_read, consistent_read
from model.cow.spec import CowSpec, State
from model.cow.walk import WalkResult, random_walk

__all__ = [
    "CC",
    "CowConfig",
    "CowConfigError",
    "CowSpec",
    "CowExploreResult",
    "ReadViolation",
    "State",
    "TraceStep",
    "WalkResult",
    "check_consistent_read",
    "consistent_read",
    "explore",
    "random_walk",
]
