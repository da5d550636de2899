"""The explored world: the simulated world with a scheduler that takes every nondeterministic decision.

It is the simulated world of ``model/runtime/sim.py`` (SimPy's virtual time, the same kernel,
the same network code and object store) with one difference: nothing is drawn.
Every timer and every network hop is a *pending step* held here instead of in
SimPy's queue, and at each instant the run's driver picks which due step happens
next.  A step runs to quiescence: SimPy then processes only what it triggers at the
same instant (process resumptions, signals, interrupts), so SimPy's queue is empty
between steps and the pending steps are the whole future.

- A timer is due exactly at its deadline; timers due at one instant fire in a chosen
  order.
- A network hop (a request reaching the store, a reply reaching its client) is due
  from the instant it is sent until ``latency_ticks`` ticks later; delivering it at a
  later instant is the "advance" choice.
- Inside a step the chooser also decides the faults: at a request's send, an error
  answer, a lost reply or a window of errors (``ExploreMatcher``); at a writer's
  acquisition or its decided write, a pause (the run's sink).

Each step has a stable identity (``sid``: its process, by node, task, incarnation and
spawn count, as the kernel names what it starts: ``Kernel.starting``) for the sleep sets of the
search, an owner (the node whose local state
it changes, ``*`` for the nemesis) and, for a request reaching the store, the object
it touches: that is what decides whether two steps commute.

The protocol code reads this world's clocks as typed times (``values.py``: a wall reading, an
instant) and its storage answers as bodies that know their key, and the world keeps the names
its store invents (``invented``), so that the state key recognises each for what it is; how a
SimPy event or process is part of a state is this world's to say (:meth:`ExploreWorld.event_state`).

The order of steps chosen here is replayable in the simulated world: the i-th timer
or hop made gets the rank of its firing (``model.config.Schedule``), and SimPy then
processes steps due at one instant in rank order, after what they trigger.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

import simpy

from model.config import Scenario
from model.explore.statekey import Keyer as StateKeyer
from model.explore.values import InstantMs, WallMs, body_of
from model.runtime.effects import FencedPut, ListPrefix, StorageEffect, StoreResult
from model.runtime.faults import FaultMatcher
from model.runtime.kernel import Kernel, Lock, Node
from model.runtime.objectstore import Store, is_write
from model.runtime.sim import _SOLE_WAITER, SimEnvironment, SimNetwork, _Reply, _Start

Gen = Generator[Any, Any, Any]
Sid = tuple[Any, ...]
GLOBAL = "*"


class ReadableProcess(simpy.Process):
    """A SimPy process that keeps its generator where the state key reads it (``generator``)."""

    def __init__(self, env: simpy.Environment, generator: Gen) -> None:
        self.generator = generator
        super().__init__(env, generator)


class Suspend(Exception):
    """The run reached a decision past the end of its scripted path: it stops there."""


@dataclass(eq=False)
class Pending:
    """A timer or a network hop that has not happened yet."""

    sid: Sid
    kind: str  # timer | arrive | back | expire (a client's timeout, or a reply that will not come)
    owner: str  # the node whose local state the step changes, GLOBAL for the nemesis
    lo: int  # first instant it may happen
    hi: int  # last instant it may happen
    created: int  # index among every timer and hop made (the schedule's rank slot)
    event: simpy.Event | None = None  # a timer: what its process waits for
    then: Callable[[Any], None] | None = None  # a hop: what it does
    # an arrival: key (a listing's prefix), is it a write, the key it fences on, is it a listing
    op: tuple[str, bool, str, bool] | None = None
    latency_slot: int | None = None  # a latency hop: its index among them (the schedule's latency slot)
    request: Any = None  # a hop: the request it carries

    @property
    def about(self) -> str:
        """What a hop carries, for step tables (made when asked: most hops are never described)."""
        req = self.request
        return "" if req is None else f"{type(req.effect).__name__}({req.key})"

    @property
    def alive(self) -> bool:
        """A timer nobody waits for any more (its sleep was interrupted) is dead."""
        return self.event is None or bool(self.event.callbacks)


@dataclass
class Fired:
    """A step as it happened (for step tables and the schedule of a counterexample)."""

    time: int
    pending: Pending


class ExploreWorld:
    """The kernel's primitives on SimPy, with timers held as pending steps (see the module doc)."""

    Interrupt: type[BaseException] = simpy.Interrupt
    lock: Lock | None = None  # tasks never run in parallel

    def __init__(self, env: SimEnvironment, tick: int, latency_ticks: int) -> None:
        self.env = env
        self.nodes: dict[str, Node] = {}  # the kernel's nodes, once it has them
        self.kernel: Kernel | None = None  # the kernel, once there is one (it names what it starts)
        self.invented: set[str] = set()  # the names the run made: owner ids, version tags
        self.conditions: dict[int, tuple[Any, list[Any]]] = {}  # any_of's events, by the condition's id
        self._now: tuple[float, InstantMs] = (-1.0, InstantMs(0))
        self.tick = tick
        self.max_latency = latency_ticks * tick
        self.network: ExploreNetwork | None = None
        self.pending: list[Pending] = []
        self.made = 0  # timers and hops made so far
        self.hops = 0  # latency hops made so far
        self.fired: list[Fired] = []
        self.pids: dict[simpy.Process, tuple[tuple[Any, ...], str]] = {}  # a process's identity and owner
        self._spawns: dict[tuple[str, str], int] = {}
        self._timers: dict[int, Pending] = {}
        self.sole: simpy.Event | None = None  # the timer fired last, when one callback waited for it
        self.event: Callable[[], Any] = env.event

    # ---- the World protocol ----------------------------------------------------------------

    def now(self) -> int:
        """True time: SimPy's clock, as an instant."""
        now = self.env.now
        if self._now[0] != now:
            self._now = (now, InstantMs(int(now)))
        return self._now[1]

    def read_clock(self, node: Node) -> int:
        """``node``'s wall clock now, as a wall reading."""
        return WallMs(node.clock.read(int(self.env.now)))

    def any_of(self, events: list[Any]) -> Any:
        """SimPy's AnyOf (a timeout in it is a pending timer like any other; once the condition fires, SimPy
        drops its callback from the timer, which is then dead: ``Pending.alive``), kept for the state key."""
        cond = self.env.any_of(events)
        self.conditions[id(cond)] = (cond, list(events))
        return cond

    def start(self, gen: Gen) -> simpy.Process:
        """Run ``gen`` as a process named by its node, task, incarnation and spawn count (its ``sid``): the
        kernel says whose it is (``Kernel.starting``); what the run starts itself is the nemesis's."""
        proc = ReadableProcess(self.env, gen)
        starting = self.kernel.starting if self.kernel is not None else None
        if starting is None:
            starting = (GLOBAL, getattr(gen, "__name__", "proc").lstrip("_"))
        owner, name = starting
        count = self._spawns.get((owner, name), 0)
        self._spawns[(owner, name)] = count + 1
        node = self.nodes.get(owner)
        incarnation = node.incarnation if node is not None else 0
        self.pids[proc] = ((owner, name, incarnation, count), owner)
        return proc

    def timeout(self, ms: int) -> simpy.Event:
        """A timer: an event that :meth:`fire` triggers when the run chooses it, due ``ms`` from now."""
        event = self.env.event()
        pid, owner = self.current()
        due = int(self.env.now) + ms
        step = self._add(Pending((*pid, "timer"), "timer", owner, due, due, 0, event=event))
        self._timers[id(event)] = step
        return event

    def request(self, node: Node, effect: StorageEffect) -> Any:
        """Send a storage request over the explored network."""
        assert self.network is not None
        return self.network.request(node, effect)

    # ---- pending steps ---------------------------------------------------------------------

    def current(self) -> tuple[tuple[Any, ...], str]:
        """The identity and owner node of the process running now."""
        got = self.pids.get(self.env.active_process)  # type: ignore[arg-type]  # None: no process runs
        return (("root",), GLOBAL) if got is None else got

    def _add(self, step: Pending) -> Pending:
        step.created = self.made
        self.made += 1
        self.pending.append(step)
        return step

    def timer_of(self, event: Any) -> Pending | None:
        """The pending timer behind a SimPy event, if it is one."""
        return self._timers.get(id(event))

    def event_state(self, k: StateKeyer, ev: simpy.Event) -> Hashable:
        """A SimPy event or process as part of a state: a process by its generator and what it waits for, a
        pending timer by when it is due, an AnyOf by its events, another event by its value once triggered;
        each with the callbacks that wait for it (who resumes when it fires)."""
        cbs = ev.callbacks
        waiting = None if cbs is None else tuple(k.value(c) for c in cbs)
        if isinstance(ev, ReadableProcess):
            return ("p", k.value(ev.generator), k.value(ev.target) if ev.is_alive else None, waiting)
        timer = self._timers.get(id(ev))
        if timer is not None:
            return ("T", timer.lo - k.now, waiting)
        cond = self.conditions.get(id(ev))
        if cond is not None and cond[0] is ev:
            return ("A", tuple(k.value(e) for e in cond[1]), ev.triggered, waiting)
        return ("E", ev.triggered, k.value(ev.value) if ev.triggered else None, waiting)

    def scan(self) -> tuple[list[Pending], int | None, bool]:
        """The live steps due now (ordered by identity), where time goes next, and whether it may go now.

        Time goes to the next tick while a due hop may still wait, else to the next step's instant
        (None: nothing is pending); it may not go while a due step's last instant is now.
        """
        now = int(self.env.now)
        due: list[Pending] = []
        alive: list[Pending] = []
        later: int | None = None
        can_wait = True
        hop_waits = False
        for p in self.pending:  # once per step of every run: attributes read once (bench_explore_speed)
            event, lo = p.event, p.lo
            if event is not None and not event.callbacks:
                continue  # a timer nobody waits for any more (its sleep was interrupted)
            alive.append(p)
            if lo <= now:
                due.append(p)
                if p.hi <= now:
                    can_wait = False
                else:
                    hop_waits = True
            elif later is None or lo < later:
                later = lo
        self.pending = alive
        if len(due) > 1:
            due.sort(key=lambda p: p.sid)
        nxt = now + self.tick if hop_waits else later
        return due, nxt, can_wait and nxt is not None

    def fire(self, step: Pending) -> None:
        """Make ``step`` happen now (the caller then runs SimPy to quiescence).

        SimPy's queue is empty here (a step runs to quiescence), so the timer's event is the next one
        processed, whatever its priority.
        """
        assert self.env.peek() == math.inf, "a step fired before SimPy reached quiescence"
        self.pending.remove(step)
        self.fired.append(Fired(int(self.env.now), step))
        if step.event is not None:
            self._timers.pop(id(step.event), None)
            self.sole = step.event if len(step.event.callbacks) == 1 else None
            step.event.succeed()
        else:
            assert self.network is not None and step.then is not None
            self.network.deliver(step)

    def drain(self) -> None:
        """Process everything SimPy has due at this instant."""
        env = self.env
        while env.peek() < math.inf:
            env.step()


@dataclass
class _Request:
    pid: tuple[Any, ...]
    owner: str
    effect: StorageEffect
    key: str


class ExploreNetwork(SimNetwork):
    """The simulated network with hops held as pending steps (latency chosen, not drawn)."""

    def __init__(self, world: ExploreWorld, scenario: Scenario, store: Store, matcher: FaultMatcher,
                 observe: Callable[[Node, str, bytes, str | None], None]) -> None:
        # the base class keeps an RNG for draws; nothing here draws from it
        super().__init__(world.env, scenario, store, random.Random(0), matcher, observe)
        self.world = world
        self._req: _Request | None = None
        self._kind = "arrive"

    def deliver(self, step: Pending) -> None:
        """Make a hop happen; hops made meanwhile belong to the same request."""
        assert step.then is not None
        saved = (self._req, self._kind)
        self._req = step.request
        self._kind = "back" if step.kind == "arrive" else "expire"
        try:
            step.then(None)
        finally:
            self._req, self._kind = saved

    def request(self, node: Node, effect: StorageEffect) -> Any:
        """Send a request: in an event of its own at the current instant, as the simulated network does, or at
        once when that event would be the very next thing SimPy does (``SimNetwork.request``: the process
        that sends it was woken by an event only it waits for, a reply or a timer fired with one callback,
        and nothing else is queued now).  The same run either way; at once skips an event (bench_explore_speed
        measures it)."""
        env = self.env
        reply = _Reply(env)
        pid, owner = self.world.current()
        key = getattr(effect, "key", getattr(effect, "prefix", ""))
        req = _Request(pid, owner, effect, key)

        def send(_: Any) -> None:
            saved = (self._req, self._kind)
            self._req, self._kind = req, "arrive"
            try:
                self._send(node, effect, reply)
            finally:
                self._req, self._kind = saved

        proc = env.active_process
        if proc is not None and self._runs_next() and (
                type(proc.target) in _SOLE_WAITER or proc.target is self.world.sole):
            send(None)
            return reply
        start = _Start(self.env)  # due now, urgent: as the SimPy process that a request once was
        start.callbacks.append(send)
        start.succeed()
        return reply

    def answer(self, reply: Any, result: StoreResult) -> None:
        reply.succeed(result)  # an event, always: the explorer fires one step at a time, then drains SimPy

    def _apply(self, node: Node, effect: StorageEffect, key: str, write: bool) -> StoreResult:
        """The store's answer, its version tag kept among the run's invented names and its body typed with
        its key (what the workload declares of a body depends on the key)."""
        result = super()._apply(node, effect, key, write)
        if result.version is not None:
            self.world.invented.add(result.version)
        if result.body is not None:
            result = replace(result, body=body_of(result.body, key))
        return result

    def _pending_hop(self, kind: str, lo: int, hi: int, then: Callable[[Any], None]) -> Pending:
        req = self._req
        assert req is not None
        op = None
        if kind == "arrive":
            fence = req.effect.fence_key if isinstance(req.effect, FencedPut) else ""
            op = (req.key, is_write(req.effect), fence, isinstance(req.effect, ListPrefix))
        return self.world._add(Pending((*req.pid, kind), kind, req.owner, lo, hi, 0, then=then, op=op,
                                       request=req))

    def _later(self, ms: int, then: Callable[[Any], None]) -> None:
        due = int(self.env.now) + ms
        self._pending_hop("expire", due, due, then)

    def _hop(self, then: Callable[[Any], None]) -> None:
        now = int(self.env.now)
        kind = self._kind if self._kind in ("arrive", "back") else "back"
        step = self._pending_hop(kind, now, now + self.world.max_latency, then)
        step.latency_slot = self.world.hops
        self.world.hops += 1


@dataclass
class FaultState:
    """The faults a run has used, and the windows of errors still open."""

    left: int
    windows: dict[tuple[str, str, str], tuple[str, int]] = field(default_factory=dict)  # -> status, end
    seen: set[tuple[str, str, str]] = field(default_factory=set)  # (node, class, method) sent this instant
    seen_at: int = -1
    quiet_from: int = 0  # when the last fault's effect ends (liveness counts from there)

    # every request a task sends while faults are left reads and marks it (``shared.py``)
    __explore_shared__ = {"left": "r", "seen_at": "r", "quiet_from": "r", "windows": "m", "seen": "m"}

    def first_at(self, node: str, cls: str, method: str, now: int) -> bool:
        """True for the first request of this class by ``node`` at ``now`` (a fault plan can name only it)."""
        if now != self.seen_at:
            self.seen, self.seen_at = set(), now
        key = (node, cls, method)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True
