"""Hudi's log file format: a log file is a sequence of blocks, each framed as Hudi 1.x writes it.

One block, as ``HoodieLogFormatWriter.appendBlocks`` writes it (all integers big-endian, Java's
``DataOutputStream``)::

    magic              6   b"#HUDI#"
    block length       8   bytes after this field up to the end of the block
    log format version 4   1 (HoodieLogFormat.CURRENT_VERSION)
    block type         4   the ordinal of HoodieLogBlockType (:class:`BlockType`)
    header             *   int32 count, then per entry: int32 key (HeaderMetadataType ordinal),
                           int32 length, UTF-8 bytes
    content length     8
    content            *   the block's payload (see :mod:`model.hudi_files.log_blocks`)
    footer             *   like the header (FooterMetadataType is empty: Hudi writes count 0)
    total block length 8   bytes of the block before this field, magic included

so ``total block length == block length + 6``.  The tech spec's "header length" and "footer
length" fields do not exist on disk, and its block type ids are off by one (the ordinal is
written: command 0, delete 1, corrupt 2, avro 3, hfile 4, parquet 5, cdc 6).

Hudi writes the header from a ``HashMap`` keyed by enum, so its entry order varies between
writers; a decoded :class:`LogBlock` keeps the order it was read in and :func:`encode_log_file`
writes it back in that order, so decoding and encoding give the same bytes.  Blocks built by this
package put header entries in ordinal order.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from model.hudi_files.errors import Cursor, HudiFileError

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1  # HoodieLogFormat.CURRENT_VERSION
_INT = 4
_LONG = 8


class BlockType(enum.IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType``, written as its ordinal."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(enum.IntEnum):
    """``HoodieLogBlock.HeaderMetadataType``, written as its ordinal (1.x has nine)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


Metadata = tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class LogBlock:
    """One block of a log file: its type, header and footer entries (in file order) and raw
    content.  ``offset`` is where the block starts in its file (-1 for a block not read from one);
    it takes no part in equality."""

    block_type: BlockType
    header: Metadata
    content: bytes
    footer: Metadata = ()
    format_version: int = LOG_FORMAT_VERSION
    offset: int = field(default=-1, compare=False)

    def get(self, key: HeaderKey) -> str | None:
        """The header value of ``key``, or None."""
        for k, v in self.header:
            if k == key:
                return v
        return None

    @property
    def instant_time(self) -> str | None:
        """The ``INSTANT_TIME`` header: the instant that wrote the block."""
        return self.get(HeaderKey.INSTANT_TIME)


HEADER_KEYS = frozenset(k.value for k in HeaderKey)  # the ids a reader accepts
BLOCK_TYPES = frozenset(b.value for b in BlockType)


def header(entries: Iterable[tuple[HeaderKey, str]]) -> Metadata:
    """A header from ``(key, value)`` pairs, in ordinal order (None values are left out)."""
    return tuple(sorted((int(k), v) for k, v in entries))


def _metadata_bytes(entries: Metadata) -> bytes:
    out = bytearray(len(entries).to_bytes(_INT, "big", signed=True))
    for key, value in entries:
        data = value.encode("utf-8")
        out += key.to_bytes(_INT, "big", signed=True) + len(data).to_bytes(_INT, "big", signed=True) + data
    return bytes(out)


def encode_block(block: LogBlock) -> bytes:
    """One block's bytes, exactly as ``HoodieLogFormatWriter`` frames it."""
    head = _metadata_bytes(block.header)
    foot = _metadata_bytes(block.footer)
    length = _INT + _INT + len(head) + _LONG + len(block.content) + len(foot) + _LONG
    out = bytearray(MAGIC)
    out += length.to_bytes(_LONG, "big", signed=True)
    out += block.format_version.to_bytes(_INT, "big", signed=True)
    out += int(block.block_type).to_bytes(_INT, "big", signed=True)
    out += head
    out += len(block.content).to_bytes(_LONG, "big", signed=True)
    out += block.content
    out += foot
    out += len(out).to_bytes(_LONG, "big", signed=True)
    return bytes(out)


def encode_log_file(blocks: Sequence[LogBlock]) -> bytes:
    """A log file holding ``blocks`` in order (what one or more appends write)."""
    return b"".join(encode_block(b) for b in blocks)


def _metadata(c: Cursor, what: str) -> Metadata:
    start = c.pos
    count = c.int32(f"{what} entry count")
    if count < 0:
        raise c.fail(f"negative {what} entry count {count}", start)
    entries: list[tuple[int, str]] = []
    for _ in range(count):
        at = c.pos
        key = c.int32(f"{what} key")
        if what == "header" and key not in HEADER_KEYS:
            raise c.fail(f"unknown header key {key} (HeaderMetadataType has {len(HeaderKey)})", at)
        if what == "footer":
            raise c.fail(f"footer key {key} (FooterMetadataType has no entries)", at)
        size = c.int32(f"{what} value length")
        raw = c.take(size, f"{what} value of key {key}")
        try:
            entries.append((key, raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            raise c.fail(f"{what} value of key {key} is not UTF-8: {exc.reason}", at) from None
    return tuple(entries)


def decode_block(data: bytes, pos: int, path: str = "<bytes>") -> LogBlock:
    """The block starting at ``pos``; :class:`HudiFileError` (naming ``path`` and the offset) when
    the magic, a length or a field is wrong or the block is cut short."""
    c = Cursor(data, path, pos)
    magic = c.take(len(MAGIC), "magic")
    if magic != MAGIC:
        raise c.fail(f"bad magic {magic!r} (expected {MAGIC!r})", pos)
    length_at = c.pos
    length = c.int64("block length")
    minimum = _INT + _INT + _INT + _LONG + _INT + _LONG
    if length < minimum:
        raise c.fail(f"block length {length} is below the smallest block ({minimum})", length_at)
    end = c.pos + length
    if end > len(data):
        raise c.fail(f"block length {length} runs past the end of the file ({len(data)} bytes)", length_at)
    c.end = end
    try:
        return _block_body(c, pos, end)
    except HudiFileError as exc:
        context = f"{exc.reason} (in the block at byte {pos}, block length {length})"
        raise HudiFileError(path, exc.offset, context) from None


def _block_body(c: Cursor, pos: int, end: int) -> LogBlock:
    version_at = c.pos
    version = c.int32("log format version")
    if version != LOG_FORMAT_VERSION:
        raise c.fail(f"log format version {version} (only {LOG_FORMAT_VERSION} is read)", version_at)
    type_at = c.pos
    kind = c.int32("block type")
    if kind not in BLOCK_TYPES:
        raise c.fail(f"unknown block type {kind}", type_at)
    head = _metadata(c, "header")
    content_at = c.pos
    content_length = c.int64("content length")
    if content_length < 0 or c.pos + content_length > end:
        raise c.fail(f"content length {content_length} runs past the block end at byte {end}", content_at)
    content = c.take(content_length, "content")
    foot = _metadata(c, "footer")
    total_at = c.pos
    total = c.int64("total block length")
    if total != total_at - pos:
        raise c.fail(f"total block length {total} != {total_at - pos} bytes written before it", total_at)
    if c.pos != end:
        raise c.fail(f"block ends at byte {c.pos} but its length says {end}", total_at)
    return LogBlock(BlockType(kind), head, content, foot, version, pos)


def decode_log_file(data: bytes, path: str = "<bytes>") -> list[LogBlock]:
    """Every block of a log file, in order.  An empty file has none.  Unlike Hudi's reader, which
    turns a damaged block into a ``HoodieCorruptBlock`` and scans on for the next magic, this
    decoder raises :class:`HudiFileError` at the first damage: it is a checker's codec."""
    blocks: list[LogBlock] = []
    pos = 0
    while pos < len(data):
        block = decode_block(data, pos, path)
        blocks.append(block)
        pos += len(MAGIC) + _LONG + _block_length(data, pos)
    return blocks


def _block_length(data: bytes, pos: int) -> int:
    return int.from_bytes(data[pos + len(MAGIC) : pos + len(MAGIC) + _LONG], "big", signed=True)


__all__ = [
    "MAGIC",
    "BlockType",
    "HeaderKey",
    "HudiFileError",
    "LogBlock",
    "decode_block",
    "decode_log_file",
    "encode_block",
    "encode_log_file",
    "header",
]
