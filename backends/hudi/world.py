"""The ``hudi`` world of the lock: Hudi's own ``StorageBasedLockProvider`` as each node's lock.

A lock scenario runs as in the real world (:mod:`backends.realworld`: the kernel on threads, real
clocks, a launched server behind the fault proxy), with one difference: each node's lock provider is
Hudi's, in a JVM of the node's own (:class:`backends.hudi.jvm.LockJvm`), built from the pinned jars of
one Hudi release. The harness's writer (:class:`model.lock.register_writer.RegisterWriter`: LockManager's
retries, the critical section of register reads and writes the checkers judge) stays the harness's, as
in the thread world; :class:`HudiLockProvider` stands where the model's provider stands and turns each of
its calls into a call of Hudi's provider in the JVM. What Hudi does inside (polls, the heartbeat and
its renewals, the writer interrupt, the audit trail, releases, the shutdown hook) is Hudi's bytecode;
its requests reach storage through the proxy, which records every successful write under the lock's
folder as a store event (``"observed": "proxy"``), so the checkers see the lock file's versions as in
every world.

A provider call blocks the writer's step on its own thread for as long as Hudi's call lasts, as the
Java call blocks Hudi's writer thread; nothing else waits for it.

Faults: error rules and cutoffs through the proxy (the JVM's requests included); a pause stops the
node's JVM (SIGSTOP, every thread: the heartbeat too) and gates the writer task; a crash kills the JVM
(SIGKILL: no shutdown hook) and the node's tasks; a graceful shutdown sends SIGTERM, so the JVM runs
Hudi's shutdown hooks before the node stops; a writer death ends the JVM's writer thread, which Hudi's
heartbeat then finds dead. A clock offset applies to the provider's clock (``getCurrentEpochMs``: the
validUntil it writes and its expiry test); drift and jumps cannot be applied to a JVM's clock and are
refused, as are the settings Hudi fixes (the 1 s poll, the 500 ms drift allowance, the 15 s heartbeat
stop) and the model's other variants: the world runs Hudi's provider only.
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.parse
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.endpoint import Endpoint
from backends.fault_proxy import Exchange, multipart_media
from backends.hudi.artifacts import check_version
from backends.hudi.jvm import JvmGone, LockJvm
from backends.launchers.workdir import server_dir
from backends.realworld import (
    RealWorld,
    RealWorldResult,
    clear_prefix,
    endpoint_health,
    map_scenario_keys,
    node_backends,
    seed_lock_table,
)
from model.config import ConfigError, Scenario, client_settings
from model.lock.register_writer import RegisterWriter
from model.lock.variants import variant
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.runtime.effects import Effect, Record, Sleep
from model.runtime.history import Event
from model.runtime.kernel import Kernel, Killed, WorldError, WriterContext
from model.workloads.lock import LockWorkload

Gen = Generator[Effect, Any, Any]

# The settings Hudi fixes: a scenario of the hudi world keeps them (the model can change them).
HUDI_FIXED = {"lock.poll_ms": 1_000, "lock.drift_allowance_ms": 500, "lock.stop_heartbeat_timeout_ms": 15_000}


def check_scenario(scenario: Scenario, kind: str | None = None) -> None:
    """ConfigError naming the field and value when ``scenario`` asks what the hudi world cannot run;
    ``kind``: the backend's (``Endpoint.kind``), which ``storage.flavor`` must then be."""
    lock = scenario.lock
    if lock.variant != "hudi":
        raise ConfigError("lock.variant", lock.variant,
                          "the hudi world runs Hudi's own provider: only 'hudi' (choose the release with "
                          "--hudi-version)")
    if scenario.storage.flavor not in ("s3", "azure", "gcs"):
        raise ConfigError("storage.flavor", scenario.storage.flavor,
                          "the hudi world has S3, Azure and GCS lock clients only")
    if kind is not None and scenario.storage.flavor != kind:
        raise ConfigError("storage.flavor", scenario.storage.flavor,
                          f"the backend is {kind} storage: the flavor must be its kind, {kind!r} (the lock "
                          "client and its timeouts follow the flavor)")
    for name, value in (("lock.poll_ms", lock.poll_ms), ("lock.drift_allowance_ms", lock.drift_allowance_ms),
                        ("lock.stop_heartbeat_timeout_ms", lock.stop_heartbeat_timeout_ms)):
        if value != HUDI_FIXED[name]:
            raise ConfigError(name, value, f"Hudi fixes it at {HUDI_FIXED[name]}")
    if lock.validity_secs < 10 * lock.renew_interval_secs:
        raise ConfigError("lock.validity_secs", lock.validity_secs,
                          "Hudi requires at least 10 x lock.renew_interval_secs "
                          f"({10 * lock.renew_interval_secs})")
    if scenario.workload.check_before_write:
        raise ConfigError("workload.check_before_write", True,
                          "a hypothetical writer's check needs the model's provider (Hudi's is private)")
    if scenario.faults.heartbeat_start_failures:
        raise ConfigError("faults.heartbeat_start_failures", len(scenario.faults.heartbeat_start_failures),
                          "the model's injection point: Hudi's heartbeat manager has no such hook")
    for i, sd in enumerate(scenario.faults.shutdowns):
        if sd.halt_after_hooks_ms:
            raise ConfigError(f"faults.shutdowns[{i}].halt_after_hooks_ms", sd.halt_after_hooks_ms,
                              "the model's stand-in for the JVM's halt after its hooks: in the hudi world "
                              "the JVM halts when it does (150-400 ms after SIGTERM here)")
    for node, spec in scenario.clocks.items():
        if spec.drift_ppm or spec.jumps:
            raise ConfigError(f"clocks.{node}", "drift or jumps",
                              "a JVM's clock can only be offset (the provider's getCurrentEpochMs)")


@dataclass
class HudiNode:
    """One node's JVM, started at its first provider, started anew after a crash."""

    name: str
    version: str
    log_dir: Path
    kernel: HudiKernel | None = None
    jvm: LockJvm | None = None
    killed: bool = False  # the harness ended this JVM on purpose (a crash, a shutdown)
    warm: bool = False  # the running JVM has loaded the lock path's classes (:func:`warm_up`)
    jvms: int = 0
    peak_rss_kb: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def current(self) -> LockJvm:
        """The running JVM (started now if there is none)."""
        with self.lock:
            if self.jvm is None or not self.jvm.alive:
                self.jvms += 1
                self.jvm = LockJvm(self.version, self.log_dir / f"jvm-{self.name}-{self.jvms}.log",
                                   on_event=self._event)
                self.jvm.start()
                self.killed = self.warm = False
            return self.jvm

    def _event(self, name: str, _msg: dict[str, Any]) -> None:
        if name == "interrupted":
            self.interrupt_writer()

    def interrupt_writer(self) -> None:
        """``Thread.interrupt`` of this node's writer task (Hudi's heartbeat found the lock taken)."""
        if self.kernel is not None:
            self.kernel.interrupt_task(self.kernel.nodes[self.name], "writer")

    def end(self, how: str) -> None:
        """``kill`` (SIGKILL), ``terminate`` (SIGTERM, hooks run) or ``stop`` (end of run: SIGKILL)."""
        jvm = self.jvm
        if jvm is None:
            return
        self.killed = True
        if how == "terminate":
            jvm.terminate()
        else:
            jvm.kill()
        self.peak_rss_kb = max(self.peak_rss_kb, jvm.peak_rss_kb)


class HudiLockProvider:
    """Where the model's :class:`~model.lock.provider.StorageLockProvider` stands in the writer: each call
    is the same call of Hudi's provider in the node's JVM (see the module doc).

    Its attributes are those the writer reads: ``owner``, ``error`` and ``error_kind`` (what the last
    call threw, as the model's provider sets them), ``reentrant``, ``config``, ``variant``.
    """

    def __init__(self, node: HudiNode, scenario: Scenario, props: Mapping[str, str],
                 client: Mapping[str, Any], owner: str, clock_offset_ms: int) -> None:
        self.node = node
        self.config = scenario.lock
        self.variant = variant("hudi")
        self.key = scenario.lock.lock_key
        self.owner = owner
        self._props, self._client, self._offset = dict(props), dict(client), clock_offset_ms
        self._id = owner
        self.error: str | None = None
        self.error_kind: str | None = None
        self.reentrant = False
        self._version: str | None = None  # the version of the lock Hudi's provider holds (after our calls)
        self._jvm: LockJvm | None = None

    def _call(self, op: str, **fields: Any) -> dict[str, Any]:
        """One call in the JVM; a JVM the harness ended is the node's crash (Killed), another end an error."""
        jvm = self._jvm
        if jvm is None:
            raise WorldError("no provider in the JVM", {"op": op})
        try:
            reply = jvm.call(op, provider=self._id, **fields)
        except JvmGone as e:
            if self.node.killed:
                raise Killed("crash") from None
            raise WorldError(f"{self.node.name}'s JVM: {e}", {"op": op, "log": str(jvm.log_path)}) from None
        if reply.get("interrupted"):
            # Hudi's heartbeat interrupted the writer thread during the call: the driver cleared the flag,
            # so the writer task carries it to its next interruptible point, as the Java thread would
            self.node.interrupt_writer()
        return reply

    def _failed(self, reply: dict[str, Any]) -> str:
        text = f"{reply['error'].rsplit('.', 1)[-1]}: {reply.get('message', '')}"
        return f"{text} (caused by {reply['causes']})" if reply.get("causes") else text

    def open(self) -> Gen:
        """The provider's constructor in the JVM: a new owner id's provider and its shutdown hook."""
        self._jvm = self.node.current()
        reply = self._call("new", owner=self.owner, props=self._props, client=self._client,
                           clock_offset_ms=self._offset)
        if not reply["ok"]:
            raise WorldError(f"Hudi's provider could not be built: {self._failed(reply)}", {"op": "new"})
        yield from ()

    def try_lock(self, wait_ms: int | None = None) -> Gen:
        """``tryLock(wait, ms)``: True when Hudi's provider acquired (or held) the lock."""
        self.error = self.error_kind = None
        wait = self.config.wait_time_ms if wait_ms is None else wait_ms
        reply = self._call("tryLock", wait_ms=wait)
        if reply["ok"]:
            result = reply["result"]
            before, after = result["before"], result["after"]
            self._version = after["version"] if after else None
            self.reentrant = bool(result["acquired"] and before and after
                                  and before["version"] == after["version"])
            if not result["acquired"]:
                self.error_kind = "timeout"
                # tryLock returned false: what it did inside is Hudi's (phase "hudi"); the dangling-lock
                # checker compares this owner with the lock file the proxy saw written
                yield Record("try-lock", "fail", {"reason": "not-acquired", "owner": self.owner,
                                                  "phase": "hudi"})
            return bool(result["acquired"])
        self.error = self._failed(reply)
        # LockManager's RetryHelper retries a HoodieLockException only (the model's "provider" and
        # "interrupted"); an exception of the lock client ends lock() at once
        hoodie = reply["error"].endswith("HoodieLockException")
        interrupted = hoodie and "InterruptedException" in reply.get("causes", "")
        self.error_kind = "interrupted" if interrupted else "provider" if hoodie else "client"
        yield Record("try-lock", "fail", {"reason": "exception", "owner": self.owner, "error": self.error,
                                          "phase": "hudi"})
        return False

    def unlock(self) -> Gen:
        """``unlock()``: True when it returned, False when it threw (FAILED_TO_RELEASE and the like)."""
        self.error = None
        reply = self._call("unlock")
        if reply["ok"]:
            return True
        self.error = self._failed(reply)
        held = self._call("getLock")
        self._version = held["result"]["version"] if held["ok"] and held["result"] else None
        yield Record("release-failed", "info", {"owner": self.owner, "error": self.error,
                                                "still_believes": self._version is not None})
        return False

    def close(self) -> Gen:
        """``close()``: Hudi's ``shutdown(false)`` (its own unlock's failure is only logged)."""
        self._call("close")
        yield from ()

    def fencing_token(self) -> str | None:
        """The version of the lock Hudi's provider holds, as the model's provider gives it."""
        return self._version

    def careful_check(self) -> Gen:
        """Never called: :func:`check_scenario` refuses the hypothetical careful writer."""
        raise ConfigError("workload.check_before_write", True, "not in the hudi world")
        yield from ()


class HudiKernel(Kernel):
    """The kernel of the hudi world: the nemesis's pauses, crashes, shutdowns and writer deaths also act
    on the node's JVM, as each event is recorded."""

    hudi_nodes: dict[str, HudiNode]

    def record(self, node: str, process: str, type_: str, f: str, value: Any = None) -> None:
        super().record(node, process, type_, f, value)
        if process != "nemesis" or node not in getattr(self, "hudi_nodes", {}):
            return
        hn = self.hudi_nodes[node]
        jvm = hn.jvm
        if f == "pause-start" and jvm is not None:
            jvm.pause()
        elif f == "pause-end" and jvm is not None:
            jvm.resume()
        elif f == "crash":
            hn.end("kill")
        elif f == "shutdown":
            # the kernel runs the node's hooks, then stops it: the JVM's SIGTERM is that hook
            self.nodes[node].hooks = {"jvm": lambda: self._terminate(hn)}
        elif f == "writer-death" and jvm is not None:
            threading.Thread(target=_quietly, args=(jvm.call, "writer-death"), daemon=True).start()

    def _terminate(self, hn: HudiNode) -> Gen:
        done = threading.Event()

        def run() -> None:
            hn.end("terminate")
            done.set()

        threading.Thread(target=run, daemon=True).start()
        while not done.is_set():
            yield Sleep(50, interruptible=False)


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    with contextlib.suppress(JvmGone):
        fn(*args)


def lock_folder_event(kernel: Kernel, workload: LockWorkload, folder: str, ex: Exchange) -> None:
    """Record a successful write under the lock's folder that the proxy saw (the JVM's writes) as the
    store event a client-observed write gets in the real world, with the version chain.

    S3 and Azure: a PUT, its precondition in If-Match / If-None-Match, its version the reply's ETag. GCS:
    a multipart upload (a POST, its body gzipped), its precondition ``ifGenerationMatch`` in the query (0:
    create), its version the new generation in the reply's JSON, as the harness's GCS client names it."""
    if ex.status is None or not 200 <= ex.status < 300 or not ex.key.startswith(folder):
        return
    if ex.method == "PUT":
        version, body = ex.version, ex.body
        extra: dict[str, Any] = {"observed": "proxy", "version": version}
        if ex.if_match is not None:
            extra["replaces"] = ex.if_match
        elif ex.if_none_match == "*":
            extra["replaces"] = None
    elif ex.method == "POST" and "uploadType=multipart" in ex.query:
        try:
            version = str(json.loads(ex.reply)["generation"])
        except (ValueError, KeyError, TypeError):
            return  # not an upload's answer
        body = multipart_media(ex.body)
        extra = {"observed": "proxy", "version": version}
        match = urllib.parse.parse_qs(ex.query).get("ifGenerationMatch")
        if match:
            extra["replaces"] = None if match[0] == "0" else match[0]
    else:
        return
    kernel.observe_write(kernel.nodes[ex.node], ex.key, body, version, extra)


# A node's writer given its context and a factory of its lock providers (one per transaction).
WriterFor = Callable[[WriterContext, Callable[[], Any]], Gen]


def register_writer(scenario: Scenario) -> WriterFor:
    """The lock workload's writer (:class:`RegisterWriter`) over the providers the factory makes."""
    def writer(ctx: WriterContext, new_provider: Callable[[], Any]) -> Gen:
        start = scenario.workload.node_start_ms.get(ctx.node) if ctx.incarnation == 1 else None
        return RegisterWriter(new_provider, scenario.workload, ctx.rng, fenced=False, start_ms=start).run()

    return writer


def hudi_workload(scenario: Scenario, nodes: dict[str, HudiNode], bucket: str, client: Mapping[str, Any],
                  clients: Mapping[str, str], writer_for: WriterFor | None = None) -> LockWorkload:
    """The lock workload whose writers use Hudi's provider (``clients``: each node's endpoint, the proxy);
    ``writer_for`` the writers (default :func:`register_writer`)."""
    props = provider_props(scenario, table_uri(client, bucket, scenario.lock.base_path))
    timeout_ms = client_settings(scenario).timeout_ms

    make_writer = writer_for or register_writer(scenario)

    def writer(ctx: WriterContext) -> Gen:
        node = nodes[ctx.node]
        offset = scenario.clocks[ctx.node].offset_ms if ctx.node in scenario.clocks else 0

        def new_provider() -> HudiLockProvider:
            return HudiLockProvider(node, scenario, props,
                                    {**client, "endpoint": clients[ctx.node], "timeout_ms": timeout_ms},
                                    ctx.new_id(), offset)

        return make_writer(ctx, new_provider)

    return LockWorkload(scenario, factory=writer)


def table_uri(client: Mapping[str, Any], bucket: str, base_path: str) -> str:
    """The table's URI as a Hudi user writes it: the provider derives the lock file's from it."""
    if client["kind"] == "azure":
        return f"abfs://{bucket}@{client['account']}.dfs.core.windows.net/{base_path}"
    if client["kind"] == "gcs":
        return f"gs://{bucket}/{base_path}"
    return f"s3a://{bucket}/{base_path}"


def provider_props(scenario: Scenario, base_uri: str) -> dict[str, str]:
    """The Hudi properties each provider of ``scenario`` is built with."""
    lock = scenario.lock
    return {"hoodie.base.path": base_uri,
            "hoodie.write.lock.storage.validity.timeout.secs": str(lock.validity_secs),
            "hoodie.write.lock.storage.renew.interval.secs": str(lock.renew_interval_secs)}


def warm_up(node: HudiNode, scenario: Scenario, ep: Endpoint, prefix: str) -> None:
    """Acquire and release a lock of a table of the node's own under ``prefix`` (straight to the server,
    not through the proxy, outside the run's clock and history), so the run's first call does not also
    pay the JVM's class loading and JIT of the lock path (a second or more: at a time scale of 30 that is
    longer than the start offsets between nodes). Once per JVM; the caller deletes ``prefix``."""
    jvm = node.current()
    if node.warm:
        return
    assert ep.url is not None
    client = lock_client(ep)
    pid = f"warm-up-{node.name}"
    props = provider_props(scenario, table_uri(client, ep.bucket, f"{prefix}{node.name}"))
    timeout_ms = client_settings(scenario).timeout_ms
    for op, fields in (("new", {"owner": pid, "props": props, "clock_offset_ms": 0,
                                "client": {**client, "endpoint": ep.url, "timeout_ms": timeout_ms}}),
                       ("tryLock", {"wait_ms": 2_000}), ("unlock", {}), ("close", {})):
        reply = jvm.call(op, provider=pid, **fields)
        if not reply["ok"]:
            raise WorldError(f"{node.name}'s JVM failed its warm-up {op}: {reply.get('error')}: "
                             f"{reply.get('message', '')}", {"log": str(jvm.log_path)})
    node.warm = True


GCS_PROJECT = "hcc"  # the project the harness's GCS clients name (backends/gcs.py)


def lock_client(ep: Endpoint) -> dict[str, Any]:
    """What the driver's lock client of ``ep``'s kind needs (its endpoint, each node's proxy, comes apart).

    Azure: the account and its shared key, from which the driver builds the connection string Hudi's
    client takes (``BlobEndpoint`` the node's proxy URL, which carries the account's path).
    GCS: the project (fake-gcs-server takes any; the harness's is ``hcc``); no credentials, the node's
    proxy URL the client's host.
    """
    if ep.kind == "s3":
        return {"kind": "s3", "region": ep.region, "access_key": ep.access_key or "",
                "secret_key": ep.secret_key or ""}
    if ep.kind == "azure":
        if not ep.access_key or not ep.secret_key:
            raise ConfigError("backend", ep.name, "the hudi world's Azure lock client needs the account "
                              "name and its shared key (az+http://ACCOUNT:KEY@HOST:PORT/ACCOUNT/CONTAINER)")
        return {"kind": "azure", "account": ep.access_key, "key": ep.secret_key}
    if ep.kind == "gcs":
        return {"kind": "gcs", "project": GCS_PROJECT}
    raise ConfigError("backend", ep.name, f"the hudi world has no lock client for {ep.kind} storage")


def events_of(nodes: Mapping[str, HudiNode]) -> dict[str, Any]:
    """What the run directory says of the JVMs: how many each node started, and the peak memory seen."""
    return {n.name: {"jvms": n.jvms, "peak_rss_mb": round(n.peak_rss_kb / 1024, 1)} for n in nodes.values()}


@dataclass
class HudiRunResult:
    """A finished run of the hudi world: the real world's result, and the JVMs' figures."""

    result: RealWorldResult
    version: str
    jvms: dict[str, Any]
    exchanges: list[Exchange]


def run_hudi_world(scenario: Scenario, ep: Endpoint, *, version: str, prefix: str = "hcc-hudi/",
                   seed: int | None = None, sink: Callable[[Event], None] | None = None,
                   log_dir: Path | None = None, duration_ms: int | None = None,
                   on_tick: Callable[[int, int], None] | None = None,
                   nodes: dict[str, HudiNode] | None = None,
                   writer_for: WriterFor | None = None,
                   done: Callable[[], bool] | None = None) -> HudiRunResult:
    """Run every node of ``scenario`` with Hudi ``version``'s provider against ``ep`` (keys under
    ``prefix``, cleared first), every request through the fault proxy; check the history.

    ``nodes``: JVMs kept by the caller across runs (each run's providers are its own; the caller ends
    them), else started here and ended with the run; ``writer_for`` as for :func:`hudi_workload`;
    ``done`` as for :class:`~backends.realworld.RealWorld`.

    Raises :class:`~backends.realworld.ServerDied` with the partial history when the server dies, and
    ConfigError / ArtifactError for what cannot run.
    """
    check_scenario(scenario, ep.kind)
    check_version(version)
    seed = scenario.seed if seed is None else seed
    scenario = map_scenario_keys(scenario, prefix)
    log_dir = log_dir or server_dir("hudi-world")
    names = scenario.workload.nodes()
    clear_prefix(ep, prefix)  # Unreachable when the server does not answer: no JVM started yet
    seed_lock_table(ep, prefix, scenario)
    own = nodes is None
    if nodes is None:
        nodes = {n: HudiNode(n, version, log_dir) for n in names}
    holder: list[RealWorld] = []
    exchanges: list[Exchange] = []
    workload_box: list[LockWorkload] = []
    folder = scenario.lock.lock_key.rsplit("/", 1)[0] + "/"

    def on_exchange(ex: Exchange) -> None:
        exchanges.append(ex)
        if holder:
            lock_folder_event(holder[0].kernel, workload_box[0], folder, ex)

    try:
        for n in names:  # every JVM up, and its lock path warm, before the run's clock starts
            warm_up(nodes[n], scenario, ep, f"{prefix}warm-up/")
        clear_prefix(ep, f"{prefix}warm-up/")
        with node_backends(scenario, ep, names, prefix=prefix, log_dir=log_dir, seed=seed,
                           clock_ms=lambda: holder[0].now_ms() if holder else 0, use_proxy=True,
                           on_exchange=on_exchange) as (backends, proxy):
            assert proxy is not None
            client = lock_client(ep)
            workload = hudi_workload(scenario, nodes, ep.bucket, client, {n: proxy.url(n) for n in names},
                                     writer_for)
            workload_box.append(workload)
            world = RealWorld(scenario, backends, seed=seed, sink=sink, duration_ms=duration_ms,
                              health=endpoint_health(ep), on_tick=on_tick, workload=workload,
                              kernel_class=HudiKernel, done=done)
            kernel = world.kernel
            assert isinstance(kernel, HudiKernel)
            kernel.hudi_nodes = nodes
            for hn in nodes.values():
                hn.kernel = kernel
            holder.append(world)
            events = world.run()
            actions = dict(proxy.stats.actions)
    finally:
        for hn in nodes.values():
            if own:
                hn.end("stop")
            hn.kernel = None
    verdict = plugin("lock").check(scenario, ModelRun(events))  # as every world's lock run (model/protocols)
    result = RealWorldResult(scenario, seed, events, verdict, actions)
    return HudiRunResult(result, version, events_of(nodes), exchanges)
