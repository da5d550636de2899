"""Commit metadata write stats (``HoodieWriteStat``) as Hudi 1.x fills them, and the full
``HoodieCommitMetadata`` Avro schema it writes them with.

What each kind of write fills, read from the v8 and v9 tables' deltacommits and compaction
commits (``v8_trips_8i3u1d``, ``v9_txns_complex_meta``):

* **new base file** (insert, in a ``commit`` or ``deltacommit``): ``prevCommit`` is the string
  ``"null"``; ``numWrites == numInserts``; ``totalWriteBytes == fileSizeInBytes``; the log fields
  (``logVersion``, ``logOffset``, ``baseFile``, ``logFiles``) are null; counters Hudi always sets
  (``totalWriteErrors``, ``totalLogRecords``, ``totalLogBlocks``, ``totalCorruptLogBlock``,
  ``totalRollbackBlocks``, ``totalUpdatedRecordsCompacted``, ``totalLogFilesCompacted``,
  ``totalLogReadTimeMs``, ``totalLogSizeCompacted``, ``numUpdates``) are 0;
* **log file** (``deltacommit``, ``HoodieAppendHandle``): in table version 8+ a log is named with
  its own deltacommit, so ``prevCommit`` is that deltacommit (not the slice's base instant) and
  ``baseFile`` is ``""``; ``logVersion``/``logOffset`` are the file's version and the offset the
  append started at (0 for a new file); ``logFiles`` lists the file's name; ``numWrites`` counts
  the records of data blocks (``numInserts + numUpdateWrites``) and ``numDeletes`` the delete
  records; ``totalWriteBytes`` is the bytes appended and ``fileSizeInBytes`` the file's size;
* **compaction** (``commit`` of a compaction): ``prevCommit`` is the compacted slice's base
  instant and ``prevBaseFile`` its base file; ``numWrites`` the records written, of which
  ``numUpdateWrites`` took a value from the logs and ``numInserts`` the rest; ``numDeletes`` the
  base records the logs deleted; ``totalLogRecords``, ``totalLogBlocks``,
  ``totalLogFilesCompacted``, ``totalLogSizeCompacted`` describe the logs read and
  ``totalUpdatedRecordsCompacted`` the keys they touched.

``runtimeStats`` (timings) are zero here; ``path`` is relative to the table base path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from model.timeline.avro import write_container

_NS = "org.apache.hudi.avro.model"
_STR = {"type": "string", "avro.java.string": "String"}


def _opt(name: str, kind: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", kind], "default": None}


_LONGS = ["numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors"]
_MIDDLE_LONGS = [
    "totalLogRecords",
    "totalLogFiles",
    "totalUpdatedRecordsCompacted",
    "numInserts",
    "totalLogBlocks",
    "totalCorruptLogBlock",
    "totalRollbackBlocks",
    "fileSizeInBytes",
]

# HoodieWriteStat and HoodieCommitMetadata exactly as the container headers of Hudi 1.x commit
# files declare them (field order matters: it is the binary layout).
WRITE_STAT_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieWriteStat",
    "fields": [
        _opt("fileId", _STR),
        _opt("path", _STR),
        _opt("prevCommit", _STR),
        *(_opt(n, "long") for n in _LONGS),
        _opt("partitionPath", _STR),
        *(_opt(n, "long") for n in _MIDDLE_LONGS),
        _opt("logVersion", "int"),
        _opt("logOffset", "long"),
        _opt("baseFile", _STR),
        _opt("logFiles", {"type": "array", "items": _STR, "default": None}),
        _opt("cdcStats", {"type": "map", "values": "long", "avro.java.string": "String", "default": None}),
        _opt("prevBaseFile", _STR),
        _opt("minEventTime", "long"),
        _opt("maxEventTime", "long"),
        _opt(
            "runtimeStats",
            {
                "type": "record",
                "name": "HoodieRuntimeStats",
                "fields": [_opt(n, "long") for n in ("totalScanTime", "totalCreateTime", "totalUpsertTime")],
            },
        ),
        _opt("totalLogFilesCompacted", "long"),
        _opt("totalLogReadTimeMs", "long"),
        _opt("totalLogSizeCompacted", "long"),
        _opt("tempPath", _STR),
        _opt("numUpdates", "long"),
    ],
}

FULL_COMMIT_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCommitMetadata",
    "namespace": _NS,
    "fields": [
        _opt(
            "partitionToWriteStats",
            {
                "type": "map",
                "values": {"type": "array", "items": WRITE_STAT_SCHEMA},
                "avro.java.string": "String",
            },
        ),
        _opt("compacted", "boolean"),
        _opt("extraMetadata", {"type": "map", "values": _STR, "avro.java.string": "String", "default": None}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("operationType", _STR),
    ],
}

_ZERO = [
    "totalWriteErrors",
    "totalLogRecords",
    "totalUpdatedRecordsCompacted",
    "totalLogBlocks",
    "totalCorruptLogBlock",
    "totalRollbackBlocks",
    "totalLogFilesCompacted",
    "totalLogReadTimeMs",
    "totalLogSizeCompacted",
    "numUpdates",
]


def _stat(partition_path: str, file_id: str, file_name: str, prev_commit: str) -> dict[str, Any]:
    stat: dict[str, Any] = {f["name"]: None for f in WRITE_STAT_SCHEMA["fields"]}
    stat.update({name: 0 for name in _ZERO})
    stat.update(
        fileId=file_id,
        path=f"{partition_path}/{file_name}" if partition_path else file_name,
        prevCommit=prev_commit,
        partitionPath=partition_path,
        runtimeStats={"totalScanTime": 0, "totalCreateTime": 0, "totalUpsertTime": 0},
    )
    return stat


def base_file_stat(
    partition_path: str, file_id: str, file_name: str, num_inserts: int, file_size: int
) -> dict[str, Any]:
    """The write stat of a new base file holding ``num_inserts`` records (an insert)."""
    stat = _stat(partition_path, file_id, file_name, "null")
    stat.update(
        numWrites=num_inserts,
        numInserts=num_inserts,
        numUpdateWrites=0,
        numDeletes=0,
        totalWriteBytes=file_size,
        fileSizeInBytes=file_size,
    )
    return stat


def merge_stat(
    partition_path: str,
    file_id: str,
    file_name: str,
    prev_commit: str,
    *,
    num_written: int,
    num_inserts: int,
    num_updates: int,
    num_deletes: int,
    file_size: int,
) -> dict[str, Any]:
    """The write stat of a new base file version of an existing file group (``HoodieMergeHandle`` of
    a COPY_ON_WRITE upsert): ``num_written`` records in the new file, of which ``num_inserts`` new
    and ``num_updates`` updated; ``num_deletes`` records dropped; ``prevCommit`` is the instant of
    the base file it merged."""
    stat = _stat(partition_path, file_id, file_name, prev_commit)
    stat.update(
        numWrites=num_written,
        numInserts=num_inserts,
        numUpdateWrites=num_updates,
        numDeletes=num_deletes,
        totalWriteBytes=file_size,
        fileSizeInBytes=file_size,
    )
    return stat


def log_file_stat(
    partition_path: str,
    file_id: str,
    log_file_name: str,
    deltacommit: str,
    *,
    num_inserts: int,
    num_updates: int,
    num_deletes: int,
    bytes_written: int,
    file_size: int,
    log_version: int = 1,
    log_offset: int = 0,
) -> dict[str, Any]:
    """The write stat of one append to a log file by ``deltacommit`` (table version 8+)."""
    stat = _stat(partition_path, file_id, log_file_name, deltacommit)
    stat.update(
        numWrites=num_inserts + num_updates,
        numInserts=num_inserts,
        numUpdateWrites=num_updates,
        numDeletes=num_deletes,
        totalWriteBytes=bytes_written,
        fileSizeInBytes=file_size,
        logVersion=log_version,
        logOffset=log_offset,
        baseFile="",
        logFiles=[log_file_name],
    )
    return stat


def compaction_stat(
    partition_path: str,
    file_id: str,
    file_name: str,
    prev_base_instant: str,
    prev_base_file: str | None,
    *,
    num_kept: int,
    num_updated: int,
    num_deleted: int,
    file_size: int,
    log_files: int,
    log_blocks: int,
    log_records: int,
    log_bytes: int,
    keys_from_logs: int,
) -> dict[str, Any]:
    """The write stat of the base file a compaction wrote: ``num_kept`` base records written as
    they were, ``num_updated`` written with a value from the logs, ``num_deleted`` removed."""
    stat = _stat(partition_path, file_id, file_name, prev_base_instant)
    stat.update(
        numWrites=num_kept + num_updated,
        numInserts=num_kept,
        numUpdateWrites=num_updated,
        numDeletes=num_deleted,
        totalWriteBytes=file_size,
        fileSizeInBytes=file_size,
        prevBaseFile=prev_base_file,
        totalLogRecords=log_records,
        totalLogBlocks=log_blocks,
        totalLogFilesCompacted=log_files,
        totalLogSizeCompacted=log_bytes,
        totalUpdatedRecordsCompacted=keys_from_logs,
    )
    return stat


def commit_metadata(
    stats: Sequence[Mapping[str, Any]],
    operation: str,
    schema_json: str,
    *,
    compacted: bool = False,
    extra: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A ``HoodieCommitMetadata`` value: the stats grouped by partition, the operation
    (``INSERT``, ``UPSERT``, ``DELETE``, ``UPSERT_PREPPED``, ``COMPACT``...) and the commit schema in
    ``extraMetadata["schema"]`` (readers take the table schema from the latest commit)."""
    by_partition: dict[str, list[dict[str, Any]]] = {}
    for s in stats:
        by_partition.setdefault(str(s["partitionPath"]), []).append(dict(s))
    return {
        "partitionToWriteStats": by_partition,
        "compacted": compacted,
        "extraMetadata": {"schema": schema_json, **(extra or {})},
        "version": 1,
        "operationType": operation,
    }


def encode_full_commit_metadata(metadata: Mapping[str, Any]) -> bytes:
    """A completed commit/deltacommit instant file of table version 8+ (an Avro container with
    the full 1.x schema; :mod:`model.timeline.metadata` writes a subset without ``logOffset`` and
    the compaction counters)."""
    return write_container(FULL_COMMIT_METADATA_SCHEMA, [dict(metadata)])
