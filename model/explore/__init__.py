"""Exhaustive exploration of the storage-based lock (RFC-91): every schedule and fault within bounds.

The real protocol generators run through the runtime kernel in a world whose scheduler
takes every decision (``world.py``, ``run.py``); a depth-first search with state hashing,
symmetry and partial-order reduction covers them (``search.py``, ``statekey.py``) and a
violation comes back as a step table and a scenario the simulated world replays exactly
(``counterexample.py``); iterative deepening over depth-bounded searches proves it shortest
(``deepen.py``).  ``explore(config)`` (``api.py``) is the one entry point, with
``config_from_dict`` for a TOML ``[explore]`` table (``protocols.py``); ``hcc explore-lock`` is the
command.
"""

from model.explore.api import explore
from model.explore.bounds import (
    ALL_REDUCTIONS,
    FAULT_KINDS,
    NO_REDUCTION,
    WHOLE_GRAPH,
    Bounds,
    Plan,
    Reductions,
)
from model.explore.deepen import Deepening, deepen
from model.explore.protocols import config_from_dict
from model.explore.search import Choice, ExploreResult, Found

__all__ = [
    "ALL_REDUCTIONS",
    "FAULT_KINDS",
    "NO_REDUCTION",
    "WHOLE_GRAPH",
    "Bounds",
    "Choice",
    "Deepening",
    "ExploreResult",
    "Found",
    "Plan",
    "Reductions",
    "config_from_dict",
    "deepen",
    "explore",
]
