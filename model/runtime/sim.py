"""The simulated world: SimPy virtual time, per-node clocks, an exact object store, a fault plan.

The runtime kernel (``model/runtime/kernel.py``) runs the protocol; this module gives it
a world: SimPy drives the kernel's generators natively (they yield SimPy events),
and :class:`SimNetwork` carries each storage request to the store and back.  One
seed decides everything: every random draw comes from generators seeded from it,
and SimPy orders simultaneous events deterministically, so the same seed gives the
same history, byte for byte.

Semantics of the simulated network:

- A request is applied atomically at the store when it arrives (after a drawn
  one-way latency); its reply takes another drawn latency.  Requests live on
  after the task that sent them dies (a crash does not unsend a request).
- The fault plan's error rules (``model/runtime/faults.py``): 409/412/429/503 answered
  without applying, ``timeout`` (not applied; the client waits
  ``storage.timeout_ms``), ``lost-reply`` (applied, then the client times out);
  a cut-off node's requests time out unapplied; a reply later than
  ``storage.timeout_ms`` is a timeout.
- S3's 409 ConditionalRequestConflict for overlapping writes to one key, with
  ``storage.conflict_prob`` inside ``storage.conflict_window_ms``.
- The client retries as ``model/runtime/client.py`` says (``storage.sdk_retries``,
  ``storage.retry_backoff_ms``); that retry is what turns a lost reply into a 412.
- A scenario's ``schedule`` (empty by default) scripts the latencies and the order of
  steps due at one instant, so a schedule found by ``hcc explore-lock`` replays exactly.
"""

from __future__ import annotations

import functools
import posixpath
import random
from collections.abc import Callable, Generator, Hashable
from typing import Any

import simpy
from simpy.events import NORMAL, URGENT, EventPriority, Initialize, Timeout

from model.config import Dist, Scenario, Schedule, client_settings
from model.explorable import Keyer
from model.lock.audit import enable_body, enable_key
from model.runtime.client import RetryPolicy
from model.runtime.clock import ClockJump, NodeClock
from model.runtime.effects import BARE, Outcome, Put, StorageEffect, StoreResult
from model.runtime.faults import FaultMatcher
from model.runtime.history import Event
from model.runtime.kernel import Kernel, Lock, Node, Workload, WriterContext, WriterFactory
from model.runtime.objectstore import ObjectStore, Store, effect_key, is_write
from model.runtime.sampling import draw
from model.runtime.taskloop import interrupt_policy
from model.workloads.lock import LockWorkload

ERROR_OUTCOMES = {"409": Outcome.CONFLICT, "412": Outcome.PRECONDITION_FAILED, "429": Outcome.THROTTLED,
                  "503": Outcome.UNAVAILABLE}

__all__ = ["SimEnvironment", "SimWorld", "WriterContext", "WriterFactory", "node_clocks", "retry_policy",
           "run_scenario"]


def node_clocks(scenario: Scenario, nodes: list[str] | None = None) -> dict[str, NodeClock]:
    """Each node's clock as the scenario's ``clocks`` table sets it (offset, drift, jumps)."""
    clocks: dict[str, NodeClock] = {}
    for name in scenario.workload.nodes() if nodes is None else nodes:
        spec = scenario.clocks.get(name)
        clocks[name] = NodeClock() if spec is None else NodeClock(
            spec.offset_ms, spec.drift_ppm, tuple(ClockJump(j.at_ms, j.by_ms) for j in spec.jumps))
    return clocks


def retry_policy(scenario: Scenario) -> Callable[[str], RetryPolicy]:
    """The client's retry policy per key (``model.config.client_settings``: Hudi's, by variant).

    Keys in the lock's folder (``.hoodie/.locks/``: the lock file, the audit trail and its enable
    file) go through Hudi's storage lock client; every other key (the table's files, the guarded
    register) through the table's storage layer, with ``storage.table_retries``.
    """
    cs = client_settings(scenario)
    lock_client = RetryPolicy(cs.sdk_retries, cs.retry_backoff_ms)
    if cs.table_retries == cs.sdk_retries:
        return lambda key: lock_client
    table = RetryPolicy(cs.table_retries, cs.retry_backoff_ms)
    lock_folder = posixpath.dirname(scenario.lock.lock_key) + "/"
    return lambda key: lock_client if key.startswith(lock_folder) else table


def sampler(rng: random.Random, dist: Dist) -> Callable[[], int]:
    """``draw(rng, dist)`` as a function of nothing: the same numbers from the same stream.

    A uniform draw is ``randint(lo, hi)``: ``lo`` + one ``_randbelow(hi - lo + 1)``, which is
    CPython's rejection sampling on ``getrandbits`` (``Random._randbelow_with_getrandbits``),
    written out here (``tests/test_sim_fast_paths.py`` holds it to ``draw``): ``rfc91-safe`` runs
    about 4% more lock operations per second than with ``draw`` (20,970 against 20,040, CPU time,
    least of 7 fresh processes each, as ``benchmarks/bench_lock_model.py`` measures).
    """
    if dist.kind != "uniform":
        return functools.partial(draw, rng, dist)
    lo, n = dist.lo, dist.hi - dist.lo + 1
    k, getrandbits = n.bit_length(), rng.getrandbits

    def uniform() -> int:
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return lo + r

    return uniform


class _Start(simpy.Event):
    """A request's start: due at the current instant before its normal events, as a new process's start is."""

    priority = URGENT


class _Ranked(Timeout):
    """A scripted timer or hop: due in ``delay``, after every unranked event of its instant, in rank order."""

    def __init__(self, env: simpy.Environment, delay: int, rank: int) -> None:
        self.priority = EventPriority(2 + rank)  # any int orders events
        super().__init__(env, delay)


_OWN_PRIORITY = frozenset({_Start, _Ranked})


class SimEnvironment(simpy.Environment):
    """SimPy's environment, where an event of ``_OWN_PRIORITY`` is queued with the priority it names.

    ``Environment.schedule`` is the documented method through which SimPy queues every event; this
    override changes only the priority of a request's start (urgent, as the SimPy process that each
    request once was) and of a scripted timer (its rank), so both are made with SimPy's public
    ``Event.succeed`` and ``Timeout``.
    """

    def schedule(self, event: simpy.Event, priority: EventPriority = NORMAL, delay: float = 0) -> None:
        """Queue ``event`` (see ``simpy.Environment.schedule``), with its own priority if it names one."""
        if type(event) in _OWN_PRIORITY:
            priority = event.priority  # type: ignore[attr-defined]
        super().schedule(event, priority, delay)


class ScriptedTimes:
    """A :class:`~model.config.Schedule` applied to a SimPy environment (see there).

    ``timeout(ms)`` makes the i-th timer or hop: with a rank left, an event due in ``ms`` whose
    priority (2 + rank) puts it after every unranked event of its instant and orders it among the
    ranked ones; else SimPy's own timeout.  ``latency()`` gives the next scripted latency, or None.
    """

    def __init__(self, env: SimEnvironment, schedule: Schedule) -> None:
        self.env = env
        self._ranks = iter(schedule.ranks)
        self._latencies = iter(schedule.latencies_ms)

    def timeout(self, ms: int) -> Timeout:
        """The next timer or hop, due in ``ms`` (ranked while the schedule has ranks left)."""
        rank = next(self._ranks, None)
        if rank is None:
            return self.env.timeout(ms)
        return _Ranked(self.env, ms, rank)

    def latency(self) -> int | None:
        """The next scripted latency, or None when the schedule has no more."""
        return next(self._latencies, None)


def uuid4_string(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))``, spelled out: the version and variant bits set, then the
    hex digits grouped 8-4-4-4-12 (an owner id is made for every provider)."""
    bits = (bits & ~(0xC000 << 48) & ~(0xF000 << 64)) | (0x8000 << 48) | (4 << 76)
    h = f"{bits:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class _Reply(simpy.Event):
    """A request's reply: only the task that sent the request waits for it."""


# the events a process waits for that have no callback but the process's own (see SimNetwork._runs_next)
_SOLE_WAITER = frozenset({Timeout, Initialize, _Reply})


class SimNetwork:
    """Carries a node's request to the store and its reply back, with latency and the fault plan."""

    def __init__(self, env: SimEnvironment, scenario: Scenario, store: Store, rng: random.Random,
                 matcher: FaultMatcher, observe: Callable[[Node, str, bytes, str | None], None],
                 script: ScriptedTimes | None = None) -> None:
        self.env = env
        self.cfg = scenario.storage
        self.timeout_ms = client_settings(scenario).timeout_ms
        self.store = store
        self.rng = rng
        self.matcher = matcher
        self.observe = observe
        self.script = script
        self.last_write_at: dict[str, int] = {}
        self.latency = sampler(rng, self.cfg.latency_ms)
        # a schedule orders the timers of an instant: each is made by the script
        self._timeout: Callable[[int], Timeout] = env.timeout if script is None else script.timeout

    def request(self, node: Node, effect: StorageEffect) -> Any:
        """Send one attempt; the returned SimPy event fires with its StoreResult.

        The request starts in an event of its own at the current instant (as a new SimPy
        process would, with the same priority), then moves on timeouts' callbacks: no
        process, no generator, the same order of events.  When that start event would be
        the very next thing SimPy does (:meth:`_runs_next`), the request starts at once
        instead, without the event.
        """
        env = self.env
        reply = _Reply(env)
        flight = _Flight(self, node, effect, reply)
        proc = env.active_process
        if proc is not None and type(proc.target) in _SOLE_WAITER and self._runs_next():
            flight.send()
            return reply
        start = _Start(env)
        start.callbacks.append(flight.send)
        start.succeed()
        return reply

    def answer(self, reply: Any, result: StoreResult) -> None:
        """Hand the request's waiter its result (an event of its own, at the current instant)."""
        reply.succeed(result)

    def _runs_next(self) -> bool:
        """True when nothing is queued at the current instant, so that an event scheduled now would be the
        next one SimPy processes (``Environment.peek``: the time of the next queued event).

        Doing its work at once is then the same run, provided nothing else runs before SimPy would
        pop it: the caller is the only callback of the event being processed.  A process woken by an
        event only it waits for (a Timeout, a reply, its start) is that event's only callback
        (``request``: ``_SOLE_WAITER``), and once its request is sent the task only yields the reply.
        Events queued at this instant (of any priority) leave the request to its start event.
        """
        env = self.env
        return env.peek() > env.now

    def _later(self, ms: int, then: Callable[[Any], None]) -> None:
        """Call ``then`` ``ms`` of true time from now, on a timeout of its own."""
        self._timeout(ms).callbacks.append(then)

    def _hop(self, then: Callable[[Any], None]) -> None:
        """Carry a request to the store, or its reply back, after one network latency."""
        scripted = None if self.script is None else self.script.latency()
        self._later(self.latency() if scripted is None else scripted, then)

    def _send(self, node: Node, effect: StorageEffect, reply: Any, _: Any = None) -> None:
        _Flight(self, node, effect, reply).send()

    def _apply(self, node: Node, effect: StorageEffect, key: str, write: bool) -> StoreResult:
        """Apply at the store, with S3's 409 for overlapping conditional writes, and record what changed.

        ``key`` is the effect's key (a listing's prefix); ``write`` says whether it may change the store.
        """
        cfg = self.cfg
        now = int(self.env.now)
        if (
            write
            and cfg.conflict_prob > 0
            and key in self.last_write_at
            and now - self.last_write_at[key] <= cfg.conflict_window_ms
            and self.rng.random() < cfg.conflict_prob
        ):
            return BARE[Outcome.CONFLICT]
        result = self.store.apply(effect, node=node.name, now=now)
        if write and result.ok:
            self.last_write_at[key] = now
            obj = self.store.peek(key)
            if obj is not None:
                self.observe(node, key, obj.body, result.version)
        return result


class _Flight:
    """One attempt of a request on its way: sent, applied at the store, answered (or timed out).

    Its steps are the callbacks of the network's timeouts (one object per request instead of two
    closures and their cells).  The explorer reads a pending request's state from its declaration
    (``__explore_state__``).
    """

    def __init__(self, net: SimNetwork, node: Node, effect: StorageEffect, reply: Any) -> None:
        self.net, self.node, self.effect, self.reply = net, node, effect, reply

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "net": "the network, a run-wide object",
        "key": "effect_key(effect) (the effect is in the state)",
        "write": "is_write(effect) (the effect is in the state)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Who sent what when (``sent``: a true instant), the fault it met and the store's answer so far."""
        return (k.value(self.node), k.value(self.effect), k.value(self.reply), k.instant(self.sent),
                k.value(self.action), k.value(getattr(self, "result", None)))

    def send(self, _: Any = None) -> None:
        net, effect = self.net, self.effect
        self.sent = sent = int(net.env.now)
        self.key = key = effect_key(effect)
        self.write = write = is_write(effect)
        self.action = action = net.matcher.decide(self.node.name, write, key, sent)
        if action in ("cutoff", "timeout"):
            net._later(net.timeout_ms, self.time_out)
            return
        net._hop(self.arrive)

    def arrive(self, _: Any) -> None:
        net, action = self.net, self.action
        if action in ERROR_OUTCOMES:
            self.result = BARE[ERROR_OUTCOMES[action]]
        else:
            self.result = net._apply(self.node, self.effect, self.key, self.write)
        if action == "lost-reply":
            net._later(max(0, self.sent + net.timeout_ms - int(net.env.now)), self.time_out)
            return
        net._hop(self.back)

    def back(self, _: Any) -> None:
        net = self.net
        late = net.env.now - self.sent > net.timeout_ms
        net.answer(self.reply, BARE[Outcome.TIMEOUT] if late else self.result)

    def time_out(self, _: Any) -> None:
        self.net.answer(self.reply, BARE[Outcome.TIMEOUT])


class SimPyWorld:
    """The kernel's primitives on SimPy (see :class:`model.runtime.kernel.World`)."""

    Interrupt: type[BaseException] = simpy.Interrupt

    def __init__(self, env: SimEnvironment) -> None:
        self.env = env
        self.lock: Lock | None = None  # tasks never run in parallel
        # the primitives are SimPy's own (virtual times are integers: every delay is)
        self.timeout: Callable[[int], Any] = env.timeout
        self.event: Callable[[], Any] = env.event
        self.any_of: Callable[[list[Any]], Any] = env.any_of
        self.start: Callable[[Generator[Any, Any, Any]], Any] = env.process

    def now(self) -> int:
        """True time: SimPy's clock, ms since the run started."""
        return int(self.env.now)

    def read_clock(self, node: Node) -> int:
        """``node``'s wall clock now."""
        return node.clock.read(int(self.env.now))

    def request(self, node: Node, effect: StorageEffect) -> Any:
        """Send a storage request (see :meth:`attach`)."""
        raise RuntimeError("no network: SimPyWorld.attach one first")

    def attach(self, network: SimNetwork) -> None:
        """Carry the storage requests of the kernel over ``network`` (``request`` is the network's own)."""
        self.request = network.request  # type: ignore[method-assign]


class SimWorld:
    """One simulated run of a scenario.  ``run()`` returns the history; ``store`` holds the final objects.

    ``workload`` is the protocol's workload (default: the lock workload of the scenario; each protocol's
    ``Plugin.workload`` in ``model/protocols`` gives its own).  ``store`` replaces the model's own
    object store (a replay applies each request to a real backend too).
    """

    def __init__(
        self,
        scenario: Scenario,
        seed: int | None = None,
        sink: Callable[[Event], None] | None = None,
        store: Store | None = None,
        workload: Workload | None = None,
    ) -> None:
        scenario.validate()
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.workload: Workload = workload or LockWorkload(scenario)
        self.env = SimEnvironment()
        self.store: Store = store or ObjectStore(scenario.storage.flavor)
        if scenario.lock.audit:  # the table has Hudi's lock audit enabled (hudi-cli "locks audit enable")
            self.store.apply(Put(enable_key(scenario.lock.base_path), enable_body()))
        net_rng = random.Random(f"{self.seed}/net")
        self.id_rng = random.Random(f"{self.seed}/ids")
        script = ScriptedTimes(self.env, scenario.schedule) if scenario.schedule != Schedule() else None
        self.world = SimPyWorld(self.env)
        if script is not None:
            self.world.timeout = script.timeout
        self.kernel = Kernel(self.world, self.workload, nodes=node_clocks(scenario), faults=scenario.faults,
                             policy=retry_policy(scenario), seed=self.seed, new_id=self._new_owner_id,
                             sink=sink, writer_policy=interrupt_policy(scenario.workload.interrupt))
        faults = scenario.faults
        matcher = FaultMatcher(faults.errors, faults.cutoffs, net_rng, self.workload.key_class)
        self.world.attach(SimNetwork(self.env, scenario, self.store, net_rng, matcher,
                                     self.kernel.observe_write, script))

    @property
    def events(self) -> list[Event]:
        """The history so far."""
        return self.kernel.events

    def _new_owner_id(self) -> str:
        return uuid4_string(self.id_rng.getrandbits(128))

    def run(self) -> list[Event]:
        """Run the scenario for ``duration_ms`` of true time and return the history."""
        k = self.kernel
        k.record("-", "nemesis", "info", "run-start", {"seed": self.seed, "scenario": self.scenario.name})
        for node in k.nodes.values():
            k.start_writer(node)
        self.env.process(k.nemesis())
        self.env.run(until=self.scenario.duration_ms)
        k.record("-", "nemesis", "info", "run-end", {})
        return k.events


def run_scenario(
    scenario: Scenario,
    seed: int | None = None,
    sink: Callable[[Event], None] | None = None,
    workload: Workload | None = None,
) -> list[Event]:
    """Run one simulated scenario and return its history (the lock workload unless one is given)."""
    return SimWorld(scenario, seed, sink, workload=workload).run()
