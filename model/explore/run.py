"""One explored run: the kernel, the lock workload and the explored world, taking decisions as it goes.

A run takes decisions in order: the root ones first (each writer's start phase and
clock offset, the crashes), then, as it goes, which due step happens next (or whether
time advances), which fault a request gets, whether a writer pauses.  A path is the
list of option indices taken at the decisions that had a choice.  :meth:`Run.go`
executes from the start: along ``path`` first, then asking its :class:`Driver` (the
search), which may stop it.  Python generators cannot be copied, so the search
reaches a decision point again by running its path again from the start.

The history is recorded through the kernel like in every world, so the same
checkers judge it, and a path becomes a scenario that the simulated world replays
exactly (``model/explore/counterexample.py``).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import simpy

from model.checkers.verdict import Violation
from model.config import Crash, ErrorRule, FaultPlan, Pause, Scenario, client_settings
from model.explore.bounds import (
    ALL_REDUCTIONS,
    CONDITIONAL_ONLY,
    PAUSE_TRIGGERS,
    REQUEST_FAULTS,
    WINDOW_FAULTS,
    Plan,
    Reductions,
)
from model.explore.coverage import check_covered
from model.explore.shared import ACTIVE, Footprint, Recorder, install
from model.explore.statekey import Keyer, canonical, shape
from model.explore.world import (
    GLOBAL,
    ExploreNetwork,
    ExploreWorld,
    FaultState,
    Pending,
    ReadableProcess,
    Suspend,
)
from model.lock.audit import enable_body, enable_key
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import Put
from model.runtime.faults import KEY_CLASSES, FaultMatcher, HeartbeatStartFaults
from model.runtime.history import Event
from model.runtime.kernel import Kernel, Node, Task
from model.runtime.objectstore import ObjectStore, StoredObject
from model.runtime.sim import SimEnvironment, node_clocks, retry_policy
from model.runtime.taskloop import interrupt_policy

ADVANCE = ("advance",)
__all__ = ["ADVANCE", "GLOBAL", "Decision", "Driver", "End", "Run", "StepInfo", "Stop", "Unbounded",
           "time_shift_breaks"]
_PROGRESS = {("acquire", "ok"), ("release", "ok"), ("release", "fail")}


# a run's end as the checkers judge it: the violation, the findings, when, and the end's time (None: the run
# went past the time guard)
RunOutcome = tuple[Violation | None, list[Violation], int, int | None]


@dataclass(frozen=True)
class StepInfo:
    """What the search needs to know of one option of a step decision: who it touches."""

    sid: tuple[Any, ...]
    owner: str  # a node, or GLOBAL (the nemesis, advancing time)
    # a request reaching the store: key (a listing's prefix), write, fenced-on key, listing
    op: tuple[str, bool, str, bool] | None
    # what it read and wrote of its node's declared shared state once it ran (``shared.py``); None: unknown
    footprint: Footprint | None = field(default=None, compare=False)

    def renamed(self, names: dict[str, str]) -> StepInfo:
        """The same step with nodes renamed (steps of states equal up to symmetry), no footprint."""
        if not self.sid or self.sid[0] not in names:
            return self
        return StepInfo((names[self.sid[0]], *self.sid[1:]), names.get(self.owner, self.owner), self.op)


@dataclass
class End:
    """The run is over: nothing is pending (every writer made its attempts, or died)."""

    time: int
    events: list[Event]


class Stop(Suspend):
    """Raised by a driver to end the run at a decision (the search backtracks)."""


class Unbounded(Exception):
    """A run went past the time guard: the bounds did not make it finite."""


class Driver(Protocol):
    """Takes a run's decisions past its prefix (the search, or a replay that translates a path)."""

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        """The option to take (an index below ``options``), or raise :class:`Stop`."""
        ...


@dataclass
class Decision:
    """One decision taken on the way (for step tables): before the ``at``-th event of the history."""

    kind: str
    time: int
    label: str
    at: int


def time_shift_breaks(plan: Plan) -> tuple[str, ...]:
    """What in these bounds reads absolute time, each named: then root decisions that differ only by a
    uniform shift of every start (or of every clock) are all explored; else only those whose least start
    and least offset are 0 (``docs/design.md``, "States up to a shift in time").

    Sound when nothing reads absolute time but the time guard and the crash instants, and nothing compares a
    clock reading with a constant: then a run whose starts (or clocks) are all shifted by ``d`` is the same
    run shifted by ``d``, and its state key (times relative to now, a writer's start forgotten once it
    started, ``Run._since``) is the same once every writer has started.
    """
    bounds, out = plan.bounds, []
    if bounds.absolute_time:
        out.append(f"absolute_time: the {bounds.protocol} plan names absolute instants")
    if plan.crash_instants:
        out.append("crash: the crash instants are absolute times")
    return tuple(out)


class ExploreMatcher(FaultMatcher):
    """The fault plan's matcher, with the run deciding each request's fault instead of the rules."""

    def __init__(self, run: Run) -> None:
        super().__init__((), (), None, run.workload.key_class)  # type: ignore[arg-type]  # never draws
        self.run = run

    def decide(self, node: str, write: bool, key: str, now: int) -> str | None:
        return self.run.request_fault(node, write, key, now)


class Run:
    """One execution along ``path`` (see the module doc)."""

    def __init__(self, plan: Plan, path: Sequence[int] = (), driver: Driver | None = None,
                 reductions: Reductions = ALL_REDUCTIONS, record: bool = False) -> None:
        """When the workload declares what its nodes' tasks share (``shared_state``) and the driver asks
        (``record_start(path)``: from which decision on), the run records each step's footprint
        (``shared.py``) and tells the driver's ``fired(step, at)`` of every decided step that ends past the
        path, with its footprint and the index of its decision."""
        self.plan = plan
        self.bounds = plan.bounds
        self.path = path
        self.pos = 0
        self.driver = driver
        self.reductions = reductions
        self.stopped = False
        self.taken: list[int] = []  # the path so far: every decision that had a choice
        self.record = record  # keep the decisions taken, with their labels (for step tables)
        self.decisions: list[Decision] = []
        self.injected: list[tuple[str, Any]] = []  # ("error"|"window"|"pause"|"crash", spec), in order
        self.tick = plan.tick
        self.guard = plan.guard
        self.durations = plan.durations
        self.cap = plan.liveness + 1
        self.kinds = plan.kinds
        self.faults = FaultState(self.bounds.faults)
        self.base = plan.scenario
        self.scenario: Scenario = self.base
        self.workload = self.bounds.kernel_workload(self.base)
        self.triggers = self.bounds.triggers()
        self.last_progress = 0  # when the lock last changed hands (acquired, or released)
        self.waiting: dict[str, int] = {}  # node -> since when its writer waits for the lock
        self.worst_gap = 0  # the longest liveness gap seen when time passed
        self.kernel: Kernel | None = None
        self.fired = getattr(driver, "fired", None)
        shared: tuple[type, ...] | None = getattr(self.workload, "shared_state", None)
        start = getattr(driver, "record_start", None)
        self.record_from: int | None = None
        if shared is not None and self.fired is not None and start is not None:
            self.record_from = start(tuple(path))
        self.recorder: Recorder | None = None
        if shared is not None and self.record_from is not None:
            install((Task, Node, HeartbeatStartFaults, FaultState, *shared))
            self.recorder = Recorder(self._task)
            self.recorder.made(self.faults)
        # the faults a request may get, for a read and a write: 409 and 412 answer conditional writes
        # only (a plain GET has no precondition to fail)
        self.fault_options: dict[bool, list[tuple[str, int]]] = {
            write: [(k, 0) for k in REQUEST_FAULTS
                    if k in self.kinds and (write or k not in CONDITIONAL_ONLY)]
            + [(k, d) for k in WINDOW_FAULTS if k in self.kinds for d in self.durations]
            for write in (False, True)}
        if reductions.lost_read_is_timeout and self._lost_read_is_timeout():
            self.fault_options[False] = [o for o in self.fault_options[False] if o[0] != "lost-reply"]

    def _lost_read_is_timeout(self) -> bool:
        """Whether a lost reply on a read is the same run as a timeout on it: yes when both kinds are
        offered, since a request's two hops never outlast the client timeout (``Bounds.validate``): a lost
        reply then answers TIMEOUT at sent + timeout, as a timeout does, and the read it applied changed
        nothing.  The two differ only while the request is out (its ``result`` is in the key)."""
        return "timeout" in self.kinds and "lost-reply" in self.kinds

    # ---- decisions ---------------------------------------------------------------------------

    def choose(self, kind: str, options: int, label: Callable[[int], str],
               steps: Callable[[], list[StepInfo]] | None = None) -> int:
        """The option taken here: the only one, the path's, or the driver's (which may stop the run).

        ``label(i)`` says what option ``i`` is (asked only when the run records its decisions);
        ``steps()`` what the options of a step decision touch (asked only when the driver decides:
        a replay along the path needs neither).
        """
        if options == 1:
            return 0
        if self.pos < len(self.path):
            i = self.path[self.pos]
        elif self.driver is None:
            self.stopped = True
            raise Stop()
        else:
            try:
                i = self.driver.decide(self, kind, options, steps() if steps is not None else [])
            except Suspend:
                self.stopped = True
                raise
        self.pos += 1
        self.taken.append(i)
        if self.record:
            self.decisions.append(Decision(kind, self.now(), label(i), len(self.events)))
        return i

    def now(self) -> int:
        """True time of the run (0 before it starts)."""
        return self.world.now() if hasattr(self, "world") else 0

    @property
    def events(self) -> list[Event]:
        """The history so far."""
        return self.kernel.events if self.kernel is not None else []

    @property
    def objects(self) -> dict[str, StoredObject]:
        """The store's objects so far (none before the run starts)."""
        return self.store.objects if self.kernel is not None else {}

    # ---- root decisions --------------------------------------------------------------------------

    def _root(self) -> Scenario:
        plan = self.plan
        nodes = plan.nodes
        starts: dict[str, int] = {}
        offsets: dict[str, int] = {}
        phases, offs = plan.phases, plan.offsets
        # up to a uniform shift (``time_shift_breaks``): the least start and the least offset are the least
        # of their options (0), so the last node starts at the least phase unless another does, and its clock
        # has the least offset unless another's has
        shifts = self.reductions.shifts and not time_shift_breaks(plan)
        for i, n in enumerate(nodes):
            is_last = shifts and i == len(nodes) - 1
            ph = (min(phases),) if is_last and min(phases) not in starts.values() else phases
            labels = [f"{n} starts at {p} ms" for p in ph]  # root decisions: once a run, cheap
            starts[n] = ph[self.choose("root", len(labels), labels.__getitem__)]
            of = (min(offs),) if is_last and min(offs) not in offsets.values() else offs
            labels = [f"{n}'s clock offset {o:+d} ms" for o in of]
            offsets[n] = of[self.choose("root", len(labels), labels.__getitem__)]
        crashes: list[Crash] = []
        if "crash" in self.kinds:
            last = (0, -1)
            while self.faults.left > 0:
                picks = [(at, i) for at in plan.crash_instants
                         for i in range(len(nodes)) if (at, i) > last]  # crashes in time order, once each
                labels = ["no more crashes"] + [f"{nodes[i]} crashes at {at} ms" for at, i in picks]
                choice = self.choose("root", len(labels), labels.__getitem__)
                if choice == 0:
                    break
                pick = last = picks[choice - 1]
                restart = self.bounds.crash_restart_ms
                crashes.append(Crash(nodes[pick[1]], pick[0], restart))
                self.faults.left -= 1
                end = pick[0] + max(restart, 0)
                self.faults.quiet_from = max(self.faults.quiet_from, end)
                self.injected.append(("crash", crashes[-1]))
        root = (tuple(starts.items()), tuple(offsets.items()), tuple(crashes))
        made = plan.roots.get(root)
        if made is None:
            wl = replace(self.base.workload, node_start_ms=starts)
            made = plan.roots[root] = replace(self.base, workload=wl, clocks=self.bounds.clocks(offsets),
                                              faults=FaultPlan(crashes=tuple(crashes)))
        return made

    # ---- fault decisions inside steps --------------------------------------------------------------

    def request_fault(self, node: str, write: bool, key: str, now: int) -> str | None:
        """The fault (a status of ``model.config.ERROR_STATUSES``) one request gets, or None."""
        fs = self.faults
        cls = self.workload.key_class(key)
        method = "write" if write else "read"
        # which request came first at an instant matters only while a fault may still be placed (the key
        # reads it only then, and faults left never grow)
        first = fs.left > 0 and fs.first_at(node, cls, method, now)
        wkey = (node, cls, method)
        window = fs.windows.get(wkey)
        if window is not None:
            status, end = window
            if now < end:
                return status
            del fs.windows[wkey]
        if fs.left <= 0 or not first:
            return None
        options = self.fault_options[write]
        if not options:
            return None
        def label(i: int) -> str:
            if i == 0:
                return "no fault"
            kind, d = options[i - 1]
            return f"{node}'s {method} of {cls} gets {kind}" + (f" for {d} ms" if d else "")

        i = self.choose("fault", len(options) + 1, label)
        if i == 0:
            return None
        kind, duration = options[i - 1]
        fs.left -= 1
        if kind in WINDOW_FAULTS:
            status = kind.split("-", 1)[1]
            fs.windows[wkey] = (status, now + duration)
            fs.quiet_from = max(fs.quiet_from, now + duration)
            self.injected.append(("window", (wkey, status, now, now + duration, key)))
            return status
        self.injected.append(("error", (node, cls, method, kind, now, key)))
        wait = client_settings(self.scenario).timeout_ms if kind in ("timeout", "lost-reply") else 0
        fs.quiet_from = max(fs.quiet_from, now + wait)
        return kind

    def _sink(self, event: Event) -> None:
        """Every recorded event: progress for liveness, and the pause decisions of writers."""
        if event.process == "nemesis" and event.f == "crash":
            self.waiting.pop(event.node, None)
            return
        if event.process != event.node:
            return
        if event.f == "acquire":
            if event.type == "invoke":
                self.waiting[event.node] = event.time
            else:
                self.waiting.pop(event.node, None)
        if (event.f, event.type) in _PROGRESS:
            self.last_progress = event.time
        trigger = self.triggers.get((event.f, event.type))
        if trigger is None:
            return
        fs = self.faults
        if "pause" not in self.kinds or fs.left <= 0:
            return
        if not fs.first_at(event.node, f"pause-{trigger}", "", event.time):
            return  # a fault plan names a node's first trigger at an instant
        durations = self.durations
        i = self.choose("pause", len(durations) + 1, lambda i: "no pause" if i == 0 else
                        f"{event.node} pauses {durations[i - 1]} ms at its {trigger}")
        if i == 0:
            return
        pause = Pause(event.node, event.time, durations[i - 1], trigger)
        assert self.kernel is not None and trigger in PAUSE_TRIGGERS
        self.kernel.nodes[event.node].triggered.append(pause)  # the kernel starts it right after this sink
        fs.left -= 1
        fs.quiet_from = max(fs.quiet_from, event.time + pause.duration_ms)
        self.injected.append(("pause", pause))

    # ---- the run -----------------------------------------------------------------------------------

    def _new_owner_id(self) -> str:
        made = str(uuid.UUID(int=self.id_rng.getrandbits(128), version=4))
        self.world.invented.add(made)  # a name the run invents
        return made

    def _build(self) -> None:
        import random

        sc = self.scenario
        self.seed = sc.seed
        self.id_rng = random.Random(f"{self.seed}/ids")
        self.env = SimEnvironment()
        self.world = ExploreWorld(self.env, self.tick, self.bounds.latency_ticks)
        self.store = ObjectStore(sc.storage.flavor)
        if sc.lock.audit:  # as the simulated world does: the table has Hudi's lock audit enabled
            self.store.apply(Put(enable_key(sc.lock.base_path), enable_body()))
        self.kernel = Kernel(self.world, self.workload, nodes=node_clocks(sc), faults=sc.faults,
                             policy=retry_policy(sc), seed=self.seed, new_id=self._new_owner_id,
                             sink=self._sink, writer_policy=interrupt_policy(sc.workload.interrupt))
        self.world.nodes = self.kernel.nodes
        self.world.kernel = self.kernel
        self.matcher = ExploreMatcher(self)
        self.network = ExploreNetwork(self.world, sc, self.store, self.matcher, self.kernel.observe_write)
        self.world.network = self.network

    def go(self) -> End | None:
        """Run along the path, then as the driver decides, to its end (End) or until stopped (None)."""
        ACTIVE[0] = self.recorder
        try:
            self.scenario = self._root()
            self.workload = self.bounds.kernel_workload(self.scenario)
            self._build()
            return self._loop()
        except Suspend:
            if not self.stopped:
                raise
            return None
        finally:
            ACTIVE[0] = None

    def _task(self) -> tuple[Any, ...]:
        """The identity of the process running now (the recorder's owner check)."""
        return self.world.current()[0] if hasattr(self, "world") else ("root",)

    def _fire(self, p: Pending, at: int | None) -> None:
        """Make ``p`` happen and run to quiescence; tell the driver (``fired``) once it is past the path."""
        # only a decided step's footprint is asked for (sleep sets hold decided options)
        on = at is not None and self.record_from is not None and self.pos >= self.record_from
        rec = self.recorder if on else None
        if rec is not None:
            rec.begin()
        try:
            self.world.fire(p)
            self._drain()
        except Suspend:
            if rec is not None:
                rec.pause()
            if self.fired is not None and at is not None and self.pos >= len(self.path):
                self.fired(StepInfo(p.sid, p.owner, p.op), at)  # cut short: what it touches is unknown
            raise
        footprint = rec.end() if rec is not None else None
        if self.fired is not None and at is not None and self.pos >= len(self.path):  # it ended past the path
            self.fired(StepInfo(p.sid, p.owner, p.op, footprint), at)

    def _drain(self) -> None:
        peek, step, inf = self.env.peek, self.env.step, math.inf
        while peek() < inf:
            step()
            if self.stopped:  # stopped inside a process (SimPy turned the exception into its failure)
                raise Stop()

    def _loop(self) -> End:
        k, world = self.kernel, self.world
        assert k is not None
        k.record("-", "nemesis", "info", "run-start", {"seed": self.seed, "scenario": self.scenario.name})
        for node in k.nodes.values():
            k.start_writer(node)
        ReadableProcess(self.env, k.nemesis())
        while True:
            self._drain()
            due, nxt, can_wait = world.scan()
            if nxt is not None and nxt > self.guard:
                raise Unbounded(f"a run is still going at {nxt} ms (guard {self.guard} ms): "
                                "the bounds do not bound it")
            if not due:
                if nxt is None:
                    break
                self._advance(nxt)
                continue
            if len(due) == 1 and not can_wait:  # the common case: no decision to make
                self._fire(due[0], None)
                continue
            def steps(due: list[Pending] = due, can_wait: bool = can_wait) -> list[StepInfo]:
                options = [StepInfo(p.sid, p.owner, p.op) for p in due]
                if can_wait:
                    options.append(StepInfo(ADVANCE, GLOBAL, None))
                return options

            def label(i: int, due: list[Pending] = due, nxt: int | None = nxt) -> str:
                return self.describe(due[i]) if i < len(due) else f"time advances to {nxt} ms"

            i = self.choose("step", len(due) + can_wait, label, steps)
            if i == len(due):
                assert nxt is not None
                self._advance(nxt)
                continue
            self._fire(due[i], len(self.taken) - 1)
        self._clock_to(self.now() + self.tick)  # a replay in simulation runs until here (duration_ms)
        k.record("-", "nemesis", "info", "run-end", {})
        return End(self.now(), k.events)

    # ---- reading the run ---------------------------------------------------------------------------

    def describe(self, p: Pending) -> str:
        """A pending step in words."""
        who = p.sid[0] if p.sid[0] != GLOBAL else "nemesis"
        task = p.sid[1] if len(p.sid) > 1 else ""
        if p.kind == "timer":
            return f"{who}/{task} wakes"
        if p.kind == "arrive":
            return f"{p.about} of {who}/{task} reaches the store"
        if p.kind == "back":
            return f"the reply to {who}/{task}'s {p.about} arrives"
        return f"{who}/{task}'s {p.about} times out"

    def _advance(self, to: int) -> None:
        """Let time pass to ``to``; a writer that waited past the liveness bound meanwhile is a breach."""
        gap = self.liveness_gap(to)
        if gap > self.worst_gap:
            self.worst_gap = gap
        self._clock_to(to)

    def _clock_to(self, to: int) -> None:
        """Move SimPy's clock to ``to``, with nothing queued (SimPy processes one timeout, due then)."""
        env = self.env
        assert env.peek() == math.inf, "time advanced before SimPy reached quiescence"
        env.timeout(to - self.now())
        env.step()
        if self.kernel is not None:  # drop ended pause windows, as the kernel does when it next looks: a step
            for node in self.kernel.nodes.values():  # then reads them without changing them (``shared.py``)
                if node.pauses:
                    node.pauses = [(s, e) for s, e in node.pauses if e > to]

    def gap(self, now: int) -> int:
        """The longest liveness gap of the run so far (see :meth:`liveness_gap`)."""
        return max(self.worst_gap, self.liveness_gap(now))

    def stuck(self) -> tuple[str, ...]:
        """Nodes whose writer is still there (it has not made its attempts) when nothing is pending."""
        if self.kernel is None:
            return ()
        return tuple(n for n, node in self.kernel.nodes.items() if "writer" in node.tasks)

    def liveness_gap(self, now: int) -> int:
        """How long a writer has waited for the lock with no change of hands since the faults stopped.

        0 while a fault goes on (a window of errors is open, a pause or a timeout runs) or nobody waits.
        """
        fs = self.faults
        if fs.quiet_from >= now or not self.waiting:
            return 0
        return now - max(fs.quiet_from, self.last_progress, min(self.waiting.values()))

    def _since(self, now: int, cap: int) -> int | None:
        """What of the last change of hands and of the faults' end decides a future liveness gap, relative
        to now (capped): their later one, when a writer waits and it is after the oldest waiter's start.

        A gap counts from max(quiet_from, last progress, oldest waiter) (``liveness_gap``); writers that
        start waiting later start at now or after, and waiters only leave, so when nobody waits, or the
        oldest waiter started after both, neither counts for any future gap (an open fault's end is in the
        key's fault part).  So runs that differ by when they started meet (``Run.key``).
        """
        since = max(self.faults.quiet_from, self.last_progress)
        if not self.waiting or since <= min(self.waiting.values()):
            return None
        return min(now - since, cap)

    def key(self) -> tuple[Hashable, dict[str, str]]:
        """The canonical key of the state now (see ``statekey``), and the renaming of nodes it used."""
        k = self.kernel
        assert k is not None
        constants = {id(o): name for name, o in (
            ("kernel", k), ("world", self.world), ("env", self.env), ("network", self.network),
            ("store", self.store), ("matcher", self.matcher), ("workload", self.workload), ("run", self),
            ("scenario", self.scenario), ("lock", self.scenario.lock), ("storage", self.scenario.storage),
            ("wl", self.scenario.workload), ("policy", k.policy), ("new_id", k.new_id),
            ("faults", k.faults), ("pending", simpy.events.PENDING))}
        now = int(self.world.now())
        for node in k.nodes.values():  # drop past pause windows, as the kernel does when it next looks
            node.pauses = [(s, e) for s, e in node.pauses if e > now]
        nodes = sorted(k.nodes)

        cap = self.cap
        declared = getattr(self.workload, "body_state", None)

        def body(key: str, raw: bytes | None, keyer: Keyer) -> Hashable:
            return ("b", raw) if declared is None else declared(key, raw, keyer)

        # walls relative to the least skewed clock (0 when a clock drifts or jumps: then no shift is taken)
        skews = [node.clock.steady_skew for node in k.nodes.values()]
        steady = [s for s in skews if s is not None]
        base = min(steady) if steady and len(steady) == len(skews) else 0

        def encode(names: dict[str, str]) -> Hashable:
            e = Keyer(constants=constants, nodes=names, invented=self.world.invented, now=now,
                      epoch_now=EPOCH_MS + now, body=body, event=self.world.event_state, base_offset=base)
            order = sorted(nodes, key=lambda n: names[n])
            head = tuple(e.value(k.nodes[n]) for n in order)
            check_covered(self.store)  # a run-wide object encoded here, not through the keyer
            store = self.store.__explore_state__(e)
            pend = [p for p in self.world.pending if p.event is None]  # timers are reached through processes

            def one(enc: Keyer, p: Pending) -> Hashable:
                return (p.kind, p.lo - now, p.hi - now, enc.value(p.then))

            # ordered by their encodings in a scratch copy of the keyer (no need with one)
            ranked = sorted(pend, key=lambda p: repr(one(e.fork(), p))) if len(pend) > 1 else pend
            hops = tuple(one(e, p) for p in ranked)
            fs = self.faults
            # which classes of request were sent at this instant matters only while a fault may still
            # be placed (a fault plan names the first request of a class at an instant)
            sent = fs.seen if fs.seen_at == now and fs.left > 0 else ()
            # the fault budget (left, sent, quiet) and the open windows, fourth in the key: ``split_budget``
            # takes them apart in this layout
            faults = (fs.left, tuple(sorted((e.value(wk), st, end - now)
                                            for wk, (st, end) in fs.windows.items() if end > now)),
                      tuple(sorted((e.value(s) for s in sent), key=repr)), max(fs.quiet_from - now, 0))
            # liveness needs of the past only how long ago things were, capped at the bound (beyond it,
            # a waiting writer would have made this path a violation already), and of the last change of
            # hands and the end of the faults only what a gap would count from (``liveness_gap``)
            waiting = tuple(sorted((names[n], min(now - t, cap)) for n, t in self.waiting.items()))
            progress = self._since(now, cap)
            when = now if self.bounds.absolute_time else None
            return (head, store, hops, faults, waiting, progress, when)

        def signature(n: str) -> Hashable:
            node = k.nodes[n]
            tasks = []
            for name, t in sorted(node.tasks.items()):
                gen: Any = t.handle.generator if isinstance(t.handle, ReadableProcess) else None
                if gen is not None and gen.gi_frame is not None:  # the task and its protocol generator
                    tasks.append((name, shape(gen), shape(t.body)))
            # the clock (its offset: with skew, writers differ by it) keeps apart nodes that no renaming
            # can swap, so only truly interchangeable ones are encoded in both orders
            clock = node.clock
            return (node.incarnation, len(node.pauses), n in self.waiting, tuple(tasks),
                    clock.offset_ms - base, clock.drift_ppm, clock.jumps)

        return canonical(encode, nodes, self.reductions.symmetry, signature)

    def fault_plan(self) -> FaultPlan:
        """The faults this run injected, as a fault plan the simulated world applies the same way."""
        errors: list[ErrorRule] = []
        pauses: list[Pause] = []
        crashes: list[Crash] = []
        for what, spec in self.injected:
            if what == "error":
                node, cls, method, status, at, key = spec
                errors.append(ErrorRule(node, _rule_key(cls, key), method, status, 1.0, at, at + 1, 1))
            elif what == "window":
                (node, cls, method), status, at, end, key = spec
                errors.append(ErrorRule(node, _rule_key(cls, key), method, status, 1.0, at, end))
            elif what == "pause":
                pauses.append(spec)
            elif what == "crash":
                crashes.append(spec)
        return FaultPlan(pauses=tuple(pauses), errors=tuple(errors), crashes=tuple(crashes))


# what a state key holds of the fault budget: faults left, the classes of request already sent at this instant
# (a fault goes on the first of each), and how long until the faults' effects end (liveness counts from there)
Budget = tuple[int, tuple[Hashable, ...], int]


def split_budget(key: Hashable) -> tuple[Hashable, Budget]:
    """A state key of ``Run.key`` as its core (everything but the fault budget) and its budget."""
    parts: tuple[Any, ...] = key  # type: ignore[assignment]
    left, windows, sent, quiet = parts[3]
    return (*parts[:3], windows, *parts[4:]), (left, sent, quiet)


def covers(theirs: Budget, mine: Budget) -> bool:
    """Whether a state with budget ``theirs`` can do all that one with ``mine`` and the same core can: as many
    faults left or more, none of the classes it already sent that ``mine`` has not (or ``mine`` has no fault
    left to place), and its faults' effects ending no later (a liveness gap counts from that end)."""
    (left, sent, quiet), (my_left, my_sent, my_quiet) = theirs, mine
    return left >= my_left and quiet <= my_quiet and (my_left == 0 or set(sent) <= set(my_sent))


def _rule_key(cls: str, key: str) -> str:
    """An error rule's key for a fault on a request of class ``cls`` to ``key``.

    The fault plan matches ``lock`` and ``register`` as classes and any other rule key as a key
    prefix (``model.runtime.faults.FaultMatcher``): a fault on one of the other objects (the audit enable
    file, ...) names its key, or the simulated world would fault no request.  A window of errors on
    that class then covers that key only; a replay that differs for it says so (``replays_exactly``).
    """
    return cls if cls in KEY_CLASSES else key
