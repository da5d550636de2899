"""The simulated world: SimPy virtual time, per-node clocks, an exact object store, a fault plan.

It interprets the effects of the sans-I/O protocol code.  One seed decides
everything: every random draw comes from generators seeded from it, and SimPy
orders simultaneous events deterministically, so the same seed gives the same
history, byte for byte.

Semantics worth knowing:

- A request is applied atomically at the store when it arrives (after a drawn
  one-way latency); its reply takes another drawn latency.  Requests live on
  after the task that sent them dies (a crash does not unsend a request).
- A pause stops every task of a node: no effect starts, and no reply or wake-up
  is acted on, until the pause ends.
- ``Interrupt`` is delivered where the target's interrupt policy allows it
  (``model.taskloop``): at once when it sleeps interruptibly, else at its next
  effect the policy accepts (a sent request is not recalled).  The writer's
  policy is ``workload.interrupt``.
- The client retries unknown outcomes (timeouts, 409, 429, 5xx) up to
  ``sdk_retries`` times, with the settings of ``model.config.client_settings``
  (Hudi's lock clients make one attempt; older releases let the SDK retry,
  which turns a lost reply into a 412).
- ``Cancel`` with a timeout gives up after it (the task stops after its step);
  ``Now(monotonic=True)`` reads the node's drifting, never-jumping clock.
- ``ShutdownHook`` effects register JVM shutdown hooks; a graceful shutdown
  (``faults.shutdowns``) runs them as tasks while the node's other tasks go on,
  then stops the node like a crash.
- With ``lock.audit`` the store starts with the table's audit enable file.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any

import simpy

from model.clock import ClockJump, NodeClock
from model.config import ErrorRule, Pause, Scenario, client_settings
from model.effects import (
    Cancel,
    CheckInterrupt,
    Effect,
    Interrupt,
    Interrupted,
    IsAlive,
    Now,
    Outcome,
    Put,
    Record,
    ShutdownHook,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.history import Event
from model.lock_audit import enable_body, enable_key
from model.lockfile import LockData
from model.objectstore import ObjectStore, Store, is_write
from model.storage_lock import WRITER_TASK, StorageLockProvider
from model.taskloop import HeartbeatStartFaults, Policy, TaskLoop, any_action, interrupt_policy
from model.workload import RegisterWriter, draw

ERROR_OUTCOMES = {"409": Outcome.CONFLICT, "429": Outcome.THROTTLED, "503": Outcome.UNAVAILABLE}


class _Killed(Exception):
    """A task ends: crashed, its thread died, or it was cancelled."""


@dataclass
class _Task:
    node: _Node
    name: str
    process: Any = None
    alive: bool = True
    in_sleep: bool = False
    pending_interrupt: bool = False
    cancel_requested: bool = False
    done: Any = None
    policy: Policy = any_action  # where this task notices an interrupt
    sleep_interruptible: bool = False  # the current sleep may be ended by an interrupt


@dataclass
class _Node:
    name: str
    clock: NodeClock
    pauses: list[tuple[int, int]]
    cutoffs: list[tuple[int, int]]
    tasks: dict[str, _Task] = field(default_factory=dict)
    incarnation: int = 0
    heartbeat_faults: HeartbeatStartFaults = field(default_factory=HeartbeatStartFaults)
    triggered: list[Pause] = field(default_factory=list)  # pauses that wait for an event of the node
    hooks: dict[str, Callable[[], Generator[Effect, Any, Any]]] = field(default_factory=dict)  # JVM hooks

    def process_name(self, task: str) -> str:
        return self.name if task == WRITER_TASK else f"{self.name}/{task}"


@dataclass(frozen=True)
class WriterContext:
    """What a writer factory gets for one incarnation of a node's writer task."""

    node: str
    incarnation: int  # 1 at the start, +1 after every restart
    rng: random.Random  # this incarnation's own random stream
    new_id: Callable[[], str]  # deterministic UUIDs


WriterFactory = Callable[[WriterContext], Generator[Effect, Any, Any]]


def register_writer_factory(scenario: Scenario) -> WriterFactory:
    """The lock model's workload: Hudi's lock provider guarding a register read-modify-write."""

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        def new_provider() -> StorageLockProvider:
            return StorageLockProvider(scenario.lock, ctx.new_id, scenario.storage.flavor)

        start = scenario.workload.node_start_ms.get(ctx.node) if ctx.incarnation == 1 else None
        return RegisterWriter(
            new_provider, scenario.workload, ctx.rng, fenced=scenario.lock.variant == "fenced", start_ms=start
        ).run()

    return make


class SimWorld:
    """One simulated run of a lock scenario.  ``run()`` returns the history."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int | None = None,
        sink: Callable[[Event], None] | None = None,
        writer_factory: WriterFactory | None = None,
        record_bodies_under: str | None = None,
        store: Store | None = None,
    ) -> None:
        scenario.validate()
        self.scenario = scenario
        # Store events of keys under this prefix carry the object's body (small JSON table files).
        self.record_bodies_under = record_bodies_under
        self.writer_factory = writer_factory or register_writer_factory(scenario)
        self.seed = scenario.seed if seed is None else seed
        self.sink = sink
        self.env = simpy.Environment()
        self.store: Store = store or ObjectStore(scenario.storage.flavor)
        self.client = client_settings(scenario)
        if scenario.lock.audit:  # the table has Hudi's lock audit enabled (hudi-cli "locks audit enable")
            self.store.apply(Put(enable_key(scenario.lock.base_path), enable_body()))
        self.net_rng = random.Random(f"{self.seed}/net")
        self.id_rng = random.Random(f"{self.seed}/ids")
        self.events: list[Event] = []
        self.rule_hits: dict[int, int] = {}
        self.last_write_at: dict[str, int] = {}
        self.nodes: dict[str, _Node] = {}
        faults = scenario.faults
        for name in scenario.workload.nodes():
            spec = scenario.clocks.get(name)
            clock = (
                NodeClock()
                if spec is None
                else NodeClock(
                    spec.offset_ms, spec.drift_ppm, tuple(ClockJump(j.at_ms, j.by_ms) for j in spec.jumps)
                )
            )
            self.nodes[name] = _Node(
                name,
                clock,
                pauses=[
                    (p.at_ms, p.at_ms + p.duration_ms)
                    for p in faults.pauses
                    if p.node == name and p.trigger == "time"
                ],
                triggered=[p for p in faults.pauses if p.node == name and p.trigger != "time"],
                cutoffs=[(c.start_ms, c.end_ms) for c in faults.cutoffs if c.node == name],
                heartbeat_faults=HeartbeatStartFaults.of(faults, name),
            )

    # ---- history ---------------------------------------------------------------

    def record(self, node: str, process: str, type_: str, f: str, value: Any = None) -> None:
        """Append an event (and stream it to the sink, so a crashed run keeps what it wrote)."""
        n = self.nodes.get(node)
        clock = n.clock.read(int(self.env.now)) if n else None
        event = Event(len(self.events), int(self.env.now), node, process, type_, f, value, clock)
        self.events.append(event)
        if self.sink is not None:
            self.sink(event)
        if n is not None and n.triggered and process == node:
            self._trigger_pauses(n, f, type_)

    def _trigger_pauses(self, node: _Node, f: str, type_: str) -> None:
        """Start the pauses that wait for this node's acquisition or register write."""
        now = int(self.env.now)
        wanted = {("acquire", "ok"): "acquired", ("write", "invoke"): "write"}.get((f, type_))
        for p in [p for p in node.triggered if p.trigger == wanted and p.at_ms <= now]:
            node.triggered.remove(p)
            node.pauses.append((now, now + p.duration_ms))
            self.record(
                node.name, "nemesis", "info", "pause-start", {"node": node.name, "trigger": p.trigger}
            )
            self.env.process(self._end_pause_later(node, p.duration_ms))

    def _end_pause_later(self, node: _Node, after: int) -> Generator[Any, Any, None]:
        yield self.env.timeout(after)
        self.record(node.name, "nemesis", "info", "pause-end", {"node": node.name})

    # ---- set-up ----------------------------------------------------------------

    def _new_owner_id(self) -> str:
        return str(uuid.UUID(int=self.id_rng.getrandbits(128), version=4))

    def _start_writer(self, node: _Node) -> None:
        node.incarnation += 1
        rng = random.Random(f"{self.seed}/{node.name}/{node.incarnation}")
        body = self.writer_factory(WriterContext(node.name, node.incarnation, rng, self._new_owner_id))
        self._spawn(node, WRITER_TASK, body, interrupt_policy(self.scenario.workload.interrupt))

    def _spawn(self, node: _Node, name: str, body: Generator[Effect, Any, Any],
               policy: Policy = any_action) -> _Task:
        task = _Task(node, name, done=self.env.event(), policy=policy)
        node.tasks[name] = task
        task.process = self.env.process(self._drive(task, body))
        return task

    def run(self) -> list[Event]:
        """Run the scenario for ``duration_ms`` of true time and return the history."""
        self.record("-", "nemesis", "info", "run-start", {"seed": self.seed, "scenario": self.scenario.name})
        for node in self.nodes.values():
            self._start_writer(node)
        self.env.process(self._nemesis())
        self.env.run(until=self.scenario.duration_ms)
        self.record("-", "nemesis", "info", "run-end", {})
        return self.events

    # ---- faults that happen at fixed times ------------------------------------

    def _nemesis(self) -> Generator[Any, Any, None]:
        faults = self.scenario.faults
        timed: list[tuple[int, int, str, Any]] = []
        for i, p in enumerate(faults.pauses):
            if p.trigger != "time":
                continue
            timed.append((p.at_ms, i, "pause-start", p))
            timed.append((p.at_ms + p.duration_ms, i, "pause-end", p))
        for i, c in enumerate(faults.crashes):
            timed.append((c.at_ms, i, "crash", c))
            if c.restart_after_ms >= 0:
                timed.append((c.at_ms + c.restart_after_ms, i, "restart", c))
        for i, d in enumerate(faults.writer_deaths):
            timed.append((d.at_ms, i, "writer-death", d))
        for i, k in enumerate(faults.cutoffs):
            timed.append((k.start_ms, i, "cutoff-start", k))
            timed.append((k.end_ms, i, "cutoff-end", k))
        for i, sd in enumerate(faults.shutdowns):
            timed.append((sd.at_ms, i, "shutdown", sd))
        timed.sort(key=lambda t: (t[0], t[2], t[1]))
        for at, _, kind, spec in timed:
            if at > self.env.now:
                yield self.env.timeout(at - self.env.now)
            node = self.nodes[spec.node]
            self.record(node.name, "nemesis", "info", kind, {"node": node.name})
            if kind == "crash":
                node.hooks.clear()
                for task in list(node.tasks.values()):
                    self._kill(task, "crash")
            elif kind == "restart":
                self._start_writer(node)
            elif kind == "writer-death":
                writer = node.tasks.get(WRITER_TASK)
                if writer is not None:
                    self._kill(writer, "death")
            elif kind == "shutdown":
                self.env.process(self._shutdown(node, spec.restart_after_ms))

    def _shutdown(self, node: _Node, restart_after_ms: int) -> Generator[Any, Any, None]:
        """A graceful shutdown: run the shutdown hooks as tasks (the others go on), then stop the node."""
        hooks, node.hooks = list(node.hooks.values()), {}
        running = [self._spawn(node, f"shutdown-hook-{i}", hook()) for i, hook in enumerate(hooks)]
        if running:
            yield self.env.all_of([t.done for t in running])
        self.record(node.name, "nemesis", "info", "shutdown-stop", {"node": node.name})
        for task in list(node.tasks.values()):
            self._kill(task, "crash")
        if restart_after_ms >= 0:
            yield self.env.timeout(restart_after_ms)
            self.record(node.name, "nemesis", "info", "restart", {"node": node.name})
            self._start_writer(node)

    def _kill(self, task: _Task, cause: str) -> None:
        if task.alive and task.process is not None and task.process.is_alive:
            task.process.interrupt(cause)

    # ---- the driver: runs one protocol generator as a task ---------------------

    def _paused_until(self, node: _Node) -> int:
        now = int(self.env.now)
        return max((end for start, end in node.pauses if start <= now < end), default=now)

    def _gate(self, task: _Task) -> Generator[Any, Any, None]:
        """Hold the task while its node is paused."""
        while (until := self._paused_until(task.node)) > self.env.now:
            yield from self._wait(task, self.env.timeout(until - self.env.now))

    def _wait(self, task: _Task, event: Any) -> Generator[Any, Any, Any]:
        """Wait for a SimPy event, turning interrupts into Interrupted (at a sleep) or death."""
        while True:
            try:
                return (yield event)
            except simpy.Interrupt as i:
                if i.cause == "interrupt":
                    if task.in_sleep and task.sleep_interruptible:
                        raise Interrupted() from None
                    task.pending_interrupt = True
                    continue
                raise _Killed(i.cause) from None

    def _drive(self, task: _Task, gen: Generator[Effect, Any, Any]) -> Generator[Any, Any, None]:
        node = task.node
        process = node.process_name(task.name)
        loop = TaskLoop(gen, task.policy)
        try:
            while (effect := loop.next_effect(task)) is not None:
                yield from self._gate(task)
                try:
                    loop.answer((yield from self._perform(task, process, effect)))
                except Interrupted as e:
                    loop.fail(e)
        except _Killed as k:
            if k.args and k.args[0] == "death":
                self.record(node.name, process, "info", "thread-died", {"task": task.name})
        finally:
            task.alive = False
            gen.close()
            if node.tasks.get(task.name) is task:
                del node.tasks[task.name]
            task.done.succeed()

    def _perform(self, task: _Task, process: str, effect: Effect) -> Generator[Any, Any, Any]:
        node = task.node
        if isinstance(effect, Now):
            now = int(self.env.now)
            return node.clock.monotonic(now) if effect.monotonic else node.clock.read(now)
        if isinstance(effect, Record):
            self.record(node.name, process, effect.type, effect.f, effect.value)
            return None
        if isinstance(effect, ShutdownHook):
            if effect.hook is None:
                node.hooks.pop(effect.key, None)
            else:
                node.hooks[effect.key] = effect.hook
            return None
        if isinstance(effect, Sleep):
            task.in_sleep = True
            task.sleep_interruptible = task.policy(effect)
            try:
                yield from self._wait(task, self.env.timeout(node.clock.true_duration(effect.ms)))
            finally:
                task.in_sleep = False
            yield from self._gate(task)
            return None
        if isinstance(effect, Spawn):
            if not node.heartbeat_faults.allows(effect.name):
                effect.body.close()
                return False
            self._spawn(node, effect.name, effect.body)
            return True
        if isinstance(effect, Cancel):
            target = node.tasks.get(effect.name)
            if target is not None and target.alive:
                target.cancel_requested = True
                if target.in_sleep:
                    self._kill(target, "cancel")
                if effect.timeout_ms is None:
                    yield from self._wait(task, target.done)
                else:
                    limit = self.env.timeout(node.clock.true_duration(effect.timeout_ms))
                    yield from self._wait(task, self.env.any_of([target.done, limit]))
                    return bool(target.done.triggered)
            return True
        if isinstance(effect, Interrupt):
            target = node.tasks.get(effect.name)
            if target is not None and target.alive:
                if target.in_sleep and target.sleep_interruptible:
                    target.process.interrupt("interrupt")
                else:
                    target.pending_interrupt = True
            return None
        if isinstance(effect, IsAlive):
            target = node.tasks.get(effect.name)
            return target is not None and target.alive
        if isinstance(effect, CheckInterrupt):  # answered by the task loop; never performed here
            return None
        return (yield from self._storage(task, effect))

    # ---- storage: the client with its retries, and the network ----------------

    def _storage(self, task: _Task, effect: StorageEffect) -> Generator[Any, Any, StoreResult]:
        cfg = self.client
        attempts, ambiguous = 0, False
        while True:
            attempts += 1
            reply = self.env.event()
            self.env.process(self._request(task.node, effect, reply))
            result: StoreResult = yield from self._wait(task, reply)
            yield from self._gate(task)
            if result.outcome.unknown and attempts <= cfg.sdk_retries:
                ambiguous = ambiguous or (result.outcome is Outcome.TIMEOUT and is_write(effect))
                yield from self._wait(task, self.env.timeout(cfg.retry_backoff_ms * attempts))
                continue
            return replace(result, attempts=attempts, ambiguous=ambiguous)

    def _key_class(self, key: str) -> str:
        if key == self.scenario.lock.lock_key:
            return "lock"
        return "register" if key == self.scenario.workload.register_key else "other"

    def _rule_matches_key(self, rule: ErrorRule, key: str) -> bool:
        """``lock``, ``register`` and ``any`` name key classes; any other value is a key prefix."""
        if rule.key in ("any", "lock", "register"):
            return rule.key in ("any", self._key_class(key))
        return key.startswith(rule.key)

    def _matching_rule(self, node: _Node, effect: StorageEffect) -> ErrorRule | None:
        now = int(self.env.now)
        method = "write" if is_write(effect) else "read"
        key = getattr(effect, "key", getattr(effect, "prefix", ""))
        for i, rule in enumerate(self.scenario.faults.errors):
            if rule.node not in ("any", node.name) or not self._rule_matches_key(rule, key):
                continue
            if rule.method not in ("any", method) or not rule.start_ms <= now < rule.end_ms:
                continue
            if rule.count and self.rule_hits.get(i, 0) >= rule.count:
                continue
            if rule.prob < 1.0 and self.net_rng.random() >= rule.prob:
                continue
            self.rule_hits[i] = self.rule_hits.get(i, 0) + 1
            return rule
        return None

    def _request(self, node: _Node, effect: StorageEffect, reply: Any) -> Generator[Any, Any, None]:
        cfg = self.scenario.storage
        timeout_ms = self.client.timeout_ms
        sent = int(self.env.now)
        rule = self._matching_rule(node, effect)
        cut = any(start <= sent < end for start, end in node.cutoffs)
        if cut or (rule is not None and rule.status == "timeout"):
            yield self.env.timeout(timeout_ms)
            reply.succeed(StoreResult(Outcome.TIMEOUT))
            return
        yield self.env.timeout(draw(self.net_rng, cfg.latency_ms))
        if rule is not None and rule.status in ERROR_OUTCOMES:
            result = StoreResult(ERROR_OUTCOMES[rule.status])
        else:
            result = self._apply(node, effect)
        if rule is not None and rule.status == "lost-reply":
            yield self.env.timeout(max(0, sent + timeout_ms - int(self.env.now)))
            reply.succeed(StoreResult(Outcome.TIMEOUT))
            return
        yield self.env.timeout(draw(self.net_rng, cfg.latency_ms))
        if self.env.now - sent > timeout_ms:
            result = StoreResult(Outcome.TIMEOUT)
        reply.succeed(result)

    def _apply(self, node: _Node, effect: StorageEffect) -> StoreResult:
        """Apply at the store, with S3's 409 for overlapping conditional writes, and record what changed."""
        cfg = self.scenario.storage
        key = getattr(effect, "key", "")
        now = int(self.env.now)
        if (
            is_write(effect)
            and cfg.conflict_prob > 0
            and key in self.last_write_at
            and now - self.last_write_at[key] <= cfg.conflict_window_ms
            and self.net_rng.random() < cfg.conflict_prob
        ):
            return StoreResult(Outcome.CONFLICT)
        result = self.store.apply(effect)
        if result.ok and is_write(effect):
            self.last_write_at[key] = now
            self._observe_write(node, key, result)
        return result

    def _observe_write(self, node: _Node, key: str, result: StoreResult) -> None:
        """Record the store's side of a write: the ground truth the checkers compare beliefs with."""
        obj = self.store.peek(key)
        if obj is None:
            return
        kind = self._key_class(key)
        if kind == "lock":
            data = LockData.decode(obj.body)
            self.record(
                node.name,
                "store",
                "info",
                "lock-file",
                {
                    "owner": data.owner,
                    "expired": data.expired,
                    "valid_until": data.valid_until,
                    "version": result.version,
                },
            )
        elif kind == "register":
            self.record(node.name, "store", "info", "register", {"body": obj.body.decode()})
        else:
            about: dict[str, Any] = {"key": key, "version": result.version, "size": len(obj.body)}
            if self.record_bodies_under is not None and key.startswith(self.record_bodies_under):
                about["body"] = obj.body.decode()
            self.record(node.name, "store", "info", "object", about)


def run_scenario(
    scenario: Scenario,
    seed: int | None = None,
    sink: Callable[[Event], None] | None = None,
    writer_factory: WriterFactory | None = None,
    record_bodies_under: str | None = None,
) -> list[Event]:
    """Run one simulated scenario and return its history (the lock workload unless a factory is given)."""
    return SimWorld(scenario, seed, sink, writer_factory, record_bodies_under).run()
