"""The runtime kernel: nodes, tasks, the history and the fault plan, over any world.

Every world (the simulated one, real threads against a real server, a replay)
runs the sans-I/O protocol generators through this kernel.  It knows no protocol:
a :class:`Workload` builds each node's writer task and says what a store write
means for the history; the kernel performs the effects (``model/runtime/effects.py``):
clocks, sleeps, tasks (spawn, cancel, interrupt), records, and storage calls
through the one client policy (``model/runtime/client.py``).

The kernel's own code is written as generators over a few primitives that a
:class:`World` provides: ``timeout(ms)`` and ``event()`` (things to wait for),
``request(node, effect)`` (send a storage request; its reply is waited for),
``start(gen)`` (run a generator concurrently) and an ``interrupt`` that a
started generator receives as the exception ``world.Interrupt`` at its current
wait.  SimPy runs those generators natively (they yield SimPy events); real
threads run them through a small trampoline (``backends/realworld.py``).

Semantics every world shares:

- A pause stops every task of a node: no effect starts, and no reply or
  wake-up is acted on, until the pause ends.
- ``Interrupt`` is delivered at the target's current sleep, or at its next
  effect that does something (a sent request is not recalled).
- ``Cancel`` stops a sleeping task at once, else after its current step; the
  caller waits for it (at most ``timeout_ms`` when the Cancel has one).
- ``Interrupt`` reaches a task where its interrupt policy lets it
  (``model/runtime/taskloop.py``; the writer's is the workload's ``interrupt`` setting).
- A crash kills every task of the node and forgets its shutdown hooks; a writer
  death kills the writer task; a graceful shutdown runs the node's shutdown hooks
  as tasks while the others go on, then stops the node like a crash.
- ``Now(monotonic=True)`` reads the node's monotonic clock (drifts, never jumps).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from model.config import FaultPlan, Pause, Shutdown
from model.explorable import Keyer
from model.runtime.client import Call, RetryPolicy
from model.runtime.clock import NodeClock
from model.runtime.effects import (
    STORAGE_EFFECTS,
    WRITER_TASK,
    Cancel,
    CheckInterrupt,
    Effect,
    Interrupt,
    Interrupted,
    IsAlive,
    Now,
    Record,
    ShutdownHook,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.runtime.faults import Action, HeartbeatStartFaults, timed_actions, timed_pauses
from model.runtime.history import Event
from model.runtime.objectstore import effect_key
from model.runtime.taskloop import Policy, any_action

THREAD_INTERRUPT = "interrupt"  # a world interrupt carrying a Java interrupt: the one cause a task survives

Gen = Generator[Any, Any, Any]


class Killed(Exception):
    """A task ends: crashed, its thread died, it was cancelled, or the run stopped."""


class WorldError(Exception):
    """The world cannot go on (e.g. a real server refused a request as misconfigured).

    ``about`` is recorded in the history; the world decides what happens to the run.
    """

    def __init__(self, message: str, about: dict[str, Any]) -> None:
        super().__init__(message)
        self.about = about


# ---- what a workload gives the kernel --------------------------------------------------------


@dataclass(frozen=True)
class WriterContext:
    """What a writer factory gets for one incarnation of a node's writer task."""

    node: str
    incarnation: int  # 1 at the start, +1 after every restart
    rng: random.Random  # this incarnation's own random stream
    new_id: Callable[[], str]  # owner ids: deterministic UUIDs in simulation

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "rng": "drawn from only by the writer it is handed to, which declares it (RegisterWriter, CowWriter "
               "and HudiWriter keep it as self.rng; the NBCC processes draw nothing)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The node and incarnation; the random stream is declared by the writer that draws from it."""
        return (k.node(self.node), self.incarnation, k.value(self.new_id))


WriterFactory = Callable[[WriterContext], Generator[Effect, Any, Any]]


class Workload(Protocol):
    """A protocol's plug-in: its writers, and what its store writes mean for the history."""

    def writer(self, ctx: WriterContext) -> Generator[Effect, Any, Any]:
        """The writer task of one incarnation of a node."""
        ...

    def key_class(self, key: str) -> str:
        """``lock``, ``register`` or another class name (error rules of the fault plan match on it)."""
        ...

    def observe(self, key: str, body: bytes, version: str | None) -> tuple[str, dict[str, Any]] | None:
        """The store-side event (``f``, value) of a successful write of ``key``, or None to record nothing."""
        ...

    @property
    def pause_triggers(self) -> Mapping[tuple[str, str], str]:
        """The events of a node's writer that start the fault plan's triggered pauses of that node:
        (``f``, ``type``) -> the ``Pause.trigger`` it fires (pauses at a time need none)."""
        ...


# ---- what a world gives the kernel -----------------------------------------------------------


class Handle(Protocol):
    """A started generator: it can be interrupted (the cause arrives as ``World.Interrupt``)."""

    @property
    def is_alive(self) -> bool: ...

    def interrupt(self, cause: Any = None) -> None: ...


class Lock(Protocol):
    """A lock a thread may take again while it holds it (``threading.RLock``)."""

    def acquire(self) -> bool: ...

    def release(self) -> None: ...


class World(Protocol):
    """The primitives a world provides the kernel (see the module doc)."""

    Interrupt: type[BaseException]  # its ``cause`` attribute names why

    def now(self) -> int:
        """True time, ms since the run started."""
        ...

    def read_clock(self, node: Node) -> int:
        """``node``'s wall clock (epoch ms, with the node's skew)."""
        ...

    def timeout(self, ms: int) -> Any:
        """Something to wait for that happens ``ms`` of true time from now."""
        ...

    def event(self) -> Any:
        """A one-shot signal: ``succeed(value)`` fires it; ``triggered`` says whether it has."""
        ...

    def any_of(self, events: list[Any]) -> Any:
        """Something to wait for that happens when the first of ``events`` does."""
        ...

    def start(self, gen: Gen) -> Handle:
        """Run ``gen`` concurrently."""
        ...

    def request(self, node: Node, effect: StorageEffect) -> Any:
        """Send one attempt of a storage request of ``node``; its reply (a StoreResult) is waited for.

        A world may answer at once, returning the StoreResult itself: the kernel then takes it without
        a wait, so it is the world's to deliver a cause that came meanwhile (by returning something to
        wait for instead).
        """
        ...

    @property
    def lock(self) -> Lock | None:
        """Guards the kernel's shared state where tasks run in parallel (threads); None where they run
        one at a time (SimPy).  The kernel takes it around every event and sleep, with ``acquire`` and
        ``release`` (cheaper than ``with``: what benchmarks/bench_backends.py's harness / bare client
        ratio, 1.07-1.08, rests on)."""
        ...


# ---- nodes and tasks -----------------------------------------------------------------------


@dataclass(eq=False)
class Task:
    node: Node
    name: str
    handle: Handle | None = None
    alive: bool = True
    in_sleep: bool = False
    pending_interrupt: bool = False
    cancel_requested: bool = False
    done: Any = None
    policy: Policy = any_action  # where this task notices an interrupt
    sleep_interruptible: bool = False  # an interrupt may end the current sleep at once
    body: Generator[Effect, Any, Any] | None = None  # the protocol generator the task runs

    # what another task reads or changes of it (``model/explore/shared.py``): Interrupt, Cancel, IsAlive
    __explore_shared__ = {"node": "c", "name": "c", "handle": "c", "done": "c", "policy": "c", "body": "c",
                          "alive": "r", "in_sleep": "r", "pending_interrupt": "r", "cancel_requested": "r",
                          "sleep_interruptible": "r"}

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "node": "the node whose tasks hold this task (the node encodes it)",
        "body": "the generator handle's process drives (Kernel._drive's local gen), encoded through handle",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The task's flags, its interrupt policy, its done signal and its process (which runs ``body``)."""
        return (self.name, self.alive, self.in_sleep, self.pending_interrupt, self.cancel_requested,
                self.sleep_interruptible, k.value(self.policy), k.value(self.done), k.value(self.handle))


@dataclass(eq=False)
class Node:
    name: str
    clock: NodeClock
    pauses: list[tuple[int, int]]  # [start, end) windows in true time
    triggered: list[Pause] = field(default_factory=list)  # pauses that wait for an event of the node
    tasks: dict[str, Task] = field(default_factory=dict)
    incarnation: int = 0
    heartbeat_faults: HeartbeatStartFaults = field(default_factory=HeartbeatStartFaults)
    hooks: dict[str, Callable[[], Generator[Effect, Any, Any]]] = field(default_factory=dict)  # JVM hooks
    backend: Any = None  # the world's own per-node data (a real world's backend)

    # every task of the node reads its pauses (``_gate``), triggers and tasks (``model/explore/shared.py``)
    __explore_shared__ = {"name": "c", "clock": "c", "heartbeat_faults": "c", "backend": "c",
                          "incarnation": "r", "pauses": "m", "triggered": "m", "tasks": "m", "hooks": "m"}

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "backend": "a real world's per-node data; None in the explored world",
    }

    def process_name(self, task: str) -> str:
        return self.name if task == WRITER_TASK else f"{self.name}/{task}"

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Name, clock, pauses (true-time windows), triggered pauses, tasks, incarnation, heartbeat faults and
        the shutdown hooks in the order they run (a hook's key names its provider, which the hook encodes)."""
        return (k.node(self.name), k.value(self.clock),
                tuple((k.instant(start), k.instant(end)) for start, end in self.pauses),
                k.value(self.triggered), tuple((name, k.value(t)) for name, t in self.tasks.items()),
                self.incarnation, k.value(self.heartbeat_faults),
                tuple(k.value(h) for h in self.hooks.values()))


class Kernel:
    """Runs a workload's nodes in a world: tasks, effects, records, the client and the nemesis."""

    def __init__(self, world: World, workload: Workload, *, nodes: dict[str, NodeClock], faults: FaultPlan,
                 policy: Callable[[str], RetryPolicy], seed: int, new_id: Callable[[], str],
                 sink: Callable[[Event], None] | None = None,
                 on_error: Callable[[str, WorldError], None] | None = None,
                 writer_policy: Policy = any_action) -> None:
        self.world = world
        self.on_error = on_error
        self.writer_policy = writer_policy
        self.workload = workload
        self._triggers = workload.pause_triggers
        self.faults = faults
        self.policy = policy
        self.seed = seed
        self.new_id = new_id
        self.sink = sink
        self.starting: tuple[str, str] | None = None  # (node, task) of the generator being started (_start)
        self.events: list[Event] = []
        self._lock = world.lock
        self.nodes = {
            name: Node(name, clock, timed_pauses(faults, name),
                       triggered=[p for p in faults.pauses if p.node == name and p.trigger != "time"],
                       heartbeat_faults=HeartbeatStartFaults.of(faults, name))
            for name, clock in nodes.items()
        }
        self._policies: dict[str, RetryPolicy] = {}  # the client policy of each key asked so far
        # the effects that never wait, by type (Sleep, Cancel and storage calls wait: ``_waits``)
        self._instant: dict[type, Callable[[Task, str, Any], Any]] = {
            Now: self._now, Record: self._record, Spawn: self._spawn, Interrupt: self._interrupt,
            IsAlive: self._is_alive, ShutdownHook: self._shutdown_hook,
            CheckInterrupt: lambda task, process, effect: None,  # answered by the task loop, never here
        }
        # the effects that wait, by type
        self._waits: dict[type, Callable[[Task, Any], Gen]] = {
            Sleep: self._sleep, Cancel: self._cancel, **{kind: self._storage for kind in STORAGE_EFFECTS}}

    # ---- history -----------------------------------------------------------------------

    def record(self, node: str, process: str, type_: str, f: str, value: Any = None) -> None:
        """Append an event (and stream it to the sink, so a crashed run keeps what it wrote)."""
        n = self.nodes.get(node)
        world, lock = self.world, self._lock
        if lock is not None:
            lock.acquire()
        try:
            event = Event.make(len(self.events), world.now(), node, process, type_, f, value,
                               world.read_clock(n) if n else None)
            self.events.append(event)
            if self.sink is not None:
                self.sink(event)
            if n is not None and n.triggered and process == node and (f, type_) in self._triggers:
                self._trigger_pauses(n, f, type_)
        finally:
            if lock is not None:
                lock.release()

    def _trigger_pauses(self, node: Node, f: str, type_: str) -> None:
        """Start the pauses of this node that wait for its writer's event (``f``, ``type_``)."""
        now = self.world.now()
        wanted = self._triggers[(f, type_)]
        for p in [p for p in node.triggered if p.trigger == wanted and p.at_ms <= now]:
            node.triggered.remove(p)
            node.pauses.append((now, now + p.duration_ms))
            self.record(node.name, "nemesis", "info", "pause-start",
                        {"node": node.name, "trigger": p.trigger})
            self._start(node.name, "end_pause_later", self._end_pause_later(node, p.duration_ms))

    def _end_pause_later(self, node: Node, after: int) -> Gen:
        yield self.world.timeout(after)
        self.record(node.name, "nemesis", "info", "pause-end", {"node": node.name})

    def observe_write(self, node: Node, key: str, body: bytes, version: str | None,
                      extra: dict[str, Any] | None = None) -> None:
        """Record the store's side of a successful write, as the workload reads it."""
        seen = self.workload.observe(key, body, version)
        if seen is not None:
            f, value = seen
            self.record(node.name, "store", "info", f, {**value, **extra} if extra else value)

    # ---- tasks -------------------------------------------------------------------------

    def start_writer(self, node: Node) -> None:
        """Start a new incarnation of ``node``'s writer task."""
        node.incarnation += 1
        rng = random.Random(f"{self.seed}/{node.name}/{node.incarnation}")
        self.spawn(node, WRITER_TASK, self.workload.writer(WriterContext(node.name, node.incarnation, rng,
                                                                         self.new_id)), self.writer_policy)

    def spawn(self, node: Node, name: str, body: Generator[Effect, Any, Any],
              policy: Policy = any_action) -> Task:
        """Start ``body`` as task ``name`` of ``node`` (``policy``: where it notices an interrupt)."""
        task = Task(node, name, done=self.world.event(), policy=policy, body=body)
        node.tasks[name] = task
        task.handle = self._start(node.name, name, self._drive(task, body))
        return task

    def _start(self, node: str, task: str, gen: Gen) -> Handle:
        """``world.start(gen)``, saying whose generator it is meanwhile (``starting``: a world that names its
        processes reads it)."""
        self.starting = (node, task)
        try:
            return self.world.start(gen)
        finally:
            self.starting = None

    def kill(self, task: Task, cause: str) -> None:
        """End ``task`` at its current wait (``cause``: crash, death, cancel, stop)."""
        if task.alive and task.handle is not None and task.handle.is_alive:
            task.handle.interrupt(cause)

    def stop_all(self, cause: str = "stop") -> None:
        """Kill every task of every node."""
        for node in self.nodes.values():
            for task in list(node.tasks.values()):
                self.kill(task, cause)

    # ---- waiting -------------------------------------------------------------------------

    def _paused_until(self, node: Node, now: int) -> int:
        """The end of the pause ``node`` is in at ``now`` (``now`` when none); past pauses are dropped."""
        node.pauses = [(start, end) for start, end in node.pauses if end > now]
        return max((end for start, end in node.pauses if start <= now), default=now)

    def _gate(self, task: Task) -> Gen:
        """Hold the task while its node is paused (callers skip it when the node has no pauses left)."""
        while (until := self._paused_until(task.node, now := self.world.now())) > now:
            yield from self._wait(task, self.world.timeout(until - now))

    def _wait(self, task: Task, event: Any) -> Gen:
        """Wait for ``event``, turning interrupts into Interrupted (at a sleep) or Killed."""
        while True:
            try:
                return (yield event)
            except self.world.Interrupt as i:
                self._interrupted(task, i)

    @staticmethod
    def _interrupted(task: Task, interrupt: BaseException) -> None:
        """A wait of ``task`` got ``interrupt``: raise Interrupted (at a sleep) or Killed, or return to wait
        on with the interrupt pending.  (The hot waits, a sleep and a request, inline ``_wait``'s loop.)"""
        cause = getattr(interrupt, "cause", None)
        if cause == THREAD_INTERRUPT:
            if task.in_sleep and task.sleep_interruptible:
                raise Interrupted() from None
            task.pending_interrupt = True
            return
        raise Killed(cause) from None

    # ---- the task loop -----------------------------------------------------------------

    def _drive(self, task: Task, gen: Generator[Effect, Any, Any]) -> Gen:
        """Run a task's generator: step it to its next effect, perform the effect, hand back the answer.

        A cancelled task ends at its next effect; a pending interrupt is thrown in at the first effect
        its interrupt policy accepts (a Java interrupt is a flag a thread sees only at interruptible
        points; ``model/runtime/taskloop.py``); ``CheckInterrupt`` is answered here.
        """
        node = task.node
        process = node.process_name(task.name)
        answer: Any = None
        error: BaseException | None = None
        try:
            while True:
                try:
                    effect = gen.send(answer) if error is None else gen.throw(error)
                except StopIteration:
                    return
                answer = error = None  # an effect left unanswered gets None
                if task.cancel_requested:
                    return
                if task.pending_interrupt and task.policy(effect):
                    task.pending_interrupt = False
                    error = Interrupted()
                    continue
                kind = type(effect)
                if kind is CheckInterrupt:
                    continue  # no interrupt to deliver here: the check answers None
                if node.pauses:
                    yield from self._gate(task)
                try:
                    perform = self._instant.get(kind)
                    if perform is not None:  # no generator for the effects that never wait
                        answer = perform(task, process, effect)
                    else:
                        answer = yield from self._waits[kind](task, effect)
                except Interrupted as e:
                    error = e
        except Killed as k:
            if k.args and k.args[0] == "death":
                self.record(node.name, process, "info", "thread-died", {"task": task.name})
        except WorldError as e:
            self.record(node.name, process, "info", "storage-error", e.about)
            if self.on_error is None:
                raise
            self.on_error(process, e)
        finally:
            task.alive = False
            gen.close()
            if node.tasks.get(task.name) is task:
                del node.tasks[task.name]
            task.done.succeed()

    # ---- the effects that never wait (see ``_instant``) ------------------------------------

    def _now(self, task: Task, process: str, effect: Now) -> int:
        node = task.node
        return node.clock.monotonic(self.world.now()) if effect.monotonic else self.world.read_clock(node)

    def _record(self, task: Task, process: str, effect: Record) -> None:
        self.record(task.node.name, process, effect.type, effect.f, effect.value)

    def _spawn(self, task: Task, process: str, effect: Spawn) -> bool:
        node = task.node
        if not node.heartbeat_faults.allows(effect.name):
            effect.body.close()
            return False
        self.spawn(node, effect.name, effect.body)
        return True

    def _interrupt(self, task: Task, process: str, effect: Interrupt) -> None:
        self.interrupt_task(task.node, effect.name)

    def interrupt_task(self, node: Node, name: str) -> None:
        """Java's ``Thread.interrupt`` of task ``name`` of ``node``: it sees the interrupt at its current
        interruptible sleep, else where its interrupt policy next allows (a world's own thread may call it:
        the lock world of Hudi's JVM, whose heartbeat interrupts the writer)."""
        target = node.tasks.get(name)
        if target is not None and target.alive:
            lock = self._lock
            if lock is not None:
                lock.acquire()
            try:
                sleeping = target.in_sleep and target.sleep_interruptible
                if not sleeping:
                    target.pending_interrupt = True
            finally:
                if lock is not None:
                    lock.release()
            if sleeping and target.handle is not None:
                target.handle.interrupt(THREAD_INTERRUPT)

    def _shutdown_hook(self, task: Task, process: str, effect: ShutdownHook) -> None:
        hooks = task.node.hooks
        if effect.hook is None:
            hooks.pop(effect.key, None)
        else:
            hooks[effect.key] = effect.hook

    def _is_alive(self, task: Task, process: str, effect: IsAlive) -> bool:
        target = task.node.tasks.get(effect.name)
        return target is not None and target.alive

    # ---- the effects that wait --------------------------------------------------------------

    def _sleep(self, task: Task, effect: Sleep) -> Gen:
        """A sleep: ended early by an interrupt its interrupt policy allows, or by a cancel."""
        node = task.node
        interruptible = task.policy(effect)
        lock = self._lock
        if lock is not None:
            lock.acquire()
        try:
            if task.pending_interrupt and interruptible:  # raced the start of the sleep (threads)
                task.pending_interrupt = False
                raise Interrupted()
            if task.cancel_requested:
                raise Killed("cancel")
            task.in_sleep, task.sleep_interruptible = True, interruptible
        finally:
            if lock is not None:
                lock.release()
        wake = self.world.timeout(node.clock.true_duration(effect.ms))
        try:
            while True:  # _wait, inlined
                try:
                    yield wake
                    break
                except self.world.Interrupt as i:
                    self._interrupted(task, i)
        finally:
            task.in_sleep = False
        if node.pauses:
            yield from self._gate(task)
        return None

    def _cancel(self, task: Task, effect: Cancel) -> Gen:
        """Stop a task of this node and wait for it (at most ``timeout_ms``): True when it stopped."""
        node = task.node
        target = node.tasks.get(effect.name)
        if target is not None and target.alive:
            lock = self._lock
            if lock is not None:
                lock.acquire()
            try:
                target.cancel_requested = True
                sleeping = target.in_sleep
            finally:
                if lock is not None:
                    lock.release()
            if sleeping:
                self.kill(target, "cancel")
            if target.done.triggered:  # a world that ends a sleeping task at once (threads): no wait
                return True
            if effect.timeout_ms is None:
                yield from self._wait(task, target.done)
            else:  # give up after the timeout (the task still stops after its step)
                limit = self.world.timeout(node.clock.true_duration(effect.timeout_ms))
                yield from self._wait(task, self.world.any_of([target.done, limit]))
                return bool(target.done.triggered)
        return True

    def _storage(self, task: Task, effect: StorageEffect) -> Gen:
        """One storage call: attempts through the world, retried by the client policy."""
        key = effect_key(effect)
        policy = self._policies.get(key)
        if policy is None:  # a key's policy never changes
            policy = self._policies[key] = self.policy(key)
        call: Call | None = None  # made only when the first answer is not the result
        while True:
            reply = self.world.request(task.node, effect)
            if type(reply) is StoreResult:  # answered at once (see World.request): no wait round
                answer = reply
            else:
                while True:  # _wait, inlined
                    try:
                        answer = yield reply
                        break
                    except self.world.Interrupt as i:
                        self._interrupted(task, i)
            if task.node.pauses:
                yield from self._gate(task)
            if call is None:
                if Call.first_is_final(policy, answer):
                    return answer
                call = Call(policy, effect)
            backoff = call.after(answer)
            if backoff is None:
                assert call.result is not None
                return call.result
            yield from self._wait(task, self.world.timeout(backoff))

    # ---- the nemesis -----------------------------------------------------------------------

    def nemesis(self, until_ms: int | None = None) -> Gen:
        """Apply the fault plan's timed actions to this kernel's nodes (stop at ``until_ms``)."""
        actions = timed_actions(self.faults, list(self.nodes))
        for _i, action in enumerate(actions):  # _i: where the nemesis stands (a declared loop position)
            if until_ms is not None and action.at_ms >= until_ms:
                return
            if action.at_ms > (now := self.world.now()):
                yield self.world.timeout(action.at_ms - now)
            self.apply(action)

    def apply(self, action: Action) -> None:
        """Apply one nemesis action now."""
        node = self.nodes[action.node]
        self.record(node.name, "nemesis", "info", action.kind, {"node": node.name})
        if action.kind == "crash":
            node.hooks.clear()
            for task in list(node.tasks.values()):
                self.kill(task, "crash")
        elif action.kind == "shutdown":
            self._start(node.name, "shutdown", self._shutdown(node, action.spec))
        elif action.kind == "restart":
            self.start_writer(node)
        elif action.kind == "writer-death":
            writer = node.tasks.get(WRITER_TASK)
            if writer is not None:
                self.kill(writer, "death")

    def _shutdown(self, node: Node, spec: Shutdown) -> Gen:
        """A graceful shutdown: run the shutdown hooks as tasks (the others go on), then, the spec's
        ``halt_after_hooks_ms`` later (the JVM's halt), stop the node."""
        hooks, node.hooks = list(node.hooks.values()), {}
        running = [self.spawn(node, f"shutdown-hook-{i}", hook()) for i, hook in enumerate(hooks)]
        for _i, task in enumerate(running):  # _i: which hook it waits for (a declared loop position)
            yield task.done
        if spec.halt_after_hooks_ms:
            yield self.world.timeout(spec.halt_after_hooks_ms)
        self.record(node.name, "nemesis", "info", "shutdown-stop", {"node": node.name})
        for task in list(node.tasks.values()):
            self.kill(task, "crash")
        if spec.restart_after_ms >= 0:
            yield self.world.timeout(spec.restart_after_ms)
            self.record(node.name, "nemesis", "info", "restart", {"node": node.name})
            self.start_writer(node)
