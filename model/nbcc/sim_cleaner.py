"""Failed writes of the simulated NBCC table: each deltacommit's heartbeat, and the clean that rolls
back deltacommits whose heartbeat expired (Hudi's LAZY failed-writes policy), as sans-I/O steps.

Multi-writer Hudi cleans failed writes lazily
(``HoodieWriteConfig.Builder#autoAdjustConfigsForConcurrencyMode`` sets LAZY for a multi-writer
concurrency mode, NBCC among them; per a secondary reading, not re-read).
The Java followed (1.x):

* heartbeat (``HoodieHeartbeatClient`` at apache/hudi ``b1e11af9``): ``start`` (162-179) writes
  ``.hoodie/.heartbeat/<instant>`` at once and then every ``hoodie.client.heartbeat.interval_in_ms``
  (a fixed-rate timer); ``BaseHoodieWriteClient#startCommit`` starts it inside the transaction,
  before the requested instant is created; ``stop`` (187-194) cancels the timer and deletes the file
  (``postCommit``, after the completed instant); an instant counts as failed once
  ``now - last heartbeat > interval x tolerable misses`` (``isHeartbeatExpired``, 235-252; a missing
  file counts as time 0).  A writer about to commit aborts when its own heartbeat expired
  (``HeartbeatUtils#abortIfHeartbeatExpired``, called by ``BaseHoodieWriteClient#commitStats`` before
  the transaction);
* the clean (``BaseHoodieTableServiceClient#clean``): a writer cleans after each commit
  (``hoodie.clean.automatic`` true, ``hoodie.clean.async`` false: ``mayBeCleanAndArchive`` runs inline,
  outside the commit's lock);
  under LAZY it first rolls back failed writes (``CleanerUtils#rollbackFailedWrites``, CLEAN_ACTION):
  ``getInstantsToRollbackForLazyCleanPolicy`` takes the pending instants of the commits timeline
  (compaction and clustering excluded) whose heartbeat expired, lists the timeline again and keeps those
  still pending; ``rollbackFailedWrites`` rolls them back newest first and deletes their heartbeat files;
* a rollback (``BaseHoodieTableServiceClient#rollback``, ``BaseRollbackActionExecutor#finishRollback``):
  in one lock hold, a new instant time and the rollback plan (``<r>.rollback.requested``); then
  ``<r>.rollback.inflight``, the deletion of the failed instant's files (table version 8 deletes log
  files: no rollback command blocks), and in one lock hold the metadata-table update, the deletion of
  the failed instant's requested and inflight files and the completed ``<r>_<tc>.rollback``.

Model simplifications: the heartbeat file's body holds the writer's clock reading (Hudi reads the
file's modification time, the storage's clock); the files to delete are found by listing the
partition (Hudi's default finds them through its markers, which name the same files; markers are not
modelled); a pending rollback left by a crash is finished by the next clean; the clean itself
(deleting old file slices, ``CleanActionExecutor``) is not modelled.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.explorable import Keyer
from model.nbcc.sim_io import (
    Gen,
    TableLoader,
    Times,
    create_resolved,
    list_until_answered,
    read_until_answered,
)
from model.nbcc.sim_layout import PARTITION, completed_key, data_key, inflight_key, instant_key, requested_key
from model.runtime.effects import Cancel, Delete, Now, Put, Record, Sleep, Spawn, StoreResult
from model.timeline.avro import write_container
from model.timeline.layout import (
    State,
    format_instant,
    is_log_file_name,
    parse_instant,
    parse_log_file_name,
)
from model.timeline.metadata import decode_instant_metadata

_NS = "org.apache.hudi.avro.model"
_STRING = {"type": "string", "avro.java.string": "String"}


def _opt(name: str, kind: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", kind], "default": None}


_INSTANT_INFO = {"type": "record", "name": "HoodieInstantInfo", "fields": [_opt("commitTime", _STRING),
                                                                           _opt("action", _STRING)]}
ROLLBACK_PLAN_SCHEMA: dict[str, Any] = {  # a subset of Hudi's HoodieRollbackPlan
    "type": "record",
    "name": "HoodieRollbackPlan",
    "namespace": _NS,
    "fields": [
        _opt("instantToRollback", _INSTANT_INFO),
        _opt("RollbackRequests", {"type": "array", "items": {
            "type": "record", "name": "HoodieRollbackRequest", "fields": [
                _opt("partitionPath", _STRING), _opt("fileId", _STRING),
                _opt("filesToBeDeleted", {"type": "array", "items": _STRING})]}}),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
ROLLBACK_METADATA_SCHEMA: dict[str, Any] = {  # a subset of Hudi's HoodieRollbackMetadata
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": _NS,
    "fields": [
        _opt("startRollbackTime", _STRING),
        _opt("totalFilesDeleted", "int"),
        _opt("commitsRollback", {"type": "array", "items": _STRING}),
        _opt("partitionMetadata", {"type": "map", "values": {
            "type": "record", "name": "HoodieRollbackPartitionMetadata", "fields": [
                _opt("partitionPath", _STRING),
                _opt("successDeleteFiles", {"type": "array", "items": _STRING}),
                _opt("failedDeleteFiles", {"type": "array", "items": _STRING})]}}),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


def heartbeat_key(base: str, instant: int) -> str:
    """``HoodieTableMetaClient#getHeartbeatFolderPath`` + the instant time."""
    return f"{base}/.hoodie/.heartbeat/{format_instant(instant)}"


def is_expired(now_ms: int, last_ms: int | None, expiry_ms: int) -> bool:
    """``HoodieHeartbeatClient#isHeartbeatExpired``: ``now - last > interval x misses`` (no file: last 0)."""
    return now_ms - (last_ms or 0) > expiry_ms


@dataclass
class Heartbeat:
    """A writer's heartbeat of one instant (``HoodieHeartbeatClient.Heartbeat``): its task and the
    writer's clock at its last beat."""

    instant: int
    task: str
    last_ms: int | None = None

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The instant (a time, or a counter's value, typed as it was made), its task, its last beat."""
        return (k.value(self.instant), self.task, k.value(self.last_ms))


def _beat(base: str, hb: Heartbeat) -> Gen:
    """``updateHeartbeat``: write the heartbeat file; True when the store took it."""
    now: int = yield Now()
    res: StoreResult = yield Put(heartbeat_key(base, hb.instant), str(now).encode())
    if res.ok:
        hb.last_ms = now
    return res.ok


def _timer(base: str, hb: Heartbeat, interval_ms: int) -> Gen:
    """The heartbeat's timer: a beat every interval (a failed beat is tried again at the next one)."""
    start: int = yield Now(monotonic=True)
    k = 1
    while True:
        now: int = yield Now(monotonic=True)
        yield Sleep(max(0, start + k * interval_ms - now))
        k += 1
        yield from _beat(base, hb)


def start_heartbeat(base: str, instant: int, interval_ms: int) -> Gen:
    """``HoodieHeartbeatClient#start``: the first beat, then the timer; the Heartbeat, or None when the
    first beat failed (Hudi throws ``HoodieHeartbeatException`` and the commit does not start)."""
    hb = Heartbeat(instant, f"heartbeat-{format_instant(instant)}")
    if not (yield from _beat(base, hb)):
        return None
    yield Spawn(hb.task, _timer(base, hb, interval_ms))
    return hb


def stop_heartbeat(base: str, hb: Heartbeat, delete: bool) -> Gen:
    """Stop the timer; with ``delete`` also delete the file (``HoodieHeartbeatClient#stop``, after a
    commit).  A failed attempt's client is closed (``stopHeartbeatTimers``): its file stays and ages."""
    yield Cancel(hb.task)
    if delete:
        yield Delete(heartbeat_key(base, hb.instant))


def heartbeat_expired(base: str, instant: int, now_ms: int, expiry_ms: int) -> Gen:
    """``isHeartbeatExpired`` of another client's instant: its heartbeat file read from storage (none:
    expired)."""
    body = yield from read_until_answered(heartbeat_key(base, instant))
    return is_expired(now_ms, int(body) if body else None, expiry_ms)


def expired_own(hb: Heartbeat, expiry_ms: int) -> Gen:
    """``HeartbeatUtils#abortIfHeartbeatExpired`` for the writer's own instant (its in-memory time)."""
    now: int = yield Now()
    return is_expired(now, hb.last_ms, expiry_ms)


def rollback_plan_body(instant: int, files: Sequence[str]) -> bytes:
    """``<r>.rollback.requested``: the instant to roll back and the files to delete."""
    by_group: dict[str, list[str]] = {}
    for name in files:
        by_group.setdefault(parse_log_file_name(name).file_id, []).append(name)
    return write_container(ROLLBACK_PLAN_SCHEMA, [{
        "instantToRollback": {"commitTime": format_instant(instant), "action": "deltacommit"},
        "RollbackRequests": [{"partitionPath": PARTITION, "fileId": fid, "filesToBeDeleted": names}
                             for fid, names in sorted(by_group.items())],
        "version": 1,
    }])


def parse_rollback_plan(body: bytes, key: str) -> tuple[int, list[str]]:
    """Inverse of :func:`rollback_plan_body`: the instant and the files."""
    raw = decode_instant_metadata(body, key)
    instant = parse_instant(str((raw.get("instantToRollback") or {}).get("commitTime")))
    files = [f for req in raw.get("RollbackRequests") or () for f in req.get("filesToBeDeleted") or ()]
    return instant, files


def rollback_metadata_body(rollback: int, instant: int, deleted: Sequence[str]) -> bytes:
    """The completed rollback's ``HoodieRollbackMetadata``."""
    return write_container(ROLLBACK_METADATA_SCHEMA, [{
        "startRollbackTime": format_instant(rollback),
        "totalFilesDeleted": len(deleted),
        "commitsRollback": [format_instant(instant)],
        "partitionMetadata": {PARTITION: {"partitionPath": PARTITION, "successDeleteFiles": list(deleted),
                                          "failedDeleteFiles": []}},
        "version": 1,
    }])


class Cleaner:
    """One writer's clean: LAZY rollback of failed deltacommits (``rollbackFailedWrites``)."""

    def __init__(self, base: str, times: Times, loader: TableLoader, expiry_ms: int) -> None:
        self.base = base
        self.times = times
        self.loader = loader
        self.expiry_ms = expiry_ms

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its table, the time generator and table view it shares with its writer, the heartbeat expiry."""
        return (self.base, k.value(self.times), k.value(self.loader), self.expiry_ms)

    def clean(self) -> Gen:
        """Roll back every failed deltacommit (pending rollbacks first); returns the instants rolled back."""
        table = yield from self.loader.load()
        if table is None:
            yield Record("clean", "fail", {"reason": "timeline not read"})
            return []
        resume = yield from self._pending_rollbacks(table.timeline.pending())
        pending = [i.requested for i in table.timeline.pending() if i.requested_action == "deltacommit"]
        now: int = yield Now()
        expired = []
        _over = sorted(pending, reverse=True)
        for _at, instant in enumerate(_over):  # getReverseOrderedInstants  # the loop's position
            if (yield from heartbeat_expired(self.base, instant, now, self.expiry_ms)):
                expired.append(instant)
        if expired:  # only those still pending after listing the timeline again
            again = yield from self.loader.load()
            still = set() if again is None else {i.requested for i in again.timeline.pending()}
            expired = [i for i in expired if i in still]
        done = []
        _over2 = sorted(set(expired) | set(resume), reverse=True)
        for _at2, instant in enumerate(_over2):  # the loop's position
            if (yield from self._rollback(instant, resume.get(instant))):
                done.append(instant)
            yield from _delete_until_answered(heartbeat_key(self.base, instant))
        if done or expired:
            yield Record("clean", "ok", {"rolled_back": [format_instant(i) for i in done]})
        return done

    def _pending_rollbacks(self, pending: Sequence[Any]) -> Gen:
        """``getPendingRollbackInfos``: rollbacks a crash left pending, by the instant they roll back."""
        out: dict[int, int] = {}
        for _at, inst in enumerate(pending):  # _at: the loop's position
            if inst.requested_action != "rollback":
                continue
            key = requested_key(self.base, inst.requested, "rollback")
            body = yield from read_until_answered(key)
            if body:
                target, _ = parse_rollback_plan(body, key)
                out[target] = inst.requested
        return out

    def _rollback(self, instant: int, pending_rollback: int | None) -> Gen:
        """Roll ``instant`` back (resuming ``pending_rollback`` when a crash left one); True when done."""
        files = yield from self._files_of(instant)
        if pending_rollback is None:
            yield from self.times.begin()
            table = yield from self.loader.load()
            pending_now = set() if table is None else {i.requested for i in table.timeline.pending()}
            if instant not in pending_now:  # completed or rolled back meanwhile: "Cannot find instant"
                yield from self.times.end()
                return False
            r = yield from self.times.next("instant")
            created = yield from create_resolved(
                requested_key(self.base, r, "rollback"), rollback_plan_body(instant, files)
            )
            yield from self.times.end()
            if not created:
                return False
        else:
            r = pending_rollback
        yield Record("rollback", "invoke", {"rollback": format_instant(r), "instant": format_instant(instant),
                                            "files": list(files)})
        res: StoreResult = yield Put(inflight_key(self.base, r, "rollback"), b"")
        if not res.ok:
            yield Record("rollback", "fail",
                         {"rollback": format_instant(r), "reason": f"inflight {res.outcome.name}"})
            return False
        for _at, name in enumerate(files):  # _at: the loop's position
            yield from _delete_until_answered(data_key(self.base, parse_log_file_name(name)))
        yield from self.times.begin()
        table = yield from self.loader.load()
        inst = None if table is None else table.timeline.get(r)
        if inst is not None and inst.is_completed:  # another cleaner resumed and finished this rollback
            yield from self.times.end()
            return True
        tc = yield from self.times.next("completion")
        _over2 = (State.INFLIGHT, State.REQUESTED)
        for _at2, state in enumerate(_over2):  # deleteInflightAndRequestedInstant  # the loop's position
            yield from _delete_until_answered(instant_key(self.base, instant, "deltacommit", state))
        done = yield from create_resolved(
            completed_key(self.base, r, tc, "rollback"), rollback_metadata_body(r, instant, files)
        )
        yield from self.times.end()
        yield Record("rollback", "ok" if done else "fail", {
            "rollback": format_instant(r), "instant": format_instant(instant),
            "completion": format_instant(tc)})
        return bool(done)

    def _files_of(self, instant: int) -> Gen:
        """The log files ``instant`` wrote (by listing the partition; Hudi's markers name the same)."""
        prefix = f"{self.base}/{PARTITION}/"
        names = []
        for key in (yield from list_until_answered(prefix)):
            name = key[len(prefix):]
            if is_log_file_name(name) and parse_log_file_name(name).instant == instant:
                names.append(name)
        return sorted(names)


def _delete_until_answered(key: str) -> Gen:
    """Delete ``key``, again until the store answers (a missing key is deleted already)."""
    while True:
        res: StoreResult = yield Delete(key)
        if res.ok or res.outcome.name == "NOT_FOUND":
            return
        yield Sleep(50)


def rolled_back(events: Sequence[Any]) -> Mapping[str, str]:
    """Instant -> rollback instant of every rollback the history shows completed."""
    return {e.value["instant"]: e.value["rollback"] for e in events
            if e.f == "rollback" and e.type == "ok" and isinstance(e.value, dict)}
