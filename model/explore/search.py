"""Exhaustive search over the explored runs of the lock: every schedule and fault placement within bounds.

The search is depth-first and stateless in the sense of VeriSoft: a run goes on
live as long as the search takes the first option at each decision, and when it
backtracks, the run for the next option is started again from the beginning along
the path of decisions (``run.py``).  At every decision point reached, the history
so far is judged by the simulation's own checkers (``model/checkers/lock_run.py``:
overlap, stale write, lost update) and by bounded liveness: once the faults have
stopped, a writer acquires the lock within ``Bounds.liveness_bound()`` ms while one
is alive.  Dangling locks (``find_dangling_locks``) are liveness findings: reported,
with a shortest path, but they do not decide the verdict.

Reductions, each switchable (``Reductions``):

- state hashing: a step decision whose state key (``statekey``; kept as a 64-bit
  fingerprint unless ``exact``) was seen is not expanded again.  What the checkers
  need of the past to judge the future is in the state, so a violation is a
  property of the step that shows it: the shortest
  counterexample is a shortest path in the graph of states and steps, found once
  the search is over (Dijkstra, a step weighing its number of decisions);
- symmetry: the key is the least over renamings of the identical writers;
- partial-order reduction: (1) ample sets: when some node's due steps are all local
  (timers, replies, client timeouts) and it has no request on its way to the store,
  only that node's steps are explored first: nothing another node does at this
  instant can touch them, and they must happen now; (2) sleep sets (Godefroid): after
  step ``a`` was explored, step ``b`` then ``a`` is not, when ``a`` and ``b`` commute.
  Steps of different nodes commute; two local steps of one node's different tasks (its
  writer, heartbeat, pause end) commute when neither wrote what the other read or wrote
  of the state the node's tasks share, as each recorded while it ran (``shared.py``: the
  declared fields of the provider, the tasks, the node, the fault bookkeeping; a step's
  footprint is known once it ended, so the sleep set below it is taken again then:
  ``fired``), else, and while unknown, they are dependent; requests reaching the store
  commute with every node's local steps, and with each other unless they touch one object and one of
  them writes, one lists a prefix the other writes under, one fences on the object
  the other writes, or both write (the stale-write check orders lock and register
  writes).

Verdict "holds" means: no run within the bounds violates a checker, under the
abstraction of time and faults the bounds describe; nothing more.

With ``max_depth`` no path goes past that many decisions, and a state met again with
fewer decisions behind it than at its earlier expansion is expanded again, afresh
(``deepen.py`` says why that keeps the least violating depth, and why partial-order
reduction does not: the Dijkstra path of a search with it is a shortest of the reduced
graph only).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from model.checkers.verdict import Violation
from model.config import Scenario
from model.explore.bounds import ALL_REDUCTIONS, Bounds, ParkedRuns, Plan, Reductions
from model.explore.run import (
    ADVANCE,
    GLOBAL,
    Budget,
    Run,
    RunOutcome,
    StepInfo,
    Stop,
    Unbounded,
    covers,
    split_budget,
)
from model.explore.shared import Footprint
from model.explore.statekey import fingerprint
from model.runtime.history import Event
from model.runtime.objectstore import StoredObject

if TYPE_CHECKING:
    from model.explore.parked import Parking

ROOT = ("root",)
PENDING = Footprint(frozenset(), frozenset())  # an option taken whose step has not ended yet (unknown)


@dataclass(frozen=True)
class Choice:
    """One decision of a path: its kind and index, and for a step the step it takes.

    A step is named as in the state key of the nearest hashed point at or above it (with symmetry,
    nodes renamed); ``anchor`` marks a hashed point, where a replay takes its naming afresh.
    """

    kind: str
    index: int
    step: StepInfo | None = None
    anchor: bool = False


@dataclass(frozen=True)
class Found:
    """A violation or a finding: the path that showed it first, and the shortest path to it."""

    violation: Violation
    path: tuple[Choice, ...]  # decisions from the start, in the order taken
    time: int  # true time at which the checkers saw it


@dataclass
class ExploreResult:
    """The outcome of one exploration.

    ``verdict`` is ``holds``, ``violated`` (``found`` has a counterexample: a shortest of the graph
    searched when ``complete``, proved shortest when ``shortest_proved``), ``incomplete`` (stopped by
    ``max_states`` or ``max_seconds`` with no violation found) or, for a depth-bounded search,
    ``bounded`` (no violation within ``max_depth`` decisions).  ``states`` counts
    distinct state keys (every step decision when hashing is off), ``points`` the
    decision points reached, ``runs`` the executions started from the beginning,
    ``transitions`` the options taken, ``depth`` the most decisions on one path,
    ``reached_ms`` the latest true time of a run.
    """

    verdict: str
    states: int
    points: int
    runs: int
    transitions: int
    depth: int
    reached_ms: int
    seconds: float
    bounds: Bounds
    reductions: Reductions
    found: Found | None = None
    findings: dict[str, Found] = field(default_factory=dict)
    # filled by ``model.explore.explore``: the shortest counterexample replayed (see ``to_json``)
    counterexample: list[dict[str, Any]] = field(default_factory=list)
    scenario: Scenario | None = None  # the scenario that replays it in the simulated world
    replays_exactly: bool | None = None  # the simulated world records the explored history
    # the search covered every run (else a violation found is one, but perhaps not the shortest)
    complete: bool = True
    # a depth-bounded search (``max_depth``): ``cut`` when the bound ended a path that had more to
    # explore (then "bounded": no violation within the bound, not "holds")
    cut: bool = False
    # proved: every violation takes at least ``lower_bound`` decisions; ``shortest_proved`` when the
    # counterexample has that many (a complete search, or iterative deepening: ``model.explore.deepen``)
    lower_bound: int | None = None
    shortest_proved: bool = False
    deepening: list[dict[str, Any]] = field(default_factory=list)  # the levels searched, if any

    @property
    def counterexample_length(self) -> int | None:
        """The decisions of the shortest counterexample (what the search minimises), or None."""
        return None if self.found is None else len(self.found.path)

    def to_json(self) -> dict[str, Any]:
        """The result as plain data (the keys of ``hcc explore --json``, plus the lock's own).

        ``counterexample`` is the step table of the shortest counterexample: the history's events
        and, between them, the explorer's decisions (``decision: true``); each row's ``step`` is its
        text.  ``counterexample_length`` counts the decisions (the choices the search minimises);
        ``shortest_proved`` says no violation takes fewer, ``lower_bound`` how many any takes at least
        (proved), ``deepening`` the levels of iterative deepening that proved it.
        """
        found = self.found
        out: dict[str, Any] = {
            "verdict": self.verdict, "states": self.states, "depth": self.depth,
            "seconds": round(self.seconds, 3), "counterexample_length": self.counterexample_length,
            "counterexample": self.counterexample, "config": self.bounds.to_json(),
            "points": self.points, "runs": self.runs, "transitions": self.transitions,
            "reached_ms": self.reached_ms, "complete": self.complete,
            "shortest_proved": self.shortest_proved, "lower_bound": self.lower_bound,
            "deepening": self.deepening,
            "violation": None if found is None else {
                "kind": found.violation.kind, "message": found.violation.message, "time_ms": found.time,
                "replays_exactly_in_simulation": self.replays_exactly},
            "findings": {kind: {"kind": f.violation.kind, "message": f.violation.message,
                                "decisions": len(f.path), "time_ms": f.time}
                         for kind, f in sorted(self.findings.items())},
        }
        return out


def independent(a: StepInfo, b: StepInfo) -> bool:
    """True when steps ``a`` and ``b`` commute and neither disables the other (see the module doc)."""
    if a.owner == GLOBAL or b.owner == GLOBAL:
        return False
    if a.op is None and b.op is None:
        if a.owner != b.owner:
            return True
        # two local steps of one node: of different tasks, by what each read and wrote of the declared shared
        # state as it ran (``shared.py``; the tasks' flags and the node's tasks included, so a wake-up, an
        # interrupt, a task's start or end conflicts with what it touches); unknown: dependent
        pa, pb = a.footprint, b.footprint
        return (pa is not None and pb is not None and pa is not PENDING and pb is not PENDING
                and a.sid[:4] != b.sid[:4] and not pa.conflicts(pb))
    if a.op is None or b.op is None:
        return True
    (ka, wa, fa, la), (kb, wb, fb, lb) = a.op, b.op
    if wa and wb:
        return False
    if ka == kb and (wa or wb):
        return False
    # a listing sees every write (and delete) of a key under its prefix: the order decides what it lists
    if (la and wb and kb.startswith(ka)) or (lb and wa and ka.startswith(kb)):
        return False
    return not ((fa and fa == kb and wb) or (fb and fb == ka and wa))


def ample(steps: list[StepInfo], names: dict[str, str]) -> list[int]:
    """The options to explore at a step decision: one node's local steps when that is safe, else all.

    Safe when no step may wait (no "advance" option) or touches every node (the nemesis), and
    the node has no request on its way to the store (its reply could otherwise come first).
    """
    everything = list(range(len(steps)))
    if any(s.sid == ADVANCE or s.owner == GLOBAL for s in steps):
        return everything
    busy = {s.owner for s in steps if s.op is not None}
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        if s.op is None and s.owner not in busy:
            groups.setdefault(s.owner, []).append(i)
    if not groups:
        return everything
    node = min(groups, key=lambda n: (len(groups[n]), names.get(n, n)))
    return groups[node]


def judge(plan: Plan, events: list[Event], objects: Mapping[str, StoredObject], gap: int,
          stuck: tuple[str, ...] = ()) -> tuple[Violation | None, list[Violation]]:
    """The first violation of a history and its findings.

    Safety first (the protocol's checkers that decide, ``Bounds.verdict``; the others' violations and
    the lock's dangling locks are findings), then liveness: writers left waiting with nothing pending
    (``stuck``), or (the lock) a writer waiting ``gap`` ms without the lock changing hands since the
    faults stopped, beyond ``plan.liveness``.
    """
    bound = plan.liveness
    verdict = plan.bounds.verdict(events, objects)
    findings = list(verdict.findings)
    if verdict.violations:
        return verdict.violations[0], findings
    if stuck:
        return Violation("liveness", f"{', '.join(stuck)}: the writer never finished and nothing is pending "
                         "(a deadlock)", (), {"nodes": list(stuck)}), findings
    if plan.bounds.checks_liveness and gap > bound:
        return Violation("liveness", f"a writer waited {gap} ms without the lock changing hands after the "
                         f"faults stopped (bound {bound} ms)", (), {"gap_ms": gap, "bound_ms": bound}), \
            findings
    return None, findings


def finish(plan: Plan, run: Run) -> RunOutcome | None:
    """Run ``run`` to its end and judge it (``judge``); None when its driver stopped it."""
    try:
        end = run.go()
    except Unbounded as e:
        return Violation("liveness", str(e), (), {"guard_ms": run.guard}), [], run.now(), None
    if end is None:
        return None
    violation, found = judge(plan, end.events, run.objects, run.gap(end.time), run.stuck())
    return violation, found, end.time, end.time


@dataclass
class Frame:
    """A decision point on the current path, with what is left to explore there."""

    prefix: tuple[int, ...]  # the path up to this point
    trail: int  # length of the walk's trail of Choices at this point
    kind: str
    todo: list[int]
    steps: list[StepInfo]
    canon: list[StepInfo]
    asleep: frozenset[StepInfo]
    done: list[StepInfo]
    names: dict[str, str]  # concrete -> key names: this point's if keyed, else its anchor's

    @property
    def anchored(self) -> bool:
        """A hashed point: its steps are named by its own key (a replay takes its naming afresh there)."""
        raise NotImplementedError


@dataclass
class _Frame(Frame):
    key: Hashable | None  # this point's state key, if it is hashed

    @property
    def anchored(self) -> bool:
        return self.key is not None


F = TypeVar("F", bound=Frame)


class DepthFirst(Generic[F]):
    """The depth-first walk of runs that the search and the level search's expansions share.

    Each option left on the stack is taken by running its path again from the start (generators cannot
    be copied); a subclass decides at the points past the path (it is the runs' ``Driver``), records what
    the checkers say (``_record``) and says when to stop (``_stopped``).  Counts: ``runs``, ``transitions``,
    ``depth`` (decisions from the start: ``depth_base`` plus the trail), ``reached`` (latest true time).
    """

    plan: Plan
    reductions: Reductions
    stack: list[F]
    trail: list[Choice]
    asleep: frozenset[StepInfo]
    runs: int
    transitions: int
    depth: int
    depth_base: int
    reached: int
    parking: Parking | None = None  # runs resumed from parked copies (``parked.py``), else replayed

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        """The option to take at a point past the path run (see ``run.Driver``), or raise ``Stop``."""
        raise NotImplementedError

    def _record(self, violation: Violation | None, found: list[Violation], now: int) -> None:
        raise NotImplementedError

    def _stopped(self) -> bool:
        raise NotImplementedError

    def _walk(self, path: tuple[int, ...]) -> None:
        """Run ``path``, then every option left on the stack, depth first, until stopped."""
        self._go(path)
        while self.stack and not self._stopped():
            frame = self.stack[-1]
            if not frame.todo:
                self.stack.pop()
                if self.parking is not None:
                    self.parking.release(frame)
                continue
            i = self._take(frame)
            self._go((*frame.prefix, i))

    def _go(self, path: tuple[int, ...]) -> None:
        self.runs += 1
        if self.parking is not None:
            out = self.parking.go(self, path)
        else:
            out = finish(self.plan, Run(self.plan, path, self, self.reductions))
        if out is not None:
            violation, found, now, end = out
            if end is not None:
                self.reached = max(self.reached, end)
            self._record(violation, found, now)

    def record_start(self, path: tuple[int, ...]) -> int:
        """From which decision on a run of ``path`` records footprints (``Run``): from the step of the top
        frame's decision, or of the step a fault or pause decision on top is inside (begun after the nearest
        step decision below it)."""
        for f in reversed(self.stack):
            if f.kind == "step":
                return len(f.prefix) + 1
        return len(path) if not self.stack else 0

    def fired(self, step: StepInfo, at: int) -> None:
        """The step that decision ``at`` took ended (``Run``), with what it touched: the option knows it
        (joined over the options of the faults inside it), and the sleep set below it, taken while that was
        unknown, is taken again with it (a step of the same node that commutes with it sleeps too)."""
        for f in reversed(self.stack):
            if len(f.prefix) == at:
                if f.kind != "step" or not f.done:
                    return
                had, fp = f.done[-1].footprint, step.footprint
                joined = fp if had is PENDING else None if had is None or fp is None else had | fp
                f.done[-1] = replace(f.done[-1], footprint=joined)
                if self.reductions.por and fp is not None:
                    self.asleep = frozenset(z for z in (*f.asleep, *f.done[:-1]) if independent(z, step))
                return

    def _take(self, frame: F) -> int:
        """Take the next option of ``frame``: set the sleep set below it and extend the trail."""
        i = frame.todo.pop(0)
        self.transitions += 1
        del self.trail[frame.trail:]
        if frame.kind == "step":
            step = frame.steps[i]
            if self.reductions.por:  # the step's footprint is not known yet: ``fired`` adds what it allows
                self.asleep = frozenset(z for z in (*frame.asleep, *frame.done) if independent(z, step))
            frame.done.append(replace(step, footprint=PENDING))
            named = frame.canon[i] if frame.canon else step.renamed(frame.names)
            self.trail.append(Choice("step", i, named, frame.anchored))
        else:
            self.asleep = frame.asleep
            self.trail.append(Choice(frame.kind, i))
        self.depth = max(self.depth, self.depth_base + len(self.trail))
        return i


class Search(DepthFirst[_Frame]):
    """The depth-first search (the ``Driver`` of its runs); see the module doc."""

    def __init__(self, bounds: Bounds, reductions: Reductions, max_states: int | None,
                 max_seconds: float | None, stop_at_first: bool,
                 progress: Callable[[int, int, int], None] | None, exact: bool = False,
                 max_depth: int | None = None) -> None:
        self.bounds = bounds
        self.plan = bounds.plan()
        self.reductions = reductions
        self.judge_at_points = bounds.judge_at_points
        self.stop_at_first = stop_at_first
        self.exact = exact
        self.halt = ""  # why the search stops early: "incomplete" (out of budget) or "violated" (first)
        self.bound = bounds.liveness_bound()
        self.max_states = max_states
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        self.progress = progress
        self.identity = {n: n for n in self.plan.nodes}
        self.stack: list[_Frame] = []
        self.trail: list[Choice] = []
        self.asleep: frozenset[StepInfo] = frozenset()
        self.seen: dict[Hashable, set[StepInfo]] = {}
        # dominance: a state's core (its key but the fault budget) -> the budgets it was expanded with, each
        # with its key (``_dominated``)
        self.budgets: dict[Hashable, list[tuple[Budget, Hashable]]] = {}
        self.dominated = 0  # states left unexpanded by dominance
        self.max_depth = max_depth
        self.cut = False  # the depth bound ended a path that had more to explore
        self.seen_at: dict[Hashable, int] = {}  # with max_depth: the least depth a state was expanded at
        self.edges: dict[Hashable, list[tuple[Hashable, tuple[Choice, ...]]]] = {}
        self.bad: list[tuple[Hashable, tuple[Choice, ...], Violation, int]] = []
        self.first_bad: Found | None = None
        self.findings: dict[str, Found] = {}
        self.finding_edges: dict[str, list[tuple[Hashable, tuple[Choice, ...], Violation, int]]] = {}
        self.points = self.runs = self.transitions = self.depth = self.reached = self.depth_base = 0
        self.plain_states = 0

    # ---- the current path ----------------------------------------------------------------------

    def _anchor(self) -> tuple[Hashable, int]:
        for f in reversed(self.stack):
            if f.key is not None:
                return f.key, f.trail
        return ROOT, 0

    def _segment(self) -> tuple[Hashable, tuple[Choice, ...]]:
        anchor, at = self._anchor()
        return anchor, tuple(self.trail[at:])

    def _judge(self, run: Run, events: list[Event], gap: int, now: int, stuck: tuple[str, ...] = ()) -> bool:
        """Check the history; record a violation or findings.  True when the path must end here."""
        violation, found = judge(self.plan, events, run.objects, gap, stuck)
        self._record(violation, found, now)
        return violation is not None

    def _record(self, violation: Violation | None, found: list[Violation], now: int) -> None:
        anchor, segment = self._segment()
        if violation is not None:
            self.bad.append((anchor, segment, violation, now))
            if self.first_bad is None:
                self.first_bad = Found(violation, tuple(self.trail), now)
            if self.stop_at_first:
                self.halt = "violated"
        for f in found:
            self.finding_edges.setdefault(f.kind, []).append((anchor, segment, f, now))
            self.findings.setdefault(f.kind, Found(f, tuple(self.trail), now))

    # ---- the driver ----------------------------------------------------------------------------

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        """A new decision point of the live run: judge it, then take its first option to explore."""
        self.points += 1
        self.reached = max(self.reached, run.now())
        if self.progress is not None and self.points % 2000 == 0:
            self.progress(self.points, len(self.seen), self.runs)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.halt = "incomplete"
        if self.halt:
            raise Stop()
        if self.judge_at_points and self._judge(run, run.events, run.gap(run.now()), run.now()):
            raise Stop()
        if self.max_depth is not None and len(self.trail) >= self.max_depth:
            self.cut = True  # judged at its depth; one more decision would pass the bound
            raise Stop()
        prefix = tuple(run.taken)
        anchor, at = self._anchor()
        key: Hashable | None = None
        canon: list[StepInfo] = []
        names = self.identity
        if kind != "step":
            todo = list(range(options))
        else:
            red = self.reductions
            if red.por:
                # which node's steps go first is decided on concrete names here; with symmetry two
                # visits of one state may pick differently, which explores more, never less
                todo = [i for i in ample(steps, names) if steps[i] not in self.asleep]
            else:
                todo = list(range(len(steps)))
            # a state is hashed where the search branches; a point with one option left is a step
            # of the path like a forced one (its state is hashed at the next branching point)
            hashed = red.hashing and len(todo) > 1
            if hashed:
                full, names = run.key()
                key = full if self.exact else fingerprint(full)  # a 64-bit fingerprint, as TLC keeps
                canon = [s.renamed(names) for s in steps]
                self.edges.setdefault(anchor, []).append((key, tuple(self.trail[at:])))
            elif len(todo) > 1:
                self.plain_states += 1
            if hashed:
                explored = self.seen.get(key)
                if explored is None:
                    if red.dominance and self.max_depth is None:
                        core, budget = split_budget(full)
                        core = core if self.exact else fingerprint(core)
                        if self._dominated(core, budget, {canon[i] for i in todo}):
                            self.dominated += 1
                            raise Stop()
                        self.budgets.setdefault(core, []).append((budget, key))
                    if self.max_states is not None and len(self.seen) >= self.max_states:
                        self.halt = "incomplete"
                        raise Stop()
                    explored = self.seen[key] = set()
                    self.seen_at[key] = len(self.trail)
                elif self.max_depth is not None and len(self.trail) < self.seen_at[key]:
                    # reached with more of the depth budget left than when it was expanded: expand it
                    # again, afresh (the earlier visit's explored steps had less budget below them)
                    self.seen_at[key] = len(self.trail)
                    explored.clear()
                elif not red.por:
                    raise Stop()
                # reached again: only what was asleep before and is awake now is left to explore
                todo = [i for i in todo if canon[i] not in explored]
                explored.update(canon[i] for i in todo)
        if not todo:
            raise Stop()
        if key is None:
            names = next((f.names for f in reversed(self.stack) if f.key is not None), self.identity)
        frame = _Frame(prefix, len(self.trail), kind, todo, steps, canon, self.asleep, [], names, key)
        self.stack.append(frame)
        return self._take(frame)

    def _dominated(self, core: Hashable, budget: Budget, todo: set[StepInfo]) -> bool:
        """Whether a state expanded before covers this one: the same core, a budget at least as large
        (``covers``), and every option this state would explore explored there.  Everything this state can
        do, that one can (taking "no fault" where this one has none left), and a violation or finding
        below this one is one below that one."""
        return any(covers(theirs, budget) and todo <= self.seen[key]
                   for theirs, key in self.budgets.get(core, ()))

    # ---- the loop ------------------------------------------------------------------------------

    def run(self) -> str:
        """Explore everything; the verdict."""
        self._walk(())
        if self.bad:  # a violation found is one, complete search or not (then perhaps not the shortest)
            return "violated"
        return self.halt or ("bounded" if self.cut else "holds")

    def _stopped(self) -> bool:
        return bool(self.halt)

    # ---- shortest paths --------------------------------------------------------------------------

    def shortest(self, bad: list[tuple[Hashable, tuple[Choice, ...], Violation, int]]) -> Found | None:
        """A shortest path (fewest decisions) through the graph of states to one of ``bad``'s steps."""
        return shortest_path(self.edges, bad)


Edges = dict[Hashable, list[tuple[Hashable, tuple[Choice, ...]]]]  # state -> (next state, the segment to it)
Bad = tuple[Hashable, tuple[Choice, ...], Violation, int]  # the state above a violation, the segment, when


def shortest_path(edges: Edges, bad: list[Bad]) -> Found | None:
    """A shortest path (fewest decisions) from ``ROOT`` through ``edges`` to one of ``bad``'s steps (Dijkstra,
    a segment weighing its decisions; ties go to the edge recorded first, then the earliest violation)."""
    if not bad:
        return None
    dist: dict[Hashable, int] = {ROOT: 0}
    back: dict[Hashable, tuple[Hashable, tuple[Choice, ...]]] = {}
    heap: list[tuple[int, int, Hashable]] = [(0, 0, ROOT)]
    tie = itertools.count(1)
    while heap:
        d, _, node = heapq.heappop(heap)
        if d > dist.get(node, d):
            continue
        for nxt, seg in edges.get(node, ()):
            nd = d + len(seg)
            if nd < dist.get(nxt, nd + 1):
                dist[nxt] = nd
                back[nxt] = (node, seg)
                heapq.heappush(heap, (nd, next(tie), nxt))
    reachable = (x for x in bad if x[0] in dist)
    best = min(reachable, key=lambda x: (dist[x[0]] + len(x[1]), x[3]), default=None)
    if best is None:
        return None
    anchor, seg, violation, at = best
    path: list[tuple[Choice, ...]] = [seg]
    node = anchor
    while node != ROOT:
        node, s = back[node]
        path.append(s)
    return Found(violation, tuple(c for s in reversed(path) for c in s), at)


def search_bounds(bounds: Bounds, reductions: Reductions = ALL_REDUCTIONS, *, max_states: int | None = None,
                  max_seconds: float | None = None, first: bool = False, exact: bool = False,
                  progress: Callable[[int, int, int], None] | None = None,
                  max_depth: int | None = None, parked: ParkedRuns | None = None) -> ExploreResult:
    """Search every run within ``bounds``; a violation comes with a shortest path of decisions to it.

    The search alone (``model.explore.explore`` adds the replayed counterexample).

    ``first`` stops at the first violation (its path is then the first found, not a shortest one);
    ``exact`` keeps whole state keys instead of 64-bit fingerprints (no collision risk, more memory);
    ``max_states`` / ``max_seconds`` stop the search: verdict ``incomplete``, or ``violated`` when it had
    found a violation (the shortest of those found; ``complete`` is False).  ``max_depth`` bounds the
    paths (see ``model.explore.deepen``): verdict ``bounded`` when no violation is within it and it
    cut a path.  ``parked``: how runs are parked (``parked.py``; None: the protocol's ``Bounds.parked_runs``,
    ``NO_PARKING``: every run replays from the start); the same result either way.
    """
    bounds.validate()
    parked = bounds.parked_runs if parked is None else parked
    parked.validate()
    started = time.perf_counter()
    search = Search(bounds, reductions, max_states, max_seconds, first, progress, exact, max_depth)
    if parked.limit:
        from model.explore.parked import Parking  # forks: only where asked

        with Parking(search.plan, reductions, parked, finish, search) as search.parking:
            verdict = search.run()
    else:
        verdict = search.run()
    found = findings = None
    if verdict == "violated":
        # without hashing no state is keyed: every path hangs off the root and the shortest is the least
        found = search.shortest(search.bad) if not first else None
        found = found or search.first_bad
    findings = {kind: search.shortest(edges) or search.findings[kind]
                for kind, edges in search.finding_edges.items()}
    states = len(search.seen) if reductions.hashing else search.plain_states
    # a complete search's Dijkstra path is a shortest of the graph it searched: the whole graph of states
    # unless partial-order reduction pruned orders of steps, which can change the number of decisions
    complete = not search.halt
    proved = found is not None and complete and not reductions.por and not reductions.dominance and not first
    lower = len(found.path) if proved and found is not None else None
    return ExploreResult(verdict, states, search.points, search.runs, search.transitions, search.depth,
                         search.reached, time.perf_counter() - started, bounds, reductions, found, findings,
                         complete=complete, cut=search.cut, lower_bound=lower,
                         shortest_proved=lower is not None)
