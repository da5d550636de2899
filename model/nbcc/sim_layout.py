"""How the simulated MERGE_ON_READ table lays itself out on the object store, and how it is read.

Everything a simulated writer or compactor puts in the store, and everything a checker reads back
from the final store, goes through this module, so both sides agree on one layout:

* ``{base}/.hoodie/hoodie.properties``: table version 8, timeline layout 2, MERGE_ON_READ, NBCC;
* ``{base}/.hoodie/timeline/``: ``<t>.<action>.requested``, ``<t>.<action>.inflight`` and the
  completed ``<t>_<completion>.<action>`` (``deltacommit``; a compaction is requested as
  ``compaction`` and completes as ``commit``); instant bodies are Hudi-shaped JSON (a compaction
  plan lists ``operations`` with ``deltaFilePaths``; commits list ``partitionToWriteStats``);
* data files ``{base}/{partition}/{name}`` named as Hudi 1.x names them; their bodies are JSON
  rows (:class:`Row`) instead of Parquet/Avro blocks.

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

from model.nbcc.files import BaseFile, LogFile, format_instant
from model.nbcc.slicing import CompletionLookup
from model.nbcc.timeline_reader import HudiTable, read_table

PARTITION = "p0"
PROPERTIES_TEXT = (
    "hoodie.table.name=nbcc_sim\n"
    "hoodie.table.type=MERGE_ON_READ\n"
    "hoodie.table.version=8\n"
    "hoodie.timeline.layout.version=2\n"
    "hoodie.table.recordkey.fields=key\n"
    "hoodie.table.precombine.field=ts\n"
    "hoodie.index.type=BUCKET\n"
    "hoodie.write.concurrency.mode=NON_BLOCKING_CONCURRENCY_CONTROL\n"
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
    """Inverse of :func:`encode_rows`."""
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


def timeline_dir(base: str) -> str:
    """The layout-2 timeline folder."""
    return f"{base}/.hoodie/timeline"


def requested_key(base: str, instant: int, action: str) -> str:
    """``<t>.<action>.requested``."""
    return f"{timeline_dir(base)}/{format_instant(instant)}.{action}.requested"


def inflight_key(base: str, instant: int, action: str) -> str:
    """``<t>.<action>.inflight``."""
    return f"{timeline_dir(base)}/{format_instant(instant)}.{action}.inflight"


def completed_key(base: str, instant: int, completion: int, action: str) -> str:
    """``<requested>_<completion>.<action>``."""
    return f"{timeline_dir(base)}/{format_instant(instant)}_{format_instant(completion)}.{action}"


def properties_key(base: str) -> str:
    """``.hoodie/hoodie.properties``."""
    return f"{base}/.hoodie/hoodie.properties"


def time_key(base: str) -> str:
    """The time generator's last issued time (read and written under the lock, or by CAS)."""
    return f"{base}/.hoodie/.aux/.time_generator"


def data_key(base: str, f: BaseFile | LogFile, partition: str = PARTITION) -> str:
    """Where a data file lives."""
    return f"{base}/{partition}/{f.name}"


def deltacommit_metadata(writer: str, batch: int, attempt: int, logs: Iterable[LogFile]) -> bytes:
    """A completed deltacommit's body (Hudi's commit metadata, JSON)."""
    stats = [{"fileId": lf.file_id, "path": f"{PARTITION}/{lf.name}"} for lf in logs]
    return json.dumps(
        {
            "partitionToWriteStats": {PARTITION: stats},
            "operationType": "UPSERT",
            "extraMetadata": {"writer": writer, "batch": batch, "attempt": attempt},
        },
        sort_keys=True,
    ).encode()


@dataclass(frozen=True)
class PlanOp:
    """One file group in a compaction plan: its base file (None for a log-only group) and the logs
    to merge, in merge order (completion time, then Hudi's log order)."""

    file_id: str
    base_instant: int
    base_file: str | None
    logs: tuple[str, ...]


def plan_body(ops: Iterable[PlanOp]) -> bytes:
    """A compaction plan (``<t>.compaction.requested``), shaped like Hudi's HoodieCompactionPlan."""
    return json.dumps(
        {
            "operations": [
                {
                    "partitionPath": PARTITION,
                    "fileId": op.file_id,
                    "baseInstantTime": format_instant(op.base_instant),
                    "dataFilePath": op.base_file,
                    "deltaFilePaths": [f"{PARTITION}/{n}" for n in op.logs],
                }
                for op in ops
            ],
            "version": 2,
        },
        sort_keys=True,
    ).encode()


def parse_plan(body: bytes) -> list[PlanOp]:
    """Inverse of :func:`plan_body`."""
    raw = json.loads(body.decode())
    return [
        PlanOp(
            str(op["fileId"]),
            int(op["baseInstantTime"]),
            op.get("dataFilePath"),
            tuple(p.rsplit("/", 1)[-1] for p in op.get("deltaFilePaths") or ()),
        )
        for op in raw.get("operations") or ()
    ]


def compaction_commit_body(written: Iterable[tuple[PlanOp, str]]) -> bytes:
    """A completed compaction's body: one write stat per base file written."""
    stats = [
        {
            "fileId": op.file_id,
            "path": f"{PARTITION}/{name}",
            "prevCommit": format_instant(op.base_instant) if op.base_file else "null",
            "totalLogFilesCompacted": len(op.logs),
        }
        for op, name in written
    ]
    return json.dumps(
        {"partitionToWriteStats": {PARTITION: stats}, "operationType": "COMPACT"}, sort_keys=True
    ).encode()


def load_table(objects: Mapping[str, bytes], base: str) -> HudiTable:
    """Read the table under ``base`` from store objects with the real-table reader."""
    prefix = base + "/"
    paths = [k[len(prefix) :] for k in objects if k.startswith(prefix)]
    return read_table(paths, lambda p: objects[prefix + p], with_metadata=False)


def needed_for_load(key: str, base: str) -> bool:
    """True for the objects :func:`load_table` reads (besides listing): the properties and the
    bodies of compaction and commit instants.  A sans-I/O reader fetches only these."""
    if key == properties_key(base):
        return True
    tl = timeline_dir(base) + "/"
    if not key.startswith(tl) or "/" in key[len(tl) :]:
        return False
    name = key[len(tl) :]
    return ".compaction." in name or name.endswith(".commit")


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
