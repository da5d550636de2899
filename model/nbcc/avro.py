"""A minimal, pure decoder for Avro object container files (the format of Hudi 1.x instant files).

Hudi table version 8+ stores commit, compaction-plan, rollback and replace metadata as Avro object
container files with the writer schema embedded in the header and (in every table seen) the
``null`` codec; ``deflate`` is supported too (stdlib ``zlib``).  Only decoding is implemented.
Decoded values are plain Python values: records become ``dict``, arrays ``list``, maps ``dict``,
enums ``str``, bytes/fixed ``bytes``.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
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
