"""A MERGE_ON_READ table under Non-Blocking Concurrency Control (RFC-66), run in the simulated world.

Several writers with a deterministic bucket index append log files to the same file groups
(``.{fileId}_{deltacommitInstant}.log.{version}_{writeToken}``, the instant being the writer's own
deltacommit), and a compaction service, scheduled while writers are in flight, merges them into
base files ``{fileId}_{writeToken}_{instant}.parquet``.  All of them are sans-I/O generators of
effects on the object store (:mod:`model.effects`), driven by :mod:`model.sim` through a writer
factory: node ``w1`` .. ``wN`` are the writers, node ``w{N+1}`` is the compaction service.  The
store ends up holding a Hudi table of version 8 (:mod:`model.nbcc.sim_layout`).

Each instant goes requested -> inflight -> completed as files in ``.hoodie/timeline/``.  Times come
from the harness's one time generator (:mod:`model.timeline.timegen`, ``TablePlan.time_generator``):

* ``skew-adjusting`` (RFC-66 as written): the table lock (:class:`model.storage_lock.StorageLockProvider`)
  guards the time generator *and* the creation of the file that carries the time, so a completion
  time and its completed-instant file appear atomically, and a compaction lists the timeline under
  the same lock as it takes its requested time;
* ``monotonic``: the compare-and-swap counter in the store gives unique, increasing times, but the
  file that carries a time is written after the time is drawn, outside any lock.  This breaks the
  RFC's atomicity assumption: a compaction can be requested at t5 while a deltacommit that drew
  completion time t4 has not yet written its completed file.  It is the known-unsafe variant the
  plan checker must catch;
* ``local-clock``: each node's clock, outside any lock (unsafe in the same way, and times collide).

Writers may fail mid-deltacommit (after writing some of their log files) and retry the same batch
as a new deltacommit; the failed instant stays inflight (lazy cleaning).  A node that crashes and
restarts resumes from the timeline (a writer skips the batches whose deltacommit completed; the
compaction service finishes a pending compaction before scheduling a new one).

Storage faults (``TablePlan.faults``, the scenario's fault plan: error rules, lost replies,
pauses, cut-offs, crashes) are survived: every request's answer is checked; an attempt whose
request failed is given up and retried as a new deltacommit (a compaction stays pending and is
finished later); a create whose outcome is unknown (a lost reply turns the SDK's retry into a
412) is resolved by reading the object back (:func:`create_resolved`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.clock import EPOCH_MS
from model.config import (
    ConfigError,
    Crash,
    Dist,
    FaultPlan,
    LockConfig,
    Scenario,
    StorageConfig,
    WorkloadConfig,
)
from model.effects import (
    CreateIfAbsent,
    Effect,
    Interrupted,
    ListPrefix,
    Now,
    Outcome,
    Put,
    Read,
    Record,
    Sleep,
    StoreResult,
)
from model.history import Event
from model.nbcc.sim_layout import (
    LAYOUT,
    PARTITION,
    PlanOp,
    Row,
    bucket_file_id,
    bucket_of,
    compaction_commit_body,
    completed_key,
    data_key,
    decode_rows,
    deltacommit_metadata,
    deltacommit_origin,
    encode_rows,
    inflight_key,
    load_table,
    merge_rows,
    needed_for_load,
    parse_plan,
    plan_body,
    requested_key,
    table_spec,
)
from model.nbcc.slicing import plan_compaction
from model.nbcc.timeline_reader import HudiTable
from model.objectstore import ObjectStore
from model.sim import SimWorld, WriterContext, WriterFactory
from model.storage_lock import StorageLockProvider
from model.timeline.layout import (
    BaseFile,
    LogFile,
    format_instant,
    ms_to_instant,
    parse_instant_path,
    partition_metadata_key,
    properties_key,
    timeline_dir,
)
from model.timeline.metadata import TableSpec, partition_metadata_text, properties_text
from model.timeline.timegen import GENERATORS, TimeGenConfig, TimeGenerator

Gen = Generator[Effect, Any, Any]

RETRY_MS = 50  # pause before retrying after a storage failure


# ---- the plan of a run -----------------------------------------------------------------------


@dataclass(frozen=True)
class BatchPlan:
    """One batch of a writer: its rows as (key number, ordering value), how long the deltacommit
    stays in flight after writing its logs, the pause before the next batch, and injected failures:
    attempt ``i`` fails after writing ``failures[i]`` log files (then the batch is retried)."""

    rows: tuple[tuple[int, int], ...]
    work_ms: int = 200
    think_ms: int = 100
    failures: tuple[int, ...] = ()
    logs_per_group: int = 1


@dataclass(frozen=True)
class WriterPlan:
    """A writer: when it starts and its batches, one deltacommit each (plus retries)."""

    batches: tuple[BatchPlan, ...]
    start_ms: int = 0


@dataclass(frozen=True)
class CompactionSlot:
    """The compaction service schedules a compaction at ``at_ms`` (true ms since the run started).
    ``fail_after``: the execution fails after writing that many base files (the plan stays pending
    and is finished at the next slot).  ``work_ms``: time between the base files and the commit."""

    at_ms: int
    fail_after: int | None = None
    work_ms: int = 100


@dataclass(frozen=True)
class CrashSpec:
    """Node ``node`` (1-based; ``len(writers) + 1`` is the compaction service) crashes at ``at_ms``
    and restarts ``restart_after_ms`` later."""

    node: int
    at_ms: int
    restart_after_ms: int = 1_000


@dataclass(frozen=True)
class TablePlan:
    """Everything a simulated NBCC run does, apart from network timing (drawn from the seed)."""

    writers: tuple[WriterPlan, ...]
    compactions: tuple[CompactionSlot, ...] = ()
    buckets: int = 2
    time_generator: str = "skew-adjusting"
    crashes: tuple[CrashSpec, ...] = ()
    latency_ms: tuple[int, int] = (5, 40)
    # Time a committer spends between drawing a completion time and creating the completed-instant
    # file (serialising and uploading commit metadata); inside the lock with the lock source.
    commit_gap_ms: int = 0
    duration_ms: int = 600_000
    base: str = "table"
    max_expected_clock_skew_ms: int = 200  # hoodie.time.generator.max_expected_clock_skew_ms
    faults: FaultPlan = field(default_factory=FaultPlan)  # the scenario's fault plan, beside ``crashes``

    def validate(self) -> None:
        """Raise ConfigError naming the field and value of the first bad setting."""
        if not 1 <= len(self.writers) <= 16:
            raise ConfigError("writers", len(self.writers), "must be between 1 and 16")
        if self.buckets < 1:
            raise ConfigError("buckets", self.buckets, "must be >= 1")
        if self.time_generator not in GENERATORS:
            raise ConfigError(
                "time_generator", self.time_generator, f"must be one of {', '.join(GENERATORS)}"
            )
        if self.max_expected_clock_skew_ms < 0:
            raise ConfigError("max_expected_clock_skew_ms", self.max_expected_clock_skew_ms, "must be >= 0")
        if self.commit_gap_ms < 0:
            raise ConfigError("commit_gap_ms", self.commit_gap_ms, "must be >= 0")
        lo, hi = self.latency_ms
        if not 0 <= lo <= hi:
            raise ConfigError("latency_ms", self.latency_ms, "must be (lo, hi) with 0 <= lo <= hi")
        for i, w in enumerate(self.writers):
            if w.start_ms < 0:
                raise ConfigError(f"writers[{i}].start_ms", w.start_ms, "must be >= 0")
            for j, b in enumerate(w.batches):
                where = f"writers[{i}].batches[{j}]"
                if not b.rows:
                    raise ConfigError(f"{where}.rows", b.rows, "must hold at least one row")
                if min(b.work_ms, b.think_ms) < 0:
                    raise ConfigError(f"{where}.work_ms", (b.work_ms, b.think_ms), "times must be >= 0")
                if b.logs_per_group < 1:
                    raise ConfigError(f"{where}.logs_per_group", b.logs_per_group, "must be >= 1")
                if any(f < 0 for f in b.failures):
                    raise ConfigError(f"{where}.failures", b.failures, "log counts must be >= 0")
        for i, c in enumerate(self.compactions):
            if c.at_ms < 0:
                raise ConfigError(f"compactions[{i}].at_ms", c.at_ms, "must be >= 0")
            if c.fail_after is not None and c.fail_after < 0:
                raise ConfigError(f"compactions[{i}].fail_after", c.fail_after, "must be >= 0")
        for i, k in enumerate(self.crashes):
            if not 1 <= k.node <= len(self.writers) + 1:
                raise ConfigError(f"crashes[{i}].node", k.node, f"must be in 1..{len(self.writers) + 1}")
            if k.at_ms < 0 or k.restart_after_ms < 0:
                raise ConfigError(f"crashes[{i}].at_ms", (k.at_ms, k.restart_after_ms), "must be >= 0")
        self.scenario(0).faults.validate([f"w{i}" for i in range(1, len(self.writers) + 2)])

    @property
    def time_config(self) -> TimeGenConfig:
        """The time generator every node uses."""
        return TimeGenConfig(self.time_generator, self.max_expected_clock_skew_ms)

    @property
    def spec(self) -> TableSpec:
        """What the table's ``hoodie.properties`` says."""
        return table_spec(self.buckets)

    @property
    def compactor_node(self) -> str:
        """The node that runs the compaction service."""
        return f"w{len(self.writers) + 1}"

    def lock_config(self) -> LockConfig:
        """The table lock with short timings (validity 10 s, renewal every 1 s, polling every 25 ms).

        Without Hudi's lock audit trail: its extra writes would shift every NBCC schedule, and NBCC's
        checkers read the table, not the lock's audit files.
        """
        return LockConfig(
            validity_secs=10, renew_interval_secs=1, wait_time_ms=300_000, poll_ms=25, base_path=self.base,
            audit=False,
        )

    def scenario(self, seed: int) -> Scenario:
        """The simulated world's scenario: short lock timings, the plan's latency, crashes and faults."""
        lo, hi = self.latency_ms
        crashes = tuple(Crash(f"w{k.node}", k.at_ms, k.restart_after_ms) for k in self.crashes)
        return Scenario(
            name="nbcc",
            seed=seed,
            duration_ms=self.duration_ms,
            lock=self.lock_config(),
            # the table's files go through Hudi's storage layer, whose client retries (not the lock
            # client's settings, which Hudi builds with SDK retries off)
            storage=StorageConfig(latency_ms=Dist("uniform", lo, hi), timeout_ms=5_000, sdk_retries=2),
            workload=WorkloadConfig(writers=len(self.writers) + 1),
            faults=FaultPlan(
                pauses=self.faults.pauses,
                errors=self.faults.errors,
                crashes=crashes + self.faults.crashes,
                writer_deaths=self.faults.writer_deaths,
                cutoffs=self.faults.cutoffs,
                heartbeat_start_failures=self.faults.heartbeat_start_failures,
            ),
        )


# ---- storage steps that survive faults ------------------------------------------------------


def create_resolved(key: str, body: bytes) -> Gen:
    """Create ``key`` if absent; True when the object now holds ``body`` because of this call.

    A 412 after an unknown outcome (``ambiguous``), or an unknown outcome itself, may mean our own
    write was applied: the object is read back (until the store answers) and compared.
    """
    res: StoreResult = yield CreateIfAbsent(key, body)
    if res.ok:
        return True
    if res.outcome is Outcome.PRECONDITION_FAILED and not res.ambiguous:
        return False
    while True:
        got: StoreResult = yield Read(key)
        if got.ok:
            return got.body == body
        if got.outcome is Outcome.NOT_FOUND:
            return False
        yield Sleep(RETRY_MS)


def ensure_exists(key: str, body: bytes) -> Gen:
    """Create ``key`` unless it exists, retrying failed requests (table creation by any node)."""
    while True:
        res: StoreResult = yield CreateIfAbsent(key, body)
        if res.ok or res.outcome is Outcome.PRECONDITION_FAILED:
            return
        yield Sleep(RETRY_MS)


def list_until_answered(prefix: str) -> Gen:
    """The keys under ``prefix``, listing again until the store answers."""
    while True:
        listing: StoreResult = yield ListPrefix(prefix)
        if listing.ok:
            return [k for k in (listing.body or b"").decode().split("\n") if k]
        yield Sleep(RETRY_MS)


def read_until_answered(key: str) -> Gen:
    """The body of ``key`` (None when absent), reading again until the store answers."""
    while True:
        got: StoreResult = yield Read(key)
        if got.ok:
            return got.body or b""
        if got.outcome is Outcome.NOT_FOUND:
            return None
        yield Sleep(RETRY_MS)


def _ensure_table(plan: TablePlan) -> Gen:
    """Create hoodie.properties and the partition's metadata if absent (every node may be first)."""
    yield from ensure_exists(properties_key(plan.base), properties_text(plan.spec).encode())
    now: int = yield Now()
    meta = partition_metadata_text(ms_to_instant(now)).encode()
    yield from ensure_exists(partition_metadata_key(plan.base, PARTITION), meta)


def _load(base: str) -> Gen:
    """List the table and fetch what the reader needs; the HudiTable, or None if a request failed."""
    listing: StoreResult = yield ListPrefix(base + "/")
    if not listing.ok:
        return None
    keys = [k for k in (listing.body or b"").decode().split("\n") if k]
    objects: dict[str, bytes] = {}
    for k in keys:
        if needed_for_load(k, base):
            r: StoreResult = yield Read(k)
            if not r.ok:
                return None
            objects[k] = r.body or b""
        else:
            objects[k] = b""
    return load_table(objects, base)


class _Times:
    """The node's time generator, and the bracket that makes a time and its file atomic.

    ``begin()`` .. ``end()`` holds the table lock with the skew-adjusting generator (which then
    generates with the lock already held); with the other generators it does nothing, which is
    the point of those variants.
    """

    def __init__(self, plan: TablePlan, provider: StorageLockProvider) -> None:
        self.atomic = plan.time_config.needs_lock
        self.provider = provider
        self.gen = TimeGenerator(plan.time_config, plan.base, provider)

    def begin(self) -> Gen:
        """Take the table lock (skew-adjusting), waiting as long as it takes."""
        if not self.atomic:
            return
        while not (yield from self.provider.try_lock()):
            yield Record("lock-wait", "info", {"owner": self.provider.owner})

    def end(self) -> Gen:
        """Release the table lock (skew-adjusting)."""
        if self.atomic:
            yield from self.provider.unlock()

    def next(self, kind: str) -> Gen:
        """A new time as an instant number (inside ``begin``/``end``)."""
        ms = yield from self.gen.generate(kind, lock_held=self.atomic)
        assert ms is not None  # only a generation that takes the lock itself can time out
        return ms_to_instant(ms)


# ---- writers ---------------------------------------------------------------------------------


class NbccWriter:
    """One writer: one deltacommit per batch, each appending logs to the batch's file groups."""

    def __init__(
        self, plan: TablePlan, index: int, ctx: WriterContext, provider: StorageLockProvider
    ) -> None:
        self.plan = plan
        self.index = index  # 1-based
        self.me = plan.writers[index - 1]
        self.ctx = ctx
        self.base = plan.base
        self.times = _Times(plan, provider)
        self.provider = provider

    def run(self) -> Gen:
        """Write every batch that has not committed yet, retrying failed deltacommits."""
        if self.ctx.incarnation == 1:
            yield Sleep(self.me.start_ms)
        yield from _ensure_table(self.plan)
        done = yield from self._committed_batches()
        for b, batch in enumerate(self.me.batches):
            if b in done:
                continue
            attempt = 0
            while (outcome := (yield from self._attempt(b, batch, attempt))) != "committed":
                attempt += 1
                if outcome == "storage":
                    yield Sleep(RETRY_MS)
            yield Sleep(batch.think_ms)
        yield Record("writer-done", "info", {"writer": self.ctx.node})

    def _committed_batches(self) -> Gen:
        """Batches of this writer whose deltacommit completed (read back after a restart)."""
        if self.ctx.incarnation == 1:
            return set()
        done: set[int] = set()
        for key in (yield from list_until_answered(timeline_dir(self.base, LAYOUT))):
            inst = parse_instant_path(key, self.base, LAYOUT)
            if inst is None or not inst.is_completed or inst.action != "deltacommit":
                continue
            body = yield from read_until_answered(key)
            origin = deltacommit_origin(body or b"", key)
            if origin is not None and origin[0] == self.ctx.node:
                done.add(origin[1])
        yield Record("resume", "info", {"writer": self.ctx.node, "committed_batches": sorted(done)})
        return done

    def _logs(self, instant: int, b: int, batch: BatchPlan, attempt: int) -> list[tuple[LogFile, list[Row]]]:
        rows = [
            Row(f"k{k}", ts, instant, f"{self.ctx.node}/{b}/{seq}") for seq, (k, ts) in enumerate(batch.rows)
        ]
        by_bucket: dict[int, list[Row]] = {}
        for r in rows:
            by_bucket.setdefault(bucket_of(r.key, self.plan.buckets), []).append(r)
        out: list[tuple[LogFile, list[Row]]] = []
        token = f"{self.index}-{b}-{attempt}"
        for bucket in sorted(by_bucket):
            group_rows = by_bucket[bucket]
            n = min(batch.logs_per_group, len(group_rows))
            for v in range(n):
                chunk = group_rows[v::n]
                out.append((LogFile(bucket_file_id(bucket), instant, v + 1, token), chunk))
        return out

    def _attempt(self, b: int, batch: BatchPlan, attempt: int) -> Gen:
        """One deltacommit of batch ``b``: ``committed``, ``injected`` (an injected failure) or
        ``storage`` (a request failed, or the heartbeat lost the lock)."""
        try:
            return (yield from self._deltacommit(b, batch, attempt))
        except Interrupted:  # the heartbeat lost the lock: give this attempt up
            yield Record("deltacommit", "fail", {"batch": b, "attempt": attempt, "reason": "lock lost"})
            yield from self.provider.unlock()
            return "storage"

    def _fail(self, t: int, reason: str, **more: Any) -> Gen:
        yield Record("deltacommit", "fail", {"instant": format_instant(t), "reason": reason, **more})
        return "injected" if reason == "injected" else "storage"

    def _deltacommit(self, b: int, batch: BatchPlan, attempt: int) -> Gen:
        fail_at = (
            batch.failures[attempt] if attempt < len(batch.failures) and self.ctx.incarnation == 1 else None
        )
        yield from self.times.begin()
        t = yield from self.times.next("instant")
        created: StoreResult = yield CreateIfAbsent(requested_key(self.base, t, "deltacommit"), b"")
        yield from self.times.end()
        if not created.ok:  # a time another node also drew, or a failed request: never use it
            return (yield from self._fail(t, f"requested {created.outcome.name}"))
        yield Record(
            "deltacommit",
            "invoke",
            {"instant": format_instant(t), "writer": self.ctx.node, "batch": b, "attempt": attempt},
        )
        res: StoreResult = yield Put(inflight_key(self.base, t, "deltacommit"), b"")
        if not res.ok:
            return (yield from self._fail(t, f"inflight {res.outcome.name}"))
        written: list[LogFile] = []
        for lf, rows in self._logs(t, b, batch, attempt):
            if fail_at is not None and len(written) >= fail_at:
                break
            yield Record(
                "write-log",
                "invoke",
                {"instant": format_instant(t), "file": lf.name, "rows": [r.to_json() for r in rows]},
            )
            res = yield Put(data_key(self.base, lf), encode_rows(rows))
            if not res.ok:
                return (yield from self._fail(t, f"log write {res.outcome.name}"))
            written.append(lf)
        if fail_at is not None:
            return (yield from self._fail(t, "injected", logs_written=len(written)))
        yield Sleep(batch.work_ms)
        yield from self.times.begin()
        tc = yield from self.times.next("completion")
        yield Sleep(self.plan.commit_gap_ms)
        meta = deltacommit_metadata(self.plan.spec, self.ctx.node, b, attempt, written)
        done = yield from create_resolved(completed_key(self.base, t, tc, "deltacommit"), meta)
        yield from self.times.end()
        if not done:
            return (yield from self._fail(t, "completed file not created", completion=format_instant(tc)))
        yield Record(
            "deltacommit",
            "ok",
            {
                "instant": format_instant(t),
                "completion": format_instant(tc),
                "logs": [lf.name for lf in written],
            },
        )
        return "committed"


# ---- the compaction service ------------------------------------------------------------------


class CompactionService:
    """Schedules compactions at the plan's slots while writers are in flight, and executes them."""

    def __init__(self, plan: TablePlan, ctx: WriterContext, provider: StorageLockProvider) -> None:
        self.plan = plan
        self.ctx = ctx
        self.base = plan.base
        self.times = _Times(plan, provider)
        self.provider = provider

    def run(self) -> Gen:
        """Visit every slot (after a restart: finish what is pending, then the slots still ahead)."""
        yield from _ensure_table(self.plan)
        now: int = yield Now()
        restarted_at = now - EPOCH_MS if self.ctx.incarnation > 1 else -1
        if restarted_at >= 0:
            yield from self._finish_pending()
        for slot in self.plan.compactions:
            if slot.at_ms <= restarted_at:
                continue
            now = yield Now()
            if slot.at_ms > now - EPOCH_MS:
                yield Sleep(slot.at_ms - (now - EPOCH_MS))
            try:
                yield from self._finish_pending()
                yield from self._schedule_and_run(slot)
            except Interrupted:
                yield Record("compaction", "fail", {"reason": "lock lost"})
                yield from self.provider.unlock()
        yield Record("compactor-done", "info", {})

    def _finish_pending(self) -> Gen:
        table: HudiTable | None = yield from _load(self.base)
        if table is None:
            yield Record("compaction-resume", "fail", {"reason": "timeline not read"})
            return
        for inst in table.timeline.pending():
            if inst.requested_action != "compaction":
                continue
            key = requested_key(self.base, inst.requested, "compaction")
            body = yield from read_until_answered(key)
            yield Record("compaction-resume", "info", {"instant": format_instant(inst.requested)})
            yield from self._execute(inst.requested, parse_plan(body or b"", key), None, 0)

    def _schedule_and_run(self, slot: CompactionSlot) -> Gen:
        yield from self.times.begin()
        t_c = yield from self.times.next("instant")
        table: HudiTable | None = yield from _load(self.base)
        if table is None:
            yield from self.times.end()
            yield Record(
                "compaction-plan", "fail", {"instant": format_instant(t_c), "reason": "timeline not read"}
            )
            return
        ct = table.timeline.completion_time
        ops: list[PlanOp] = []
        for g in table.groups:
            planned = plan_compaction(g, ct, t_c)
            if planned is None or not planned.log_files:
                continue
            logs = sorted(planned.log_files, key=lambda lf: (ct(lf.instant) or 0, lf.sort_key))
            base_name = planned.base_file.name if planned.base_file else None
            ops.append(PlanOp(g.file_id, planned.base_instant, base_name, tuple(lf.name for lf in logs)))
        if not ops:
            yield from self.times.end()
            yield Record(
                "compaction-plan", "fail", {"instant": format_instant(t_c), "reason": "nothing to compact"}
            )
            return
        created = yield from create_resolved(requested_key(self.base, t_c, "compaction"), plan_body(ops))
        yield from self.times.end()
        if not created:
            yield Record(
                "compaction-plan", "fail", {"instant": format_instant(t_c), "reason": "plan not created"}
            )
            return
        yield Record(
            "compaction-plan",
            "ok",
            {"instant": format_instant(t_c), "operations": {op.file_id: list(op.logs) for op in ops}},
        )
        yield from self._execute(t_c, ops, slot.fail_after, slot.work_ms)

    def _execute(self, t_c: int, ops: list[PlanOp], fail_after: int | None, work_ms: int) -> Gen:
        """Write the plan's base files and complete it; on a failed request the plan stays pending."""
        instant = format_instant(t_c)
        res: StoreResult = yield Put(inflight_key(self.base, t_c, "compaction"), b"")
        if not res.ok:
            yield Record("compaction", "fail", {"instant": instant, "reason": f"inflight {res.outcome.name}"})
            return
        written: list[tuple[PlanOp, str]] = []
        for i, op in enumerate(ops):
            if fail_after is not None and i >= fail_after:
                break
            names = ([op.base_file] if op.base_file is not None else []) + list(op.logs)
            rows: dict[str, Row] = {}
            for name in names:
                r: StoreResult = yield Read(f"{self.base}/{PARTITION}/{name}")
                if not r.ok:
                    yield Record(
                        "compaction", "fail", {"instant": instant, "reason": f"read {r.outcome.name}"}
                    )
                    return
                rows = merge_rows(decode_rows(r.body or b""), rows)
            bf = BaseFile(op.file_id, f"{i}-1-0", t_c)
            yield Record("write-base", "invoke", {"instant": instant, "file": bf.name, "logs": list(op.logs)})
            res = yield Put(data_key(self.base, bf), encode_rows(sorted(rows.values())))
            if not res.ok:
                yield Record(
                    "compaction", "fail", {"instant": instant, "reason": f"base write {res.outcome.name}"}
                )
                return
            written.append((op, bf.name))
        if fail_after is not None:
            yield Record(
                "compaction",
                "fail",
                {"instant": instant, "reason": "injected", "bases_written": len(written)},
            )
            return
        yield Sleep(work_ms)
        yield from self.times.begin()
        tc = yield from self.times.next("completion")
        yield Sleep(self.plan.commit_gap_ms)
        done = yield from create_resolved(
            completed_key(self.base, t_c, tc, "commit"), compaction_commit_body(self.plan.spec, written)
        )
        yield from self.times.end()
        yield Record(
            "compaction", "ok" if done else "fail", {"instant": instant, "completion": format_instant(tc)}
        )


# ---- running it ------------------------------------------------------------------------------


def writer_factory(plan: TablePlan) -> WriterFactory:
    """The simulated world's factory: writers on w1..wN, the compaction service on w{N+1}."""

    def make(ctx: WriterContext) -> Gen:
        provider = StorageLockProvider(plan.lock_config(), ctx.new_id)
        if ctx.node == plan.compactor_node:
            return CompactionService(plan, ctx, provider).run()
        return NbccWriter(plan, int(ctx.node[1:]), ctx, provider).run()

    return make


@dataclass(frozen=True)
class SimRun:
    """A finished run: its plan and seed, the history, and the final store (key -> body)."""

    plan: TablePlan
    seed: int
    events: tuple[Event, ...]
    objects: Mapping[str, bytes] = field(hash=False)

    def table(self) -> HudiTable:
        """The final table as the real-table reader sees it."""
        return load_table(self.objects, self.plan.base)


def run_table(plan: TablePlan, seed: int = 1, sink: Callable[[Event], None] | None = None) -> SimRun:
    """Run ``plan`` in the simulated world with ``seed`` (network timing) and return the run."""
    plan.validate()
    world = SimWorld(plan.scenario(seed), seed, sink, writer_factory(plan))
    events = world.run()
    store = world.store
    assert isinstance(store, ObjectStore)
    return SimRun(plan, seed, tuple(events), {k: o.body for k, o in store.objects.items()})


def describe_plan(plan: TablePlan) -> list[str]:
    """A plan as short readable lines (used to print shrunk counterexamples)."""
    lines = [f"{len(plan.writers)} writer(s), {plan.buckets} bucket(s), time generator {plan.time_generator}"]
    for i, w in enumerate(plan.writers, start=1):
        lines.append(f"writer w{i} starts at {w.start_ms} ms")
        for j, b in enumerate(w.batches):
            fails = f", attempts fail after {list(b.failures)} log(s)" if b.failures else ""
            rows = ", ".join(f"k{k}@ts{ts}" for k, ts in b.rows)
            lines.append(f"  batch {j}: rows [{rows}], in flight {b.work_ms} ms, then {b.think_ms} ms{fails}")
    for c in plan.compactions:
        fail = f", fails after {c.fail_after} base file(s)" if c.fail_after is not None else ""
        lines.append(f"compaction scheduled at {c.at_ms} ms{fail}")
    for k in plan.crashes:
        lines.append(f"node w{k.node} crashes at {k.at_ms} ms, restarts {k.restart_after_ms} ms later")
    return lines


def random_plan(
    rng: random.Random,
    writers: int = 3,
    batches: int = 4,
    buckets: int = 3,
    keys: int = 8,
    compactions: int = 3,
    fail_prob: float = 0.25,
    time_generator: str = "skew-adjusting",
    faults: FaultPlan | None = None,
) -> TablePlan:
    """A random plan for the CLI: overlapping deltacommits, compactions mid-flight, failures."""
    ws = []
    for _ in range(writers):
        bs = []
        for _ in range(batches):
            rows = tuple((rng.randrange(keys), rng.randrange(1000)) for _ in range(rng.randint(1, 4)))
            failures = tuple(rng.randrange(3) for _ in range(2) if rng.random() < fail_prob)
            bs.append(BatchPlan(rows, rng.randint(0, 1500), rng.randint(0, 500), failures, rng.randint(1, 2)))
        ws.append(WriterPlan(tuple(bs), rng.randint(0, 1000)))
    horizon = batches * 1500
    slots = tuple(
        CompactionSlot(at, rng.choice([None, None, 0, 1]), rng.randint(0, 300))
        for at in sorted(rng.randint(200, horizon) for _ in range(compactions))
    )
    return TablePlan(
        tuple(ws), slots, buckets, time_generator, commit_gap_ms=100, faults=faults or FaultPlan()
    )
