"""Commits of a copy-on-write key-value table over file groups, as sans-I/O writers (TLA+ ``basic_cow``).

One operation of a :class:`CowWriter` (an upsert or a delete of one key, with a value unique
to the operation):

1. take an instant time (``model/timeline/timegen.py``) and write ``<ts>.commit.requested``;
2. look the key up in the index (``<base>/.hoodie/index/<key>``): its file group, or a file
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
store's record of the write.  History events: ``op`` invoke / ok / fail ``{reason}``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Generator
from typing import Any

from model.config import LockConfig, WorkloadConfig
from model.effects import CreateIfAbsent, Delete, Effect, Interrupted, Put, Read, Record, Sleep, StoreResult
from model.storage_lock import StorageLockProvider
from model.timeline.config import TimelineConfig
from model.timeline.instants import Instant, format_time, read_completed, write_instant
from model.timeline.timegen import MonotonicSource, TimeGenerator, release
from model.workload import draw

Gen = Generator[Effect, Any, Any]


def index_key(base: str, key: str) -> str:
    """The store key of a record key's index entry (its file group)."""
    return f"{base}/.hoodie/index/{key}"


def slice_key(base: str, fg: int, instant_id: str) -> str:
    """The store key of a file slice (a base file) of file group ``fg`` written by instant ``instant_id``."""
    return f"{base}/fg{fg}/fg{fg}-0_0-0-0_{instant_id}.parquet"


def fg_lock_key(base: str, fg: int) -> str:
    return f"{base}/.hoodie/.locks/fg{fg}.lock"


class _Abort(Exception):
    """The operation ends without committing; ``args[0]`` is the reason."""


class CowWriter:
    """One writer process: a loop of upserts and deletes committed to the table."""

    def __init__(
        self,
        node: str,
        rng: random.Random,
        new_id: Any,
        tl: TimelineConfig,
        lock: LockConfig,
        workload: WorkloadConfig,
        source: MonotonicSource,
        start_ms: int | None = None,
    ) -> None:
        self.node = node
        self.rng = rng
        self.new_id = new_id
        self.tl = tl
        self.base = lock.base_path
        self.workload = workload
        self.lock = StorageLockProvider(lock, new_id)
        self.times = TimeGenerator(tl.time_config, self.lock, source)
        self.start_ms = start_ms
        self.held_fg: int | None = None
        self.ops = 0

    # ---- the loop ------------------------------------------------------------------------

    def run(self) -> Gen:
        """Start, then run operations until the bound (or the run's end); a failed writer stops for good."""
        yield Sleep(draw(self.rng, self.workload.start_ms) if self.start_ms is None else self.start_ms)
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
        try:
            if self.tl.workload == "commits":
                result = yield from self._commit_op(op)
            else:
                result = yield from self._times_op()
        except _Abort as a:
            yield from self._release_all()
            yield Record("op", "fail", {**op, "reason": a.args[0]})
            return "aborted"
        except Interrupted:
            yield from self._release_all()
            yield Record("op", "fail", {**op, "reason": "interrupted"})
            return "aborted"
        yield Record("op", "ok" if result != "failed" else "info", {**op, **({"result": result})})
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
            yield Sleep(self.tl.fg_lock_poll_ms)
            waited += self.tl.fg_lock_poll_ms

    def _release_all(self) -> Gen:
        if self.lock.lock is not None:
            yield from release(self.lock)
        if self.held_fg is not None:
            yield Delete(fg_lock_key(self.base, self.held_fg))
            self.held_fg = None

    # ---- steps ---------------------------------------------------------------------------

    def _write(self, key: str, body: dict[str, Any]) -> Gen:
        data = json.dumps(body, sort_keys=True).encode()
        result: StoreResult = yield (CreateIfAbsent(key, data) if self.tl.put_if_absent else Put(key, data))
        if not result.ok:
            raise _Abort(f"write-{result.outcome.name.lower()}")

    def _instant(self, inst: Instant, body: dict[str, Any]) -> Gen:
        result: StoreResult = yield from write_instant(
            self.base, self.tl.layout, inst, body, self.tl.put_if_absent
        )
        if not result.ok:
            raise _Abort(f"{inst.state}-{result.outcome.name.lower()}")

    def _new_instant_time(self) -> Gen:
        ts = yield from self.times.generate("instant")
        if ts is None:
            raise _Abort("time-lock-timeout")
        salt = self.new_id().replace("-", "")[:8] if self.tl.salt else ""
        return Instant(ts, salt, "commit", "requested")

    def _complete(self, requested: Instant, body: dict[str, Any]) -> Gen:
        """Generate the completion time (v8) and write the completed instant, in one lock hold if any."""
        needs_lock = self.tl.cc == "optimistic" or (self.tl.layout == "v8" and self.tl.time_config.needs_lock)
        if needs_lock:
            yield from self._take_table_lock()
        completion = None
        if self.tl.layout == "v8":
            completion = yield from self.times.generate("completion", lock_held=self.lock.lock is not None)
            if completion is None:
                raise _Abort("time-lock-timeout")
        if self.tl.fail_commit_prob and self.rng.random() < self.tl.fail_commit_prob:
            yield from self._release_all()
            yield Record("writer-fail", "info", {"instant": requested.id})
            return "failed"
        done = Instant(requested.time, requested.salt, requested.action, "completed", completion)
        # the "write" pause trigger of the fault plan fires here: decided, not yet sent
        yield Record("write", "invoke", {"instant": requested.id, "completion": completion})
        yield from self._instant(done, body)
        yield from self._release_all()
        return "committed"

    def _times_op(self) -> Gen:
        requested = yield from self._new_instant_time()
        yield from self._instant(requested, {})
        result = yield from self._complete(requested, {})
        return result

    def _commit_op(self, op: dict[str, Any]) -> Gen:
        tl, base = self.tl, self.base
        requested = yield from self._new_instant_time()
        yield from self._instant(requested, {"op": op})
        # key lookup
        got: StoreResult = yield Read(index_key(base, op["key"]))
        if got.ok and got.body is not None:
            fg, kind = int(got.body), ("delete" if op["kind"] == "delete" else "update")
        elif got.outcome.name == "NOT_FOUND":
            if op["kind"] == "delete":
                raise _Abort("delete-of-absent-key")
            fg, kind = self.rng.randint(1, tl.file_groups), "insert"
        else:
            raise _Abort("index-read-failed")
        if tl.cc == "pessimistic":
            yield from self._take_fg_lock(fg)
        # merge target: the newest completed slice of the file group
        completed = yield from read_completed(base, tl.layout)
        if completed is None:
            raise _Abort("timeline-read-failed")
        mine = [(inst, body) for inst, body in completed if body.get("fg") == fg]
        entries: dict[str, str] = {}
        merge_ts = 0
        if mine:
            target, body = max(mine, key=lambda ib: (ib[0].time, ib[0].salt))
            merge_ts = target.time
            if target.time >= requested.time:
                raise _Abort("merge-target-not-older")
            read: StoreResult = yield Read(body["slice"])
            if not read.ok or read.body is None:
                raise _Abort("merge-target-read-failed")
            entries = dict(json.loads(read.body)["entries"])
        yield from self._instant(Instant(requested.time, requested.salt, "commit", "inflight"), {"op": op})
        # the new file slice
        if kind == "delete":
            entries.pop(op["key"], None)
        else:
            entries[op["key"]] = op["value"]
        path = slice_key(base, fg, requested.id)
        yield from self._write(
            path, {"fg": fg, "time": requested.time, "salt": requested.salt, "entries": entries}
        )
        # index update, with the primary-key check
        if tl.cc == "optimistic":
            yield from self._take_table_lock()
        if kind == "insert" and tl.pk_check:
            now_at: StoreResult = yield Read(index_key(base, op["key"]))
            if now_at.ok and now_at.body is not None and int(now_at.body) != fg:
                raise _Abort("primary-key-conflict")
        idx: StoreResult = yield Put(index_key(base, op["key"]), str(fg).encode())
        if not idx.ok:
            raise _Abort("index-write-failed")
        # OCC: a completed instant on our file group newer than our merge target?
        if tl.cc == "optimistic":
            completed = yield from read_completed(base, tl.layout)
            if completed is None:
                raise _Abort("timeline-read-failed")
            for inst, body in completed:
                if body.get("fg") == fg and inst.time > merge_ts:
                    yield Record("conflict", "info", {"instant": requested.id, "other": inst.id, "fg": fg})
                    raise _Abort("occ-conflict")
        aux = {"key": op["key"], "kind": kind, "value": op["value"] if kind != "delete" else None}
        result = yield from self._complete(
            requested,
            {"fg": fg, "slice": path, "merge": format_time(merge_ts) if merge_ts else None, "aux": aux},
        )
        return result
