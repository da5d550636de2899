"""The explorer's one entry point: :func:`explore` a configuration, get a result with its counterexample."""

from __future__ import annotations

from collections.abc import Callable

from model.explore.bounds import Bounds, ParkedRuns, Reductions
from model.explore.counterexample import replay, replays_exactly, scenario_of, step_table
from model.explore.deepen import deepen
from model.explore.level import Pool, search_levels
from model.explore.search import ExploreResult, search_bounds


def explore(config: Bounds, reductions: Reductions | None = None, *, max_states: int | None = None,
            max_seconds: float | None = None, first: bool = False, exact: bool = False,
            shortest: bool = False, shortest_seconds: float | None = None,
            progress: Callable[[int, int, int], None] | None = None,
            pool: Pool | None = None, parked: ParkedRuns | None = None) -> ExploreResult:
    """Explore every run the configuration bounds; the result (``to_json()``) has the verdict and counts.

    ``config`` comes from :class:`Bounds` or :func:`~model.explore.bounds.config_from_dict`; the
    keyword arguments override its ``reductions``, ``max_states`` and ``max_seconds``.  ``first``
    stops at the first violation (then not a shortest one); ``exact`` keeps whole state keys instead
    of 64-bit fingerprints.  For a violation the shortest counterexample is replayed: its step table
    (``result.counterexample``) and the scenario the simulated world replays it with
    (``result.scenario``; ``result.replays_exactly`` says the histories are identical).

    ``shortest``: when the search leaves the shortest counterexample unproved (it stopped at its
    budget, or partial-order reduction pruned orders of steps) or found none before its budget,
    iterative deepening (``model.explore.deepen``, budget ``shortest_seconds``, default
    ``max_seconds``) proves one shortest, or a lower bound (``result.lower_bound``).

    ``pool``: search level by level (``model.explore.level``), the levels expanded by the pool
    (``model.explore.level.InProcess``, or ``engines.explore_pool``'s processes or Spark); the same
    verdict, states and counterexample whatever the pool.  Iterative deepening stays depth-first.

    ``parked``: how the depth-first searches park runs (``model.explore.parked``; None: the search as the
    protocol's ``Bounds.parked_runs`` says, the deepening not at all); the same result either way.
    """
    red = config.reductions if reductions is None else reductions
    budget = config.max_seconds if max_seconds is None else max_seconds
    states = config.max_states if max_states is None else max_states
    if pool is None:
        res = search_bounds(config, red, max_states=states, max_seconds=budget, first=first, exact=exact,
                            progress=progress, parked=parked)
    else:
        res = search_levels(config, red, pool, max_states=states, max_seconds=budget, first=first,
                            exact=exact, progress=progress)
    if shortest and not first and not res.shortest_proved and (res.found is not None or not res.complete):
        deep = deepen(config, red, below=res.counterexample_length, exact=exact, progress=progress,
                      max_seconds=budget if shortest_seconds is None else shortest_seconds, parked=parked)
        res.deepening = deep.levels
        res.lower_bound = deep.lower_bound
        if deep.found is not None and deep.found.found is not None:
            # its path replays with ``red``: a replay reads the names of hashing and symmetry, not por
            res.found, res.verdict = deep.found.found, "violated"
            res.lower_bound = len(deep.found.found.path)
            res.shortest_proved = True
        elif res.found is not None and deep.lower_bound == len(res.found.path):
            res.shortest_proved = True  # every shallower depth was searched: none is shorter
        elif deep.exhausted and res.found is None:
            res.verdict, res.complete = "holds", True  # a level cut no path: it searched every run
    if res.found is not None:
        replayed = replay(config.plan(), res.found.path, red)
        res.scenario = scenario_of(replayed, config.decisive_checkers())
        res.replays_exactly = replays_exactly(res.scenario, replayed)[0]
        rows = step_table(replayed)
        res.counterexample = [
            {"step": f"{r['time']} ms {r['who']}: {r['what']}" + (f" {r['detail']}" if r["detail"] else ""),
             "decision": r["who"] == "explorer", **r} for r in rows]
    return res
