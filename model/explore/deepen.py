"""Shortest counterexamples proved: iterative deepening over depth-bounded searches.

A depth-bounded search (``search_bounds(..., max_depth=D)``) follows no path past D
decisions; a decision is a point where the run had more than one option (what
``counterexample_length`` counts: a point with one option is no decision).  Searching
D = 0, 1, 2, ... each to the end proves a lower bound: when the search at D finishes
with no violation, every violation takes at least D + 1 decisions.  The first level
that finds one finds it at exactly its depth, so the counterexample is proved shortest
(even if that level then stops at its budget: what it found has at most D decisions,
and the levels below proved at least D).  When the full search already has a
counterexample of L decisions, the levels stop at L - 1: finishing them proves L.

Which reductions keep the least violating depth:

- state hashing does, with depths: a state is expanded again when it is reached with
  fewer decisions behind it than at its earlier expansion (more budget left below it),
  and not otherwise (its subtree was searched with at least as much budget).  By
  induction along a shortest path, each state on it is expanded at its least depth,
  so the violation at its end is found at its least depth.  A violation is judged on
  the history at a decision point, and what the checkers need of the past is in the
  state key (``statekey``), so it belongs to the state, as in the full search.
- symmetry does: renaming identical writers maps runs to runs with the same
  decisions, one for one.
- partial-order reduction does not, so the bounded search runs without it.  Ample and
  sleep sets keep one order of independent steps, and the number of decisions of a
  path depends on the order: a step may make another step due at the same instant,
  so one order meets a decision between three steps where the other fires them one
  by one with no choice; and a fault may be placed only on the first request of a
  class at an instant (``FaultState.first_at``), so which request of two comes first
  decides where a fault decision is.  A sleep set may prune exactly the order with
  fewer decisions.  (A full search with partial-order reduction finds a shortest path
  of the reduced graph, which is not a proof either: see ``search_bounds``.)
- dominance does not, so the bounded search runs without it: a state is left unexpanded
  when one with the same core and more faults left was expanded, at any depth.
- a lost reply on a read taken as its timeout does: the two runs take the same
  decisions, but for the lost reply's arrival at the store, which only adds one.

``tests/test_explore_lock_deepen.py`` checks on a grid of small configurations that
the least violating depth with hashing and symmetry equals the one of the plain tree
of runs (every reduction off).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model.explore.bounds import NO_PARKING, Bounds, ParkedRuns, Reductions
from model.explore.search import ExploreResult, search_bounds


@dataclass
class Deepening:
    """The outcome of iterative deepening.

    ``found`` is the result of the level that found a violation (its ``found`` is proved shortest),
    or None; ``lower_bound``: every violation takes at least this many decisions (proved);
    ``exhausted``: a level cut no path, so it searched every run (no violation anywhere: "holds").
    """

    reductions: Reductions
    found: ExploreResult | None = None
    lower_bound: int = 0
    exhausted: bool = False
    levels: list[dict[str, Any]] = field(default_factory=list)  # each with its ``seconds``


def deepen(bounds: Bounds, reductions: Reductions, *, below: int | None = None,
           max_seconds: float | None = None, exact: bool = False,
           progress: Callable[[int, int, int], None] | None = None,
           parked: ParkedRuns | None = None) -> Deepening:
    """Search depth 0, 1, ... (below ``below`` when given) until a level finds a violation or time runs out.

    Runs with ``reductions`` but partial-order reduction off (see the module doc).  ``max_seconds``
    is the budget of all levels together; a level stopped by it proves nothing and ends the deepening.
    ``parked``: how each level parks runs (``search_bounds``); None: not at all, whatever the protocol's
    default, as a level's runs end at its depth, a few decisions in, where a replay costs less than a fork
    (NBCC storage K = 1, 10 s of deepening on a loaded machine: depth 9 replaying, depth 5 parked).
    """
    red = dataclasses.replace(reductions, por=False, dominance=False)  # WHOLE_GRAPH's two switches
    parked = NO_PARKING if parked is None else parked
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    out = Deepening(red)
    depth = 0
    while below is None or depth < below:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            break
        res = search_bounds(bounds, red, max_seconds=left, exact=exact, progress=progress, max_depth=depth,
                            parked=parked)
        out.levels.append({"depth": depth, "verdict": res.verdict, "complete": res.complete,
                           "states": res.states, "runs": res.runs, "seconds": round(res.seconds, 3),
                           "found": res.counterexample_length})
        if res.found is not None:
            # at most ``depth`` decisions, and at least ``lower_bound`` (= depth: every level below finished)
            out.found = res
            break
        if not res.complete:
            break
        out.lower_bound = depth + 1
        if not res.cut:
            out.exhausted = True
            break
        depth += 1
    return out
