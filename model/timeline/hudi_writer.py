"""Hudi 1.2.1's copy-on-write commit path (variant ``hudi``), as a sans-I/O writer.

One operation (an upsert or a delete of one key, with a value unique to the operation) goes as
``BaseHoodieWriteClient`` takes a write (``docs/fidelity.md``, OCC section, cites each step):

1. ``startCommit``: (EAGER) roll back every pending commit instant; take the table lock; draw the
   instant time (the skew-adjusting generator, the lock held); (LAZY) start the heartbeat; create
   ``<t>.commit.requested``; release the lock.
2. ``preWrite``: note the last completed instant and the pending instants (the conflict check's
   reference points).
3. tag the key (``model/timeline/fsview.py``: the latest committed base files of its partition); a
   new key goes to a small file group or a new file id; a delete of an absent key writes nothing.
4. ``<t>.commit.requested`` -> ``<t>.commit.inflight`` (the requested file must exist).
5. the write job works ``workload.work_ms``, then writes the new base file
   ``<fileId>_<token>_<t>.parquet`` (the merged records).
6. ``commitStats``: (LAZY) abort if this writer's own heartbeat expired; take the lock; (OCC) list the
   timeline and check the candidate instants for a ``(partition, fileId)`` intersection
   (``model/timeline/conflicts.py``), aborting with a ``conflict`` record; the inflight file must
   exist; draw the completion time (v8) and create the completed file, in the same hold; release.
7. post-commit: stop the heartbeat (its file deleted); (LAZY) clean: roll back the pending instants whose
   heartbeat expired.

A rollback schedules ``<r>.rollback.requested`` under the lock, deletes the rolled-back instant's base
files, then under the lock deletes its inflight and requested files and completes the rollback.  What
the model leaves out (the metadata table's own writes, markers, early conflict detection, cleaning of
old file versions, archival) is listed in ``docs/fidelity.md``.

Replacecommits (``timeline.clustering_writers`` / ``overwrite_writers``; read in Hudi 1.2.0's sources,
``docs/fidelity.md``): a clustering writer schedules a plan of a partition's file groups under the lock
(``<t>.clustering.requested``), rewrites them into one new file group and completes
``<t>_<c>.replacecommit`` with ``partitionToReplaceFileIds`` (:meth:`HudiWriter._cluster_op`); an
insert_overwrite commits the key's new value in a new file group as a replacecommit replacing every file
group of the partition (:meth:`HudiWriter._overwrite_op`).  An upsert of a file group in a pending
clustering plan is refused at write time (SparkRejectUpdateStrategy) or left to the conflict check
(SparkAllowUpdateStrategy); the check takes pending clusterings as candidates and a replacecommit's
replaced file ids as mutated; the writers' view hides replaced file groups.

History events: ``op`` invoke / ok / fail ``{reason}`` (as the specification's writer), ``conflict``,
``clustering-update`` (an update refused for a file group being clustered),
``rollback`` invoke / ok / fail, ``delete`` ok ``{key}`` (a file this writer deleted), ``time``.

Transactions: given a ``txn_log`` (a list), each operation of the ``commits`` workload appends one
record when it is invoked and fills it in as it goes (:meth:`HudiWriter._txn_begin`): the instant, the
snapshot (the last completed instant at ``preWrite``), every base file the index read (file group,
path and records: the latest committed base file of each file group of the key's partition), where the
key was found, the merge target (the file-group version it rewrites), what it wrote (file group, new
path, key and value; ``None`` for a delete) and its outcome (``ok``, ``fail``, ``info``: a write whose
completed file may exist, or an operation cut off by a crash is left ``None``).  A preloaded table adds
one ``preload`` record.  The records add no effect, so a run's history is the same with or without
them; ``model/timeline/run.py`` appends them to the history after the run
(``model/checkers/txn_from_runs.py`` reads them).
"""

from __future__ import annotations

import json
import random
from collections.abc import Generator, Hashable
from typing import Any

from model.config import LockConfig, WorkloadConfig
from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import (
    Cancel,
    CreateIfAbsent,
    Delete,
    Effect,
    Interrupted,
    ListPrefix,
    Now,
    Outcome,
    Put,
    Read,
    Record,
    Sleep,
    Spawn,
    StoreResult,
)
from model.runtime.sampling import draw
from model.timeline.config import TimelineConfig
from model.timeline.conflicts import (
    Operation,
    candidate_instants,
    first_conflict,
    last_completed,
    pending_instants,
)
from model.timeline.failed_writes import (
    HEARTBEAT_TASK,
    Heartbeat,
    heartbeat_key,
    heartbeat_time,
    is_expired,
    to_rollback,
)
from model.timeline.fsview import (
    BaseSlice,
    TimelineReader,
    latest_slices,
    pending_clustering_groups,
    read_entries,
    replaced_groups,
    small_file,
    view,
)
from model.timeline.layout import (
    BaseFile,
    Instant,
    State,
    format_instant,
    instant_path,
    is_base_file_name,
    ms_to_instant,
    parse_base_file_name,
    partition_metadata_key,
    properties_key,
)
from model.timeline.metadata import (
    clustering_plan,
    encode_clustering_plan,
    encode_rollback_metadata,
    partition_metadata_text,
    plan_file_groups,
    properties_text,
)
from model.timeline.modeldata import (
    commit_body,
    mutated_file_groups,
    replaced_file_groups,
    table_spec,
    write_stat,
)
from model.timeline.timegen import TimeGenerator, release
from model.timeline.txn_records import TxnRecording

Gen = Generator[Effect, Any, Any]

WRITE_TOKEN = "0-0-0"  # {taskPartitionId}-{stageId}-{taskAttemptId} of the one task writing the record


class _Abort(Exception):
    """The operation ends without committing; ``reason`` says why.  ``in_commit``: thrown inside
    ``commitStats``' try block, whose ``finally`` stops the heartbeat and deletes its file."""

    def __init__(self, reason: str, in_commit: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.in_commit = reason, in_commit


def partition_of(key: str, partitions: int) -> str:
    """The partition of record key ``k<i>``: ``p<(i - 1) mod partitions>``."""
    return f"p{(int(key[1:]) - 1) % partitions}"


def new_file_id(uuid: str) -> str:
    """A new file group's id: ``FSUtils#createNewFileIdPfx`` (a UUID) and ``-0``.  The model keeps the UUID's
    first 8 hex digits, so that commit metadata stays text-safe (strings under 64 bytes)."""
    return f"{uuid.replace('-', '')[:8]}-0"


def preload_file_id(partition: str) -> str:
    """The file id of a partition's preloaded file group (fixed)."""
    return f"pre{int(partition[1:]):05d}-0"


class HudiWriter(TxnRecording):
    """One writer process: a loop of upserts and deletes committed the way Hudi 1.2.1's write client does."""

    WRITER = "hudi"

    def __init__(
        self,
        node: str,
        rng: random.Random,
        new_id: Any,
        tl: TimelineConfig,
        lock: LockConfig,
        workload: WorkloadConfig,
        start_ms: int | None = None,
        txn_log: list[dict[str, Any]] | None = None,
    ) -> None:
        self.node, self.rng, self.new_id, self.tl = node, rng, new_id, tl
        self.lock_config, self.base, self.workload = lock, lock.base_path, workload
        self.layout = tl.layout
        self.times = TimeGenerator(tl.time_config, self.base)  # always drawn with the lock held (or none)
        self.start_ms = start_ms
        self.ops = 0
        self.spec = table_spec(tl.layout, "part")
        self.known_partitions: set[str] = set()
        self.reader = TimelineReader(self.base, self.layout)
        self.provider: StorageLockProvider | None = None
        self.policy = tl.failed_writes_policy
        self.heartbeat = Heartbeat(self.base, tl.heartbeat_ms) if self.policy == "lazy" else None
        self.locking = tl.cc == "optimistic"  # HoodieWriteConfig#isLockRequired (no provider set otherwise)
        self.partitions = [f"p{i}" for i in range(tl.partition_count)]
        self.txn_log = txn_log  # the transaction records (module docstring); None: none kept
        self.txn: dict[str, Any] | None = None  # the record of the operation under way

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "base": "lock_config.base_path (lock_config is in the state)",
        "layout": "tl.layout (tl is in the state)",
        "spec": "table_spec(tl.layout, 'part') (tl is in the state)",
        "policy": "tl.failed_writes_policy (tl is in the state)",
        "locking": "tl.cc == 'optimistic' (tl is in the state)",
        "partitions": "the names of tl.partition_count's partitions, never changed (tl is in the state)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The writer's settings (the run's constants), its node, its counters and what it holds: the
        partitions it knows, its time generator, its lock provider and heartbeat.  Its random stream only
        while what it draws can differ (several keys, deletes that may or may not happen, a commit that may
        fail, times drawn from a range)."""
        tl, wl = self.tl, self.workload
        draws = (tl.keys > 1 or 0.0 < tl.delete_prob < 1.0 or tl.fail_commit_prob > 0.0
                 or any(d.kind != "fixed" for d in (wl.work_ms, wl.think_ms))
                 or (self.start_ms is None and wl.start_ms.kind != "fixed"))
        return (k.node(self.node), k.value(self.rng) if draws else None, k.value(self.new_id), k.value(tl),
                k.value(wl), self.start_ms, self.ops, k.value(self.lock_config),
                tuple(sorted(self.known_partitions)), k.value(self.times), k.value(self.reader),
                k.value(self.provider), k.value(self.heartbeat))

    # ---- the loop ------------------------------------------------------------------------

    def run(self) -> Gen:
        """Start, then run operations until the bound (or the run's end); a failed writer stops for good."""
        start = draw(self.rng, self.workload.start_ms) if self.start_ms is None else self.start_ms
        began: int = yield Now()
        yield CreateIfAbsent(properties_key(self.base), properties_text(self.spec).encode())
        if self.tl.preload:
            yield from self._preload()
        now: int = yield Now()
        yield Sleep(max(0, start - (now - began)))
        while self.tl.ops_per_writer == 0 or self.ops < self.tl.ops_per_writer:
            self.ops += 1
            outcome = yield from self.operation()
            if outcome == "failed":
                return
            yield Sleep(draw(self.rng, self.workload.think_ms))

    def _draw_op(self) -> dict[str, Any]:
        key = f"k{self.rng.randint(1, self.tl.keys)}"
        kind = "delete" if self.rng.random() < self.tl.delete_prob else "upsert"
        return {"key": key, "kind": kind, "value": f"{self.node}.{self.ops}"}

    def _role(self) -> str:
        """What this writer's operations are: ``upsert``, ``clustering``, ``insert-overwrite``, ``times``."""
        return self.tl.role(self.node) if self.tl.workload == "commits" else "times"

    def operation(self) -> Gen:
        """One operation; returns ``ok``, ``aborted`` or ``failed`` (the writer died in the commit phase)."""
        role = self._role()
        if role == "times":
            op: dict[str, Any] = {"kind": "times"}
        elif role == "clustering":  # the partitions in turn
            op = {"kind": "cluster", "partition": f"p{(self.ops - 1) % self.tl.partition_count}"}
        else:
            op = self._draw_op()
            if role == "insert-overwrite":
                op["kind"] = "insert_overwrite"
        yield Record("op", "invoke", op)
        if role in ("upsert", "times"):
            self._txn_begin(op)
        else:  # replacecommits keep no transaction record (model/checkers/txn_from_runs.py reads upserts)
            self.txn = None
        try:
            if role == "upsert":
                result = yield from self._commit_op(op)
            elif role == "clustering":
                result = yield from self._cluster_op(op)
            elif role == "insert-overwrite":
                result = yield from self._overwrite_op(op)
            else:
                result = yield from self._times_op()
        except _Abort as a:
            yield from self._end()
            yield from self._stop_heartbeat(delete_file=a.in_commit)
            yield Record("op", "fail", {**op, "reason": a.reason})
            self._txn_end("fail", a.reason)
            return "aborted"
        except Interrupted:
            yield from self._end()
            yield from self._stop_heartbeat(delete_file=False)
            yield Record("op", "fail", {**op, "reason": "interrupted"})
            self._txn_end("fail", "interrupted")
            return "aborted"
        yield Record("op", "ok" if result != "failed" else "info", {**op, "result": result})
        self._txn_end("ok" if result != "failed" else "info", None if result != "failed" else "writer-failed")
        return result

    # ---- transactions (TransactionManager over LockManager: a provider per transaction) -----

    def _begin(self) -> Gen:
        """beginStateChange: take the table lock (only when the configuration requires a lock)."""
        if not self.locking or self.provider is not None:
            return
        provider = StorageLockProvider(self.lock_config, self.new_id)
        yield from provider.open()
        if not (yield from provider.try_lock()):
            yield from provider.close()
            raise _Abort("table-lock-timeout")
        self.provider = provider
        yield Record("acquire", "ok", {"owner": provider.owner, "for": "commit"})

    def _end(self) -> Gen:
        """endStateChange: release the lock and close the provider (LockManager#unlock)."""
        provider, self.provider = self.provider, None
        if provider is None:
            return
        if (yield from release(provider)):
            yield Record("release", "ok", {"owner": provider.owner, "for": "commit"})
        else:
            yield Record("release", "fail", {"owner": provider.owner, "error": provider.error})
        yield from provider.close()

    # ---- heartbeats ------------------------------------------------------------------------

    def _start_heartbeat(self, instant: int) -> Gen:
        """HoodieHeartbeatClient#start: the first beat written at once, then the timer."""
        hb = self.heartbeat
        if hb is None:
            return
        hb.instant, hb.last = instant, None
        if not (yield from hb.beat()):
            raise _Abort("heartbeat-start-failed", in_commit=True)
        yield Spawn(HEARTBEAT_TASK, hb.task())

    def _stop_heartbeat(self, delete_file: bool) -> Gen:
        """Stop the timer; ``delete_file``: HoodieHeartbeatClient#stop (else the client closed: file left)."""
        hb = self.heartbeat
        if hb is None or hb.instant is None:
            return
        yield Cancel(HEARTBEAT_TASK)
        if delete_file:
            yield from self._delete(heartbeat_key(self.base, hb.instant))
        hb.instant, hb.last = None, None

    # ---- store helpers ----------------------------------------------------------------------

    def _create(self, inst: Instant, body: bytes) -> Gen:
        """createImmutableFileInPath: create(path, overwrite=false)."""
        got: StoreResult = yield CreateIfAbsent(instant_path(self.base, self.layout, inst), body)
        if not got.ok:
            if self.txn is not None and inst.action == "commit" and inst.is_completed:
                # refused (412, no earlier attempt unanswered): not created; else it may exist
                self.txn["completing"] = got.outcome.unknown or got.ambiguous
            raise _Abort(f"{inst.state}-{got.outcome.name.lower()}", in_commit=inst.is_completed)

    def _delete(self, key: str) -> Gen:
        got: StoreResult = yield Delete(key)
        if got.ok:
            yield Record("delete", "ok", {"key": key})
        return got.ok

    def _exists(self, inst: Instant, reason: str, in_commit: bool) -> Gen:
        """``ValidationUtils.checkArgument(storage.exists(...))`` before a state transition."""
        got: StoreResult = yield Read(instant_path(self.base, self.layout, inst))
        if got.outcome is Outcome.NOT_FOUND:
            raise _Abort(reason, in_commit=in_commit)
        if not got.ok:
            raise _Abort("timeline-read-failed", in_commit=in_commit)

    def _list(self, in_commit: bool = False) -> Gen:
        listed: list[Instant] | None = yield from self.reader.list()
        if listed is None:
            raise _Abort("timeline-read-failed", in_commit=in_commit)
        return listed

    # ---- the write ----------------------------------------------------------------------------

    def _start_commit(self, action: str = "commit") -> Gen:
        """BaseHoodieWriteClient#startCommit (``action``: ``commit``, or ``replacecommit`` for an
        insert_overwrite); returns the requested instant."""
        if self.policy == "eager":
            _over = to_rollback((yield from self._list()))
            for _at, victim in enumerate(_over):  # the loop's position
                if not (yield from self._rollback(victim)):
                    raise _Abort("rollback-failed")
        yield from self._begin()
        ts = yield from self.times.generate("instant", lock_held=True)
        requested = Instant(ms_to_instant(ts), action, State.REQUESTED)
        yield from self._start_heartbeat(requested.requested)
        yield from self._create(requested, b"")
        yield from self._end()
        return requested

    def _tag(self, op: dict[str, Any], listed: list[Instant]) -> Gen:
        """The key's file group: (slice or None, file id, entries, kind), as the index and partitioner say."""
        key, partition = op["key"], partition_of(op["key"], self.tl.partition_count)
        _over = yield from self._latest_view(listed, partition)
        groups: list[tuple[BaseSlice, dict[str, str]]] = []
        for _at, s in enumerate(_over):  # the loop's position
            entries = yield from read_entries(self.base, s)
            if entries is None:
                raise _Abort("base-file-read-failed")
            groups.append((s, entries))
        self._txn_set(reads=[{"fg": s.fg, "path": s.path, "entries": dict(e)} for s, e in groups])
        for s, entries in groups:
            if key in entries:
                self._txn_set(found=s.path, target=s.path)
                return s, s.file_id, dict(entries), ("delete" if op["kind"] == "delete" else "update")
        if op["kind"] == "delete":
            return None, None, {}, "delete-absent"
        if self.tl.replaces:  # UpsertPartitioner#assignInserts: no small file of a pending clustering plan
            clustering = yield from self._pending_clustering(listed)
            groups = [(s, e) for s, e in groups if (s.partition, s.file_id) not in clustering]
        small = small_file(groups, self.tl.small_file_limit)
        if small is not None:
            self._txn_set(target=small.path)
            return small, small.file_id, dict(next(e for s, e in groups if s == small)), "insert"
        return None, new_file_id(self.new_id()), {}, "insert"

    def _commit_op(self, op: dict[str, Any]) -> Gen:
        requested = yield from self._start_commit()
        listed = yield from self._list()  # preWrite
        last, pending = last_completed(listed), pending_instants(listed, requested.requested)
        self._txn_set(instant=requested.id, snapshot=None if last is None else last.id)
        target, file_id, entries, kind = yield from self._tag(op, listed)
        if self.tl.replaces and target is not None and kind in ("update", "delete"):
            yield from self._clustering_handle_update(listed, target)
        inflight = Instant(requested.requested, "commit", State.INFLIGHT)
        yield from self._exists(requested, "requested-missing", in_commit=False)
        yield from self._create(inflight, b"")
        model: dict[str, Any] | None = None
        stats: dict[str, list[dict[str, Any]]] = {}
        yield Sleep(draw(self.rng, self.workload.work_ms), interruptible=False)  # the write job's work
        if file_id is not None:
            partition = partition_of(op["key"], self.tl.partition_count)
            if kind == "delete":
                entries.pop(op["key"], None)
            else:
                entries[op["key"]] = op["value"]
            name = BaseFile(file_id, WRITE_TOKEN, requested.requested).name  # the path it writes
            self._txn_set(write={"fg": f"{partition}/{file_id}", "path": f"{partition}/{name}",
                                 "key": op["key"], "value": op["value"] if kind != "delete" else None})
            path = yield from self._write_base_file(partition, file_id, requested.requested, entries)
            merge = format_instant(target.instant) if target is not None else None
            value = op["value"] if kind != "delete" else None
            model = {"fg": f"{partition}/{file_id}", "slice": path, "merge": merge,
                     "aux": {"key": op["key"], "kind": kind, "value": value}}
            stats = {partition: [write_stat(partition, file_id, path, merge, len(entries), kind)]}
        result = yield from self._commit(requested, last, pending, model, stats)
        return result

    def _times_op(self) -> Gen:
        requested = yield from self._start_commit()
        listed = yield from self._list()
        last, pending = last_completed(listed), pending_instants(listed, requested.requested)
        yield from self._exists(requested, "requested-missing", in_commit=False)
        yield from self._create(Instant(requested.requested, "commit", State.INFLIGHT), b"")
        result = yield from self._commit(requested, last, pending, None, {})
        return result

    def _write_base_file(self, partition: str, file_id: str, instant: int, entries: dict[str, str]) -> Gen:
        """The new base file of the file group (its merged records); returns its path in the table."""
        if partition not in self.known_partitions:
            meta = partition_metadata_text(instant).encode()
            yield CreateIfAbsent(partition_metadata_key(self.base, partition), meta)
            self.known_partitions.add(partition)
        path = f"{partition}/{BaseFile(file_id, WRITE_TOKEN, instant).name}"
        body = {"fg": f"{partition}/{file_id}", "time": instant, "salt": "", "entries": entries}
        got: StoreResult = yield Put(f"{self.base}/{path}", json.dumps(body, sort_keys=True).encode())
        if not got.ok:
            raise _Abort(f"write-{got.outcome.name.lower()}")
        return path

    def _commit(self, requested: Instant, last: Instant | None, pending: frozenset[int],
                model: dict[str, Any] | None, stats: dict[str, list[dict[str, Any]]],
                operation: str = "UPSERT", replaced: dict[str, list[str]] | None = None) -> Gen:
        """commitStats: the heartbeat check, then in one lock hold the conflict check and the completion
        (of ``requested``'s action; an insert_overwrite's ``replaced``: its partitionToReplaceFileIds)."""
        hb = self.heartbeat
        if hb is not None:
            now: int = yield Now()
            if is_expired(now, hb.last, self.tl.heartbeat_ms, self.tl.tolerable_misses):
                raise _Abort("heartbeat-expired")
        yield from self._begin()
        if self.locking:
            yield from self._resolve_conflicts(requested, last, pending, stats, operation, replaced)
        yield from self._exists(Instant(requested.requested, requested.action, State.INFLIGHT),
                                "inflight-missing", in_commit=True)
        completion = None
        if self.layout == "v8":
            ms = yield from self.times.generate("completion", lock_held=True, force_increase=False)
            completion = ms_to_instant(ms)
        if self.tl.fail_commit_prob and self.rng.random() < self.tl.fail_commit_prob:
            yield from self._end()
            yield from self._stop_heartbeat(delete_file=False)  # the process died: its heartbeat file stays
            yield Record("writer-fail", "info", {"instant": requested.id})
            return "failed"
        done = Instant(requested.requested, requested.action, State.COMPLETED, completion)
        data = commit_body(self.layout, self.spec, stats, model, operation, replaced)
        completion_text = format_instant(completion) if completion is not None else None
        yield Record("write", "invoke", {"instant": requested.id, "completion": completion_text})
        self._txn_set(completing=True)
        yield from self._create(done, data)
        yield from self._end()
        yield from self._stop_heartbeat(delete_file=True)  # postCommit / releaseResources
        if self.policy == "lazy":
            yield from self._clean()
        return "committed"

    def _resolve_conflicts(self, requested: Instant, last: Instant | None, pending: frozenset[int],
                           stats: dict[str, list[dict[str, Any]]], operation: str = "UPSERT",
                           replaced: dict[str, list[str]] | None = None) -> Gen:
        """TransactionUtils#resolveWriteConflictIfAny, the timeline refreshed inside the transaction.

        This commit's mutated file groups are its write stats' and, for an insert_overwrite, its replaced
        ones (``ConcurrentOperation#init`` on commit metadata, lines 195-206)."""
        listed = yield from self._list(in_commit=True)
        md_mine = {"partitionToWriteStats": stats, "partitionToReplaceFileIds": replaced or {}}
        mine = Operation(requested.requested, requested.action, operation,
                         frozenset(mutated_file_groups(md_mine) | replaced_file_groups(md_mine)))
        others = []
        keep_pending = self.tl.hypothetical_replace != "ignore-pending-clustering"
        _over = candidate_instants(self.tl.strategy, listed, requested.requested,
                                   None if last is None else last.requested, pending, keep_pending)
        for _at, inst in enumerate(_over):  # the loop's position
            other = yield from self._concurrent_operation(inst)
            others.append(other)
        other = first_conflict(mine, others)
        if other is not None:
            fgs = sorted(f"{p}/{f}" for p, f in mine.mutated & other.mutated)
            yield Record("conflict", "info", {"instant": requested.id, "other": format_instant(other.instant),
                                              "fg": fgs})
            raise _Abort("occ-conflict", in_commit=True)

    def _concurrent_operation(self, inst: Instant) -> Gen:
        """``ConcurrentOperation(instant, metaClient)`` of a candidate: what it mutated, read from the
        timeline (lines 121-187).  A completed commit: its write stats' file groups, and a replacecommit's
        ``partitionToReplaceFileIds`` too (155-162); a pending clustering (requested or inflight: its
        requested plan, 80-84): its plan's input file groups, operation CLUSTER (167-183); a pending
        insert_overwrite: nothing (its requested file has no plan and the model's inflight file no
        workload profile, which would name only its new file ids)."""
        if not inst.is_completed:
            if inst.requested_action != "clustering":
                return Operation(inst.requested, inst.action, "UNKNOWN", frozenset())
            plan = yield from self.reader.metadata(Instant(inst.requested, "clustering", State.REQUESTED))
            if plan is None:
                raise _Abort("timeline-read-failed", in_commit=True)
            return Operation(inst.requested, inst.action, "CLUSTER", frozenset(plan_file_groups(plan)))
        md = yield from self.reader.metadata(inst)
        if md is None:
            raise _Abort("timeline-read-failed", in_commit=True)
        operation = str(md.get("operationType") or "UPSERT")
        mutated = mutated_file_groups(md)
        if self.tl.hypothetical_replace != "ignore-replaced-ids":
            mutated |= replaced_file_groups(md)
        return Operation(inst.requested, inst.action, operation, frozenset(mutated))

    # ---- replacecommits: the view, clustering, insert_overwrite ---------------------------------

    def _latest_view(self, listed: list[Instant], partition: str) -> Gen:
        """``getLatestBaseFiles(partition)``: the latest committed base file of each file group of the
        partition, replaced file groups left out (``model/timeline/fsview.py``; the hypothetical
        ``show-replaced`` writer keeps them)."""
        slices = yield from view(self.reader, listed, [partition], self.tl.metadata_table_on)
        if slices is None:
            raise _Abort("view-read-failed")
        replaced: frozenset[tuple[str, str]] = frozenset()
        if self.tl.replaces and self.tl.hypothetical_replace != "show-replaced":
            got = yield from replaced_groups(self.reader, listed)
            if got is None:
                raise _Abort("view-read-failed")
            replaced = got
        return latest_slices(slices, partition, replaced)

    def _pending_clustering(self, listed: list[Instant]) -> Gen:
        """The file groups in a pending clustering plan (``getFileGroupsInPendingClustering``)."""
        groups = yield from pending_clustering_groups(self.reader, listed)
        if groups is None:
            raise _Abort("view-read-failed")
        return groups

    def _clustering_handle_update(self, listed: list[Instant], target: BaseSlice) -> Gen:
        """``BaseSparkCommitActionExecutor#clusteringHandleUpdate`` (1.2.0, lines 116-163), before the
        write's inflight file: an update or delete of a file group in a pending clustering plan is refused
        by SparkRejectUpdateStrategy (``HoodieClusteringUpdateException``, ``#handleUpdate`` lines 48-58);
        SparkAllowUpdateStrategy lets it through (lines 130-131: the conflict check at commit decides)."""
        clustering = yield from self._pending_clustering(listed)
        if (target.partition, target.file_id) in clustering and self.tl.update_strategy == "reject":
            yield Record("clustering-update", "info", {"fg": target.fg,
                                                       "clustering": format_instant(clustering[
                                                           (target.partition, target.file_id)])})
            raise _Abort("clustering-update-rejected")

    def _cluster_op(self, op: dict[str, Any]) -> Gen:
        """A clustering of one partition's file groups (``BaseHoodieTableServiceClient``): schedule the plan
        under the table lock (``<t>.clustering.requested``, the file groups not in a pending clustering:
        ``ClusteringPlanStrategy#getFileSlicesEligibleForClustering``), go inflight, rewrite the plan's
        slices into one new file group (base file of instant ``t``), then complete ``<t>_<c>.replacecommit``
        with ``partitionToReplaceFileIds`` in a lock hold (``#completeClustering``: no conflict check
        under SimpleConcurrentFileWrites, whose ``isPreCommitRequired`` is false).  No heartbeat
        (``hoodie.clustering.enable.expirations`` is false by default) and no rollback of a failed one."""
        partition = op["partition"]
        yield from self._begin()  # scheduleTableService: the plan and its requested file in one lock hold
        listed = yield from self._list()
        latest = yield from self._latest_view(listed, partition)
        clustering = yield from self._pending_clustering(listed)
        eligible = [s for s in latest if (s.partition, s.file_id) not in clustering]
        if not eligible:
            yield from self._end()
            return "nothing-to-cluster"
        ts = yield from self.times.generate("instant", lock_held=True)
        requested = Instant(ms_to_instant(ts), "clustering", State.REQUESTED)
        plan = clustering_plan([(s.partition, s.file_id, s.path) for s in eligible])
        yield from self._create(requested, encode_clustering_plan(plan))
        yield from self._end()
        inflight = Instant(requested.requested, "clustering", State.INFLIGHT)
        yield from self._exists(requested, "requested-missing", in_commit=False)
        yield from self._create(inflight, b"")
        entries: dict[str, str] = {}
        for _at, s in enumerate(eligible):  # _at: the loop's position; the plan's slices as planned
            got = yield from read_entries(self.base, s)
            if got is None:
                raise _Abort("base-file-read-failed")
            entries.update(got)
        yield Sleep(draw(self.rng, self.workload.work_ms), interruptible=False)  # the clustering job's work
        file_id = new_file_id(self.new_id())
        path = yield from self._write_base_file(partition, file_id, requested.requested, entries)
        stats = {partition: [write_stat(partition, file_id, path, None, len(entries), "insert")]}
        replaced = {partition: [s.file_id for s in eligible]}
        model = {"fg": f"{partition}/{file_id}", "slice": path, "merge": None, "aux": None}
        yield from self._begin()  # completeClustering: beginStateChange
        yield from self._exists(inflight, "inflight-missing", in_commit=True)
        ms = yield from self.times.generate("completion", lock_held=True, force_increase=False)
        done = Instant(requested.requested, "replacecommit", State.COMPLETED, ms_to_instant(ms))
        data = commit_body(self.layout, self.spec, stats, model, "CLUSTER", replaced)
        completion_text = format_instant(done.completed or 0)
        yield Record("write", "invoke", {"instant": requested.id, "completion": completion_text})
        yield from self._create(done, data)
        yield from self._end()
        return "committed"

    def _overwrite_op(self, op: dict[str, Any]) -> Gen:
        """An insert_overwrite of the key's partition (a ``replacecommit`` through the write client, as an
        upsert goes): the key's new value in a new file group; every file group of the partition that the
        write's view holds is replaced (``InsertOverwriteCommitActionExecutor#getAllExistingFileIds``:
        ``getLatestFileSlices``); the commit's conflict check counts them as mutated."""
        requested = yield from self._start_commit("replacecommit")
        listed = yield from self._list()  # preWrite
        last, pending = last_completed(listed), pending_instants(listed, requested.requested)
        partition = partition_of(op["key"], self.tl.partition_count)
        existing = yield from self._latest_view(listed, partition)
        inflight = Instant(requested.requested, "replacecommit", State.INFLIGHT)
        yield from self._exists(requested, "requested-missing", in_commit=False)
        yield from self._create(inflight, b"")
        yield Sleep(draw(self.rng, self.workload.work_ms), interruptible=False)  # the write job's work
        file_id = new_file_id(self.new_id())
        rows = {op["key"]: op["value"]}
        path = yield from self._write_base_file(partition, file_id, requested.requested, rows)
        model = {"fg": f"{partition}/{file_id}", "slice": path, "merge": None,
                 "aux": {"key": op["key"], "kind": "insert", "value": op["value"]}}
        stats = {partition: [write_stat(partition, file_id, path, None, 1, "insert")]}
        replaced = {partition: [s.file_id for s in existing]}
        result = yield from self._commit(requested, last, pending, model, stats, "INSERT_OVERWRITE", replaced)
        return result

    # ---- failed writes -------------------------------------------------------------------------

    def _clean(self) -> Gen:
        """A clean's first step under LAZY: roll back the pending instants whose heartbeat expired."""
        try:
            listed = yield from self._list()
        except _Abort:
            return
        candidates = to_rollback(listed)
        if not candidates:
            return
        now: int = yield Now()
        expired = []
        for _at, inst in enumerate(candidates):  # _at: the loop's position
            got: StoreResult = yield Read(heartbeat_key(self.base, inst.requested))
            if not got.ok and got.outcome is not Outcome.NOT_FOUND:
                continue
            if is_expired(now, heartbeat_time(got), self.tl.heartbeat_ms, self.tl.tolerable_misses):
                expired.append(inst)
        if not expired:
            return
        try:
            still = {i.requested for i in to_rollback((yield from self._list()))}
        except _Abort:
            return
        for _at2, inst in enumerate(expired):  # _at2: the loop's position
            if inst.requested in still:
                yield from self._rollback(inst)

    def _rollback(self, victim: Instant) -> Gen:
        """Roll back one pending instant (schedule, delete its files, finish); True when it completed."""
        yield Record("rollback", "invoke", {"instant": victim.id})
        try:
            result = yield from self._rollback_steps(victim)
        except _Abort as a:
            yield from self._end()
            yield Record("rollback", "fail", {"instant": victim.id, "reason": a.reason})
            return False
        return bool(result)

    def _rollback_steps(self, victim: Instant) -> Gen:
        """BaseHoodieTableServiceClient#rollback: the instant as the timeline has it now (a rollback of an
        instant that completed meanwhile first reverts it to inflight, unpublishing the commit)."""
        yield from self._begin()  # scheduleRollback, under the lock (executeStateChangeWithInstant)
        listed = yield from self._list()
        now = [i for i in listed if i.requested == victim.requested and i.action == victim.action]
        if not now:
            yield from self._end()
            yield Record("rollback", "fail", {"instant": victim.id, "reason": "not-found"})
            return False
        ts = yield from self.times.generate("instant", lock_held=True)
        rb = Instant(ms_to_instant(ts), "rollback", State.REQUESTED)
        yield from self._create(rb, b"")
        yield from self._end()
        if now[0].is_completed:  # revertCompleteToInflight: the completed file goes first
            yield from self._delete(instant_path(self.base, self.layout, now[0]))
            yield Record("unpublish", "info", {"instant": victim.id})
        yield from self._create(Instant(rb.requested, "rollback", State.INFLIGHT), b"")
        deleted: dict[str, list[str]] = {}
        _over = self.partitions
        for _at, p in enumerate(_over):  # the loop's position
            got: StoreResult = yield ListPrefix(f"{self.base}/{p}/")
            if not got.ok or got.body is None:
                raise _Abort("listing-failed")
            _over2 = list(k for k in got.body.decode().split("\n") if k)
            for _at2, key in enumerate(_over2):  # the loop's position
                name = key.rsplit("/", 1)[-1]
                mine = is_base_file_name(name) and parse_base_file_name(name).instant == victim.requested
                if mine and (yield from self._delete(key)):
                    deleted.setdefault(p, []).append(f"{p}/{name}")
        yield from self._begin()  # finishRollback, under the lock
        _over3 = (State.INFLIGHT, State.REQUESTED)
        for _at3, state in enumerate(_over3):  # the loop's position
            pending = Instant(victim.requested, victim.action, state)
            yield from self._delete(instant_path(self.base, self.layout, pending))
        completion = None
        if self.layout == "v8":
            ms = yield from self.times.generate("completion", lock_held=True, force_increase=False)
            completion = ms_to_instant(ms)
        body = encode_rollback_metadata(rb.requested, victim.requested, deleted)
        yield from self._create(Instant(rb.requested, "rollback", State.COMPLETED, completion), body)
        yield from self._end()
        yield from self._delete(heartbeat_key(self.base, victim.requested))
        yield Record("rollback", "ok", {"instant": victim.id, "rollback": rb.id,
                                        "deleted": sorted(f for fs in deleted.values() for f in fs)})
        return True

    # ---- the preloaded table -------------------------------------------------------------------

    def _preload(self) -> Gen:
        """Every key committed before the run, one file group per partition (as after a bulk insert):
        one commit per key, each merging the previous one; every writer writes them if absent."""
        keys = self.tl.keys
        entries: dict[str, dict[str, str]] = {}
        prev: dict[str, int] = {}
        versions: list[dict[str, Any]] = []
        for j in range(keys):
            key = f"k{j + 1}"
            partition = partition_of(key, self.tl.partition_count)
            file_id = preload_file_id(partition)
            instant = ms_to_instant(EPOCH_MS - (keys - j + 10) * 1000)
            part = entries.setdefault(partition, {})
            part[key] = f"preload.{key}"
            if partition not in self.known_partitions:
                meta = partition_metadata_text(instant).encode()
                yield CreateIfAbsent(partition_metadata_key(self.base, partition), meta)
                self.known_partitions.add(partition)
            path = f"{partition}/{BaseFile(file_id, WRITE_TOKEN, instant).name}"
            body = {"fg": f"{partition}/{file_id}", "time": instant, "salt": "", "entries": dict(part)}
            yield CreateIfAbsent(f"{self.base}/{path}", json.dumps(body, sort_keys=True).encode())
            merge = format_instant(prev[partition]) if partition in prev else None
            before = [v["path"] for v in versions if v["fg"] == f"{partition}/{file_id}"]
            versions.append({"fg": f"{partition}/{file_id}", "path": path, "key": key, "value": part[key],
                             "target": before[-1] if before else None})
            model = {"fg": f"{partition}/{file_id}", "slice": path, "merge": merge,
                     "aux": {"key": key, "kind": "insert", "value": part[key]}}
            stats = {partition: [write_stat(partition, file_id, path, merge, len(part), "insert")]}
            completion = instant + 1 if self.layout == "v8" else None
            _over = (
                (Instant(instant, "commit", State.REQUESTED), b""),
                (Instant(instant, "commit", State.INFLIGHT), b""),
                (Instant(instant, "commit", State.COMPLETED, completion),
                 commit_body(self.layout, self.spec, stats, model)),
            )
            for _at, (inst, data) in enumerate(_over):  # the loop's position
                yield CreateIfAbsent(instant_path(self.base, self.layout, inst), data)
            prev[partition] = instant
        if self.txn_log is not None:  # one record of the table as preloaded (every writer adds the same)
            self.txn_log.append({"process": self.node, "kind": "preload", "versions": versions,
                                 "outcome": "ok"})
