"""How the simulated MERGE_ON_READ table lays itself out on the object store, and how it is read.

Everything a simulated writer or compactor puts in the store, and everything a checker reads back
from the final store, goes through this module, so both sides agree on one layout, which is a Hudi
table of version 8 (names and metadata from :mod:`model.timeline.layout` and
:mod:`model.timeline.metadata`):

* ``{base}/.hoodie/hoodie.properties``: table version 8, timeline layout 2, MERGE_ON_READ, bucket
  index, NBCC, time zone UTC;
* ``{base}/.hoodie/timeline/``: ``<t>.<action>.requested`` and ``<t>.<action>.inflight`` (empty,
  except a compaction plan) and the completed ``<t>_<completion>.<action>`` (``deltacommit``; a
  compaction is requested as ``compaction`` and completes as ``commit``); plans and commit
  metadata are Avro (``HoodieCompactionPlan``, ``HoodieCommitMetadata`` with the record schema in
  ``extraMetadata``), as Hudi 1.x writes them;
* data files ``{base}/p0/{name}`` named as Hudi 1.x names them, beside ``p0/.hoodie_partition_metadata``;
  their bodies are JSON rows (:class:`Row`) instead of Parquet files and Avro log blocks, so a
  reader can list the table's file slices but not read its records.

The final store is turned into a :class:`~model.nbcc.timeline_reader.HudiTable` by the same pure
reader that reads real tables (:func:`load_table`), so the simulated table is sliced by exactly the
code that slices real ones.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from model.hudi_files.records import file_records, is_hudi_encoded
from model.nbcc.slicing import CompletionLookup
from model.nbcc.timeline_reader import HudiTable, read_table
from model.timeline.layout import (
    BaseFile,
    Instant,
    LogFile,
    State,
    format_instant,
    instant_path,
    parse_instant,
    parse_instant_path,
    properties_key,
)
from model.timeline.layout import data_key as _data_key
from model.timeline.metadata import (
    TableSpec,
    commit_metadata,
    compaction_plan,
    decode_instant_metadata,
    encode_commit_metadata,
    encode_compaction_plan,
)

PARTITION = "p0"
LAYOUT = "v8"


# The simulated writers keep no metadata table; with ``metadata_table`` the table says so under a key of
# the harness's own (Hudi's ``hoodie.table.metadata.partitions`` would send hudi-rs to a metadata table
# that is not there), and the model's readers list what its ``files`` partition would hold
# (:meth:`~model.nbcc.timeline_reader.HudiTable.listed_groups`).
MODEL_METADATA_TABLE = "hcc.model.metadata.table"


def table_spec(buckets: int, metadata_table: bool = False) -> TableSpec:
    """The simulated table: MERGE_ON_READ, version 8, a bucket index of ``buckets``, under NBCC; with
    ``metadata_table`` its readers list through the (modelled) metadata table's ``files`` partition."""
    mdt = {MODEL_METADATA_TABLE: "files"} if metadata_table else {}
    return TableSpec(
        "nbcc_sim",
        "MERGE_ON_READ",
        8,
        record_key="key",
        partition_field="part",
        fields=(("key", "string"), ("ts", "long"), ("rid", "string"), ("part", "string")),
        ordering_field="ts",
        extra={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": str(buckets),
            "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
            **mdt,
        },
    )


@dataclass(frozen=True, order=True)
class Row:
    """One record: key, ordering (preCombine) value, the deltacommit that wrote it, and a unique id
    of the write (``writer/batch/seq``) so that checkers can tell writes apart."""

    key: str
    ts: int
    commit: int
    rid: str

    def to_json(self) -> dict[str, Any]:
        """Hudi-like field names (meta columns keep the original commit time through compaction)."""
        return {
            "_hoodie_record_key": self.key,
            "_hoodie_commit_time": format_instant(self.commit),
            "ts": self.ts,
            "rid": self.rid,
        }

    @staticmethod
    def from_json(raw: Mapping[str, Any]) -> Row:
        """Inverse of :meth:`to_json`."""
        return Row(
            str(raw["_hoodie_record_key"]), int(raw["ts"]), int(raw["_hoodie_commit_time"]), str(raw["rid"])
        )

    @property
    def write(self) -> tuple[int, str]:
        """The identity of the write: (deltacommit instant, record id)."""
        return (self.commit, self.rid)


def encode_rows(rows: Iterable[Row]) -> bytes:
    """A data file body: one JSON object per line."""
    return "".join(json.dumps(r.to_json(), sort_keys=True) + "\n" for r in rows).encode()


def decode_rows(body: bytes) -> list[Row]:
    """Inverse of :func:`encode_rows`; a data file in Hudi's encoding (a run directory's ``table/``,
    :mod:`model.hudi_files.export`) is read through :mod:`model.hudi_files.records`."""
    if is_hudi_encoded(body):
        return [Row.from_json(r) for r in file_records(body)]
    return [Row.from_json(json.loads(line)) for line in body.decode().splitlines() if line.strip()]


def merge_rows(rows: Iterable[Row], into: Mapping[str, Row] | None = None) -> dict[str, Row]:
    """Merge rows in the given order by the ordering field: a row replaces the current one of its key
    when its ``ts`` is greater or equal (so on a tie the later row wins, as Hudi's payloads do)."""
    out = dict(into or {})
    for r in rows:
        cur = out.get(r.key)
        if cur is None or r.ts >= cur.ts:
            out[r.key] = r
    return out


def bucket_of(key: str, buckets: int) -> int:
    """Deterministic bucket index (a stable hash of the record key)."""
    return zlib.crc32(key.encode()) % buckets


def bucket_file_id(bucket: int) -> str:
    """Hudi's bucket-index file id with the fixed suffix NBCC writers share."""
    return f"{bucket:08d}-0000-0000-0000-000000000000-0"


def instant_key(base: str, instant: int, action: str, state: State, completion: int | None = None) -> str:
    """The store key of an instant file of the table's timeline (layout 2)."""
    return instant_path(base, LAYOUT, Instant(instant, action, state, completion))


def requested_key(base: str, instant: int, action: str) -> str:
    """``<t>.<action>.requested``."""
    return instant_key(base, instant, action, State.REQUESTED)


def inflight_key(base: str, instant: int, action: str) -> str:
    """``<t>.<action>.inflight``."""
    return instant_key(base, instant, action, State.INFLIGHT)


def completed_key(base: str, instant: int, completion: int, action: str) -> str:
    """``<requested>_<completion>.<action>``."""
    return instant_key(base, instant, action, State.COMPLETED, completion)


def data_key(base: str, f: BaseFile | LogFile, partition: str = PARTITION) -> str:
    """Where a data file lives."""
    return _data_key(base, partition, f)


def deltacommit_metadata(
    spec: TableSpec, writer: str, batch: int, attempt: int, logs: Iterable[LogFile]
) -> bytes:
    """A completed deltacommit's commit metadata (Avro): one write stat per log file, and which
    writer's batch and attempt it was (``hcc.*`` extra metadata)."""
    stats = [
        {
            "fileId": lf.file_id,
            "path": f"{PARTITION}/{lf.name}",
            "prevCommit": format_instant(lf.instant),
            "partitionPath": PARTITION,
            "baseFile": "",
            "logFiles": [lf.name],
            "logVersion": lf.version,
        }
        for lf in logs
    ]
    extra = {
        "schema": spec.record_schema(),
        "hcc.writer": writer,
        "hcc.batch": str(batch),
        "hcc.attempt": str(attempt),
    }
    return encode_commit_metadata(
        LAYOUT, commit_metadata({PARTITION: stats} if stats else {}, "UPSERT", extra)
    )


def deltacommit_origin(body: bytes, key: str) -> tuple[str, int] | None:
    """(writer, batch) of a completed deltacommit written by :func:`deltacommit_metadata`."""
    extra = decode_instant_metadata(body, key).get("extraMetadata") or {}
    if "hcc.writer" not in extra:
        return None
    return str(extra["hcc.writer"]), int(extra["hcc.batch"])


@dataclass(frozen=True)
class PlanOp:
    """One file group in a compaction plan: its base file (None for a log-only group) and the logs
    to merge, in merge order (completion time, then Hudi's log order)."""

    file_id: str
    base_instant: int
    base_file: str | None
    logs: tuple[str, ...]


def plan_body(ops: Iterable[PlanOp]) -> bytes:
    """A compaction plan (``<t>.compaction.requested``): Hudi's HoodieCompactionPlan, in Avro."""
    return encode_compaction_plan(
        compaction_plan(
            [
                {
                    "baseInstantTime": format_instant(op.base_instant),
                    "deltaFilePaths": list(op.logs),
                    "dataFilePath": op.base_file,
                    "fileId": op.file_id,
                    "partitionPath": PARTITION,
                    "metrics": {"TOTAL_LOG_FILES": float(len(op.logs))},
                }
                for op in ops
            ]
        )
    )


def parse_plan(body: bytes, key: str = "compaction plan") -> list[PlanOp]:
    """Inverse of :func:`plan_body`."""
    raw = decode_instant_metadata(body, key)
    return [
        PlanOp(
            str(op["fileId"]),
            parse_instant(str(op["baseInstantTime"])),
            op.get("dataFilePath"),
            tuple(p.rsplit("/", 1)[-1] for p in op.get("deltaFilePaths") or ()),
        )
        for op in raw.get("operations") or ()
    ]


def compaction_commit_body(spec: TableSpec, written: Iterable[tuple[PlanOp, str]]) -> bytes:
    """A completed compaction's commit metadata (Avro): one write stat per base file written."""
    stats = [
        {
            "fileId": op.file_id,
            "path": f"{PARTITION}/{name}",
            "prevCommit": format_instant(op.base_instant) if op.base_file else "null",
            "partitionPath": PARTITION,
            "prevBaseFile": op.base_file,
            "totalLogFilesCompacted": len(op.logs),
        }
        for op, name in written
    ]
    md = commit_metadata({PARTITION: stats}, "COMPACT", {"schema": spec.record_schema()}, compacted=True)
    return encode_commit_metadata(LAYOUT, md)


def load_table(objects: Mapping[str, bytes], base: str) -> HudiTable:
    """Read the table under ``base`` from store objects with the real-table reader."""
    prefix = base + "/"
    paths = [k[len(prefix) :] for k in objects if k.startswith(prefix)]
    return read_table(paths, lambda p: objects[prefix + p], with_metadata=False)


def needed_for_load(key: str, base: str, metadata_table: bool = False) -> bool:
    """True for the objects :func:`load_table` reads (besides listing): the properties and the
    bodies of compaction and commit instants; with ``metadata_table`` the completed deltacommits too
    (the files they wrote are what the metadata table lists).  A sans-I/O reader fetches only these;
    every one of them is immutable once written."""
    if key == properties_key(base):
        return True
    inst = parse_instant_path(key, base, LAYOUT)
    if inst is None:
        return False
    return (
        inst.requested_action == "compaction"
        or inst.action == "commit"
        or (metadata_table and inst.is_completed and inst.action == "deltacommit")
    )


def rows_reader(objects: Mapping[str, bytes], base: str) -> Callable[[BaseFile | LogFile], list[Row]]:
    """A memoised ``file -> rows`` reader over store objects (KeyError when the file is absent)."""
    cache: dict[str, list[Row]] = {}

    def rows_of(f: BaseFile | LogFile) -> list[Row]:
        key = data_key(base, f)
        if key not in cache:
            cache[key] = decode_rows(objects[key])
        return cache[key]

    return rows_of


def read_slice_rows(
    base_file: BaseFile | None,
    logs: Iterable[LogFile],
    completion_time: CompletionLookup,
    rows_of: Callable[[BaseFile | LogFile], list[Row]],
) -> dict[str, Row]:
    """Merge a file slice as a reader does: the base file's rows, then its logs in completion-time
    order (RFC-66's LOG_FILE_COMPARATOR), each merged by the ordering field."""
    rows: dict[str, Row] = {}
    if base_file is not None:
        rows = merge_rows(rows_of(base_file))

    def order(lf: LogFile) -> tuple[int, tuple[int, int, str, str]]:
        tc = completion_time(lf.instant)
        return (tc if tc is not None else 2**62, lf.sort_key)

    for lf in sorted(logs, key=order):
        rows = merge_rows(rows_of(lf), rows)
    return rows
