"""Configuration of a lock-model run: the lock, storage, workload, clocks and fault plan.

Every class is a frozen dataclass with defaults; a scenario file (TOML) sets
any subset of fields.  ``validate()`` methods enforce the protocol's own rules
(for example Hudi's "validity at least 10 x renew interval") and raise
:class:`ConfigError` naming the field and the value.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from model.lock.variants import VARIANTS, variant

INTERRUPT_POLICIES = ("next-storage-call", "never", "checkpoints")
# S3StorageLockClient#createDefaultS3Client: apiCallTimeout = validity / 5.  GCSStorageLockClient sets no
# timeout; the google-cloud-storage HTTP transport's default read timeout (20 s) applies.
# AzureStorageLockClient#configureAzureClientOptions: response and read timeouts max(1, validity / 5) s.
GCS_DEFAULT_TIMEOUT_MS = 20_000
ERROR_STATUSES = ("409", "412", "429", "503", "timeout", "lost-reply")


class ConfigError(ValueError):
    """A bad setting: names the dotted field, the value and the reason."""

    def __init__(self, field_name: str, value: Any, reason: str) -> None:
        self.field = field_name
        self.value = value
        self.reason = reason
        super().__init__(f"{field_name} = {value!r}: {reason}")


def _require(cond: bool, field_name: str, value: Any, reason: str) -> None:
    if not cond:
        raise ConfigError(field_name, value, reason)


@dataclass(frozen=True)
class Dist:
    """Integer milliseconds: ``fixed`` (lo), ``uniform`` [lo, hi] or ``exp`` (mean lo, capped at hi)."""

    kind: str = "fixed"
    lo: int = 0
    hi: int = 0

    def validate(self, name: str) -> None:
        _require(
            self.kind in ("fixed", "uniform", "exp"),
            f"{name}.kind",
            self.kind,
            "must be fixed, uniform or exp",
        )
        _require(self.lo >= 0, f"{name}.lo", self.lo, "must be >= 0")
        if self.kind != "fixed":
            _require(self.hi >= self.lo, f"{name}.hi", self.hi, f"must be >= lo ({self.lo})")


@dataclass(frozen=True)
class LockConfig:
    """The storage-based lock (RFC-91) as Hudi configures it, plus the variant under test."""

    variant: str = "hudi"
    validity_secs: int = 300  # hoodie.write.lock.storage.validity.timeout.secs
    renew_interval_secs: int = 30  # hoodie.write.lock.storage.renew.interval.secs
    wait_time_ms: int = 60_000  # hoodie.write.lock.wait_time_ms
    poll_ms: int = 1_000  # fixed in Hudi (DEFAULT_LOCK_ACQUIRE_RETRY_WAIT_TIME_IN_MILLIS)
    drift_allowance_ms: int = 500  # fixed in Hudi; RFC-91 says never below 500
    base_path: str = "table"
    enforce_hudi_limits: bool = True
    # The table has Hudi's lock audit enabled (.hoodie/.locks/audit_enabled.json): providers write audits.
    audit: bool = True
    # LockProviderHeartbeatManager.DEFAULT_STOP_HEARTBEAT_TIMEOUT_MS: stopHeartbeat gives up after this.
    stop_heartbeat_timeout_ms: int = 15_000
    # LockManager#lock retries tryLock(wait_time_ms) on the same provider this many more times
    # (hoodie.write.lock.client.num_retries; 50 in Hudi 1.1.1 to 1.2.1) ...
    client_num_retries: int = 50
    # ... sleeping this long before each retry (hoodie.write.lock.client.wait_time_ms_between_retry; 5000).
    client_wait_ms_between_retry: int = 5_000

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "lock_key": "a cache (cached_property) of the lock file's key, made from base_path",
    }

    @functools.cached_property
    def lock_key(self) -> str:
        """The lock file's key (made once: it is asked for on every store write)."""
        return f"{self.base_path}/.hoodie/.locks/table_lock.json"

    def validate(self) -> None:
        _require(
            self.variant in VARIANTS, "lock.variant", self.variant, f"must be one of {', '.join(VARIANTS)}"
        )
        _require(
            self.renew_interval_secs > 0, "lock.renew_interval_secs", self.renew_interval_secs, "must be > 0"
        )
        _require(self.validity_secs > 0, "lock.validity_secs", self.validity_secs, "must be > 0")
        if self.enforce_hudi_limits:
            _require(
                self.validity_secs >= 10 * self.renew_interval_secs,
                "lock.validity_secs",
                self.validity_secs,
                f"Hudi requires at least 10 x renew_interval_secs ({10 * self.renew_interval_secs})",
            )
            _require(
                self.validity_secs >= 10,
                "lock.validity_secs",
                self.validity_secs,
                "Hudi requires at least 10 seconds",
            )
        _require(self.wait_time_ms >= 0, "lock.wait_time_ms", self.wait_time_ms, "must be >= 0")
        _require(self.poll_ms > 0, "lock.poll_ms", self.poll_ms, "must be > 0")
        _require(
            self.drift_allowance_ms >= 0, "lock.drift_allowance_ms", self.drift_allowance_ms, "must be >= 0"
        )
        _require(
            self.stop_heartbeat_timeout_ms > 0,
            "lock.stop_heartbeat_timeout_ms",
            self.stop_heartbeat_timeout_ms,
            "must be > 0",
        )
        _require(self.client_num_retries >= 0, "lock.client_num_retries", self.client_num_retries,
                 "must be >= 0")
        _require(self.client_wait_ms_between_retry >= 0, "lock.client_wait_ms_between_retry",
                 self.client_wait_ms_between_retry, "must be >= 0")
        _require(
            bool(self.base_path) and not self.base_path.startswith("/"),
            "lock.base_path",
            self.base_path,
            "must be a non-empty relative prefix",
        )


@dataclass(frozen=True)
class StorageConfig:
    """The simulated object store and the client that talks to it."""

    flavor: str = "s3"
    latency_ms: Dist = field(default_factory=lambda: Dist("uniform", 5, 40))
    timeout_ms: int = 0  # 0: Hudi's lock-client timeout (see client_settings)
    sdk_retries: int = -1  # retries of timeouts / 409 / 429 / 5xx; -1: the variant's Hudi client
    # Retries of the table's own files (not the lock client's: its lock file and audit trail), which Hudi
    # reads and writes through its storage layer (a Hadoop FileSystem connector with retries of its own);
    # -1: the lock client's setting.
    table_retries: int = -1
    retry_backoff_ms: int = 100
    # S3 answers 409 ConditionalRequestConflict when conditional writes to one key overlap.
    conflict_window_ms: int = 0
    conflict_prob: float = 0.0

    def validate(self) -> None:
        _require(self.flavor in ("s3", "gcs", "azure"), "storage.flavor", self.flavor,
                 "must be s3, gcs or azure")
        self.latency_ms.validate("storage.latency_ms")
        _require(
            self.timeout_ms >= 0, "storage.timeout_ms", self.timeout_ms, "must be >= 0 (0: Hudi's timeout)"
        )
        _require(
            self.sdk_retries >= -1,
            "storage.sdk_retries",
            self.sdk_retries,
            "must be >= 0, or -1 for the variant's Hudi client setting",
        )
        _require(self.table_retries >= -1, "storage.table_retries", self.table_retries,
                 "must be >= 0, or -1 for the lock client's setting")
        _require(
            self.retry_backoff_ms >= 0, "storage.retry_backoff_ms", self.retry_backoff_ms, "must be >= 0"
        )
        _require(
            0.0 <= self.conflict_prob <= 1.0, "storage.conflict_prob", self.conflict_prob, "must be in [0, 1]"
        )
        _require(
            self.conflict_window_ms >= 0,
            "storage.conflict_window_ms",
            self.conflict_window_ms,
            "must be >= 0",
        )


AFTER_FAILED_RELEASE = ("close", "keep-client")


@dataclass(frozen=True)
class WorkloadConfig:
    """Writers looping acquire -> (read, work, write) x steps -> release on a shared register."""

    writers: int = 3
    steps_per_hold: int = 1
    work_ms: Dist = field(default_factory=lambda: Dist("uniform", 100, 2_000))
    think_ms: Dist = field(default_factory=lambda: Dist("uniform", 0, 1_000))
    start_ms: Dist = field(default_factory=lambda: Dist("uniform", 0, 500))
    node_start_ms: dict[str, int] = field(default_factory=dict)  # per-node start, instead of start_ms
    # Hypothetical (no Hudi writer does this): the writer checks, by its own clock and with the same test
    # as contenders (Hudi's private actuallyHoldsLock), that its lock is still valid before each write.
    check_before_write: bool = False
    register_key: str = "table/register"
    # Where the writer thread notices an interrupt (Java sets a flag; a thread sees it only at interruptible
    # points): "next-storage-call" (Hudi's writer: no checks of its own; its S3 client's AWS SDK v2 checks
    # the flag before each request), "checkpoints" (explicit checks before each read and write of the
    # register) or "never" (a writer that ignores interrupts).
    interrupt: str = "next-storage-call"
    holds: int = 0  # acquisition attempts per writer incarnation; 0: loop until the run ends
    # What the application does with its write client after a failed release (unlock threw) or a failed
    # acquisition (lock() threw): "close" (it closes the client: LockManager's provider is closed) or
    # "keep-client" (it writes again through the same client, as HoodieStreamingSink does: Hudi's
    # LockManager kept the provider, so the next transaction's lock() calls tryLock on it, which returns
    # at once while its cached lock is still valid; variant pr-13577 skips lock() instead: fidelity.md M2).
    after_failed_release: str = "close"

    def validate(self) -> None:
        _require(1 <= self.writers <= 64, "workload.writers", self.writers, "must be between 1 and 64")
        _require(self.after_failed_release in AFTER_FAILED_RELEASE, "workload.after_failed_release",
                 self.after_failed_release, f"must be one of {', '.join(AFTER_FAILED_RELEASE)}")
        _require(self.holds >= 0, "workload.holds", self.holds, "must be >= 0 (0: no limit)")
        _require(
            self.interrupt in INTERRUPT_POLICIES,
            "workload.interrupt",
            self.interrupt,
            f"must be one of {', '.join(INTERRUPT_POLICIES)}",
        )
        _require(self.steps_per_hold >= 1, "workload.steps_per_hold", self.steps_per_hold, "must be >= 1")
        self.work_ms.validate("workload.work_ms")
        self.think_ms.validate("workload.think_ms")
        self.start_ms.validate("workload.start_ms")
        for node, at in self.node_start_ms.items():
            _require(
                node in self.nodes(),
                f"workload.node_start_ms.{node}",
                node,
                f"is not a node of this run ({', '.join(self.nodes())})",
            )
            _require(at >= 0, f"workload.node_start_ms.{node}", at, "must be >= 0")

    def nodes(self) -> list[str]:
        return [f"w{i}" for i in range(1, self.writers + 1)]


@dataclass(frozen=True)
class JumpSpec:
    at_ms: int = 0
    by_ms: int = 0


@dataclass(frozen=True)
class ClockSpec:
    """A node's clock in a scenario: offset, drift rate (ppm) and jumps."""

    offset_ms: int = 0
    drift_ppm: int = 0
    jumps: tuple[JumpSpec, ...] = ()

    def validate(self, name: str) -> None:
        _require(
            abs(self.drift_ppm) < 1_000_000, f"{name}.drift_ppm", self.drift_ppm, "must be within +-999999"
        )


PAUSE_TRIGGERS = ("time", "acquired", "write")


@dataclass(frozen=True)
class Pause:
    """Stop-the-world pause of every task of ``node`` for ``duration_ms``.

    ``trigger`` says when it starts: ``time`` at ``at_ms``; ``acquired`` at the
    node's first lock acquisition at or after ``at_ms``; ``write`` at its first
    register write at or after ``at_ms`` (decided, not yet sent).
    """

    node: str = "w1"
    at_ms: int = 0
    duration_ms: int = 0
    trigger: str = "time"


@dataclass(frozen=True)
class ErrorRule:
    """Requests matching node/key/method in [start_ms, end_ms) fail with ``status`` with probability ``prob``.

    ``key`` is ``lock``, ``register``, ``any`` or a key prefix; ``method`` is ``read``, ``write`` or ``any``.
    ``status``: 409/412/429/503 (not applied), ``timeout`` (not applied, the client waits
    ``storage.timeout_ms``) or ``lost-reply`` (applied, then the client times out).
    ``count`` limits how many requests the rule hits (0: no limit).
    """

    node: str = "any"
    key: str = "any"
    method: str = "any"
    status: str = "503"
    prob: float = 1.0
    start_ms: int = 0
    end_ms: int = 2**62
    count: int = 0


@dataclass(frozen=True)
class Crash:
    """``node`` crashes at ``at_ms`` (all its tasks die), restarts ``restart_after_ms`` later (<0: never)."""

    node: str = "w1"
    at_ms: int = 0
    restart_after_ms: int = 10_000


@dataclass(frozen=True)
class Shutdown:
    """``node`` shuts down gracefully at ``at_ms`` (SIGTERM): its JVM shutdown hooks run (Hudi's expires the
    lock it holds) while its threads go on, then it stops ``halt_after_hooks_ms`` after the last hook ended
    (a JVM halts only once every hook has ended, and its application threads run until then: 150-400 ms
    measured in the hudi world; 0, the default, stops it as the hooks end); restarts ``restart_after_ms``
    after the stop (<0: never)."""

    node: str = "w1"
    at_ms: int = 0
    restart_after_ms: int = 10_000
    halt_after_hooks_ms: int = 0


@dataclass(frozen=True)
class WriterDeath:
    """The writer thread of ``node`` dies at ``at_ms``; its heartbeat thread lives on."""

    node: str = "w1"
    at_ms: int = 0


@dataclass(frozen=True)
class Cutoff:
    """Node ``node`` cannot reach storage during [start_ms, end_ms): its requests time out unapplied."""

    node: str = "w1"
    start_ms: int = 0
    end_ms: int = 0


@dataclass(frozen=True)
class HeartbeatStartFailure:
    """The heartbeat of ``node`` fails to start on its ``acquisition``-th successful acquisition (1-based)."""

    node: str = "w1"
    acquisition: int = 1


@dataclass(frozen=True)
class FaultPlan:
    """Everything that goes wrong in a run, decided up front or drawn from the run's seed."""

    pauses: tuple[Pause, ...] = ()
    errors: tuple[ErrorRule, ...] = ()
    crashes: tuple[Crash, ...] = ()
    writer_deaths: tuple[WriterDeath, ...] = ()
    cutoffs: tuple[Cutoff, ...] = ()
    heartbeat_start_failures: tuple[HeartbeatStartFailure, ...] = ()
    shutdowns: tuple[Shutdown, ...] = ()

    def validate(self, nodes: list[str]) -> None:
        def node_ok(name: str, node: str, allow_any: bool = False) -> None:
            ok = node in nodes or (allow_any and node == "any")
            _require(ok, name, node, f"is not a node of this run ({', '.join(nodes)})")

        for i, p in enumerate(self.pauses):
            node_ok(f"faults.pauses[{i}].node", p.node)
            _require(p.duration_ms >= 0, f"faults.pauses[{i}].duration_ms", p.duration_ms, "must be >= 0")
            _require(p.at_ms >= 0, f"faults.pauses[{i}].at_ms", p.at_ms, "must be >= 0")
            _require(
                p.trigger in PAUSE_TRIGGERS,
                f"faults.pauses[{i}].trigger",
                p.trigger,
                f"must be one of {', '.join(PAUSE_TRIGGERS)}",
            )
        for i, e in enumerate(self.errors):
            node_ok(f"faults.errors[{i}].node", e.node, allow_any=True)
            _require(
                bool(e.key), f"faults.errors[{i}].key", e.key, "must be lock, register, any or a key prefix"
            )
            _require(
                e.method in ("read", "write", "any"),
                f"faults.errors[{i}].method",
                e.method,
                "must be read, write or any",
            )
            _require(
                e.status in ERROR_STATUSES,
                f"faults.errors[{i}].status",
                e.status,
                f"must be one of {', '.join(ERROR_STATUSES)}",
            )
            _require(e.status != "412" or e.method == "write", f"faults.errors[{i}].method", e.method,
                     "must be write with status 412 (only a conditional write is answered 412)")
            _require(0.0 <= e.prob <= 1.0, f"faults.errors[{i}].prob", e.prob, "must be in [0, 1]")
            _require(e.end_ms >= e.start_ms, f"faults.errors[{i}].end_ms", e.end_ms, "must be >= start_ms")
            _require(e.count >= 0, f"faults.errors[{i}].count", e.count, "must be >= 0")
        for i, c in enumerate(self.crashes):
            node_ok(f"faults.crashes[{i}].node", c.node)
        for i, d in enumerate(self.writer_deaths):
            node_ok(f"faults.writer_deaths[{i}].node", d.node)
        for i, sd in enumerate(self.shutdowns):
            node_ok(f"faults.shutdowns[{i}].node", sd.node)
            _require(sd.at_ms >= 0, f"faults.shutdowns[{i}].at_ms", sd.at_ms, "must be >= 0")
            _require(sd.halt_after_hooks_ms >= 0, f"faults.shutdowns[{i}].halt_after_hooks_ms",
                     sd.halt_after_hooks_ms, "must be >= 0")
        for i, k in enumerate(self.cutoffs):
            node_ok(f"faults.cutoffs[{i}].node", k.node)
            _require(k.end_ms >= k.start_ms, f"faults.cutoffs[{i}].end_ms", k.end_ms, "must be >= start_ms")
        for i, h in enumerate(self.heartbeat_start_failures):
            node_ok(f"faults.heartbeat_start_failures[{i}].node", h.node)
            _require(
                h.acquisition >= 1,
                f"faults.heartbeat_start_failures[{i}].acquisition",
                h.acquisition,
                "must be >= 1",
            )


@dataclass(frozen=True)
class Schedule:
    """A scripted schedule of the simulated world (``hcc explore`` writes one with a counterexample).

    Empty by default: latencies are drawn and simultaneous steps run as SimPy orders them.  When set,
    the i-th timer or network hop the run creates gets ``ranks[i]``: steps due at the same instant
    run by rank, after every step that is not ranked; the j-th network latency is ``latencies_ms[j]``
    instead of a draw.  Past the end of either list the run goes on unscripted.
    """

    ranks: tuple[int, ...] = ()
    latencies_ms: tuple[int, ...] = ()

    def validate(self) -> None:
        for i, r in enumerate(self.ranks):
            _require(r >= 0, f"schedule.ranks[{i}]", r, "must be >= 0")
        for i, ms in enumerate(self.latencies_ms):
            _require(ms >= 0, f"schedule.latencies_ms[{i}]", ms, "must be >= 0")


CHECKERS = ("overlap", "stale-write", "lost-update")
WORLDS = ("sim", "spark")


@dataclass(frozen=True)
class Scenario:
    """A whole lock-model scenario: what runs, what goes wrong, what verdict is expected."""

    name: str = "unnamed"
    description: str = ""
    world: str = "sim"  # "sim": simulated; "spark": Spark tasks are the writers, against ``backend``
    backend: str = "fake-gcs"  # the launched storage server of a "spark" world
    seed: int = 1
    duration_ms: int = 900_000
    expect: str = "ok"
    # Checkers whose violations decide the verdict; the others are still reported, as findings.
    checkers: tuple[str, ...] = CHECKERS
    lock: LockConfig = field(default_factory=LockConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    clocks: dict[str, ClockSpec] = field(default_factory=dict)
    faults: FaultPlan = field(default_factory=FaultPlan)
    schedule: Schedule = field(default_factory=Schedule)

    def validate(self) -> None:
        """Check every rule that a dataclass type cannot express; raise ConfigError on the first breach."""
        _require(bool(self.name), "name", self.name, "must not be empty")
        _require(self.world in WORLDS, "world", self.world, f"must be one of {', '.join(WORLDS)}")
        _require(bool(self.backend), "backend", self.backend, "must name a storage server")
        _require(self.duration_ms > 0, "duration_ms", self.duration_ms, "must be > 0")
        _require(self.expect in ("ok", "violation"), "expect", self.expect, "must be ok or violation")
        for c in self.checkers:
            _require(c in CHECKERS, "checkers", c, f"must be among {', '.join(CHECKERS)}")
        self.lock.validate()
        self.storage.validate()
        self.workload.validate()
        nodes = self.workload.nodes()
        for node, spec in self.clocks.items():
            _require(node in nodes, f"clocks.{node}", node, f"is not a node of this run ({', '.join(nodes)})")
            spec.validate(f"clocks.{node}")
        self.faults.validate(nodes)
        self.schedule.validate()
        client_settings(self)  # the lock client Hudi would build must exist (flavour, timeout)


def describe_faults(plan: FaultPlan) -> list[str]:
    """A fault plan as short readable lines, one per fault (used to print shrunk schedules)."""
    lines: list[str] = []
    for p in plan.pauses:
        when = f"at {p.at_ms} ms" if p.trigger == "time" else f"at its first {p.trigger} after {p.at_ms} ms"
        lines.append(f"pause {p.node} {when} for {p.duration_ms} ms")
    for e in plan.errors:
        limit = f", at most {e.count}x" if e.count else ""
        end = "the end" if e.end_ms >= 2**62 else f"{e.end_ms} ms"
        lines.append(
            f"{e.status} on {e.method} of {e.key} by {e.node} from {e.start_ms} ms to {end} "
            f"(p={e.prob}{limit})"
        )
    for c in plan.crashes:
        lines.append(f"crash {c.node} at {c.at_ms} ms, restart after {c.restart_after_ms} ms")
    for d in plan.writer_deaths:
        lines.append(f"writer thread of {d.node} dies at {d.at_ms} ms")
    for k in plan.cutoffs:
        lines.append(f"{k.node} cut off from storage during [{k.start_ms}, {k.end_ms}) ms")
    for h in plan.heartbeat_start_failures:
        lines.append(f"heartbeat of {h.node} fails to start on acquisition {h.acquisition}")
    for sd in plan.shutdowns:
        halt = f", halt {sd.halt_after_hooks_ms} ms after its hooks" if sd.halt_after_hooks_ms else ""
        lines.append(f"graceful shutdown of {sd.node} at {sd.at_ms} ms{halt}, restart after "
                     f"{sd.restart_after_ms} ms")
    return lines


@dataclass(frozen=True)
class ClientSettings:
    """The storage client of a run, resolved: timeout per attempt, retries, backoff (ms)."""

    timeout_ms: int
    sdk_retries: int  # the lock client's (lock file, audit trail)
    retry_backoff_ms: int
    table_retries: int  # every other key's


def client_settings(scenario: Scenario) -> ClientSettings:
    """The lock client Hudi builds for this scenario, where ``storage`` leaves a field to Hudi.

    - ``storage.timeout_ms = 0``: S3 ``apiCallTimeout`` = validity / 5 whole seconds (S3StorageLockClient
      #createDefaultS3Client); GCS sets none, so the library's 20 s read timeout applies; Azure
      max(1, validity / 5) whole seconds (AzureStorageLockClient#configureAzureClientOptions).
    - ``storage.sdk_retries = -1``: the variant's Hudi client: no SDK retries in ``hudi`` and the
      variants built on it (S3 ``maxAttempts(1)``, GCS ``setMaxAttempts(1)``, PR #17869; Azure
      ``setMaxRetries(0)``); the SDKs' default retries in ``hudi-1.1`` (AWS SDK v2 legacy mode: 3
      retries; google-cloud-storage: 5).
    Explicit values win.  Every world (simulated, real storage) uses these settings.  A variant whose
    Hudi has no Azure lock client (``hudi-1.1``) on ``storage.flavor = "azure"`` is a ConfigError.
    """
    storage = scenario.storage
    lock_variant = variant(scenario.lock.variant)
    _require(storage.flavor != "azure" or lock_variant.azure_client, "storage.flavor", storage.flavor,
             f"variant {lock_variant.name} ({lock_variant.follows}) has no Azure lock client "
             "(AzureStorageLockClient came with Hudi 1.2.0, PR #17951)")
    timeout = storage.timeout_ms
    if timeout == 0:
        fifth = scenario.lock.validity_secs // 5 * 1000
        _require(fifth > 0 or storage.flavor != "s3", "lock.validity_secs", scenario.lock.validity_secs,
                 "with storage.timeout_ms = 0 (Hudi's own), the S3 lock client's apiCallTimeout is "
                 "validity_secs / 5 in whole seconds, here 0 s, in which no request completes: use "
                 "validity_secs >= 5, or set storage.timeout_ms")
        timeout = {"s3": fifth, "azure": max(1_000, fifth)}.get(storage.flavor, GCS_DEFAULT_TIMEOUT_MS)
    retries = storage.sdk_retries
    if retries < 0:
        retries = lock_variant.sdk_retries(storage.flavor)
    table = retries if storage.table_retries < 0 else storage.table_retries
    return ClientSettings(timeout, retries, storage.retry_backoff_ms, table)
