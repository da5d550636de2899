"""The real world: the lock workload's generators run on threads, real clocks and a real backend.

The protocol code is the simulated world's, unchanged: each node's writer is
built by :func:`model.sim.register_writer_factory` with a
:class:`model.sim.WriterContext` exactly as the simulated world builds it
(the same per-incarnation RNG streams), and every effect is interpreted here:

- ``Now``: ``time.time()`` in epoch ms plus the node's injected skew (the
  offset, drift and jumps of its ``clocks.<node>`` spec, as in simulation);
- ``Sleep``: a wait on the task's own event (interruptible), of the true
  duration the node's drift gives;
- ``Spawn`` / ``Cancel`` / ``Interrupt`` / ``IsAlive``: threads, with the
  simulated world's semantics (an interrupt is delivered at the target's
  sleep, or at its next effect; a cancel stops a sleeping task at once, else
  after its current step, and the caller waits for it);
- storage effects: :meth:`backends.base.Backend.perform` of the node's own
  backend, whose endpoint is the node's port of the :mod:`fault proxy
  <backends.fault_proxy>` when the fault plan has error rules or cutoffs (or
  latency is asked for); the backend's ``sdk_retries`` is ``storage.sdk_retries``;
- pauses: a gate every task of the node waits at before each effect, after a
  sleep and after a storage reply (timed pauses, and the ``acquired`` /
  ``write`` triggers); crashes, restarts and writer deaths kill threads at
  their next step (a request already sent is not recalled).

History: the same :class:`model.history.Event` format; true time is ms since
the run started by a monotonic clock (or, for writers in several processes,
by the wall clock from a shared ``start_epoch``).  **The store-side events
(process ``store``, f ``lock-file`` and ``register``) are recorded from the
client's view**: when a conditional write or put of the lock file or the
register returns OK, with the body the client wrote and the version the server
returned, at the time the reply arrived.  A write whose reply was lost
(applied, client saw a timeout) has no store event, and two store events are
ordered by reply time, not by the server's apply order.  The checkers are the
simulated world's (:func:`model.checkers.lock_run.check_lock_history`).  Other
workloads (a ``writer_factory``, as for :func:`model.sim.run_scenario`) may ask
for ``record_bodies_under``: then a successful write of any other key under that
prefix is recorded as f ``object`` ``{key, version, size, body}``, from the client's
view in the same way, as :class:`model.sim.SimWorld` records it (the timeline and
NBCC checkers read these).

Not modelled on real storage: ``storage.latency_ms`` (the latency is real;
the proxy adds a drawn delay only when asked), S3's 409 window
(``storage.conflict_*``), and ``FencedPut``, which the backends do as
read-check-write (not atomic, see :meth:`backends.base.Backend._fenced_put`).

A server that dies mid-run (its process exits, or its port refuses
connections) stops the run with :class:`ServerDied`; every event recorded so
far has gone to the sink already.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.base import Backend, StorageError
from backends.endpoint import Endpoint
from backends.fault_proxy import FaultProxy
from backends.launchers.workdir import server_dir
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.clock import EPOCH_MS, ClockJump, NodeClock
from model.config import ConfigError, Dist, Pause, Scenario
from model.effects import (
    Cancel,
    CreateIfAbsent,
    Effect,
    FencedPut,
    Interrupt,
    Interrupted,
    IsAlive,
    Now,
    Put,
    Record,
    ReplaceIfMatch,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.history import Event
from model.lockfile import LockData
from model.sim import WriterContext, WriterFactory, register_writer_factory
from model.storage_lock import WRITER_TASK
from model.taskloop import HeartbeatStartFaults, TaskLoop

POLL_S = 0.05


class ServerDied(RuntimeError):
    """The storage server stopped answering mid-run; ``events`` is the history up to then."""

    def __init__(self, reason: str, events: list[Event]) -> None:
        super().__init__(f"storage server died mid-run: {reason} ({len(events)} events recorded and kept)")
        self.reason = reason
        self.events = events


class Unreachable(RuntimeError):
    """The storage service did not answer before the run began (nothing was recorded)."""


class _Killed(Exception):
    """A task ends: crash, thread death, cancel, or the end of the run."""


@dataclass
class _Task:
    node: _Node
    name: str
    thread: threading.Thread | None = None
    alive: bool = True
    in_sleep: bool = False
    pending_interrupt: bool = False
    cancel_requested: bool = False
    killed: str | None = None
    wake: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Node:
    name: str
    clock: NodeClock
    backend: Backend
    tasks: dict[str, _Task] = field(default_factory=dict)
    incarnation: int = 0
    heartbeat_faults: HeartbeatStartFaults = field(default_factory=HeartbeatStartFaults)
    triggered: list[Pause] = field(default_factory=list)
    paused_until: int = 0

    def process_name(self, task: str) -> str:
        return self.name if task == WRITER_TASK else f"{self.name}/{task}"


def map_scenario_keys(scenario: Scenario, prefix: str) -> Scenario:
    """The scenario with its lock base path and register key put under the table ``prefix``."""
    prefix = prefix.rstrip("/") + "/"
    if scenario.lock.base_path.startswith(prefix):
        return scenario
    return dataclasses.replace(
        scenario,
        lock=dataclasses.replace(scenario.lock, base_path=prefix + scenario.lock.base_path),
        workload=dataclasses.replace(scenario.workload, register_key=prefix + scenario.workload.register_key),
    )


class RealWorld:
    """One real-world run of a lock scenario over per-node backends.  ``run()`` returns the history.

    ``nodes`` limits the run to some of the scenario's nodes (a Spark task runs
    one); ``start_epoch`` (``time.time()`` seconds) makes true time wall-clock
    ms since then, so histories of several processes merge; ``health`` is
    polled and returns a reason when the server is gone.
    """

    def __init__(self, scenario: Scenario, backends: Mapping[str, Backend], *, seed: int | None = None,
                 sink: Callable[[Event], None] | None = None, nodes: Sequence[str] | None = None,
                 duration_ms: int | None = None, start_epoch: float | None = None,
                 health: Callable[[], str | None] | None = None,
                 writer_factory: WriterFactory | None = None, record_bodies_under: str | None = None,
                 ) -> None:
        scenario.validate()
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.sink = sink
        self.duration_ms = scenario.duration_ms if duration_ms is None else duration_ms
        if self.duration_ms <= 0:
            raise ConfigError("duration_ms", self.duration_ms, "must be > 0")
        self.start_epoch = start_epoch
        self._t0 = time.monotonic()
        self.health = health
        self.writer_factory = writer_factory or register_writer_factory(scenario)
        self.record_bodies_under = record_bodies_under
        names = list(nodes) if nodes is not None else scenario.workload.nodes()
        for n in names:
            if n not in scenario.workload.nodes():
                raise ConfigError("node", n,
                                  f"is not a node of this run ({', '.join(scenario.workload.nodes())})")
            if n not in backends:
                raise ConfigError("node", n, "has no backend")
        self.events: list[Event] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._fatal: str | None = None
        self._store_keys = {scenario.lock.lock_key: "lock", scenario.workload.register_key: "register"}
        faults = scenario.faults
        self.nodes: dict[str, _Node] = {}
        for name in names:
            spec = scenario.clocks.get(name)
            clock = NodeClock() if spec is None else NodeClock(
                spec.offset_ms, spec.drift_ppm, tuple(ClockJump(j.at_ms, j.by_ms) for j in spec.jumps))
            self.nodes[name] = _Node(
                name, clock, backends[name],
                heartbeat_faults=HeartbeatStartFaults.of(faults, name),
                triggered=[p for p in faults.pauses if p.node == name and p.trigger != "time"],
            )

    # ---- time ----------------------------------------------------------------------

    def now_ms(self) -> int:
        """True time: ms since the run started (monotonic), or since ``start_epoch`` (wall clock)."""
        if self.start_epoch is not None:
            return int((time.time() - self.start_epoch) * 1000)
        return int((time.monotonic() - self._t0) * 1000)

    def _read_clock(self, node: _Node) -> int:
        true = self.now_ms()
        skew = node.clock.read(true) - EPOCH_MS - true
        return int(time.time() * 1000) + skew

    # ---- history ---------------------------------------------------------------------

    def record(self, node: str, process: str, type_: str, f: str, value: Any = None) -> None:
        """Append an event and stream it to the sink at once."""
        n = self.nodes.get(node)
        with self._lock:
            event = Event(len(self.events), self.now_ms(), node, process, type_, f, value,
                          self._read_clock(n) if n else None)
            self.events.append(event)
            if self.sink is not None:
                self.sink(event)
            if n is not None and n.triggered and process == node:
                self._trigger_pauses(n, f, type_)

    def _trigger_pauses(self, node: _Node, f: str, type_: str) -> None:
        now = self.now_ms()
        wanted = {("acquire", "ok"): "acquired", ("write", "invoke"): "write"}.get((f, type_))
        for p in [p for p in node.triggered if p.trigger == wanted and p.at_ms <= now]:
            node.triggered.remove(p)
            node.paused_until = max(node.paused_until, now + p.duration_ms)
            self.record(node.name, "nemesis", "info", "pause-start",
                        {"node": node.name, "trigger": p.trigger})
            timer = threading.Timer(p.duration_ms / 1000, self._pause_end, args=(node,))
            timer.daemon = True
            timer.start()

    def _pause_end(self, node: _Node) -> None:
        if not self._stop.is_set():
            self.record(node.name, "nemesis", "info", "pause-end", {"node": node.name})

    # ---- tasks ---------------------------------------------------------------------

    def _start_writer(self, node: _Node) -> None:
        node.incarnation += 1
        rng = random.Random(f"{self.seed}/{node.name}/{node.incarnation}")
        body = self.writer_factory(WriterContext(node.name, node.incarnation, rng, lambda: str(uuid.uuid4())))
        self._spawn(node, WRITER_TASK, body)

    def _spawn(self, node: _Node, name: str, body: Generator[Effect, Any, Any]) -> _Task:
        task = _Task(node, name)
        node.tasks[name] = task
        task.thread = threading.Thread(target=self._drive, args=(task, body), name=f"{node.name}/{name}",
                                       daemon=True)
        task.thread.start()
        return task

    def _kill(self, task: _Task, cause: str) -> None:
        if task.alive and task.killed is None:
            task.killed = cause
            task.wake.set()

    def _check(self, task: _Task) -> None:
        if task.killed is not None:
            raise _Killed(task.killed)
        if self._stop.is_set():
            raise _Killed("stop")

    def _gate(self, task: _Task) -> None:
        """Hold the task while its node is paused."""
        while self.now_ms() < task.node.paused_until:
            self._check(task)
            time.sleep(min(POLL_S, max(0.001, (task.node.paused_until - self.now_ms()) / 1000)))
        self._check(task)

    def _drive(self, task: _Task, gen: Generator[Effect, Any, Any]) -> None:
        node = task.node
        process = node.process_name(task.name)
        loop = TaskLoop(gen)
        try:
            while (effect := loop.next_effect(task)) is not None:
                self._check(task)
                self._gate(task)
                try:
                    loop.answer(self._perform(task, process, effect))
                except Interrupted as e:
                    loop.fail(e)
        except _Killed as k:
            if k.args and k.args[0] == "death":
                self.record(node.name, process, "info", "thread-died", {"task": task.name})
        except StorageError as e:
            self.record(node.name, process, "info", "storage-error", {"status": e.status, "code": e.code})
            self._fatal = f"{process}: {e}"
        finally:
            task.alive = False
            with contextlib.suppress(Exception):
                gen.close()
            if node.tasks.get(task.name) is task:
                del node.tasks[task.name]
            task.done.set()

    def _sleep(self, task: _Task, ms: int) -> None:
        task.in_sleep = True
        try:
            deadline = time.monotonic() + task.node.clock.true_duration(ms) / 1000
            while True:
                if task.pending_interrupt:
                    task.pending_interrupt = False
                    raise Interrupted()
                if task.cancel_requested:
                    raise _Killed("cancel")
                self._check(task)
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                task.wake.wait(min(left, 0.5))
                task.wake.clear()
        finally:
            task.in_sleep = False
        self._gate(task)

    def _perform(self, task: _Task, process: str, effect: Effect) -> Any:
        node = task.node
        if isinstance(effect, Now):
            return self._read_clock(node)
        if isinstance(effect, Record):
            self.record(node.name, process, effect.type, effect.f, effect.value)
            return None
        if isinstance(effect, Sleep):
            self._sleep(task, effect.ms)
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
                target.wake.set()
                while not target.done.wait(POLL_S):
                    self._check(task)
            return True
        if isinstance(effect, Interrupt):
            target = node.tasks.get(effect.name)
            if target is not None and target.alive:
                target.pending_interrupt = True
                target.wake.set()
            return None
        if isinstance(effect, IsAlive):
            target = node.tasks.get(effect.name)
            return target is not None and target.alive
        result = node.backend.perform(effect)
        if result.ok:
            self._observe_write(node, effect, result)
        self._gate(task)
        return result

    def _observe_write(self, node: _Node, effect: StorageEffect, result: StoreResult) -> None:
        """The store side, from the client's view of a successful write (see the module doc)."""
        if not isinstance(effect, CreateIfAbsent | ReplaceIfMatch | Put | FencedPut):
            return
        kind = self._store_keys.get(effect.key)
        body = effect.body
        if kind == "lock":
            data = LockData.decode(body)
            self.record(node.name, "store", "info", "lock-file", {
                "owner": data.owner, "expired": data.expired, "valid_until": data.valid_until,
                "version": result.version, "observed": "client"})
        elif kind == "register":
            self.record(node.name, "store", "info", "register", {"body": body.decode(), "observed": "client"})
        elif self.record_bodies_under is not None and effect.key.startswith(self.record_bodies_under):
            self.record(node.name, "store", "info", "object", {
                "key": effect.key, "version": result.version, "size": len(body), "body": body.decode(),
                "observed": "client"})

    # ---- faults at fixed times ----------------------------------------------------

    def _wait_until(self, at_ms: int) -> bool:
        while (left := at_ms - self.now_ms()) > 0:
            if self._stop.wait(min(left / 1000, 0.2)):
                return False
        return not self._stop.is_set()

    def _nemesis(self) -> None:
        faults = self.scenario.faults
        timed: list[tuple[int, int, str, Any]] = []
        for i, p in enumerate(faults.pauses):
            if p.trigger == "time" and p.node in self.nodes:
                timed += [(p.at_ms, i, "pause-start", p), (p.at_ms + p.duration_ms, i, "pause-end", p)]
        for i, c in enumerate(faults.crashes):
            if c.node in self.nodes:
                timed.append((c.at_ms, i, "crash", c))
                if c.restart_after_ms >= 0:
                    timed.append((c.at_ms + c.restart_after_ms, i, "restart", c))
        for i, d in enumerate(faults.writer_deaths):
            if d.node in self.nodes:
                timed.append((d.at_ms, i, "writer-death", d))
        for i, k in enumerate(faults.cutoffs):
            if k.node in self.nodes:
                timed += [(k.start_ms, i, "cutoff-start", k), (k.end_ms, i, "cutoff-end", k)]
        timed.sort(key=lambda t: (t[0], t[2], t[1]))
        for at, _, kind, spec in timed:
            if at >= self.duration_ms or not self._wait_until(at):
                return
            node = self.nodes[spec.node]
            if kind == "pause-start":
                node.paused_until = max(node.paused_until, spec.at_ms + spec.duration_ms)
            self.record(node.name, "nemesis", "info", kind, {"node": node.name})
            if kind == "crash":
                for task in list(node.tasks.values()):
                    self._kill(task, "crash")
            elif kind == "restart":
                self._start_writer(node)
            elif kind == "writer-death":
                writer = node.tasks.get(WRITER_TASK)
                if writer is not None:
                    self._kill(writer, "death")

    # ---- the run ------------------------------------------------------------------

    def run(self) -> list[Event]:
        """Run for ``duration_ms`` of real time; return the history (raise ServerDied if the server died)."""
        self._t0 = time.monotonic()
        self.record("-", "nemesis", "info", "run-start", {
            "seed": self.seed, "scenario": self.scenario.name, "world": "real",
            "nodes": list(self.nodes), "backend": next(iter(self.nodes.values())).backend.describe()})
        for node in self.nodes.values():
            self._start_writer(node)
        nemesis = threading.Thread(target=self._nemesis, name="nemesis", daemon=True)
        nemesis.start()
        died: str | None = None
        end: dict[str, Any] = {}
        try:
            died = self._wait_for_end()
            if died is not None:
                self.record("-", "nemesis", "info", "server-died", {"reason": died})
                end = {"error": died}
        except BaseException as e:  # SIGINT / SIGTERM in the main thread: stop the writers, end the history
            end = {"interrupted": type(e).__name__}
            raise
        finally:
            self._stop_tasks(5 if "interrupted" in end else 15)
            self.record("-", "nemesis", "info", "run-end", end)
        if died is not None:
            raise ServerDied(died, list(self.events))
        return self.events

    def _wait_for_end(self) -> str | None:
        """Wait out the duration; the reason the server died, if it did."""
        next_health = 0.0
        while self.now_ms() < self.duration_ms:
            time.sleep(min(0.1, max(0.001, (self.duration_ms - self.now_ms()) / 1000)))
            if self._fatal is not None:
                return self._fatal
            if self.health is not None and time.monotonic() >= next_health:
                next_health = time.monotonic() + 0.5
                died = self.health()
                if died is not None:
                    return died
        return None

    def _stop_tasks(self, timeout_s: float = 15) -> None:
        self._stop.set()
        for node in self.nodes.values():
            for task in list(node.tasks.values()):
                self._kill(task, "stop")
        deadline = time.monotonic() + timeout_s
        for node in self.nodes.values():
            for task in list(node.tasks.values()):
                if task.thread is not None:
                    task.thread.join(max(0.0, deadline - time.monotonic()))


# ---- health of the server ------------------------------------------------------------


def endpoint_health(ep: Endpoint, misses: int = 3) -> Callable[[], str | None]:
    """A health probe: the launched process has exited, or its port refused ``misses`` times in a row."""
    host_port: tuple[str, int] | None = None
    if ep.url:
        u = urllib.parse.urlsplit(ep.url)
        if u.hostname and u.port:
            host_port = (u.hostname, u.port)
    refused = [0]

    def probe() -> str | None:
        if ep.process is not None and ep.process.proc is not None and not ep.process.alive():
            return (f"{ep.name} process exited with code {ep.process.proc.returncode}; "
                    f"log {ep.process.log_path}")
        if host_port is None:
            return None
        try:
            with socket.create_connection(host_port, timeout=1.0):
                refused[0] = 0
        except OSError as e:
            refused[0] += 1
            if refused[0] >= misses:
                return f"{ep.name} at {host_port[0]}:{host_port[1]} refuses connections ({e})"
        return None

    return probe


# ---- putting it together -------------------------------------------------------------


@dataclass
class RealWorldResult:
    """A finished real-world run."""

    scenario: Scenario
    seed: int
    events: list[Event]
    verdict: Verdict
    proxy_actions: dict[str, int]


def needs_proxy(scenario: Scenario, nodes: Sequence[str], latency: Dist | None) -> bool:
    """True when the fault plan has wire faults for these nodes (error rules, cutoffs) or latency is asked."""
    f = scenario.faults
    return (latency is not None or any(e.node in ("any", *nodes) for e in f.errors)
            or any(c.node in nodes for c in f.cutoffs))


@contextlib.contextmanager
def node_backends(scenario: Scenario, ep: Endpoint, nodes: Sequence[str], *, prefix: str, log_dir: Path,
                  seed: int, clock_ms: Callable[[], int], client: str | None = None,
                  latency: Dist | None = None, use_proxy: bool | None = None,
                  ) -> Iterator[tuple[dict[str, Backend], FaultProxy | None]]:
    """One backend per node (through the fault proxy, one port per node, when needed); closed afterwards.

    ``scenario`` must already have its keys under ``prefix`` (:func:`map_scenario_keys`).
    """
    cfg = scenario.storage
    kw: dict[str, Any] = {"timeout_s": cfg.timeout_ms / 1000, "sdk_retries": cfg.sdk_retries,
                          "retry_backoff_s": cfg.retry_backoff_ms / 1000}
    if client is not None:
        kw["client"] = client
    proxy: FaultProxy | None = None
    if use_proxy if use_proxy is not None else needs_proxy(scenario, nodes, latency):
        if not ep.url:
            raise ConfigError("backend", ep.name, "the fault proxy needs an http endpoint URL")
        probe = ep.backend(prefix)
        dialect = probe.dialect
        probe.close()
        proxy = FaultProxy(ep.url, nodes, dialect=dialect, log_path=log_dir / "proxy.log",
                           errors=scenario.faults.errors, cutoffs=scenario.faults.cutoffs, latency=latency,
                           seed=seed, lock_key=scenario.lock.lock_key,
                           register_key=scenario.workload.register_key, key_prefix=prefix,
                           hold_s=cfg.timeout_ms / 1000 + 1, clock_ms=clock_ms)
    backends: dict[str, Backend] = {}
    try:
        for n in nodes:
            url = proxy.url(n) if proxy is not None else ep.url
            backends[n] = ep.backend(prefix, url=url, **kw)
        yield backends, proxy
    finally:
        for b in backends.values():
            with contextlib.suppress(Exception):
                b.close()
        if proxy is not None:
            proxy.close()


def clear_prefix(ep: Endpoint, prefix: str) -> None:
    """Delete the run's objects under ``prefix`` (a fresh table for the run); Unreachable if it cannot."""
    from model.effects import Delete, ListPrefix

    with ep.backend(prefix) as b:
        try:
            b.ensure_container()
        except Exception as e:  # noqa: BLE001 - each SDK has its own connection errors
            raise Unreachable(f"{ep.describe()} cannot be reached: {type(e).__name__}: {e}") from None
        listed = b.perform(ListPrefix(b.prefix))
        if listed.ok and listed.body:
            for key in listed.body.decode().split("\n"):
                b.perform(Delete(key))


def read_prefix(ep: Endpoint, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix``: key -> body (the final store of a run, for checkers that need it)."""
    from model.effects import ListPrefix, Read

    with ep.backend(prefix) as b:
        listed = b.perform(ListPrefix(b.prefix))
        objects: dict[str, bytes] = {}
        for key in (listed.body or b"").decode().split("\n") if listed.ok else []:
            if key:
                got = b.perform(Read(key))
                if got.ok:
                    objects[key] = got.body or b""
        return objects


def run_realworld(scenario: Scenario, ep: Endpoint, *, prefix: str = "hcc-realworld/",
                  seed: int | None = None,
                  sink: Callable[[Event], None] | None = None, log_dir: Path | None = None,
                  latency: Dist | None = None, client: str | None = None,
                  duration_ms: int | None = None) -> RealWorldResult:
    """Run every node of ``scenario`` against ``ep`` (keys under ``prefix``, cleared first) and check it.

    Raises :class:`ServerDied` (its ``events`` hold the partial history) when the server dies.
    """
    seed = scenario.seed if seed is None else seed
    scenario = map_scenario_keys(scenario, prefix)
    log_dir = log_dir or server_dir("realworld")
    clear_prefix(ep, prefix)
    holder: list[RealWorld] = []
    nodes = scenario.workload.nodes()
    with node_backends(scenario, ep, nodes, prefix=prefix, log_dir=log_dir, seed=seed,
                       clock_ms=lambda: holder[0].now_ms() if holder else 0, client=client,
                       latency=latency) as (backends, proxy):
        world = RealWorld(scenario, backends, seed=seed, sink=sink, duration_ms=duration_ms,
                          health=endpoint_health(ep))
        holder.append(world)
        events = world.run()
        actions = dict(proxy.stats.actions) if proxy is not None else {}
    return RealWorldResult(scenario, seed, events, check_lock_history(events, scenario.checkers), actions)


def run_node(scenario: Scenario, node: str, backend_url: str, *, prefix: str, duration_ms: int | None = None,
             seed: int | None = None, start_epoch: float | None = None, log_dir: Path | None = None,
             sink: Callable[[Event], None] | None = None, client: str | None = None,
             writer_factory: WriterFactory | None = None, record_bodies_under: str | None = None,
             ) -> list[Event]:
    """Run ONE node's writer (and its heartbeat) for ``duration_ms`` against a running service; its events.

    For Spark tasks, one per node: give every task the same ``start_epoch``
    (``time.time()`` taken on the driver, a little in the future is fine) so
    true times share one zero, then :func:`merge_histories` on the driver.
    ``backend_url`` is a URL as in :func:`backends.endpoint.from_url`; keys go
    under ``prefix`` (not cleared here: clear it once on the driver with
    :func:`clear_prefix`).  The node's wire faults go through its own fault proxy.
    ``writer_factory`` (default: the lock workload) builds the node's writer, as in
    :func:`model.sim.run_scenario`; it must use the keys of ``scenario`` mapped under
    ``prefix`` (:func:`map_scenario_keys`).  ``record_bodies_under``: see :class:`RealWorld`.
    Raises :class:`ServerDied` with the node's partial history.
    """
    from backends.endpoint import from_url

    ep = from_url(backend_url)
    seed = scenario.seed if seed is None else seed
    scenario = map_scenario_keys(scenario, prefix)
    holder: list[RealWorld] = []
    log_dir = log_dir or server_dir(f"realworld-{node}")
    with node_backends(scenario, ep, [node], prefix=prefix, log_dir=log_dir, seed=seed,
                       clock_ms=lambda: holder[0].now_ms() if holder else 0, client=client) as (backends, _):
        world = RealWorld(scenario, backends, seed=seed, sink=sink, nodes=[node], duration_ms=duration_ms,
                          start_epoch=start_epoch, health=endpoint_health(ep), writer_factory=writer_factory,
                          record_bodies_under=record_bodies_under)
        holder.append(world)
        if start_epoch is not None and time.time() < start_epoch:
            time.sleep(start_epoch - time.time())
        return world.run()


def merge_histories(histories: Sequence[Sequence[Event]]) -> list[Event]:
    """Merge per-node histories (shared ``start_epoch``) into one, ordered by true time, re-indexed."""
    merged = sorted((e for h in histories for e in h), key=lambda e: (e.time, e.node, e.index))
    return [dataclasses.replace(e, index=i) for i, e in enumerate(merged)]
