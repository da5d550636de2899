"""The real world: a workload's generators on threads, real clocks and real storage servers.

The protocol code and the runtime kernel (``model/runtime/kernel.py``) are the simulated
world's, unchanged: the kernel builds each node's writer from the same workload
with the same per-incarnation RNG streams, applies the same fault plan
(``model/runtime/faults.py``) and retries with the same client policy
(``model/runtime/client.py``).  This module gives the kernel its world
(:class:`backends.threadworld.ThreadWorld`: threads and a trampoline) and says
what differs from simulation:

- ``Now``: ``time.time()`` in epoch ms plus the node's injected skew (the
  offset, drift and jumps of its ``clocks.<node>`` spec, as in simulation);
- storage effects: one attempt of :meth:`backends.base.Backend.perform` on the
  node's own backend per client attempt, whose endpoint is the node's port of the
  :mod:`fault proxy <backends.fault_proxy>` when the fault plan has error rules or
  cutoffs (or latency is asked for); a request is never recalled (a crash takes
  effect at the task's next wait);
- **The store-side events (process ``store``) are recorded from the client's
  view**: when a write returns OK, with the body the client wrote and the version
  the server returned, at the time the reply arrived (``"observed": "client"``).
  A write whose reply was lost (applied, client saw a timeout) has no store
  event, and two store events are ordered by reply time, not by the server's
  apply order.  A conditional write also records the version it ``replaces``
  (``None`` for a create) next to the ``version`` it produced, so the checkers
  put a late-replied write back before its successor
  (:mod:`model.checkers.store_order`).

Not modelled on real storage: ``storage.latency_ms`` (the latency is real;
the proxy adds a drawn delay only when asked), S3's 409 window
(``storage.conflict_*``) is answered by the fault proxy (a run with a
window has one), and ``FencedPut``, which the backends do as
read-check-write (not atomic, see :meth:`backends.base.Backend._fenced_put`).

A server that dies mid-run (its process exits, or its port refuses
connections) stops the run with :class:`ServerDied`; every event recorded so
far has gone to the sink already.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from backends.base import Backend, StorageError
from backends.endpoint import Endpoint
from backends.fault_proxy import Exchange, FaultProxy
from backends.launchers.workdir import server_dir
from backends.threadworld import ThreadWorld
from model.checkers.verdict import Verdict
from model.config import ConfigError, Dist, Scenario, client_settings
from model.lock.audit import enable_body, enable_key
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.runtime.effects import CreateIfAbsent, FencedPut, Put, ReplaceIfMatch, StorageEffect, StoreResult
from model.runtime.history import Event
from model.runtime.kernel import Kernel, Node, Workload, WorldError
from model.runtime.sim import node_clocks, retry_policy
from model.runtime.taskloop import interrupt_policy
from model.workloads.lock import LockWorkload

_OBSERVED = frozenset({CreateIfAbsent, ReplaceIfMatch, Put, FencedPut})  # body writes: a success is recorded


class ServerDied(RuntimeError):
    """The storage server stopped answering mid-run; ``events`` is the history up to then."""

    def __init__(self, reason: str, events: list[Event]) -> None:
        super().__init__(f"storage server died mid-run: {reason} ({len(events)} events recorded and kept)")
        self.reason = reason
        self.events = events


class Unreachable(RuntimeError):
    """The storage service did not answer before the run began (nothing was recorded)."""


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
    """One real-world run of a scenario over per-node backends.  ``run()`` returns the history.

    ``nodes`` limits the run to some of the scenario's nodes (a Spark task runs
    one); ``start_epoch`` (``time.time()`` seconds) makes true time wall-clock
    ms since then, so histories of several processes merge; ``health`` is
    polled and returns a reason when the server is gone.  ``workload`` as for
    :class:`model.runtime.sim.SimWorld` (default: the lock workload of ``scenario``);
    ``kernel_class`` a kernel
    that also acts on the world's own processes (the hudi world's JVMs); ``done()`` true ends the run
    before its duration (a scripted workload that finished).
    ``on_tick(now_ms, duration_ms)`` is called while the run waits out its duration (progress).
    """

    def __init__(self, scenario: Scenario, backends: Mapping[str, Backend], *, seed: int | None = None,
                 sink: Callable[[Event], None] | None = None, nodes: Sequence[str] | None = None,
                 duration_ms: int | None = None, start_epoch: float | None = None,
                 health: Callable[[], str | None] | None = None,
                 workload: Workload | None = None,
                 on_tick: Callable[[int, int], None] | None = None,
                 kernel_class: type[Kernel] = Kernel,
                 done: Callable[[], bool] | None = None) -> None:
        scenario.validate()
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.duration_ms = scenario.duration_ms if duration_ms is None else duration_ms
        if self.duration_ms <= 0:
            raise ConfigError("duration_ms", self.duration_ms, "must be > 0")
        self.health = health
        self.on_tick = on_tick
        self.done = done
        names = list(nodes) if nodes is not None else scenario.workload.nodes()
        for n in names:
            if n not in scenario.workload.nodes():
                raise ConfigError("node", n,
                                  f"is not a node of this run ({', '.join(scenario.workload.nodes())})")
            if n not in backends:
                raise ConfigError("node", n, "has no backend")
        self._fatal: str | None = None
        self.world = ThreadWorld(self._perform, start_epoch)
        workload = workload or LockWorkload(scenario)
        self.kernel = kernel_class(self.world, workload, nodes=node_clocks(scenario, names),
                                   faults=scenario.faults, policy=retry_policy(scenario), seed=self.seed,
                                   new_id=lambda: str(uuid.uuid4()), sink=sink, on_error=self._on_error,
                                   writer_policy=interrupt_policy(scenario.workload.interrupt))
        for name in names:
            self.kernel.nodes[name].backend = backends[name]

    @property
    def events(self) -> list[Event]:
        """The history so far."""
        return self.kernel.events

    def now_ms(self) -> int:
        """True time: ms since the run started (monotonic), or since ``start_epoch`` (wall clock)."""
        return self.world.now()

    def _perform(self, node: Node, effect: StorageEffect) -> StoreResult:
        """One attempt on the node's backend; a successful write is recorded from the client's view."""
        try:
            result = node.backend.perform(effect)
        except StorageError as e:
            raise WorldError(str(e), {"status": e.status, "code": e.code}) from e
        if type(effect) in _OBSERVED and result.ok:
            write = cast("CreateIfAbsent | ReplaceIfMatch | Put | FencedPut", effect)
            extra: dict[str, Any] = {"observed": "client", "version": result.version}
            if isinstance(write, ReplaceIfMatch):  # the version chain: see store_order
                extra["replaces"] = write.version
            elif isinstance(write, CreateIfAbsent):
                extra["replaces"] = None
            self.kernel.observe_write(node, write.key, write.body, result.version, extra)
        return cast(StoreResult, result)

    def _on_error(self, process: str, error: WorldError) -> None:
        self._fatal = f"{process}: {error}"

    def run(self) -> list[Event]:
        """Run for ``duration_ms`` of real time; return the history (raise ServerDied if the server died)."""
        k = self.kernel
        self.world.reset_clock()
        k.record("-", "nemesis", "info", "run-start", {
            "seed": self.seed, "scenario": self.scenario.name, "world": "real",
            "nodes": list(k.nodes), "backend": next(iter(k.nodes.values())).backend.describe()})
        for node in k.nodes.values():
            k.start_writer(node)
        self.world.start(k.nemesis(until_ms=self.duration_ms))
        died: str | None = None
        end: dict[str, Any] = {}
        try:
            died = self._wait_for_end()
            if died is not None:
                k.record("-", "nemesis", "info", "server-died", {"reason": died})
                end = {"error": died}
        except BaseException as e:  # SIGINT / SIGTERM in the main thread: stop the writers, end the history
            end = {"interrupted": type(e).__name__}
            raise
        finally:
            self.world.stop(5 if "interrupted" in end else 15)
            k.record("-", "nemesis", "info", "run-end", end)
        if died is not None:
            raise ServerDied(died, list(k.events))
        return k.events

    def _wait_for_end(self) -> str | None:
        """Wait out the duration; the reason the server died, if it did."""
        next_health = 0.0
        while self.now_ms() < self.duration_ms:
            time.sleep(min(0.1, max(0.001, (self.duration_ms - self.now_ms()) / 1000)))
            if self._fatal is not None:
                return self._fatal
            if self.done is not None and self.done():
                return None
            if self.on_tick is not None:
                self.on_tick(min(self.now_ms(), self.duration_ms), self.duration_ms)
            if self.health is not None and time.monotonic() >= next_health:
                next_health = time.monotonic() + 0.5
                died = self.health()
                if died is not None:
                    return died
        return None


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
    """True when the fault plan has wire faults for these nodes (error rules, cutoffs, S3's 409 window) or
    latency is asked."""
    f = scenario.faults
    return (latency is not None or any(e.node in ("any", *nodes) for e in f.errors)
            or any(c.node in nodes for c in f.cutoffs)
            or (scenario.storage.conflict_prob > 0 and scenario.storage.flavor == "s3"))


@contextlib.contextmanager
def node_backends(scenario: Scenario, ep: Endpoint, nodes: Sequence[str], *, prefix: str, log_dir: Path,
                  seed: int, clock_ms: Callable[[], int], client: str | None = None,
                  latency: Dist | None = None, use_proxy: bool | None = None,
                  on_exchange: Callable[[Exchange], None] | None = None,
                  ) -> Iterator[tuple[dict[str, Backend], FaultProxy | None]]:
    """One backend per node (through the fault proxy, one port per node, when needed); closed afterwards.

    ``scenario`` must already have its keys under ``prefix`` (:func:`map_scenario_keys`);
    ``on_exchange`` gets every request the proxy handles.
    """
    cfg = client_settings(scenario)
    kw: dict[str, Any] = {"timeout_s": cfg.timeout_ms / 1000}
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
                           hold_s=cfg.timeout_ms / 1000 + 1, clock_ms=clock_ms, on_exchange=on_exchange,
                           conflict_window_ms=scenario.storage.conflict_window_ms,
                           conflict_prob=scenario.storage.conflict_prob)
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
    from model.runtime.effects import Delete, ListPrefix

    with ep.backend(prefix) as b:
        try:
            b.ensure_container()
        except Exception as e:  # noqa: BLE001 - each SDK has its own connection errors
            raise Unreachable(f"{ep.describe()} cannot be reached: {type(e).__name__}: {e}") from None
        listed = b.perform(ListPrefix(b.prefix))
        if listed.ok and listed.body:
            for key in listed.body.decode().split("\n"):
                b.perform(Delete(key))


def seed_lock_table(ep: Endpoint, prefix: str, scenario: Scenario) -> None:
    """Put what a lock run's table holds before the run under ``prefix``, as the simulated world does:
    Hudi's lock-audit enable file when ``lock.audit`` is on (``hudi-cli locks audit enable``), so the
    providers write Hudi's audit trail.  Every real-world and Spark contention run of the lock calls this.
    """
    scenario = map_scenario_keys(scenario, prefix)
    if scenario.lock.audit:
        with ep.backend(prefix) as b:
            put = b.perform(Put(enable_key(scenario.lock.base_path), enable_body()))
            if not put.ok:
                raise Unreachable(f"{ep.describe()}: cannot write the audit enable file ({put.outcome.name})")


def read_prefix(ep: Endpoint, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix``: key -> body (the final store of a run, for checkers that need it)."""
    from model.runtime.effects import ListPrefix, Read

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
                  duration_ms: int | None = None,
                  on_tick: Callable[[int, int], None] | None = None) -> RealWorldResult:
    """Run every node of ``scenario`` against ``ep`` (keys under ``prefix``, cleared first) and check it.

    Raises :class:`ServerDied` (its ``events`` hold the partial history) when the server dies.
    ``on_tick(now_ms, duration_ms)``: progress while the run goes.
    """
    seed = scenario.seed if seed is None else seed
    scenario = map_scenario_keys(scenario, prefix)
    log_dir = log_dir or server_dir("realworld")
    clear_prefix(ep, prefix)
    seed_lock_table(ep, prefix, scenario)
    holder: list[RealWorld] = []
    nodes = scenario.workload.nodes()
    with node_backends(scenario, ep, nodes, prefix=prefix, log_dir=log_dir, seed=seed,
                       clock_ms=lambda: holder[0].now_ms() if holder else 0, client=client,
                       latency=latency) as (backends, proxy):
        world = RealWorld(scenario, backends, seed=seed, sink=sink, duration_ms=duration_ms,
                          health=endpoint_health(ep), on_tick=on_tick)
        holder.append(world)
        events = world.run()
        actions = dict(proxy.stats.actions) if proxy is not None else {}
    verdict = plugin("lock").check(scenario, ModelRun(events))  # as every world's lock run (model/protocols)
    return RealWorldResult(scenario, seed, events, verdict, actions)


def run_node(scenario: Scenario, node: str, backend_url: str, *, prefix: str, duration_ms: int | None = None,
             seed: int | None = None, start_epoch: float | None = None, log_dir: Path | None = None,
             sink: Callable[[Event], None] | None = None, client: str | None = None,
             workload_for: Callable[[Scenario], Workload] | None = None) -> list[Event]:
    """Run ONE node's writer (and its heartbeat) for ``duration_ms`` against a running service; its events.

    For Spark tasks, one per node: give every task the same ``start_epoch``
    (``time.time()`` taken on the driver, a little in the future is fine) so
    true times share one zero, then :func:`merge_histories` on the driver.
    ``backend_url`` is a URL as in :func:`backends.endpoint.from_url`; keys go
    under ``prefix`` (not cleared here: clear it once on the driver with
    :func:`clear_prefix`).  The node's wire faults go through its own fault proxy.
    ``workload_for(mapped scenario)`` builds the node's workload plug-in (default: the lock
    workload); its keys must be those of ``scenario`` mapped under ``prefix``
    (:func:`map_scenario_keys`).
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
                          start_epoch=start_epoch, health=endpoint_health(ep),
                          workload=workload_for(scenario) if workload_for is not None else None)
        holder.append(world)
        if start_epoch is not None and time.time() < start_epoch:
            time.sleep(start_epoch - time.time())
        return world.run()


def merge_histories(histories: Sequence[Sequence[Event]]) -> list[Event]:
    """Merge per-node histories (shared ``start_epoch``) into one, ordered by true time, re-indexed."""
    merged = sorted((e for h in histories for e in h), key=lambda e: (e.time, e.node, e.index))
    return [e._replace(index=i) for i, e in enumerate(merged)]
