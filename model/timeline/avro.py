"""A minimal, pure codec for Avro object container files (the format of Hudi 1.x instant files).

Hudi table version 8+ stores commit, compaction-plan, rollback and replace metadata as Avro object
container files with the writer schema embedded in the header and (in every table seen) the
``null`` codec.  The decoder also reads ``deflate`` (stdlib ``zlib``); the encoder writes ``null``
only, one block, with a sync marker derived from the schema (so equal inputs give equal bytes).
Values are plain Python values: records are ``dict``, arrays ``list``, maps ``dict``, enums
``str``, bytes/fixed ``bytes``; a union takes its first branch that fits the value.

Text-safe files.  The simulation's history records the bodies of table files as text (UTF-8),
and the timeline checkers read them back, so the encoder can write a container whose bytes are
valid UTF-8 when the content allows it: the sync marker is ASCII, and a length of 64 or more is
written as a three-byte varint ``[lead, continuation, 0x00]`` (Avro decoders accept non-minimal
varints) when its value makes those bytes one two-byte UTF-8 character plus NUL, i.e. when
``length % 64`` is in 33..47 (:func:`text_safe_length` finds the next such length, for callers
that can pad).  Any other length is written minimally.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

MAGIC = b"Obj\x01"

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


class AvroError(ValueError):
    """The bytes are not a readable Avro object container file."""


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise AvroError(f"truncated Avro data at byte {self.pos} (wanted {n} bytes)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def long(self) -> int:
        shift = 0
        acc = 0
        while True:
            if self.pos >= len(self.data):
                raise AvroError(f"truncated varint at byte {self.pos}")
            b = self.data[self.pos]
            self.pos += 1
            acc |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise AvroError(f"varint too long at byte {self.pos}")
        return (acc >> 1) ^ -(acc & 1)


class _Schemas:
    """Named-type registry so that references by name resolve."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}

    def register(self, schema: Any, namespace: str | None) -> None:
        if isinstance(schema, list):
            for s in schema:
                self.register(s, namespace)
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            name = str(schema["name"])
            ns = schema.get("namespace", namespace)
            full = name if "." in name or not ns else f"{ns}.{name}"
            self.named[full] = schema
            self.named.setdefault(name.rsplit(".", 1)[-1], schema)
            if kind in ("record", "error"):
                for f in schema.get("fields", []):
                    self.register(f["type"], full.rsplit(".", 1)[0] if "." in full else ns)
        elif kind == "array":
            self.register(schema["items"], namespace)
        elif kind == "map":
            self.register(schema["values"], namespace)
        elif isinstance(kind, dict | list):
            self.register(kind, namespace)

    def resolve(self, schema: Any) -> Any:
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            if schema not in self.named:
                raise AvroError(f"unknown Avro type name {schema!r}")
            return self.named[schema]
        return schema


def _decode(r: _Reader, schema: Any, reg: _Schemas) -> Any:
    schema = reg.resolve(schema)
    if isinstance(schema, list):
        idx = r.long()
        if not 0 <= idx < len(schema):
            raise AvroError(f"union branch {idx} out of range at byte {r.pos}")
        return _decode(r, schema[idx], reg)
    kind = schema["type"] if isinstance(schema, dict) else schema
    if isinstance(kind, dict | list):
        return _decode(r, kind, reg)
    if kind == "null":
        return None
    if kind == "boolean":
        return r.take(1) != b"\x00"
    if kind in ("int", "long"):
        return r.long()
    if kind == "float":
        return struct.unpack("<f", r.take(4))[0]
    if kind == "double":
        return struct.unpack("<d", r.take(8))[0]
    if kind == "bytes":
        return r.take(r.long())
    if kind == "string":
        return r.take(r.long()).decode("utf-8")
    if kind in ("record", "error"):
        return {f["name"]: _decode(r, f["type"], reg) for f in schema["fields"]}
    if kind == "enum":
        return schema["symbols"][r.long()]
    if kind == "fixed":
        return r.take(int(schema["size"]))
    if kind == "array":
        items: list[Any] = []
        for count in _blocks(r):
            items.extend(_decode(r, schema["items"], reg) for _ in range(count))
        return items
    if kind == "map":
        out: dict[str, Any] = {}
        for count in _blocks(r):
            for _ in range(count):
                key = r.take(r.long()).decode("utf-8")
                out[key] = _decode(r, schema["values"], reg)
        return out
    raise AvroError(f"unsupported Avro type {kind!r}")


def _blocks(r: _Reader) -> Iterator[int]:
    """Yield the item count of each block of an array or map; the caller decodes the items
    of one block before asking for the next count."""
    while True:
        n = r.long()
        if n == 0:
            return
        if n < 0:
            r.long()  # block size in bytes, unused
            n = -n
        yield n


def is_avro_container(data: bytes) -> bool:
    """True when ``data`` starts with the Avro object container magic bytes."""
    return data[:4] == MAGIC


def read_container(data: bytes) -> list[Any]:
    """Decode every datum of an Avro object container file, using the embedded writer schema.

    Raises :class:`AvroError` (a ``ValueError``) on bad magic, unknown codec or truncated data.
    """
    if not is_avro_container(data):
        raise AvroError("not an Avro object container file (bad magic)")
    r = _Reader(data, 4)
    meta_schema = {"type": "map", "values": "bytes"}
    meta = _decode(r, meta_schema, _Schemas())
    sync = r.take(16)
    try:
        schema = json.loads(meta["avro.schema"].decode("utf-8"))
    except (KeyError, ValueError) as exc:
        raise AvroError(f"Avro header has no readable schema: {exc}") from exc
    codec = meta.get("avro.codec", b"null").decode("ascii")
    if codec not in ("null", "deflate"):
        raise AvroError(f"unsupported Avro codec {codec!r}")
    reg = _Schemas()
    reg.register(schema, None)
    out: list[Any] = []
    while r.pos < len(data):
        count = r.long()
        size = r.long()
        block = r.take(size)
        if codec == "deflate":
            block = zlib.decompress(block, -15)
        br = _Reader(block)
        out.extend(_decode(br, schema, reg) for _ in range(count))
        if r.take(16) != sync:
            raise AvroError(f"Avro sync marker mismatch at byte {r.pos}")
    return out


# ---- encoding ------------------------------------------------------------------------------


def text_safe_length(n: int) -> int:
    """The smallest length >= ``n`` whose varint the encoder writes as valid UTF-8."""
    m = n
    while not _length_is_text(m):
        m += 1
    return m


def _length_is_text(n: int) -> bool:
    return n < 64 or (n < 4096 and 33 <= n % 64 <= 47)


def _length(n: int) -> bytes:
    """A length (or count): the three-byte UTF-8-valid varint when possible (see the module doc)."""
    if n < 64 or not _length_is_text(n):
        return _long(n)
    z = n << 1  # zig-zag of a non-negative value
    return bytes(((z & 0x7F) | 0x80, ((z >> 7) & 0x7F) | 0x80, 0))


def is_text(data: bytes) -> bool:
    """True when ``data`` is valid UTF-8 (so a history can carry it as text)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _long(n: int) -> bytes:
    """Zig-zag varint, as Avro encodes ``int`` and ``long``."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z & ~0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _fits(schema: Any, value: Any, reg: _Schemas) -> bool:
    """Whether ``value`` can be written with (non-union) ``schema``: picks a union branch."""
    schema = reg.resolve(schema)
    kind = schema["type"] if isinstance(schema, dict) else schema
    if isinstance(kind, dict | list):
        return _fits(kind, value, reg)
    checks: dict[str, Any] = {
        "null": lambda v: v is None,
        "boolean": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and -(2**31) <= v < 2**31,
        "long": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, float),
        "double": lambda v: isinstance(v, float),
        "bytes": lambda v: isinstance(v, bytes),
        "fixed": lambda v: isinstance(v, bytes),
        "string": lambda v: isinstance(v, str),
        "enum": lambda v: isinstance(v, str),
        "record": lambda v: isinstance(v, dict),
        "map": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list | tuple),
    }
    check = checks.get(kind)
    return bool(check and check(value))


def _encode(
    out: bytearray, schema: Any, value: Any, reg: _Schemas, length: Callable[[int], bytes] = _length
) -> None:
    """Append ``value`` encoded with ``schema``; ``length`` writes lengths and counts (text-safe by
    default, :func:`_long` for the minimal varints of Java's ``BinaryEncoder``)."""
    schema = reg.resolve(schema)
    if isinstance(schema, list):
        for i, branch in enumerate(schema):
            if _fits(branch, value, reg):
                out += _long(i)
                _encode(out, branch, value, reg, length)
                return
        raise AvroError(f"no branch of union {schema!r} fits {value!r}")
    kind = schema["type"] if isinstance(schema, dict) else schema
    if isinstance(kind, dict | list):
        _encode(out, kind, value, reg, length)
        return
    if not _fits(schema, value, reg):
        raise AvroError(f"value {value!r} does not fit Avro type {kind!r}")
    if kind == "null":
        return
    if kind == "boolean":
        out += b"\x01" if value else b"\x00"
    elif kind in ("int", "long"):
        out += _long(value)
    elif kind == "float":
        out += struct.pack("<f", value)
    elif kind == "double":
        out += struct.pack("<d", value)
    elif kind in ("bytes", "string"):
        data = value if isinstance(value, bytes) else value.encode("utf-8")
        out += length(len(data)) + data
    elif kind == "fixed":
        out += value
    elif kind in ("record", "error"):
        for f in schema["fields"]:
            name = f["name"]
            if name in value:
                item = value[name]
            elif "default" in f:
                item = f["default"]
            else:
                raise AvroError(f"record {schema.get('name')!r} needs field {name!r}")
            _encode(out, f["type"], item, reg, length)
    elif kind == "enum":
        out += _long(schema["symbols"].index(value))
    elif kind == "array":
        if value:
            out += length(len(value))
            for item in value:
                _encode(out, schema["items"], item, reg, length)
        out += _long(0)
    elif kind == "map":
        if value:
            out += length(len(value))
            for key in sorted(value):
                data = key.encode("utf-8")
                out += length(len(data)) + data
                _encode(out, schema["values"], value[key], reg, length)
        out += _long(0)


def write_container(schema: Any, records: list[Any]) -> bytes:
    """An Avro object container file (``null`` codec, one block) holding ``records``.

    Map keys are written in sorted order and the sync marker is the MD5 (in hex) of the schema
    text, so the same schema and records always give the same bytes; the schema text is padded
    with spaces to a text-safe length.  AvroError names a value that does not fit the schema.
    """
    schema_text = json.dumps(schema, separators=(",", ":"), sort_keys=True)
    schema_text += " " * (text_safe_length(len(schema_text)) - len(schema_text))
    reg = _Schemas()
    reg.register(schema, None)
    block = bytearray()
    for r in records:
        _encode(block, schema, r, reg)
    sync = hashlib.md5(schema_text.encode(), usedforsecurity=False).hexdigest()[:16].encode()
    out = bytearray(MAGIC)
    header = {"avro.codec": b"null", "avro.schema": schema_text.encode()}
    _encode(out, {"type": "map", "values": "bytes"}, header, _Schemas())
    out += sync
    if records:
        out += _length(len(records)) + _length(len(block)) + block + sync
    return bytes(out)


# ---- single datums (Avro binary encoding without a container) ------------------------------


def encode_datum(schema: Any, value: Any) -> bytes:
    """``value`` in Avro's binary encoding with ``schema``, with minimal varints as Java's
    ``BinaryEncoder`` writes them (no container, no text-safe lengths): the bytes Hudi writes for
    one record of a log data block.  Map keys are written sorted; a union takes its first branch
    that fits.  AvroError names a value that does not fit the schema."""
    reg = _Schemas()
    reg.register(schema, None)
    out = bytearray()
    _encode(out, schema, value, reg, _long)
    return bytes(out)


def decode_datum(schema: Any, data: bytes, pos: int = 0) -> tuple[Any, int]:
    """Decode one datum written with ``schema`` from ``data`` at ``pos``; returns the value and
    the position after it.  AvroError (with the byte position in ``data``) on truncated or bad
    data."""
    reg = _Schemas()
    reg.register(schema, None)
    r = _Reader(data, pos)
    value = _decode(r, schema, reg)
    return value, r.pos
