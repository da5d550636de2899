"""The payloads of Hudi 1.x log blocks: Avro data blocks, delete blocks and rollback command blocks.

* **Avro data block** (``HoodieAvroDataBlock.serializeRecords``): int32 block version (3, the
  1.x ``HoodieLogBlock.version``), int32 record count, then per record an int32 length and the
  record in Avro's binary encoding with the writer schema that the ``SCHEMA`` header carries (JSON
  text).  The tech spec says the record length is 8 bytes; Hudi writes 4.
* **Delete block** (``HoodieDeleteBlock.serializeV3``): int32 block version (3), int32 length, then
  one ``HoodieDeleteRecordList`` datum: an array of ``{recordKey: [null,string], partitionPath:
  [null,string], orderingVal: [null, BooleanWrapper, IntWrapper, LongWrapper, FloatWrapper,
  DoubleWrapper, BytesWrapper, StringWrapper, DateWrapper, DecimalWrapper, TimeMicrosWrapper,
  TimestampMicrosWrapper, ArrayWrapper]}``, each wrapper a record of one field ``value``.  Spark SQL
  deletes carry ``IntWrapper(0)``; the wrapper is kept on decoding so re-encoding gives the same
  bytes.  (The spec's Kryo encoding is block version 2, Hudi 0.x.)
* **Command block** (``HoodieCommandBlock``): empty content; ``COMMAND_BLOCK_TYPE`` is the ordinal
  of ``HoodieCommandBlockTypeEnum`` (``"0"``, ROLLBACK_BLOCK) and ``TARGET_INSTANT_TIME`` names the
  instant whose blocks a reader must drop.

Records are plain Avro values (see :mod:`model.timeline.avro`): a ``dict`` per record; logical
types stay in their Avro representation (timestamp-micros an int, decimal the fixed bytes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.hudi_files.errors import Cursor, HudiFileError
from model.hudi_files.log_format import BlockType, HeaderKey, LogBlock, decode_log_file, header
from model.timeline.avro import decode_datum, encode_datum

BLOCK_VERSION = 3  # HoodieLogBlock.version in Hudi 1.x (data and delete block content version)
ROLLBACK_BLOCK = "0"  # HoodieCommandBlock.HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK.ordinal()

# The union branches of HoodieDeleteRecord.orderingVal (HoodieDeleteRecordList.avsc, Hudi 1.x), by
# index, with the Avro type of each wrapper's ``value`` field.  ArrayWrapper (index 12) is newer
# than the tables seen and is not read.
ORDERING_WRAPPERS: tuple[tuple[str, Any], ...] = (
    ("null", "null"),
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", "int"),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "long"),
)
_WRAPPER_INDEX = {name: i for i, (name, _) in enumerate(ORDERING_WRAPPERS)}

# What the Avro decoder raises on bad bytes (AvroError, UnicodeDecodeError: ValueErrors) or on a
# damaged SCHEMA header that is still JSON but not a schema (missing keys, wrong types).
_AVRO_FAILURES = (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError)


@dataclass(frozen=True)
class DeleteRecord:
    """One entry of a delete block: the record key, its partition path and the ordering value,
    tagged with the wrapper Hudi put it in (``"null"`` for no ordering value)."""

    record_key: str | None
    partition_path: str | None
    ordering_value: Any = 0
    ordering_wrapper: str = "IntWrapper"

    def __post_init__(self) -> None:
        if self.ordering_wrapper not in _WRAPPER_INDEX:
            raise ValueError(f"unknown ordering value wrapper {self.ordering_wrapper!r}")


@dataclass(frozen=True)
class DecodedBlock:
    """A block with its payload decoded: ``records`` for an Avro data block, ``deletes`` for a
    delete block (both None otherwise; HFile, Parquet and CDC content stays raw in ``block``)."""

    block: LogBlock
    records: tuple[dict[str, Any], ...] | None = None
    deletes: tuple[DeleteRecord, ...] | None = None

    @property
    def is_rollback(self) -> bool:
        """A ROLLBACK_BLOCK command block."""
        return (
            self.block.block_type is BlockType.COMMAND
            and self.block.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_BLOCK
        )


def _i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)


# ---- Avro data blocks ----------------------------------------------------------------------


def encode_avro_content(schema: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> bytes:
    """The content of an Avro data block holding ``records`` written with ``schema``.
    ValueError (AvroError) names a record that does not fit the schema."""
    out = bytearray(_i32(BLOCK_VERSION) + _i32(len(records)))
    for record in records:
        data = encode_datum(dict(schema), dict(record))
        out += _i32(len(data)) + data
    return bytes(out)


def decode_avro_content(
    content: bytes, schema: Mapping[str, Any], path: str = "<bytes>", offset: int = 0
) -> list[dict[str, Any]]:
    """The records of an Avro data block's content; ``offset`` is where the content starts in
    the file (for the offsets in :class:`HudiFileError`)."""
    c = _content_cursor(content, path, offset)
    count = c.int32("record count")
    if count < 0:
        raise c.fail(f"negative record count {count}")
    records: list[dict[str, Any]] = []
    for i in range(count):
        size = c.int32(f"length of record {i}")
        start = c.pos + offset
        raw = c.take(size, f"record {i}")
        try:
            value, end = decode_datum(dict(schema), raw)
        except _AVRO_FAILURES as exc:
            raise HudiFileError(path, start, f"record {i} is not readable Avro: {exc}") from None
        if end != len(raw):
            raise HudiFileError(path, start, f"record {i} is {end} bytes of Avro, its length says {size}")
        if not isinstance(value, dict):
            raise HudiFileError(path, start, f"record {i} is not an Avro record")
        records.append(value)
    if c.pos != c.end:
        raise c.fail(f"{c.end - c.pos} bytes after the last record")
    return records


def _content_cursor(content: bytes, path: str, offset: int) -> _Shifted:
    """A cursor over ``content`` whose error offsets are file offsets; checks the block version."""
    c = _Shifted(content, path, offset)
    version = c.int32("block content version")
    if version != BLOCK_VERSION:
        raise c.fail(f"block content version {version} (only {BLOCK_VERSION}, Hudi 1.x, is read)", offset)
    return c


class _Shifted(Cursor):
    """A cursor over a block's content that reports offsets in the whole file."""

    def __init__(self, content: bytes, path: str, offset: int) -> None:
        super().__init__(content, path)
        self.shift = offset

    def fail(self, reason: str, offset: int | None = None) -> HudiFileError:
        """The error for ``reason`` at a file offset (the current position by default)."""
        return HudiFileError(self.path, self.pos + self.shift if offset is None else offset, reason)


def avro_data_block(
    instant_time: str, schema: Mapping[str, Any], records: Sequence[Mapping[str, Any]]
) -> LogBlock:
    """An Avro data block written by ``instant_time``: ``INSTANT_TIME`` and ``SCHEMA`` headers
    (the schema as compact JSON, Hudi's ``Schema.toString()``)."""
    text = json.dumps(dict(schema), separators=(",", ":"))
    head = header([(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, text)])
    return LogBlock(BlockType.AVRO_DATA, head, encode_avro_content(schema, records))


# ---- delete blocks -------------------------------------------------------------------------


def encode_delete_content(deletes: Sequence[DeleteRecord]) -> bytes:
    """The content of a delete block (block version 3, a ``HoodieDeleteRecordList`` datum)."""
    body = bytearray()
    if deletes:
        body += encode_datum("long", len(deletes))
        for d in deletes:
            body += _optional_string(d.record_key) + _optional_string(d.partition_path)
            index = _WRAPPER_INDEX[d.ordering_wrapper]
            body += encode_datum("long", index)
            if index:
                body += encode_datum(ORDERING_WRAPPERS[index][1], d.ordering_value)
    body += encode_datum("long", 0)
    return _i32(BLOCK_VERSION) + _i32(len(body)) + bytes(body)


def _optional_string(value: str | None) -> bytes:
    return encode_datum(["null", "string"], value)


def decode_delete_content(content: bytes, path: str = "<bytes>", offset: int = 0) -> list[DeleteRecord]:
    """The delete records of a delete block's content (``offset``: where it starts in the file)."""
    c = _content_cursor(content, path, offset)
    size = c.int32("delete records length")
    start = c.pos + offset
    raw = c.take(size, "delete records")
    if c.pos != c.end:
        raise c.fail(f"{c.end - c.pos} bytes after the delete records")
    try:
        deletes, end = _delete_list(raw)
    except _AVRO_FAILURES as exc:
        raise HudiFileError(path, start, f"delete records are not readable: {exc}") from None
    if end != len(raw):
        raise HudiFileError(path, start, f"delete records are {end} bytes, their length says {size}")
    return deletes


def _delete_list(raw: bytes) -> tuple[list[DeleteRecord], int]:
    out: list[DeleteRecord] = []
    pos = 0
    while True:
        count, pos = decode_datum("long", raw, pos)
        if count == 0:
            return out, pos
        if count < 0:
            _, pos = decode_datum("long", raw, pos)  # block size in bytes
            count = -count
        for _ in range(count):
            key, pos = decode_datum(["null", "string"], raw, pos)
            partition, pos = decode_datum(["null", "string"], raw, pos)
            index, pos = decode_datum("long", raw, pos)
            if not 0 <= index < len(ORDERING_WRAPPERS):
                raise ValueError(f"ordering value union branch {index} is not read")
            name, kind = ORDERING_WRAPPERS[index]
            value, pos = decode_datum(kind, raw, pos)
            out.append(DeleteRecord(key, partition, value, name))


def delete_block(
    instant_time: str, deletes: Sequence[DeleteRecord], schema: Mapping[str, Any] | None = None
) -> LogBlock:
    """A delete block written by ``instant_time``; Hudi 1.x also puts the table's writer schema in
    its header (``schema``), which readers do not need for the deletes themselves."""
    entries = [(HeaderKey.INSTANT_TIME, instant_time)]
    if schema is not None:
        entries.append((HeaderKey.SCHEMA, json.dumps(dict(schema), separators=(",", ":"))))
    return LogBlock(BlockType.DELETE, header(entries), encode_delete_content(deletes))


# ---- command blocks ------------------------------------------------------------------------


def rollback_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """A ROLLBACK_BLOCK command block: the rollback ``instant_time`` undoes every block that
    ``target_instant_time`` wrote to the file slice."""
    head = header(
        [
            (HeaderKey.INSTANT_TIME, instant_time),
            (HeaderKey.TARGET_INSTANT_TIME, target_instant_time),
            (HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_BLOCK),
        ]
    )
    return LogBlock(BlockType.COMMAND, head, b"")


# ---- whole blocks --------------------------------------------------------------------------

_CONTENT_START = 6 + 8 + 4 + 4  # magic, block length, format version, block type


def content_offset(block: LogBlock) -> int:
    """Where ``block``'s content starts in its file (after the header and the content length)."""
    head = 4 + sum(8 + len(v.encode("utf-8")) for _, v in block.header)
    return block.offset + _CONTENT_START + head + 8


def decode_payload(block: LogBlock, path: str = "<bytes>") -> DecodedBlock:
    """``block`` with its records or delete records decoded (a data block needs its ``SCHEMA``
    header); :class:`HudiFileError` when the content does not decode."""
    at = content_offset(block) if block.offset >= 0 else 0
    if block.block_type is BlockType.AVRO_DATA:
        text = block.get(HeaderKey.SCHEMA)
        if text is None:
            raise HudiFileError(path, block.offset, "Avro data block without a SCHEMA header")
        try:
            schema = json.loads(text)
        except ValueError as exc:
            raise HudiFileError(path, block.offset, f"SCHEMA header is not JSON: {exc}") from None
        return DecodedBlock(block, records=tuple(decode_avro_content(block.content, schema, path, at)))
    if block.block_type is BlockType.DELETE:
        return DecodedBlock(block, deletes=tuple(decode_delete_content(block.content, path, at)))
    if block.block_type is BlockType.COMMAND:
        if block.content:
            raise HudiFileError(path, at, f"command block with {len(block.content)} bytes of content")
        if block.get(HeaderKey.COMMAND_BLOCK_TYPE) != ROLLBACK_BLOCK:
            raise HudiFileError(path, block.offset, "command block that is not a ROLLBACK_BLOCK")
    return DecodedBlock(block)


def encode_payload(decoded: DecodedBlock) -> LogBlock:
    """The block again, its content re-encoded from the decoded records or deletes (the inverse
    of :func:`decode_payload`, used to check that decoding loses nothing)."""
    block = decoded.block
    if decoded.records is not None:
        schema = json.loads(block.get(HeaderKey.SCHEMA) or "{}")
        content = encode_avro_content(schema, decoded.records)
    elif decoded.deletes is not None:
        content = encode_delete_content(decoded.deletes)
    else:
        content = block.content
    return LogBlock(block.block_type, block.header, content, block.footer, block.format_version)


def read_log_file(data: bytes, path: str = "<bytes>") -> list[DecodedBlock]:
    """Every block of a log file with its payload decoded (:func:`decode_log_file`, then
    :func:`decode_payload`); :class:`HudiFileError` names the file and offset of any damage."""
    return [decode_payload(b, path) for b in decode_log_file(data, path)]
