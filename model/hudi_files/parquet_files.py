"""Hudi base files (Parquet) from rows and back, through pyarrow (the ``oracle`` extra, imported
only inside these functions).

What Hudi 1.x writes with its Avro writer (``HoodieAvroParquetWriter``, seen in the first base
file of ``v8_trips_8i3u1d``), and what :func:`write_base_file` writes:

* the columns: the five meta columns (strings), then the table's fields, all optional;
* key/value metadata ``parquet.avro.schema`` (the writer schema, compact JSON),
  ``writer.model.name = avro``, ``hoodie_min_record_key`` and ``hoodie_max_record_key``;
* GZIP compression (Hudi's default ``hoodie.parquet.compression.codec``).

Left out: ``org.apache.hudi.bloomfilter`` and ``hoodie_bloom_filter_type_code`` (a Hadoop-
serialized DYNAMIC_V0 bloom filter of the record keys).  Readers do not need it; a Hudi writer
using the BLOOM index to tag later upserts would (a SIMPLE or BUCKET index does not).  The root
group is pyarrow's ``schema`` rather than parquet-avro's ``<namespace>.<name>``.  Files that Spark's
row writer produced carry ``org.apache.spark.*`` metadata instead of ``parquet.avro.schema``;
:func:`read_base_file` reads both.

Supported field types (Avro, as values in rows): ``string`` (str), ``long``/``int`` (int),
``double``/``float`` (float), ``boolean``, ``bytes``, and the logical types ``timestamp-micros``
(an int of microseconds, a UTC timestamp column) and ``date`` (an int of days).  Rows read back
use the same representation; other logical types (decimal, nested records, arrays, maps) come back
as pyarrow's Python values.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from model.hudi_files.errors import HudiFileError
from model.hudi_files.schema import RECORD_KEY, data_fields

AVRO_SCHEMA_KEY = "parquet.avro.schema"
MIN_KEY = "hoodie_min_record_key"
MAX_KEY = "hoodie_max_record_key"
COMPRESSION = "gzip"


def _pyarrow() -> tuple[Any, Any]:
    return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")


def _arrow_type(pa: Any, kind: Any) -> Any:
    if isinstance(kind, dict):
        logical = kind.get("logicalType")
        if logical == "timestamp-micros" and kind.get("type") == "long":
            return pa.timestamp("us", tz="UTC")
        if logical == "date" and kind.get("type") == "int":
            return pa.date32()
        if logical is None and isinstance(kind.get("type"), str):
            return _arrow_type(pa, kind["type"])
        raise ValueError(f"unsupported Avro type for a base file column: {kind!r}")
    primitives = {
        "string": pa.string(),
        "long": pa.int64(),
        "int": pa.int32(),
        "double": pa.float64(),
        "float": pa.float32(),
        "boolean": pa.bool_(),
        "bytes": pa.binary(),
    }
    if kind not in primitives:
        raise ValueError(f"unsupported Avro type for a base file column: {kind!r}")
    return primitives[kind]


def write_base_file(schema: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> bytes:
    """A Parquet base file holding ``rows`` (meta columns filled in, see
    :func:`model.hudi_files.schema.meta_values`) with the writer ``schema`` (meta columns first,
    see :func:`model.hudi_files.schema.writer_schema`).  ValueError names an unsupported type or
    a value that does not fit its column."""
    pa, pq = _pyarrow()
    columns = data_fields(dict(schema))
    fields = [pa.field(name, _arrow_type(pa, kind), nullable=True) for name, kind in columns]
    keys = sorted(str(r[RECORD_KEY]) for r in rows if r.get(RECORD_KEY) is not None)
    metadata = {
        AVRO_SCHEMA_KEY: json.dumps(dict(schema), separators=(",", ":")),
        "writer.model.name": "avro",
        **({MIN_KEY: keys[0], MAX_KEY: keys[-1]} if keys else {}),
    }
    arrow_schema = pa.schema(fields, metadata=metadata)
    try:
        arrays = [pa.array([r.get(f.name) for r in rows], type=f.type) for f in fields]
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise ValueError(f"a row does not fit the base file schema: {exc}") from None
    table = pa.Table.from_arrays(arrays, schema=arrow_schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=COMPRESSION)
    return bytes(sink.getvalue().to_pybytes())


def read_base_file(data: bytes, path: str = "<bytes>") -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The key/value metadata and the rows of a Parquet base file; timestamp columns come back as
    microseconds and date columns as days (the Avro representation).  :class:`HudiFileError`
    when pyarrow cannot read the bytes."""
    pa, pq = _pyarrow()
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise HudiFileError(path, None, f"not a readable Parquet file: {exc}") from None
    metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(pa.int64()))
        elif pa.types.is_date32(f.type):
            table = table.set_column(i, f.name, table.column(i).cast(pa.int32()))
    rows: list[dict[str, Any]] = table.to_pylist()
    return metadata, rows
