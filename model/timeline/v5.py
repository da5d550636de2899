"""The specification's writer (variant ``vanlightly-v5``): Vanlightly's v5 TLA+ ``basic_cow``, sans-I/O.

Not Hudi: a run of this writer is a claim about the specification (see ``model/timeline/variants.py``;
Hudi 1.2.1's writer is ``model/timeline/hudi_writer.py``).

The table is a Hudi COPY_ON_WRITE table (:data:`TABLE`, version 8 for layout ``v8``, 6 for
``v6``): every writer creates ``hoodie.properties`` if absent, each file group ``n`` is partition
``fg<n>`` (with its ``.hoodie_partition_metadata``) holding one file id ``fg<n>-0``, a file slice
is a base file ``fg<n>-0_0-0-0_<instant>.parquet`` (its body is the slice as JSON, not Parquet),
and a completed instant carries Hudi's commit metadata (Avro in v8, JSON in v6) naming the base
file it wrote, with the operation's model data in ``extraMetadata`` (``hcc.*`` entries).

One operation of a :class:`CowWriter` (an upsert or a delete of one key, with a value unique
to the operation):

1. take an instant time (``model/timeline/timegen.py``) and write ``<ts>.commit.requested``;
2. look the key up in the index (``<base>/.hoodie/.aux/index/<key>``): its file group, or a file
   group drawn at random for an insert (a delete of an absent key ends the operation);
3. (pessimistic) take the file group's lock, held until the end of the operation;
4. read the merge target, the newest completed slice of the file group (abort if it is not
   older than our instant), and write ``<ts>.commit.inflight``;
5. write the new file slice (merge target + this operation) to ``<base>/fg<n>/``;
6. (optimistic) take the table lock; update the index, aborting an insert whose key is
   already mapped to another file group when the primary-key check is on;
7. (optimistic) abort if a completed instant on the same file group is newer than the merge target;
8. (v8) generate the completion time (under the table lock for the skew-adjusting generator);
   write the completed instant ``{fg, slice, aux}``; release the locks.

Instant and slice files are written create-if-absent (``put_if_absent``) or silently
overwritten.  ``aux`` in the completed instant (the operation's key, kind and value) plays
the part of the specification's auxiliary ``aux_kv_log``: the checkers read it from the
store's record of the write (:func:`instant_body`), which is why v8 commit metadata is written
text-safe (:func:`model.timeline.metadata.encode_commit_metadata`).  History events: ``op``
invoke / ok / fail ``{reason}``.

Transactions: given a ``txn_log`` (a list), each operation of the ``commits`` workload appends one record
when it is invoked and fills it in as it goes, as Hudi's writer does (``model/timeline/hudi_writer.py``):
the instant, the file group the index named (``found``: its merge target's path when the key is in it),
the merge target it read (file group, path, records), what it wrote (file group, path, key, value;
``None`` for a delete) and its outcome.  No effect is added: the history is the same without them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Generator, Hashable
from typing import Any

from model.config import LockConfig, WorkloadConfig
from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.runtime.effects import (
    CreateIfAbsent,
    Delete,
    Effect,
    Interrupted,
    Now,
    Put,
    Read,
    Record,
    Sleep,
    StoreResult,
)
from model.runtime.sampling import draw
from model.timeline.config import TimelineConfig
from model.timeline.instants import read_completed, write_instant
from model.timeline.layout import (
    Instant,
    State,
    aux_key,
    format_instant,
    ms_to_instant,
    partition_metadata_key,
    properties_key,
)
from model.timeline.metadata import (
    commit_metadata,
    encode_commit_metadata,
    partition_metadata_text,
    properties_text,
)
from model.timeline.modeldata import model_body, table_spec
from model.timeline.timegen import TimeGenerator, release
from model.timeline.txn_records import TxnRecording

Gen = Generator[Effect, Any, Any]


def index_key(base: str, key: str) -> str:
    """The store key of a record key's index entry (its file group)."""
    return aux_key(base, f"index/{key}")


def partition(fg: int) -> str:
    """The partition (folder) of file group ``fg``."""
    return f"fg{fg}"


def slice_path(fg: int, instant_id: str) -> str:
    """A file slice (a base file) of file group ``fg`` written by ``instant_id``, relative to the table."""
    return f"{partition(fg)}/fg{fg}-0_0-0-0_{instant_id}.parquet"


def slice_key(base: str, fg: int, instant_id: str) -> str:
    """The store key of a file slice of file group ``fg`` written by instant ``instant_id``."""
    return f"{base}/{slice_path(fg, instant_id)}"


def fg_lock_key(base: str, fg: int) -> str:
    """The store key of the specification's pessimistic lock on file group ``fg``."""
    return f"{base}/.hoodie/.locks/fg{fg}.lock"


class _Abort(Exception):
    """The operation ends without committing; ``args[0]`` is the reason."""


class CowWriter(TxnRecording):
    """One writer process: a loop of upserts and deletes committed to the table."""

    WRITER = "v5"

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
        self.node = node
        self.rng = rng
        self.new_id = new_id
        self.tl = tl
        self.base = lock.base_path
        self.workload = workload
        self.lock = StorageLockProvider(lock, new_id)
        self.times = TimeGenerator(tl.time_config, self.base, self.lock)
        self.start_ms = start_ms
        self.held_fg: int | None = None
        self.ops = 0
        self.spec = table_spec(tl.layout)
        self.partitions: set[int] = set()  # partitions this process knows to exist
        self.txn_log = txn_log  # the transaction records (module docstring); None: none kept
        self.txn: dict[str, Any] | None = None  # the record of the operation under way

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "spec": "table_spec(tl.layout) (tl is in the state)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The writer's settings (the run's constants), its node, its counters and what it holds: its lock
        provider and time generator, the file group lock it holds, the partitions it knows.  Its random
        stream only while what it draws can differ (several keys, deletes that may or may not
        happen, a commit that may fail, times drawn from a range)."""
        tl, wl = self.tl, self.workload
        draws = (tl.keys > 1 or 0.0 < tl.delete_prob < 1.0 or tl.fail_commit_prob > 0.0
                 or any(d.kind != "fixed" for d in (wl.work_ms, wl.think_ms))
                 or (self.start_ms is None and wl.start_ms.kind != "fixed"))
        return (k.node(self.node), k.value(self.rng) if draws else None, k.value(self.new_id), k.value(tl),
                k.value(wl), self.start_ms, self.ops, self.base, k.value(self.lock), k.value(self.times),
                self.held_fg, tuple(sorted(self.partitions)))

    # ---- the loop ------------------------------------------------------------------------

    def run(self) -> Gen:
        """Start, then run operations until the bound (or the run's end); a failed writer stops for good."""
        start = draw(self.rng, self.workload.start_ms) if self.start_ms is None else self.start_ms
        began: int = yield Now()
        # create the table if this writer is the first (as a Hudi writer does on its first write)
        yield CreateIfAbsent(properties_key(self.base), properties_text(self.spec).encode())
        now: int = yield Now()
        yield Sleep(max(0, start - (now - began)))  # the first operation starts ``start`` ms in
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

    def operation(self) -> Gen:
        """One operation; returns ``ok``, ``aborted`` or ``failed`` (the writer died in the commit phase)."""
        op = self._draw_op() if self.tl.workload == "commits" else {"kind": "times"}
        yield Record("op", "invoke", op)
        self._txn_begin(op)
        try:
            if self.tl.workload == "commits":
                result = yield from self._commit_op(op)
            else:
                result = yield from self._times_op()
        except _Abort as a:
            yield from self._release_all()
            yield Record("op", "fail", {**op, "reason": a.args[0]})
            self._txn_end("fail", a.args[0])
            return "aborted"
        except Interrupted:
            yield from self._release_all()
            yield Record("op", "fail", {**op, "reason": "interrupted"})
            self._txn_end("fail", "interrupted")
            return "aborted"
        yield Record("op", "ok" if result != "failed" else "info", {**op, **({"result": result})})
        self._txn_end("ok" if result != "failed" else "info", None if result != "failed" else "writer-failed")
        return result

    # ---- locks ---------------------------------------------------------------------------

    def _take_table_lock(self) -> Gen:
        if self.lock.lock is not None:
            return
        if not (yield from self.lock.try_lock()):
            raise _Abort("table-lock-timeout")
        yield Record("acquire", "ok", {"owner": self.lock.owner, "for": "commit"})

    def _take_fg_lock(self, fg: int) -> Gen:
        """The pessimistic file-group lock: a create-if-absent lock file, polled; no expiry."""
        waited = 0
        while True:
            got: StoreResult = yield CreateIfAbsent(fg_lock_key(self.base, fg), self.node.encode())
            if got.ok:
                self.held_fg = fg
                return
            if waited >= self.lock.config.wait_time_ms:
                raise _Abort("fg-lock-timeout")
            yield Sleep(self.tl.fg_poll_ms)
            waited += self.tl.fg_poll_ms

    def _release_all(self) -> Gen:
        if self.lock.lock is not None:
            yield from release(self.lock)
        if self.held_fg is not None:
            yield Delete(fg_lock_key(self.base, self.held_fg))
            self.held_fg = None

    # ---- steps ---------------------------------------------------------------------------

    def _write(self, key: str, body: dict[str, Any]) -> Gen:
        data = json.dumps(body, sort_keys=True).encode()
        pia = self.tl.put_if_absent_on
        result: StoreResult = yield (CreateIfAbsent(key, data) if pia else Put(key, data))
        if not result.ok:
            raise _Abort(f"write-{result.outcome.name.lower()}")

    def _instant(self, inst: Instant, body: bytes) -> Gen:
        result: StoreResult = yield from write_instant(
            self.base, self.tl.layout, inst, body, self.tl.put_if_absent_on
        )
        if not result.ok:
            if self.txn is not None and inst.state == State.COMPLETED:
                # refused (412, no earlier attempt unanswered): not written; else it may exist
                self.txn["completing"] = result.outcome.unknown or result.ambiguous
            raise _Abort(f"{inst.state}-{result.outcome.name.lower()}")

    def _new_instant_time(self) -> Gen:
        ts = yield from self.times.generate("instant")
        if ts is None:
            raise _Abort("time-lock-timeout")
        salt = self.new_id().replace("-", "")[:8] if self.tl.salt else ""
        return Instant(ms_to_instant(ts), "commit", State.REQUESTED, salt=salt)

    def _commit_body(self, done: Instant, body: dict[str, Any]) -> bytes:
        """The completed instant's commit metadata: the base file written, and the model data."""
        extra = {"schema": self.spec.record_schema()}
        stats: dict[str, list[dict[str, Any]]] = {}
        if body:
            fg, path = body["fg"], body["slice"]
            stats[partition(fg)] = [
                {
                    "fileId": f"fg{fg}-0",
                    "path": path,
                    "prevCommit": body["merge"] or "null",
                    "partitionPath": partition(fg),
                    "numWrites": body["entries"],
                }
            ]
            extra |= {
                "hcc.fg": str(fg),
                "hcc.slice": path,
                "hcc.merge": body["merge"] or "",
                "hcc.aux": json.dumps(body["aux"], separators=(",", ":"), sort_keys=True),
            }
        md = commit_metadata(stats, "UPSERT", extra)
        return encode_commit_metadata(self.tl.layout, md, text_safe=True)

    def _complete(self, requested: Instant, body: dict[str, Any]) -> Gen:
        """Generate the completion time (v8) and write the completed instant, in one lock hold if any."""
        needs_lock = self.tl.cc == "optimistic" or (self.tl.layout == "v8" and self.tl.time_config.needs_lock)
        if needs_lock:
            yield from self._take_table_lock()
        completion = None
        if self.tl.layout == "v8":
            completion_ms = yield from self.times.generate("completion", lock_held=self.lock.lock is not None)
            if completion_ms is None:
                raise _Abort("time-lock-timeout")
            completion = ms_to_instant(completion_ms)
        if self.tl.fail_commit_prob and self.rng.random() < self.tl.fail_commit_prob:
            yield from self._release_all()
            yield Record("writer-fail", "info", {"instant": requested.id})
            return "failed"
        done = Instant(
            requested.requested, requested.action, State.COMPLETED, completion, salt=requested.salt
        )
        data = self._commit_body(done, body)
        # the "write" pause trigger of the fault plan fires here: decided, not yet sent
        completion_text = format_instant(completion) if completion is not None else None
        yield Record("write", "invoke", {"instant": requested.id, "completion": completion_text})
        if body:
            self._txn_set(completing=True)
        yield from self._instant(done, data)
        yield from self._release_all()
        return "committed"

    def _times_op(self) -> Gen:
        requested = yield from self._new_instant_time()
        yield from self._instant(requested, b"")
        result = yield from self._complete(requested, {})
        return result

    def _completed(self) -> Gen:
        """The completed instants with their model data, ``[(instant, body)]``."""
        completed = yield from read_completed(self.base, self.tl.layout)
        if completed is None:
            raise _Abort("timeline-read-failed")
        return [(inst, model_body(md)) for inst, md in completed]

    def _commit_op(self, op: dict[str, Any]) -> Gen:
        tl, base = self.tl, self.base
        requested = yield from self._new_instant_time()
        yield from self._instant(requested, b"")
        self._txn_set(instant=requested.id)
        # key lookup
        got: StoreResult = yield Read(index_key(base, op["key"]))
        if got.ok and got.body is not None:
            fg, kind = int(got.body), ("delete" if op["kind"] == "delete" else "update")
        elif got.outcome.name == "NOT_FOUND":
            if op["kind"] == "delete":
                raise _Abort("delete-of-absent-key")
            fg, kind = self.rng.randint(1, tl.file_group_count), "insert"
        else:
            raise _Abort("index-read-failed")
        if tl.cc == "pessimistic":
            yield from self._take_fg_lock(fg)
        # merge target: the newest completed slice of the file group
        completed = yield from self._completed()
        mine = [(inst, body) for inst, body in completed if body.get("fg") == fg]
        entries: dict[str, str] = {}
        merge_ts = 0
        if mine:
            target, body = max(mine, key=lambda ib: ib[0].key)
            merge_ts = target.requested
            if target.requested >= requested.requested:
                raise _Abort("merge-target-not-older")
            read: StoreResult = yield Read(f"{base}/{body['slice']}")
            if not read.ok or read.body is None:
                raise _Abort("merge-target-read-failed")
            entries = dict(json.loads(read.body)["entries"])
            fg_name = f"{partition(fg)}/fg{fg}-0"
            self._txn_set(reads=[{"fg": fg_name, "path": body["slice"], "entries": dict(entries)}],
                          target=body["slice"], found=body["slice"] if op["key"] in entries else None)
        inflight = Instant(requested.requested, "commit", State.INFLIGHT, salt=requested.salt)
        yield from self._instant(inflight, b"")
        # the new file slice
        if kind == "delete":
            entries.pop(op["key"], None)
        else:
            entries[op["key"]] = op["value"]
        if fg not in self.partitions:
            meta = partition_metadata_text(requested.requested).encode()
            yield CreateIfAbsent(partition_metadata_key(base, partition(fg)), meta)
            self.partitions.add(fg)
        path = slice_path(fg, requested.id)
        self._txn_set(write={"fg": f"{partition(fg)}/fg{fg}-0", "path": path, "key": op["key"],
                             "value": op["value"] if kind != "delete" else None})
        yield from self._write(
            f"{base}/{path}",
            {"fg": fg, "time": requested.requested, "salt": requested.salt, "entries": entries},
        )
        # index update, with the primary-key check
        if tl.cc == "optimistic":
            yield from self._take_table_lock()
        if kind == "insert" and tl.pk_check_on:
            now_at: StoreResult = yield Read(index_key(base, op["key"]))
            if now_at.ok and now_at.body is not None and int(now_at.body) != fg:
                raise _Abort("primary-key-conflict")
        idx: StoreResult = yield Put(index_key(base, op["key"]), str(fg).encode())
        if not idx.ok:
            raise _Abort("index-write-failed")
        # OCC: a completed instant on our file group newer than our merge target?
        if tl.cc == "optimistic":
            completed = yield from self._completed()
            for _at, (inst, body) in enumerate(completed):  # _at: the loop's position
                if body.get("fg") == fg and inst.requested > merge_ts:
                    yield Record("conflict", "info", {"instant": requested.id, "other": inst.id, "fg": fg})
                    raise _Abort("occ-conflict")
        aux = {"key": op["key"], "kind": kind, "value": op["value"] if kind != "delete" else None}
        merge = format_instant(merge_ts) if merge_ts else None
        body = {"fg": fg, "slice": path, "merge": merge, "aux": aux, "entries": len(entries)}
        result = yield from self._complete(requested, body)
        return result
