"""The search level by level: the same verdicts, states and shortest paths in one process or in many.

The depth-first search (``search.py``) follows one path at a time.  This one takes the hashed states
breadth-first, a *level* at a time: a level's nodes (a state key, the path of option indices that
reached it first, the renaming of nodes its key used) can be expanded in any order and anywhere (this
process, worker processes: ``engines/explore_pool.py``, Spark tasks), because expanding a node is a
function of the node alone (:class:`Expander`).  Expanding a node runs its path again from the start
(generators cannot be copied), then explores every option left at its point, following the decisions
below it that have no state key (a fault, a pause, a root decision; a step with one option left)
depth-first, as the depth-first search does, to the next hashed points (the arrivals), the ends of
runs and the violations.  An expansion returns 64-bit fingerprints of the state keys, a digest that is
the same in every process (:func:`model.explore.statekey.fingerprint`: this process, forked workers and
Spark executors alike), or whole keys when the search is ``exact``.

The coordinator (:class:`LevelSearch`) merges a level's expansions in the order of its nodes (never in
the order they finish): a key's first arrival in that order is its node's path; edges between hashed
points are recorded as the depth-first search records them, so the shortest counterexample comes from
the same Dijkstra (``search.shortest_path``); no key is expanded twice in one level.  So the verdict,
the distinct states and the counterexample do not depend on how many workers ran, nor where.

Reductions: state hashing and symmetry as in the depth-first search.  Partial-order reduction:

- ample sets are chosen at a node with the node names of its state key (a function of the state, up to
  the renamings that leave the key unchanged), below a node as the depth-first search chooses them;
- sleep sets are kept, deterministically: the sleep set a node is expanded with is the intersection
  of the sleep sets of all its arrivals in the level (canonical: nodes renamed as in each arrival's
  key); a state met again in a later level is expanded again only for the steps of its ample set that
  are awake now and were not explored (Godefroid's sleep sets with state caching).

What remains redundant, and its cost: no state is expanded twice in one level, but every expansion runs
its node's path again from the start, where the depth-first search goes on with the run that reached a
state for its first option: one run more per expanded node (fenced N = 2, K = 1: 10,424 runs against
5,830), so one process takes 1.3-1.9 times the depth-first search's time on the lock table's rows
(``benchmarks/bench_explore_parallel.py``).  Parking runs at their arrivals would save it only in the
process that made them (a generator cannot be sent), and forking a run costs more than a replay.

With partial-order reduction on, the distinct states are not the depth-first search's (which states a
reduced search meets depends on its order); with it off both count the reachable states, and a complete
search's Dijkstra path is a shortest one, as the depth-first search proves it.  Depth bounds (iterative
deepening, ``deepen.py``) stay with the depth-first search.
"""

from __future__ import annotations

import dataclasses
import pickle
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from model.checkers.verdict import Violation
from model.explore.bounds import ALL_REDUCTIONS, Bounds, Reductions
from model.explore.run import Run, StepInfo, Stop
from model.explore.search import (
    ROOT,
    Bad,
    Choice,
    DepthFirst,
    Edges,
    ExploreResult,
    Found,
    Frame,
    ample,
    judge,
    shortest_path,
)
from model.explore.statekey import fingerprint

Names = tuple[tuple[str, str], ...]  # a renaming of nodes (concrete -> as in the state key), as pairs
Segment = tuple[Choice, ...]


@dataclass(frozen=True)
class SearchJob:
    """What every expansion of one search shares (shipped to workers once per batch).

    ``exact``: the coordinator wants whole keys; else every worker returns each key's 64-bit fingerprint
    (:func:`model.explore.statekey.fingerprint`, the same digest in every process) instead of the key.
    """

    bounds: Bounds
    reductions: Reductions
    exact: bool = False


@dataclass(frozen=True)
class FrontierNode:
    """A state to expand: the path that reached it (option indices from the start; empty: the start of the
    search), the renaming its key used (None at the start), its sleep set and the steps explored there
    before (both canonical: nodes named as in the key)."""

    path: tuple[int, ...]
    names: Names | None = None
    asleep: frozenset[StepInfo] = frozenset()
    explored: frozenset[StepInfo] = frozenset()


@dataclass(frozen=True)
class Arrival:
    """A hashed decision point reached below a node: its whole key, the decisions from the node to it,
    the renaming its key used and its sleep set (canonical)."""

    key: Hashable
    segment: Segment
    names: Names
    asleep: frozenset[StepInfo]


@dataclass
class Expanded:
    """What expanding one node gave: the options explored at it and its ample set (canonical), the arrivals
    in the order met, violations and findings (segment from the node, violation, time), and counts."""

    explored: frozenset[StepInfo] = frozenset()
    ample: frozenset[StepInfo] | None = None
    arrivals: list[Arrival] = field(default_factory=list)
    fingerprinted: bool = False  # the arrivals' keys are fingerprints (see ``SearchJob.exact``)
    bad: list[tuple[Segment, Violation, int]] = field(default_factory=list)
    findings: list[tuple[Segment, Violation, int]] = field(default_factory=list)
    runs: int = 0
    points: int = 0
    transitions: int = 0
    depth: int = 0
    reached: int = 0
    stopped: bool = False  # the deadline passed: the expansion is not whole


@dataclass
class _Frame(Frame):
    """A decision point below the node (``names``: the node's key's, else concrete names)."""

    at_node: bool  # the node's own point (its steps are named by its key)

    @property
    def anchored(self) -> bool:
        return self.at_node


class Expander(DepthFirst[_Frame]):
    """Expands nodes in this process: the ``Driver`` of the runs of one expansion (see the module doc)."""

    def __init__(self, task: SearchJob) -> None:
        self.task = task
        self.plan = task.bounds.plan()
        self.reductions = task.reductions
        self.identity = {n: n for n in self.plan.nodes}
        self.deadline: float | None = None

    def expand_all(self, nodes: Sequence[FrontierNode], deadline: float | None) -> list[Expanded]:
        """Expand ``nodes`` in order; stops after an expansion the deadline (``time.time()``) cut short."""
        self.deadline = deadline
        out: list[Expanded] = []
        for node in nodes:
            out.append(self.expand(node))
            if out[-1].stopped:
                break
        return out

    def expand(self, node: FrontierNode) -> Expanded:
        """Expand one node."""
        self.node = node
        self.out = out = Expanded()
        self.stack = []
        self.trail = []  # the decisions from the node's point
        self.asleep = frozenset()
        self.runs = self.transitions = self.depth = self.reached = 0
        self.depth_base = len(node.path)
        self.at_node = node.names is not None
        self._walk(node.path)
        out.runs, out.transitions, out.depth = self.runs, self.transitions, self.depth
        out.reached = self.reached
        return out

    def _stopped(self) -> bool:
        return self.out.stopped

    def _record(self, violation: Violation | None, found: list[Violation], now: int) -> None:
        segment = tuple(self.trail)
        if violation is not None:
            self.out.bad.append((segment, violation, now))
        self.out.findings.extend((segment, f, now) for f in found)

    def _push(self, frame: _Frame) -> int:
        if not frame.todo:
            raise Stop()
        self.stack.append(frame)
        return self._take(frame)

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        """A decision past the replayed path: the node's own point, or a point below it."""
        out = self.out
        out.points += 1
        self.reached = max(self.reached, run.now())
        if self.deadline is not None and time.time() > self.deadline:
            out.stopped = True
            raise Stop()
        prefix = tuple(run.taken)
        if self.at_node:
            self.at_node = False
            return self._push(self._at_node(prefix, steps))
        if self.task.bounds.judge_at_points:
            violation, found = judge(self.plan, run.events, run.objects, run.gap(run.now()))
            self._record(violation, found, run.now())
            if violation is not None:
                raise Stop()
        names = self.identity if self.node.names is None else dict(self.node.names)
        if kind != "step":
            return self._push(_Frame(prefix, len(self.trail), kind, list(range(options)), steps, [],
                                     self.asleep, [], names, False))
        red = self.reductions
        if red.por:  # chosen on concrete names, as the depth-first search does below a hashed point
            todo = [i for i in ample(steps, self.identity) if steps[i] not in self.asleep]
        else:
            todo = list(range(len(steps)))
        if red.hashing and len(todo) > 1:  # a hashed point: an arrival, expanded in a later level
            full, at = run.key()
            asleep = frozenset(s.renamed(at) for s in self.asleep)
            out.arrivals.append(Arrival(full, tuple(self.trail), tuple(sorted(at.items())), asleep))
            raise Stop()
        return self._push(_Frame(prefix, len(self.trail), kind, todo, steps, [], self.asleep, [], names,
                                 False))

    def _at_node(self, prefix: tuple[int, ...], steps: list[StepInfo]) -> _Frame:
        """The node's own point: its ample set (by the key's names), less what sleeps or was explored."""
        node = self.node
        assert node.names is not None
        names = dict(node.names)
        back = {v: k for k, v in names.items()}
        canon = [s.renamed(names) for s in steps]
        base = ample(steps, names) if self.reductions.por else list(range(len(steps)))
        self.out.ample = frozenset(canon[i] for i in base)
        todo = [i for i in base if canon[i] not in node.asleep and canon[i] not in node.explored]
        self.out.explored = frozenset(canon[i] for i in todo)
        asleep = frozenset(s.renamed(back) for s in node.asleep)
        return _Frame(prefix, 0, "step", todo, steps, canon, asleep, [], names, True)


_cached: dict[bytes, Expander] = {}


def expand_batch(task: SearchJob, nodes: Sequence[FrontierNode], deadline: float | None) -> list[Expanded]:
    """Expand ``nodes`` with this process's :class:`Expander` of ``task`` (made once per process and task):
    what worker processes and Spark tasks run."""
    ident = pickle.dumps(task)  # Bounds compare without their base scenario: the bytes tell tasks apart
    expander = _cached.get(ident)
    if expander is None:
        _cached.clear()
        expander = _cached[ident] = Expander(task)
    out = expander.expand_all(nodes, deadline)
    if not task.exact:
        for exp in out:
            exp.arrivals = [dataclasses.replace(a, key=fingerprint(a.key)) for a in exp.arrivals]
            exp.fingerprinted = True
        return out
    # equal keys as one object: pickled once per batch
    interned: dict[Hashable, Hashable] = {}
    for exp in out:
        exp.arrivals = [a if interned.setdefault(a.key, a.key) is a.key else
                        dataclasses.replace(a, key=interned[a.key]) for a in exp.arrivals]
    return out


class Pool(Protocol):
    """Expands a level's nodes, here or elsewhere; returns their expansions in the nodes' order (fewer when
    one was cut short by the deadline)."""

    def expand(self, task: SearchJob, nodes: list[FrontierNode], deadline: float | None) -> list[Expanded]:
        """The expansions of ``nodes``, in order."""
        ...


class InProcess:
    """The :class:`Pool` of this process alone (``--jobs 1``)."""

    jobs = 1

    def expand(self, task: SearchJob, nodes: list[FrontierNode], deadline: float | None) -> list[Expanded]:
        """Expand every node here, in order."""
        return expand_batch(task, nodes, deadline)


@dataclass
class _Seen:
    ample: frozenset[StepInfo] | None = None  # the ample set of its first expansion (None: not expanded)
    explored: frozenset[StepInfo] = frozenset()


@dataclass
class _Next:
    """A key's first arrival in a level (its path and names) and the intersection of its sleep sets."""

    path: tuple[int, ...]
    names: Names
    asleep: frozenset[StepInfo]


class LevelSearch:
    """The coordinator (see the module doc)."""

    def __init__(self, task: SearchJob, pool: Pool, *, max_states: int | None = None,
                 max_seconds: float | None = None, first: bool = False, exact: bool = False,
                 progress: Callable[[int, int, int], None] | None = None) -> None:
        self.task, self.pool = task, pool
        self.max_states, self.first, self.exact, self.progress = max_states, first, exact, progress
        self.deadline = None if max_seconds is None else time.time() + max_seconds
        self.seen: dict[Hashable, _Seen] = {}
        self.edges: Edges = {}
        self.bad: list[Bad] = []
        self.finding_edges: dict[str, list[Bad]] = {}
        self.counts = {"runs": 0, "points": 0, "transitions": 0, "depth": 0, "reached": 0}
        self.halt = ""
        self.levels: list[dict[str, Any]] = []

    def run(self) -> str:
        """Search level by level to the end (or a budget); the verdict."""
        por = self.task.reductions.por
        level: list[tuple[Hashable, FrontierNode]] = [(ROOT, FrontierNode(()))]
        while level and not self.halt:
            started = time.perf_counter()
            expansions = self.pool.expand(self.task, [n for _k, n in level], self.deadline)
            if len(expansions) < len(level) or any(e.stopped for e in expansions):
                self.halt = "incomplete"
            before = len(self.seen)
            nxt: dict[Hashable, _Next] = {}
            fps: dict[int, Hashable] = {}  # id of a key object -> its fingerprint (keys interned per batch)
            for (key, node), exp in zip(level, expansions, strict=False):
                self._merge(key, node, exp, nxt, fps)
            level = []
            for key, n in nxt.items():
                known = self.seen[key]
                if known.ample is not None and not (known.ample - n.asleep - known.explored):
                    continue  # expanded before, and nothing of its ample set is newly awake
                level.append((key, FrontierNode(n.path, n.names, n.asleep, known.explored)))
            self.levels.append({"nodes": len(expansions), "new": len(self.seen) - before,
                                "seconds": round(time.perf_counter() - started, 3)})
            if self.progress is not None:
                self.progress(self.counts["points"], len(self.seen), self.counts["runs"])
            if self.first and self.bad:
                self.halt = "violated"
            if not por:
                assert all(self.seen[k].ample is None for k, _n in level), "a state expanded twice"
        if self.bad:
            return "violated"
        return self.halt or "holds"

    def _merge(self, key: Hashable, node: FrontierNode, exp: Expanded, nxt: dict[Hashable, _Next],
               fps: dict[int, Hashable]) -> None:
        """One expansion into the search: counts, violations, the node's explored steps, its arrivals."""
        for name in self.counts:
            mine = getattr(exp, name)
            self.counts[name] = max(self.counts[name], mine) if name in ("depth", "reached") \
                else self.counts[name] + mine
        self.bad.extend((key, seg, v, at) for seg, v, at in exp.bad)
        for seg, v, at in exp.findings:
            self.finding_edges.setdefault(v.kind, []).append((key, seg, v, at))
        if key is not ROOT:
            known = self.seen[key]
            known.explored = known.explored | exp.explored
            if known.ample is None:
                known.ample = exp.ample
        edges = self.edges.setdefault(key, [])
        for a in exp.arrivals:
            fp = a.key if exp.fingerprinted else fps.get(id(a.key))
            if fp is None:  # a 64-bit fingerprint, as the depth-first search keeps
                fp = fps[id(a.key)] = a.key if self.exact else fingerprint(a.key)
            edges.append((fp, a.segment))
            have = nxt.get(fp)
            if have is not None:
                have.asleep &= a.asleep
                continue
            if fp not in self.seen:
                if self.max_states is not None and len(self.seen) >= self.max_states:
                    self.halt = "incomplete"
                    continue
                self.seen[fp] = _Seen()
            elif not self.task.reductions.por:
                continue  # expanded (or to be) already, and nothing sleeps without partial-order reduction
            path = (*node.path, *(c.index for c in a.segment))
            nxt[fp] = _Next(path, a.names, a.asleep)

    def result(self, seconds: float) -> ExploreResult:
        """The outcome, as the depth-first search gives it (``search_bounds``)."""
        red = self.task.reductions
        verdict = "violated" if self.bad else (self.halt or "holds")
        found = None
        if self.bad:
            found = shortest_path(self.edges, self.bad if not self.first else self.bad[:1])
        findings: dict[str, Found] = {}
        for kind, bad in self.finding_edges.items():
            f = shortest_path(self.edges, bad)
            assert f is not None  # every expanded node was reached along the edges
            findings[kind] = f
        complete = not self.halt
        proved = found is not None and complete and not red.por and not self.first
        c = self.counts
        return ExploreResult(verdict, len(self.seen), c["points"], c["runs"], c["transitions"], c["depth"],
                             c["reached"], seconds, self.task.bounds, red, found, findings,
                             complete=complete, lower_bound=len(found.path) if proved and found else None,
                             shortest_proved=proved)


def search_levels(bounds: Bounds, reductions: Reductions = ALL_REDUCTIONS, pool: Pool | None = None, *,
                  max_states: int | None = None, max_seconds: float | None = None, first: bool = False,
                  exact: bool = False,
                  progress: Callable[[int, int, int], None] | None = None) -> ExploreResult:
    """Search every run within ``bounds`` level by level, the levels expanded by ``pool`` (this process when
    None); the result as ``search_bounds`` gives it (the same options but ``max_depth``).

    Needs state hashing (levels are of hashed states).  Dominance is the depth-first search's alone: the
    result says it was off.
    """
    bounds.validate()
    if not reductions.hashing:
        raise ValueError("the level-by-level search needs state hashing (reductions.hashing=False given)")
    started = time.perf_counter()
    reductions = dataclasses.replace(reductions, dominance=False)  # the depth-first search's alone
    task = SearchJob(bounds, reductions, exact)
    search = LevelSearch(task, pool or InProcess(), max_states=max_states, max_seconds=max_seconds,
                         first=first, exact=exact, progress=progress)
    search.run()
    return search.result(time.perf_counter() - started)


__all__ = ["Arrival", "Expanded", "Expander", "FrontierNode", "InProcess", "LevelSearch", "Pool",
           "SearchJob", "expand_batch", "search_levels"]
