"""A simulated COPY_ON_WRITE table (``model/timeline``: Hudi's writer or the v5 specification's) in
Hudi's encoding.

The model's base file is ``{"fg", "time", "salt", "entries": {key: value}}``; the Parquet file written
for it holds one record per entry: the meta columns, then the table's fields (``key``, ``value`` and the
partition field, whose value is the partition path).  Each record's ``_hoodie_commit_time`` is the
instant that wrote its current value: values are unique per operation, and each completed commit's
``hcc.aux`` names the key and value it wrote, so the value's writer is the commit that names it; a value
no completed commit names (a write that never committed) falls back to the earliest committed base file
of its file group that holds it, else the earliest base file that does.

Completed commits are rewritten with the full 1.x metadata: a new file group's base file gets
:func:`~model.hudi_files.write_stats.base_file_stat`, a new version of an existing one
:func:`~model.hudi_files.write_stats.merge_stat`, with the encoded file's size; the ``hcc.*`` extra
metadata stays.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from typing import Any

from model.hudi_files.export_common import (
    HUDI_ENCODING,
    PROPERTIES,
    ExportedTable,
    TableFiles,
    TableInfo,
    encode_commit,
    instants,
    model_extra,
    properties_with_readers,
)
from model.hudi_files.parquet_files import write_base_file
from model.hudi_files.schema import meta_values, writer_schema
from model.hudi_files.write_stats import base_file_stat, merge_stat
from model.timeline.layout import format_instant, parse_base_file_name
from model.timeline.metadata import decode_instant_metadata

_KIND_COUNTS = {"insert": (1, 0, 0), "update": (0, 1, 0), "delete": (0, 0, 1)}


def _model_base_file(path: str, body: bytes) -> dict[str, Any] | None:
    """The model's JSON base file at ``path``, or None for any other file; ValueError names a file
    that looks like one but does not parse."""
    if path.startswith(".hoodie/") or not path.endswith(".parquet") or not body.startswith(b"{"):
        return None
    try:
        slice_ = json.loads(body)
        entries = slice_["entries"]
        time = int(slice_["time"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a model base file ({exc})") from None
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: entries is not an object")
    return {"entries": {str(k): str(v) for k, v in entries.items()}, "time": time,
            "salt": str(slice_.get("salt") or "")}


def _file_id(name: str) -> str:
    """The file id of a base file name (the specification's salted names are no Hudi names: the part
    before the first ``_``)."""
    try:
        return parse_base_file_name(name).file_id
    except ValueError:
        return name.split("_", 1)[0]


def _committed(files: TableFiles, info: TableInfo) -> tuple[set[tuple[int, str]], dict[str, Any]]:
    """The completed commits' identities (instant, salt) and their decoded metadata by path."""
    done: set[tuple[int, str]] = set()
    metadata: dict[str, Any] = {}
    for path, inst in instants(files, info):
        if inst.is_completed and inst.action == "commit":
            done.add((inst.requested, inst.salt))
            metadata[path] = decode_instant_metadata(files[path], path)
    return done, metadata


def _writers(metadata: Mapping[str, Any], files: TableFiles, info: TableInfo) -> dict[tuple[str, str], int]:
    """(key, value) -> the instant of the completed commit that wrote it (its ``hcc.aux``)."""
    by_path = dict(instants(files, info))
    out: dict[tuple[str, str], int] = {}
    for path, md in metadata.items():
        raw = (md.get("extraMetadata") or {}).get("hcc.aux")
        if not raw:
            continue
        aux = json.loads(raw)
        if aux.get("kind") != "delete" and aux.get("value") is not None:
            out.setdefault((str(aux["key"]), str(aux["value"])), by_path[path].requested)
    return out


def export_cow(files: TableFiles, info: TableInfo) -> ExportedTable:
    """Every file of the table in ``files``, base files and completed commits in Hudi's encoding."""
    done, metadata = _committed(files, info)
    wrote = _writers(metadata, files, info)
    bases = {p: b for p in sorted(files) if (b := _model_base_file(p, files[p])) is not None}
    groups: dict[tuple[str, str], list[str]] = {}
    for path in bases:
        part, name = posixpath.split(path)
        groups.setdefault((part, _file_id(name)), []).append(path)
    schema = writer_schema(info.name, info.fields)
    out = dict(files)
    sizes: dict[str, int] = {}
    counts = {"base_files": 0, "log_files": 0, "commits": 0}
    for (part, _fid), paths in sorted(groups.items()):
        paths.sort(key=lambda p: (bases[p]["time"], bases[p]["salt"], p))
        first_committed: dict[tuple[str, str], int] = {}
        first_any: dict[tuple[str, str], int] = {}
        for p in paths:
            b = bases[p]
            for kv in b["entries"].items():
                first_any.setdefault(kv, b["time"])
                if (b["time"], b["salt"]) in done:
                    first_committed.setdefault(kv, b["time"])
        for p in paths:
            name = posixpath.basename(p)
            rows = []
            for i, (key, value) in enumerate(sorted(bases[p]["entries"].items())):
                kv = (key, value)
                commit = format_instant(wrote.get(kv, first_committed.get(kv, first_any[kv])))
                rows.append({**meta_values(commit, f"{commit}_0_{i}", key, part, name),
                             **_fields(info, key, value, part)})
            data = write_base_file(schema, rows)
            out[p] = data
            sizes[p] = len(data)
            counts["base_files"] += 1
    for path, md in metadata.items():
        out[path] = _commit(info, md, sizes, {p: len(b["entries"]) for p, b in bases.items()})
        counts["commits"] += 1
    out[PROPERTIES] = properties_with_readers(info)
    return ExportedTable(out, HUDI_ENCODING, counts, sizes)


def _fields(info: TableInfo, key: str, value: str, partition: str) -> dict[str, Any]:
    """The data fields of one record: its key, its value, the partition field; any other field null."""
    row: dict[str, Any] = {name: None for name, _ in info.fields}
    row[info.record_key or "key"] = key
    if "value" in row:
        row["value"] = value
    if info.partition_field:
        row[info.partition_field] = partition
    return row


def _commit(info: TableInfo, md: Mapping[str, Any], sizes: Mapping[str, int],
            records: Mapping[str, int]) -> bytes:
    """A completed commit's metadata with the write stats of its encoded base file."""
    extra = model_extra(md)
    aux = json.loads(extra["hcc.aux"]) if extra.get("hcc.aux") else {}
    inserts, updates, deletes = _KIND_COUNTS.get(str(aux.get("kind")), (0, 0, 0))
    stats = []
    for partition, raw_stats in sorted((md.get("partitionToWriteStats") or {}).items()):
        for raw in raw_stats or ():
            path = str(raw.get("path") or "")
            name, fid = posixpath.basename(path), str(raw.get("fileId") or "")
            part = str(raw.get("partitionPath") or partition)
            size = sizes.get(path, 0)
            written = records.get(path, int(raw.get("numWrites") or 0))
            prev = str(raw.get("prevCommit") or "null")
            if prev == "null":
                stats.append(base_file_stat(part, fid, name, written, size))
            else:
                stats.append(merge_stat(part, fid, name, prev, num_written=written, num_inserts=inserts,
                                        num_updates=updates, num_deletes=deletes, file_size=size))
    return encode_commit(info, stats, str(md.get("operationType") or "UPSERT"), extra)
