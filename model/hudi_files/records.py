"""The records of a table's data files, whichever encoding they are in, and a file slice merged as a
reader merges it.

:func:`read_data_file` reads

* Hudi's encoding: a Parquet base file (``PAR1``) or a log file (``#HUDI#``: Avro and Parquet data
  blocks, delete blocks, rollback command blocks; HFile and CDC blocks are kept as blocks of kind
  ``other`` and carry no records);
* the model's own encoding (a simulated run without pyarrow, or the simulator's store): a copy-on-write
  base file ``{"fg", "time", "salt", "entries": {key: value}}`` (records ``key``/``value``, no commit
  time: the file does not say) or JSON lines of ``model/nbcc`` rows (a log or a compaction's base
  file).

Every failure raises :class:`~model.hudi_files.errors.HudiFileError` naming the file.

:func:`merge_slice` merges a base file's records and its logs' blocks (in the order given) the way
Hudi 1.x readers do: blocks whose instant a rollback block targets are dropped; a record replaces the
current one of its key when its ordering value is not smaller (``EVENT_TIME_ORDERING``; on a tie the
later wins), or always (``COMMIT_TIME_ORDERING``, no ordering field); a delete removes the key when it
carries no ordering value, Hudi's default ordering value ``0``, a value of another type than the
field's, or one not smaller than the current record's (what hudi-rs 0.5.0 was seen to do).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.hudi_files.errors import HudiFileError
from model.hudi_files.log_blocks import DeleteRecord, decode_payload
from model.hudi_files.log_format import MAGIC, BlockType, HeaderKey, decode_log_file
from model.hudi_files.parquet_files import read_base_file
from model.hudi_files.schema import COMMIT_TIME, RECORD_KEY

PARQUET_MAGIC = b"PAR1"

Record = dict[str, Any]


@dataclass(frozen=True)
class Block:
    """One block of a log file, decoded: ``kind`` is ``data``, ``delete``, ``rollback`` or ``other``;
    ``instant`` its ``INSTANT_TIME``; ``target`` the instant a rollback block undoes."""

    kind: str
    instant: str
    records: tuple[Record, ...] = ()
    deletes: tuple[DeleteRecord, ...] = ()
    target: str | None = None


@dataclass(frozen=True)
class DataFile:
    """A data file's content: a base file's records, or a log file's blocks; ``encoding`` is ``hudi``
    or ``model`` (the simulator's JSON)."""

    name: str
    encoding: str
    records: tuple[Record, ...] = ()
    blocks: tuple[Block, ...] = ()
    is_log: bool = False


def is_hudi_encoded(data: bytes) -> bool:
    """True for a file in Hudi's encoding (a Parquet file or a Hudi log file)."""
    return data.startswith(PARQUET_MAGIC) or data.startswith(MAGIC)


def read_data_file(path: str, data: bytes) -> DataFile:
    """The records (base file) or blocks (log file) of the data file at ``path`` (its name decides which
    when the model's JSON lines could be either); :class:`HudiFileError` names the file."""
    name = posixpath.basename(path)
    is_log = ".log." in name
    if data.startswith(MAGIC) or (is_log and not data.startswith(b"{") and data):
        return DataFile(name, "hudi", blocks=tuple(read_log_blocks(data, path)), is_log=True)
    if data.startswith(PARQUET_MAGIC):
        _, rows = read_base_file(data, path)
        return DataFile(name, "hudi", records=tuple(rows))
    records = tuple(_model_records(path, data))
    if is_log:
        instant = name.split("_", 1)[1].split(".log.", 1)[0] if "_" in name else ""
        return DataFile(name, "model", blocks=(Block("data", instant, records),), is_log=True)
    return DataFile(name, "model", records=records)


def read_log_blocks(data: bytes, path: str) -> list[Block]:
    """Every block of a Hudi log file with its records, deletes or rollback target."""
    out = []
    for block in decode_log_file(data, path):
        instant = block.instant_time or ""
        if block.block_type is BlockType.PARQUET_DATA:
            _, rows = read_base_file(block.content, f"{path} (Parquet data block at byte {block.offset})")
            out.append(Block("data", instant, tuple(rows)))
            continue
        decoded = decode_payload(block, path)
        if decoded.records is not None:
            out.append(Block("data", instant, decoded.records))
        elif decoded.deletes is not None:
            out.append(Block("delete", instant, deletes=decoded.deletes))
        elif decoded.is_rollback:
            out.append(Block("rollback", instant, target=block.get(HeaderKey.TARGET_INSTANT_TIME)))
        else:
            out.append(Block("other", instant))
    return out


def _model_records(path: str, data: bytes) -> list[Record]:
    if path.endswith((".lance", ".hfile")):
        raise HudiFileError(path, None, f"a {path.rsplit('.', 1)[1]} base file: only Parquet is read here")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HudiFileError(path, exc.start, "neither Hudi's encoding (no Parquet or log magic) nor the "
                                             "model's JSON") from None
    stripped = text.strip()
    if not stripped:
        return []
    try:
        if stripped.startswith("{") and "\n" not in stripped:
            value = json.loads(stripped)
            if isinstance(value, dict) and isinstance(value.get("entries"), dict):
                return [{RECORD_KEY: str(k), "key": str(k), "value": v}
                        for k, v in sorted(value["entries"].items())]
            return [value] if isinstance(value, dict) else []
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise HudiFileError(path, None, f"neither Hudi's encoding nor the model's JSON: {exc}") from None


def _orderable(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return (isinstance(a, numbers) and isinstance(b, numbers)) or type(a) is type(b)


def _replaces(new: Record, cur: Record | None, ordering: str) -> bool:
    if cur is None or not ordering:
        return True
    a, b = new.get(ordering), cur.get(ordering)
    if a is None or b is None or not _orderable(a, b):
        return True
    return bool(a >= b)


def _deletes(d: DeleteRecord, cur: Record | None, ordering: str) -> bool:
    if cur is None:
        return False
    if not ordering or d.ordering_wrapper == "null" or d.ordering_value is None:
        return True
    if d.ordering_wrapper == "IntWrapper" and d.ordering_value == 0:
        return True  # Hudi's default ordering value: a delete without one
    value = cur.get(ordering)
    if value is None or not _orderable(d.ordering_value, value):
        return True
    return bool(d.ordering_value >= value)


def merge_slice(base: Iterable[Record], logs: Sequence[Sequence[Block]], ordering: str = "",
                key: str = RECORD_KEY) -> dict[str, Record]:
    """The records of a file slice: ``base``'s, then each log's blocks in the order given, merged by
    ``ordering`` (see the module doc); rolled-back blocks are dropped."""
    rolled_back = {b.target for log in logs for b in log if b.kind == "rollback" and b.target}
    out: dict[str, Record] = {}
    for r in base:
        out[str(r[key])] = dict(r)
    for log in logs:
        for b in log:
            if b.instant in rolled_back:
                continue
            if b.kind == "data":
                for r in b.records:
                    k = str(r[key])
                    if _replaces(r, out.get(k), ordering):
                        out[k] = dict(r)
            elif b.kind == "delete":
                for d in b.deletes:
                    k = str(d.record_key)
                    if _deletes(d, out.get(k), ordering):
                        del out[k]
    return out


def commit_times(records: Mapping[str, Record]) -> set[str]:
    """The ``_hoodie_commit_time`` values of merged records."""
    return {str(r.get(COMMIT_TIME)) for r in records.values() if r.get(COMMIT_TIME) is not None}


def file_records(data: bytes, path: str = "<bytes>") -> list[Record]:
    """Every record a data file in Hudi's encoding holds: a base file's, or a log file's data blocks' in
    order (delete and command blocks carry none)."""
    if data.startswith(MAGIC):
        return [r for b in read_log_blocks(data, path) if b.kind == "data" for r in b.records]
    _, rows = read_base_file(data, path)
    return rows


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, bool | int | float | str)


def same_record(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two readers' copies of a record agree: every column both give as a plain scalar (text, number,
    boolean, null; timestamps as microseconds, dates as days) is equal, floats to 1e-9.  Columns one
    reader gives in another representation (decimals, bytes, nested values) are not compared."""
    for col in set(a) | set(b):
        x, y = a.get(col), b.get(col)
        if not (_scalar(x) and _scalar(y)) or x == y:
            continue
        if isinstance(x, float) and isinstance(y, float) and abs(x - y) <= 1e-9:
            continue
        return False
    return True


def record_id(r: Mapping[str, Any]) -> tuple[str, str]:
    """A record's identity across file groups: (partition path, record key)."""
    return (str(r.get("_hoodie_partition_path") or ""), str(r.get(RECORD_KEY)))


def same_records(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> bool:
    """Two readers read the same records (as multisets: a key held by two file groups counts twice)."""

    def order(r: Mapping[str, Any]) -> tuple[str, str, str, str]:
        return (*record_id(r), str(r.get(COMMIT_TIME)), str(r.get("_hoodie_file_name")))

    xs, ys = sorted(a, key=order), sorted(b, key=order)
    return len(xs) == len(ys) and all(same_record(x, y) for x, y in zip(xs, ys, strict=True))
