"""A simulated MERGE_ON_READ table (``model/nbcc``) in Hudi's encoding.

The model's data files hold JSON lines, one :class:`~model.nbcc.sim_layout.Row` each
(``_hoodie_record_key``, ``_hoodie_commit_time``, the ordering field ``ts`` and ``rid``):

* a log file ``.{fileId}_{deltacommit}.log.{v}_{token}`` becomes a Hudi log file of one Avro data block
  (``INSTANT_TIME`` = the deltacommit, ``SCHEMA`` = the writer schema); its records carry the meta
  columns (``_hoodie_file_name`` is the file id, as in Hudi's log records) and the table's fields (the
  partition field's value is the partition path).  The model never appends to a log and deletes no
  record, so there are no delete blocks, and a failed attempt's rows are in logs of its own instant
  (which readers drop by name, or a rollback deletes): no rollback command block is needed;
* a compaction's base file becomes Parquet, each record keeping the commit time of the write that made
  it (compaction copies records);
* completed deltacommits get :func:`~model.hudi_files.write_stats.log_file_stat` per log (inserts are the
  keys new to the file group in completion order), compactions
  :func:`~model.hudi_files.write_stats.compaction_stat` (the plan's logs, the previous base file), with
  the encoded files' sizes; the ``hcc.*`` extra metadata stays.
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
from model.hudi_files.log_blocks import avro_data_block
from model.hudi_files.log_format import encode_log_file
from model.hudi_files.parquet_files import write_base_file
from model.hudi_files.schema import COMMIT_TIME, RECORD_KEY, meta_values, writer_schema
from model.hudi_files.write_stats import compaction_stat, log_file_stat
from model.timeline.layout import (
    Instant,
    format_instant,
    is_base_file_name,
    is_log_file_name,
    parse_log_file_name,
)
from model.timeline.metadata import decode_instant_metadata


def json_lines(path: str, body: bytes) -> list[dict[str, Any]]:
    """The rows of a model data file (JSON lines); ValueError names the file and line."""
    out = []
    for n, line in enumerate(body.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}: line {n}: not JSON ({exc})") from None
        if not isinstance(row, dict) or RECORD_KEY not in row:
            raise ValueError(f"{path}: line {n}: not a model row (no {RECORD_KEY})")
        out.append(row)
    return out


def _is_model_data(path: str, body: bytes) -> bool:
    name = posixpath.basename(path)
    data_file = is_log_file_name(name) or is_base_file_name(name)
    return not path.startswith(".hoodie/") and data_file and (not body or body.startswith(b"{"))


def _record(info: TableInfo, row: Mapping[str, Any], partition: str, file_name: str,
            seqno: str) -> dict[str, Any]:
    commit = str(row[COMMIT_TIME])
    rec: dict[str, Any] = meta_values(commit, seqno, str(row[RECORD_KEY]), partition, file_name)
    for name, _ in info.fields:
        rec[name] = row.get(name)
    if info.record_key:
        rec[info.record_key] = str(row[RECORD_KEY])
    if info.partition_field:
        rec[info.partition_field] = partition
    return rec


def export_mor(files: TableFiles, info: TableInfo) -> ExportedTable:
    """Every file of the table in ``files``: logs, base files and completed commits in Hudi's encoding."""
    schema = writer_schema(info.name, info.fields)
    out = dict(files)
    rows: dict[str, list[dict[str, Any]]] = {}
    sizes: dict[str, int] = {}
    counts = {"base_files": 0, "log_files": 0, "commits": 0}
    for path in sorted(files):
        body = files[path]
        if not _is_model_data(path, body):
            continue
        part, name = posixpath.split(path)
        rows[path] = json_lines(path, body)
        if is_log_file_name(name):
            lf = parse_log_file_name(name)
            task = lf.write_token.split("-", 1)[0]
            instant = format_instant(lf.instant)
            records = [_record(info, r, part, lf.file_id, f"{r[COMMIT_TIME]}_{task}_{i}")
                       for i, r in enumerate(rows[path])]
            data = encode_log_file([avro_data_block(instant, schema, records)])
            counts["log_files"] += 1
        else:
            records = [_record(info, r, part, name, f"{r[COMMIT_TIME]}_0_{i}")
                       for i, r in enumerate(rows[path])]
            data = write_base_file(schema, records)
            counts["base_files"] += 1
        out[path] = data
        sizes[path] = len(data)
    _rewrite_commits(files, info, out, rows, sizes, counts)
    out[PROPERTIES] = properties_with_readers(info)
    return ExportedTable(out, HUDI_ENCODING, counts, sizes)


def _rewrite_commits(files: TableFiles, info: TableInfo, out: dict[str, bytes],
                     rows: Mapping[str, list[dict[str, Any]]], sizes: Mapping[str, int],
                     counts: dict[str, int]) -> None:
    """Completed deltacommits and compactions, in completion order, with real write stats."""
    listed = instants(files, info)
    plans = {inst.requested: decode_instant_metadata(files[p], p) for p, inst in listed
             if inst.requested_action == "compaction" and inst.state == "requested"}
    done = sorted(((p, i) for p, i in listed if i.is_completed and i.action in ("deltacommit", "commit")),
                  key=lambda pi: (pi[1].completed or 0, pi[1].requested))
    seen: dict[tuple[str, str], set[str]] = {}  # file group -> keys written by completed instants so far
    for path, inst in done:
        md = decode_instant_metadata(files[path], path)
        if inst.action == "deltacommit":
            stats = [_log_stat(raw, partition, rows, sizes, seen)
                     for partition, raws in sorted((md.get("partitionToWriteStats") or {}).items())
                     for raw in raws or ()]
            out[path] = encode_commit(info, stats, str(md.get("operationType") or "UPSERT"), model_extra(md))
        else:
            stats = [_compaction_stat(raw, partition, inst, plans.get(inst.requested) or {}, rows, sizes)
                     for partition, raws in sorted((md.get("partitionToWriteStats") or {}).items())
                     for raw in raws or ()]
            out[path] = encode_commit(info, stats, "COMPACT", model_extra(md), compacted=True)
        counts["commits"] += 1


def _log_stat(raw: Mapping[str, Any], partition: str, rows: Mapping[str, list[dict[str, Any]]],
              sizes: Mapping[str, int], seen: dict[tuple[str, str], set[str]]) -> dict[str, Any]:
    path = str(raw.get("path") or "")
    name, part, fid = posixpath.basename(path), str(raw.get("partitionPath") or partition), str(raw["fileId"])
    keys = [str(r[RECORD_KEY]) for r in rows.get(path, ())]
    group = seen.setdefault((part, fid), set())
    new = set(keys) - group
    group.update(keys)
    size = sizes.get(path, 0)
    return log_file_stat(part, fid, name, format_instant(parse_log_file_name(name).instant),
                         num_inserts=len(new), num_updates=len(keys) - len(new), num_deletes=0,
                         bytes_written=size, file_size=size, log_version=parse_log_file_name(name).version)


def _compaction_stat(raw: Mapping[str, Any], partition: str, inst: Instant, plan: Mapping[str, Any],
                     rows: Mapping[str, list[dict[str, Any]]], sizes: Mapping[str, int]) -> dict[str, Any]:
    path = str(raw.get("path") or "")
    part, fid = str(raw.get("partitionPath") or partition), str(raw["fileId"])
    op: Mapping[str, Any] = next((o for o in plan.get("operations") or () if str(o.get("fileId")) == fid), {})
    logs = [posixpath.join(part, posixpath.basename(str(p))) for p in op.get("deltaFilePaths") or ()]
    prev_base = raw.get("prevBaseFile")
    base_rows = {str(r[RECORD_KEY]): r for r in rows.get(posixpath.join(part, str(prev_base)), ())} \
        if prev_base else {}
    written = rows.get(path, [])
    updated = sum(1 for r in written if base_rows.get(str(r[RECORD_KEY])) != r)
    log_rows = [r for lp in logs for r in rows.get(lp, ())]
    return compaction_stat(
        part, fid, posixpath.basename(path), str(raw.get("prevCommit") or "null"),
        str(prev_base) if prev_base else None,
        num_kept=len(written) - updated, num_updated=updated, num_deleted=0,
        file_size=sizes.get(path, 0), log_files=len(logs), log_blocks=len(logs),
        log_records=len(log_rows), log_bytes=sum(sizes.get(lp, 0) for lp in logs),
        keys_from_logs=len({str(r[RECORD_KEY]) for r in log_rows}))


__all__ = ["export_mor", "json_lines"]
