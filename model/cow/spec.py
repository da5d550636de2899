"""The v5 copy-on-write commit protocol as pure transition functions.

This follows the TLA+ specification ``hudi/v5_spec/basic_cow`` (module ``hudi``
and its helpers ``hudi_timeline``, ``hudi_file_group``, ``hudi_timestamp``) step
for step: one TLA+ action is one transition here, so breadth-first depths and
shortest counterexamples count the same states as TLC.  The encoding is a
bijection of the specification's variables, so distinct-state counts compare.

State (a tuple of ints and tuples, hashable, deterministic hash):

``(writers, table_lock, fg_lock, mapping, timeline, files, ts_counter, kv_log, op_count)``

* ``writers[w]``: ``(READY,)``, ``(FAILED,)`` or the flat record
  ``(phase, action_ts, op_type, key, value, salt, file_id, merge_ts, merge_salt, *merge_entries)``;
  ``file_id`` 0 is Nil, ``merge_ts`` 0 means no merge target (timestamps start at 1).
  The writer's ``instant`` and ``new_file_slice`` fields of the TLA+ record are
  functions of its phase and are not stored.
* ``table_lock``: 0 (Nil) or writer number ``w + 1``.  As in the specification,
  UpdateIndexes sets it in every mode and only OCC ever releases it.
* ``fg_lock[f]``: 0 or ``w + 1`` for file group ``f + 1``.
* ``mapping[k]``: the file group of key ``k`` (0: unmapped).  The TLA+ ``key_index``
  always equals the keys that are mapped, so it is not stored twice.
* ``timeline``: sorted ``(ts, state, salt, file_id)``, one per instant file;
  ``file_id`` is the completed instant's payload (0 for requested/inflight).
* ``files[f]``: sorted file slices ``(commit_ts, salt, *entries)`` of group ``f + 1``.
* entries: one int per key, 0 absent, ``v + 1`` for value ``v``.
* ``kv_log[k]``: the committed operations ``(op_type, value, ts)`` on key ``k``
  in commit order (the auxiliary variable ``aux_kv_log``).
* ``salt``: the started-operation count when salts are on, else 0 everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.cow.config import CC, CowConfig

# Writer phases (READY and FAILED are the one-element records).
READY = 0
FAILED = 1
REQUEST = 2
LOOKUP = 3
READ = 4
WRITE = 5
UPDATE_INDEX = 6
OCC_CHECK = 7
COMMIT = 8

PHASE_NAMES = ("Ready", "Failed", "RequestPhase", "LookupPhase", "ReadPhase", "WritePhase",
               "UpdateIndexPhase", "OCC_Phase", "CommitPhase")

# Operation types.
UPSERT = 0
DELETE = 1
INSERT = 2
UPDATE = 3
OP_NAMES = ("Upsert", "Delete", "Insert", "Update")

# Instant states.
REQUESTED = 0
INFLIGHT = 1
COMPLETED = 2
STATE_NAMES = ("requested", "inflight", "completed")

# Actions (the TLA+ action names).
OBTAIN_TS = 0
APPEND_REQUESTED = 1
KEY_LOOKUP = 2
READ_MERGE_TARGET = 3
WRITE_FILE_SLICES = 4
UPDATE_INDEXES = 5
OCC_CHECK_ACTION = 6
APPEND_COMMIT = 7
WRITER_FAIL = 8
ACTION_NAMES = ("ObtainTimestamp", "AppendRequestedToTimeline", "KeyLookup", "ReadMergeTargetFileSlice",
                "WriteFileSlices", "UpdateIndexes", "OptimisticConcurrencyCheck",
                "AppendCommitToTimeline", "WriterFail")

# Field offsets in an active writer record.
W_PHASE, W_TS, W_OP, W_KEY, W_VALUE, W_SALT, W_FID, W_MTS, W_MSALT, W_ENTRIES = range(10)

Writer = tuple[int, ...]
Instant = tuple[int, int, int, int]
Slice = tuple[int, ...]
LoggedOp = tuple[int, int, int]
Timeline = tuple[Instant, ...]
Files = tuple[tuple[Slice, ...], ...]
KvLog = tuple[tuple[LoggedOp, ...], ...]
State = tuple[tuple[Writer, ...], int, tuple[int, ...], tuple[int, ...], Timeline, Files, int, KvLog, int]
Transition = tuple[int, int, State]

READY_REC: Writer = (READY,)
FAILED_REC: Writer = (FAILED,)


def put_instant(timeline: Timeline, inst: Instant) -> Timeline:
    """Write an instant file, replacing one with the same id (ts, state, salt)."""
    ts, st, salt = inst[0], inst[1], inst[2]
    kept = [e for e in timeline if not (e[0] == ts and e[1] == st and e[2] == salt)]
    kept.append(inst)
    kept.sort()
    return tuple(kept)


def has_instant(timeline: Timeline, ts: int, st: int, salt: int) -> bool:
    """Whether an instant file with this id exists."""
    return any(e[0] == ts and e[1] == st and e[2] == salt for e in timeline)


def find_slice(slices: Sequence[Slice], ts: int, salt: int) -> Slice | None:
    """The file slice with this commit time and salt in one file group, if any."""
    for sl in slices:
        if sl[0] == ts and sl[1] == salt:
            return sl
    return None


def max_action_ts(timeline: Timeline) -> int:
    """MaxActionTs: the highest action time of any instant, 0 on an empty timeline."""
    return max((e[0] for e in timeline), default=0)


class CowSpec:
    """Initial state and transition relation for one configuration."""

    def __init__(self, cfg: CowConfig) -> None:
        cfg.validate()
        self.cfg = cfg
        self.n_writers = cfg.writers
        self.n_keys = cfg.keys
        self.n_fgs = cfg.file_groups
        self._zero_entries: tuple[int, ...] = (0,) * cfg.keys

    def initial(self) -> State:
        """Init: every writer ready, no locks, empty timeline, file groups and index."""
        cfg = self.cfg
        return ((READY_REC,) * cfg.writers, 0, (0,) * cfg.file_groups, (0,) * cfg.keys, (),
                ((),) * cfg.file_groups, 0, ((),) * cfg.keys, 0)

    def _free_locks(self, wid: int, phase: int, tlock: int,
                    fglock: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        """FreeAnyLocks: what the writer's locks become when it aborts, commits or fails."""
        if phase in (REQUEST, LOOKUP):
            return tlock, fglock
        cc = self.cfg.cc
        if cc == CC.OPTIMISTIC and tlock == wid:
            return 0, fglock
        if cc == CC.PESSIMISTIC and wid in fglock:
            return tlock, tuple(0 if x == wid else x for x in fglock)
        return tlock, fglock

    def successors(self, s: State) -> list[Transition]:
        """All (action, writer, next state) of Next from ``s``, in a fixed order."""
        cfg = self.cfg
        writers, tlock, fglock, mapping, tl, files, ctr, kvlog, opc = s
        out: list[Transition] = []
        for w, wr in enumerate(writers):
            phase = wr[0]
            if phase == FAILED:
                continue
            wid = w + 1
            if phase == READY:
                if opc >= cfg.ops:
                    continue
                tss = (ctr + 1,) if cfg.monotonic_ts else tuple(range(1, max_action_ts(tl) + 2))
                salt = opc if cfg.salt else 0
                z = self._zero_entries
                for key in range(cfg.keys):
                    for value in range(cfg.values):
                        for op in (UPSERT, DELETE):
                            for ts in tss:
                                nw: Writer = (REQUEST, ts, op, key, value, salt, 0, 0, 0, *z)
                                nctr = max(ctr, ts) if cfg.monotonic_ts else ctr
                                out.append((OBTAIN_TS, w, (_set(writers, w, nw), tlock, fglock, mapping, tl,
                                                           files, nctr, kvlog, opc + 1)))
                continue
            ts = wr[W_TS]
            salt = wr[W_SALT]
            if phase == REQUEST:
                present = has_instant(tl, ts, REQUESTED, salt)
                if not cfg.put_if_absent or not present:
                    ntl = tl if present else put_instant(tl, (ts, REQUESTED, salt, 0))
                    nw = (LOOKUP, *wr[1:])
                    out.append((APPEND_REQUESTED, w, (_set(writers, w, nw), tlock, fglock, mapping, ntl,
                                                      files, ctr, kvlog, opc)))
                else:
                    out.append((APPEND_REQUESTED, w, (_set(writers, w, READY_REC), tlock, fglock, mapping,
                                                      tl, files, ctr, kvlog, opc)))
            elif phase == LOOKUP:
                key = wr[W_KEY]
                exists = mapping[key] != 0
                op = wr[W_OP]
                if op == UPSERT:
                    op = UPDATE if exists else INSERT
                if not exists and op == DELETE:
                    out.append((KEY_LOOKUP, w, (_set(writers, w, READY_REC), tlock, fglock, mapping, tl,
                                                files, ctr, kvlog, opc)))
                    continue
                fids = (mapping[key],) if exists else range(1, cfg.file_groups + 1)
                for fid in fids:
                    nw = (READ, ts, op, key, wr[W_VALUE], salt, fid, *wr[W_MTS:])
                    out.append((KEY_LOOKUP, w, (_set(writers, w, nw), tlock, fglock, mapping, tl, files, ctr,
                                                kvlog, opc)))
            elif phase == READ:
                fid = wr[W_FID]
                if cfg.cc == CC.PESSIMISTIC and fglock[fid - 1] != 0:
                    continue
                merge_ts = max((e[0] for e in tl if e[1] == COMPLETED), default=0)
                target: Instant | None = None
                for e in tl:
                    if e[1] == COMPLETED and e[3] == fid and e[0] <= merge_ts and (
                            target is None or (e[0], e[2]) > (target[0], target[2])):
                        target = e
                fslice: Slice | None = None
                if target is not None:
                    fslice = find_slice(files[fid - 1], target[0], target[2])
                    assert fslice is not None, "a completed instant always names a written slice"
                valid = fslice is None or fslice[0] < ts
                if valid and not (cfg.put_if_absent and has_instant(tl, ts, INFLIGHT, salt)):
                    ntl = put_instant(tl, (ts, INFLIGHT, salt, 0))
                    merge = fslice if fslice is not None else (0, 0, *self._zero_entries)
                    nw = (WRITE, *wr[1:W_MTS], *merge)
                    nfl = fglock
                    if cfg.cc == CC.PESSIMISTIC:
                        nfl = fglock[:fid - 1] + (wid,) + fglock[fid:]
                    out.append((READ_MERGE_TARGET, w, (_set(writers, w, nw), tlock, nfl, mapping, ntl, files,
                                                       ctr, kvlog, opc)))
                else:
                    ntlock, nfl = self._free_locks(wid, phase, tlock, fglock)
                    out.append((READ_MERGE_TARGET, w, (_set(writers, w, READY_REC), ntlock, nfl, mapping, tl,
                                                       files, ctr, kvlog, opc)))
            elif phase == WRITE:
                fid = wr[W_FID]
                group = files[fid - 1]
                present_slice = find_slice(group, ts, salt)
                if not cfg.put_if_absent or present_slice is None:
                    entries = list(wr[W_ENTRIES:])
                    key = wr[W_KEY]
                    entries[key] = 0 if wr[W_OP] == DELETE else wr[W_VALUE] + 1
                    new_slice: Slice = (ts, salt, *entries)
                    ngroup = [sl for sl in group if not (sl[0] == ts and sl[1] == salt)]
                    ngroup.append(new_slice)
                    ngroup.sort()
                    nfiles = files[:fid - 1] + (tuple(ngroup),) + files[fid:]
                    nw = (UPDATE_INDEX, *wr[1:])
                    out.append((WRITE_FILE_SLICES, w, (_set(writers, w, nw), tlock, fglock, mapping, tl,
                                                       nfiles, ctr, kvlog, opc)))
                else:
                    ntlock, nfl = self._free_locks(wid, phase, tlock, fglock)
                    out.append((WRITE_FILE_SLICES, w, (_set(writers, w, READY_REC), ntlock, nfl, mapping,
                                                       tl, files, ctr, kvlog, opc)))
            elif phase == UPDATE_INDEX:
                if cfg.cc == CC.OPTIMISTIC and tlock != 0:
                    continue
                key = wr[W_KEY]
                fid = wr[W_FID]
                if wr[W_OP] == INSERT and cfg.pk_check and mapping[key] != 0 and mapping[key] != fid:
                    ntlock, nfl = self._free_locks(wid, phase, tlock, fglock)
                    out.append((UPDATE_INDEXES, w, (_set(writers, w, READY_REC), ntlock, nfl, mapping, tl,
                                                    files, ctr, kvlog, opc)))
                else:
                    nmap = mapping[:key] + (fid,) + mapping[key + 1:]
                    nphase = OCC_CHECK if cfg.cc == CC.OPTIMISTIC else COMMIT
                    nw = (nphase, *wr[1:])
                    out.append((UPDATE_INDEXES, w, (_set(writers, w, nw), wid, fglock, nmap, tl, files, ctr,
                                                    kvlog, opc)))
            elif phase == OCC_CHECK:
                fid = wr[W_FID]
                orig = wr[W_MTS]
                if any(e[1] == COMPLETED and e[3] == fid and e[0] > orig for e in tl):
                    ntlock, nfl = self._free_locks(wid, phase, tlock, fglock)
                    out.append((OCC_CHECK_ACTION, w, (_set(writers, w, READY_REC), ntlock, nfl, mapping, tl,
                                                      files, ctr, kvlog, opc)))
                else:
                    nw = (COMMIT, *wr[1:])
                    out.append((OCC_CHECK_ACTION, w, (_set(writers, w, nw), tlock, fglock, mapping, tl,
                                                      files, ctr, kvlog, opc)))
            elif phase == COMMIT:
                ntlock, nfl = self._free_locks(wid, phase, tlock, fglock)
                if not cfg.put_if_absent or not has_instant(tl, ts, COMPLETED, salt):
                    ntl = put_instant(tl, (ts, COMPLETED, salt, wr[W_FID]))
                    key = wr[W_KEY]
                    nlog = kvlog[:key] + (kvlog[key] + ((wr[W_OP], wr[W_VALUE], ts),),) + kvlog[key + 1:]
                else:
                    ntl, nlog = tl, kvlog
                out.append((APPEND_COMMIT, w, (_set(writers, w, READY_REC), ntlock, nfl, mapping, ntl, files,
                                               ctr, nlog, opc)))
                out.append((WRITER_FAIL, w, (_set(writers, w, FAILED_REC), ntlock, nfl, mapping, tl, files,
                                             ctr, kvlog, opc)))
        return out


def _set(writers: tuple[Writer, ...], w: int, rec: Writer) -> tuple[Writer, ...]:
    return writers[:w] + (rec,) + writers[w + 1:]
