"""What a Hudi writer reads of the table: the timeline (with each completed instant's metadata) and the
latest committed base file of every file group, as sans-I/O steps and pure functions.

The file system view (``HoodieTableFileSystemView`` on a COPY_ON_WRITE table) is the latest base file of
each file group whose instant is completed.  Its file listing comes from the metadata table
(``metadata_table``: the files the completed commits wrote, as their write stats name them) or from
storage (a listing of the partition's folder, keeping base files of completed instants).  The two
differ only for a committed base file that was deleted: the metadata table still lists it (reading it
fails), the storage listing does not (the file group falls back to its previous slice).

Replaced file groups (``AbstractTableFileSystemView``, Hudi 1.2.0): the view reads every completed
replacecommit's ``partitionToReplaceFileIds`` (``#resetFileGroupsReplaced``, lines 275-310) and its
latest-base-file APIs leave a replaced file group out whatever its slices' instants
(``#getLatestBaseFiles``, line 747; ``#getLatestFileSlices``, line 898; ``#isFileGroupReplaced``, lines
1682-1684); the time-travel APIs leave it out from the replacecommit's instant time on
(``#isFileGroupReplacedBeforeOrOn``, lines 1699-1706, used by ``#getLatestBaseFilesBeforeOrOn``, line
792).  Only ``#getLatestFileSlicesIncludingInflight`` (lines 908-919, which Hudi's bucket index and
metadata-table bootstrap use, neither modelled) keeps replaced groups: it has no such filter.  The
model's writers read through :func:`view` (the latest base files, replaced groups hidden) and the
clustering planner also skips file groups in a pending clustering plan
(``ClusteringPlanStrategy#getFileSlicesEligibleForClustering``).

The model's index is a stand-in for Hudi's SIMPLE (or BLOOM) index: it reads the keys of the latest
committed base files of the key's partition (``HoodieSimpleIndex#tagLocation`` joins the incoming keys
with those of the latest base files).  A new key goes to a small file group of the partition if there
is one (``UpsertPartitioner#assignInserts``, the model taking the first by file id), else to a new
file group with a new file id.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.explorable import Keyer
from model.runtime.effects import Effect, ListPrefix, Read, StoreResult
from model.timeline.instants import list_instants
from model.timeline.layout import Instant, State, instant_path, is_base_file_name, parse_base_file_name
from model.timeline.metadata import decode_instant_metadata, plan_file_groups
from model.timeline.modeldata import replaced_file_groups

Gen = Generator[Effect, Any, Any]


@dataclass(frozen=True, order=True)
class BaseSlice:
    """A committed base file: its file group (partition, file id), its instant, its path in the table."""

    partition: str
    file_id: str
    instant: int
    path: str

    @property
    def fg(self) -> str:
        """The file group as the model data names it: ``<partition>/<fileId>``."""
        return f"{self.partition}/{self.file_id}"


_STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def latest_states(instants: Iterable[Instant]) -> list[Instant]:
    """One instant per instant time, in its most advanced state (a completed instant's ``.requested`` and
    ``.inflight`` files stay on the timeline beside its completed file), in instant-time order."""
    best: dict[tuple[int, str], Instant] = {}
    for i in instants:
        key = (i.requested, i.salt)
        if key not in best or _STATE_ORDER[i.state] > _STATE_ORDER[best[key].state]:
            best[key] = i
    return [best[k] for k in sorted(best)]


class TimelineReader:
    """A writer's reads of the timeline.  A completed instant's metadata is read once (it never changes)."""

    def __init__(self, base: str, layout: str) -> None:
        self.base, self.layout = base, layout
        self.cache: dict[str, dict[str, Any]] = {}

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The table it reads and which completed instants' metadata it holds (it reads those no more; the
        metadata of a completed instant never changes, so its key decides it)."""
        return (self.base, self.layout, tuple(sorted(self.cache)))

    def list(self) -> Gen:
        """Every instant on the timeline in its latest state, or None when the listing failed."""
        listed: list[Instant] | None = yield from list_instants(self.base, self.layout)
        return None if listed is None else latest_states(listed)

    def metadata(self, inst: Instant) -> Gen:
        """The decoded metadata of a completed instant (or of a clustering's requested plan: it never
        changes either), or None when it could not be read."""
        key = instant_path(self.base, self.layout, inst)
        if key in self.cache:
            return self.cache[key]
        got: StoreResult = yield Read(key)
        if not got.ok or got.body is None:
            return None
        md = decode_instant_metadata(got.body, key)
        self.cache[key] = md
        return md


def slices_from_metadata(completed: Iterable[tuple[Instant, Mapping[str, Any]]]) -> list[BaseSlice]:
    """The metadata table's file listing: every base file the completed commits name in their write stats."""
    out = []
    for inst, md in completed:
        for partition, stats in (md.get("partitionToWriteStats") or {}).items():
            for stat in stats or ():
                path = stat.get("path")
                if path and stat.get("fileId"):
                    out.append(BaseSlice(str(stat.get("partitionPath") or partition), str(stat["fileId"]),
                                         inst.requested, str(path)))
    return out


def slices_from_listing(keys: Iterable[str], base: str, completed: set[int]) -> list[BaseSlice]:
    """A storage listing's base files (keys under ``base/``) whose instant is completed."""
    out = []
    prefix = base + "/"
    for key in keys:
        if not key.startswith(prefix) or key.startswith(prefix + ".hoodie/"):
            continue
        rel = key[len(prefix):]
        partition, _, name = rel.rpartition("/")
        if not is_base_file_name(name):
            continue
        bf = parse_base_file_name(name)
        if bf.instant in completed:
            out.append(BaseSlice(partition, bf.file_id, bf.instant, rel))
    return out


def latest_slices(slices: Iterable[BaseSlice], partition: str,
                  replaced: frozenset[tuple[str, str]] = frozenset()) -> list[BaseSlice]:
    """The latest base file of each file group of ``partition`` (greatest instant), by file id; a file
    group in ``replaced`` is left out (``getLatestBaseFiles``' ``!isFileGroupReplaced`` filter)."""
    latest: dict[str, BaseSlice] = {}
    for s in slices:
        if (s.partition == partition and (s.partition, s.file_id) not in replaced
                and (s.file_id not in latest or s.instant > latest[s.file_id].instant)):
            latest[s.file_id] = s
    return [latest[f] for f in sorted(latest)]


def replaced_groups(reader: TimelineReader, instants: Sequence[Instant]) -> Gen:
    """``AbstractTableFileSystemView#resetFileGroupsReplaced``: the (partition, fileId) pairs named by the
    completed replacecommits' ``partitionToReplaceFileIds`` (their metadata read); None on a failed read."""
    out: set[tuple[str, str]] = set()
    _over = [i for i in instants if i.is_completed and i.action == "replacecommit"]
    for _at, inst in enumerate(_over):  # _at: the loop's position
        md = yield from reader.metadata(inst)
        if md is None:
            return None
        out |= replaced_file_groups(md)
    return frozenset(out)


def pending_clustering_groups(reader: TimelineReader, instants: Sequence[Instant]) -> Gen:
    """``getFileGroupsInPendingClustering``: the file groups of every pending clustering's plan, read from
    its ``.clustering.requested`` file (``ClusteringUtils#getAllFileGroupsInPendingClusteringPlans``), as
    {(partition, fileId): instant time}; None on a failed read."""
    out: dict[tuple[str, str], int] = {}
    _over = [i for i in instants if not i.is_completed and i.requested_action == "clustering"]
    for _at, inst in enumerate(_over):  # _at: the loop's position
        md = yield from reader.metadata(Instant(inst.requested, "clustering", State.REQUESTED))
        if md is None:
            return None
        for fg in plan_file_groups(md):
            out[fg] = inst.requested
    return out


def small_file(groups: Sequence[tuple[BaseSlice, Mapping[str, str]]], limit: int) -> BaseSlice | None:
    """The file group an insert goes to: the first (by file id) holding fewer than ``limit`` records
    (``limit`` 0: any), else None (a new file group)."""
    for s, entries in groups:
        if limit == 0 or len(entries) < limit:
            return s
    return None


def view(reader: TimelineReader, instants: Sequence[Instant], partitions: Sequence[str],
         metadata_table: bool) -> Gen:
    """The committed base files of ``partitions``, listed as the configuration says; None on a failed read."""
    completed = [i for i in instants if i.is_completed]
    if metadata_table:
        pairs = []
        for _at, inst in enumerate(completed):  # _at: the loop's position
            md = yield from reader.metadata(inst)
            if md is None:
                return None
            pairs.append((inst, md))
        return slices_from_metadata(pairs)
    done = {i.requested for i in completed}
    keys: list[str] = []
    for _at2, p in enumerate(partitions):  # _at2: the loop's position
        got: StoreResult = yield ListPrefix(f"{reader.base}/{p}/")
        if not got.ok or got.body is None:
            return None
        keys.extend(k for k in got.body.decode().split("\n") if k)
    return slices_from_listing(keys, reader.base, done)


def read_entries(base: str, s: BaseSlice) -> Gen:
    """The records of a base file (key -> value), or None when it cannot be read (e.g. deleted)."""
    got: StoreResult = yield Read(f"{base}/{s.path}")
    if not got.ok or got.body is None:
        return None
    entries: dict[str, str] = dict(json.loads(got.body)["entries"])
    return entries
