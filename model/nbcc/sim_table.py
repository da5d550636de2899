"""A MERGE_ON_READ table under Non-Blocking Concurrency Control (RFC-66), run in the simulated world.

Several writers with a deterministic bucket index append log files to the same file groups
(``.{fileId}_{deltacommitInstant}.log.{version}_{writeToken}``, the instant being the writer's own
deltacommit), and a compaction service, scheduled while writers are in flight, merges them into
base files ``{fileId}_{writeToken}_{instant}.parquet``.  All of them are sans-I/O generators of
effects on the object store (:mod:`model.runtime.effects`), driven by :mod:`model.runtime.sim`
through a writer
factory: node ``w1`` .. ``wN`` are the writers, node ``w{N+1}`` is the compaction service.  The
store ends up holding a Hudi table of version 8 (:mod:`model.nbcc.sim_layout`).

Each instant goes requested -> inflight -> completed as files in ``.hoodie/timeline/``.  Times come
from the harness's one time generator (:mod:`model.timeline.timegen`, ``TablePlan.time_generator``):

* ``skew-adjusting`` (RFC-66 as written): the table lock (:class:`model.lock.provider.StorageLockProvider`)
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
as a new deltacommit.  Each deltacommit keeps a heartbeat (``.hoodie/.heartbeat/<instant>``); a failed
attempt's heartbeat stops and ages, and after every commit a writer cleans: it rolls back the pending
deltacommits whose heartbeat expired, deleting their logs and instant files (Hudi's LAZY failed-writes
policy, :mod:`model.nbcc.sim_cleaner`).  Until then a failed attempt's logs stay on storage.  A node
that crashes and restarts resumes from the timeline (a writer skips the batches whose deltacommit
completed; the compaction service finishes a pending compaction before scheduling a new one).

Under Hudi's variants (``NbccVariant.compaction_heartbeat``) a compaction's execution is heartbeat-guarded
as ``BaseHoodieTableServiceClient#compact`` is under multi-writer (1.2.0, 324-362): in one lock hold it
checks the instant's heartbeat (``validateHeartBeat``, 1477-1485) and starts its own; a live one refuses the
execution (:data:`HEARTBEAT_REFUSED`; the plan stays pending and, as ``run_compaction`` executes the pending
plans oldest first and stops at the first that throws, a plan the same slot schedules is left requested
too).  The heartbeat stops and its file is deleted when the execution completes (``completeCompaction``,
428-431) or throws (``compact``'s catch, 358-360); an executor killed inside it (a crash, or
``CompactionSlot.fail_after``) leaves the file to age, so its plan is executed again only after
``interval x tolerable misses``.

The compaction planner builds file groups as the run's variant does (``TablePlan.variant``,
:mod:`model.nbcc.variants`), from the metadata table's listing or storage's
(``TablePlan.metadata_table``): Hudi's ``BaseHoodieCompactionPlanGenerator#generateCompactionPlan``
takes the latest committed slice of every group not in a pending compaction and its logs completed
strictly before the plan's instant.  With ``TablePlan.read_every_ms`` a snapshot reader runs on node
``w{N+2}`` (:mod:`model.nbcc.sim_reader`).

Storage faults (``TablePlan.faults``, the scenario's fault plan: error rules, lost replies,
pauses, cut-offs, crashes) are survived: every request's answer is checked; an attempt whose
request failed is given up and retried as a new deltacommit (a compaction stays pending and is
finished later); a create whose outcome is unknown (a lost reply turns the SDK's retry into a
412) is resolved by reading the object back (:func:`~model.nbcc.sim_io.create_resolved`).

Transactions: given a ``txn_log`` (a list), each deltacommit attempt and each compaction execution appends
one record when it starts and fills it in as it goes.  A deltacommit (from its ``deltacommit`` invoke)
reads nothing and writes rows: every row of every log file it sent (key, ordering value, record id, log
version, position in the log); a compaction reads the rows it merged (per key the row its base file
holds, with the deltacommit that wrote it) and writes no new value.  The outcome is ``ok``, ``fail`` or
``info`` (a completed file whose creation was cut off); a record cut off by a crash has none.  No effect is
added: :func:`run_table` appends the records to the history after the run (``txn`` events), every other
event stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from model.config import Scenario
from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.nbcc.sim_cleaner import (
    Cleaner,
    Heartbeat,
    expired_own,
    heartbeat_expired,
    start_heartbeat,
    stop_heartbeat,
)
from model.nbcc.sim_clustering import (
    UNSUPPORTED_LAYOUT,
    UPDATE_REJECTED,
    clustering_plan_body,
    pending_clustering_groups,
)
from model.nbcc.sim_clustering import describe_plan as describe_clustering
from model.nbcc.sim_io import (
    RETRY_MS,
    Gen,
    TableLoader,
    Times,
    create_resolved,
    ensure_exists,
    list_until_answered,
    read_until_answered,
)
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
    parse_plan,
    plan_body,
    requested_key,
)
from model.nbcc.sim_plan import (
    BatchPlan,
    ClusteringSlot,
    CompactionSlot,
    CrashSpec,
    TablePlan,
    TableSettings,
    WriterPlan,
    describe_plan,
    random_plan,
)
from model.nbcc.sim_reader import SnapshotReader
from model.nbcc.slicing import CompletionLookup, FileGroupFiles, FileSlice, Rule, slicer
from model.nbcc.timeline_reader import HudiTable
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import (
    CreateIfAbsent,
    Interrupted,
    Now,
    Put,
    Read,
    Record,
    Sleep,
    StoreResult,
)
from model.runtime.history import Event
from model.runtime.objectstore import ObjectStore
from model.runtime.sim import SimWorld, WriterContext, WriterFactory
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
from model.timeline.metadata import partition_metadata_text, properties_text
from model.workloads.lock import LockWorkload

__all__ = [
    "HEARTBEAT_REFUSED", "BatchPlan", "CompactionService", "CompactionSlot", "CrashSpec", "NbccWriter",
    "SimRun", "TablePlan", "TableSettings", "WriterPlan", "create_resolved", "describe_plan", "ensure_exists",
    "list_until_answered", "nbcc_workload", "plan_group", "random_plan", "read_until_answered", "run_table",
    "writer_factory",
]


def _ensure_table(plan: TablePlan) -> Gen:
    """Create hoodie.properties and the partition's metadata if absent (every node may be first)."""
    yield from ensure_exists(properties_key(plan.base), properties_text(plan.spec).encode())
    now: int = yield Now()
    meta = partition_metadata_text(ms_to_instant(now)).encode()
    yield from ensure_exists(partition_metadata_key(plan.base, PARTITION), meta)


def plan_group(
    group: FileGroupFiles, completion_time: CompletionLookup, plan_instant: int, rule: Rule
) -> FileSlice | None:
    """What a compaction requested at ``plan_instant`` takes of ``group`` (None: nothing), as Hudi's
    ``BaseHoodieCompactionPlanGenerator#generateCompactionPlan`` does with ``rule``'s file groups: the
    latest committed slice (``getLatestFileSlicesStateless``), none for a group in a pending compaction,
    and of its committed logs those completed strictly before the plan (``isCompletedBefore``)."""
    if group.pending_compactions:
        return None
    slices = slicer(rule)(group, completion_time)
    if not slices:
        return None
    latest = slices[-1]
    logs = tuple(lf for lf in latest.log_files
                 if (tc := completion_time(lf.instant)) is not None and tc < plan_instant)
    if not logs:
        return None
    return replace(latest, log_files=logs, pending_log_files=())


# ---- writers ---------------------------------------------------------------------------------


class NbccWriter:
    """One writer: one deltacommit per batch, each appending logs to the batch's file groups."""

    def __init__(
        self, plan: TablePlan, index: int, ctx: WriterContext,
        new_provider: Callable[[], StorageLockProvider], txn_log: list[dict[str, Any]] | None = None,
    ) -> None:
        self.plan = plan
        self.index = index  # 1-based
        self.me = plan.writers[index - 1]
        self.ctx = ctx
        self.base = plan.base
        self.times = Times(plan.time_config, plan.base, new_provider)
        self.cleaner = Cleaner(
            plan.base, self.times, TableLoader(plan.base, plan.metadata_table), plan.heartbeat_expiry_ms
        )
        self.heartbeat: Heartbeat | None = None
        self.txn_log = txn_log  # the transaction records (module docstring); None: none kept
        self.txn: dict[str, Any] | None = None  # the record of the attempt under way

    def _txn_end(self, outcome: str, reason: str | None = None) -> None:
        """The attempt's outcome (a failure while its completed file was being created is ``info``)."""
        txn, self.txn = self.txn, None
        if txn is not None:
            txn["outcome"] = "info" if outcome == "fail" and txn.pop("completing", False) else outcome
            txn["reason"] = reason

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "base": "plan.base (the plan is in the state)",
        "me": "plan.writers[index - 1] (the plan and index are in the state)",
        "txn": "the record of the attempt under way, for reports: no decision reads it (None in the "
               "explorer, which keeps no txn_log)",
        "txn_log": "the transaction records, appended for reports and read by no decision (None in the "
                   "explorer)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its plan (a constant of the run), which writer it is, its incarnation, its time generator, cleaner
        and the heartbeat of the deltacommit in flight."""
        return (k.value(self.plan), self.index, k.value(self.ctx), k.value(self.times), k.value(self.cleaner),
                k.value(self.heartbeat))

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
                if outcome == "rejected":  # refused for good: its group is in a clustering never executed
                    break
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
        _over = yield from list_until_answered(timeline_dir(self.base, LAYOUT))
        for _at, key in enumerate(_over):  # the loop's position
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
            self._txn_end("fail", "lock lost")
            yield from self.times.end()
            yield from self._close_heartbeat()
            return "storage"

    def _fail(self, t: int, reason: str, **more: Any) -> Gen:
        yield Record("deltacommit", "fail", {"instant": format_instant(t), "reason": reason, **more})
        self._txn_end("fail", reason)
        yield from self._close_heartbeat()
        return {"injected": "injected", UPDATE_REJECTED: "rejected"}.get(reason, "storage")

    def _close_heartbeat(self) -> Gen:
        """A failed attempt's write client is closed: its heartbeat timer stops, the file stays."""
        if self.heartbeat is not None:
            yield from stop_heartbeat(self.base, self.heartbeat, delete=False)
            self.heartbeat = None

    def _deltacommit(self, b: int, batch: BatchPlan, attempt: int) -> Gen:
        fail_at = (
            batch.failures[attempt] if attempt < len(batch.failures) and self.ctx.incarnation == 1 else None
        )
        yield from self.times.begin()
        t = yield from self.times.next("instant")
        # startCommit: the heartbeat starts before the requested instant, in the same lock hold
        self.heartbeat = yield from start_heartbeat(self.base, t, self.plan.heartbeat_interval_ms)
        if self.heartbeat is None:
            yield from self.times.end()
            return (yield from self._fail(t, "heartbeat not started"))
        created: StoreResult = yield CreateIfAbsent(requested_key(self.base, t, "deltacommit"), b"")
        yield from self.times.end()
        if not created.ok:  # a time another node also drew, or a failed request: never use it
            return (yield from self._fail(t, f"requested {created.outcome.name}"))
        yield Record(
            "deltacommit",
            "invoke",
            {"instant": format_instant(t), "writer": self.ctx.node, "batch": b, "attempt": attempt},
        )
        if self.txn_log is not None:
            self.txn = {"process": self.ctx.node, "kind": "deltacommit", "instant": format_instant(t),
                        "batch": b, "attempt": attempt, "rows": [], "outcome": None, "reason": None}
            self.txn_log.append(self.txn)
        if self.plan.clusterings:  # clusteringHandleUpdate, before the inflight file (sim_clustering.py)
            clustering = yield from pending_clustering_groups(self.base)
            refused = sorted({lf.file_id for lf, _rows in self._logs(t, b, batch, attempt)} & clustering)
            if refused:
                return (yield from self._fail(t, UPDATE_REJECTED, file_groups=refused))
        res: StoreResult = yield Put(inflight_key(self.base, t, "deltacommit"), b"")
        if not res.ok:
            return (yield from self._fail(t, f"inflight {res.outcome.name}"))
        written: list[LogFile] = []
        _over = self._logs(t, b, batch, attempt)
        for _at, (lf, rows) in enumerate(_over):  # the loop's position
            if fail_at is not None and len(written) >= fail_at:
                break
            yield Record(
                "write-log",
                "invoke",
                {"instant": format_instant(t), "file": lf.name, "rows": [r.to_json() for r in rows]},
            )
            if self.txn is not None:  # [key, ordering value, record id, log version, position]
                self.txn["rows"].extend([r.key, r.ts, r.rid, lf.version, i] for i, r in enumerate(rows))
            res = yield Put(data_key(self.base, lf), encode_rows(rows))
            if not res.ok:
                return (yield from self._fail(t, f"log write {res.outcome.name}"))
            written.append(lf)
        if fail_at is not None:
            return (yield from self._fail(t, "injected", logs_written=len(written)))
        yield Sleep(batch.work_ms)
        assert self.heartbeat is not None
        if (yield from expired_own(self.heartbeat, self.plan.heartbeat_expiry_ms)):  # abortIfHeartbeatExpired
            return (yield from self._fail(t, "heartbeat expired"))
        yield from self.times.begin()
        tc = yield from self.times.next("completion")
        yield Sleep(self.plan.commit_gap_ms)
        meta = deltacommit_metadata(self.plan.spec, self.ctx.node, b, attempt, written)
        if self.txn is not None:
            self.txn["completing"] = True
        done = yield from create_resolved(completed_key(self.base, t, tc, "deltacommit"), meta)
        if done:  # postCommit: the heartbeat stops and its file goes, before the lock is released
            yield from stop_heartbeat(self.base, self.heartbeat, delete=True)
            self.heartbeat = None
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
        self._txn_end("ok")
        if self.plan.auto_clean:  # mayBeCleanAndArchive -> clean -> rollbackFailedWrites (LAZY)
            yield from self.cleaner.clean()
        return "committed"



# ---- the compaction service ------------------------------------------------------------------

# validateHeartBeat's HoodieLockException: "Cannot execute instant <t> due to heartbeat by concurrent
# writer/job"
HEARTBEAT_REFUSED = "heartbeat by concurrent writer/job"


class CompactionService:
    """Schedules compactions at the plan's slots while writers are in flight, and executes them."""

    def __init__(
        self, plan: TablePlan, ctx: WriterContext, new_provider: Callable[[], StorageLockProvider],
        txn_log: list[dict[str, Any]] | None = None,
    ) -> None:
        self.plan = plan
        self.ctx = ctx
        self.base = plan.base
        self.times = Times(plan.time_config, plan.base, new_provider)
        self.loader = TableLoader(plan.base, plan.metadata_table)
        self.rule = plan.nbcc_variant.slicing
        self.txn_log = txn_log  # the transaction records (module docstring); None: none kept
        self.txn: dict[str, Any] | None = None  # the record of the compaction under way
        self.heartbeat: Heartbeat | None = None  # the heartbeat of the compaction it executes

    def _txn_end(self, outcome: str, reason: str | None = None) -> None:
        txn, self.txn = self.txn, None
        if txn is not None:
            txn["outcome"], txn["reason"] = outcome, reason

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "base": "plan.base (the plan is in the state)",
        "rule": "plan.nbcc_variant.slicing (the plan is in the state)",
        "txn": "the record of the compaction under way, for reports: no decision reads it (None in the "
               "explorer, which keeps no txn_log)",
        "txn_log": "the transaction records, appended for reports and read by no decision (None in the "
                   "explorer)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its plan (a constant of the run), its incarnation, its time generator, table view and the heartbeat
        of the compaction it executes."""
        return (k.value(self.plan), k.value(self.ctx), k.value(self.times), k.value(self.loader),
                k.value(self.heartbeat))

    def run(self) -> Gen:
        """Visit every slot (after a restart: finish what is pending, then the slots still ahead)."""
        yield from _ensure_table(self.plan)
        now: int = yield Now()
        restarted_at = now - EPOCH_MS if self.ctx.incarnation > 1 else -1
        if restarted_at >= 0:
            yield from self._finish_pending()
        _over: tuple[CompactionSlot | ClusteringSlot, ...] = self.plan.compactions
        if self.plan.clusterings:
            _over = tuple(sorted((*self.plan.compactions, *self.plan.clusterings), key=lambda x: x.at_ms))
        for _at, slot in enumerate(_over):  # the loop's position
            if slot.at_ms <= restarted_at:
                continue
            now = yield Now()
            if slot.at_ms > now - EPOCH_MS:
                yield Sleep(slot.at_ms - (now - EPOCH_MS))
            try:
                if isinstance(slot, ClusteringSlot):
                    yield from self._cluster()
                    continue
                refused = yield from self._finish_pending()
                yield from self._schedule_and_run(slot, refused)
            except Interrupted:
                yield Record("compaction", "fail", {"reason": "lock lost"})
                self._txn_end("info", "lock lost")  # its completed file may or may not exist
                yield from self.times.end()
                yield from self._stop_heartbeat(delete=True)  # compact's catch stops it (1.2.0, 358-360)
        yield Record("compactor-done", "info", {})

    def _finish_pending(self) -> Gen:
        """Execute the pending plans oldest first, as ``run_compaction`` does; the instant of the first whose
        execution a live heartbeat refused (the procedure throws there, leaving the rest), else None."""
        table: HudiTable | None = yield from self.loader.load()
        if table is None:
            yield Record("compaction-resume", "fail", {"reason": "timeline not read"})
            return None
        _over = table.timeline.pending()
        for _at, inst in enumerate(_over):  # the loop's position
            if inst.requested_action != "compaction":
                continue
            key = requested_key(self.base, inst.requested, "compaction")
            body = yield from read_until_answered(key)
            yield Record("compaction-resume", "info", {"instant": format_instant(inst.requested)})
            if (yield from self._execute(inst.requested, parse_plan(body or b"", key), None, 0)):
                return format_instant(inst.requested)
        return None

    def _schedule_and_run(self, slot: CompactionSlot, refused: str | None = None) -> Gen:
        """Plan a compaction and execute it; after ``refused`` (a pending plan's execution this slot refused)
        the plan is left requested, as ``run_compaction``'s throw at the older plan leaves it."""
        yield from self.times.begin()
        t_c = yield from self.times.next("instant")
        table: HudiTable | None = yield from self.loader.load()
        if table is None:
            yield from self.times.end()
            yield Record(
                "compaction-plan", "fail", {"instant": format_instant(t_c), "reason": "timeline not read"}
            )
            return
        ct = table.timeline.completion_time
        # BaseHoodieCompactionPlanGenerator leaves out the groups of a pending clustering (1.2.0, 109-114)
        clustering: frozenset[str] = frozenset()
        if self.plan.clusterings:
            clustering = yield from pending_clustering_groups(self.base)
        ops: list[PlanOp] = []
        for g in table.listed_groups(table.has_metadata_table):
            planned = None if g.file_id in clustering else plan_group(g, ct, t_c, self.rule)
            if planned is None:
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
        if refused is not None:
            yield Record("compaction", "fail",
                         {"instant": format_instant(t_c), "reason": HEARTBEAT_REFUSED, "refused_at": refused})
            return
        yield from self._execute(t_c, ops, slot.fail_after, slot.work_ms)

    def _cluster(self) -> Gen:
        """A clustering (:mod:`model.nbcc.sim_clustering`): under the lock, a plan of the latest committed
        slice of every group not in a pending compaction or clustering, ``<t>.clustering.requested``;
        then its execution, which Hudi's bucket layout refuses before writing anything."""
        yield from self.times.begin()
        t = yield from self.times.next("instant")
        table: HudiTable | None = yield from self.loader.load()
        if table is None:
            yield from self.times.end()
            return (yield from self._clustering_failed(t, "timeline not read"))
        clustering = yield from pending_clustering_groups(self.base)
        ct = table.timeline.completion_time
        eligible: list[FileSlice] = []
        for g in table.listed_groups(table.has_metadata_table):
            slices = slicer(self.rule)(g, ct)
            if g.pending_compactions or g.file_id in clustering or not slices or slices[-1].is_empty:
                continue
            eligible.append(slices[-1])
        if not eligible:
            yield from self.times.end()
            return (yield from self._clustering_failed(t, "nothing to cluster"))
        created = yield from create_resolved(requested_key(self.base, t, "clustering"),
                                             clustering_plan_body(eligible))
        yield from self.times.end()
        if not created:
            return (yield from self._clustering_failed(t, "plan not created"))
        yield Record("clustering-plan", "ok", describe_clustering(t, eligible))
        # SparkExecuteClusteringCommitActionExecutor's constructor: BaseCommitActionExecutor refuses CLUSTER
        # on HoodieSimpleBucketLayout before any file is written; the plan stays requested
        yield Record("clustering", "fail", {"instant": format_instant(t), "reason": UNSUPPORTED_LAYOUT})

    def _clustering_failed(self, t: int, reason: str) -> Gen:
        yield Record("clustering-plan", "fail", {"instant": format_instant(t), "reason": reason})

    def _claim(self, t_c: int) -> Gen:
        """``compact``'s multi-writer prologue in one lock hold (1.2.0, 328-341): ``validateHeartBeat``, then
        ``heartbeatClient.start``; why the execution may not go on, or None."""
        yield from self.times.begin()
        now: int = yield Now()
        if not (yield from heartbeat_expired(self.base, t_c, now, self.plan.heartbeat_expiry_ms)):
            yield from self.times.end()
            return HEARTBEAT_REFUSED
        self.heartbeat = yield from start_heartbeat(self.base, t_c, self.plan.heartbeat_interval_ms)
        yield from self.times.end()
        return None if self.heartbeat is not None else "heartbeat not started"

    def _stop_heartbeat(self, delete: bool) -> Gen:
        """``heartbeatClient.stop`` (``delete``), or the executor's death: the timer ends, the file stays."""
        if self.heartbeat is not None:
            yield from stop_heartbeat(self.base, self.heartbeat, delete)
            self.heartbeat = None

    def _execute(self, t_c: int, ops: list[PlanOp], fail_after: int | None, work_ms: int) -> Gen:
        """Write the plan's base files and complete it; on a failed request the plan stays pending.  True when
        a live heartbeat refused the execution (Hudi's variants, :meth:`_claim`)."""
        instant = format_instant(t_c)
        if self.plan.nbcc_variant.compaction_heartbeat:
            refusal = yield from self._claim(t_c)
            if refusal is not None:
                yield Record("compaction", "fail", {"instant": instant, "reason": refusal})
                return refusal == HEARTBEAT_REFUSED
        if self.txn_log is not None:
            self.txn = {"process": self.ctx.node, "kind": "compaction", "instant": instant, "reads": {},
                        "outcome": None, "reason": None}
            self.txn_log.append(self.txn)
        res: StoreResult = yield Put(inflight_key(self.base, t_c, "compaction"), b"")
        if not res.ok:
            yield Record("compaction", "fail", {"instant": instant, "reason": f"inflight {res.outcome.name}"})
            self._txn_end("fail", f"inflight {res.outcome.name}")
            yield from self._stop_heartbeat(delete=True)
            return False
        written: list[tuple[PlanOp, str]] = []
        for i, op in enumerate(ops):
            if fail_after is not None and i >= fail_after:
                break
            names = ([op.base_file] if op.base_file is not None else []) + list(op.logs)
            rows: dict[str, Row] = {}
            for _at, name in enumerate(names):  # _at: the loop's position
                r: StoreResult = yield Read(f"{self.base}/{PARTITION}/{name}")
                if not r.ok:
                    yield Record(
                        "compaction", "fail", {"instant": instant, "reason": f"read {r.outcome.name}"}
                    )
                    self._txn_end("fail", f"read {r.outcome.name}")
                    yield from self._stop_heartbeat(delete=True)
                    return False
                rows = merge_rows(decode_rows(r.body or b""), rows)
            if self.txn is not None:  # key -> [ordering value, record id, deltacommit instant]
                self.txn["reads"].update({k: [r.ts, r.rid, format_instant(r.commit)]
                                          for k, r in rows.items()})
            bf = BaseFile(op.file_id, f"{i}-1-0", t_c)
            yield Record("write-base", "invoke", {"instant": instant, "file": bf.name, "logs": list(op.logs)})
            res = yield Put(data_key(self.base, bf), encode_rows(sorted(rows.values())))
            if not res.ok:
                yield Record(
                    "compaction", "fail", {"instant": instant, "reason": f"base write {res.outcome.name}"}
                )
                self._txn_end("fail", f"base write {res.outcome.name}")
                yield from self._stop_heartbeat(delete=True)
                return False
            written.append((op, bf.name))
        if fail_after is not None:
            yield Record(
                "compaction",
                "fail",
                {"instant": instant, "reason": "injected", "bases_written": len(written)},
            )
            self._txn_end("fail", "injected")
            yield from self._stop_heartbeat(delete=False)  # its executor killed: the file stays and ages
            return False
        yield Sleep(work_ms)
        yield from self.times.begin()
        tc = yield from self.times.next("completion")
        yield Sleep(self.plan.commit_gap_ms)
        done = yield from create_resolved(
            completed_key(self.base, t_c, tc, "commit"), compaction_commit_body(self.plan.spec, written)
        )
        yield from self.times.end()
        yield from self._stop_heartbeat(delete=True)  # completeCompaction's finally (1.2.0, 428-431)
        yield Record(
            "compaction", "ok" if done else "fail", {"instant": instant, "completion": format_instant(tc)}
        )
        self._txn_end("ok" if done else "fail", None if done else "completed file not created")
        return False



# ---- running it ------------------------------------------------------------------------------


def writer_factory(plan: TablePlan, txn_log: list[dict[str, Any]] | None = None) -> WriterFactory:
    """The simulated world's factory: writers on w1..wN, the compaction service on w{N+1}, the
    snapshot reader (if the plan has one) on w{N+2}; ``txn_log`` collects the writers' and the
    compaction service's transaction records (none when None)."""

    def make(ctx: WriterContext) -> Gen:
        if ctx.node == plan.reader_node:
            return SnapshotReader(plan).run()
        def new_provider() -> StorageLockProvider:  # LockManager: a provider per transaction
            return StorageLockProvider(plan.lock_config(), ctx.new_id)

        if ctx.node == plan.compactor_node:
            return CompactionService(plan, ctx, new_provider, txn_log).run()
        return NbccWriter(plan, int(ctx.node[1:]), ctx, new_provider, txn_log).run()

    return make


def nbcc_workload(plan: TablePlan, scenario: Scenario,
                  txn_log: list[dict[str, Any]] | None = None) -> LockWorkload:
    """NBCC writers and the compaction service of ``plan`` on the nodes of ``scenario`` (its own scenario,
    or that scenario with its keys mapped under a prefix in the real world); ``txn_log``: see
    :func:`writer_factory`."""
    return LockWorkload(scenario, writer_factory(plan, txn_log))


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
    """Run ``plan`` in the simulated world with ``seed`` (network timing) and return the run; the
    transaction records follow the run's ``run-end`` event (``txn`` events, as
    :func:`model.timeline.run.record_txns` appends them)."""
    plan.validate()
    scenario = plan.scenario(seed)
    txn_log: list[dict[str, Any]] = []
    world = SimWorld(scenario, seed, sink, workload=nbcc_workload(plan, scenario, txn_log))
    events = world.run()
    for rec in txn_log:  # by the harness at the run's end, on the writer's node (every other event as it was)
        world.kernel.record(str(rec["process"]), "nemesis", rec.get("outcome") or "info", "txn",
                            {k: v for k, v in rec.items() if k != "completing"})
    store = world.store
    assert isinstance(store, ObjectStore)
    return SimRun(plan, seed, tuple(events), {k: o.body for k, o in store.objects.items()})


